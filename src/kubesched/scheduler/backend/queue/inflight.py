"""The pods being scheduled right now, and the cluster events seen meanwhile.

Upstream's ``inFlightPods`` / ``inFlightEvents``: an event that happens while a pod is
in its scheduling cycle cannot move it (it is in no queue), yet may be the very event
that makes it schedulable. So events are recorded while any pod is in flight, and when a
pod comes back rejected, the events since it was popped are replayed against it.
Events older than the oldest pod still in flight are dropped.

Pods in flight are known by UID, as upstream: a pod deleted and created again under the
same name while its first incarnation is being scheduled is another pod.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass

from kubesched.framework.interface import ClusterEvent
from kubesched.objects.pod import Pod


def flight_id(pod: Pod) -> str:
    """How a pod is known in flight: its UID, or its key when it has none (files)."""
    return pod.uid or pod.key


@dataclass(slots=True)
class InFlight:
    """A popped pod: when it left the queue, its latest version, whether it was deleted."""

    seq: int
    pod: Pod
    deleted: bool = False


class InFlightPods:
    """Pods in flight keyed by ``flight_id``, and the events recorded since the oldest."""

    def __init__(self) -> None:
        self._seq = itertools.count()
        self._pods: dict[str, InFlight] = {}
        self._events: deque[tuple[int, ClusterEvent, object, object]] = deque()
        #: (seq, key) of the pods in flight, oldest on top; stale entries skipped lazily.
        self._oldest: list[tuple[int, str]] = []

    def __len__(self) -> int:
        return len(self._pods)

    def get(self, pod: Pod) -> InFlight | None:
        """The in-flight record of ``pod`` (by UID)."""
        return self._pods.get(flight_id(pod))

    def has_key(self, key: str) -> bool:
        """Whether a live (not deleted) pod named ``key`` is in flight."""
        return any(r.pod.key == key and not r.deleted for r in self._pods.values())

    def start(self, pod: Pod) -> None:
        """``pod`` was popped; events from now on concern it."""
        seq = next(self._seq)
        self._pods[flight_id(pod)] = InFlight(seq, pod)
        heapq.heappush(self._oldest, (seq, flight_id(pod)))

    def record(self, event: ClusterEvent, old: object, new: object) -> bool:
        """Remember an event if any pod is in flight; whether it was recorded."""
        if not self._pods:
            return False
        self._events.append((next(self._seq), event, old, new))
        return True

    def events_for(self, pod: Pod) -> list[tuple[ClusterEvent, object, object]]:
        """The events recorded since ``pod`` was popped."""
        record = self.get(pod)
        if record is None:
            return []
        newer = []
        for seq, event, old, new in reversed(self._events):
            if seq < record.seq:
                break
            newer.append((event, old, new))
        newer.reverse()
        return newer

    def done(self, pod: Pod) -> InFlight | None:
        """The pod's cycle ended; drop it and the events no pod in flight needs."""
        record = self._pods.pop(flight_id(pod), None)
        heap = self._oldest
        while heap and (heap[0][1] not in self._pods or self._pods[heap[0][1]].seq != heap[0][0]):
            heapq.heappop(heap)
        oldest = heap[0][0] if heap else None
        while self._events and (oldest is None or self._events[0][0] < oldest):
            self._events.popleft()
        return record

    def event_count(self) -> int:
        """How many events are kept (for tests and metrics)."""
        return len(self._events)
