"""VolumeRestrictions: a volume that cannot be shared keeps a second pod off its node.

Mirrors kube-scheduler's ``volumerestrictions`` plugin. Two restrictions:

- In-tree disks mounted by pods already on the node: the same GCE PD unless every mount
  is read-only, the same AWS EBS volume at all, the same iSCSI IQN or RBD image (sharing
  a monitor, pool and image) unless every mount is read-only — "node(s) had no available
  disk".
- ReadWriteOncePod claims: a claim of that access mode used by any scheduled pod keeps
  the pod off every node; preemption may help by evicting that pod.

A claim that does not exist is UnschedulableAndUnresolvable
(``persistentvolumeclaim "x" not found``): nothing but its creation helps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.pod import Pod
from kubesched.objects.storage import (
    DiskSource,
    ISCSISource,
    PersistentVolumeClaim,
    RBDSource,
    Volume,
)
from kubesched.objects.storage.persistentvolume import READ_WRITE_ONCE_POD
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, as_deleted, check_no_args, not_found

NAME = names.VOLUME_RESTRICTIONS

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

_SKIP: Final = Status.skip()
_DISK_CONFLICT: Final = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
_RWOP_CONFLICT: Final = Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


@dataclass(slots=True)
class _PreFilterState:
    """The pod's ReadWriteOncePod claims, and how many scheduled pods use them."""

    read_write_once_pod_claims: frozenset[str]
    conflicting_pvc_ref_count: int

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.read_write_once_pod_claims, self.conflicting_pvc_ref_count)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        conflicts = sum(
            1
            for v in pod.volumes
            if v.kind == "persistentVolumeClaim" and v.claim_name in self.read_write_once_pod_claims
        )
        self.conflicting_pvc_ref_count += multiplier * conflicts


def needs_restrictions_check(volume: Volume) -> bool:
    """Whether the volume is a disk whose sharing is restricted (GCE PD, AWS EBS, RBD,
    iSCSI)."""
    source = volume.source
    if isinstance(source, DiskSource):
        return volume.kind in ("gcePersistentDisk", "awsElasticBlockStore")
    return isinstance(source, RBDSource | ISCSISource)


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Whether ``volume`` (of the pod being scheduled) conflicts with a volume of ``pod``."""
    source = volume.source
    for existing in pod.volumes:
        other = existing.source
        if other is None or existing.kind != volume.kind:
            continue
        if isinstance(source, DiskSource) and isinstance(other, DiskSource):
            if source.disk_id != other.disk_id:
                continue
            if volume.kind == "gcePersistentDisk":
                # Only read-only mounts may share a GCE disk.
                if not (source.read_only and other.read_only):
                    return True
            elif volume.kind == "awsElasticBlockStore":
                return True
        elif isinstance(source, ISCSISource) and isinstance(other, ISCSISource):
            # One IQN is one volume: only read-only mounts may share it.
            if source.iqn == other.iqn and not (source.read_only and other.read_only):
                return True
        elif isinstance(source, RBDSource) and isinstance(other, RBDSource):
            # The same image: a shared monitor, the same pool and image name.
            same = (
                bool(set(source.monitors) & set(other.monitors))
                and source.pool == other.pool
                and source.image == other.image
            )
            if same and not (source.read_only and other.read_only):
                return True
    return False


def satisfy_volume_conflicts(pod: Pod, pods: Sequence[PodInfo]) -> bool:
    """Whether none of the pod's restricted disks is mounted in conflict by ``pods``."""
    for volume in pod.volumes:
        if not needs_restrictions_check(volume):
            continue
        for info in pods:
            if is_volume_conflict(volume, info.pod):
                return False
    return True


class VolumeRestrictions:
    """Filters out nodes where a disk the pod mounts is already mounted in conflict, and
    every node while a ReadWriteOncePod claim of the pod is in use."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Look the pod's claims up; Skip when neither restriction can apply."""
        volumes = pod.volumes
        if not volumes:
            return None, _SKIP
        needs_check = any(needs_restrictions_check(v) for v in volumes)
        claims: set[str] = set()
        cluster = self._handle.cluster
        for volume in volumes:
            if volume.kind != "persistentVolumeClaim":
                continue
            claim = cluster.persistent_volume_claim(pod.namespace, volume.claim_name)
            if claim is None:
                return None, Status.unresolvable(
                    not_found("persistentvolumeclaim", volume.claim_name)
                )
            if READ_WRITE_ONCE_POD in claim.access_modes:
                claims.add(claim.name)
        snapshot = self._handle.snapshot
        conflicts = sum(
            1 for name in claims if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}")
        )
        if not needs_check and conflicts == 0:
            return None, _SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(frozenset(claims), conflicts))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod / RemovePod keep the ReadWriteOncePod count right for preemption."""
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        data = _state(state)
        if isinstance(data, Status):
            return data
        data.update_with_pod(pod_to_add.pod, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        data = _state(state)
        if isinstance(data, Status):
            return data
        data.update_with_pod(pod_to_remove.pod, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable on a disk conflict with a pod of the node, or while a
        ReadWriteOncePod claim of the pod is in use anywhere."""
        if not satisfy_volume_conflicts(pod, node_info.pods):
            return _DISK_CONFLICT
        data = _state(state)
        if isinstance(data, Status):
            return data
        if data.conflicting_pvc_ref_count > 0:
            return _RWOP_CONFLICT
        return None

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows``: the claim verdict is the same on every
        node; disk conflicts are possible only on nodes holding pods with disks, and
        those few are checked one by one."""
        data = _state(state)
        if isinstance(data, Status):
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (data,))
        codes = np.zeros(len(rows), dtype=np.int8)
        if any(needs_restrictions_check(v) for v in pod.volumes):
            busy = np.flatnonzero(table.disk_pods[rows])
            if len(busy):
                infos = _node_infos(self._handle, table)
                for i, row in zip(busy.tolist(), rows[busy].tolist(), strict=True):
                    if not satisfy_volume_conflicts(pod, infos[row].pods):
                        codes[i] = 1
        if data.conflicting_pvc_ref_count > 0:
            codes[codes == 0] = 2
        if not np.count_nonzero(codes):
            return None
        return NodeVerdicts(codes, (_DISK_CONFLICT, _RWOP_CONFLICT))

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A pod deleted; a node added; a claim created."""
        return (
            # Deleting a pod frees the disks it mounted and the claims it used. Pod updates
            # are ignored: spec.volumes is immutable.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                is_schedulable_after_pod_deleted,
            ),
            # A new node has no disk mounted yet (no hint: every new node may help).
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            # The pod's claim was missing; its creation lets its access modes be read.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_persistent_volume_claim_added,
            ),
        )


def _state(state: CycleState) -> _PreFilterState | Status:
    data = state.get(PRE_FILTER_STATE_KEY)
    if not isinstance(data, _PreFilterState):
        return Status.error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
    return data


def _node_infos(handle: Handle, table: NodeTable) -> Sequence[NodeInfo]:
    snapshot = handle.snapshot
    if snapshot.table is not table:
        raise LookupError("the node table is not the handle's snapshot table")
    return snapshot.list()


def is_schedulable_after_persistent_volume_claim_added(
    pod: Pod, old: object, new: object
) -> QueueingHint:
    """Queue when the claim created is one the pod uses."""
    _, claim = as_changed(PersistentVolumeClaim, old, new)
    if claim.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    for volume in pod.volumes:
        if volume.kind == "persistentVolumeClaim" and volume.claim_name == claim.name:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod (of the same namespace) mounted a disk in conflict with
    the pod's, or used one of its claims (the claim may be ReadWriteOncePod; its access
    mode is not looked up, as upstream does not)."""
    deleted = as_deleted(Pod, old)
    if deleted.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    if not satisfy_volume_conflicts(pod, (PodInfo(deleted),)):
        return QueueingHint.QUEUE
    claims = {v.claim_name for v in pod.volumes if v.kind == "persistentVolumeClaim"}
    for volume in deleted.volumes:
        if volume.kind == "persistentVolumeClaim" and volume.claim_name in claims:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_pre_filter: type[PreFilterPlugin] = VolumeRestrictions
_filter: type[FilterPlugin] = VolumeRestrictions
_vector_filter: type[VectorFilterPlugin] = VolumeRestrictions
_enqueue_extensions: type[EnqueueExtensions] = VolumeRestrictions
_extensions: type[PreFilterExtensions] = VolumeRestrictions


def new(args: Mapping[str, Any] | None, handle: Handle) -> VolumeRestrictions:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return VolumeRestrictions(handle)
