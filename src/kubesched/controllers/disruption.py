"""The disruption controller: PodDisruptionBudget status, as kube-controller-manager's
``pkg/controller/disruption`` keeps it, a client of the API server.

It follows pods and PDBs through the shared informers. A change to a PDB, or to a pod in a
namespace that has PDBs, queues that namespace; every ``resync`` seconds every namespace
with PDBs is queued too, so that stale ``disruptedPods`` entries expire. Syncing a
namespace recomputes each of its PDBs' status from the caches
(:func:`kubesched.objects.disruption.compute_status`: what is covered, currentHealthy,
desiredHealthy, disruptionsAllowed, the DisruptionAllowed condition) and writes it
through ``/status`` only when it changed, with the resourceVersion read (optimistic
concurrency); a conflict queues the namespace again shortly, by when the informer has
the newer PDB.

Difference from upstream: ``expectedPods`` is the number of matched pods (see
:mod:`kubesched.objects.disruption`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.kube import Client, Conflict, KubeError, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.resources import POD_DISRUPTION_BUDGETS, PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.disruption import compute_status

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "DisruptionController", "start_disruption_controller"]

log = logging.getLogger(__name__)

NAME = "disruption-controller"
#: Seconds before a namespace whose write conflicted is synced again.
CONFLICT_DELAY = 0.01


class DisruptionController:
    """Keeps PDB status current; built by :func:`start_disruption_controller`."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        pdbs: Informer[RawObject],
        resync: float = 5.0,
        workers: int = 2,
    ) -> None:
        self.client = client
        self.pod_informer = pods
        self.pdb_informer = pdbs
        self.resync = resync
        self.workers = max(workers, 1)
        self._pods: dict[str, set[str]] = {}
        self._pdbs: dict[str, set[str]] = {}
        self._queue: WorkQueue[str] = WorkQueue("disruption")
        pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_pod_delete)
        pdbs.add_handler(self._on_pdb, lambda _, new: self._on_pdb(new), self._on_pdb_delete)

    def _on_pod(self, pod: RawObject) -> None:
        meta = pod["metadata"]
        ns = str(meta.get("namespace") or "")
        self._pods.setdefault(ns, set()).add(str(meta["name"]))
        if ns in self._pdbs:
            self._queue.add(ns)

    def _on_pod_delete(self, pod: RawObject) -> None:
        meta = pod["metadata"]
        ns = str(meta.get("namespace") or "")
        names = self._pods.get(ns)
        if names is not None:
            names.discard(str(meta["name"]))
            if not names:
                del self._pods[ns]
        if ns in self._pdbs:
            self._queue.add(ns)

    def _on_pdb(self, pdb: RawObject) -> None:
        meta = pdb["metadata"]
        ns = str(meta.get("namespace") or "")
        self._pdbs.setdefault(ns, set()).add(str(meta["name"]))
        self._queue.add(ns)

    def _on_pdb_delete(self, pdb: RawObject) -> None:
        meta = pdb["metadata"]
        ns = str(meta.get("namespace") or "")
        names = self._pdbs.get(ns)
        if names is not None:
            names.discard(str(meta["name"]))
            if not names:
                del self._pdbs[ns]

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]
        try:
            while True:
                await asyncio.sleep(self.resync)
                for ns in list(self._pdbs):
                    self._queue.add(ns)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _work(self) -> None:
        while True:
            ns = await self._queue.get()
            if ns is None:
                return  # shut down
            try:
                if not await self.sync_namespace(ns):
                    self._queue.add_after(ns, CONFLICT_DELAY)
            except asyncio.CancelledError:
                raise
            except KubeError as exc:
                log.warning("disruption: namespace %r: %s", ns, exc)
                self._queue.add_after(ns, 1.0)
            except Exception:  # a bug: log it, keep running
                log.exception("disruption: syncing namespace %r failed", ns)
            finally:
                self._queue.done(ns)

    async def sync_namespace(self, ns: str) -> bool:
        """Bring every PDB of ``ns`` up to date; False if one needs another pass."""
        pdbs = [self.pdb_informer.get(f"{ns}/{n}") for n in sorted(self._pdbs.get(ns, ()))]
        if not pdbs:
            return True
        pods = [self.pod_informer.get(f"{ns}/{n}") for n in self._pods.get(ns, ())]
        present = [p for p in pods if p is not None]
        now = datetime.now(UTC)
        done = True
        for pdb in pdbs:
            if pdb is None:
                continue
            try:
                status = compute_status(pdb, present, now)
            except ValueError as exc:
                log.warning("disruption: PDB %s/%s: %s", ns, pdb["metadata"]["name"], exc)
                continue
            if status == pdb.get("status"):
                continue
            new = dict(pdb, status=status)
            try:
                await self.client.update(POD_DISRUPTION_BUDGETS.raw, new, "status")
            except NotFound:
                continue
            except Conflict:
                done = False
        return done


def start_disruption_controller(ctx: ControllerContext) -> DisruptionController:
    """The disruption controller's init function for the controller manager."""
    return DisruptionController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(POD_DISRUPTION_BUDGETS),
        resync=ctx.options.disruption_resync,
    )
