"""The storage-object-in-use protection controllers, after upstream's
``pkg/controller/volume/pvcprotection`` and ``pkg/controller/volume/pvprotection``.

A claim carries the finalizer ``kubernetes.io/pvc-protection`` and a volume
``kubernetes.io/pv-protection`` (the API server's StorageObjectInUseProtection admission
adds them at creation; these controllers add them to objects made without). Once the
object is being deleted, the finalizer goes when nothing uses it any more:

* a claim, when no scheduled pod has a volume naming it (a pod is asked about only once
  it has a node: the kubelet refuses to start a pod whose claim is being deleted), nor an
  ephemeral volume that made it and still runs. The informer's pods are checked, then,
  before the finalizer goes, a live list of the namespace's pods (upstream's
  ``askAPIServer``), so a pod the cache has not seen yet still counts;
* a volume, when its phase is not ``Bound``.

Each is a queue of keys with one worker; pod changes requeue the claims they name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers
from kubesched.controllers.volume.binderutil import claim_key
from kubesched.controllers.volume.resources import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from kubesched.kube import Client, Informer, NotFound
from kubesched.kube.resources import PODS, RawObject, Resource
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = [
    "PVC_NAME",
    "PVC_PROTECTION_FINALIZER",
    "PV_NAME",
    "PV_PROTECTION_FINALIZER",
    "PVCProtectionController",
    "PVProtectionController",
    "start_pv_protection",
    "start_pvc_protection",
]

PVC_NAME = "persistentvolumeclaim-protection-controller"
PV_NAME = "persistentvolume-protection-controller"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


def _key(obj: RawObject) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name', '')}" if namespace else str(meta.get("name", ""))


async def _set_finalizer(
    client: Client, resource: Resource[RawObject], obj: RawObject, finalizer: str, present: bool
) -> None:
    """Add or remove ``finalizer`` with a PUT of the version read (a conflict goes back
    to the queue)."""
    meta = dict(obj.get("metadata") or {})
    finalizers = [f for f in meta.get("finalizers") or () if f != finalizer]
    if present:
        finalizers.append(finalizer)
    meta["finalizers"] = finalizers
    body = {**obj, "apiVersion": resource.group_version, "kind": resource.kind, "metadata": meta}
    try:
        await client.update(resource, body)
    except NotFound:
        return


def _needs(obj: RawObject, finalizer: str) -> tuple[bool, bool]:
    """(deletion candidate, finalizer to add): ``IsDeletionCandidate`` and
    ``NeedToAddFinalizer``."""
    meta = obj.get("metadata") or {}
    has = finalizer in (meta.get("finalizers") or ())
    deleting = bool(meta.get("deletionTimestamp"))
    return deleting and has, not deleting and not has


def _uses_claim(pod: RawObject, namespace: str, name: str) -> bool:
    """``podUsesPVC``: a scheduled pod with a volume naming the claim, or a running
    pod whose ephemeral volume made it."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    if (meta.get("namespace") or "default") != namespace or not spec.get("nodeName"):
        return False
    shut_down = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == name:
            return True
        if (
            not shut_down
            and isinstance(volume.get("ephemeral"), dict)
            and f"{meta.get('name', '')}-{volume.get('name', '')}" == name
        ):
            return True
    return False


def _claims_of(pod: RawObject) -> list[str]:
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    names = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            names.append(f"{namespace}/{source['claimName']}")
        elif isinstance(volume.get("ephemeral"), dict):
            names.append(f"{namespace}/{meta.get('name', '')}-{volume.get('name', '')}")
    return names


class PVCProtectionController:
    """Keeps ``kubernetes.io/pvc-protection`` on claims until no pod uses them."""

    def __init__(
        self, client: Client, claims: Informer[RawObject], pods: Informer[RawObject]
    ) -> None:
        self.client = client
        self.claims = claims
        self.pods = pods
        self.queue: WorkQueue[str] = WorkQueue(PVC_NAME)
        claims.add_handler(self._claim, lambda _, new: self._claim(new))
        pods.add_handler(self._pod, lambda old, new: self._pod_update(old, new), self._pod)

    def _claim(self, claim: RawObject) -> None:
        deleting, add = _needs(claim, PVC_PROTECTION_FINALIZER)
        if deleting or add:
            self.queue.add(claim_key(claim))

    def _pod(self, pod: RawObject) -> None:
        for key in _claims_of(pod):
            claim = self.claims.get(key)
            if claim is not None and (claim.get("metadata") or {}).get("deletionTimestamp"):
                self.queue.add(key)

    def _pod_update(self, old: RawObject, new: RawObject) -> None:
        # A pod that finished or lost its node may free a claim; so may one whose
        # volumes changed (only possible by recreation, but cheap to cover).
        self._pod(old)
        self._pod(new)

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        await self.claims.has_synced.wait()
        await self.pods.has_synced.wait()
        await run_workers(self.queue, self.sync, PVC_NAME, 1)

    async def sync(self, key: str) -> None:
        """``processPVC``."""
        claim = self.claims.get(key)
        if claim is None:
            return
        deleting, add = _needs(claim, PVC_PROTECTION_FINALIZER)
        if deleting:
            namespace, _, name = key.partition("/")
            if not await self._in_use(namespace, name):
                await _set_finalizer(
                    self.client, PERSISTENT_VOLUME_CLAIMS, claim, PVC_PROTECTION_FINALIZER, False
                )
        elif add:
            await _set_finalizer(
                self.client, PERSISTENT_VOLUME_CLAIMS, claim, PVC_PROTECTION_FINALIZER, True
            )

    async def _in_use(self, namespace: str, name: str) -> bool:
        """``isBeingUsed``: the informer's pods first, then the server's."""
        if any(_uses_claim(pod, namespace, name) for pod in self.pods.list()):
            return True
        live = await self.client.list_all(PODS.raw, namespace)
        return any(_uses_claim(pod, namespace, name) for pod in live.items)


class PVProtectionController:
    """Keeps ``kubernetes.io/pv-protection`` on volumes until they are not Bound."""

    def __init__(self, client: Client, volumes: Informer[RawObject]) -> None:
        self.client = client
        self.volumes = volumes
        self.queue: WorkQueue[str] = WorkQueue(PV_NAME)
        volumes.add_handler(self._volume, lambda _, new: self._volume(new))

    def _volume(self, volume: RawObject) -> None:
        deleting, add = _needs(volume, PV_PROTECTION_FINALIZER)
        if deleting or add:
            self.queue.add(_key(volume))

    async def run(self) -> None:
        """Work until cancelled (after the informer synced)."""
        await self.volumes.has_synced.wait()
        await run_workers(self.queue, self.sync, PV_NAME, 1)

    async def sync(self, name: str) -> None:
        """``processPV``."""
        volume = self.volumes.get(name)
        if volume is None:
            return
        deleting, add = _needs(volume, PV_PROTECTION_FINALIZER)
        if deleting:
            if (volume.get("status") or {}).get("phase") != "Bound":
                await _set_finalizer(
                    self.client, PERSISTENT_VOLUMES, volume, PV_PROTECTION_FINALIZER, False
                )
        elif add:
            await _set_finalizer(
                self.client, PERSISTENT_VOLUMES, volume, PV_PROTECTION_FINALIZER, True
            )


def start_pvc_protection(ctx: ControllerContext) -> PVCProtectionController:
    """The PVC protection controller's init function."""
    return PVCProtectionController(
        ctx.client(PVC_NAME),
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
        ctx.informers.informer(PODS),
    )


def start_pv_protection(ctx: ControllerContext) -> PVProtectionController:
    """The PV protection controller's init function."""
    return PVProtectionController(ctx.client(PV_NAME), ctx.informers.informer(PERSISTENT_VOLUMES))
