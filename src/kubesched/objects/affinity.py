"""Pod affinity terms and topology spread constraints, decoded for matching.

As upstream's PodInfo does, terms are prepared once per pod: the namespaces a term
applies to are resolved (none listed and no namespaceSelector means the pod's own), and
``matchLabelKeys`` / ``mismatchLabelKeys`` are merged into the label selector the way
kube-apiserver merges them when the pod is created.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.objects._decode import (
    as_map,
    get_int,
    get_str,
    get_str_list,
    join,
    nested,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import LabelSelector, Requirement

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
POLICY_HONOR = "Honor"
POLICY_IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """A pod (anti-)affinity term: which pods, in which namespaces, over which topology."""

    label_selector: LabelSelector | None  # None matches no pod
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None  # None matches no namespace
    topology_key: str

    def matches(
        self,
        pod_namespace: str,
        pod_labels: Mapping[str, str],
        namespace_labels: Mapping[str, str] | None = None,
    ) -> bool:
        """Whether a pod in ``pod_namespace`` with ``pod_labels`` is selected by this term.

        ``namespace_labels`` are the labels of the pod's Namespace object; without them a
        namespaceSelector can only match when it is empty (matches every namespace).
        """
        if self.label_selector is None:
            return False
        if pod_namespace not in self.namespaces:
            if self.namespace_selector is None:
                return False
            if not self.namespace_selector.matches(namespace_labels or {}):
                return False
        return self.label_selector.matches(pod_labels)


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    """A preferred term and its weight (1-100)."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """One entry of ``spec.topologySpreadConstraints``, with API defaults applied."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None
    min_domains: int | None = None
    node_affinity_policy: str = POLICY_HONOR
    node_taints_policy: str = POLICY_IGNORE
    match_label_keys: tuple[str, ...] = ()


def _merge_label_keys(
    selector: LabelSelector | None,
    labels: Mapping[str, str],
    match_keys: Sequence[str],
    mismatch_keys: Sequence[str],
) -> LabelSelector | None:
    if selector is None or not (match_keys or mismatch_keys):
        return selector
    extra = [Requirement(k, "In", (labels[k],)) for k in match_keys if k in labels]
    extra += [Requirement(k, "NotIn", (labels[k],)) for k in mismatch_keys if k in labels]
    present = set(selector.requirements)
    merged = selector.requirements + tuple(r for r in extra if r not in present)
    return LabelSelector(merged)


def _decode_term(
    raw: object, path: str, namespace: str, labels: Mapping[str, str]
) -> PodAffinityTerm:
    obj = as_map(raw, path)
    selector_raw = obj.get("labelSelector")
    selector = (
        None
        if selector_raw is None
        else nested(join(path, "labelSelector"), LabelSelector.from_dict, selector_raw)
    )
    ns_selector_raw = obj.get("namespaceSelector")
    ns_selector = (
        None
        if ns_selector_raw is None
        else nested(join(path, "namespaceSelector"), LabelSelector.from_dict, ns_selector_raw)
    )
    namespaces = frozenset(get_str_list(obj, "namespaces", path))
    if not namespaces and ns_selector is None:
        namespaces = frozenset({namespace})
    topology_key = get_str(obj, "topologyKey", path)
    if not topology_key:
        raise ObjectError(join(path, "topologyKey"), "Required value: can not be empty")
    selector = _merge_label_keys(
        selector,
        labels,
        get_str_list(obj, "matchLabelKeys", path),
        get_str_list(obj, "mismatchLabelKeys", path),
    )
    return PodAffinityTerm(selector, namespaces, ns_selector, topology_key)


def decode_pod_affinity_terms(
    items: Sequence[object], path: str, namespace: str, labels: Mapping[str, str]
) -> tuple[PodAffinityTerm, ...]:
    """Decode required terms of a pod in ``namespace`` with ``labels``."""
    return tuple(_decode_term(t, join(path, i), namespace, labels) for i, t in enumerate(items))


def decode_weighted_pod_affinity_terms(
    items: Sequence[object], path: str, namespace: str, labels: Mapping[str, str]
) -> tuple[WeightedPodAffinityTerm, ...]:
    """Decode preferred (weighted) terms."""
    out = []
    for i, raw in enumerate(items):
        item_path = join(path, i)
        obj = as_map(raw, item_path)
        weight = get_int(obj, "weight", item_path, 0) or 0
        if not 1 <= weight <= 100:
            raise ObjectError(
                join(item_path, "weight"), f"Invalid value: {weight}: must be in the range 1-100"
            )
        term = _decode_term(
            obj.get("podAffinityTerm"), join(item_path, "podAffinityTerm"), namespace, labels
        )
        out.append(WeightedPodAffinityTerm(weight, term))
    return tuple(out)


def _unsupported(value: str, supported: Sequence[str]) -> str:
    allowed = ", ".join(f'"{s}"' for s in supported)
    return f'Unsupported value: "{value}": supported values: {allowed}'


def decode_topology_spread_constraints(
    items: Sequence[object], path: str
) -> tuple[TopologySpreadConstraint, ...]:
    """Decode ``spec.topologySpreadConstraints`` with the API server's validation."""
    out = []
    for i, raw in enumerate(items):
        p = join(path, i)
        obj = as_map(raw, p)
        max_skew = get_int(obj, "maxSkew", p, 0) or 0
        if max_skew <= 0:
            raise ObjectError(
                join(p, "maxSkew"), f"Invalid value: {max_skew}: must be greater than zero"
            )
        topology_key = get_str(obj, "topologyKey", p)
        if not topology_key:
            raise ObjectError(join(p, "topologyKey"), "Required value: can not be empty")
        when = get_str(obj, "whenUnsatisfiable", p)
        if when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ObjectError(
                join(p, "whenUnsatisfiable"),
                _unsupported(when, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)),
            )
        min_domains = get_int(obj, "minDomains", p)
        if min_domains is not None and (min_domains <= 0 or when != DO_NOT_SCHEDULE):
            raise ObjectError(
                join(p, "minDomains"),
                f"Invalid value: {min_domains}: must be greater than 0 and only with "
                f"whenUnsatisfiable {DO_NOT_SCHEDULE}",
            )
        policies = {}
        for key, default in (
            ("nodeAffinityPolicy", POLICY_HONOR),
            ("nodeTaintsPolicy", POLICY_IGNORE),
        ):
            value = get_str(obj, key, p) or default
            if value not in (POLICY_HONOR, POLICY_IGNORE):
                raise ObjectError(
                    join(p, key),
                    _unsupported(value, (POLICY_HONOR, POLICY_IGNORE)),
                )
            policies[key] = value
        selector_raw = obj.get("labelSelector")
        out.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                when_unsatisfiable=when,
                label_selector=(
                    None
                    if selector_raw is None
                    else nested(join(p, "labelSelector"), LabelSelector.from_dict, selector_raw)
                ),
                min_domains=min_domains,
                node_affinity_policy=policies["nodeAffinityPolicy"],
                node_taints_policy=policies["nodeTaintsPolicy"],
                match_label_keys=get_str_list(obj, "matchLabelKeys", p),
            )
        )
    return tuple(out)
