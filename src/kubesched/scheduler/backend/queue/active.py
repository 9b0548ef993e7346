"""activeQ: the pods ready to be tried, ordered by the profile's QueueSort.

A binary heap (upstream ``backend/heap``) with lazy deletion: an entry removed or
replaced is marked dead and skipped when it reaches the top, so that delete and update
cost O(log n) without searching the heap. Ties under the less function go to the pod
that entered first.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator

from kubesched.framework.types import QueuedPodInfo

#: ``less(a, b)``: whether ``a`` should be scheduled before ``b`` (QueueSort).
LessFn = Callable[[QueuedPodInfo, QueuedPodInfo], bool]


class _Entry:
    __slots__ = ("alive", "info", "less", "seq")

    def __init__(self, info: QueuedPodInfo, seq: int, less: LessFn) -> None:
        self.info = info
        self.seq = seq
        self.less = less
        self.alive = True

    def __lt__(self, other: _Entry) -> bool:
        if self.less(self.info, other.info):
            return True
        if self.less(other.info, self.info):
            return False
        return self.seq < other.seq


class ActiveQueue:
    """A heap of QueuedPodInfos keyed by ``pod.key``, ordered by ``less``."""

    def __init__(self, less: LessFn) -> None:
        self._less = less
        self._heap: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return (e.info for e in self._entries.values())

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued info of the pod with ``key``, if it is here."""
        entry = self._entries.get(key)
        return entry.info if entry is not None else None

    def add(self, info: QueuedPodInfo) -> None:
        """Add ``info``, replacing any entry of the same pod (which loses its place)."""
        self.delete(info.pod.key)
        entry = _Entry(info, next(self._seq), self._less)
        self._entries[info.pod.key] = entry
        heapq.heappush(self._heap, entry)

    def update(self, info: QueuedPodInfo) -> None:
        """Re-sort the pod after its info changed (a new pod spec, say)."""
        self.add(info)

    def delete(self, key: str) -> QueuedPodInfo | None:
        """Remove the pod with ``key``; its info, or None if it was not here."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        entry.alive = False
        if len(self._heap) > 2 * len(self._entries) + 64:
            self._heap = [e for e in self._heap if e.alive]
            heapq.heapify(self._heap)
        return entry.info

    def peek(self) -> QueuedPodInfo | None:
        """The pod that ``pop`` would return, without removing it."""
        self._drop_dead()
        return self._heap[0].info if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        """Remove and return the first pod, or None when empty."""
        self._drop_dead()
        if not self._heap:
            return None
        entry = heapq.heappop(self._heap)
        del self._entries[entry.info.pod.key]
        return entry.info

    def _drop_dead(self) -> None:
        while self._heap and not self._heap[0].alive:
            heapq.heappop(self._heap)
