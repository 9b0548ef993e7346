"""NodeUnschedulable: keep pods off cordoned nodes (``spec.unschedulable: true``).

Mirrors kube-scheduler's ``nodeunschedulable`` plugin. A pod that tolerates the
``node.kubernetes.io/unschedulable:NoSchedule`` taint (DaemonSet pods do) may still go to
a cordoned node; no other pod can, and preemption cannot change that.
"""

from __future__ import annotations

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
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.taints import NO_SCHEDULE, Taint, tolerations_tolerate_taint
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, check_no_args, same_pod

NAME = names.NODE_UNSCHEDULABLE

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

#: The taint a cordoned node stands for (``v1.TaintNodeUnschedulable``).
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)
_REJECTED: Final = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)


def tolerates_unschedulable(pod: Pod) -> bool:
    """Whether ``pod`` tolerates ``node.kubernetes.io/unschedulable:NoSchedule``."""
    return tolerations_tolerate_taint(pod.tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Filters out nodes marked unschedulable, unless the pod tolerates that."""

    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable on a cordoned node the pod does not tolerate."""
        if not node_info.node.unschedulable or tolerates_unschedulable(pod):
            return None
        return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` of ``table``."""
        # Cordoned nodes are rare: one count over the column settles most pods.
        if not np.count_nonzero(table.unschedulable) or tolerates_unschedulable(pod):
            return None
        cordoned = table.unschedulable[rows]
        if not np.count_nonzero(cordoned):
            return None
        return NodeVerdicts.reject(cordoned, _REJECTED)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or uncordoned; the pod gaining the toleration."""
        return (
            # A new node may be schedulable, and uncordoning a node is reported as a
            # taint change (spec.unschedulable stands for the unschedulable taint).
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            # The rejected pod may be updated to tolerate the unschedulable taint.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_change,
            ),
        )


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when a schedulable node is added or a node stops being unschedulable."""
    original, modified = as_changed(Node, old, new)
    if modified.unschedulable:
        return QueueingHint.QUEUE_SKIP
    if original is None or original.unschedulable:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when ``pod`` itself now tolerates the unschedulable taint.

    The old tolerations need no look: tolerations can only be added, and a pod that
    already tolerated the taint was not rejected by this plugin.
    """
    _, modified = as_changed(Pod, old, new)
    if same_pod(modified, pod) and tolerates_unschedulable(modified):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_filter: type[FilterPlugin] = NodeUnschedulable
_vector_filter: type[VectorFilterPlugin] = NodeUnschedulable
_enqueue_extensions: type[EnqueueExtensions] = NodeUnschedulable


def new(args: Mapping[str, Any] | None, handle: Handle) -> NodeUnschedulable:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return NodeUnschedulable()
