"""ConfigMaps, Events and Namespaces as ``pkg/apis/core/validation`` checks them.

ConfigMap: keys (``IsConfigMapKey``), no key in both ``data`` and ``binaryData``, at most
1 MiB in all, and ``immutable: true`` freezes the data on update. Event:
``ValidateEventCreate``/``ValidateEventUpdate`` — the legacy rules for every write, the
strict ones (eventTime, type, series, deprecated fields unset; most fields immutable) for
writes through events.k8s.io/v1. Events are stored as core/v1 events, so the field paths
are upstream's internal names (``involvedObject``, ``reportingController``, ``message``),
whichever API the write came through. Namespace: ``spec.finalizers`` names. Service:
ports, selector, type, session affinity, external name.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from kubesched.objects.validation.container import port_num_or_name
from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    Undecodable,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    forbidden,
    go_quote,
    immutable,
    invalid,
    is_dns1123_subdomain,
    is_int,
    is_qualified_name,
    labels,
    not_supported,
    qualified_name,
    required,
    too_long,
)
from kubesched.objects.validation.formats import is_config_map_key, is_valid_port_num

#: ``core.MaxSecretSize``: the most a ConfigMap (or Secret) may hold.
MAX_CONFIG_SIZE = 1024 * 1024
_IMMUTABLE_SET = "field is immutable when `immutable` is set"
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_LENGTH_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def decoded_length(value: Any) -> int:
    """The length of a base64 value (binaryData, a Secret's data); :class:`Undecodable`
    when it is not base64, as the decoder refuses it."""
    text = str(value)
    if _BASE64_RE.fullmatch(text) is None or len(text) % 4:
        bad = next((i for i, ch in enumerate(text) if not (ch.isalnum() or ch in "+/=")), len(text))
        raise Undecodable(f"illegal base64 data at input byte {bad}")
    try:
        return len(base64.b64decode(text, validate=True))
    except binascii.Error:
        raise Undecodable(f"illegal base64 data at input byte {len(text)}") from None


def config_map(obj: Object) -> Errors:
    """``ValidateConfigMap`` (metadata is checked by the caller)."""
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    errs: Errors = []
    total = 0
    # Go walks the maps in random order; sorted keys make the answer stable.
    for key in sorted(data):
        errs.extend(invalid(f"data[{key}]", key, p) for p in is_config_map_key(key))
        if key in binary:
            errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(data[key] or "").encode())
    for key in sorted(binary):
        errs.extend(invalid(f"binaryData[{key}]", key, p) for p in is_config_map_key(key))
        total += decoded_length(binary[key] or "")
    if total > MAX_CONFIG_SIZE:
        errs.append(too_long("", MAX_CONFIG_SIZE))  # "" names the whole object
    return errs


def config_map_update(new: Object, old: Object) -> Errors:
    """``ValidateConfigMapUpdate``: an immutable ConfigMap keeps its data."""
    errs: Errors = []
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", _IMMUTABLE_SET))
        for key in ("data", "binaryData"):
            # reflect.DeepEqual: an absent map and an empty one differ.
            if new.get(key) != old.get(key):
                errs.append(forbidden(key, _IMMUTABLE_SET))
    return errs + config_map(new)


# -- events ---------------------------------------------------------------------------------


def _length(value: Any) -> int:
    return len(str(value or "").encode())


def _event_legacy(event: Object) -> Errors:
    # legacyValidateEvent: namespaces agree; new-style events name their reporter.
    namespace = str(as_dict(event.get("metadata")).get("namespace") or "")
    involved = str(as_dict(event.get("involvedObject")).get("namespace") or "")
    errs: Errors = []
    mismatch = invalid("involvedObject.namespace", involved, "does not match event.namespace")
    if not event.get("eventTime"):
        if (not involved and namespace not in ("", "default")) or (
            involved and involved != namespace
        ):
            errs.append(mismatch)
    else:
        if not involved and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        controller = str(event.get("reportingComponent") or "")
        if not controller:
            errs.append(required("reportingController"))
        errs.extend(
            invalid("reportingController", controller, p) for p in is_qualified_name(controller)
        )
        for key, limit in _LENGTH_LIMITS:
            if not event.get(key):
                errs.append(required(key))
            if _length(event.get(key)) > limit:
                errs.append(invalid(key, "", f"can have at most {limit} characters"))
        if _length(event.get("message")) > 1024:
            errs.append(invalid("message", "", "can have at most 1024 characters"))
    errs.extend(invalid("namespace", namespace, p) for p in is_dns1123_subdomain(namespace))
    return errs


def _series(event: Object) -> Errors:
    # validateV1EventSeries.
    series = event.get("series")
    if series is None:
        return []
    entry = as_dict(series)
    errs: Errors = []
    count = entry.get("count", 0)
    if not is_int(count) or count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not entry.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))
    return errs


def event_create(event: Object, strict: bool) -> Errors:
    """``ValidateEventCreate``; ``strict`` for a write through events.k8s.io/v1."""
    errs = _event_legacy(event)
    if not strict:
        return errs
    errs.extend(_series(event))
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    kind = event.get("type") or ""
    if kind not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {kind}"))
    for key in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(key):
            errs.append(invalid(key, "", "needs to be unset"))
    source = as_dict(event.get("source"))
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def _reference(value: Any) -> Any:
    # %#v of a core.ObjectReference (a pointer to one prints as the struct, nil as null).
    if value is None:
        return None
    ref = as_dict(value)
    keys = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    body = ", ".join(f"{k[:1].upper()}{k[1:]}:{go_quote(str(ref.get(k) or ''))}" for k in keys)
    return GoValue(
        "core.ObjectReference{"
        + body.replace("Uid:", "UID:").replace("ApiVersion", "APIVersion")
        + "}"
    )


def _source(value: Any) -> GoValue:
    src = as_dict(value)
    return GoValue(
        f"core.EventSource{{Component:{go_quote(str(src.get('component') or ''))}, "
        f"Host:{go_quote(str(src.get('host') or ''))}}}"
    )


def _time(value: Any) -> Any:
    # metav1.Time / MicroTime print as time.Time's String().
    match = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d+))?Z", str(value or ""))
    if not value:
        return GoValue("0001-01-01 00:00:00 +0000 UTC")
    if match is None:
        return value
    fraction = (match.group(3) or "").rstrip("0")
    return GoValue(
        f"{match.group(1)} {match.group(2)}{'.' + fraction if fraction else ''} +0000 UTC"
    )


def event_update(new: Object, old: Object, strict: bool) -> Errors:
    """``ValidateEventUpdate``; through events.k8s.io/v1 most fields are immutable."""
    errs = _event_legacy(new)
    if not strict:
        return errs
    if new.get("series") != old.get("series"):
        errs.extend(_series(new))
    checks: list[tuple[str, Any, Any]] = [
        (
            "involvedObject",
            _reference(new.get("involvedObject") or {}),
            _reference(old.get("involvedObject") or {}),
        ),
        ("reason", new.get("reason") or "", old.get("reason") or ""),
        ("message", new.get("message") or "", old.get("message") or ""),
        ("source", _source(new.get("source")), _source(old.get("source"))),
        ("firstTimestamp", _time(new.get("firstTimestamp")), _time(old.get("firstTimestamp"))),
        ("lastTimestamp", _time(new.get("lastTimestamp")), _time(old.get("lastTimestamp"))),
        ("count", new.get("count") or 0, old.get("count") or 0),
        # Upstream checks reason twice.
        ("reason", new.get("reason") or "", old.get("reason") or ""),
        ("type", new.get("type") or "", old.get("type") or ""),
        ("eventTime", _time(new.get("eventTime")), _time(old.get("eventTime"))),
        ("action", new.get("action") or "", old.get("action") or ""),
        ("related", _reference(new.get("related")), _reference(old.get("related"))),
        (
            "reportingController",
            new.get("reportingComponent") or "",
            old.get("reportingComponent") or "",
        ),
        (
            "reportingInstance",
            new.get("reportingInstance") or "",
            old.get("reportingInstance") or "",
        ),
    ]
    for path, after, before in checks:
        same = (
            after.text == before.text
            if isinstance(after, GoValue) and isinstance(before, GoValue)
            else after == before
        )
        if not same:
            errs.extend(immutable(path, after, None))
    return errs


# -- namespaces -----------------------------------------------------------------------------


def namespace(obj: Object) -> Errors:
    """``ValidateNamespace``'s spec part: finalizer names, qualified or standard."""
    errs: Errors = []
    for value in as_list(as_dict(obj.get("spec")).get("finalizers")):
        name = str(value)
        errs.extend(invalid("spec.finalizers", name, p) for p in is_qualified_name(name))
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    "spec.finalizers",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


# -- services -------------------------------------------------------------------------------

_SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_AFFINITIES = ("ClientIP", "None")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _service_port_struct(protocol: str, port: Any, node_port: Any) -> GoValue:
    # %#v of the core.ServicePort key upstream's duplicate check builds.
    return GoValue(
        f'core.ServicePort{{Name:"", Protocol:{go_quote(protocol)}, AppProtocol:(*string)(nil), '
        f'Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, '
        f"NodePort:{node_port}}}"
    )


def _service_port(sp: dict[str, Any], many: bool, names: set[str], path: str) -> Errors:
    # validateServicePort; protocol and targetPort read with their defaults (TCP, port).
    errs: Errors = []
    name = str(sp.get("name") or "")
    if many and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs.extend(dns1123_label(name, f"{path}.name"))
        if name in names:
            errs.append(duplicate(f"{path}.name", name))
        names.add(name)
    port = sp.get("port")
    number = port if is_int(port) else 0
    errs.extend(invalid(f"{path}.port", number, p) for p in is_valid_port_num(number))
    protocol = sp.get("protocol") or "TCP"
    if protocol not in _PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, _PROTOCOLS))
    target = sp.get("targetPort")
    errs.extend(
        port_num_or_name(number if target in (None, 0, "") else target, f"{path}.targetPort")
    )
    if sp.get("appProtocol") is not None:
        errs.extend(qualified_name(str(sp["appProtocol"]), f"{path}.appProtocol"))
    return errs


def service(obj: Object) -> Errors:
    """``ValidateService``'s spec rules for ports, selector, type, session affinity and the
    external name (cluster IPs and load balancer fields are not checked)."""
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    kind = spec.get("type") or "ClusterIP"  # defaulted
    headless = spec.get("clusterIP") == "None"
    ports = [as_dict(p) for p in as_list(spec.get("ports"))]
    if not ports and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    if kind == "ExternalName":
        cname = str(spec.get("externalName") or "").removesuffix(".")
        if cname:
            errs.extend(invalid("spec.externalName", cname, p) for p in is_dns1123_subdomain(cname))
        else:
            errs.append(required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs.extend(_service_port(port, len(ports) > 1, names, f"spec.ports[{i}]"))
    errs.extend(labels(spec.get("selector"), "spec.selector"))
    affinity = spec.get("sessionAffinity") or "None"
    if affinity not in _AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", affinity, _AFFINITIES))
    if affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(
            forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None")
        )
    if kind not in _SERVICE_TYPES:
        errs.append(not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ClusterIP":
        for i, port in enumerate(ports):
            if port.get("nodePort"):
                errs.append(
                    forbidden(
                        f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'"
                    )
                )
    seen_node_ports: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        node_port = port.get("nodePort") or 0
        if not node_port:
            continue
        key = (str(port.get("protocol") or "TCP"), node_port)
        if key in seen_node_ports:
            errs.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
        seen_node_ports.add(key)
    seen: set[tuple[str, Any]] = set()
    for i, port in enumerate(ports):
        protocol, number = str(port.get("protocol") or "TCP"), port.get("port") or 0
        if (protocol, number) in seen:
            errs.append(duplicate(f"spec.ports[{i}]", _service_port_struct(protocol, number, 0)))
        seen.add((protocol, number))
    return errs
