"""resource.k8s.io/v1 kinds as ``pkg/apis/resource/validation`` checks them.

DeviceClass (selectors, config), ResourceClaim (requests: a DNS-label name, unique,
exactly one of ``exactly`` / ``firstAvailable``, a DeviceClass name, allocationMode and
count, selectors; constraints and config naming requests; the spec immutable on update;
status: ``reservedFor`` unique by uid, at most 256, only with an allocation and never
grown while the claim is being deleted, the allocation immutable once set),
ResourceClaimTemplate (spec immutable) and ResourceSlice (driver, pool, exactly one of
nodeName / nodeSelector / allNodes / perDeviceNodeSelection, devices and their
attributes and capacities; driver, pool name and nodeName immutable).

CEL selectors are compiled here as upstream compiles them when they are new
(:mod:`kubesched.objects.dra.cel`, imported on first use so that validating other kinds
does not load CEL). Objects are validated after defaulting (allocationMode ExactCount,
count 1).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kubesched.objects.validation.affinity import node_selector_term
from kubesched.objects.validation.core import (
    TOO_MANY,
    Errors,
    FieldError,
    Object,
    annotation_map,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    forbidden,
    immutable,
    invalid,
    is_dns1123_subdomain,
    is_int,
    labels,
    not_supported,
    required,
    too_long,
)

# Limits of resource.k8s.io/v1 (staging/src/k8s.io/api/resource/v1/types.go).
DEVICE_REQUESTS_MAX = 32
DEVICE_SELECTORS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
FIRST_AVAILABLE_MAX = 8
RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
SLICE_MAX_DEVICES = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_MAX_ID_LENGTH = 32
DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
CEL_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024

ALLOCATION_MODES = ("All", "ExactCount")
_REQUEST_REF = (
    "must be the name of a request in the claim or the name of a request and a subrequest "
    "separated by '/'"
)


_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_C_IDENTIFIER_MESSAGE = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string "
    "of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex "
    "used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
)
_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")


def too_many(field: str, actual: int, limit: int) -> FieldError:
    """``field.TooMany``."""
    return FieldError(TOO_MANY, field, actual, f"must have at most {limit} items")


def _subdomain(value: str, path: str) -> Errors:
    return [invalid(path, value, p) for p in is_dns1123_subdomain(value)]


def driver_name(value: Any, path: str) -> Errors:
    """``ValidateCSIDriverName``: required, at most 63 characters, a DNS subdomain."""
    name = str(value or "")
    if not name:
        return [required(path, "")]
    errs: Errors = []
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, DRIVER_NAME_MAX_LENGTH))
    errs.extend(_subdomain(name.lower(), path))
    return errs


def pool_name(value: Any, path: str) -> Errors:
    """``validatePoolName``: required, at most 253 characters, DNS subdomains joined by /."""
    name = str(value or "")
    if not name:
        return [required(path, "")]
    errs: Errors = []
    if len(name) > POOL_NAME_MAX_LENGTH:
        errs.append(too_long(path, POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        errs.extend(_subdomain(part, path))
    return errs


def _c_identifier(value: str, path: str) -> Errors:
    errs: Errors = []
    if len(value) > DEVICE_MAX_ID_LENGTH:
        errs.append(too_long(path, DEVICE_MAX_ID_LENGTH))
    if _C_IDENTIFIER.fullmatch(value) is None:
        errs.append(invalid(path, value, _C_IDENTIFIER_MESSAGE))
    return errs


def qualified_name(value: str, path: str) -> Errors:
    """``validateQualifiedName``: a C identifier, optionally after ``domain/``."""
    parts = value.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) > 2:
        return [invalid(path, value, "must not contain more than one slash")]
    errs: Errors = []
    if not parts[0]:
        errs.append(invalid(path, "", "the domain must not be empty"))
    else:
        errs.extend(driver_name(parts[0], path))
    if not parts[1]:
        errs.append(invalid(path, "", "the name must not be empty"))
    else:
        errs.extend(_c_identifier(parts[1], path))
    return errs


def fully_qualified_name(value: str, path: str) -> Errors:
    """``validateFullyQualifiedName``: a qualified name that has a domain."""
    errs = qualified_name(value, path)
    if "/" not in value:
        errs.append(
            invalid(
                path,
                value,
                "a fully qualified name must be a domain and a name separated by a slash",
            )
        )
    return errs


# -- selectors and configuration --------------------------------------------------------


def cel_expression(expression: Any, path: str, stored: bool = False) -> Errors:
    """``validateCELExpression``: at most 10 KiB, and it compiles (new expressions only)."""
    if stored:
        return []
    text = str(expression or "")
    if len(text) > CEL_EXPRESSION_MAX_LENGTH:
        return [too_long(path, CEL_EXPRESSION_MAX_LENGTH)]
    from kubesched.objects.dra.cel import compile_error  # loads CEL on first use

    detail = compile_error(text)
    return [] if detail is None else [invalid(path, text, detail)]


def selectors(value: Any, path: str, stored: bool = False) -> Errors:
    """``validateSelectorSlice``: at most 32, each with a ``cel`` expression."""
    items = as_list(value)
    if len(items) > DEVICE_SELECTORS_MAX:
        return [too_many(path, len(items), DEVICE_SELECTORS_MAX)]
    errs: Errors = []
    for i, sel in enumerate(items):
        cel = as_dict(sel).get("cel")
        if cel is None:
            errs.append(required(f"{path}[{i}].cel", ""))
        else:
            errs.extend(
                cel_expression(
                    as_dict(cel).get("expression"), f"{path}[{i}].cel.expression", stored
                )
            )
    return errs


def _raw_extension(value: Any, path: str, stored: bool) -> Errors:
    if value is None or value == {}:
        return [required(path, "")]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    if not stored and len(json.dumps(value, separators=(",", ":"))) > OPAQUE_PARAMETERS_MAX_LENGTH:
        return [too_long(path, OPAQUE_PARAMETERS_MAX_LENGTH)]
    return []


def device_configuration(config: dict[str, Any], path: str, stored: bool = False) -> Errors:
    """``validateDeviceConfiguration``: an ``opaque`` driver configuration."""
    opaque = config.get("opaque")
    if opaque is None:
        return [required(f"{path}.opaque", "")]
    opaque = as_dict(opaque)
    errs = driver_name(opaque.get("driver"), f"{path}.opaque.driver")
    errs.extend(_raw_extension(opaque.get("parameters"), f"{path}.opaque.parameters", stored))
    return errs


# -- ResourceClaim ----------------------------------------------------------------------


def _request_names(devices: dict[str, Any]) -> dict[str, set[str] | None]:
    names: dict[str, set[str] | None] = {}
    for req in as_list(devices.get("requests")):
        req = as_dict(req)
        first = as_list(req.get("firstAvailable"))
        name = str(req.get("name") or "")
        names[name] = {str(as_dict(s).get("name") or "") for s in first} if first else None
    return names


def _has_request(names: dict[str, set[str] | None], ref: str) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in names:
        return False
    if len(parts) == 1:
        return True
    subs = names[parts[0]]
    return subs is not None and parts[1] in subs


def _request_refs(value: Any, path: str, names: dict[str, set[str] | None]) -> Errors:
    items = [str(v) for v in as_list(value)]
    if len(items) > DEVICE_REQUESTS_MAX:
        return [too_many(path, len(items), DEVICE_REQUESTS_MAX)]
    errs: Errors = []
    seen: set[str] = set()
    for i, ref in enumerate(items):
        at = f"{path}[{i}]"
        parts = ref.split("/")
        if len(parts) > 2:
            errs.append(invalid(at, ref, _REQUEST_REF))
            continue
        for part in parts:
            errs.extend(dns1123_label(part, at))
        if not _has_request(names, ref):
            errs.append(invalid(at, ref, _REQUEST_REF))
    for i, ref in enumerate(items):
        if ref in seen:
            errs.append(duplicate(f"{path}[{i}]", ref))
        seen.add(ref)
    return errs


def _allocation_mode(req: dict[str, Any], path: str) -> Errors:
    mode = req.get("allocationMode")
    raw_count = req.get("count")
    count: int = raw_count if is_int(raw_count) else 0
    if mode == "All":
        if count != 0:
            return [
                invalid(
                    f"{path}.count", count, "must not be specified when allocationMode is 'All'"
                )
            ]
    elif mode == "ExactCount":
        if count <= 0:
            return [invalid(f"{path}.count", count, "must be greater than zero")]
    else:
        return [not_supported(f"{path}.allocationMode", mode or "", ALLOCATION_MODES)]
    return []


def _device_class_ref(value: Any, path: str) -> Errors:
    name = str(value or "")
    if not name:
        return [required(path, "")]
    return _subdomain(name, path)


def _exact(req: dict[str, Any], path: str, stored: bool) -> Errors:
    errs = _device_class_ref(req.get("deviceClassName"), f"{path}.deviceClassName")
    errs.extend(selectors(req.get("selectors"), f"{path}.selectors", stored))
    errs.extend(_allocation_mode(req, path))
    return errs


def _device_request(req: dict[str, Any], path: str, stored: bool) -> Errors:
    errs = dns1123_label(str(req.get("name") or ""), f"{path}.name")
    first = as_list(req.get("firstAvailable"))
    exactly = req.get("exactly")
    if not first and exactly is None:
        errs.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif first and exactly is not None:
        errs.append(
            invalid(
                path,
                None,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields "
                "are set",
            )
        )
    elif first:
        if len(first) > FIRST_AVAILABLE_MAX:
            errs.append(too_many(f"{path}.firstAvailable", len(first), FIRST_AVAILABLE_MAX))
            return errs
        seen: set[str] = set()
        for i, sub in enumerate(first):
            sub = as_dict(sub)
            at = f"{path}.firstAvailable[{i}]"
            errs.extend(dns1123_label(str(sub.get("name") or ""), f"{at}.name"))
            errs.extend(_exact(sub, at, stored))
        for i, sub in enumerate(first):
            name = str(as_dict(sub).get("name") or "")
            if name in seen:
                errs.append(duplicate(f"{path}.firstAvailable[{i}]", name))
            seen.add(name)
    else:
        errs.extend(_exact(as_dict(exactly), f"{path}.exactly", stored))
    return errs


def device_claim(devices: dict[str, Any], path: str, stored: bool = False) -> Errors:
    """``validateDeviceClaim`` of ``spec.devices`` (``path`` names it)."""
    errs: Errors = []
    requests = as_list(devices.get("requests"))
    if len(requests) > DEVICE_REQUESTS_MAX:
        errs.append(too_many(f"{path}.requests", len(requests), DEVICE_REQUESTS_MAX))
    else:
        for i, req in enumerate(requests):
            errs.extend(_device_request(as_dict(req), f"{path}.requests[{i}]", stored))
        seen: set[str] = set()
        for i, req in enumerate(requests):
            name = str(as_dict(req).get("name") or "")
            if name in seen:
                errs.append(duplicate(f"{path}.requests[{i}]", name))
            seen.add(name)
    names = _request_names(devices)
    constraints = as_list(devices.get("constraints"))
    if len(constraints) > DEVICE_CONSTRAINTS_MAX:
        errs.append(too_many(f"{path}.constraints", len(constraints), DEVICE_CONSTRAINTS_MAX))
    else:
        for i, c in enumerate(constraints):
            c = as_dict(c)
            at = f"{path}.constraints[{i}]"
            errs.extend(_request_refs(c.get("requests"), f"{at}.requests", names))
            if c.get("matchAttribute") is not None:
                errs.extend(fully_qualified_name(str(c["matchAttribute"]), f"{at}.matchAttribute"))
            elif c.get("distinctAttribute") is not None:
                errs.extend(
                    fully_qualified_name(str(c["distinctAttribute"]), f"{at}.distinctAttribute")
                )
            else:
                errs.append(required(f"{at}.matchAttribute", ""))
    config = as_list(devices.get("config"))
    if len(config) > DEVICE_CONFIG_MAX:
        errs.append(too_many(f"{path}.config", len(config), DEVICE_CONFIG_MAX))
    else:
        for i, c in enumerate(config):
            c = as_dict(c)
            at = f"{path}.config[{i}]"
            errs.extend(_request_refs(c.get("requests"), f"{at}.requests", names))
            errs.extend(device_configuration(c, at, stored))
    return errs


def resource_claim(obj: Object) -> Errors:
    """``ValidateResourceClaim`` (metadata is checked by the caller)."""
    spec = as_dict(obj.get("spec"))
    return device_claim(as_dict(spec.get("devices")), "spec.devices")


def resource_claim_update(new: Object, old: Object) -> Errors:
    """``ValidateResourceClaimUpdate``: the spec is immutable."""
    return immutable("spec", new.get("spec"), old.get("spec"))


def resource_claim_status(new: Object, old: Object) -> Errors:
    """``ValidateResourceClaimStatusUpdate``."""
    status, old_status = as_dict(new.get("status")), as_dict(old.get("status"))
    errs: Errors = []
    reserved = as_list(status.get("reservedFor"))
    if len(reserved) > RESERVED_FOR_MAX:
        errs.append(too_many("status.reservedFor", len(reserved), RESERVED_FOR_MAX))
    else:
        uids: set[str] = set()
        for i, ref in enumerate(reserved):
            ref = as_dict(ref)
            at = f"status.reservedFor[{i}]"
            for key in ("resource", "name", "uid"):
                if not ref.get(key):
                    errs.append(required(f"{at}.{key}", ""))
        for i, ref in enumerate(reserved):
            uid = str(as_dict(ref).get("uid") or "")
            if uid in uids:
                errs.append(duplicate(f"status.reservedFor[{i}]", uid))
            uids.add(uid)
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    errs.extend(_device_statuses(status, allocation))
    if reserved:
        if allocation is None:
            errs.append(
                forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
            )
        elif (new.get("metadata") or {}).get("deletionTimestamp") is not None:
            before = {json.dumps(r, sort_keys=True) for r in as_list(old_status.get("reservedFor"))}
            if any(json.dumps(r, sort_keys=True) not in before for r in reserved):
                errs.append(
                    forbidden(
                        "status.reservedFor",
                        "new entries may not be added while `deallocationRequested` or "
                        "`deletionTimestamp` are set",
                    )
                )
    if old_allocation is not None and allocation is not None:
        errs.extend(immutable("status.allocation", allocation, old_allocation))
    elif allocation is not None:
        spec = as_dict(new.get("spec"))
        names = _request_names(as_dict(spec.get("devices")))
        errs.extend(_allocation(as_dict(allocation), "status.allocation", names))
    return errs


def _device_statuses(status: dict[str, Any], allocation: Any) -> Errors:
    # status.devices: what drivers report per allocated device, once each.
    results = as_list(as_dict(as_dict(allocation).get("devices")).get("results"))
    allocated = {
        (str(r.get("driver")), str(r.get("pool")), str(r.get("device")), r.get("shareID"))
        for r in map(as_dict, results)
    }
    errs: Errors = []
    seen: set[tuple[str, str, str, Any]] = set()
    for i, raw in enumerate(as_list(status.get("devices"))):
        dev = as_dict(raw)
        at = f"status.devices[{i}]"
        errs.extend(driver_name(dev.get("driver"), f"{at}.driver"))
        errs.extend(pool_name(dev.get("pool"), f"{at}.pool"))
        errs.extend(dns1123_label(str(dev.get("device") or ""), f"{at}.device"))
        key = (
            str(dev.get("driver")),
            str(dev.get("pool")),
            str(dev.get("device")),
            dev.get("shareID"),
        )
        name = "/".join(key[:3])
        if key not in allocated:
            errs.append(invalid(at, name, "must be an allocated device in the claim"))
        if key in seen:
            errs.append(duplicate(at, name))
        seen.add(key)
    return errs


def _allocation(allocation: dict[str, Any], path: str, names: dict[str, set[str] | None]) -> Errors:
    devices = as_dict(allocation.get("devices"))
    results = as_list(devices.get("results"))
    errs: Errors = []
    if len(results) > ALLOCATION_RESULTS_MAX:
        return [too_many(f"{path}.devices.results", len(results), ALLOCATION_RESULTS_MAX)]
    for i, r in enumerate(results):
        r = as_dict(r)
        at = f"{path}.devices.results[{i}]"
        request = str(r.get("request") or "")
        parts = request.split("/")
        if len(parts) > 2 or not _has_request(names, request):
            errs.append(invalid(f"{at}.request", request, _REQUEST_REF))
        errs.extend(driver_name(r.get("driver"), f"{at}.driver"))
        errs.extend(pool_name(r.get("pool"), f"{at}.pool"))
        errs.extend(dns1123_label(str(r.get("device") or ""), f"{at}.device"))
    if allocation.get("nodeSelector") is not None:
        errs.extend(_node_selector(allocation["nodeSelector"], f"{path}.nodeSelector"))
    return errs


def _node_selector(value: Any, path: str) -> Errors:
    terms = as_list(as_dict(value).get("nodeSelectorTerms"))
    if not terms:
        return [required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    errs: Errors = []
    for i, term in enumerate(terms):
        errs.extend(node_selector_term(as_dict(term), f"{path}.nodeSelectorTerms[{i}]", False))
    return errs


# -- ResourceClaimTemplate ----------------------------------------------------------------


def resource_claim_template(obj: Object) -> Errors:
    """``ValidateResourceClaimTemplate`` (metadata is checked by the caller)."""
    spec = as_dict(obj.get("spec"))
    # ValidateTemplateObjectMeta: the claims' labels and annotations.
    meta = as_dict(spec.get("metadata"))
    errs = labels(meta.get("labels"), "spec.metadata.labels")
    errs.extend(annotation_map(meta.get("annotations"), "spec.metadata.annotations"))
    claim_spec = as_dict(spec.get("spec"))
    errs.extend(device_claim(as_dict(claim_spec.get("devices")), "spec.spec.devices"))
    return errs


def resource_claim_template_update(new: Object, old: Object) -> Errors:
    """``ValidateResourceClaimTemplateUpdate``: the spec is immutable."""
    return immutable("spec", new.get("spec"), old.get("spec"))


# -- DeviceClass --------------------------------------------------------------------------


def _device_class_spec(spec: dict[str, Any], old: dict[str, Any] | None) -> Errors:
    stored = old is not None and spec.get("selectors") == old.get("selectors")
    errs = selectors(spec.get("selectors"), "spec.selectors", stored)
    config = as_list(spec.get("config"))
    if len(config) > DEVICE_CONFIG_MAX:
        errs.append(too_many("spec.config", len(config), DEVICE_CONFIG_MAX))
    else:
        stored = old is not None and spec.get("config") == old.get("config")
        for i, c in enumerate(config):
            errs.extend(device_configuration(as_dict(c), f"spec.config[{i}]", stored))
    name = spec.get("extendedResourceName")
    if name is not None and ("/" not in str(name) or str(name).startswith("kubernetes.io/")):
        errs.append(
            invalid("spec.extendedResourceName", name, "must be a valid extended resource name")
        )
    return errs


def device_class(obj: Object) -> Errors:
    """``ValidateDeviceClass`` (metadata is checked by the caller)."""
    return _device_class_spec(as_dict(obj.get("spec")), None)


def device_class_update(new: Object, old: Object) -> Errors:
    """``ValidateDeviceClassUpdate``: unchanged selectors and config are not recompiled."""
    return _device_class_spec(as_dict(new.get("spec")), as_dict(old.get("spec")))


# -- ResourceSlice ------------------------------------------------------------------------


def _exactly_one(spec: dict[str, Any], path: str, per_device: bool) -> Errors:
    errs: Errors = []
    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name != "":
            set_fields.append("`nodeName`")
            errs.extend(_subdomain(str(node_name), f"{path}.nodeName"))
        else:
            detail = (
                "must not be empty"
                if per_device
                else "must be either unset or set to a non-empty string"
            )
            errs.append(invalid(f"{path}.nodeName", node_name, detail))
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        errs.extend(_node_selector(spec["nodeSelector"], f"{path}.nodeSelector"))
        if (
            not per_device
            and len(as_list(as_dict(spec["nodeSelector"]).get("nodeSelectorTerms"))) != 1
        ):
            errs.append(
                invalid(
                    f"{path}.nodeSelector.nodeSelectorTerms",
                    as_list(as_dict(spec["nodeSelector"]).get("nodeSelectorTerms")),
                    "must have exactly one node selector term",
                )
            )
    if spec.get("allNodes") is not None:
        if spec["allNodes"] is True:
            set_fields.append("`allNodes`")
        else:
            errs.append(
                invalid(f"{path}.allNodes", spec["allNodes"], "must be either unset or set to true")
            )
    if not per_device and spec.get("perDeviceNodeSelection") is not None:
        if spec["perDeviceNodeSelection"] is True:
            set_fields.append("`perDeviceNodeSelection`")
        else:
            errs.append(
                invalid(
                    f"{path}.perDeviceNodeSelection",
                    spec["perDeviceNodeSelection"],
                    "must be either unset or set to true",
                )
            )
    if per_device:
        which = (
            "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
        )
    else:
        which = (
            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` "
            "is required"
        )
    if not set_fields:
        errs.append(required(path, which))
    elif len(set_fields) > 1:
        suffix = "" if per_device else ", but multiple fields are set"
        errs.append(invalid(path, "{" + ", ".join(set_fields) + "}", which + suffix))
    return errs


def _attribute(attr: Any, path: str) -> Errors:
    attr = as_dict(attr)
    errs: Errors = []
    present = [k for k in ("bool", "int", "string", "version") if attr.get(k) is not None]
    if "string" in present and len(str(attr["string"])) > ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(too_long(f"{path}.string", ATTRIBUTE_MAX_VALUE_LENGTH))
    if "version" in present:
        version = str(attr["version"])
        if _SEMVER.fullmatch(version) is None:
            errs.append(
                invalid(
                    f"{path}.version",
                    version,
                    "must be a string compatible with semver.org spec 2.0.0",
                )
            )
        if len(version) > ATTRIBUTE_MAX_VALUE_LENGTH:
            errs.append(too_long(f"{path}.version", ATTRIBUTE_MAX_VALUE_LENGTH))
    if len(present) != 1:
        errs.append(
            invalid(path, "" if not present else attr, "exactly one value must be specified")
        )
    return errs


def _device(dev: dict[str, Any], path: str, per_device: bool) -> Errors:
    errs = dns1123_label(str(dev.get("name") or ""), f"{path}.name")
    attributes, capacity = as_dict(dev.get("attributes")), as_dict(dev.get("capacity"))
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(
            invalid(
                path,
                total,
                "the total number of attributes and capacities must not exceed "
                f"{MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        )
    # Go walks maps in random order; sorted keys make the answer stable.
    for key in sorted(attributes):
        errs.extend(qualified_name(key, f"{path}.attributes"))
        errs.extend(_attribute(attributes[key], f"{path}.attributes[{key}]"))
    for key in sorted(capacity):
        errs.extend(qualified_name(key, f"{path}.capacity"))
        if (
            as_dict(capacity[key]).get("requestPolicy") is not None
            and dev.get("allowMultipleAllocations") is not True
        ):
            errs.append(
                forbidden(
                    f"{path}.capacity[{key}].requestPolicy", "allowMultipleAllocations must be true"
                )
            )
    if per_device:
        errs.extend(_exactly_one(dev, path, True))
    elif any(dev.get(k) is not None for k in ("nodeName", "nodeSelector", "allNodes")):
        errs.append(
            invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        )
    return errs


def _slice_spec(spec: dict[str, Any], old: dict[str, Any] | None) -> Errors:
    errs = driver_name(spec.get("driver"), "spec.driver")
    pool = as_dict(spec.get("pool"))
    errs.extend(pool_name(pool.get("name"), "spec.pool.name"))
    count = pool.get("resourceSliceCount")
    if not is_int(count) or count <= 0:
        errs.append(
            invalid(
                "spec.pool.resourceSliceCount",
                count if is_int(count) else 0,
                "must be greater than zero",
            )
        )
    generation = pool.get("generation")
    if is_int(generation) and generation < 0:
        errs.append(
            invalid("spec.pool.generation", generation, "must be greater than or equal to zero")
        )
    if old is not None:
        errs.extend(
            immutable("spec.pool.name", pool.get("name"), as_dict(old.get("pool")).get("name"))
        )
        errs.extend(immutable("spec.driver", spec.get("driver"), old.get("driver")))
        errs.extend(immutable("spec.nodeName", spec.get("nodeName"), old.get("nodeName")))
    errs.extend(_exactly_one(spec, "spec", False))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    devices = as_list(spec.get("devices"))
    if len(devices) > SLICE_MAX_DEVICES:
        errs.append(too_many("spec.devices", len(devices), SLICE_MAX_DEVICES))
        return errs
    per_device = spec.get("perDeviceNodeSelection") is True
    seen: set[str] = set()
    for i, dev in enumerate(devices):
        errs.extend(_device(as_dict(dev), f"spec.devices[{i}]", per_device))
    for i, dev in enumerate(devices):
        name = str(as_dict(dev).get("name") or "")
        if name in seen:
            errs.append(duplicate(f"spec.devices[{i}]", name))
        seen.add(name)
    return errs


def resource_slice(obj: Object) -> Errors:
    """``ValidateResourceSlice`` (metadata is checked by the caller)."""
    return _slice_spec(as_dict(obj.get("spec")), None)


def resource_slice_update(new: Object, old: Object) -> Errors:
    """``ValidateResourceSliceUpdate``: driver, pool name and nodeName are immutable."""
    return _slice_spec(as_dict(new.get("spec")), as_dict(old.get("spec")))
