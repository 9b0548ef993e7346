"""The removed scheduler Policy API (``kind: Policy``), read only to migrate it.

kube-scheduler took a Policy file (predicates, priorities, extenders) through
``algorithmSource.policy`` of its v1alpha1/v1beta1 configuration until the Policy API
was removed in Kubernetes v1.23. Tutorials still show it, so kubesched reads it, in the
legacy ``v1`` JSON shape (``apiVersion: v1``, camelCase keys), only for ``kubesched
config migrate``; loading one as a configuration fails with ``removed_policy_errors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.config.decode import INT64, Fields, child
from kubesched.config.errors import ConfigError, FieldError

__all__ = [
    "POLICY_REMOVED_IN",
    "LabelsPresence",
    "Policy",
    "PredicatePolicy",
    "PriorityPolicy",
    "load_policy",
    "parse_policy",
    "removed_policy_errors",
]

#: The Kubernetes release that removed the Policy API and ``algorithmSource``.
POLICY_REMOVED_IN = "v1.23"

_HOW_TO_MIGRATE = (
    "run 'kubesched config migrate --policy POLICY_FILE [--config OLD_CONFIG]' to write "
    "the equivalent kubescheduler.config.k8s.io/v1 configuration (extenders, and plugins "
    "for the predicates and priorities)"
)


def removed_policy_errors(data: object) -> list[FieldError]:
    """The error for a document in a removed form: a ``kind: Policy`` file, or a
    configuration that points at one through ``algorithmSource``; else nothing."""
    if not isinstance(data, dict):
        return []
    if data.get("kind") == "Policy":
        detail = (
            f"the scheduler Policy API was removed in Kubernetes {POLICY_REMOVED_IN}; "
            f"a Policy file cannot be loaded as a configuration: {_HOW_TO_MIGRATE}"
        )
        return [FieldError.invalid("kind", "Policy", detail)]
    if "algorithmSource" in data:
        detail = (
            "algorithmSource (a Policy file or ConfigMap, or an algorithm provider) was "
            f"removed in Kubernetes {POLICY_REMOVED_IN} with the scheduler Policy API; "
            "kubescheduler.config.k8s.io/v1beta1 was the last version that had it: "
            + _HOW_TO_MIGRATE
        )
        return [FieldError.forbidden("algorithmSource", detail)]
    return []


@dataclass(frozen=True)
class LabelsPresence:
    """A CheckNodeLabelPresence-style predicate argument."""

    labels: tuple[str, ...]
    presence: bool


@dataclass(frozen=True)
class PredicatePolicy:
    """One predicate: a registered name, or a custom one with an argument."""

    name: str
    service_affinity_labels: tuple[str, ...] | None = None
    labels_presence: LabelsPresence | None = None
    path: str = ""


@dataclass(frozen=True)
class PriorityPolicy:
    """One priority with its weight; custom ones carry an argument."""

    name: str
    weight: int
    service_anti_affinity_label: str | None = None
    label_preference: LabelsPresence | None = None
    #: RequestedToCapacityRatioArguments: shape as (utilization, score) points and
    #: resources as (name, weight); None when the priority has no such argument.
    shape: tuple[tuple[int, int], ...] | None = None
    resources: tuple[tuple[str, int], ...] = ()
    path: str = ""


@dataclass(frozen=True)
class Policy:
    """A Policy document. ``predicates``/``priorities`` None means "not given" (the
    legacy defaults apply), which differs from an empty list (none but the mandatory
    predicates)."""

    predicates: tuple[PredicatePolicy, ...] | None
    priorities: tuple[PriorityPolicy, ...] | None
    #: Each extender as v1 configuration keys (enableHttps already enableHTTPS).
    extenders: tuple[dict[str, Any], ...]
    hard_pod_affinity_symmetric_weight: int | None
    always_check_all_predicates: bool | None
    source: str = ""


def load_policy(path: str | Path) -> Policy:
    """The Policy in the JSON or YAML file ``path``; raises ConfigError listing every
    problem."""
    from kubesched.config.load import read_document, read_file

    source = str(path)
    text = read_file(path)
    data, errors = read_document(text, source, is_json=Path(path).suffix.lower() == ".json")
    policy, problems = parse_policy(data, source)
    errors += problems
    if errors:
        raise ConfigError(source, errors)
    return policy


def parse_policy(data: object, source: str = "") -> tuple[Policy, list[FieldError]]:
    """Decode a Policy document; returns it with every problem found."""
    errors: list[FieldError] = []
    top = Fields(data, "", errors)
    kind = top.raw("kind")
    if kind not in (None, "", "Policy"):
        errors.append(FieldError.not_supported("kind", kind, ["Policy"]))
    version = top.raw("apiVersion")
    if version not in (None, "", "v1"):
        errors.append(FieldError.not_supported("apiVersion", version, ["v1"]))
    predicates = None
    if top.raw("predicates") is not None:
        predicates = tuple(
            _predicate(Fields(item, path, errors)) for path, item in top.items("predicates")
        )
    priorities = None
    if top.raw("priorities") is not None:
        priorities = tuple(
            _priority(Fields(item, path, errors)) for path, item in top.items("priorities")
        )
    extenders = tuple(
        _extender(Fields(item, path, errors)) for path, item in top.items("extenders")
    )
    symmetric = top.integer("hardPodAffinitySymmetricWeight")
    always = top.optional_boolean("alwaysCheckAllPredicates")
    top.finish()
    policy = Policy(predicates, priorities, extenders, symmetric, always, source)
    return policy, errors


def _labels_presence(fields: Fields | None) -> LabelsPresence | None:
    if fields is None:
        return None
    labels = tuple(_strings(fields, "labels"))
    presence = fields.boolean("presence")
    fields.finish()
    return LabelsPresence(labels, presence)


def _strings(fields: Fields, key: str) -> list[str]:
    out: list[str] = []
    for path, item in fields.items(key):
        if isinstance(item, str):
            out.append(item)
        else:
            fields.errors.append(FieldError.invalid(path, item, "must be a string"))
    return out


def _predicate(fields: Fields) -> PredicatePolicy:
    name = fields.string("name")
    if not name:
        fields.errors.append(FieldError.required(fields.at("name")))
    argument = fields.nested("argument")
    affinity: tuple[str, ...] | None = None
    presence = None
    if argument is not None:
        service = argument.nested("serviceAffinity")
        if service is not None:
            affinity = tuple(_strings(service, "labels"))
            service.finish()
        presence = _labels_presence(argument.nested("labelsPresence"))
        argument.finish()
    fields.finish()
    return PredicatePolicy(name, affinity, presence, fields.path)


def _priority(fields: Fields) -> PriorityPolicy:
    name = fields.string("name")
    if not name:
        fields.errors.append(FieldError.required(fields.at("name")))
    weight = fields.integer("weight", INT64) or 0
    if weight <= 0:
        detail = "the weight of a priority must be positive"
        fields.errors.append(FieldError.invalid(fields.at("weight"), weight, detail))
    argument = fields.nested("argument")
    anti: str | None = None
    preference = None
    shape: tuple[tuple[int, int], ...] | None = None
    resources: list[tuple[str, int]] = []
    if argument is not None:
        service = argument.nested("serviceAntiAffinity")
        if service is not None:
            anti = service.string("label")
            service.finish()
        preference = _labels_presence(argument.nested("labelPreference"))
        ratio = argument.nested("requestedToCapacityRatioArguments")
        if ratio is not None:
            points = []
            for path, item in ratio.items("shape"):
                point = Fields(item, path, fields.errors)
                points.append((point.integer("utilization") or 0, point.integer("score") or 0))
                point.finish()
            shape = tuple(points)
            for path, item in ratio.items("resources"):
                resource = Fields(item, path, fields.errors)
                resources.append((resource.string("name"), resource.integer("weight") or 0))
                resource.finish()
            ratio.finish()
        argument.finish()
    fields.finish()
    return PriorityPolicy(name, weight, anti, preference, shape, tuple(resources), fields.path)


#: Policy extender keys → v1 configuration keys (the same but for enableHttps).
_EXTENDER_KEYS = {
    "urlPrefix": "urlPrefix",
    "filterVerb": "filterVerb",
    "preemptVerb": "preemptVerb",
    "prioritizeVerb": "prioritizeVerb",
    "bindVerb": "bindVerb",
    "weight": "weight",
    "enableHttps": "enableHTTPS",
    "nodeCacheCapable": "nodeCacheCapable",
    "ignorable": "ignorable",
}
_TLS_KEYS = (
    "insecure",
    "serverName",
    "certFile",
    "keyFile",
    "caFile",
    "certData",
    "keyData",
    "caData",
)
_NANOS_PER_SECOND = 1_000_000_000


def _extender(fields: Fields) -> dict[str, Any]:
    out: dict[str, Any] = {}
    url = fields.string("urlPrefix")
    if not url:
        fields.errors.append(FieldError.required(fields.at("urlPrefix")))
    for key, v1_key in _EXTENDER_KEYS.items():
        if key in ("enableHttps", "nodeCacheCapable", "ignorable"):
            value: Any = fields.boolean(key)
        elif key == "weight":
            value = fields.integer(key, INT64) or 0
        else:
            value = fields.string(key)
        if value:
            out[v1_key] = value
    tls = fields.nested("tlsConfig")
    if tls is not None:
        config: dict[str, Any] = {}
        for key in _TLS_KEYS:
            value = tls.boolean(key) if key == "insecure" else tls.string(key)
            if value:
                config[key] = value
        tls.finish()
        out["tlsConfig"] = config
    out_timeout = _http_timeout(fields)
    if out_timeout:
        out["httpTimeout"] = out_timeout
    managed = []
    for path, item in fields.items("managedResources"):
        resource = Fields(item, path, fields.errors)
        entry: dict[str, Any] = {"name": resource.string("name")}
        if resource.boolean("ignoredByScheduler"):
            entry["ignoredByScheduler"] = True
        resource.finish()
        managed.append(entry)
    if managed:
        out["managedResources"] = managed
    fields.finish()
    return out


def _http_timeout(fields: Fields) -> str:
    """The Policy's ``httpTimeout`` (Go's time.Duration: integer nanoseconds) as a v1
    duration string ("30s"); "" when absent or zero."""
    raw = fields.raw("httpTimeout")
    if raw is None:
        return ""
    if isinstance(raw, bool) or not isinstance(raw, int):
        detail = (
            "the Policy's httpTimeout is a number of nanoseconds (Go's time.Duration), "
            "e.g. 5000000000 for 5s"
        )
        fields.errors.append(FieldError.invalid(child(fields.path, "httpTimeout"), raw, detail))
        return ""
    if raw <= 0:
        return ""
    seconds, nanos = divmod(raw, _NANOS_PER_SECOND)
    if nanos == 0:
        return f"{seconds}s"
    millis, rest = divmod(raw, 1_000_000)
    return f"{millis}ms" if rest == 0 else f"{raw}ns"
