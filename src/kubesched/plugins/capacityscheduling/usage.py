"""What each quota's namespace uses, derived from the snapshot plus the pods in flight.

Upstream's plugin keeps its own ElasticQuotaInfos cache: pod informer events add and
remove assigned pods, Reserve adds the pod being scheduled and Unreserve takes it back.
A counter kept beside the scheduler's cache can drift from it (a failure path that
forgets to Unreserve, an event missed): then a quota leaks forever.

Here the use is derived instead. The cycle's snapshot already holds every assigned pod
and every assumed one (the scheduler, and a group cycle member by member, assumes a pod
on its node before Reserve), so the use of a namespace is the sum of the requests of its
pods in the snapshot, and Reserve has nothing to add: a failure after it forgets the
assumed pod, and the use follows. Only a pod reserved without being assumed (a caller
that reserves against a snapshot it does not change) is kept here, in flight, until
Unreserve, or until a snapshot shows it. So a pod counts once, and a pod that is neither
in the snapshot nor reserved counts nowhere, whatever path its failure took.

Deriving it does not rescan every pod each cycle: each node's share is kept with the
node's generation (bumped by the cache on every pod change) and redone only when it
changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubesched.framework.snapshot import Snapshot
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource
from kubesched.plugins.capacityscheduling.elasticquota import (
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    QuotaSpec,
)

__all__ = ["QuotaUsage"]


@dataclass(slots=True)
class _NodeShare:
    """One node's pods of quota namespaces, at one generation of the node."""

    generation: int
    pods: dict[str, list[Pod]] = field(default_factory=dict)


class QuotaUsage:
    """The pods each quota namespace uses: the snapshot's, plus those in flight."""

    def __init__(self) -> None:
        self._namespaces: frozenset[str] = frozenset()
        self._nodes: dict[str, _NodeShare] = {}
        #: namespace → pod key → pod, over every node (from the node shares).
        self._assigned: dict[str, dict[str, Pod]] = {}
        #: namespace → the sum of the requests of its pods in ``_assigned``.
        self._totals: dict[str, Resource] = {}
        #: The namespaces whose ``_assigned`` dict accounts handed out refer to.
        self._shared: set[str] = set()
        #: Reserved pods not (yet) in the snapshot: pod key → pod.
        self._in_flight: dict[str, Pod] = {}

    # --- Reserve / Unreserve ----------------------------------------------------------

    def reserve(self, pod: Pod) -> None:
        """Count ``pod`` until it is unreserved or shows up in a snapshot."""
        self._in_flight[pod.key] = pod

    def unreserve(self, pod: Pod) -> None:
        """Stop counting ``pod`` as in flight (a snapshot may still hold it: then the
        scheduler's cache decides, by forgetting it or not)."""
        self._in_flight.pop(pod.key, None)

    def in_flight(self) -> list[Pod]:
        """The reserved pods no snapshot has shown yet (for tests and reports)."""
        return list(self._in_flight.values())

    # --- the accounts -----------------------------------------------------------------

    def infos(self, quotas: Iterable[QuotaSpec], snapshot: Snapshot) -> ElasticQuotaInfos:
        """A fresh account per quota, filled with its namespace's pods: those on the
        snapshot's nodes and those in flight. The first quota of a namespace wins, as
        upstream supports one per namespace."""
        infos: dict[str, ElasticQuotaInfo] = {}
        for quota in quotas:
            if quota.namespace not in infos:
                infos[quota.namespace] = ElasticQuotaInfo.of(quota)
        if not infos:
            # No quota, nothing to count: a profile with the plugin but no ElasticQuota
            # pays nothing per cycle.
            self._namespaces = frozenset()
            self._nodes.clear()
            self._assigned.clear()
            self._totals.clear()
            self._shared.clear()
            self._in_flight.clear()
            return ElasticQuotaInfos()
        self._refresh(frozenset(infos), snapshot)
        for namespace, info in infos.items():
            assigned = self._assigned.get(namespace)
            if assigned:
                # Shared, not copied: the next refresh copies a namespace's pods before
                # it changes them (see _writable).
                info.base = assigned
                info.used = self._totals[namespace].copy()
                self._shared.add(namespace)
        for pod in self._in_flight.values():
            account = infos.get(pod.namespace)
            if account is not None:
                account.add_pod(pod)  # no-op when the snapshot holds it already
        return ElasticQuotaInfos(infos)

    def _refresh(self, namespaces: frozenset[str], snapshot: Snapshot) -> None:
        if namespaces != self._namespaces:
            self._namespaces = namespaces
            self._nodes.clear()
            self._assigned.clear()
            self._totals.clear()
            self._shared.clear()
        seen: set[str] = set()
        for node_info in snapshot.list():
            name = node_info.name
            seen.add(name)
            share = self._nodes.get(name)
            if share is not None and share.generation == node_info.generation:
                continue
            if share is not None:
                self._forget(share)
            share = _NodeShare(node_info.generation)
            for info in node_info.pods:
                pod = info.pod
                if pod.namespace in namespaces:
                    share.pods.setdefault(pod.namespace, []).append(pod)
            self._remember(share)
            self._nodes[name] = share
        for name in [n for n in self._nodes if n not in seen]:
            self._forget(self._nodes.pop(name))
        if self._in_flight:
            # A pod in flight that a snapshot holds counts there from now on; one whose
            # quota is gone counts nowhere.
            for key, pod in list(self._in_flight.items()):
                if pod.namespace not in namespaces or key in self._assigned.get(pod.namespace, {}):
                    del self._in_flight[key]

    def _remember(self, share: _NodeShare) -> None:
        for namespace, pods in share.pods.items():
            assigned = self._writable(namespace)
            total = self._totals.setdefault(namespace, Resource())
            for pod in pods:
                old = assigned.get(pod.key)
                if old is not None:
                    total.sub(old.requests)  # met on another node first: count it once
                assigned[pod.key] = pod
                total.add(pod.requests)

    def _forget(self, share: _NodeShare) -> None:
        for namespace, pods in share.pods.items():
            if namespace not in self._assigned:
                continue
            assigned = self._writable(namespace)
            total = self._totals[namespace]
            for pod in pods:
                if assigned.get(pod.key) is pod:
                    del assigned[pod.key]
                    total.sub(pod.requests)

    def _writable(self, namespace: str) -> dict[str, Pod]:
        """``namespace``'s pods, copied first if an account handed out shares them."""
        assigned = self._assigned.get(namespace)
        if assigned is None:
            assigned = self._assigned[namespace] = {}
        elif namespace in self._shared:
            assigned = self._assigned[namespace] = dict(assigned)
        self._shared.discard(namespace)
        return assigned

    def used(self, namespace: str) -> Resource:
        """The requests of ``namespace``'s pods as of the last :meth:`infos` (for tests
        and reports)."""
        total = Resource()
        keys = set()
        for pod in self._assigned.get(namespace, {}).values():
            keys.add(pod.key)
            total.add(pod.requests)
        for pod in self._in_flight.values():
            if pod.namespace == namespace and pod.key not in keys:
                total.add(pod.requests)
        return total
