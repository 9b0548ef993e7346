"""The scheduler's events, written through events.k8s.io/v1 as upstream's event
broadcaster (client-go ``tools/events``) writes them.

Recording never blocks the scheduling loop: :meth:`EventBroadcaster.eventf` puts the
event in a bounded queue and returns; one task (:meth:`EventBroadcaster.run`) takes them
in order and starts their writes, up to :data:`WRITERS` at once (upstream writes each
event in a goroutine of its own; the events' client's token bucket paces them), the
writes of one event (its creation, then its series) one after the other. When the queue
is full the event is dropped and counted (:attr:`dropped`), as upstream's broadcaster
drops on a full channel. A repeat of an event whose series is
already written only counts, right away, without taking a place in the queue: a pod
retried a thousand times fills no queue (upstream queues the repeat and counts it when
its turn comes, so a burst of repeats can crowd out new events there).

Repeats are aggregated into a series, as upstream's ``recordToSink``: events with the
same action, reason, reporting controller, regarding object and note are isomorphic.
The first is created; the second patches it with ``series: {count: 2,
lastObservedTime}``; later ones only count in memory, and the series' final count is
written when it ends — no repeat for ``finish_after`` seconds (upstream: 6 minutes) —
or, for a series still going, every ``refresh_after`` seconds (upstream: 30 minutes).
A singleton event leaves the cache ``finish_after`` seconds after it was recorded.

Each profile reports as itself: ``reportingController`` is the profile's
schedulerName, ``reportingInstance`` ``<schedulerName>-<hostname>``, as the recorder
upstream builds per profile.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kubesched.kube import AlreadyExists, Client, KubeError, NotFound
from kubesched.kube.resources import EVENTS, RawObject
from kubesched.objects.pod import Pod

__all__ = [
    "EVENTS_V1",
    "FINISH_TIME",
    "NOTE_LENGTH_LIMIT",
    "REFRESH_TIME",
    "EventBroadcaster",
    "truncate_note",
]

log = logging.getLogger(__name__)

#: The events.k8s.io/v1 collection (same objects as core/v1 events, other field names).
EVENTS_V1 = replace(EVENTS, group="events.k8s.io")

#: Upstream's ``finishTime`` and ``refreshTime`` (seconds).
FINISH_TIME = 6 * 60.0
REFRESH_TIME = 30 * 60.0
#: The API server's limit on ``note``; upstream's scheduler truncates to it.
NOTE_LENGTH_LIMIT = 1024
#: Event writes in flight at once.
WRITERS = 16


def truncate_note(note: str) -> str:
    """``note`` cut to the API server's limit with `` ...``, as upstream's
    ``truncateMessage``."""
    if len(note) <= NOTE_LENGTH_LIMIT:
        return note
    suffix = " ..."
    return note[: NOTE_LENGTH_LIMIT - len(suffix)] + suffix


def micro_time(seconds: float) -> str:
    """A ``metav1.MicroTime`` (RFC 3339 with microseconds)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def reference(pod: Pod) -> dict[str, str]:
    """The ObjectReference of ``pod`` (``regarding``)."""
    ref = {"apiVersion": "v1", "kind": "Pod", "namespace": pod.namespace, "name": pod.name}
    if pod.uid:
        ref["uid"] = pod.uid
    return ref


@dataclass
class _Cached:
    """An event recorded (or being recorded) and its series."""

    body: RawObject
    recorded_at: float
    name: str = ""
    count: int = 1
    last_observed: float = 0.0
    #: The count last written to the API server.
    written: int = 1
    extra: dict[str, Any] = field(default_factory=dict)
    #: Held while one of this event's writes is in flight (FIFO: they go in order).
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


_Key = tuple[str, str, str, tuple[str, str, str], str]


class EventBroadcaster:
    """Writes the scheduler's events in the background; see the module docstring.

    **capacity**: events waiting to be written before new ones are dropped.
    **finish_after** / **refresh_after**: upstream's 6 and 30 minutes (tests shorten).
    """

    def __init__(
        self,
        client: Client,
        *,
        capacity: int = 1000,
        hostname: str | None = None,
        finish_after: float = FINISH_TIME,
        refresh_after: float = REFRESH_TIME,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.hostname = hostname or socket.gethostname()
        self.finish_after = finish_after
        self.refresh_after = refresh_after
        self.clock = clock
        self._queue: asyncio.Queue[tuple[_Key, RawObject, float]] = asyncio.Queue(capacity)
        self._cache: dict[_Key, _Cached] = {}
        self._last_refresh = clock()
        #: Events dropped because the queue was full.
        self.dropped = 0
        #: Events whose write failed (logged; not retried, as upstream after its retries).
        self.failed = 0
        self._writing: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(WRITERS)

    # --- recording (the scheduling loop's side) ---------------------------------------

    def eventf(
        self,
        regarding: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
        related: Pod | None = None,
    ) -> None:
        """Queue an event about ``regarding`` (and ``related``, the other object involved,
        as a preemptor is to its victim); never blocks (dropped when full)."""
        now = self.clock()
        note = truncate_note(note)
        ref = reference(regarding)
        key: _Key = (
            action,
            reason,
            reporting_controller,
            (ref["namespace"], ref["name"], ref.get("uid", "")),
            note,
        )
        body: RawObject = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                # Upstream's name: the object's name and the time in hex nanoseconds.
                "name": f"{regarding.name}.{int(now * 1e9):x}",
                "namespace": regarding.namespace or "default",
            },
            "eventTime": micro_time(now),
            "reportingController": reporting_controller,
            "reportingInstance": f"{reporting_controller}-{self.hostname}",
            "action": action,
            "reason": reason,
            "regarding": ref,
            "note": note,
            "type": event_type,
        }
        if related is not None:
            body["related"] = reference(related)
        cached = self._cache.get(key)
        if cached is not None and cached.count >= 2:
            # The series is started: later occurrences only count (see the docstring).
            cached.count += 1
            cached.last_observed = now
            return
        try:
            self._queue.put_nowait((key, body, now))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("event queue full: %d event(s) dropped so far", self.dropped)

    # --- writing (the broadcaster's task) ---------------------------------------------

    async def run(self) -> None:
        """Write queued events until cancelled; end series that have gone quiet."""
        tick = min(self.finish_after, self.refresh_after, 60.0)
        while True:
            try:
                key, body, now = await asyncio.wait_for(self._queue.get(), tick)
            except TimeoutError:
                await self.maintain()
                continue
            await self._slots.acquire()
            self._record(key, body, now)
            if self.clock() - self._last_refresh >= tick:
                await self.maintain()

    async def drain(self, timeout: float = 1.0) -> None:
        """Write what is queued (at most ``timeout`` seconds, then writes still in flight
        are cancelled), e.g. before shutdown."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._queue.empty():
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                async with asyncio.timeout(remaining):
                    await self._slots.acquire()
            except TimeoutError:
                break
            if self._queue.empty():  # run() took the last one meanwhile
                self._slots.release()
                break
            self._record(*self._queue.get_nowait())
        if self._writing:
            await asyncio.wait(tuple(self._writing), timeout=max(0.0, deadline - loop.time()))
        for task in tuple(self._writing):
            task.cancel()

    def _record(self, key: _Key, body: RawObject, now: float) -> None:
        """Account for one occurrence (in order, in the caller's task) and start its
        write if it needs one; the caller holds a writer slot, released when it ends."""
        cached = self._cache.get(key)
        write: Callable[[_Cached], Awaitable[None]] | None = None
        if cached is None:
            cached = self._cache[key] = _Cached(body, now, last_observed=now)
            write = self._create
        else:
            cached.count += 1
            cached.last_observed = now
            if cached.count == 2:
                # The second occurrence starts the series: written at once, as upstream,
                # with the count as it is now (later ones count until the series ends).
                series = self._series(cached)
                write = functools.partial(self._write_series, series=series)
        if write is None:
            self._slots.release()
            return
        task = asyncio.get_running_loop().create_task(self._in_turn(cached, write))
        self._writing.add(task)
        task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        self._writing.discard(task)
        self._slots.release()

    @staticmethod
    async def _in_turn(cached: _Cached, write: Callable[[_Cached], Awaitable[None]]) -> None:
        async with cached.lock:
            await write(cached)

    async def maintain(self) -> None:
        """Upstream's ``finishSeries`` and ``refreshExistingEventSeries``: write the
        final count of ended series and forget them; forget old singletons; refresh
        series that are still going every ``refresh_after``."""
        now = self.clock()
        refresh = now - self._last_refresh >= self.refresh_after
        if refresh:
            self._last_refresh = now
        for key, cached in list(self._cache.items()):
            if cached.count > 1:
                if now - cached.last_observed > self.finish_after:
                    if cached.count != cached.written:
                        await self._in_turn(cached, self._write_series)
                    del self._cache[key]
                elif refresh and cached.count != cached.written:
                    await self._in_turn(cached, self._write_series)
            elif now - cached.recorded_at > self.finish_after:
                del self._cache[key]

    async def _create(self, cached: _Cached, series: RawObject | None = None) -> None:
        """Create the event, with ``series`` if given."""
        body = dict(cached.body)
        if series is not None:
            body["series"] = series
        namespace = body["metadata"]["namespace"]
        try:
            created = await self.client.create(EVENTS_V1, body, namespace)
        except AlreadyExists:
            # Ours: an earlier create whose answer was lost (the name is unique to this
            # event). Patch it from now on.
            cached.name = str(body["metadata"]["name"])
            cached.written = int(series["count"]) if series is not None else 1
            return
        except KubeError as err:
            self.failed += 1
            log.warning("writing event %s failed: %s", body["reason"], err)
            return
        cached.name = str(created.get("metadata", {}).get("name", ""))
        cached.written = int(series["count"]) if series is not None else 1

    async def _write_series(self, cached: _Cached, series: RawObject | None = None) -> None:
        """Patch the recorded event with ``series`` (default: the count now); create it
        if it is gone."""
        series = series if series is not None else self._series(cached)
        if not cached.name:
            await self._create(cached, series)
            return
        namespace = cached.body["metadata"]["namespace"]
        try:
            await self.client.patch(EVENTS_V1, cached.name, {"series": series}, namespace, "merge")
            cached.written = int(series["count"])
        except NotFound:
            cached.name = ""
            await self._create(cached, series)
        except KubeError as err:
            self.failed += 1
            log.warning("updating event series %s failed: %s", cached.name, err)

    @staticmethod
    def _series(cached: _Cached) -> RawObject:
        return {"count": cached.count, "lastObservedTime": micro_time(cached.last_observed)}
