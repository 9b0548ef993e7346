"""What a plugin may reach besides its arguments: the handle.

Plugins never do I/O. The handle gives them the cycle's snapshot, read-only listers for
the other cluster objects they need, the pods nominated to nodes by preemption, and a
client whose implementation (simulator, live scheduler, extender) does the writes. Besides
the writes of the default plugins (bind, delete a victim, nominate), the client makes the
blocking API calls of :mod:`kubesched.framework.apiclient`, for PreBind plugins.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.framework.apiclient import (
    APIClient,
    APIResource,
    PatchType,
    RawObject,
    Unavailable,
)
from kubesched.framework.nominator import Nominator
from kubesched.framework.types import PodInfo
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup
from kubesched.objects.policy import Namespace, PodDisruptionBudget, Workload
from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageObject,
    VolumeAttachment,
)
from kubesched.objects.storage.changes import ChangeLog, change_key

#: The resource.k8s.io objects a :class:`StaticClusterLister` holds.
DRAObject = ResourceClaim | ResourceSlice | DeviceClass

__all__ = [
    "ClusterClient",
    "ClusterLister",
    "DRAObject",
    "Handle",
    "NoClient",
    "Nominator",
    "PodNominator",
    "StaticClusterLister",
]

if TYPE_CHECKING:
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import Status
    from kubesched.framework.snapshot import Snapshot
    from kubesched.framework.types import NodeInfo
    from kubesched.framework.waiting_pods import WaitingPod


class ClusterLister(Protocol):
    """Read-only access to cluster objects other than pods and nodes.

    The storage accessors answer from the lister's current state: a name not found is
    None (the plugins turn a missing claim into upstream's "not found" status)."""

    def pdbs(self) -> Sequence[PodDisruptionBudget]: ...

    def namespace_labels(self, name: str) -> Mapping[str, str] | None: ...

    def workloads(self, namespace: str) -> Sequence[Workload]: ...

    def persistent_volume(self, name: str) -> PersistentVolume | None: ...

    def persistent_volumes(self) -> Sequence[PersistentVolume]: ...

    def persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None: ...

    def persistent_volume_claims(self) -> Sequence[PersistentVolumeClaim]: ...

    def storage_class(self, name: str) -> StorageClass | None: ...

    def storage_classes(self) -> Sequence[StorageClass]: ...

    def csi_node(self, name: str) -> CSINode | None: ...

    def csi_driver(self, name: str) -> CSIDriver | None: ...

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]: ...

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        """The VolumeAttachments of node ``node_name``."""
        ...

    def storage_version(self) -> int:
        """A number that changes whenever any storage object above changes, so that a
        plugin may keep what it derived from them until it does."""
        ...

    def storage_changes(self, since: int) -> Sequence[str] | None:
        """The keys of the storage objects changed after version ``since``
        (``kubesched.objects.storage.changes.change_key``), or None when they are no
        longer known (then everything may have changed)."""
        ...

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The ResourceClaim ``namespace/name``, if known."""
        ...

    def resource_claims(self) -> Sequence[ResourceClaim]:
        """Every ResourceClaim (the DynamicResources plugin counts allocated devices)."""
        ...

    def device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, if known."""
        ...

    def resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice."""
        ...

    def dra_version(self) -> int:
        """A number that changes whenever a ResourceSlice or DeviceClass changes, so that
        a plugin may keep what it derived from them (an index of slices by node)."""
        ...

    def resource_claims_version(self) -> int:
        """A number that changes whenever a ResourceClaim changes, so that a plugin may
        keep what it derived from them (the devices they hold)."""
        ...

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """The PodGroup ``namespace/name`` (scheduling.x-k8s.io), if known; None also
        when the cluster does not serve PodGroups."""
        ...

    def pod_groups(self) -> Sequence[PodGroup]:
        """Every PodGroup."""
        ...

    def elastic_quotas(self) -> Sequence[ElasticQuota]:
        """Every ElasticQuota (scheduler-plugins allows one per namespace; when a
        namespace has several, quota plugins take the first, as upstream does)."""
        ...


class ClusterClient(APIClient, Protocol):
    """The writes the default plugins make: bind a pod, delete a preemption victim; and
    the blocking API calls of :class:`~kubesched.framework.apiclient.APIClient`.

    Called from the scheduling cycle (preemption), ``bind``, ``delete_pod`` and
    ``set_nominated_node_name`` may be deferred by the live scheduler until the
    synchronous framework call returns; called from PreBind, they block like the rest.
    """

    def bind(self, pod: Pod, node_name: str) -> None:
        """Bind ``pod`` to ``node_name``; raise on failure."""
        ...

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        """Delete ``pod`` (a preemption victim); raise on failure.

        **reason**: why, as upstream's DisruptionTarget condition words it.
        **preemptor**: the pod the victim makes room for (for the victim's condition and
        its ``Preempted`` event), when the deletion is a preemption.
        """
        ...

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Record ``status.nominatedNodeName`` ("" clears it)."""
        ...


class PodNominator(Protocol):
    """The pods that preemption nominated to nodes, not bound yet."""

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]: ...

    def nominated_nodes(self) -> Iterable[str]:
        """The nodes that have nominated pods (so callers need not ask every node)."""
        ...

    def add_nominated_pod(self, pod: Pod, node_name: str) -> None: ...

    def delete_nominated_pod(self, pod: Pod) -> None: ...


class Handle(Protocol):
    """The framework as its plugins see it (upstream ``framework.Handle``)."""

    @property
    def snapshot(self) -> Snapshot: ...

    @property
    def cluster(self) -> ClusterLister: ...

    @property
    def client(self) -> ClusterClient: ...

    @property
    def nominator(self) -> PodNominator: ...

    @property
    def rng(self) -> random.Random:
        """The profile's random source (seeded for reproducible runs)."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod with ``uid`` if a Permit plugin holds it (pods without a UID are
        keyed by namespace/name)."""
        ...

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], object]) -> None:
        """Call ``callback`` for every pod held at Permit (a gang plugin allows them)."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod with ``uid`` if it is held at Permit; whether it was."""
        ...


class StaticClusterLister:
    """A ClusterLister over fixed lists (the simulator, tests).

    The storage objects can change during a simulation (a claim gets bound, a volume
    provisioned): :meth:`put` and :meth:`delete` replace them by key."""

    def __init__(
        self,
        pdbs: Iterable[PodDisruptionBudget] = (),
        namespaces: Iterable[Namespace] = (),
        workloads: Iterable[Workload] = (),
        storage: Iterable[StorageObject] = (),
        dra: Iterable[DRAObject] = (),
        pod_groups: Iterable[PodGroup] = (),
        elastic_quotas: Iterable[ElasticQuota] = (),
    ) -> None:
        self._pdbs = list(pdbs)
        self._namespaces = {ns.name: ns.labels for ns in namespaces}
        self._workloads: dict[str, list[Workload]] = {}
        for w in workloads:
            self._workloads.setdefault(w.namespace, []).append(w)
        self._pvs: dict[str, PersistentVolume] = {}
        self._pvcs: dict[str, PersistentVolumeClaim] = {}
        self._classes: dict[str, StorageClass] = {}
        self._csi_nodes: dict[str, CSINode] = {}
        self._csi_drivers: dict[str, CSIDriver] = {}
        self._capacities: dict[str, CSIStorageCapacity] = {}
        self._attachments: dict[str, VolumeAttachment] = {}
        self._attachments_by_node: dict[str, list[VolumeAttachment]] | None = None
        self._log = ChangeLog()
        self._claims: dict[str, ResourceClaim] = {}
        self._slices: dict[str, ResourceSlice] = {}
        self._device_classes: dict[str, DeviceClass] = {}
        self._dra_version = 0
        self._claims_version = 0
        for obj in storage:
            self.put(obj)
        for dra_obj in dra:
            self.put_dra(dra_obj)
        self._pod_groups = {g.key: g for g in pod_groups}
        self._elastic_quotas = {q.key: q for q in elastic_quotas}

    def _store(self, obj: StorageObject) -> tuple[dict[str, Any], str]:
        match obj:
            case PersistentVolume():
                return self._pvs, obj.name
            case PersistentVolumeClaim():
                return self._pvcs, obj.key
            case StorageClass():
                return self._classes, obj.name
            case CSINode():
                return self._csi_nodes, obj.name
            case CSIDriver():
                return self._csi_drivers, obj.name
            case CSIStorageCapacity():
                return self._capacities, f"{obj.namespace}/{obj.name}"
            case VolumeAttachment():
                return self._attachments, obj.name
        raise TypeError(f"not a storage object: {obj!r}")

    def put(self, obj: StorageObject) -> None:
        """Add ``obj``, or replace the object of its kind and name."""
        store, key = self._store(obj)
        old = store.get(key)
        if old != obj:
            store[key] = obj
            self._changed(obj, old)

    def delete(self, obj: StorageObject) -> None:
        """Remove the object of ``obj``'s kind and name, if present."""
        store, key = self._store(obj)
        old = store.pop(key, None)
        if old is not None:
            self._changed(old)

    def _changed(self, obj: StorageObject, old: StorageObject | None = None) -> None:
        keys = {change_key(obj)}
        if old is not None:
            keys.add(change_key(old))  # a VolumeAttachment moved to another node
        self._log.record(*sorted(keys))
        self._attachments_by_node = None

    def storage_version(self) -> int:
        return self._log.version

    def storage_changes(self, since: int) -> Sequence[str] | None:
        return self._log.since(since)

    def _dra_store(self, obj: DRAObject) -> tuple[dict[str, Any], str]:
        match obj:
            case ResourceClaim():
                return self._claims, obj.key
            case ResourceSlice():
                return self._slices, obj.name
            case DeviceClass():
                return self._device_classes, obj.name
        raise TypeError(f"not a resource.k8s.io object: {obj!r}")

    def put_dra(self, obj: DRAObject) -> None:
        """Add a ResourceClaim, ResourceSlice or DeviceClass, or replace the object of its
        kind and name."""
        store, key = self._dra_store(obj)
        if store.get(key) is not obj:
            store[key] = obj
            if isinstance(obj, ResourceClaim):
                self._claims_version += 1
            else:
                self._dra_version += 1

    def delete_dra(self, obj: DRAObject) -> None:
        """Remove the object of ``obj``'s kind and name, if present."""
        store, key = self._dra_store(obj)
        if store.pop(key, None) is not None:
            if isinstance(obj, ResourceClaim):
                self._claims_version += 1
            else:
                self._dra_version += 1

    def resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self._claims.get(f"{namespace}/{name}")

    def resource_claims(self) -> Sequence[ResourceClaim]:
        return list(self._claims.values())

    def device_class(self, name: str) -> DeviceClass | None:
        return self._device_classes.get(name)

    def resource_slices(self) -> Sequence[ResourceSlice]:
        return list(self._slices.values())

    def dra_version(self) -> int:
        return self._dra_version

    def resource_claims_version(self) -> int:
        return self._claims_version

    def put_pod_group(self, group: PodGroup) -> None:
        """Add ``group``, or replace the PodGroup of its namespace and name."""
        self._pod_groups[group.key] = group

    def delete_pod_group(self, group: PodGroup) -> None:
        """Remove the PodGroup of ``group``'s namespace and name, if present."""
        self._pod_groups.pop(group.key, None)

    def put_elastic_quota(self, quota: ElasticQuota) -> None:
        """Add ``quota``, or replace the ElasticQuota of its namespace and name."""
        self._elastic_quotas[quota.key] = quota

    def delete_elastic_quota(self, quota: ElasticQuota) -> None:
        """Remove the ElasticQuota of ``quota``'s namespace and name, if present."""
        self._elastic_quotas.pop(quota.key, None)

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self._pod_groups.get(f"{namespace}/{name}")

    def pod_groups(self) -> Sequence[PodGroup]:
        return list(self._pod_groups.values())

    def elastic_quotas(self) -> Sequence[ElasticQuota]:
        return list(self._elastic_quotas.values())

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self._pdbs

    def namespace_labels(self, name: str) -> Mapping[str, str] | None:
        return self._namespaces.get(name)

    def workloads(self, namespace: str) -> Sequence[Workload]:
        return self._workloads.get(namespace, ())

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        return self._pvs.get(name)

    def persistent_volumes(self) -> Sequence[PersistentVolume]:
        return list(self._pvs.values())

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._pvcs.get(f"{namespace}/{name}")

    def persistent_volume_claims(self) -> Sequence[PersistentVolumeClaim]:
        return list(self._pvcs.values())

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(name)

    def storage_classes(self) -> Sequence[StorageClass]:
        return list(self._classes.values())

    def csi_node(self, name: str) -> CSINode | None:
        return self._csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._csi_drivers.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return list(self._capacities.values())

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        by_node = self._attachments_by_node
        if by_node is None:
            # Indexed on first use after a change: NodeVolumeLimits asks for every node.
            by_node = self._attachments_by_node = {}
            for attachment in self._attachments.values():
                by_node.setdefault(attachment.node_name, []).append(attachment)
        return by_node.get(node_name, [])


class NoClient:
    """A ClusterClient for read-only uses (``explain``, the extender server): every write
    is refused, and so are the API calls (Unavailable)."""

    def bind(self, pod: Pod, node_name: str) -> None:
        raise RuntimeError("this handle cannot bind pods")

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        raise RuntimeError("this handle cannot delete pods")

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        return None

    def get(self, resource: APIResource, name: str, namespace: str = "") -> RawObject:
        raise _read_only(resource)

    def create(self, resource: APIResource, body: RawObject) -> RawObject:
        raise _read_only(resource)

    def update(self, resource: APIResource, body: RawObject) -> RawObject:
        raise _read_only(resource)

    def update_status(self, resource: APIResource, body: RawObject) -> RawObject:
        raise _read_only(resource)

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> RawObject:
        raise _read_only(resource)

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        return bool(condition())


def _read_only(resource: APIResource) -> Unavailable:
    return Unavailable(f"this handle has no API server to reach {resource}")
