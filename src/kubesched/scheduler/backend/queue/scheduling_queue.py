"""The scheduling queue: activeQ, backoffQ and the unschedulable pods, as upstream's
``pkg/scheduler/backend/queue/scheduling_queue.go`` (release-1.34, queueing hints on).

A pod enters through ``add`` (PreEnqueue may hold it back as gated), leaves activeQ by
``pop``, and comes back rejected through ``add_unschedulable_if_not_present``: to the
unschedulable pods, unless an event seen while it was in flight may already have helped.
Cluster events (``move_all_to_active_or_backoff``) move the pods whose rejecting plugins
registered them and whose hints say Queue: to backoffQ while their backoff runs, else to
activeQ. Pods stuck among the unschedulable longer than five minutes are flushed back.

Pure logic with an injectable clock (seconds); one asyncio task may await ``pop`` while
others call the rest. Several profiles share one queue: pods carry their schedulerName,
and the first profile's QueueSort orders activeQ, as upstream requires them to agree.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework.interface import ClusterEvent
from kubesched.framework.runtime import Framework
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.queue.core import (
    ACTIVE,
    BACKOFF,
    IN_FLIGHT,
    UNSCHEDULABLE,
    QueueCore,
)
from kubesched.scheduler.backend.queue.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    FORCE_ACTIVATE,
    POD_ADD,
    SCHEDULE_ATTEMPT_FAILURE,
    Strategy,
    event_label,
    pod_update_events,
    requeue_strategy,
)

__all__ = ["ACTIVE", "BACKOFF", "IN_FLIGHT", "UNSCHEDULABLE", "SchedulingQueue"]


class SchedulingQueue(QueueCore):
    """Upstream's ``PriorityQueue`` for one or more profiles (keyed by schedulerName)."""

    @classmethod
    def from_config(
        cls,
        config: KubeSchedulerConfiguration,
        frameworks: Mapping[str, Framework],
        **options: object,
    ) -> SchedulingQueue:
        """A queue with the configuration's podInitialBackoffSeconds / podMaxBackoffSeconds."""
        return cls(
            frameworks,
            pod_initial_backoff_seconds=config.pod_initial_backoff_seconds,
            pod_max_backoff_seconds=config.pod_max_backoff_seconds,
            **options,  # type: ignore[arg-type]
        )

    # --- informer events for unscheduled pods --------------------------------------

    def add(self, pod: Pod) -> bool:
        """A new pending pod: to activeQ, or held back by PreEnqueue. A pod already
        known is treated as an update. False if no profile schedules it."""
        if pod.scheduler_name not in self.frameworks:
            return False
        known = self.get(pod.key)
        flight = self.in_flight.get(pod)
        if known is not None or (flight is not None and not flight.deleted):
            self.update(known.pod if known is not None else pod, pod)
            return True
        info = QueuedPodInfo(pod, timestamp=self.clock())
        # A new member lets the members held for their quorum go, if it completes it.
        self._move_to_active(info, POD_ADD.label)
        self.nominator.add_nominated_pod(pod)
        return True

    def update(self, old: Pod, new: Pod) -> None:
        """A pending pod changed: it keeps its place but uses the new spec; if it was
        unschedulable and the change may help it, it moves (upstream ``Update``)."""
        if new.is_assigned or new.scheduler_name not in self.frameworks:
            self.delete(new)
            return
        group = self.groups.pending_added(new) if self.gangs else None
        self._update(old, new)
        if group is not None:
            # A member's scheduling gates gone, or a pod relabelled into the group.
            self._reconsider_group(group.key)

    def _update(self, old: Pod, new: Pod) -> None:
        key = new.key
        events = pod_update_events(old, new) if old != new else []
        flight = self.in_flight.get(new)
        if flight is not None and not flight.deleted:
            # Replayed if the pod comes back rejected; it then uses this version.
            flight.pod = new
            for event in events:
                self.in_flight.record(event, old, new)
            return
        for queue in (self.active, self.backoff):
            info = queue.get(key)
            if info is not None:
                info.pod = new
                queue.update(info)
                self.nominator.update_nominated_pod(old, new)
                return
        info = self.unschedulable.get(key)
        if info is None:
            self.add(new)
            return
        info.pod = new
        self.nominator.update_nominated_pod(old, new)
        registered = self.frameworks[new.scheduler_name].events_to_register()
        for event in events:
            strategy = requeue_strategy(info, registered, event, old, new)
            if self._requeue(info, strategy, event_label(event)) != UNSCHEDULABLE:
                break

    def delete(self, pod: Pod) -> None:
        """The pod is gone (or bound elsewhere): it leaves every queue and nomination.
        A pod in flight is marked so that it is not requeued when its cycle ends."""
        key = pod.key
        if self.gangs:
            self.groups.pending_removed(pod)
        self.nominator.delete_nominated_pod(pod)
        self.active.delete(key)
        self.backoff.delete(key)
        self.unschedulable.delete(key)
        flight = self.in_flight.get(pod)
        if flight is not None:
            flight.deleted = True

    # --- the scheduling cycle's side -----------------------------------------------

    def pop_nowait(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when none is ready. The pod is in flight
        until ``done`` or ``add_unschedulable_if_not_present``."""
        self.flush()
        info = self.active.pop()
        if info is None and self.pop_from_backoff_q:
            # SchedulerPopFromBackoffQ: an idle scheduler need not wait out backoffs,
            # except those of pods that failed by an error.
            head = self.backoff.peek()
            if (
                head is not None
                and (head.unschedulable_plugins or head.pending_plugins)
                # A gang's backoff (podGroupBackoffSeconds) is waited out all the same.
                and head.backoff_until <= self.clock()
            ):
                info = self.backoff.pop()
        if info is None:
            return None
        self.scheduling_cycle += 1
        self._start(info)
        return info

    def _start(self, info: QueuedPodInfo) -> None:
        """``info`` leaves the queue for a scheduling cycle: it is in flight."""
        info.attempts += 1
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock()
        info.unschedulable_plugins = frozenset()
        info.pending_plugins = frozenset()
        self.in_flight.start(info.pod)

    def pop_group(self, key: str, popped: Pod) -> list[QueuedPodInfo]:
        """The pending members of gang ``key`` other than ``popped`` (just popped), taken
        out of activeQ, backoffQ and the unschedulable pods together for one group
        cycle; each is in flight until ``done`` or requeued, as a popped pod. Members
        held by PreEnqueue (scheduling gates) stay."""
        taken: list[QueuedPodInfo] = []
        for pod in self.groups.pending(key):
            if pod.key == popped.key or pod.scheduler_name != popped.scheduler_name:
                # (A pod of another profile naming the same group is that profile's.)
                continue
            info = self.active.get(pod.key) or self.backoff.get(pod.key)
            if info is None:
                info = self.unschedulable.get(pod.key)
                if info is None or info.gated:
                    continue
            self.active.delete(pod.key)
            self.backoff.delete(pod.key)
            self.unschedulable.delete(pod.key)
            self._start(info)
            taken.append(info)
        return taken

    def return_to_active(self, info: QueuedPodInfo) -> None:
        """Put back a member that a group cycle took but did not need (the quorum was
        placed without it): it goes on as an ordinary pod, without a backoff."""
        flight = self.in_flight.done(info.pod)
        if flight is not None and flight.deleted:
            return
        if flight is not None:
            info.pod = flight.pod
        info.timestamp = self.clock()
        self._move_to_active(info, FORCE_ACTIVATE.label)

    async def pop(self) -> QueuedPodInfo | None:
        """Wait for the next pod to schedule; None once the queue is closed."""
        while not self.closed:
            info = self.pop_nowait()
            if info is not None:
                return info
            self._wakeup.clear()
            timeout = 1.0
            expiry = self.backoff.next_expiry()
            if expiry is not None:
                timeout = min(timeout, max(expiry - self.clock(), 0.0))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), timeout)
        return None

    def done(self, pod: Pod) -> None:
        """The pod's scheduling (and binding) ended; forget it in flight."""
        self.in_flight.done(pod)

    def add_unschedulable_if_not_present(
        self, info: QueuedPodInfo, nominated_node: str | None = None
    ) -> str | None:
        """Requeue a pod whose attempt failed, with the plugins that rejected it in
        ``info``. Events seen during its cycle are replayed first; a pod rejected by no
        plugin (an error) goes to backoffQ. ``nominated_node`` as in
        ``Nominator.add_nominated_pod``. Returns the queue it went to (None: deleted)."""
        key = info.pod.key
        flight = self.in_flight.get(info.pod)
        if flight is not None and flight.deleted:
            self.in_flight.done(info.pod)
            return None
        if self.get(key) is not None:
            self.in_flight.done(info.pod)
            raise ValueError(f'pod "{key}" is already present in the scheduling queue')
        if flight is not None:
            info.pod = flight.pod
        info.timestamp = self.clock()
        strategy = Strategy.SKIP
        if not (info.unschedulable_plugins or info.pending_plugins):
            strategy = Strategy.AFTER_BACKOFF
        else:
            registered = self.frameworks[info.pod.scheduler_name].events_to_register()
            for event, old, new in self.in_flight.events_for(info.pod):
                strategy = max(strategy, requeue_strategy(info, registered, event, old, new))
        self.in_flight.done(info.pod)
        queue = self._requeue(info, strategy, SCHEDULE_ATTEMPT_FAILURE.label)
        self.nominator.add_nominated_pod(info.pod, nominated_node)
        return queue

    # --- cluster events ----------------------------------------------------------------

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object = None,
        new: object = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> int:
        """Move the unschedulable pods that ``event`` may help; how many moved.

        Recorded for pods in flight, to be replayed if they come back rejected.
        """
        self.in_flight.record(event, old, new)
        moved = 0
        for info in self.unschedulable:
            if pre_check is not None and not pre_check(info.pod):
                continue
            registered = self.frameworks[info.pod.scheduler_name].events_to_register()
            strategy = requeue_strategy(info, registered, event, old, new)
            if strategy is Strategy.SKIP:
                continue
            if self._requeue(info, strategy, event_label(event)) != UNSCHEDULABLE:
                moved += 1
        return moved

    def assigned_pod_added(self, pod: Pod) -> None:
        """A pod was bound (by anyone): it may satisfy affinity or spreading."""
        self.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod) -> None:
        """A bound pod changed (labels, a scale-down, ...)."""
        for event in pod_update_events(old, new):
            self.move_all_to_active_or_backoff(event, old, new)

    def assigned_pod_deleted(self, pod: Pod) -> None:
        """A bound pod went away and freed its place."""
        self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these waiting pods to activeQ now, backoff or not (upstream
        ``Activate``; pods in flight are not affected, unlike upstream)."""
        for pod in pods:
            info = self.backoff.get(pod.key) or self.unschedulable.get(pod.key)
            if info is not None:
                self._move_to_active(info, FORCE_ACTIVATE.label)

    def close(self) -> None:
        """Stop: ``pop`` returns None from now on."""
        self.closed = True
        self._wakeup.set()
