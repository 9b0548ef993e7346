"""backoffQ: pods that failed an attempt and wait out their backoff before retrying.

Mirrors upstream's ``backend/queue/backoff_queue.go``: a pod's backoff is
podInitialBackoffSeconds, doubled for every further attempt, capped at
podMaxBackoffSeconds, counted from the moment it went back to the queue; the heap is
ordered by when each backoff ends (ties by arrival).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator

from kubesched.framework.types import QueuedPodInfo


def backoff_duration(attempts: int, initial: float, maximum: float) -> float:
    """Upstream's ``calculateBackoffDuration``: 0 before any attempt, then ``initial``
    doubled per further attempt, never above ``maximum``."""
    if attempts <= 0:
        return 0.0
    duration = initial
    for _ in range(1, attempts):
        if duration > maximum - duration:
            return maximum
        duration += duration
    return min(duration, maximum)


class BackoffQueue:
    """Pods keyed by ``pod.key``, in order of backoff expiry."""

    def __init__(self, initial_seconds: float, max_seconds: float) -> None:
        self.initial = initial_seconds
        self.maximum = max_seconds
        self._heap: list[tuple[float, int, str]] = []
        self._infos: dict[str, tuple[QueuedPodInfo, int]] = {}
        self._seq = itertools.count()

    def backoff_time(self, info: QueuedPodInfo) -> float:
        """When ``info``'s backoff ends (its last requeue time plus its backoff, or its
        gang's backoff when that ends later)."""
        own = info.timestamp + backoff_duration(info.attempts, self.initial, self.maximum)
        return max(own, info.backoff_until)

    def is_backing_off(self, info: QueuedPodInfo, now: float) -> bool:
        """Whether ``info`` must still wait (gated pods never back off, as upstream)."""
        return not info.gated and self.backoff_time(info) > now

    def __len__(self) -> int:
        return len(self._infos)

    def __contains__(self, key: object) -> bool:
        return key in self._infos

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return (info for info, _ in self._infos.values())

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued info of the pod with ``key``, if it is here."""
        found = self._infos.get(key)
        return found[0] if found is not None else None

    def add(self, info: QueuedPodInfo) -> None:
        """Add (or re-add) ``info``, ordered by its backoff time."""
        seq = next(self._seq)
        self._infos[info.pod.key] = (info, seq)
        heapq.heappush(self._heap, (self.backoff_time(info), seq, info.pod.key))
        if len(self._heap) > 2 * len(self._infos) + 64:
            self._heap = [(t, s, k) for t, s, k in self._heap if self._live(s, k)]
            heapq.heapify(self._heap)

    def update(self, info: QueuedPodInfo) -> None:
        """Replace the stored info of the same pod, keeping its backoff time."""
        found = self._infos.get(info.pod.key)
        if found is not None:
            self._infos[info.pod.key] = (info, found[1])

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove the pod with ``key``; its info, or None if it was not here."""
        found = self._infos.pop(key, None)
        return found[0] if found is not None else None

    def _live(self, seq: int, key: str) -> bool:
        found = self._infos.get(key)
        return found is not None and found[1] == seq

    def _clean_top(self) -> None:
        while self._heap and not self._live(self._heap[0][1], self._heap[0][2]):
            heapq.heappop(self._heap)

    def peek(self) -> QueuedPodInfo | None:
        """The pod whose backoff ends first."""
        self._clean_top()
        return self._infos[self._heap[0][2]][0] if self._heap else None

    def next_expiry(self) -> float | None:
        """When the first backoff ends, or None when empty."""
        self._clean_top()
        return self._heap[0][0] if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        """Remove and return the pod whose backoff ends first."""
        self._clean_top()
        if not self._heap:
            return None
        _, _, key = heapq.heappop(self._heap)
        return self._infos.pop(key)[0]

    def pop_completed(self, now: float) -> list[QueuedPodInfo]:
        """Remove and return every pod whose backoff has ended by ``now``."""
        done: list[QueuedPodInfo] = []
        while True:
            expiry = self.next_expiry()
            if expiry is None or expiry > now:
                return done
            info = self.pop()
            assert info is not None
            done.append(info)
