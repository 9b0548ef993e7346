"""The attach/detach controller (``persistentvolume-attach-detach-controller``), after
upstream's ``pkg/controller/volume/attachdetach`` for CSI volumes.

For every node, the volumes its pods use must be attached to it: each bound claim of a
pod on the node that has not finished, whose volume is a CSI volume of a driver that
requires attachment (its CSIDriver says ``attachRequired``; a driver without one does,
as upstream), gets a VolumeAttachment ``csi-<sha256(handle + driver + node)>`` (the CSI
plugin's name for it) with the driver as attacher; the driver's attacher marks it
attached (:mod:`kubesched.controllers.csi.attacher`). A VolumeAttachment of the node that
no such pod needs any more is deleted (detach).

It acts only on the VolumeAttachments of the simulated CSI drivers
(:data:`~kubesched.controllers.csi.drivers.DRIVERS`), so it leaves a real cluster's
attachments to that cluster's controller. Differs from upstream: it detaches as soon as no
pod needs the volume (upstream waits for the kubelet to report it unmounted, at most
6 minutes), and keeps no ``node.status.volumesAttached``.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers
from kubesched.controllers.csi.drivers import DRIVERS
from kubesched.controllers.volume.resources import (
    CSI_DRIVERS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    VOLUME_ATTACHMENTS,
)
from kubesched.kube import AlreadyExists, Client, Informer, NotFound
from kubesched.kube.resources import PODS, RawObject
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "AttachDetachController", "attachment_name", "pod_claim_keys", "start"]

NAME = "persistentvolume-attach-detach-controller"


def attachment_name(volume_handle: str, driver: str, node: str) -> str:
    """The VolumeAttachment of a CSI volume on a node (the CSI plugin's
    ``getAttachmentName``)."""
    digest = hashlib.sha256(f"{volume_handle}{driver}{node}".encode()).hexdigest()
    return f"csi-{digest}"


def pod_claim_keys(pod: RawObject) -> list[str]:
    """``namespace/name`` of the claims of the pod's volumes (an ephemeral volume's claim
    is ``<pod>-<volume>``)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    keys = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            keys.append(f"{namespace}/{source['claimName']}")
        elif isinstance(volume.get("ephemeral"), dict):
            keys.append(f"{namespace}/{meta.get('name', '')}-{volume.get('name', '')}")
    return keys


def attach_required(driver: str, csi_drivers: Informer[RawObject]) -> bool:
    """Whether the driver's volumes are attached before use (no CSIDriver: yes)."""
    found = csi_drivers.get(driver)
    if found is None:
        return True
    return (found.get("spec") or {}).get("attachRequired", True) is not False


def _pod_key(pod: RawObject) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


class AttachDetachController:
    """Keeps the simulated drivers' VolumeAttachments as the nodes' pods need them."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        claims: Informer[RawObject],
        volumes: Informer[RawObject],
        attachments: Informer[RawObject],
        csi_drivers: Informer[RawObject],
    ) -> None:
        self.client = client
        self.pods = pods
        self.claims = claims
        self.volumes = volumes
        self.attachments = attachments
        self.csi_drivers = csi_drivers
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        self._pods_on: dict[str, set[str]] = {}
        self._pod_node: dict[str, str] = {}
        self._pods_of_claim: dict[str, set[str]] = {}
        self._claims_of_pod: dict[str, list[str]] = {}
        self._attachments_on: dict[str, set[str]] = {}
        pods.add_handler(self._pod, lambda _, new: self._pod(new), self._pod_deleted)
        claims.add_handler(self._claim, lambda _, new: self._claim(new), self._claim)
        volumes.add_handler(self._volume, lambda _, new: self._volume(new))
        attachments.add_handler(
            self._attachment, lambda _, new: self._attachment(new), self._attachment_deleted
        )

    # --- indexes ----------------------------------------------------------------------

    def _pod(self, pod: RawObject) -> None:
        key = _pod_key(pod)
        self._pod_deleted(pod)
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        claims = pod_claim_keys(pod)
        if not claims:
            return
        self._claims_of_pod[key] = claims
        for claim in claims:
            self._pods_of_claim.setdefault(claim, set()).add(key)
        if node:
            self._pod_node[key] = node
            self._pods_on.setdefault(node, set()).add(key)
            self.queue.add(node)

    def _pod_deleted(self, pod: RawObject) -> None:
        key = _pod_key(pod)
        for claim in self._claims_of_pod.pop(key, ()):
            pods = self._pods_of_claim.get(claim)
            if pods is not None:
                pods.discard(key)
                if not pods:
                    del self._pods_of_claim[claim]
        node = self._pod_node.pop(key, None)
        if node is not None:
            self._pods_on.get(node, set()).discard(key)
            self.queue.add(node)

    def _volume(self, volume: RawObject) -> None:
        # The volume may show after the claim that names it (another watch).
        ref = (volume.get("spec") or {}).get("claimRef")
        if isinstance(ref, dict) and ref.get("name"):
            self._requeue_users(f"{ref.get('namespace') or 'default'}/{ref['name']}")

    def _claim(self, claim: RawObject) -> None:
        meta = claim.get("metadata") or {}
        self._requeue_users(f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}")

    def _requeue_users(self, key: str) -> None:
        for pod in self._pods_of_claim.get(key, ()):
            node = self._pod_node.get(pod)
            if node:
                self.queue.add(node)

    def _attachment(self, attachment: RawObject) -> None:
        spec = attachment.get("spec") or {}
        if spec.get("attacher") not in DRIVERS:
            return
        node = str(spec.get("nodeName") or "")
        self._attachments_on.setdefault(node, set()).add(str(attachment["metadata"]["name"]))
        self.queue.add(node)

    def _attachment_deleted(self, attachment: RawObject) -> None:
        node = str((attachment.get("spec") or {}).get("nodeName") or "")
        self._attachments_on.get(node, set()).discard(str(attachment["metadata"]["name"]))
        self.queue.add(node)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        for informer in (self.pods, self.claims, self.volumes, self.attachments, self.csi_drivers):
            await informer.has_synced.wait()
        await run_workers(self.queue, self.sync, NAME, 1)

    def desired(self, node: str) -> dict[str, tuple[str, str]]:
        """The VolumeAttachments node ``node`` needs: name -> (driver, volume name)."""
        wanted: dict[str, tuple[str, str]] = {}
        for pod_key in sorted(self._pods_on.get(node, ())):
            pod = self.pods.get(pod_key)
            if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for claim_key in pod_claim_keys(pod):
                claim = self.claims.get(claim_key)
                volume_name = ((claim or {}).get("spec") or {}).get("volumeName")
                volume = self.volumes.get(str(volume_name)) if volume_name else None
                source = ((volume or {}).get("spec") or {}).get("csi") or {}
                driver = str(source.get("driver") or "")
                if driver not in DRIVERS or not attach_required(driver, self.csi_drivers):
                    continue
                handle = str(source.get("volumeHandle") or "")
                wanted[attachment_name(handle, driver, node)] = (driver, str(volume_name))
        return wanted

    async def sync(self, node: str) -> None:
        """Attach what the node's pods need and detach the rest."""
        wanted = self.desired(node)
        for name, (driver, volume) in wanted.items():
            if self.attachments.get(name) is not None:
                continue
            body = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "VolumeAttachment",
                "metadata": {"name": name},
                "spec": {
                    "attacher": driver,
                    "nodeName": node,
                    "source": {"persistentVolumeName": volume},
                },
            }
            with contextlib.suppress(AlreadyExists):
                await self.client.create(VOLUME_ATTACHMENTS, body)
        for name in sorted(self._attachments_on.get(node, set()) - set(wanted)):
            attachment = self.attachments.get(name)
            if attachment is None or (attachment.get("metadata") or {}).get("deletionTimestamp"):
                continue
            with contextlib.suppress(NotFound):
                await self.client.delete(
                    VOLUME_ATTACHMENTS, name, uid=str(attachment["metadata"].get("uid", ""))
                )


def start(ctx: ControllerContext) -> AttachDetachController:
    """The attach/detach controller's init function for the controller manager."""
    return AttachDetachController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
        ctx.informers.informer(PERSISTENT_VOLUMES),
        ctx.informers.informer(VOLUME_ATTACHMENTS),
        ctx.informers.informer(CSI_DRIVERS),
    )
