"""Client-side rate limiting: client-go's token bucket (``clientConnection.qps`` / ``burst``).

The bucket holds up to ``burst`` tokens and refills at ``qps`` per second; each request
takes one, waiting when the bucket is empty. Waiters are served in arrival order.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` tokens per second, at most ``burst`` at once; ``qps <= 0`` means no limit."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(burst, 1)
        self._tokens = float(self.burst)
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        """Take one token, sleeping until one is available."""
        if self.qps <= 0:
            return
        async with self._lock:  # FIFO: the next waiter is the one that sleeps
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
            self._stamp = now
            if self._tokens < 1:
                wait = (1 - self._tokens) / self.qps
                await asyncio.sleep(wait)
                self._tokens = 1.0
                self._stamp = time.monotonic()
            self._tokens -= 1
