"""Cluster objects that scheduling policies read besides pods and nodes.

PriorityClasses (priority admission, preemption), PodDisruptionBudgets (which victims
preemption prefers), Namespaces (namespaceSelector of pod affinity), and the workload
objects whose selectors PodTopologySpread's system default constraints use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.objects._decode import (
    as_map,
    get_bool,
    get_int,
    get_map,
    get_str,
    get_str_map,
    nested,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import LabelSelector, selector_from_set

# The workload kinds behind PodTopologySpread's default constraints.
SERVICE = "Service"
REPLICATION_CONTROLLER = "ReplicationController"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
WORKLOAD_KINDS = (SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET)


@dataclass(frozen=True, slots=True)
class PriorityClass:
    """scheduling.k8s.io/v1 PriorityClass."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"

    @classmethod
    def from_dict(cls, raw: object) -> PriorityClass:
        obj = as_map(raw, "")
        name = get_str(get_map(obj, "metadata", ""), "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            value = get_int(obj, "value", "")
            if value is None:
                raise ObjectError("value", "Required value: value is required")
            return cls(
                name=name,
                value=value,
                global_default=get_bool(obj, "globalDefault", ""),
                preemption_policy=get_str(obj, "preemptionPolicy", "") or "PreemptLowerPriority",
            )
        except ObjectError as err:
            raise err.located(f"PriorityClass {name}") from None


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """policy/v1 PodDisruptionBudget: preemption reads its selector and status."""

    namespace: str
    name: str
    selector: LabelSelector | None  # None selects no pod
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, raw: object) -> PodDisruptionBudget:
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            selector_raw = spec.get("selector")
            return cls(
                namespace=namespace,
                name=name,
                selector=(
                    None
                    if selector_raw is None
                    else nested("spec.selector", LabelSelector.from_dict, selector_raw)
                ),
                disruptions_allowed=get_int(status, "disruptionsAllowed", "status", 0) or 0,
                disrupted_pods=frozenset(get_map(status, "disruptedPods", "status")),
            )
        except ObjectError as err:
            raise err.located(f"PodDisruptionBudget {namespace}/{name}") from None


@dataclass(frozen=True, slots=True)
class Namespace:
    """core/v1 Namespace: its labels, for namespaceSelectors."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: object) -> Namespace:
        meta = get_map(as_map(raw, ""), "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            return cls(name=name, labels=get_str_map(meta, "labels", "metadata"))
        except ObjectError as err:
            raise err.located(f"Namespace {name}") from None


@dataclass(frozen=True, slots=True)
class Workload:
    """A Service, ReplicationController, ReplicaSet or StatefulSet, reduced to the pod
    selector that PodTopologySpread's system default constraints are built from."""

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None  # None selects no pod

    @classmethod
    def from_dict(cls, raw: object) -> Workload:
        obj = as_map(raw, "")
        kind = get_str(obj, "kind", "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            spec = get_map(obj, "spec", "")
            selector: LabelSelector | None
            if kind in (SERVICE, REPLICATION_CONTROLLER):
                # A map selector; an empty one selects nothing for these kinds.
                labels = get_str_map(spec, "selector", "spec")
                selector = selector_from_set(labels) if labels else None
            elif kind in (REPLICA_SET, STATEFUL_SET):
                raw_sel = spec.get("selector")
                selector = (
                    None
                    if raw_sel is None
                    else nested("spec.selector", LabelSelector.from_dict, raw_sel)
                )
            else:
                raise ObjectError("kind", f"not a workload kind: {kind!r}")
            return cls(kind=kind, namespace=namespace, name=name, selector=selector)
        except ObjectError as err:
            raise err.located(f"{kind} {namespace}/{name}") from None
