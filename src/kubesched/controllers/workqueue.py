"""A minimal work queue of keys with client-go's two promises (``util/workqueue``): a key
waits once however often it is added, and a key being processed is not handed to a second
worker; added meanwhile, it comes back after :meth:`KeyQueue.done`.

Private to the controllers of this part that need nothing more (the kubelet, the
disruption controller); no rate limiting, no delays (callers use timers).
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["KeyQueue"]


class KeyQueue:
    """Keys to process, each at most once at a time."""

    def __init__(self) -> None:
        self._order: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._ready = asyncio.Event()

    def add(self, key: str) -> None:
        """Queue ``key`` unless it already waits."""
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._order.append(key)
            self._ready.set()

    async def get(self) -> str:
        """The next key to process; call :meth:`done` with it afterwards."""
        while not self._order:
            self._ready.clear()
            await self._ready.wait()
        key = self._order.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        return key

    def done(self, key: str) -> None:
        """``key`` is processed; requeue it if it was added meanwhile."""
        self._processing.discard(key)
        if key in self._dirty:
            self._order.append(key)
            self._ready.set()

    def __len__(self) -> int:
        return len(self._order)
