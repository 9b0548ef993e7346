"""The framework's ``ClusterClient`` over the asyncio kube client.

Plugins are synchronous and never do I/O; their writes (DefaultBinder's bind,
preemption's victim deletions and nomination clears) must still reach the API server,
which the kube client does asynchronously. :class:`LiveClusterClient` bridges the two
without threads: a write made inside :meth:`LiveClusterClient.collect` is *deferred* — a
coroutine factory appended to the collection — and the async caller awaits the
collection right after the synchronous plugin call returns (:meth:`flush`). So the
binding task binds (``collect`` around ``run_bind_plugins``, then ``flush``; a failed
write becomes the Bind failure), and the scheduling cycle awaits preemption's deletions
before the pod is requeued. A write made outside any collection runs as a background
task whose failure is logged (no plugin of ours does that).

The price of deferring: a plugin sees its write "succeed" before it has happened, and
learns of a failure only through the caller. Binders and preemption do nothing after
their write, so that costs nothing in practice.

PreBind plugins need more: write, see the answer, wait for a controller
(``framework/apiclient.py``). The binding cycle runs them in a worker thread, and there
every call of this client *blocks*: it runs the request on the scheduler's event loop
(:meth:`attach` names it) and waits for its result, raising the framework's
:class:`~kubesched.framework.apiclient.APIError` kinds translated from ``kube``'s. The
deferred writes above block the same way when called off the loop. :meth:`wait_until`
re-checks its condition on the loop each time an informer reports a change
(:meth:`changed`, wired by the scheduler) and at least every second, as upstream's
VolumeBinding polls. A blocking call made on the loop itself would deadlock; it raises
instead. On shutdown :meth:`close` fails the calls in flight (Unavailable), so no worker
thread outlives the scheduler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

from kubesched.framework import apiclient
from kubesched.framework.apiclient import APIResource, PatchType, RawObject
from kubesched.kube import Client, NotFound
from kubesched.kube import errors as kube_errors
from kubesched.kube.resources import PODS, Resource
from kubesched.objects.pod import Pod
from kubesched.scheduler.events import EventBroadcaster

__all__ = ["POLL_PERIOD", "LiveClusterClient", "PendingWrites", "finish_tasks", "translate_error"]

log = logging.getLogger(__name__)

#: Writes requested by plugins during one synchronous framework call, not started yet.
PendingWrites = list[tuple[str, Callable[[], Awaitable[object]]]]

#: Seconds between checks of a ``wait_until`` condition when no informer reports a change
#: (upstream's VolumeBinding polls its binding every second).
POLL_PERIOD = 1.0

T = TypeVar("T")


class LiveClusterClient:
    """A ``ClusterClient`` whose writes go to the API server through ``client``."""

    def __init__(self, client: Client) -> None:
        self.client = client
        #: Where events go when set (the scheduler's broadcaster); else written directly.
        self.events: EventBroadcaster | None = None
        self._pending: contextvars.ContextVar[PendingWrites | None] = contextvars.ContextVar(
            f"pending-writes-{id(self)}", default=None
        )
        self._background: set[asyncio.Task[object]] = set()
        #: The loop the requests run on (set by :meth:`attach`).
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        #: Blocking calls in flight from worker threads (failed by :meth:`close`).
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        self._closed = False
        #: One event per waiting ``wait_until``, set on every change.
        self._waiters: set[asyncio.Event] = set()

    # --- blocking calls from worker threads -------------------------------------------

    def attach(self) -> None:
        """Run blocking calls on the running loop (call from it before binding starts)."""
        self.loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._closed = False

    def changed(self, *_: object) -> None:
        """An informer saw a change: every ``wait_until`` re-checks its condition."""
        for waiter in self._waiters:
            waiter.set()

    def close(self) -> None:
        """Refuse new blocking calls and fail those in flight (their threads get
        Unavailable at once)."""
        self._closed = True
        for future in tuple(self._in_flight):
            future.cancel()

    def _blocking(self, what: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` on the loop and wait for it from this (worker) thread."""
        loop = self.loop
        if loop is None or self._closed:
            raise apiclient.Unavailable(f"{what}: the scheduler is not running")
        if threading.get_ident() == self._loop_thread:
            raise RuntimeError(
                f"{what}: a blocking API call on the scheduler's event loop would deadlock; "
                "make it from PreBind (which runs in a worker thread)"
            )
        future = asyncio.run_coroutine_threadsafe(make(), loop)
        self._in_flight.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise apiclient.Unavailable(f"{what}: the scheduler is stopping") from None
        except kube_errors.KubeError as err:
            raise translate_error(err, what) from err
        finally:
            self._in_flight.discard(future)

    def get(self, resource: APIResource, name: str, namespace: str = "") -> RawObject:
        """GET the object from the server."""
        res = _kube_resource(resource)
        return self._blocking(
            f'getting {resource} "{name}"', lambda: self.client.get(res, name, namespace or None)
        )

    def create(self, resource: APIResource, body: RawObject) -> RawObject:
        """POST ``body``."""
        res = _kube_resource(resource)
        name = (body.get("metadata") or {}).get("name", "")
        return self._blocking(
            f'creating {resource} "{name}"', lambda: self.client.create(res, body)
        )

    def update(self, resource: APIResource, body: RawObject) -> RawObject:
        """PUT ``body`` (Conflict when its resourceVersion is stale)."""
        res = _kube_resource(resource)
        name = (body.get("metadata") or {}).get("name", "")
        return self._blocking(
            f'updating {resource} "{name}"', lambda: self.client.update(res, body)
        )

    def update_status(self, resource: APIResource, body: RawObject) -> RawObject:
        """PUT ``body`` to the status subresource."""
        res = _kube_resource(resource)
        name = (body.get("metadata") or {}).get("name", "")
        return self._blocking(
            f'updating the status of {resource} "{name}"',
            lambda: self.client.update(res, body, "status"),
        )

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> RawObject:
        """PATCH the object (or its ``subresource``)."""
        res = _kube_resource(resource)
        return self._blocking(
            f'patching {resource} "{name}"',
            lambda: self.client.patch(res, name, patch, namespace or None, patch_type, subresource),
        )

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Block until ``condition()``, evaluated on the loop after each informer change
        (and every :data:`POLL_PERIOD`), is true; False after ``timeout`` seconds."""
        return self._blocking("waiting", lambda: self._wait_until(condition, timeout))

    async def _wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        waiter = asyncio.Event()
        self._waiters.add(waiter)
        try:
            while True:
                waiter.clear()
                if condition():
                    return True
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), min(remaining, POLL_PERIOD))
        finally:
            self._waiters.discard(waiter)

    # --- collecting -------------------------------------------------------------------

    @contextlib.contextmanager
    def collect(self) -> Iterator[PendingWrites]:
        """Defer the writes made in the ``with`` body to the list it yields.

        The collection belongs to the current task (a context variable), so a body that
        awaits (preemption asking extenders) does not catch other tasks' writes.
        """
        pending: PendingWrites = []
        token = self._pending.set(pending)
        try:
            yield pending
        finally:
            self._pending.reset(token)

    @staticmethod
    async def flush(pending: PendingWrites) -> list[str]:
        """Run collected writes concurrently; the description of each one that failed."""
        if len(pending) == 1:
            # The usual case (one binding): no gather, so no extra task per pod.
            what, make = pending[0]
            try:
                await make()
            except asyncio.CancelledError:
                raise
            except Exception as err:
                return [f"{what}: {err}"]
            return []
        results = await asyncio.gather(*(make() for _, make in pending), return_exceptions=True)
        failures = []
        for (what, _), result in zip(pending, results, strict=True):
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                failures.append(f"{what}: {result}")
        return failures

    async def drain(self, deadline: float | None = None) -> None:
        """Wait for the background writes started outside a collection; those still
        running at ``deadline`` (the loop's clock) are cancelled."""
        if deadline is None:
            while self._background:
                await asyncio.gather(*tuple(self._background), return_exceptions=True)
            return
        await finish_tasks(self._background, deadline)

    def _submit(self, what: str, make: Callable[[], Awaitable[object]]) -> None:
        pending = self._pending.get()
        if pending is not None:
            pending.append((what, make))
            return
        if self.loop is not None and threading.get_ident() != self._loop_thread:
            # From a worker thread (PreBind): the write happens now and its failure is
            # the caller's.

            async def now() -> object:
                return await make()

            self._blocking(what, now)
            return

        async def run() -> object:
            try:
                return await make()
            except Exception as err:
                log.warning("%s failed: %s", what, err)
                return None

        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def submit(self, what: str, call: Callable[[], object]) -> None:
        """Run ``call`` — blocking API calls of this client — in a worker thread without
        the caller waiting: a write the scheduling cycle makes but need not see answered
        (DynamicResources' deallocation in PostFilter, its Unreserve). Inside
        :meth:`collect` it is awaited with the collection. A failure is only logged: the
        plugin gets here again when the pod is retried."""

        async def run() -> object:
            try:
                return await asyncio.to_thread(call)
            except apiclient.APIError as err:
                log.warning("%s failed: %s", what, err)
                return None

        if self.loop is not None and threading.get_ident() != self._loop_thread:
            try:
                call()
            except apiclient.APIError as err:
                log.warning("%s failed: %s", what, err)
            return
        self._submit(what, run)

    # --- ClusterClient ----------------------------------------------------------------

    def bind(self, pod: Pod, node_name: str) -> None:
        """Deferred POST of the pod's Binding subresource (with a uid precondition).

        A binding is not safe to send twice blindly, and a failed one may still have
        happened: the answer lost with the connection or a 5xx after the write. So such a
        failure is checked by reading the pod (a read is safe to repeat): bound to
        ``node_name`` (same uid) counts as bound; anything else is the failure, and the
        binding cycle requeues the pod as upstream's does. A 409 is never ours: this
        binding was sent once, so the pod was bound by someone else (a foreign binder may
        well have picked the same node) and upstream's failure path applies; a binding of
        ours whose answer was lost in an earlier cycle shows in the informer, which then
        drops the pod from the queue. Reading first keeps a bound pod from being
        forgotten, requeued and marked unschedulable meanwhile.
        """

        async def bind() -> None:
            try:
                await self.client.bind(pod.namespace, pod.name, node_name, pod.uid)
            except (kube_errors.TransportError, kube_errors.ServerError):
                if not await self._bound_to(pod, node_name):
                    raise
                log.info("pod %s: the binding to %s went through", pod.key, node_name)

        self._submit(f'binding pod "{pod.key}" to node "{node_name}"', bind)

    async def _bound_to(self, pod: Pod, node_name: str) -> bool:
        """Whether the server has ``pod`` (same uid) bound to ``node_name``; False when
        it cannot be read."""
        try:
            raw = await self.client.get(PODS.raw, pod.name, pod.namespace)
        except kube_errors.KubeError:
            return False
        meta, spec = raw.get("metadata") or {}, raw.get("spec") or {}
        same = not pod.uid or meta.get("uid") == pod.uid
        return same and spec.get("nodeName") == node_name

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        """Deferred delete of a preemption victim, as upstream's ``PreemptPod``: first the
        victim's ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``, message
        ``reason``), then the delete, then the ``Preempted`` event regarding the victim,
        related to the preemptor: ``Preempted by pod <uid> on node <node>``.

        The pod's own grace period applies; a victim already gone counts as deleted.
        """
        by = preemptor if preemptor is not None else pod
        note = f"Preempted by pod {by.uid or by.key} on node {pod.node_name}"

        async def delete() -> object:
            condition = {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": reason,
                "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            with contextlib.suppress(NotFound):
                # Strategic: conditions merge by type, the pod's others are kept.
                await self.client.patch_pod_status(
                    pod.namespace, pod.name, {"status": {"conditions": [condition]}}
                )
                await self.client.delete(PODS, pod.name, pod.namespace, uid=pod.uid)
            if self.events is not None:
                self.events.eventf(
                    pod, "Normal", "Preempted", "Preempting", note, by.scheduler_name, related=by
                )
                return None
            with contextlib.suppress(Exception):  # the event is informative only
                await self.client.create_event(
                    pod_reference(pod),
                    "Preempted",
                    note,
                    action="Preempting",
                    component=by.scheduler_name,
                )
            return None

        self._submit(f'deleting pod "{pod.key}"', delete)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Deferred patch of ``status.nominatedNodeName`` ("" clears it)."""
        patch = {"status": {"nominatedNodeName": node_name or None}}
        self._submit(
            f'setting nominatedNodeName of pod "{pod.key}"',
            lambda: self.client.patch_pod_status(pod.namespace, pod.name, patch, "merge"),
        )


async def finish_tasks(tasks: set[asyncio.Task[Any]], deadline: float) -> None:
    """Wait for ``tasks``, a set their done callbacks shrink (tasks added meanwhile
    included), until ``deadline`` (the loop's clock); then cancel what is left."""
    loop = asyncio.get_running_loop()
    while tasks:
        remaining = deadline - loop.time()
        if remaining <= 0:
            log.warning("shutdown: %d write(s) still running cancelled", len(tasks))
            for task in tuple(tasks):
                task.cancel()
            await asyncio.gather(*tuple(tasks), return_exceptions=True)
            return
        await asyncio.wait(tuple(tasks), timeout=remaining)


def pod_reference(pod: Pod) -> dict[str, str]:
    """The ObjectReference of ``pod``, as events' ``involvedObject``."""
    ref = {"apiVersion": "v1", "kind": "Pod", "namespace": pod.namespace, "name": pod.name}
    if pod.uid:
        ref["uid"] = pod.uid
    return ref


def _kube_resource(resource: APIResource) -> Resource[RawObject]:
    """The ``kube`` collection of a framework resource, decoded as plain dicts."""
    return Resource(
        resource.group,
        resource.version,
        resource.plural,
        resource.kind,
        resource.namespaced,
        _as_raw,
    )


def _as_raw(raw: RawObject) -> RawObject:
    return raw


def translate_error(err: kube_errors.KubeError, what: str) -> apiclient.APIError:
    """The framework's error for a ``kube`` one (plugins never see ``kube``'s types)."""
    if not isinstance(err, kube_errors.ApiError):
        return apiclient.Unavailable(f"{what}: {err}")
    message = err.message or str(err)
    kind: type[apiclient.APIError]
    if isinstance(err, kube_errors.AlreadyExists):
        kind = apiclient.AlreadyExists
    elif isinstance(err, kube_errors.Conflict):
        kind = apiclient.Conflict
    elif isinstance(err, kube_errors.NotFound):
        kind = apiclient.NotFound
    elif isinstance(err, kube_errors.Invalid):
        kind = apiclient.Invalid
    elif isinstance(err, (kube_errors.Forbidden, kube_errors.Unauthorized)):
        kind = apiclient.Forbidden
    elif isinstance(err, (kube_errors.TooManyRequests, kube_errors.ServerError)):
        kind = apiclient.Unavailable
    else:
        kind = apiclient.APIError
    return kind(message, code=err.code, reason=err.reason)
