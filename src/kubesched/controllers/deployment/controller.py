"""The Deployment controller's frame, after upstream's ``deployment_controller.go``:
informer handlers that turn Deployment, ReplicaSet and Pod changes into Deployment keys,
workers, and ``syncDeployment``, which claims the Deployment's ReplicaSets and hands over
to the strategy (:mod:`.rolling`, :mod:`.recreate`) or to :mod:`.sync` for scaling
events and paused Deployments.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion
from kubesched.controllers.controller_utils import (
    WrittenVersions,
    owners_selecting,
    resolve_controller_ref,
    run_workers,
)
from kubesched.controllers.deployment import recreate, rolling, sync
from kubesched.controllers.ownerindex import OwnerIndex, object_key, shared_index
from kubesched.kube import Client, Informer
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS, REPLICA_SETS, RawObject, Resource
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import controller_of
from kubesched.objects.selectors import LabelSelector

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["COMPONENT", "DEPLOYMENTS", "DeploymentController", "start_deployment_controller"]

log = logging.getLogger(__name__)

#: apps/v1 Deployments, as plain dicts.
DEPLOYMENTS: Resource[RawObject] = Resource(
    "apps", "v1", "deployments", "Deployment", True, lambda raw: raw
)
API_VERSION = "apps/v1"
KIND = "Deployment"
COMPONENT = "deployment-controller"
#: ``--concurrent-deployment-syncs`` default.
DEFAULT_WORKERS = 5


class DeploymentController:
    """Rolls each Deployment's pods out through ReplicaSets.

    **deployments**, **replica_sets**, **pods**: informers of plain dicts (shareable;
    add this controller before starting them). **rs_index** / **pod_index**:
    :class:`OwnerIndex` es of the ReplicaSets and pods, made when not given. **clock**:
    wall-clock seconds (conditions, progress deadlines).
    """

    def __init__(
        self,
        client: Client,
        deployments: Informer[RawObject],
        replica_sets: Informer[RawObject],
        pods: Informer[RawObject],
        *,
        rs_index: OwnerIndex | None = None,
        pod_index: OwnerIndex | None = None,
        workers: int = DEFAULT_WORKERS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.deployments = deployments
        self.replica_sets = replica_sets
        self.pods = pods
        self.workers = workers
        self.clock = clock
        if rs_index is None:
            rs_index = OwnerIndex()
            rs_index.attach(replica_sets)
        if pod_index is None:
            pod_index = OwnerIndex()
            pod_index.attach(pods)
        self.rs_index = rs_index
        self.pod_index = pod_index
        self.recorder = EventRecorder(client, COMPONENT)
        self.queue: WorkQueue[str] = WorkQueue(COMPONENT)
        self.written = WrittenVersions()
        deployments.add_handler(self._enqueue, lambda _old, new: self._enqueue(new), self._enqueue)
        replica_sets.add_handler(self._add_rs, self._update_rs, self._delete_rs)
        pods.add_handler(on_delete=self._delete_pod)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the informers' first lists, then sync until cancelled."""
        for informer in (self.deployments, self.replica_sets, self.pods):
            await informer.has_synced.wait()
        try:
            await run_workers(self.queue, self.sync, COMPONENT, self.workers)
        finally:
            await self.recorder.flush()

    def enqueue_after(self, d: RawObject, delay: float) -> None:
        self.queue.add_after(object_key(d), delay)

    def enqueue_rate_limited(self, d: RawObject) -> None:
        self.queue.add_rate_limited(object_key(d))

    # --- handlers ---------------------------------------------------------------------

    def _enqueue(self, d: RawObject) -> None:
        self.queue.add(object_key(d))

    def _resolve(self, namespace: str, ref: dict[str, Any] | None) -> RawObject | None:
        return resolve_controller_ref(self.deployments, namespace, ref, KIND)

    def _deployments_for_rs(self, rs: RawObject) -> list[RawObject]:
        """``getDeploymentsForReplicaSet``: Deployments whose selector matches an orphan."""
        return owners_selecting(self.deployments, rs)

    def _add_rs(self, rs: RawObject) -> None:
        meta = rs.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            self._delete_rs(rs)
            return
        ref = controller_of(rs)
        if ref is not None:
            d = self._resolve(meta.get("namespace") or "", ref)
            if d is not None:
                self._enqueue(d)
            return
        for d in self._deployments_for_rs(rs):
            self._enqueue(d)

    def _update_rs(self, old: RawObject, new: RawObject) -> None:
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("resourceVersion") == new_meta.get("resourceVersion"):
            return
        namespace = new_meta.get("namespace") or ""
        old_ref, new_ref = controller_of(old), controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            d = self._resolve(namespace, old_ref)
            if d is not None:
                self._enqueue(d)
        if new_ref is not None:
            d = self._resolve(namespace, new_ref)
            if d is not None:
                self._enqueue(d)
            return
        if old_meta.get("labels") != new_meta.get("labels") or old_ref != new_ref:
            for d in self._deployments_for_rs(new):
                self._enqueue(d)

    def _delete_rs(self, rs: RawObject) -> None:
        d = self._resolve((rs.get("metadata") or {}).get("namespace") or "", controller_of(rs))
        if d is not None:
            self._enqueue(d)

    def _delete_pod(self, pod: RawObject) -> None:
        """A Recreate Deployment waits for its old pods to be gone: look again when the
        last one goes (``deletePod``)."""
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or ""
        rs = None
        ref = controller_of(pod)
        if ref is not None and ref.get("kind") == "ReplicaSet":
            rs = self.replica_sets.get(f"{namespace}/{ref.get('name', '')}")
        if rs is None:
            return
        d = self._resolve(namespace, controller_of(rs))
        if d is None:
            return
        strategy = ((d.get("spec") or {}).get("strategy") or {}).get("type")
        if strategy != "Recreate":
            return
        uid = (d.get("metadata") or {}).get("uid") or ""
        for owned in self.rs_index.owned_by(uid):
            if self.pod_index.owned_by((owned.get("metadata") or {}).get("uid") or ""):
                return
        self._enqueue(d)

    # --- sync -------------------------------------------------------------------------

    def pod_map(self, rs_list: list[RawObject]) -> dict[str, list[RawObject]]:
        """``getPodMapForDeployment``: each ReplicaSet's pods, by ReplicaSet UID."""
        return {
            uid: self.pod_index.owned_by(uid)
            for uid in ((rs.get("metadata") or {}).get("uid") or "" for rs in rs_list)
        }

    async def _claim_replica_sets(self, d: RawObject, selector: LabelSelector) -> list[RawObject]:
        """``getReplicaSetsForDeployment``: adopt and release by selector."""
        meta = d["metadata"]
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        uid = str(meta.get("uid") or "")

        async def fetch() -> RawObject:
            fresh: RawObject = await self.client.get(DEPLOYMENTS, name, namespace)
            return fresh

        async def patch(ns: str, rs_name: str, body: object) -> RawObject:
            patched: RawObject = await self.client.patch(
                REPLICA_SETS.raw, rs_name, body, ns, patch_type="strategic"
            )
            return patched

        manager = ControllerRefManager(
            d,
            API_VERSION,
            KIND,
            selector,
            patch,
            recheck_deletion(fetch, uid, f"Deployment {namespace}/{name}"),
        )
        candidates = self.rs_index.owned_by(uid) + self.rs_index.orphans(namespace)
        return await manager.claim(candidates)

    async def sync(self, key: str) -> None:
        """``syncDeployment``: one Deployment, from the caches."""
        cached = self.deployments.get(key)
        if cached is None:
            self.written.forget(key)
            return
        if self.written.stale(key, cached):
            return  # our own write is on its way to the cache
        d = copy.deepcopy(cached)
        d.setdefault("apiVersion", API_VERSION)
        d.setdefault("kind", KIND)
        raw_selector = (d.get("spec") or {}).get("selector")
        if not raw_selector or raw_selector == {}:
            self.recorder.event(
                d,
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            status = d.setdefault("status", {})
            generation = d["metadata"].get("generation") or 0
            if int(status.get("observedGeneration") or 0) < generation:
                status["observedGeneration"] = generation
                await sync.update_status(self, d)
            return
        try:
            selector = LabelSelector.from_dict(raw_selector)
        except ObjectError as exc:
            log.warning("Deployment %s: invalid selector: %s", key, exc)
            return
        rs_list = await self._claim_replica_sets(d, selector)
        if d["metadata"].get("deletionTimestamp"):
            await sync.sync_status_only(self, d, rs_list)
            return
        # Paused/resumed conditions first: a resumed Deployment must not count its
        # pause against the progress deadline.
        await sync.check_paused_conditions(self, d)
        if (d.get("spec") or {}).get("paused"):
            await sync.sync(self, d, rs_list)
            return
        if await sync.is_scaling_event(self, d, rs_list):
            await sync.sync(self, d, rs_list)
            return
        strategy = ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate")
        if strategy == "Recreate":
            await recreate.rollout_recreate(self, d, rs_list, self.pod_map(rs_list))
        else:
            await rolling.rollout_rolling(self, d, rs_list)


def start_deployment_controller(ctx: ControllerContext) -> DeploymentController:
    """The Deployment controller's init function for the controller manager."""
    replica_sets = ctx.informers.informer(REPLICA_SETS)
    pods = ctx.informers.informer(PODS)
    return DeploymentController(
        ctx.client(COMPONENT),
        ctx.informers.informer(DEPLOYMENTS),
        replica_sets,
        pods,
        rs_index=shared_index(replica_sets),
        pod_index=shared_index(pods),
    )
