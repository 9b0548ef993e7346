"""SchedulingGates: keep a pod out of scheduling while it carries ``spec.schedulingGates``.

Mirrors kube-scheduler's ``schedulinggates`` plugin. Its only verdict is at PreEnqueue:
a gated pod waits among the unschedulable pods, never tried, until an update removes its
last gate (``spec.schedulingGates`` can only shrink once a pod exists).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    EventResource,
    PreEnqueuePlugin,
    QueueingHint,
    Status,
)
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, check_no_args, same_pod

NAME = names.SCHEDULING_GATES

#: The PreEnqueue message; upstream formats the gate names as Go prints a []string.
ERR_REASON_GATED = "waiting for scheduling gates: [{gates}]"


class SchedulingGates:
    """Holds back pods that still have scheduling gates."""

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """UnschedulableAndUnresolvable (as upstream) while the pod has gates."""
        if not pod.scheduling_gates:
            return None
        message = ERR_REASON_GATED.format(gates=" ".join(pod.scheduling_gates))
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The pod's own update that removes its last gate."""
        return (
            # Only the gated pod losing its gates can let it in; nothing else in the
            # cluster matters to this plugin.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                is_schedulable_after_pod_change,
            ),
        )


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the updated pod is ``pod`` itself and it has no gates left."""
    _, modified = as_changed(Pod, old, new)
    if not same_pod(modified, pod):
        return QueueingHint.QUEUE_SKIP
    # The event's action already says the gates are gone; checking again keeps the hint
    # right if an event source reports a coarser action.
    if modified.scheduling_gates:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


_pre_enqueue: type[PreEnqueuePlugin] = SchedulingGates
_enqueue_extensions: type[EnqueueExtensions] = SchedulingGates


def new(args: Mapping[str, Any] | None, handle: Handle) -> SchedulingGates:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return SchedulingGates()
