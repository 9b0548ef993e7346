"""A gang held at Permit: the design examples/gang.py had before the group cycle.

Kept for the tests of Permit's Wait (tests/scheduler/test_scheduler_permit.py): each
member that gets a node is held at Permit (Wait) until the member completing the quorum
allows the others; a timeout rejects a member and its Unreserve rejects the rest. This
is the design that lets interleaved gangs deadlock (scheduler-plugins #114): gangs use
the framework's group cycle now (framework/groupcycle.py); Permit's Wait stays a
framework feature that plugins may use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.objects.pod import Pod

NAME = "Gang"

#: The label naming a pod's group, and the one giving the group's quorum.
GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
MIN_AVAILABLE_LABEL = "pod-group.scheduling.sigs.k8s.io/min-available"

#: How long a member is held waiting for the rest of its group, by default (seconds;
#: Coscheduling's ``permitWaitingTimeSeconds`` default).
DEFAULT_TIMEOUT = 60.0


def group_of(pod: Pod) -> tuple[str, int] | None:
    """The pod's group and quorum, or None for a pod outside any gang."""
    name = pod.labels.get(GROUP_LABEL, "")
    if not name:
        return None
    raw = pod.labels.get(MIN_AVAILABLE_LABEL, "1")
    try:
        quorum = int(raw)
    except ValueError:
        quorum = 1  # a malformed quorum must not hold the pod forever
    return f"{pod.namespace}/{name}", max(1, quorum)


class Gang:
    """Holds a group's members at Permit until ``min-available`` of them have a node."""

    name = NAME

    def __init__(self, handle: Handle, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.handle = handle
        self.timeout = timeout

    def _members(self, group: str) -> tuple[set[str], list[WaitingPod]]:
        """The group's pods that have a node (bound or assumed), and those held here."""
        placed: set[str] = set()
        for info in self.handle.snapshot.list():
            for pi in info.pods:
                member = group_of(pi.pod)
                if member is not None and member[0] == group:
                    placed.add(pi.pod.key)
        held: list[WaitingPod] = []

        def collect(waiting: WaitingPod) -> None:
            member = group_of(waiting.pod)
            if member is not None and member[0] == group:
                held.append(waiting)

        self.handle.iterate_over_waiting_pods(collect)
        placed.update(w.pod.key for w in held)
        return placed, held

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        """Let the pod through if its group has its quorum with it; else hold it."""
        member = group_of(pod)
        if member is None:
            return None, 0.0
        group, quorum = member
        placed, held = self._members(group)
        placed.add(pod.key)
        if len(placed) < quorum:
            return Status(Code.WAIT, (f"waiting for pod group {group}",)), self.timeout
        for waiting in held:
            waiting.allow(NAME)
        return None, 0.0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """One member failed (timed out, rejected, binding failed): the whole group
        gives its places back."""
        member = group_of(pod)
        if member is None:
            return
        _, held = self._members(member[0])
        for waiting in held:
            if waiting.pod.key != pod.key:
                waiting.reject(NAME, f"rejection in Unreserve of pod group {member[0]}")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A rejected member may succeed when another pod of its group shows up."""

        def same_group(pod: Pod, old: object, new: object) -> QueueingHint:
            mine, theirs = group_of(pod), group_of(new) if isinstance(new, Pod) else None
            if mine is not None and theirs is not None and mine[0] == theirs[0]:
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP

        return [ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), same_group)]


def new(args: Mapping[str, Any], handle: Handle) -> Gang:
    """Factory: ``timeoutSeconds`` (default 60) bounds how long a member is held."""
    timeout = args.get("timeoutSeconds", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ArgsError(
            [FieldError.invalid("timeoutSeconds", timeout, "must be a positive number")]
        )
    return Gang(handle, float(timeout))
