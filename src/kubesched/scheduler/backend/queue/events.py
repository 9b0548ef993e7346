"""Cluster events the queue itself raises, and how a pod update is classified.

Mirrors upstream's ``pkg/scheduler/framework/events.go`` (the queue's own events and
``PodSchedulingPropertiesChange``) and the decision half of ``isPodWorthRequeuing`` in
``scheduling_queue.go``: given a rejected pod and one event, should it be retried now,
after its backoff, or not at all.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence

from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource

#: A pod seen for the first time (not an event that moves other pods).
POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD, "PodAdd")
#: A scheduling attempt failed; the pod goes back to the queue.
SCHEDULE_ATTEMPT_FAILURE = ClusterEvent(
    EventResource.WILDCARD, ActionType.ALL, "ScheduleAttemptFailure"
)
#: A pod's backoff ended and it moves to activeQ.
BACKOFF_COMPLETE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "BackoffComplete")
#: A pod stayed longer than podMaxInUnschedulablePodsDuration among unschedulable pods.
UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
#: Someone asked for every pod to be retried (upstream's ForceActivate).
FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL, "ForceActivate")
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)


def event_label(event: ClusterEvent) -> str:
    """Upstream's ``ClusterEvent.Label()``: the event's own label, or its resource and
    action (``NodeAdd``, ``AssignedPodDelete``, ``NodeUpdateNodeTaint``...)."""
    if event.label:
        return event.label
    names = [flag.name for flag in ActionType if flag in event.action and flag.name]
    action = "|".join(n.title().replace("_", "") for n in names if n not in ("UPDATE", "ALL"))
    return f"{event.resource.value}{action}"


class Strategy(enum.IntEnum):
    """Where a pod goes after an event (upstream ``queueingStrategy``); larger wins."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


def _scaled_down(old: Resource, new: Resource) -> bool:
    if new.milli_cpu < old.milli_cpu or new.memory < old.memory:
        return True
    if new.ephemeral_storage < old.ephemeral_storage:
        return True
    return any(new.scalar.get(name, 0) < value for name, value in old.scalar.items())


def pod_update_events(old: Pod, new: Pod) -> list[ClusterEvent]:
    """The events a pod update stands for (upstream ``PodSchedulingPropertiesChange``),
    on AssignedPod or UnscheduledPod by ``new``'s node; the generic update when none
    applies."""
    resource = EventResource.ASSIGNED_POD if new.node_name else EventResource.UNSCHEDULED_POD
    action = ActionType(0)
    if old.labels != new.labels:
        action |= ActionType.UPDATE_POD_LABEL
    if _scaled_down(old.requests, new.requests):
        action |= ActionType.UPDATE_POD_SCALE_DOWN
    if old.scheduling_gates and not new.scheduling_gates:
        action |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if old.tolerations != new.tolerations:
        action |= ActionType.UPDATE_POD_TOLERATION
    if old.resource_claim_statuses != new.resource_claim_statuses:
        action |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    flags = (
        ActionType.UPDATE_POD_LABEL,
        ActionType.UPDATE_POD_SCALE_DOWN,
        ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        ActionType.UPDATE_POD_TOLERATION,
        ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM,
    )
    events = [ClusterEvent(resource, flag) for flag in flags if action & flag]
    return events or [ClusterEvent(resource, ActionType.UPDATE)]


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """The events a node update stands for (upstream ``NodeSchedulingPropertiesChange``);
    none when nothing the scheduler reads changed."""
    actions = []
    if old.unschedulable and not new.unschedulable:
        # Upstream reports a node turning schedulable as a taint update.
        actions.append(ActionType.UPDATE_NODE_TAINT)
    if old.allocatable != new.allocatable:
        actions.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if old.labels != new.labels:
        actions.append(ActionType.UPDATE_NODE_LABEL)
    if old.taints != new.taints and ActionType.UPDATE_NODE_TAINT not in actions:
        actions.append(ActionType.UPDATE_NODE_TAINT)
    return [ClusterEvent(EventResource.NODE, action) for action in actions]


def requeue_strategy(
    pinfo: QueuedPodInfo,
    registered: Mapping[str, Sequence[ClusterEventWithHint]],
    event: ClusterEvent,
    old: object,
    new: object,
) -> Strategy:
    """Whether ``event`` may make ``pinfo``'s pod schedulable (``isPodWorthRequeuing``).

    A pod rejected by no plugin (an error) and wildcard events (timeout, force-activate)
    always requeue after backoff. Otherwise only the plugins that rejected the pod count,
    through the events they registered and their hints; a hint that raises means Queue.
    A Queue from a plugin that answered Pending skips the backoff.
    """
    rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
    if not rejectors or event.resource is EventResource.WILDCARD:
        return Strategy.AFTER_BACKOFF
    strategy = Strategy.SKIP
    for plugin in sorted(rejectors):
        for registration in registered.get(plugin, ()):
            if not registration.event.matches(event):
                continue
            if not _hint_queues(registration, pinfo.pod, old, new):
                continue
            if plugin in pinfo.pending_plugins:
                return Strategy.IMMEDIATELY
            strategy = Strategy.AFTER_BACKOFF
    return strategy


def _hint_queues(registration: ClusterEventWithHint, pod: Pod, old: object, new: object) -> bool:
    if registration.hint is None:
        return True
    try:
        return registration.hint(pod, old, new) is QueueingHint.QUEUE
    except Exception:
        return True  # upstream: a failing hint queues the pod
