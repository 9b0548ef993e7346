"""The PersistentVolume binder (``persistentvolume-binder-controller``), after upstream's
``pkg/controller/volume/persistentvolume`` (``pv_controller.go``, ``pv_controller_base.go``)
of release-1.34.

Binding is a two-step protocol on the two objects' pointers, ``pv.spec.claimRef`` and
``pvc.spec.volumeName``: the volume is written first, then the claim, and every state in
between is one a later sync finishes or undoes, whoever wrote it (this controller, the
scheduler's VolumeBinding, a user pre-binding either side, a provisioner that creates a
volume already pointing at its claim).

* :meth:`~PersistentVolumeController.sync_claim` (``syncClaim``): a claim without
  ``pv.kubernetes.io/bind-completed`` gets the smallest matching volume
  (:func:`kubesched.objects.storage.binding.find_best_match_for_claim`); a
  WaitForFirstConsumer claim gets only a volume pre-bound to it, until the scheduler
  writes ``volume.kubernetes.io/selected-node``. With no volume, a claim without a class
  gets the default class (retroactively), then one with a class is handed to its
  provisioner (``volume.kubernetes.io/storage-provisioner``). A bound claim whose volume
  is gone or bound elsewhere is ``Lost``.
* :meth:`~PersistentVolumeController.sync_volume` (``syncVolume``): phases
  ``Available`` / ``Bound`` / ``Released`` / ``Failed``; a volume whose claim is gone is
  Released and reclaimed: ``Retain`` keeps it, ``Delete`` is its provisioner's to do for
  a provisioned (CSI) volume, anything else fails (no in-tree volume plugins here).

The controller keeps its own copies of volumes and claims, updated from the informers
and from the answers to its own writes, whichever is newer (``storeObjectUpdate``), so a
sync never acts on what it has just overwritten. Claims and volumes have a queue and one
worker each, as upstream.

Differs from upstream: a failed sync is retried with the queue's per-key backoff rather
than at the next resync (15 s); an Available volume and a new default class also requeue
the Pending claims they may serve, rather than waiting for the resync; no metrics, no CSI
migration annotations, no recycler.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_utils import process_queue
from kubesched.controllers.volume.binderutil import (
    annotations_of,
    bind_volume_to_claim,
    claim_has_class,
    claim_key,
    default_class,
    with_status,
)
from kubesched.controllers.volume.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from kubesched.kube import Client, Informer, KubeError, NotFound
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.storage.binding import (
    check_access_modes,
    check_volume_mode_mismatches,
    find_best_match_for_claim,
    is_delay_binding_mode,
    is_delay_binding_provisioning,
    is_volume_bound_to_claim,
)
from kubesched.objects.storage.persistentvolume import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_STORAGE_PROVISIONER,
    CLAIM_BOUND,
    CLAIM_LOST,
    CLAIM_PENDING,
    RECLAIM_DELETE,
    RECLAIM_RECYCLE,
    RECLAIM_RETAIN,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_FAILED,
    VOLUME_RELEASED,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.objects.storage.storageclass import StorageClass

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["EVENT_SOURCE", "NAME", "PersistentVolumeController", "start"]

log = logging.getLogger(__name__)

NAME = "persistentvolume-binder-controller"
#: The component its events come from.
EVENT_SOURCE = "persistentvolume-controller"
#: ``--pvclaimbinder-sync-period``: every claim and volume is synced again this often.
DEFAULT_RESYNC_PERIOD = 15.0

# Event reasons (pkg/controller/volume/events).
FAILED_BINDING = "FailedBinding"
VOLUME_MISMATCH = "VolumeMismatch"
VOLUME_FAILED_DELETE = "VolumeFailedDelete"
VOLUME_FAILED_RECYCLE = "VolumeFailedRecycle"
PROVISIONING_FAILED = "ProvisioningFailed"
EXTERNAL_PROVISIONING = "ExternalProvisioning"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
WAIT_FOR_POD_SCHEDULED = "WaitForPodScheduled"
CLAIM_LOST_REASON = "ClaimLost"
CLAIM_MISBOUND = "ClaimMisbound"


def _rv(obj: RawObject) -> int | None:
    text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


class _Store:
    """The newest copy of each object seen, from a watch or from our own write
    (``storeObjectUpdate``: an older resourceVersion never replaces a newer one)."""

    def __init__(self) -> None:
        self.items: dict[str, RawObject] = {}

    def update(self, key: str, obj: RawObject) -> bool:
        """Store ``obj`` unless what is stored is newer; whether it was stored."""
        old = self.items.get(key)
        if old is not None:
            new_rv, old_rv = _rv(obj), _rv(old)
            if new_rv is not None and old_rv is not None and new_rv < old_rv:
                return False
            if (old.get("metadata") or {}).get("uid") == (obj.get("metadata") or {}).get(
                "uid"
            ) and new_rv == old_rv:
                return False
        self.items[key] = obj
        return True

    def get(self, key: str) -> RawObject | None:
        return self.items.get(key)

    def delete(self, key: str) -> None:
        self.items.pop(key, None)


def _pod_claims(pod: RawObject) -> set[str]:
    """``namespace/name`` of every claim the pod's volumes use (ephemeral ones by their
    generated ``<pod>-<volume>`` name)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    found = set()
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            found.add(f"{namespace}/{source['claimName']}")
        elif isinstance(volume.get("ephemeral"), dict):
            found.add(f"{namespace}/{meta.get('name', '')}-{volume.get('name', '')}")
    return found


def _terminated(pod: RawObject) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class PersistentVolumeController:
    """Binds claims to volumes and keeps both phases; built by :func:`start`.

    **volumes**, **claims**, **classes**, **pods**: informers of plain dicts.
    **resync_period**: seconds between syncs of everything (0: none).
    """

    def __init__(
        self,
        client: Client,
        volumes: Informer[RawObject],
        claims: Informer[RawObject],
        classes: Informer[RawObject],
        pods: Informer[RawObject],
        resync_period: float = DEFAULT_RESYNC_PERIOD,
    ) -> None:
        self.client = client
        self.volume_informer = volumes
        self.claim_informer = claims
        self.class_informer = classes
        self.pod_informer = pods
        self.resync_period = resync_period
        self.recorder = EventRecorder(client, EVENT_SOURCE)
        self.volumes = _Store()
        self.claims = _Store()
        self.claim_queue: WorkQueue[str] = WorkQueue(f"{NAME}-claims")
        self.volume_queue: WorkQueue[str] = WorkQueue(f"{NAME}-volumes")
        self._pods_by_claim: dict[str, set[str]] = {}
        self._claims_by_pod: dict[str, set[str]] = {}
        self._views: dict[str, tuple[int | None, PersistentVolume]] = {}
        volumes.add_handler(
            self._volume_changed, lambda _, new: self._volume_changed(new), self._volume_deleted
        )
        claims.add_handler(
            self._claim_changed, lambda _, new: self._claim_changed(new), self._claim_deleted
        )
        classes.add_handler(self._class_changed, lambda _, new: self._class_changed(new))
        pods.add_handler(
            self._pod_changed, lambda _, new: self._pod_changed(new), self._pod_deleted
        )

    # --- event handlers (they only store and enqueue) ---------------------------------

    def _volume_changed(self, volume: RawObject) -> None:
        name = str(volume["metadata"]["name"])
        if not self.volumes.update(name, volume):
            return
        self.volume_queue.add(name)
        if (volume.get("spec") or {}).get("claimRef") is None:
            self._requeue_pending_claims(self._volume_class(volume))

    def _volume_deleted(self, volume: RawObject) -> None:
        name = str(volume["metadata"]["name"])
        self.volumes.delete(name)
        self._views.pop(name, None)
        ref = (volume.get("spec") or {}).get("claimRef")
        if isinstance(ref, dict) and ref.get("name"):
            self.claim_queue.add(f"{ref.get('namespace') or 'default'}/{ref['name']}")

    def _claim_changed(self, claim: RawObject) -> None:
        key = claim_key(claim)
        if self.claims.update(key, claim):
            self.claim_queue.add(key)

    def _claim_deleted(self, claim: RawObject) -> None:
        self.claims.delete(claim_key(claim))
        volume_name = (claim.get("spec") or {}).get("volumeName")
        if volume_name:
            self.volume_queue.add(str(volume_name))

    def _class_changed(self, cls: RawObject) -> None:
        # A new default class serves the claims waiting without one.
        if default_class([cls]) is not None:
            for key, claim in self.claims.items.items():
                if not claim_has_class(claim) and not self._bind_completed(claim):
                    self.claim_queue.add(key)

    def _pod_changed(self, pod: RawObject) -> None:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        self._pod_deleted(pod)
        claims = _pod_claims(pod)
        if claims:
            self._claims_by_pod[key] = claims
            for claim in claims:
                self._pods_by_claim.setdefault(claim, set()).add(key)

    def _pod_deleted(self, pod: RawObject) -> None:
        meta = pod.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        for claim in self._claims_by_pod.pop(key, ()):
            pods = self._pods_by_claim.get(claim)
            if pods is not None:
                pods.discard(key)
                if not pods:
                    del self._pods_by_claim[claim]

    def _requeue_pending_claims(self, class_name: str) -> None:
        for key, claim in self.claims.items.items():
            if self._bind_completed(claim) or (claim.get("spec") or {}).get("volumeName"):
                continue
            if self._claim_view(claim).storage_class_name == class_name:
                self.claim_queue.add(key)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Sync claims and volumes until cancelled (after the informers synced)."""
        for informer in (
            self.volume_informer,
            self.claim_informer,
            self.class_informer,
            self.pod_informer,
        ):
            await informer.has_synced.wait()
        tasks = [
            asyncio.create_task(process_queue(self.claim_queue, self.sync_claim_key, NAME)),
            asyncio.create_task(process_queue(self.volume_queue, self.sync_volume_key, NAME)),
        ]
        if self.resync_period > 0:
            tasks.append(asyncio.create_task(self._resync()))
        try:
            await asyncio.gather(*tasks)
        finally:
            self.claim_queue.shut_down()
            self.volume_queue.shut_down()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.recorder.flush()

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self.resync_period)
            for key in list(self.claims.items):
                self.claim_queue.add(key)
            for name in list(self.volumes.items):
                self.volume_queue.add(name)

    async def sync_claim_key(self, key: str) -> None:
        """Sync the claim ``namespace/name`` if it still exists."""
        claim = self.claims.get(key)
        if claim is not None:
            await self.sync_claim(claim)

    async def sync_volume_key(self, name: str) -> None:
        """Sync the volume ``name`` if it still exists."""
        volume = self.volumes.get(name)
        if volume is not None:
            await self.sync_volume(volume)

    # --- reading ----------------------------------------------------------------------

    def _volume_view(self, volume: RawObject) -> PersistentVolume:
        name = str(volume["metadata"]["name"])
        rv = _rv(volume)
        cached = self._views.get(name)
        if cached is not None and cached[0] == rv and rv is not None:
            return cached[1]
        view = PersistentVolume.from_dict(volume)
        self._views[name] = (rv, view)
        return view

    @staticmethod
    def _claim_view(claim: RawObject) -> PersistentVolumeClaim:
        return PersistentVolumeClaim.from_dict(claim)

    def _storage_class(self, name: str) -> StorageClass | None:
        raw = self.class_informer.get(name)
        return StorageClass.from_dict(raw) if raw is not None else None

    @staticmethod
    def _bind_completed(claim: RawObject) -> bool:
        return ANN_BIND_COMPLETED in annotations_of(claim)

    def _volume_class(self, volume: RawObject) -> str:
        try:
            return self._volume_view(volume).storage_class_name
        except ObjectError:
            return ""

    def _volume_views(self) -> Iterable[PersistentVolume]:
        for volume in list(self.volumes.items.values()):
            try:
                yield self._volume_view(volume)
            except ObjectError as exc:
                log.info("%s: skipping a volume that does not decode: %s", NAME, exc)

    # --- syncClaim --------------------------------------------------------------------

    async def sync_claim(self, claim: RawObject) -> None:
        """``syncClaim``: one step of binding ``claim``, from the state alone."""
        if not self._bind_completed(claim):
            await self._sync_unbound_claim(claim)
        else:
            await self._sync_bound_claim(claim)

    async def _sync_unbound_claim(self, claim: RawObject) -> None:
        view = self._claim_view(claim)
        if not view.volume_name:
            delay = is_delay_binding_mode(view, self._storage_class)
            found = find_best_match_for_claim(view, self._volume_views(), delay)
            if found is None:
                if await self._assign_default_storage_class(claim):
                    return  # the update event syncs the claim again
                if delay and not is_delay_binding_provisioning(view):
                    self._event_for_unbound_delay_binding_claim(claim)
                elif view.storage_class_name:
                    await self._provision_claim(claim, view)
                    return
                else:
                    self.recorder.event(
                        claim,
                        "Normal",
                        FAILED_BINDING,
                        "no persistent volumes available for this claim and no storage "
                        "class is set",
                    )
                await self._update_claim_status(claim, CLAIM_PENDING, None)
                return
            volume = self.volumes.get(found.name)
            if volume is not None:
                await self._bind(volume, claim)
            return
        # The user asked for a specific volume.
        volume = self.volumes.get(view.volume_name)
        if volume is None:
            await self._update_claim_status(claim, CLAIM_PENDING, None)
            return
        volume_view = self._volume_view(volume)
        if volume_view.claim_ref is None:
            problem = _unsatisfied(volume_view, view)
            if problem:
                self.recorder.event(
                    claim,
                    "Warning",
                    VOLUME_MISMATCH,
                    f'Cannot bind to requested volume "{volume_view.name}": {problem}',
                )
                await self._update_claim_status(claim, CLAIM_PENDING, None)
                return
            await self._bind(volume, claim)
        elif is_volume_bound_to_claim(volume_view, view):
            await self._bind(volume, claim)  # finish the binding: the claim's uid
        else:
            message = f'volume "{volume_view.name}" already bound to a different claim.'
            self.recorder.event(claim, "Warning", FAILED_BINDING, message)
            if ANN_BOUND_BY_CONTROLLER not in annotations_of(claim):
                await self._update_claim_status(claim, CLAIM_PENDING, None)
                return
            raise ObjectError(
                "spec.volumeName",
                f"invalid binding of claim {view.key} to volume {view.volume_name}: volume "
                f"already claimed by {volume_view.claim_ref.key}",
            )

    async def _sync_bound_claim(self, claim: RawObject) -> None:
        view = self._claim_view(claim)
        if not view.volume_name:
            await self._claim_lost(
                claim,
                CLAIM_LOST_REASON,
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
            )
            return
        volume = self.volumes.get(view.volume_name)
        if volume is None:
            await self._claim_lost(
                claim,
                CLAIM_LOST_REASON,
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
            )
            return
        ref = self._volume_view(volume).claim_ref
        if ref is None or ref.uid == view.uid:
            await self._bind(volume, claim)  # fix the volume, or confirm all is set
        else:
            await self._claim_lost(
                claim,
                CLAIM_MISBOUND,
                "Two claims are bound to the same volume, this one is bound incorrectly",
            )

    def _event_for_unbound_delay_binding_claim(self, claim: RawObject) -> None:
        """``emitEventForUnboundDelayBindingClaim``."""
        waiting = []
        for pod_key in sorted(self._pods_by_claim.get(claim_key(claim), ())):
            pod = self.pod_informer.get(pod_key)
            if pod is None or _terminated(pod) or (pod.get("spec") or {}).get("nodeName"):
                continue
            waiting.append(str(pod["metadata"]["name"]))
        if not waiting:
            self.recorder.event(
                claim,
                "Normal",
                WAIT_FOR_FIRST_CONSUMER,
                "waiting for first consumer to be created before binding",
            )
        elif len(waiting) == 1:
            self.recorder.event(
                claim,
                "Normal",
                WAIT_FOR_POD_SCHEDULED,
                f"waiting for pod {waiting[0]} to be scheduled",
            )
        else:
            self.recorder.event(
                claim,
                "Normal",
                WAIT_FOR_POD_SCHEDULED,
                f"waiting for pods {','.join(waiting)} to be scheduled",
            )

    # --- syncVolume -------------------------------------------------------------------

    async def sync_volume(self, volume: RawObject) -> None:
        """``syncVolume``: the volume's phase, and its reclaim once its claim is gone."""
        view = self._volume_view(volume)
        ref = view.claim_ref
        if ref is None or not ref.uid:
            # Unused, or pre-bound to a claim whose sync will finish the binding.
            await self._update_volume_phase(volume, VOLUME_AVAILABLE)
            return
        claim = self.claims.get(ref.key)
        if claim is None and view.phase not in (VOLUME_RELEASED, VOLUME_FAILED):
            # A provisioner or the scheduler may have bound it to a claim our cache has
            # not seen yet: ask the server before releasing the volume.
            claim = await self._get_claim(ref.namespace, ref.name)
        if claim is not None and (claim.get("metadata") or {}).get("uid") != ref.uid:
            claim = await self._get_claim(ref.namespace, ref.name)
            if claim is not None and (claim.get("metadata") or {}).get("uid") != ref.uid:
                claim = None  # deleted, and another claim of that name made since
        if claim is None:
            if view.phase not in (VOLUME_RELEASED, VOLUME_FAILED):
                log.info(
                    "%s: volume %s is released (reclaim policy %s)",
                    NAME,
                    view.name,
                    view.reclaim_policy,
                )
                volume = await self._update_volume_phase(volume, VOLUME_RELEASED)
            await self._reclaim_volume(volume)
            return
        claim_view = self._claim_view(claim)
        if not claim_view.volume_name:
            if check_volume_mode_mismatches(claim_view, view):
                self.recorder.event(
                    volume,
                    "Warning",
                    VOLUME_MISMATCH,
                    "Cannot bind PersistentVolume to requested PersistentVolumeClaim "
                    f'"{claim_view.name}" due to incompatible volumeMode.',
                )
                self.recorder.event(
                    claim,
                    "Warning",
                    VOLUME_MISMATCH,
                    f'Cannot bind PersistentVolume "{view.name}" to requested '
                    "PersistentVolumeClaim due to incompatible volumeMode.",
                )
                return
            # The volume points at the claim, the claim not yet at the volume (a
            # provisioner's new volume, the scheduler's binding): the claim's sync binds.
            self.claim_queue.add(claim_view.key)
            return
        if claim_view.volume_name == view.name:
            await self._update_volume_phase(volume, VOLUME_BOUND)
            return
        # The claim is bound to another volume.
        if (
            ANN_DYNAMICALLY_PROVISIONED in view.annotations
            and view.reclaim_policy == RECLAIM_DELETE
        ):
            if view.phase not in (VOLUME_RELEASED, VOLUME_FAILED):
                volume = await self._update_volume_phase(volume, VOLUME_RELEASED)
            await self._reclaim_volume(volume)
            return
        await self._unbind_volume(volume)

    async def _get_claim(self, namespace: str, name: str) -> RawObject | None:
        try:
            claim: RawObject = await self.client.get(PERSISTENT_VOLUME_CLAIMS, name, namespace)
        except NotFound:
            return None
        self.claims.update(claim_key(claim), claim)
        return self.claims.get(claim_key(claim))

    async def _reclaim_volume(self, volume: RawObject) -> None:
        """``reclaimVolume``: Retain keeps the volume; Delete is the provisioner's (an
        external deleter) for provisioned and CSI volumes; there are no in-tree plugins to
        delete or recycle anything else, so such a volume fails as upstream's would."""
        view = self._volume_view(volume)
        policy = view.reclaim_policy
        if policy == RECLAIM_RETAIN:
            return
        if policy == RECLAIM_DELETE:
            provisioner = view.annotations.get(ANN_DYNAMICALLY_PROVISIONED, "")
            if (provisioner and not provisioner.startswith("kubernetes.io/")) or (
                view.source_kind == "csi"
            ):
                return  # the external provisioner deletes it
            await self._update_volume_phase(
                volume,
                VOLUME_FAILED,
                "Warning",
                VOLUME_FAILED_DELETE,
                f'error getting deleter volume plugin for volume "{view.name}": no deletable '
                "volume plugin matched",
            )
            return
        if policy == RECLAIM_RECYCLE:
            await self._update_volume_phase(
                volume,
                VOLUME_FAILED,
                "Warning",
                VOLUME_FAILED_RECYCLE,
                "No recycler plugin found for the volume!",
            )
            return
        await self._update_volume_phase(
            volume,
            VOLUME_FAILED,
            "Warning",
            "VolumeUnknownReclaimPolicy",
            "Volume has unrecognized PersistentVolumeReclaimPolicy",
        )

    # --- provisioning -----------------------------------------------------------------

    async def _assign_default_storage_class(self, claim: RawObject) -> bool:
        """``assignDefaultStorageClass``: a claim that names no class gets the default
        one (retroactively: it was made before there was a default)."""
        if claim_has_class(claim):
            return False
        name = default_class(self.class_informer.list())
        if name is None:
            return False
        new = dict(claim, spec=dict(claim.get("spec") or {}, storageClassName=name))
        updated = await self.client.update(PERSISTENT_VOLUME_CLAIMS, _typed_claim(new))
        self.claims.update(claim_key(updated), updated)
        log.info("%s: claim %s gets the default class %s", NAME, claim_key(claim), name)
        return True

    async def _provision_claim(self, claim: RawObject, view: PersistentVolumeClaim) -> None:
        """``provisionClaim``: hand the claim to its class's provisioner (every
        provisioner is external here), then wait for its volume."""
        cls = self.class_informer.get(view.storage_class_name)
        if cls is None:
            self.recorder.event(
                claim,
                "Warning",
                PROVISIONING_FAILED,
                f'storageclass.storage.k8s.io "{view.storage_class_name}" not found',
            )
            await self._update_claim_status(claim, CLAIM_PENDING, None)
            return
        provisioner = str(cls.get("provisioner") or "")
        found = annotations_of(claim)
        if (
            found.get(ANN_STORAGE_PROVISIONER) != provisioner
            or found.get(ANN_BETA_STORAGE_PROVISIONER) != provisioner
        ):
            meta = dict(claim["metadata"])
            meta["annotations"] = {
                **found,
                ANN_STORAGE_PROVISIONER: provisioner,
                ANN_BETA_STORAGE_PROVISIONER: provisioner,
            }
            try:
                updated = await self.client.update(
                    PERSISTENT_VOLUME_CLAIMS, _typed_claim(dict(claim, metadata=meta))
                )
            except KubeError as exc:
                self.recorder.event(
                    claim, "Warning", PROVISIONING_FAILED, f"Error saving claim: {exc}"
                )
                raise
            self.claims.update(claim_key(updated), updated)
            claim = updated
            self.recorder.event(
                claim,
                "Normal",
                EXTERNAL_PROVISIONING,
                f"Waiting for a volume to be created either by the external provisioner "
                f"'{provisioner}' or manually by the system administrator. If volume "
                "creation is delayed, please verify that the provisioner is running and "
                "correctly registered.",
            )
        await self._update_claim_status(claim, CLAIM_PENDING, None)

    # --- writes -----------------------------------------------------------------------

    async def _bind(self, volume: RawObject, claim: RawObject) -> None:
        """``bind``: the volume's claimRef, its phase, the claim's volumeName and
        annotations, its phase, in that order; any failure leaves a state the next sync
        finishes."""
        clone, dirty = bind_volume_to_claim(volume, claim)
        if dirty:
            volume = await self._write_volume(clone)
        volume = await self._update_volume_phase(volume, VOLUME_BOUND)
        claim = await self._bind_claim_to_volume(claim, volume)
        await self._update_claim_status(claim, CLAIM_BOUND, volume)

    async def _bind_claim_to_volume(self, claim: RawObject, volume: RawObject) -> RawObject:
        """``bindClaimToVolume``: volumeName, bound-by-controller (if the controller chose
        the volume) and bind-completed."""
        name = str(volume["metadata"]["name"])
        spec = dict(claim.get("spec") or {})
        found = dict(annotations_of(claim))
        dirty = False
        if spec.get("volumeName") != name:
            spec["volumeName"] = name
            found.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            dirty = True
        if ANN_BIND_COMPLETED not in found:
            found[ANN_BIND_COMPLETED] = "yes"
            dirty = True
        if not dirty:
            return claim
        new = dict(claim, spec=spec, metadata=dict(claim["metadata"], annotations=found))
        updated: RawObject = await self.client.update(PERSISTENT_VOLUME_CLAIMS, _typed_claim(new))
        self.claims.update(claim_key(updated), updated)
        log.info("%s: volume %s bound to claim %s", NAME, name, claim_key(claim))
        return updated

    async def _unbind_volume(self, volume: RawObject) -> None:
        """``unbindVolume``: undo a binding the claim did not take (only the uid of a
        volume pre-bound by its creator)."""
        spec = dict(volume.get("spec") or {})
        meta = dict(volume["metadata"])
        found = dict(annotations_of(volume))
        if ANN_BOUND_BY_CONTROLLER in found:
            spec.pop("claimRef", None)
            del found[ANN_BOUND_BY_CONTROLLER]
        else:
            spec["claimRef"] = {k: v for k, v in (spec.get("claimRef") or {}).items() if k != "uid"}
        meta["annotations"] = found
        updated = await self._write_volume(dict(volume, spec=spec, metadata=meta))
        await self._update_volume_phase(updated, VOLUME_AVAILABLE)

    async def _write_volume(self, volume: RawObject) -> RawObject:
        updated: RawObject = await self.client.update(PERSISTENT_VOLUMES, _typed_volume(volume))
        self.volumes.update(str(updated["metadata"]["name"]), updated)
        return updated

    async def _update_volume_phase(
        self,
        volume: RawObject,
        phase: str,
        event_type: str = "",
        reason: str = "",
        message: str = "",
    ) -> RawObject:
        """``updateVolumePhase`` (``...WithEvent`` given a reason: the event is recorded
        only when the phase changes)."""
        if (volume.get("status") or {}).get("phase") == phase:
            return volume
        new = with_status(volume, phase=phase, message=message or None)
        updated: RawObject = await self.client.update(
            PERSISTENT_VOLUMES, _typed_volume(new), subresource="status"
        )
        self.volumes.update(str(updated["metadata"]["name"]), updated)
        if reason:
            self.recorder.event(updated, event_type, reason, message)
        log.debug("%s: volume %s entered phase %s", NAME, updated["metadata"]["name"], phase)
        return updated

    async def _claim_lost(self, claim: RawObject, reason: str, message: str) -> None:
        """``updateClaimStatusWithEvent`` to Lost."""
        if (claim.get("status") or {}).get("phase") == CLAIM_LOST:
            return
        updated = await self._update_claim_status(claim, CLAIM_LOST, None)
        self.recorder.event(updated, "Warning", reason, message)

    async def _update_claim_status(
        self, claim: RawObject, phase: str, volume: RawObject | None
    ) -> RawObject:
        """``updateClaimStatus``: the phase, with the volume's access modes and (when the
        claim becomes Bound) capacity, or neither without a volume."""
        status = claim.get("status") or {}
        fields: dict[str, Any] = {}
        if status.get("phase") != phase:
            fields["phase"] = phase
        if volume is None:
            if status.get("accessModes") is not None:
                fields["accessModes"] = None
            if status.get("capacity") is not None:
                fields["capacity"] = None
        else:
            spec = volume.get("spec") or {}
            modes = spec.get("accessModes")
            if status.get("accessModes") != modes:
                fields["accessModes"] = modes
            capacity = spec.get("capacity") or {}
            # Capacity is copied as the claim becomes Bound only: a difference later can
            # be intended (a filesystem smaller than its block device).
            becomes_bound = status.get("phase") != phase and "storage" in capacity
            if (
                becomes_bound
                and (status.get("capacity") or {}).get("storage") != capacity["storage"]
            ):
                fields["capacity"] = capacity
        if not fields:
            return claim
        new = with_status(claim, **fields)
        updated: RawObject = await self.client.update(
            PERSISTENT_VOLUME_CLAIMS, _typed_claim(new), subresource="status"
        )
        self.claims.update(claim_key(updated), updated)
        return updated


def _unsatisfied(volume: PersistentVolume, claim: PersistentVolumeClaim) -> str:
    """``checkVolumeSatisfyClaim``: why the requested volume cannot serve the claim
    ("" if it can)."""
    if volume.deleting:
        return f'the volume is marked for deletion "{volume.name}"'
    if volume.capacity < claim.request:
        return "requested PV is too small"
    if volume.storage_class_name != claim.storage_class_name:
        return "storageClassName does not match"
    if check_volume_mode_mismatches(claim, volume):
        return "incompatible volumeMode"
    if not check_access_modes(claim, volume):
        return "incompatible accessMode"
    return ""


def _typed_claim(claim: RawObject) -> RawObject:
    return {**claim, "apiVersion": "v1", "kind": "PersistentVolumeClaim"}


def _typed_volume(volume: RawObject) -> RawObject:
    return {**volume, "apiVersion": "v1", "kind": "PersistentVolume"}


def start(ctx: ControllerContext) -> PersistentVolumeController:
    """The binder's init function for the controller manager."""
    return PersistentVolumeController(
        ctx.client(NAME),
        ctx.informers.informer(PERSISTENT_VOLUMES),
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
        ctx.informers.informer(STORAGE_CLASSES),
        ctx.informers.informer(PODS),
        resync_period=ctx.options.volume_resync_period,
    )
