"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

Mirrors kube-scheduler's ``nodename`` plugin. A pod without ``spec.nodeName`` fits every
node. No preemption can make another node match, so the rejection is unresolvable.
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
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, check_no_args

NAME = names.NODE_NAME

ERR_REASON = "node(s) didn't match the requested node name"
_REJECTED: Final = Status.unresolvable(ERR_REASON)


def fits(pod: Pod, node_name: str) -> bool:
    """Whether ``pod`` may run on the node called ``node_name``."""
    return not pod.node_name or pod.node_name == node_name


class NodeName:
    """Filters out every node but the one the pod names."""

    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable on a node other than ``spec.nodeName``."""
        if fits(pod, node_info.node.name):
            return None
        return Status.unresolvable(ERR_REASON)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` of ``table``."""
        if not pod.node_name:
            return None
        row = table.rows.get(pod.node_name)
        if row is None:
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (_REJECTED,))
        others = rows != row
        if not np.count_nonzero(others):
            return None
        return NodeVerdicts.reject(others, _REJECTED)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The named node being added."""
        return (
            # Node names never change, so only a new node can be the one the pod names.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD),
                is_schedulable_after_node_change,
            ),
        )


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the added node is the one the pod names."""
    _, added = as_changed(Node, old, new)
    return QueueingHint.QUEUE if fits(pod, added.name) else QueueingHint.QUEUE_SKIP


_filter: type[FilterPlugin] = NodeName
_vector_filter: type[VectorFilterPlugin] = NodeName
_enqueue_extensions: type[EnqueueExtensions] = NodeName


def new(args: Mapping[str, Any] | None, handle: Handle) -> NodeName:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return NodeName()
