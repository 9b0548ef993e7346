"""List+watch informers: a local, eventually consistent copy of one collection, and
handlers told of every change exactly once.

:class:`Informer` lists (paged), then watches from the list's resourceVersion with
bookmarks, resuming from the last version seen whenever the stream ends (or breaks,
once it has carried events or lasted a second). When that
version has expired (HTTP 410, or a watch ERROR event with code 410) it relists, and the
relist is reconciled with the local store as client-go's ``Replace`` does: objects new to
us are added, changed ones updated, vanished ones deleted, unchanged ones left alone, so
no handler sees an event twice or misses one. Connection failures are retried with
exponential backoff (resuming the watch, or relisting if the list itself failed).

Handlers run in the informer's task, one event at a time, in order; a handler that
raises is logged and does not stop the informer, and neither does an object that fails
to decode (it is left out of the store).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import inspect
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kubesched.kube.client import Client
from kubesched.kube.errors import (
    ApiError,
    ConnectionFailed,
    Gone,
    KubeError,
    NotFound,
    TransportError,
)
from kubesched.kube.resources import RawObject, Resource
from kubesched.objects.errors import ObjectError

__all__ = ["Handler", "Informer"]

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass
class Handler(Generic[T]):
    """Callbacks for one consumer; each may be plain or ``async``."""

    on_add: Callable[[T], Any] | None = None
    on_update: Callable[[T, T], Any] | None = None
    on_delete: Callable[[T], Any] | None = None


class _Relist(Exception):
    """The watch cannot resume: list again."""


def object_key(raw: RawObject) -> str:
    """``namespace/name`` (or ``name`` for cluster-scoped objects), as client-go keys them."""
    meta = raw.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


def _version(raw: RawObject) -> str:
    return str((raw.get("metadata") or {}).get("resourceVersion", ""))


def _is_newer(new: str, old: str) -> bool:
    """Whether version ``new`` is a change after ``old`` (equal: already applied).

    resourceVersions are opaque to clients; all known servers use increasing integers,
    so compare as such when both parse, and fall back to "different means newer".
    """
    if new == old:
        return False
    if new.isdigit() and old.isdigit():
        return int(new) > int(old)
    return True


class Informer(Generic[T]):
    """Keeps a local store of ``resource`` in step with the server; runs until stopped.

    **namespace** (None: all), **label_selector**, **field_selector**: which objects.
    **page_size**: list chunk size. **watch_timeout**: seconds the server keeps one watch
    open. **backoff_initial** / **backoff_max**: reconnect delays (doubling, jittered).
    **optional**: the server may not serve the collection (404 on list): the store then
    stays empty and counts as synced, and the list is tried again every ``backoff_max``
    seconds (the scheduler's storage informers, against a server without them).
    """

    def __init__(
        self,
        client: Client,
        resource: Resource[T],
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = 500,
        watch_timeout: int = 300,
        backoff_initial: float = 0.2,
        backoff_max: float = 30.0,
        optional: bool = False,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.optional = optional
        #: Set once the first list has been applied to the store and the handlers.
        self.has_synced = asyncio.Event()
        #: The last resourceVersion seen (list, event or bookmark): where a watch resumes.
        self.resource_version = ""
        #: Counters, for tests and metrics.
        self.lists = 0
        self.watches = 0
        self.bookmarks = 0
        self._handlers: list[Handler[T]] = []
        self._items: dict[str, tuple[str, T]] = {}
        #: The wire objects, kept only for a resource that decodes updates from them.
        self._raws: dict[str, RawObject] | None = {} if resource.decode_update else None
        self._task: asyncio.Task[None] | None = None

    # --- the store ------------------------------------------------------------------

    def add_handler(
        self,
        on_add: Callable[[T], Any] | None = None,
        on_update: Callable[[T, T], Any] | None = None,
        on_delete: Callable[[T], Any] | None = None,
    ) -> Handler[T]:
        """Register callbacks. Add handlers before :meth:`start`: a late one is not
        replayed the objects already stored."""
        handler = Handler(on_add, on_update, on_delete)
        self._handlers.append(handler)
        return handler

    def get(self, key: str) -> T | None:
        """The stored object with key ``namespace/name`` (or ``name``), if any."""
        entry = self._items.get(key)
        return entry[1] if entry is not None else None

    def list(self) -> builtins.list[T]:
        """Every stored object, in key order."""
        return [self._items[key][1] for key in sorted(self._items)]

    def keys(self) -> builtins.list[str]:
        """Every stored key, sorted."""
        return sorted(self._items)

    # --- running --------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Run in a background task of the running loop; returns the task."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self.run(), name=f"informer {self.resource}"
            )
        return self._task

    async def stop(self) -> None:
        """Cancel the background task and wait for it to end."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        """Wait until the first list has been applied."""
        await asyncio.wait_for(self.has_synced.wait(), timeout)

    async def run(self) -> None:
        """List, then watch and resume forever (until cancelled)."""
        delay = self.backoff_initial
        need_list = not self.resource_version
        unserved = False  # said once, not every backoff_max, while not served
        while True:
            try:
                if need_list:
                    await self._relist()
                    need_list = False
                    unserved = False
                    delay = self.backoff_initial
                if await self._watch_once():
                    delay = self.backoff_initial
                else:
                    # Closed at once with nothing in it: a server going away or a proxy
                    # cutting idle streams. Do not reconnect in a tight loop.
                    await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                    delay = min(delay * 2, self.backoff_max)
            except (Gone, _Relist) as exc:
                log.info("%s: %s; relisting", self.resource, exc)
                need_list = True
            except NotFound as exc:
                if not (self.optional and need_list):
                    log.warning("%s: %s; retrying in %.1fs", self.resource, exc, delay)
                    await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                    delay = min(delay * 2, self.backoff_max)
                    continue
                # Not served: nothing to hold, nothing to wait for; look again later.
                log.log(
                    logging.DEBUG if unserved else logging.INFO,
                    "%s: not served (%s); listing again every %.0fs",
                    self.resource,
                    exc,
                    self.backoff_max,
                )
                unserved = True
                self.has_synced.set()
                await asyncio.sleep(self.backoff_max)
            except (TransportError, ApiError) as exc:
                # A 5xx, 429 or broken connection: back off, then resume where we were.
                log.warning("%s: %s; retrying in %.1fs", self.resource, exc, delay)
                await asyncio.sleep(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, self.backoff_max)
            except KubeError as exc:
                log.error("%s: %s; retrying in %.1fs", self.resource, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.backoff_max)

    async def _relist(self) -> None:
        raw = self.resource.raw
        first = await self.client.list(
            raw, self.namespace, self.label_selector, self.field_selector, self.page_size
        )
        items, token = builtins.list(first.items), first.continue_token
        while token:
            page = await self.client.list(
                raw,
                self.namespace,
                self.label_selector,
                self.field_selector,
                self.page_size,
                token,
            )
            items.extend(page.items)
            token = page.continue_token
        self.lists += 1
        await self._replace(items)
        self.resource_version = first.resource_version
        self.has_synced.set()

    async def _replace(self, items: builtins.list[RawObject]) -> None:
        """Converge the store on a fresh list, telling handlers only what changed."""
        seen: set[str] = set()
        for raw in items:
            key = object_key(raw)
            seen.add(key)
            await self._upsert(key, _version(raw), raw)
        for key in [k for k in self._items if k not in seen]:
            _, old = self._items.pop(key)
            if self._raws is not None:
                self._raws.pop(key, None)
            await self._notify_delete(old)

    async def _upsert(self, key: str, version: str, raw: RawObject) -> None:
        entry = self._items.get(key)
        if entry is not None and not _is_newer(version, entry[0]):
            return  # this version (or a later one) is already applied
        raws = self._raws
        try:
            old_raw = raws.get(key) if raws is not None and entry is not None else None
            decode_update = self.resource.decode_update
            if old_raw is not None and entry is not None and decode_update is not None:
                obj = decode_update(entry[1], old_raw, raw)
            else:
                obj = self.resource.decode(raw)
        except ObjectError as exc:
            # One malformed object must not stop the informer; it stays out of the store.
            log.warning("%s: skipping %s: %s", self.resource, key, exc)
            return
        self._items[key] = (version, obj)
        if raws is not None:
            raws[key] = raw
        for handler in tuple(self._handlers):
            if entry is None and handler.on_add is not None:
                await _call(handler.on_add, obj)
            elif entry is not None and handler.on_update is not None:
                await _call(handler.on_update, entry[1], obj)

    async def _notify_delete(self, obj: T) -> None:
        for handler in tuple(self._handlers):
            if handler.on_delete is not None:
                await _call(handler.on_delete, obj)

    async def _watch_once(self) -> bool:
        """One watch until the server ends it; whether it carried anything or lasted."""
        self.watches += 1
        started = asyncio.get_running_loop().time()
        events = 0
        stream = self.client.watch_stream(
            self.resource.raw,
            self.namespace,
            self.resource_version,
            self.label_selector,
            self.field_selector,
            self.watch_timeout,
        )
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    events += 1
                    await self._apply(event)
        except ConnectionFailed as exc:
            # A stream cut after it carried events, or after it lasted, ends like one the
            # server closed (client-go's StreamWatcher takes an unexpected EOF as the end):
            # resume at once from the last version. Cut at once, it is a failure to back
            # off from.
            if not (events or asyncio.get_running_loop().time() - started >= 1.0):
                raise
            log.info("%s: watch cut (%s); resuming", self.resource, exc)
            return True
        return events > 0 or asyncio.get_running_loop().time() - started >= 1.0

    async def _apply(self, event: dict[str, Any]) -> None:
        kind, raw = event.get("type"), event.get("object")
        if not isinstance(raw, dict):
            raise _Relist(f"a {kind} watch event without an object")
        if kind == "ERROR":
            code = raw.get("code")
            if code == 410:
                raise _Relist(f"watch expired: {raw.get('message', '')}")
            raise _Relist(f"watch error {code}: {raw.get('message', '')}")
        version = _version(raw)
        if kind == "BOOKMARK":
            self.bookmarks += 1
        elif kind in ("ADDED", "MODIFIED"):
            await self._upsert(object_key(raw), version, raw)
        elif kind == "DELETED":
            key = object_key(raw)
            entry = self._items.get(key)
            if entry is not None and _is_newer(version, entry[0]):
                del self._items[key]
                if self._raws is not None:
                    self._raws.pop(key, None)
                try:
                    final = self.resource.decode(raw)
                except ObjectError:
                    final = entry[1]  # the last state we knew
                await self._notify_delete(final)
        else:
            log.warning("%s: unknown watch event type %r", self.resource, kind)
            return
        if version and (not self.resource_version or _is_newer(version, self.resource_version)):
            self.resource_version = version


async def _call(handler: Callable[..., Any], *args: Any) -> None:
    """Run one handler; its failure is logged, not allowed to stop the informer."""
    try:
        result = handler(*args)
        # Handlers are mostly synchronous: skip the (slow) ABC check for None.
        if result is not None and inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("informer handler %r failed", handler)
