"""The garbage collector: deletes objects whose owners are gone, and carries out the
foreground and orphan deletions the API server starts (``garbagecollector.go``).

* **Background.** A dependent all of whose owners are *dangling* (no object of that uid:
  a GET of the owner is 404 or finds another uid) is deleted, with the propagation its own
  finalizers ask for. A dependent with a live owner and some dangling ones only loses the
  dangling references.
* **Foreground.** An object deleted with ``propagationPolicy: Foreground`` keeps the
  ``foregroundDeletion`` finalizer; its dependents are deleted (in the foreground too, if
  they have dependents of their own), and once no dependent that has
  ``blockOwnerDeletion`` is left, the finalizer is removed and the object goes.
* **Orphan.** An object deleted with ``propagationPolicy: Orphan`` keeps the ``orphan``
  finalizer until every dependent has lost its reference to it; then it is removed.

The collector watches every collection that can be listed, watched and deleted
(:mod:`~kubesched.controllers.garbagecollector.restmapper`; discovery is repeated every
``resync_period`` seconds so custom resources are picked up) and reaches the server only
through :mod:`kubesched.kube`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from kubesched.controllers.garbagecollector import operations
from kubesched.controllers.garbagecollector.graph import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    Node,
    ObjectIdentity,
    OwnerReference,
    RawObject,
    finalizers,
    owner_references,
)
from kubesched.controllers.garbagecollector.graph_builder import (
    GraphBuilder,
    InformerFactory,
    stop_all,
)
from kubesched.controllers.garbagecollector.restmapper import RestMapper
from kubesched.kube import Client, Informer, KubeError, Resource
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

log = logging.getLogger(__name__)

#: The controller's name (``names.GarbageCollectorController``).
NAME = "garbage-collector-controller"

#: kube-controller-manager's ``--concurrent-gc-syncs`` is 20 goroutines; asyncio tasks
#: wait on the same client, so fewer do as well.
DEFAULT_WORKERS = 8
#: Seconds between discoveries of new collections (kube-controller-manager: 30 s).
DEFAULT_RESYNC_PERIOD = 30.0
#: Discovery asked for by an unknown kind waits at least this long after the last one.
MIN_REDISCOVERY_INTERVAL = 1.0


class InvalidOwnerReference(Exception):
    """A cluster-scoped object names a namespaced owner: never retried."""


class RestMappingError(Exception):
    """A reference names a kind the server does not serve (yet): retried with backoff."""


class GarbageCollector:
    """Run with ``await gc.run()`` (until cancelled) against ``client``'s server.

    **informer_factory**: makes the informer of one collection (default: a new
    :class:`~kubesched.kube.Informer`; a controller manager passes its shared ones).
    **workers**: concurrent deletions. **resync_period**: seconds between discoveries.
    """

    def __init__(
        self,
        client: Client,
        informer_factory: InformerFactory | None = None,
        workers: int = DEFAULT_WORKERS,
        resync_period: float = DEFAULT_RESYNC_PERIOD,
    ) -> None:
        self.client = client
        self.workers = workers
        self.resync_period = resync_period
        self.mapper = RestMapper()
        self.attempt_to_delete: WorkQueue[str] = WorkQueue("garbage_collector_attempt_to_delete")
        self.attempt_to_orphan: WorkQueue[str] = WorkQueue("garbage_collector_attempt_to_orphan")
        #: Whether the informers are ours to stop (not a controller manager's).
        self._owns_informers = informer_factory is None
        factory = informer_factory or (lambda res: Informer(client, res))
        self.builder = GraphBuilder(factory, self.attempt_to_delete, self.attempt_to_orphan)
        self._started: list[Informer[Any]] = []
        self.synced = asyncio.Event()
        self._rediscover = asyncio.Event()

    @property
    def graph_size(self) -> int:
        """Objects (and virtual owners) in the dependency graph."""
        return len(self.builder.graph)

    async def run(self) -> None:
        """Discover, watch, wait for the caches, then collect until cancelled."""
        tasks: list[asyncio.Task[None]] = []
        try:
            await self._resync()
            tasks.append(asyncio.create_task(self.builder.run(), name="gc graph builder"))
            while not self.builder.has_synced():
                await asyncio.sleep(0.05)
            self.synced.set()
            for i in range(self.workers):
                tasks.append(asyncio.create_task(self._delete_worker(), name=f"gc delete {i}"))
            tasks.append(asyncio.create_task(self._orphan_worker(), name="gc orphan"))
            while True:
                # Every resync_period, or sooner (at most once a second) when a reference
                # names a kind not yet discovered: a custom resource's new CRD.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._rediscover.wait(), self.resync_period)
                self._rediscover.clear()
                await asyncio.sleep(MIN_REDISCOVERY_INTERVAL)
                try:
                    await self._resync()
                except KubeError as exc:
                    log.warning("garbage collector: discovery failed: %s", exc)
        finally:
            self.attempt_to_delete.shut_down()
            self.attempt_to_orphan.shut_down()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self._owns_informers:
                await stop_all(self._started)

    async def _resync(self) -> None:
        await self.mapper.refresh(self.client)
        for informer in self.builder.sync_monitors(self.mapper.watchable):
            informer.start()  # a shared informer that runs already is left as it is
            self._started.append(informer)

    # --- workers --------------------------------------------------------------------

    async def _delete_worker(self) -> None:
        queue = self.attempt_to_delete
        while True:
            uid = await queue.get()
            if uid is None:
                return
            try:
                node = self.builder.graph.get(uid)
                if node is None:
                    queue.forget(uid)
                    continue
                await self.attempt_to_delete_item(node)
                if node.virtual:
                    # Exists but not observed yet: look again until an informer sees it
                    # (or its deletion), so a virtual node never sticks (issue 56121).
                    queue.add_rate_limited(uid)
                else:
                    queue.forget(uid)
            except (_VirtualDeleteQueued, InvalidOwnerReference) as exc:
                # Handled elsewhere, or an error no retry can mend.
                if isinstance(exc, InvalidOwnerReference):
                    log.warning("garbage collector: %s", exc)
                queue.forget(uid)
            except (KubeError, RestMappingError) as exc:
                log.info("garbage collector: %s; retrying", exc)
                queue.add_rate_limited(uid)
            except Exception:
                log.exception("garbage collector: deleting %s failed", uid)
                queue.add_rate_limited(uid)
            finally:
                queue.done(uid)

    async def _orphan_worker(self) -> None:
        queue = self.attempt_to_orphan
        while True:
            uid = await queue.get()
            if uid is None:
                return
            try:
                node = self.builder.graph.get(uid)
                if node is not None:
                    await self.orphan_dependents(node)
                queue.forget(uid)
            except (KubeError, RestMappingError) as exc:
                log.info("garbage collector: %s; retrying", exc)
                queue.add_rate_limited(uid)
            except Exception:
                log.exception("garbage collector: orphaning %s failed", uid)
                queue.add_rate_limited(uid)
            finally:
                queue.done(uid)

    # --- decisions ------------------------------------------------------------------

    def _resource(self, group: str, kind: str) -> Resource[RawObject]:
        res = self.mapper.resource_for(group, kind)
        if res is None:
            self._rediscover.set()
            raise RestMappingError(f"no served collection holds kind {kind!r} of group {group!r}")
        return res

    async def attempt_to_delete_item(self, node: Node) -> None:
        """Delete ``node``'s object if its owners are gone, or move its foreground
        deletion on (``attemptToDeleteItem``)."""
        if node.being_deleted and not node.deleting_dependents:
            return  # its deletion is under way and waits for no dependent
        identity = node.identity
        res = self._resource(identity.group, identity.kind)
        latest = await operations.get_object(self.client, res, identity)
        if latest is None:
            # No such object: a virtual node goes (and its dependents are looked at).
            self.builder.enqueue_virtual_delete(identity)
            raise _VirtualDeleteQueued
        meta = latest.get("metadata") or {}
        if meta.get("deletionTimestamp") and FOREGROUND_FINALIZER not in finalizers(latest):
            return
        if node.deleting_dependents:
            await self._process_deleting_dependents(node, res)
            return
        refs = owner_references(latest)
        if not refs:
            return
        solid, dangling, waiting = await self._classify(refs, identity)
        if solid:
            if not dangling and not waiting:
                return
            # A live owner keeps the object; references to the others go.
            gone = {ref.uid for ref in dangling + waiting}
            await operations.patch_metadata(
                self.client, res, identity, operations.without_owners(gone)
            )
        elif waiting and node.dependents:
            if any(dep.deleting_dependents for dep in node.dependents):
                # A cycle of foreground deletions: stop blocking our owners, or neither
                # side could ever finish.
                await operations.patch_metadata(
                    self.client, res, identity, operations.unblocking({r.uid for r in waiting})
                )
            await operations.delete_object(self.client, res, identity, "Foreground")
        else:
            fins = finalizers(latest)
            if ORPHAN_FINALIZER in fins:
                policy = "Orphan"
            elif FOREGROUND_FINALIZER in fins:
                policy = "Foreground"
            else:
                policy = "Background"
            log.info(
                "garbage collector: deleting %s (%s): its owners are gone or being deleted",
                identity,
                policy,
            )
            await operations.delete_object(self.client, res, identity, policy)

    async def _classify(
        self, refs: tuple[OwnerReference, ...], dependent: ObjectIdentity
    ) -> tuple[list[OwnerReference], list[OwnerReference], list[OwnerReference]]:
        """Owners that live, that are dangling, and that wait in the foreground for
        their dependents (``classifyReferences``)."""
        solid, dangling, waiting = [], [], []
        for ref in refs:
            owner = await self._owner(ref, dependent)
            if owner is None:
                dangling.append(ref)
            elif (owner.get("metadata") or {}).get("deletionTimestamp") and (
                FOREGROUND_FINALIZER in finalizers(owner)
            ):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    async def _owner(self, ref: OwnerReference, dependent: ObjectIdentity) -> RawObject | None:
        """The live owner named by ``ref``, or None if it is dangling (``isDangling``)."""
        if self.builder.is_absent(ref.uid):
            return None
        res = self._resource(ref.group, ref.kind)
        if res.namespaced and not dependent.namespace:
            # Upstream leaves such an object alone (event OwnerRefInvalidNamespace).
            raise InvalidOwnerReference(
                f"{dependent} names a namespaced owner {ref.kind} {ref.name!r}; "
                "a cluster-scoped object cannot be owned by a namespaced one"
            )
        identity = ObjectIdentity(ref.api_version, ref.kind, dependent.namespace, ref.name, ref.uid)
        # A live GET, not the cache: deleting on a stale cache cannot be undone.
        owner = await operations.get_object(self.client, res, identity)
        if owner is None:
            self.builder.mark_absent(ref.uid)
        return owner

    async def _process_deleting_dependents(self, node: Node, res: Resource[RawObject]) -> None:
        blocking = node.blocking_dependents()
        if not blocking:
            log.info("garbage collector: %s has no blocking dependents left", node.identity)
            await operations.patch_metadata(
                self.client,
                res,
                node.identity,
                operations.without_finalizer(FOREGROUND_FINALIZER),
            )
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self.attempt_to_delete.add(dep.identity.uid)

    async def orphan_dependents(self, owner: Node) -> None:
        """Drop the references to ``owner`` from its dependents, then its ``orphan``
        finalizer (``attemptToOrphanWorker``)."""
        uid = owner.identity.uid
        for dep in list(owner.dependents):
            res = self._resource(dep.identity.group, dep.identity.kind)
            await operations.patch_metadata(
                self.client, res, dep.identity, operations.without_owners({uid})
            )
        res = self._resource(owner.identity.group, owner.identity.kind)
        await operations.patch_metadata(
            self.client, res, owner.identity, operations.without_finalizer(ORPHAN_FINALIZER)
        )


class _VirtualDeleteQueued(Exception):
    """The object does not exist; the graph builder drops its node."""


def start_garbage_collector(ctx: ControllerContext) -> GarbageCollector:
    """The garbage collector's init function for the controller manager: it shares the
    manager's informers (pods, Jobs, ...) and asks for one per collection it finds."""
    return GarbageCollector(
        ctx.client(NAME),
        informer_factory=ctx.informers.informer,
        resync_period=ctx.options.gc_resync_period,
    )
