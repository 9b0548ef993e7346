"""A minimal asyncio work queue with client-go's semantics, private to the Job controller
and the garbage collector until the shared one (``kube``'s, from the workloads slice) is in.

A key waits once however often it is added (``dirty``); a key being processed re-enters
only after :meth:`WorkQueue.done` (``processing``), so one worker handles a key at a time
(``util/workqueue/queue.go``). :meth:`WorkQueue.add_after` keeps the earliest pending time
of a key (``delaying_queue.go``); :meth:`WorkQueue.add_rate_limited` waits 5 ms per key
doubling to 1000 s until :meth:`WorkQueue.forget` (``ItemExponentialFailureRateLimiter``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.005
MAX_DELAY = 1000.0


class ShutDown(Exception):
    """The queue was shut down: the worker that got it ends."""


class WorkQueue(Generic[K]):
    """Keys to process; see the module docstring for the rules."""

    def __init__(self, base_delay: float = BASE_DELAY, max_delay: float = MAX_DELAY) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._failures: dict[K, int] = {}
        self._waiting: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._ready = asyncio.Event()
        self._shut = False

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting."""
        if self._shut or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return  # re-queued by done()
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` in ``delay`` seconds (at once if not positive); the earliest wins."""
        if self._shut:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        pending = self._waiting.get(key)
        if pending is not None:
            if pending[0] <= due:
                return
            pending[1].cancel()
        self._waiting[key] = (due, loop.call_at(due, self._fire, key))

    def _fire(self, key: K) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its per-key exponential backoff."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self.base_delay * 2**failures, self.max_delay))

    def forget(self, key: K) -> None:
        """Reset ``key``'s backoff (it was processed successfully)."""
        self._failures.pop(key, None)

    async def get(self) -> K:
        """The next key; raises :class:`ShutDown` once the queue is shut down."""
        while not self._queue:
            if self._shut:
                raise ShutDown
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        """``key`` is processed; if it was added meanwhile it waits again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()

    def shut_down(self) -> None:
        """Stop handing out keys; waiting workers get :class:`ShutDown`."""
        self._shut = True
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
        self._ready.set()
