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
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from kubesched.kube import Client, NotFound
from kubesched.kube.resources import PODS
from kubesched.objects.pod import Pod
from kubesched.scheduler.events import EventBroadcaster

__all__ = ["LiveClusterClient", "PendingWrites", "finish_tasks"]

log = logging.getLogger(__name__)

#: Writes requested by plugins during one synchronous framework call, not started yet.
PendingWrites = list[tuple[str, Callable[[], Awaitable[object]]]]


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

        async def run() -> object:
            try:
                return await make()
            except Exception as err:
                log.warning("%s failed: %s", what, err)
                return None

        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- ClusterClient ----------------------------------------------------------------

    def bind(self, pod: Pod, node_name: str) -> None:
        """Deferred POST of the pod's Binding subresource (with a uid precondition)."""
        self._submit(
            f'binding pod "{pod.key}" to node "{node_name}"',
            lambda: self.client.bind(pod.namespace, pod.name, node_name, pod.uid),
        )

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
