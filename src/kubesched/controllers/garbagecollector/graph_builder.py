"""The graph builder: informers on every collection feed one ordered stream of changes
into the dependency graph, and the changes that call for action queue work.

Handlers only queue the change (they run in the informers' tasks); one task applies the
changes in order (``processGraphChanges`` in ``graph_builder.go``). What it queues:

* an owner seen only through a reference (a *virtual* node) → ``attempt_to_delete``, to
  check that it exists;
* an object deleted → its dependents (their owner may now be dangling), and its owners
  that wait in the foreground for their dependents;
* an object that starts being deleted with the ``orphan`` finalizer → ``attempt_to_orphan``;
  with ``foregroundDeletion`` → it and its dependents, to ``attempt_to_delete``;
* a dependent that stops blocking an owner waiting in the foreground → that owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.controllers.garbagecollector.graph import (
    FOREGROUND_FINALIZER,
    ORPHAN_FINALIZER,
    Graph,
    Node,
    ObjectIdentity,
    OwnerReference,
    RawObject,
    being_deleted,
    finalizers,
    identity_of,
    owner_references,
)
from kubesched.kube import Informer, Resource
from kubesched.kube.workqueue import WorkQueue

log = logging.getLogger(__name__)

#: Owners known not to exist, by uid, so that their dependents need no GET each
#: (``absentOwnerCache``; upstream keeps 500).
ABSENT_OWNER_CACHE_SIZE = 500

InformerFactory = Callable[[Resource[RawObject]], Informer[Any]]


@dataclass(frozen=True)
class _Change:
    kind: str  # "add", "update", "delete", or "virtual-delete"
    obj: RawObject | None
    old: RawObject | None
    resource: Resource[RawObject] | None
    identity: ObjectIdentity | None = None


class GraphBuilder:
    """Keeps :attr:`graph` in step with the monitored collections."""

    def __init__(
        self,
        informer_factory: InformerFactory,
        attempt_to_delete: WorkQueue[str],
        attempt_to_orphan: WorkQueue[str],
    ) -> None:
        self.graph = Graph()
        self.informer_factory = informer_factory
        self.attempt_to_delete = attempt_to_delete
        self.attempt_to_orphan = attempt_to_orphan
        #: One informer per collection, keyed by (group, plural).
        self.monitors: dict[tuple[str, str], Informer[Any]] = {}
        self._changes: asyncio.Queue[_Change] = asyncio.Queue()
        self._absent: OrderedDict[str, None] = OrderedDict()

    # --- monitors -------------------------------------------------------------------

    def sync_monitors(self, resources: list[Resource[RawObject]]) -> list[Informer[Any]]:
        """Watch each of ``resources`` not yet watched; stop watching collections no
        longer served. Returns the new informers (not started)."""
        wanted = {(res.group, res.plural): res for res in resources}
        for key in [k for k in self.monitors if k not in wanted]:
            informer = self.monitors.pop(key)
            asyncio.get_running_loop().create_task(informer.stop())
        created = []
        for key, res in wanted.items():
            if key in self.monitors:
                continue
            informer = self.informer_factory(res)
            informer.add_handler(*self._handlers(res))
            # A shared informer may have listed already: late handlers are not told of
            # what it holds, so replay it (an add of a known object is an update).
            for obj in informer.list():
                self._put(_Change("add", obj, None, res))
            self.monitors[key] = informer
            created.append(informer)
        return created

    def _handlers(
        self, res: Resource[RawObject]
    ) -> tuple[
        Callable[[RawObject], None],
        Callable[[RawObject, RawObject], None],
        Callable[[RawObject], None],
    ]:
        def on_add(obj: RawObject) -> None:
            self._put(_Change("add", obj, None, res))

        def on_update(old: RawObject, new: RawObject) -> None:
            self._put(_Change("update", new, old, res))

        def on_delete(obj: RawObject) -> None:
            self._put(_Change("delete", obj, None, res))

        return on_add, on_update, on_delete

    def has_synced(self) -> bool:
        """Whether every monitor has listed once."""
        return all(informer.has_synced.is_set() for informer in self.monitors.values())

    def _put(self, change: _Change) -> None:
        self._changes.put_nowait(change)

    def enqueue_virtual_delete(self, identity: ObjectIdentity) -> None:
        """The object of a virtual node does not exist: drop the node (in order with
        the other changes) and look at its dependents."""
        self._put(_Change("virtual-delete", None, None, None, identity))

    # --- the absent-owner cache -----------------------------------------------------

    def is_absent(self, uid: str) -> bool:
        """Whether the owner ``uid`` is known not to exist."""
        if uid in self._absent:
            self._absent.move_to_end(uid)
            return True
        return False

    def mark_absent(self, uid: str) -> None:
        """Remember that no object has ``uid`` any more."""
        self._absent[uid] = None
        self._absent.move_to_end(uid)
        while len(self._absent) > ABSENT_OWNER_CACHE_SIZE:
            self._absent.popitem(last=False)

    # --- applying changes -----------------------------------------------------------

    async def run(self) -> None:
        """Apply changes as they come, until cancelled."""
        while True:
            change = await self._changes.get()
            try:
                self.process(change)
            except Exception:
                log.exception("garbage collector: could not apply a %s change", change.kind)

    def pending(self) -> int:
        """Changes not yet applied."""
        return self._changes.qsize()

    def process(self, change: _Change) -> None:
        """Apply one change to the graph and queue the work it calls for."""
        if change.kind == "virtual-delete":
            assert change.identity is not None
            self._virtual_delete(change.identity)
            return
        obj, res = change.obj, change.resource
        assert obj is not None and res is not None
        identity = identity_of(obj, res.group_version, res.kind)
        if not identity.uid:
            return
        node = self.graph.get(identity.uid)
        if node is not None and node.virtual and change.kind != "delete":
            # The owner we only knew by reference is observed now.
            node.virtual = False
            if node.identity != identity:
                # Some dependent named it by another kind or name: let each check its refs.
                for dep in node.dependents:
                    self.attempt_to_delete.add(dep.identity.uid)
            node.identity = identity
        if change.kind == "delete":
            if node is not None:
                self._remove(node)
            return
        if node is None:
            node = Node(
                identity,
                owner_references(obj),
                being_deleted=being_deleted(obj),
                deleting_dependents=being_deleted(obj) and FOREGROUND_FINALIZER in finalizers(obj),
            )
            for owner in self.graph.insert(node):
                self.attempt_to_delete.add(owner.identity.uid)
        else:
            self._update_owners(node, owner_references(obj))
            if being_deleted(obj):
                node.being_deleted = True
        self._transitions(change.old, obj, node)

    def _update_owners(self, node: Node, refs: tuple[OwnerReference, ...]) -> None:
        if refs == node.owners:
            return
        old = {ref.uid: ref for ref in node.owners}
        new = {ref.uid: ref for ref in refs}
        added = [ref for uid, ref in new.items() if uid not in old]
        removed = [ref for uid, ref in old.items() if uid not in new]
        # An owner waiting in the foreground may be unblocked: a blocking reference went,
        # or stopped blocking.
        for ref in removed:
            if ref.block_owner_deletion:
                self._requeue_deleting_owner(ref.uid)
        for uid, ref in new.items():
            before = old.get(uid)
            if before is not None and before.block_owner_deletion and not ref.block_owner_deletion:
                self._requeue_deleting_owner(uid)
        node.owners = refs
        for owner in self.graph.add_dependent_to_owners(node, added):
            self.attempt_to_delete.add(owner.identity.uid)
        self.graph.remove_dependent_from_owners(node, removed)

    def _requeue_deleting_owner(self, uid: str) -> None:
        owner = self.graph.get(uid)
        if owner is not None and owner.deleting_dependents:
            self.attempt_to_delete.add(uid)

    def _transitions(self, old: RawObject | None, obj: RawObject, node: Node) -> None:
        if _starts_waiting(old, obj, ORPHAN_FINALIZER):
            self.attempt_to_orphan.add(node.identity.uid)
            return
        if _starts_waiting(old, obj, FOREGROUND_FINALIZER):
            # Set here too: a node first built as virtual did not know it.
            node.deleting_dependents = True
            for dep in node.dependents:
                self.attempt_to_delete.add(dep.identity.uid)
            self.attempt_to_delete.add(node.identity.uid)

    def _remove(self, node: Node) -> None:
        self.graph.remove(node)
        if node.dependents:
            self.mark_absent(node.identity.uid)
        for dep in node.dependents:
            self.attempt_to_delete.add(dep.identity.uid)
        for ref in node.owners:
            # A dependent of an owner waiting in the foreground is gone: maybe the last.
            self._requeue_deleting_owner(ref.uid)

    def _virtual_delete(self, identity: ObjectIdentity) -> None:
        node = self.graph.get(identity.uid)
        if node is None:
            return
        if not node.virtual:
            # Observed meanwhile: the informers' own events decide its fate. Dependents
            # that named it by another identity are looked at again.
            if node.identity != identity:
                for dep in node.dependents:
                    self.attempt_to_delete.add(dep.identity.uid)
            return
        self.mark_absent(identity.uid)
        self._remove(node)


def _starts_waiting(old: RawObject | None, new: RawObject, finalizer: str) -> bool:
    """Whether ``new`` is being deleted with ``finalizer`` and ``old`` was not."""
    if not (being_deleted(new) and finalizer in finalizers(new)):
        return False
    return old is None or not (being_deleted(old) and finalizer in finalizers(old))


async def stop_all(informers: list[Informer[Any]]) -> None:
    """Stop informers, ignoring those already stopped."""
    for informer in informers:
        with contextlib.suppress(Exception):
            await informer.stop()
