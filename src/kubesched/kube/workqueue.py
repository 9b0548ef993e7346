"""client-go's work queue (``util/workqueue``) for asyncio controllers.

A controller's informer handlers turn objects into keys (``namespace/name``) and
:meth:`WorkQueue.add` them; workers :meth:`~WorkQueue.get` a key, sync it, and call
:meth:`~WorkQueue.done`. The queue's promises are upstream's (``queue.go``):

* a key waits in the queue once, however often it is added (``dirty``);
* a key being synced is not handed to another worker: added meanwhile, it re-enters the
  queue only when its worker calls ``done`` (``processing``), so one worker per key;
* :meth:`~WorkQueue.add_after` adds later (``delaying_queue.go``; a key waiting to be
  added keeps the earlier of its times);
* :meth:`~WorkQueue.add_rate_limited` adds after the rate limiter's delay
  (``rate_limiting_queue.go``), and :meth:`~WorkQueue.forget` resets the key's backoff.

The default limiter is ``DefaultControllerRateLimiter``: the larger of a per-key
exponential backoff (5 ms doubling to 1000 s) and an overall token bucket (10 qps,
burst 100). One ``clock`` (monotonic seconds) serves the queue and its limiter, so tests
can step time.
"""

from __future__ import annotations

import asyncio
import collections
import math
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
]

K = TypeVar("K", bound=Hashable)
Clock = Callable[[], float]


class RateLimiter(Protocol[K]):  # type: ignore[misc]
    """``workqueue.TypedRateLimiter``: how long a key waits before it is retried."""

    def when(self, key: K) -> float:
        """Seconds to wait before the key's next retry (counts a failure)."""

    def forget(self, key: K) -> None:
        """The key succeeded: forget its failures."""

    def num_requeues(self, key: K) -> int:
        """How many failures the key has had since it was last forgotten."""


class ItemExponentialFailureRateLimiter(Generic[K]):
    """``base * 2**failures`` seconds per key, capped at ``maximum``."""

    def __init__(self, base: float = 0.005, maximum: float = 1000.0) -> None:
        self.base = base
        self.maximum = maximum
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        # 2**failures overflows a float long after it passed the cap.
        if failures > 62:
            return self.maximum
        return min(self.base * math.pow(2, failures), self.maximum)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter(Generic[K]):
    """An overall token bucket (``qps``, ``burst``): retries of all keys together wait
    for tokens, as ``rate.Limiter.Reserve().Delay()`` does (reservations may go into
    debt; each waits its turn)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        self.qps = qps
        self.burst = burst
        self._clock = clock or _monotonic
        self._tokens = float(burst)
        self._stamp = self._clock()

    def when(self, key: K) -> float:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.qps)
        self._stamp = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: K) -> None:
        pass

    def num_requeues(self, key: K) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """The longest delay of several limiters (each counts the failure)."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        self.limiters = limiters

    def when(self, key: K) -> float:
        return max(limiter.when(key) for limiter in self.limiters)

    def forget(self, key: K) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter[str]:
    """``DefaultControllerRateLimiter``: 5 ms doubling to 1000 s per key, 10 qps
    (burst 100) overall."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100, clock)
    )


def _monotonic() -> float:
    return asyncio.get_running_loop().time()


class WorkQueue(Generic[K]):
    """A deduplicating, rate-limited, delaying queue of keys (see the module docstring).

    Use in one event loop. **rate_limiter**: for :meth:`add_rate_limited` (default
    :func:`default_controller_rate_limiter`). **clock**: monotonic seconds for the
    delays (default the loop's clock); with a stepped clock call :meth:`fire_due`.
    """

    def __init__(
        self,
        name: str = "",
        rate_limiter: RateLimiter[K] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.name = name
        self._clock = clock
        self.rate_limiter: RateLimiter[K] = rate_limiter or default_controller_rate_limiter(clock)  # type: ignore[assignment]
        self._queue: collections.deque[K] = collections.deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiting: dict[K, tuple[float, asyncio.TimerHandle | None]] = {}
        self._ready = asyncio.Event()
        self._shutting_down = False
        #: Counters, for tests and metrics: keys added (after dedupe) and retries.
        self.adds = 0
        self.retries = 0

    def __len__(self) -> int:
        """Keys waiting to be handed out (not those being processed or delayed)."""
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        """Whether :meth:`shut_down` was called."""
        return self._shutting_down

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def add(self, key: K) -> None:
        """Queue ``key`` unless it already waits; a key being processed is queued again
        when its worker calls :meth:`done`."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self.adds += 1
        if key in self._processing:
            return
        self._queue.append(key)
        self._ready.set()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds (now if ``delay <= 0``). A key already
        waiting keeps the earlier time."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        due = self._now() + delay
        waiting = self._waiting.get(key)
        if waiting is not None:
            if waiting[0] <= due:
                return
            if waiting[1] is not None:
                waiting[1].cancel()
        handle = None
        if self._clock is None:
            handle = asyncio.get_running_loop().call_later(delay, self._fire, key)
        self._waiting[key] = (due, handle)

    def _fire(self, key: K) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def fire_due(self) -> None:
        """Add every delayed key whose time has come (for an injected clock; with the
        loop's clock timers do this)."""
        now = self._now()
        for key, (due, _) in list(self._waiting.items()):
            if due <= now:
                self._fire(key)

    def add_rate_limited(self, key: K) -> None:
        """Add ``key`` after the rate limiter says (a failed sync's retry)."""
        self.retries += 1
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """The key synced: reset its backoff."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """Failures of ``key`` since it was last forgotten."""
        return self.rate_limiter.num_requeues(key)

    async def get(self) -> K | None:
        """The next key (marked as being processed), waiting for one; None once the
        queue is shut down and empty."""
        while not self._queue:
            if self._shutting_down:
                return None
            self._ready.clear()
            await self._ready.wait()
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        """The worker finished ``key``; if it was added meanwhile, it is queued again."""
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._ready.set()

    def shut_down(self) -> None:
        """Refuse new keys and wake every waiting :meth:`get` (they return None once
        the queue is empty); delayed keys are dropped."""
        self._shutting_down = True
        for _, handle in self._waiting.values():
            if handle is not None:
                handle.cancel()
        self._waiting.clear()
        self._ready.set()
