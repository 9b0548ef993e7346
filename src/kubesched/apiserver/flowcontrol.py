"""Lease writes ahead of other writes: the one piece of kube-apiserver's API Priority and
Fairness that leader election relies on.

kube-apiserver serves requests in priority levels with seats of their own; its bootstrap
configuration gives leader-election Lease traffic a level of its own
(``system-leader-election``), so a burst of workload writes can never make a leader miss
its renewal. This server serves every request on one event loop, where a request waits
behind the work of every request that arrived before it: a thousand pod writes in flight
would all be served before a Lease renewal that came after them.

:class:`FlowControl` gives writes (POST, PUT, PATCH, DELETE) :data:`WRITE_SEATS` seats:
the others wait for a seat in arrival order, parked where they cost the loop nothing, and
every write first goes round the loop once, so that a Lease request that arrived with it
is served first. Requests on ``coordination.k8s.io`` Leases take no seat, so a renewal
waits only for the few writes being served, never for the queue (nor for writes whose
bodies are slow to arrive: a seat is held while the body is read). Reads and watches take
no seat either (APF gives them levels of their own; here they are never queued): a read
may wait for a write (a list at a resourceVersion not yet reached), and must not wait for
a seat.

Unlike APF, nothing is rejected with 429: a write waits until a seat frees.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["WRITE_SEATS", "FlowControl", "is_lease_request"]

#: Writes served at once; the others wait in arrival order. Handlers are synchronous
#: once their body is read, so more seats would add waiting, not throughput.
WRITE_SEATS = 8

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_lease_request(parts: list[str]) -> bool:
    """Whether a path (split on ``/``) names coordination.k8s.io Leases."""
    return (
        len(parts) >= 4
        and parts[0] == "apis"
        and parts[1] == "coordination.k8s.io"
        and "leases" in parts[3:6]
    )


class FlowControl:
    """Seats for writes; Lease requests, reads and watches go straight in."""

    def __init__(self, write_seats: int = WRITE_SEATS) -> None:
        self._seats = asyncio.Semaphore(max(1, write_seats))
        #: Writes that had to wait for a seat (for tests and curiosity).
        self.queued = 0

    @contextlib.asynccontextmanager
    async def seat(self, method: str, parts: list[str]) -> AsyncIterator[None]:
        """Hold a seat while serving a request that needs one."""
        if method not in _WRITES or is_lease_request(parts):
            yield
            return
        # Go round the loop once first: a Lease request that arrived in the same batch
        # as this write is served before it, not after.
        await asyncio.sleep(0)
        if self._seats.locked():
            self.queued += 1
        async with self._seats:
            yield
