"""client-go's event recorder (``tools/record``), reduced to what controllers need.

:meth:`EventRecorder.event` never waits: the Event is written by a background task, and
a failure to write it is logged, not raised (an event is a hint to users, never worth
failing a sync). Like client-go's ``EventCorrelator`` spam filter, each source and
involved object gets a token bucket (burst 25, one token every 5 minutes): a
ReplicaSet that creates 5,000 pods records its first 25 ``SuccessfulCreate`` events,
not 5,000 writes. Deviation: client-go also aggregates similar events into one with a
``count``; dropped events are simply dropped here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.kube.client import Client
from kubesched.kube.errors import KubeError

__all__ = ["EventRecorder", "object_reference"]

log = logging.getLogger(__name__)

#: client-go's defaultSpamBurst and defaultSpamQPS (1/300).
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
#: Spam buckets kept at most (client-go's LRU holds 4096).
_MAX_BUCKETS = 4096


def object_reference(obj: Mapping[str, Any]) -> dict[str, str]:
    """The ``ObjectReference`` of an object (kind, apiVersion, namespace, name, uid,
    resourceVersion) for an Event's ``involvedObject``."""
    meta = obj.get("metadata") or {}
    ref = {
        "kind": str(obj.get("kind", "")),
        "apiVersion": str(obj.get("apiVersion", "")),
        "namespace": str(meta.get("namespace", "")),
        "name": str(meta.get("name", "")),
        "uid": str(meta.get("uid", "")),
        "resourceVersion": str(meta.get("resourceVersion", "")),
    }
    return {k: v for k, v in ref.items() if v}


class EventRecorder:
    """Records core/v1 Events from ``component`` (``replicaset-controller``, ...).

    **clock**: monotonic seconds for the spam filter (default the loop's clock).
    """

    def __init__(
        self, client: Client, component: str, clock: Callable[[], float] | None = None
    ) -> None:
        self.client = client
        self.component = component
        self._clock = clock
        self._buckets: dict[tuple[str, ...], tuple[float, float]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Counters, for tests and metrics.
        self.sent = 0
        self.filtered = 0

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    def _allow(self, ref: Mapping[str, str]) -> bool:
        key = tuple(ref.get(k, "") for k in ("kind", "namespace", "name", "uid"))
        now = self._now()
        tokens, stamp = self._buckets.pop(key, (float(SPAM_BURST), now))
        tokens = min(float(SPAM_BURST), tokens + (now - stamp) * SPAM_QPS)
        allowed = tokens >= 1
        self._buckets[key] = (tokens - 1 if allowed else tokens, now)
        if len(self._buckets) > _MAX_BUCKETS:
            del self._buckets[next(iter(self._buckets))]  # the least recently used
        return allowed

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """Record an Event about ``obj`` (a whole object with kind and apiVersion)."""
        ref = object_reference(obj)
        if not self._allow(ref):
            self.filtered += 1
            return
        task = asyncio.get_running_loop().create_task(self._send(ref, event_type, reason, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, ref: dict[str, str], event_type: str, reason: str, message: str) -> None:
        try:
            await self.client.create_event(
                ref, reason, message, event_type, component=self.component
            )
            self.sent += 1
        except KubeError as exc:
            log.warning(
                "%s: could not record event %s on %s: %s",
                self.component,
                reason,
                ref.get("name"),
                exc,
            )

    async def flush(self) -> None:
        """Wait for the events being written (before stopping)."""
        while self._tasks:
            await asyncio.gather(*tuple(self._tasks), return_exceptions=True)
