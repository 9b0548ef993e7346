"""The REST collections the scheduler reads and writes, and how to decode each.

A :class:`Resource` names a collection (group, version, plural, scope) and carries the
function that turns one wire object into what callers get: a compact
:mod:`kubesched.objects` type where one exists (``Pod.from_dict``), the plain dict
otherwise. ``resource.raw`` is the same collection decoded as plain dicts, for callers
that must write back every field (an update of a lossy typed view would drop fields).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Namespace, PodDisruptionBudget, PriorityClass, Workload

__all__ = [
    "BINDINGS",
    "EVENTS",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PODS",
    "POD_DISRUPTION_BUDGETS",
    "PRIORITY_CLASSES",
    "REPLICATION_CONTROLLERS",
    "REPLICA_SETS",
    "SERVICES",
    "STATEFUL_SETS",
    "RawObject",
    "Resource",
]

T = TypeVar("T")
RawObject = dict[str, Any]


def _identity(raw: RawObject) -> RawObject:
    return raw


@dataclass(frozen=True)
class Resource(Generic[T]):
    """One collection and its decoder: ``Resource("", "v1", "pods", "Pod", True, decode)``."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    decode: Callable[[RawObject], T]

    @property
    def raw(self) -> Resource[RawObject]:
        """The same collection, decoded as plain dicts."""
        return Resource(
            self.group, self.version, self.plural, self.kind, self.namespaced, _identity
        )

    def with_decoder(self, decode: Callable[[RawObject], Any]) -> Resource[Any]:
        """The same collection with another decoder (for a custom resource's own type)."""
        return replace(self, decode=decode)

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, ``apps/v1`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        """The URL path: ``/api/v1/namespaces/ns/pods/name/status`` and the like.

        A namespaced resource without ``namespace`` is the all-namespaces collection.
        """
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [base]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name:
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False, Namespace.from_dict)
NODES = Resource("", "v1", "nodes", "Node", False, Node.from_dict)
PODS = Resource("", "v1", "pods", "Pod", True, Pod.from_dict)
BINDINGS = Resource("", "v1", "bindings", "Binding", True, _identity)
EVENTS = Resource("", "v1", "events", "Event", True, _identity)
SERVICES = Resource("", "v1", "services", "Service", True, Workload.from_dict)
REPLICATION_CONTROLLERS = Resource(
    "", "v1", "replicationcontrollers", "ReplicationController", True, Workload.from_dict
)
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True, Workload.from_dict)
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", "StatefulSet", True, Workload.from_dict)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True, _identity)
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, PriorityClass.from_dict
)
POD_DISRUPTION_BUDGETS = Resource(
    "policy",
    "v1",
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    True,
    PodDisruptionBudget.from_dict,
)
