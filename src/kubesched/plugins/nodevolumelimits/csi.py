"""NodeVolumeLimits: a node takes no more CSI volumes than its drivers can attach.

Mirrors kube-scheduler's ``nodevolumelimits`` plugin (``CSILimits``, release-1.34). A
CSINode reports, per driver, how many volumes the node can attach
(``spec.drivers[].allocatable.count``). The volumes counted on a node are those of its
pods (claims bound to CSI volumes, claims not bound yet under their class's provisioner,
in-tree disks the node migrated to CSI) and those VolumeAttachments still hold; a volume
shared by pods counts once. A node without a CSINode, or whose drivers report no count,
has no limit. The rejection is Unschedulable ("node(s) exceed max volume count"):
evicting a pod frees its volumes. A claim that does not exist is
UnschedulableAndUnresolvable.

DEVIATION: only CSINode counts are read, not the ``attachable-volumes-*`` allocatable
of the Node object (gone upstream); the random handle prefix of unbound claims is a
uuid.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
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
from kubesched.framework.types import NodeInfo
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.pod import Pod
from kubesched.objects.storage import CSINode, PersistentVolumeClaim, VolumeAttachment
from kubesched.objects.storage.sources import DiskSource
from kubesched.objects.storage.translation import csi_driver_of_plugin
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, as_deleted, check_no_args
from kubesched.plugins.nodevolumelimits.vectorized import NodeAttachments
from kubesched.plugins.nodevolumelimits.volumes import (
    attachable_volumes,
    attachment_volumes,
    counts_volumes,
    volume_limits,
)

NAME = names.NODE_VOLUME_LIMITS

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

_SKIP: Final = Status.skip()
_EXCEEDED: Final = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


class CSILimits:
    """Filters out nodes where the pod's new CSI volumes would pass a driver's attach
    limit."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        #: Gives the handles of unbound claims a prefix no real volume handle has.
        self.random_prefix = uuid.uuid4().hex
        self._attachments = NodeAttachments()

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip (no Filter) when no volume of the pod can count against a limit."""
        if pod.volumes and counts_volumes(pod):
            return None, None
        return None, _SKIP

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on the other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when a driver's attached volumes plus the pod's new ones would
        pass the node's limit for it."""
        if not pod.volumes:
            return None
        cluster = self._handle.cluster
        node = node_info.node
        csi_node = cluster.csi_node(node.name)
        new: dict[str, str] = {}
        status = attachable_volumes(pod, csi_node, cluster, True, self.random_prefix, new)
        if status is not None:
            return status
        if not new:
            return None
        limits = volume_limits(csi_node)
        if not limits:
            return None
        attached: dict[str, str] = {}
        for info in node_info.pods:
            status = attachable_volumes(
                info.pod, csi_node, cluster, False, self.random_prefix, attached
            )
            if status is not None:
                return status
        counts: Counter[str] = Counter()
        for unique, driver in attached.items():
            new.pop(unique, None)  # a volume already attached for another pod
            counts[driver] += 1
        for unique, driver in attachment_volumes(node.name, cluster).items():
            if unique not in attached:
                counts[driver] += 1
        for driver, count in Counter(new.values()).items():
            limit = limits.get(driver)
            if limit is not None and counts[driver] + count > limit:
                return _EXCEEDED
        return None

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows``, over per-node attach counts that are
        recomputed only for nodes whose volume pods changed (or all of them when a
        storage object did)."""
        if not pod.volumes:
            return None
        snapshot = self._handle.snapshot
        if snapshot.table is not table:
            raise LookupError("the node table is not the handle's snapshot table")
        return self._attachments.filter(
            pod, table, rows, snapshot.list(), self._handle.cluster, self.random_prefix
        )

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A CSINode added or its limits raised; a pod with volumes deleted; the pod's
        claim created; a VolumeAttachment of one of its volumes deleted."""
        return (
            # A new CSINode may report room (no hint: any may).
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            # A driver's allocatable count raised, or no longer reported.
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE),
                is_schedulable_after_csi_node_updated,
            ),
            # A deleted pod's volumes no longer count on its node.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                is_schedulable_after_pod_deleted,
            ),
            # The pod's claim was missing.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                is_schedulable_after_pvc_added,
            ),
            # A volume finished detaching.
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                self.is_schedulable_after_volume_attachment_deleted,
            ),
        )

    def is_schedulable_after_volume_attachment_deleted(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """Queue when the detached volume is one of the pod's claims' volumes, or of the
        CSI driver an inline disk of the pod migrates to."""
        attachment = as_deleted(VolumeAttachment, old)
        cluster = self._handle.cluster
        for volume in pod.volumes:
            if volume.kind in ("persistentVolumeClaim", "ephemeral"):
                claim = cluster.persistent_volume_claim(
                    pod.namespace, volume.claim_name_for(pod.name)
                )
                if (
                    claim is not None
                    and claim.volume_name
                    and claim.volume_name == attachment.persistent_volume_name
                ):
                    return QueueingHint.QUEUE
            elif (
                isinstance(volume.source, DiskSource)
                and csi_driver_of_plugin(volume.source.plugin) == attachment.attacher
            ):
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod was on a node and had a volume that counts."""
    deleted = as_deleted(Pod, old)
    if not deleted.volumes or not deleted.node_name:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if counts_volumes(deleted) else QueueingHint.QUEUE_SKIP


def is_schedulable_after_pvc_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the claim created is one the pod uses (ephemeral ones included)."""
    _, claim = as_changed(PersistentVolumeClaim, old, new)
    if claim.namespace != pod.namespace:
        return QueueingHint.QUEUE_SKIP
    for volume in pod.volumes:
        if (
            volume.kind in ("persistentVolumeClaim", "ephemeral")
            and volume.claim_name_for(pod.name) == claim.name
        ):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_csi_node_updated(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when a driver's limit went up, or stopped being reported."""
    before, after = as_changed(CSINode, old, new)
    if before is None:
        return QueueingHint.QUEUE
    old_limits, new_limits = volume_limits(before), volume_limits(after)
    for driver, limit in old_limits.items():
        raised = new_limits.get(driver)
        if raised is None or raised > limit:
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_pre_filter: type[PreFilterPlugin] = CSILimits
_filter: type[FilterPlugin] = CSILimits
_vector_filter: type[VectorFilterPlugin] = CSILimits
_enqueue_extensions: type[EnqueueExtensions] = CSILimits


def new(args: Mapping[str, Any] | None, handle: Handle) -> CSILimits:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return CSILimits(handle)
