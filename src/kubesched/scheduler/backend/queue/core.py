"""The state of the scheduling queue and the moves between its parts.

``SchedulingQueue`` (``scheduling_queue.py``) is the API the informers and the
scheduling loop use; this base holds activeQ, backoffQ, the unschedulable pods and the
pods in flight, answers where a pod is, and moves pods: into activeQ through PreEnqueue
(gated pods stay out), to backoffQ while a backoff runs, and back on the periodic
flushes (ended backoffs every pop; leftovers every 30 s, as upstream).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping

from kubesched.framework.interface import Code, PodGroupInfo, Status
from kubesched.framework.nominator import Nominator
from kubesched.framework.podgroups import PodGroupTracker, quorum_message
from kubesched.framework.runtime import Framework
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.queue.active import ActiveQueue
from kubesched.scheduler.backend.queue.backoff import BackoffQueue
from kubesched.scheduler.backend.queue.events import (
    BACKOFF_COMPLETE,
    UNSCHEDULABLE_TIMEOUT,
    Strategy,
    requeue_strategy,
)
from kubesched.scheduler.backend.queue.inflight import InFlightPods
from kubesched.scheduler.backend.queue.unschedulable import UnschedulablePods

#: Upstream's DefaultPodMaxInUnschedulablePodsDuration.
DEFAULT_MAX_IN_UNSCHEDULABLE_SECONDS = 300.0
#: How often the unschedulable pods are checked for leftovers (upstream: 30 s).
LEFTOVER_FLUSH_PERIOD = 30.0
ACTIVE, BACKOFF, UNSCHEDULABLE, IN_FLIGHT = "activeQ", "backoffQ", "unschedulable", "inFlight"


class QueueCore:
    """The queues of one scheduler (all its profiles, keyed by schedulerName)."""

    def __init__(
        self,
        frameworks: Mapping[str, Framework],
        *,
        pod_initial_backoff_seconds: float = 1.0,
        pod_max_backoff_seconds: float = 10.0,
        pod_max_in_unschedulable_seconds: float = DEFAULT_MAX_IN_UNSCHEDULABLE_SECONDS,
        pop_from_backoff_q: bool = True,
        clock: Callable[[], float] = time.monotonic,
        nominator: Nominator | None = None,
    ) -> None:
        if not frameworks:
            raise ValueError("a scheduling queue needs at least one profile")
        self.frameworks = dict(frameworks)
        self.clock = clock
        self.max_in_unschedulable = pod_max_in_unschedulable_seconds
        self.pop_from_backoff_q = pop_from_backoff_q
        self.active = ActiveQueue(next(iter(self.frameworks.values())).queue_sort_less)
        self.backoff = BackoffQueue(pod_initial_backoff_seconds, pod_max_backoff_seconds)
        self.unschedulable = UnschedulablePods()
        self.in_flight = InFlightPods()
        # Shared with the profiles' handles when given: preemption reads the nominations
        # the queue records.
        self.nominator = nominator if nominator is not None else Nominator()
        self.scheduling_cycle = 0
        #: Told ``(queue, event label)`` whenever a pod enters a queue
        #: (``scheduler_queue_incoming_pods_total``).
        self.on_incoming: Callable[[str, str], None] | None = None
        self.closed = False
        self._wakeup = asyncio.Event()
        self._last_leftover_flush = clock()
        #: Whether any profile has gangs (a PodGroupPlugin); if not, none of the group
        #: bookkeeping runs.
        self.gangs = any(f.pod_group_plugin is not None for f in self.frameworks.values())
        #: The gangs' pending members (fed here) and placed ones (fed by the cache).
        self.groups = PodGroupTracker(self.group_of)
        #: Told ``(info, status)`` when a gang member is held because its quorum does not
        #: exist yet (the scheduler writes its PodScheduled condition).
        self.on_quorum_gated: Callable[[QueuedPodInfo, Status], None] | None = None

    # --- where pods are -------------------------------------------------------------

    def where(self, key: str) -> str | None:
        """Which queue holds the pod with ``key`` (ACTIVE, ...), or None."""
        if key in self.active:
            return ACTIVE
        if key in self.backoff:
            return BACKOFF
        if key in self.unschedulable:
            return UNSCHEDULABLE
        return IN_FLIGHT if self.in_flight.has_key(key) else None

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued info of a pod waiting in any of the three queues."""
        return self.active.get(key) or self.backoff.get(key) or self.unschedulable.get(key)

    def pending_pods(self) -> Iterator[tuple[QueuedPodInfo, str]]:
        """Every waiting pod with the name of its queue (upstream ``PendingPods``)."""
        for name, queue in (
            (ACTIVE, self.active),
            (BACKOFF, self.backoff),
            (UNSCHEDULABLE, self.unschedulable),
        ):
            for info in queue:
                yield info, name

    def __len__(self) -> int:
        return len(self.active) + len(self.backoff) + len(self.unschedulable)

    def counts(self) -> dict[str, int]:
        """How many pods each queue holds, gated ones apart (scheduler_pending_pods)."""
        gated = self.unschedulable.gated_count()
        return {
            ACTIVE: len(self.active),
            BACKOFF: len(self.backoff),
            UNSCHEDULABLE: len(self.unschedulable) - gated,
            "gated": gated,
        }

    def flush(self) -> None:
        """Run the periodic moves now: ended backoffs, and leftovers every 30 s."""
        self.flush_backoff_completed()
        if self.clock() - self._last_leftover_flush >= LEFTOVER_FLUSH_PERIOD:
            self.flush_unschedulable_leftover()

    def flush_backoff_completed(self) -> None:
        """Move the pods whose backoff has ended to activeQ."""
        for info in self.backoff.pop_completed(self.clock()):
            self._move_to_active(info, BACKOFF_COMPLETE.label)

    def flush_unschedulable_leftover(self) -> None:
        """Requeue pods unschedulable for longer than podMaxInUnschedulablePodsDuration."""
        now = self._last_leftover_flush = self.clock()
        for info in self.unschedulable:
            if now - info.timestamp > self.max_in_unschedulable:
                registered = self.frameworks[info.pod.scheduler_name].events_to_register()
                strategy = requeue_strategy(info, registered, UNSCHEDULABLE_TIMEOUT, None, None)
                self._requeue(info, strategy, UNSCHEDULABLE_TIMEOUT.label)

    # --- gangs -------------------------------------------------------------------------

    def group_of(self, pod: Pod) -> PodGroupInfo | None:
        """The gang of ``pod`` as its profile's PodGroupPlugin says (None: none)."""
        fwk = self.frameworks.get(pod.scheduler_name)
        return fwk.pod_group(pod) if fwk is not None else None

    def _quorum_gate(self, pod: Pod) -> Status | None:
        """A Pending status for a gang member whose quorum does not exist yet."""
        group = self.group_of(pod)
        if group is None or self.groups.has_quorum(group):
            return None
        plugin = self.frameworks[pod.scheduler_name].pod_group_plugin
        message = quorum_message(group, self.groups.existing(group.key))
        return Status(Code.PENDING, (message,), plugin.name if plugin is not None else "")

    def _reconsider_group(self, key: str) -> None:
        """A member of group ``key`` came or changed: once the quorum exists, its
        members held for it go. (Until then they stay held with the count they were
        held with: telling every held member of a 1,000-pod gang about each newcomer
        would cost a million condition writes.)"""
        group = self.groups.group(key)
        if group is None or not self.groups.has_quorum(group):
            return
        for pod in self.groups.pending(key):
            info = self.unschedulable.get(pod.key)
            if info is not None and info.gated and not pod.scheduling_gates:
                self._move_to_active(info, "PodGroupMemberAdd")

    # --- moves -------------------------------------------------------------------------

    def _requeue(self, info: QueuedPodInfo, strategy: Strategy, event: str = "") -> str:
        """Put ``info`` where ``strategy`` says; the name of that queue. ``event``: the
        label of what moved it, for the incoming-pods metric."""
        if strategy is Strategy.SKIP:
            self.unschedulable.add_or_update(info)
            self._incoming(UNSCHEDULABLE, event)
            return UNSCHEDULABLE
        if strategy is Strategy.AFTER_BACKOFF and self.backoff.is_backing_off(info, self.clock()):
            self.unschedulable.delete(info.pod.key)
            self.backoff.add(info)
            self._incoming(BACKOFF, event)
            return BACKOFF
        return ACTIVE if self._move_to_active(info, event) else UNSCHEDULABLE

    def _move_to_active(self, info: QueuedPodInfo, event: str = "") -> bool:
        """Run PreEnqueue; into activeQ if it passes, else held as gated."""
        key = info.pod.key
        status = self.frameworks[info.pod.scheduler_name].run_pre_enqueue_plugins(info.pod)
        group = None
        if self.gangs:
            # Filed again: a pod's group may have appeared since (its PodGroup created).
            group = self.groups.pending_added(info.pod)
        quorum = self._quorum_gate(info.pod) if status is None and group is not None else None
        if quorum is not None:
            status = quorum
        self.backoff.delete(key)
        if status is not None:
            info.gated = True
            info.unschedulable_plugins = frozenset({status.plugin} - {""})
            info.pending_plugins = frozenset()
            self.unschedulable.add_or_update(info)
            self._incoming(UNSCHEDULABLE, event)
            if quorum is not None and self.on_quorum_gated is not None:
                self.on_quorum_gated(info, status)
            return False
        was_gated = info.gated
        info.gated = False
        self.unschedulable.delete(key)
        self.active.add(info)
        self._incoming(ACTIVE, event)
        self._wakeup.set()
        if group is not None and not was_gated:
            # Its quorum exists: siblings held for it may go too.
            self._reconsider_group(group.key)
        return True

    def _incoming(self, queue: str, event: str) -> None:
        if self.on_incoming is not None and event:
            self.on_incoming(queue, event)
