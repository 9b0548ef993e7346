"""The simulated drivers' attacher (``csi-attacher``), after kubernetes-csi's
external-attacher: a VolumeAttachment whose attacher is a simulated driver gets the
finalizer ``external-attacher/<driver>`` and then ``status.attached: true``
(``ControllerPublishVolume``), unless the volume's node affinity excludes the node (a disk
of another zone): then ``status.attachError`` says so and it stays detached. Once it is
being deleted, the finalizer goes (``ControllerUnpublishVolume``). Nothing is really
attached: the kubelet's wait for the pod's volumes
(:mod:`kubesched.controllers.volume.podvolumes`) reads the status.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers
from kubesched.controllers.csi.drivers import DRIVERS
from kubesched.controllers.volume.resources import PERSISTENT_VOLUMES, VOLUME_ATTACHMENTS
from kubesched.kube import Client, Informer, NotFound
from kubesched.kube.resources import NODES, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import NodeSelector

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

    def __init__(
        self,
        client: Client,
        attachments: Informer[RawObject],
        volumes: Informer[RawObject],
        nodes: Informer[RawObject],
    ) -> None:
        self.client = client
        self.attachments = attachments
        self.volumes = volumes
        self.nodes = nodes
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        attachments.add_handler(self._enqueue, lambda _, new: self._enqueue(new))

    def _enqueue(self, attachment: RawObject) -> None:
        if (attachment.get("spec") or {}).get("attacher") in DRIVERS:
            self.queue.add(str(attachment["metadata"]["name"]))

    async def run(self) -> None:
        """Work until cancelled (after the informer synced)."""
        for informer in (self.attachments, self.volumes, self.nodes):
            await informer.has_synced.wait()
        await run_workers(self.queue, self.sync, NAME, 1)

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
            problem = self._publish_problem(attachment)
            status = {**(attachment.get("status") or {}), "attached": problem is None}
            if problem is None:
                status.pop("attachError", None)
            elif (status.get("attachError") or {}).get("message") != problem:
                status["attachError"] = {"time": _now(), "message": problem}
            if status != attachment.get("status"):
                await self._update({**attachment, "status": status}, "status")
        except NotFound:
            return

    def _publish_problem(self, attachment: RawObject) -> str | None:
        """Why the volume cannot be attached to the node (None: it can)."""
        spec = attachment.get("spec") or {}
        name = str((spec.get("source") or {}).get("persistentVolumeName") or "")
        node = str(spec.get("nodeName") or "")
        volume = self.volumes.get(name)
        if volume is None:
            return f'persistentvolume "{name}" not found'
        required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
        if not required:
            return None
        labels = ((self.nodes.get(node) or {}).get("metadata") or {}).get("labels") or {}
        try:
            if NodeSelector.from_dict(required).matches(node, labels):
                return None
        except ObjectError:
            pass
        return (
            f"rpc error: code = FailedPrecondition desc = volume {name} cannot be attached "
            f"to node {node}: its node affinity excludes the node"
        )

    async def _update(self, body: RawObject, subresource: str = "") -> RawObject:
        typed = {**body, "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment"}
        updated: RawObject = await self.client.update(VOLUME_ATTACHMENTS, typed, subresource)
        return updated


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def start(ctx: ControllerContext) -> CSIAttacher:
    """The attacher's init function for the controller manager."""
    return CSIAttacher(
        ctx.client(NAME),
        ctx.informers.informer(VOLUME_ATTACHMENTS),
        ctx.informers.informer(PERSISTENT_VOLUMES),
        ctx.informers.informer(NODES),
    )
