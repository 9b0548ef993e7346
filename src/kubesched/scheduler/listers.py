"""The framework's ``ClusterLister`` over informers: PDBs, namespaces and the workloads
(Services, ReplicaSets, StatefulSets, ReplicationControllers) that PodTopologySpread's
default constraints and preemption read, the storage objects of the volume plugins and
the resource.k8s.io objects of DynamicResources, and scheduler-plugins' PodGroups and
ElasticQuotas (gang and quota scheduling).
Every answer is the informers' current store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.kube import Client, Informer
from kubesched.kube.dralisters import DRAListers
from kubesched.kube.resources import (
    NAMESPACES,
    POD_DISRUPTION_BUDGETS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
)
from kubesched.kube.schedulinglisters import SchedulingListers
from kubesched.kube.storagelisters import StorageListers
from kubesched.objects.policy import Namespace, PodDisruptionBudget, Workload

__all__ = ["InformerClusterLister"]


class InformerClusterLister(StorageListers, DRAListers, SchedulingListers):
    """A ``ClusterLister`` reading the stores of its own informers (start them first)."""

    def __init__(self, client: Client) -> None:
        StorageListers.__init__(self, client)
        DRAListers.__init__(self, client)
        SchedulingListers.__init__(self, client)
        self.pdb_informer: Informer[PodDisruptionBudget] = Informer(client, POD_DISRUPTION_BUDGETS)
        self.namespace_informer: Informer[Namespace] = Informer(client, NAMESPACES)
        self.workload_informers: list[Informer[Workload]] = [
            Informer(client, resource)
            for resource in (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)
        ]

    @property
    def informers(self) -> list[Informer[Any]]:
        """Every informer this lister reads, to start, sync and stop with the others."""
        return [
            self.pdb_informer,
            self.namespace_informer,
            *self.workload_informers,
            *self.storage_informers,
            *self.dra_informers,
            *self.scheduling_informers,
        ]

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        """Every PodDisruptionBudget."""
        return self.pdb_informer.list()

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        """The labels of namespace ``name``; None if it is not known."""
        ns = self.namespace_informer.get(name)
        return ns.labels if ns is not None else None

    def workloads(self, namespace: str) -> Sequence[Workload]:
        """The workloads of ``namespace`` (all four kinds)."""
        return [
            workload
            for informer in self.workload_informers
            for workload in informer.list()
            if workload.namespace == namespace
        ]
