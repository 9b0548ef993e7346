"""The simulated drivers' attacher (``csi-attacher``), after kubernetes-csi's
external-attacher: a VolumeAttachment whose attacher is a simulated driver gets the
finalizer ``external-attacher/<driver>`` and then ``status.attached: true`` (the
``ControllerPublishVolume`` call always succeeds); once it is being deleted, the finalizer
goes (``ControllerUnpublishVolume``). Nothing is really attached: the kubelet's wait for
the pod's volumes (:mod:`kubesched.controllers.volume.podvolumes`) reads the status.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import process_queue
from kubesched.controllers.csi.drivers import DRIVERS
from kubesched.controllers.volume.resources import VOLUME_ATTACHMENTS
from kubesched.kube import Client, Informer, NotFound
from kubesched.kube.resources import RawObject
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "CSIAttacher", "finalizer_name", "start"]

NAME = "csi-attacher"


def finalizer_name(driver: str) -> str:
    """external-attacher's finalizer for ``driver`` (characters other than letters,
    digits and ``-`` become ``-``)."""
    return "external-attacher/" + re.sub(r"[^a-zA-Z0-9-]", "-", driver)


class CSIAttacher:
    """Attaches and detaches the simulated drivers' volumes (instantly)."""

    def __init__(self, client: Client, attachments: Informer[RawObject]) -> None:
        self.client = client
        self.attachments = attachments
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        attachments.add_handler(self._enqueue, lambda _, new: self._enqueue(new))

    def _enqueue(self, attachment: RawObject) -> None:
        if (attachment.get("spec") or {}).get("attacher") in DRIVERS:
            self.queue.add(str(attachment["metadata"]["name"]))

    async def run(self) -> None:
        """Work until cancelled (after the informer synced)."""
        await self.attachments.has_synced.wait()
        try:
            await process_queue(self.queue, self.sync, NAME)
        finally:
            self.queue.shut_down()

    async def sync(self, name: str) -> None:
        """Attach (finalizer, then status) or detach (finalizer off) ``name``."""
        attachment = self.attachments.get(name)
        if attachment is None:
            return
        meta = attachment.get("metadata") or {}
        finalizer = finalizer_name(str((attachment.get("spec") or {}).get("attacher")))
        finalizers = list(meta.get("finalizers") or ())
        try:
            if meta.get("deletionTimestamp"):
                if finalizer in finalizers:
                    finalizers.remove(finalizer)
                    await self._update(
                        {**attachment, "metadata": {**meta, "finalizers": finalizers}}
                    )
                return
            if finalizer not in finalizers:
                body = {**attachment, "metadata": {**meta, "finalizers": [*finalizers, finalizer]}}
                attachment = await self._update(body)
            if (attachment.get("status") or {}).get("attached") is not True:
                status = {**(attachment.get("status") or {}), "attached": True}
                status.pop("attachError", None)
                await self._update({**attachment, "status": status}, "status")
        except NotFound:
            return

    async def _update(self, body: RawObject, subresource: str = "") -> RawObject:
        typed = {**body, "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment"}
        updated: RawObject = await self.client.update(VOLUME_ATTACHMENTS, typed, subresource)
        return updated


def start(ctx: ControllerContext) -> CSIAttacher:
    """The attacher's init function for the controller manager."""
    return CSIAttacher(ctx.client(NAME), ctx.informers.informer(VOLUME_ATTACHMENTS))
