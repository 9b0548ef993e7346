"""Watch events, the bounded window of past events, and watchers.

kube-apiserver answers watches from a per-resource *watch cache*: a ring of recent events.
A watch from resourceVersion N replays the events after N from the ring and then follows
new ones; when N has fallen out of the ring it answers 410 Expired, and the client relists.
:class:`EventLog` is that ring (memory is bounded by its capacity, not by history) and
:class:`Watcher` is one client's queue. Both are driven by the store under its lock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from kubesched.apiserver.selectors import Matcher

Object = dict[str, Any]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One event as a watch stream sends it: ``{"type": ..., "object": ...}``.

    ``type`` is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR; ``resource_version`` is the
    version of the change (for DELETED, the version of the deletion).
    """

    type: str
    object: Object
    resource_version: int

    def wire(self) -> dict[str, Any]:
        """The JSON body of this event on a watch stream."""
        return {"type": self.type, "object": self.object}


@dataclass(frozen=True, slots=True)
class Change:
    """One stored change of a resource: the object before (None on create) and after."""

    resource_version: int
    type: str  # ADDED, MODIFIED, DELETED
    namespace: str
    object: Object
    old: Object | None


class EventLog:
    """The last ``capacity`` changes of one resource.

    ``floor`` is the newest version that has been dropped: every change after it is still
    here, so a watch may resume from any version ``>= floor``.
    """

    def __init__(self, capacity: int) -> None:
        self._changes: deque[Change] = deque()
        self.capacity = capacity
        self.floor = 0

    def append(self, change: Change) -> None:
        """Record a change, dropping the oldest when the window is full."""
        if len(self._changes) >= self.capacity:
            self.floor = self._changes.popleft().resource_version
        self._changes.append(change)

    def since(self, version: int) -> Iterator[Change]:
        """The changes after ``version``, oldest first (caller checks ``version >= floor``)."""
        return (c for c in self._changes if c.resource_version > version)

    def __len__(self) -> int:
        return len(self._changes)


def translate(change: Change, match: Matcher | None) -> WatchEvent | None:
    """The event a watcher with selector ``match`` sees for ``change``, if any.

    As upstream's cacheWatcher does, an object that starts to match is ADDED, one that
    stops matching is DELETED, and a change outside the selector is not seen at all.
    """
    if match is None:
        return WatchEvent(change.type, change.object, change.resource_version)
    now = change.type != "DELETED" and match(change.object)
    before = change.old is not None and match(change.old)
    if change.type == "DELETED":
        now, before = False, match(change.object)
    if now and before:
        kind = "MODIFIED"
    elif now:
        kind = "ADDED"
    elif before:
        kind = "DELETED"
    else:
        return None
    return WatchEvent(kind, change.object, change.resource_version)


class Watcher:
    """One watch: a queue of events for one resource, namespace and selector.

    The store appends events under its lock and then calls ``notify`` (a cheap callable,
    e.g. one that sets an asyncio event thread-safely). Readers drain with :meth:`take`.
    """

    def __init__(
        self,
        key: tuple[str, str, str],
        namespace: str | None,
        match: Matcher | None,
        notify: Callable[[], None] | None,
        on_close: Callable[[Watcher], None],
        max_pending: int = 0,
    ) -> None:
        self.key = key
        self.namespace = namespace
        self.match = match
        self._notify = notify
        self._on_close = on_close
        self._pending: deque[WatchEvent] = deque()
        self._max_pending = max_pending
        self.closed = False
        #: Set when the reader fell more than ``max_pending`` live events behind: no more
        #: events are queued and the stream should end, as upstream's cacher closes an
        #: unresponsive watcher; the client resumes from the last version it saw.
        self.overflowed = False
        #: The synthetic ADDED events queued first (the state a watch started with) and
        #: the version of that state (see ``Store.watch``).
        self.initial_count = 0
        self.initial_version = 0

    def offer(self, change: Change) -> None:
        """Queue the event ``change`` means to this watcher (store calls this under lock)."""
        if self.overflowed or (self.namespace is not None and change.namespace != self.namespace):
            return
        event = translate(change, self.match)
        if event is None:
            return
        if self._max_pending and len(self._pending) >= self._max_pending:
            self.overflowed = True
            if self._notify is not None:
                self._notify()
            return
        self.push(event)

    def push(self, event: WatchEvent) -> None:
        """Queue ``event`` and wake the reader."""
        self._pending.append(event)
        if self._notify is not None:
            self._notify()

    def take(self) -> list[WatchEvent]:
        """Every queued event, oldest first (empty when none)."""
        events = []
        pending = self._pending
        while pending:
            events.append(pending.popleft())
        return events

    def __len__(self) -> int:
        """How many events are queued."""
        return len(self._pending)

    @property
    def idle(self) -> bool:
        """Whether no event is waiting to be read."""
        return not self._pending

    def end(self) -> None:
        """End the watch from the server's side (its resource is no longer served): no
        more events, and the reader is woken to close the stream."""
        self.overflowed = True
        if self._notify is not None:
            self._notify()

    def close(self) -> None:
        """Stop receiving events."""
        if not self.closed:
            self.closed = True
            self._on_close(self)
