"""The extender's own view of the cluster, kept by ``kube`` informers.

kube-scheduler sends a nodeCacheCapable extender only node names, and sends no extender
any pod but the one being scheduled. With cluster access the server therefore keeps its
own copy of what the plugins read: nodes, the pods bound to them (InterPodAffinity,
PodTopologySpread and NodeResourcesFit count them), and the PDBs, namespaces,
workloads, storage, resource.k8s.io objects, PodGroups and ElasticQuotas of the
framework's ``ClusterLister``.

The snapshot over that copy is built once and then kept current: pod events add and
remove pods on their node in place (a bind is the common event, and rebuilding 1,000
nodes for it would cost every request after it), node events drop it, to be rebuilt on
the next request. Informer handlers and requests both run on the event loop and the
plugins never await, so a request always sees one consistent state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.snapshot import Snapshot
from kubesched.kube import Client, Informer
from kubesched.kube.dralisters import DRAListers
from kubesched.kube.resources import (
    NAMESPACES,
    NODES,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
)
from kubesched.kube.schedulinglisters import SchedulingListers
from kubesched.kube.storagelisters import StorageListers
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Namespace, PodDisruptionBudget, Workload

__all__ = ["ClusterCache"]


def _counted(pod: Pod) -> bool:
    """Whether ``pod`` takes room on a node: bound and not finished (as the scheduler's
    cache counts pods)."""
    return bool(pod.node_name) and not pod.is_terminal


class ClusterCache(StorageListers, DRAListers, SchedulingListers):
    """Nodes, their pods, and the other objects plugins read; also a ``ClusterLister``.

    ``start()`` the informers, then ``synced`` tells when each has listed once (the
    server's readiness). Stop with ``stop()``.
    """

    def __init__(self, client: Client) -> None:
        StorageListers.__init__(self, client)
        DRAListers.__init__(self, client)
        SchedulingListers.__init__(self, client)
        self.node_informer: Informer[Node] = Informer(client, NODES)
        self.pod_informer: Informer[Pod] = Informer(client, PODS)
        self.pdb_informer: Informer[PodDisruptionBudget] = Informer(client, POD_DISRUPTION_BUDGETS)
        self.namespace_informer: Informer[Namespace] = Informer(client, NAMESPACES)
        self.workload_informers: list[Informer[Workload]] = [
            Informer(client, resource)
            for resource in (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
        ]
        self._snapshot: Snapshot | None = None
        #: How often the snapshot was built from scratch, and how often one was built
        #: around a request's nodes (``snapshot_with``); for tests and metrics.
        self.rebuilds = 0
        self.merges = 0
        self.node_informer.add_handler(self._node_changed, self._node_updated, self._node_changed)
        self.pod_informer.add_handler(self._pod_added, self._pod_updated, self._pod_deleted)

    @property
    def informers(self) -> list[Informer[Any]]:
        """Every informer of the cache."""
        return [
            self.node_informer,
            self.pod_informer,
            self.pdb_informer,
            self.namespace_informer,
            *self.workload_informers,
            *self.storage_informers,
            *self.dra_informers,
            *self.scheduling_informers,
        ]

    # --- running ----------------------------------------------------------------------

    def start(self) -> None:
        """Start every informer in the running loop (they sync in the background)."""
        for informer in self.informers:
            informer.start()

    async def stop(self) -> None:
        """Stop every informer."""
        for informer in self.informers:
            await informer.stop()

    @property
    def synced(self) -> bool:
        """Whether every informer has applied its first list."""
        return all(informer.has_synced.is_set() for informer in self.informers)

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        """Wait until ``synced``."""
        waits = [informer.has_synced.wait() for informer in self.informers]
        await asyncio.wait_for(asyncio.gather(*waits), timeout)

    # --- reading ----------------------------------------------------------------------

    def node(self, name: str) -> Node | None:
        """The cached node ``name``, if any."""
        return self.node_informer.get(name)

    def snapshot(self) -> Snapshot:
        """Every cached node with its pods (kept current; do not mutate its node infos)."""
        if self._snapshot is None:
            self.rebuilds += 1
            self._snapshot = Snapshot.from_objects(
                self.node_informer.list(),
                (p for p in self.pod_informer.list() if _counted(p)),
                columnar=True,
            )
        return self._snapshot

    def snapshot_with(self, nodes: Sequence[Node]) -> Snapshot:
        """A new snapshot where ``nodes`` (a request's, which kube-scheduler read more
        recently) replace the cached nodes of the same name, beside the other cached
        nodes, with every cached pod: plugins that count pods across the cluster
        (spreading, affinity) see the whole of it, not only the candidates."""
        self.merges += 1
        given = {node.name for node in nodes}
        everything = [*nodes, *(n for n in self.node_informer.list() if n.name not in given)]
        pods = (p for p in self.pod_informer.list() if _counted(p))
        return Snapshot.from_objects(everything, pods, columnar=True)

    def pods_on(self, node_name: str) -> list[Pod]:
        """The counted pods bound to ``node_name``."""
        info = self.snapshot().find(node_name)
        return [p.pod for p in info.pods] if info is not None else []

    # --- ClusterLister ----------------------------------------------------------------

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        """Every PodDisruptionBudget."""
        return self.pdb_informer.list()

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of namespace ``name``; None if it is not known."""
        namespace = self.namespace_informer.get(name)
        return namespace.labels if namespace is not None else None

    def workloads(self, namespace: str) -> Sequence[Workload]:
        """The Services, ReplicaSets, StatefulSets and ReplicationControllers of
        ``namespace``."""
        return [
            workload
            for informer in self.workload_informers
            for workload in informer.list()
            if workload.namespace == namespace
        ]

    # --- keeping the snapshot current -------------------------------------------------

    def _node_changed(self, node: Node) -> None:
        self._snapshot = None

    def _node_updated(self, old: Node, new: Node) -> None:
        self._snapshot = None

    def _pod_added(self, pod: Pod) -> None:
        snapshot = self._snapshot
        if snapshot is not None and _counted(pod) and snapshot.find(pod.node_name) is not None:
            snapshot.add_pod(pod)

    def _pod_deleted(self, pod: Pod) -> None:
        if self._snapshot is not None and pod.node_name:
            self._snapshot.remove_pod(pod)

    def _pod_updated(self, old: Pod, new: Pod) -> None:
        self._pod_deleted(old)
        self._pod_added(new)
