"""NodePorts: a pod fits a node only if the host ports it asks for are free there.

Mirrors kube-scheduler's ``nodeports`` plugin. The ports counted are those with a
``hostPort`` of the regular containers and of the restartable init containers
(sidecars), which run alongside them; ordinary init containers are not counted. A port
bound to ``0.0.0.0`` (or no address) conflicts with the same protocol and port on every
address. The rejection is Unschedulable: evicting the pod holding the port would free it.
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
from kubesched.framework.types import HostPortInfo, NodeInfo
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.pod import ContainerPort, Pod
from kubesched.plugins import names
from kubesched.plugins.helper import as_deleted, check_no_args

NAME = names.NODE_PORTS

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

_REJECTED: Final = Status.unschedulable(ERR_REASON)


@dataclass(frozen=True, slots=True)
class _PreFilterState:
    """The host ports the pod wants."""

    ports: tuple[ContainerPort, ...]

    def clone(self) -> _PreFilterState:
        return self  # other pods coming and going do not change it


def fits_ports(ports: Sequence[ContainerPort], used: HostPortInfo) -> bool:
    """Whether none of ``ports`` collides with the ``used`` host ports."""
    for port in ports:
        if used.check_conflict(port.host_ip, port.protocol, port.host_port):
            return False
    return True


class NodePorts:
    """Filters out nodes where a host port the pod wants is taken."""

    name = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        #: Gives the vector Filter the NodeInfos (their used ports) behind the table rows.
        self._handle = handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Collect the pod's host ports; Skip (no Filter) when it has none."""
        ports = pod.host_ports
        if not ports:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on the other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when a wanted host port is in use on the node."""
        data = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if fits_ports(data.ports, node_info.used_ports):
            return None
        return Status.unschedulable(ERR_REASON)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` of ``table``: only nodes with a host port
        in use can conflict, and those (few) are checked one by one as ``filter`` does."""
        data = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            status = Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (status,))
        if not data.ports or not np.count_nonzero(table.host_ports):
            return None
        busy = np.flatnonzero(table.host_ports[rows])
        if not len(busy):
            return None
        infos = self._node_infos(table)
        codes = np.zeros(len(rows), dtype=np.int8)
        for i, row in zip(busy.tolist(), rows[busy].tolist(), strict=True):
            if not fits_ports(data.ports, infos[row].used_ports):
                codes[i] = 1
        if not np.count_nonzero(codes):
            return None
        return NodeVerdicts(codes, (_REJECTED,))

    def _node_infos(self, table: NodeTable) -> Sequence[NodeInfo]:
        snapshot = None if self._handle is None else self._handle.snapshot
        if snapshot is None or snapshot.table is not table:
            # Without the snapshot behind the table, rows cannot be mapped to used ports.
            raise LookupError("the node table is not the handle's snapshot table")
        return snapshot.list()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A pod using the port deleted; a node added."""
        return (
            # Deleting a pod that held one of the wanted ports frees it. Pod updates are
            # ignored: container ports are immutable.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                is_schedulable_after_pod_change,
            ),
            # A new node has all its ports free, so the event always helps and needs no
            # hint (as upstream; node updates never free a port).
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        )


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod was on (or nominated to) a node and held a host port
    that ``pod`` wants."""
    deleted = as_deleted(Pod, old)
    if not deleted.node_name and not deleted.nominated_node_name:
        return QueueingHint.QUEUE_SKIP
    used = HostPortInfo()
    for port in deleted.host_ports:
        used.add(port.host_ip, port.protocol, port.host_port)
    if not len(used) or fits_ports(pod.host_ports, used):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


_pre_filter: type[PreFilterPlugin] = NodePorts
_filter: type[FilterPlugin] = NodePorts
_vector_filter: type[VectorFilterPlugin] = NodePorts
_enqueue_extensions: type[EnqueueExtensions] = NodePorts


def new(args: Mapping[str, Any] | None, handle: Handle) -> NodePorts:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return NodePorts(handle)
