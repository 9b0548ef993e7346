"""The ephemeral volume controller (``ephemeral-volume-controller``), after upstream's
``pkg/controller/volume/ephemeral``: a pod's generic ephemeral volume
(``volumes[].ephemeral.volumeClaimTemplate``) gets its PersistentVolumeClaim
``<pod>-<volume>``, made from the template with the pod as its controller (so the claim
goes with the pod, and the kubelet and scheduler can tell it is the pod's). A claim of
that name that the pod does not own is left alone (the pod cannot start: upstream's
``VolumeIsForPod`` refuses it); a pod being deleted gets no new claims.
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_utils import run_workers
from kubesched.controllers.volume.resources import PERSISTENT_VOLUME_CLAIMS
from kubesched.kube import AlreadyExists, Client, Informer
from kubesched.kube.resources import PODS, RawObject
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "EphemeralVolumeController", "ephemeral_claims", "start"]

NAME = "ephemeral-volume-controller"


def ephemeral_claims(pod: RawObject) -> list[RawObject]:
    """The claims of the pod's ephemeral volumes: ``<pod>-<volume>`` in the pod's
    namespace, the template's labels, annotations and spec, controlled by the pod."""
    meta = pod.get("metadata") or {}
    owner = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    claims = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if not isinstance(volume, dict) or not isinstance(volume.get("ephemeral"), dict):
            continue
        template: dict[str, Any] = volume["ephemeral"].get("volumeClaimTemplate") or {}
        tmeta = template.get("metadata") or {}
        cmeta: dict[str, Any] = {
            "name": f"{meta.get('name', '')}-{volume.get('name', '')}",
            "namespace": meta.get("namespace") or "default",
            "ownerReferences": [owner],
        }
        for key in ("labels", "annotations"):
            if tmeta.get(key):
                cmeta[key] = dict(tmeta[key])
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": cmeta,
                "spec": copy.deepcopy(template.get("spec") or {}),
            }
        )
    return claims


class EphemeralVolumeController:
    """Makes the claims of pods' generic ephemeral volumes."""

    def __init__(
        self, client: Client, pods: Informer[RawObject], claims: Informer[RawObject]
    ) -> None:
        self.client = client
        self.pods = pods
        self.claims = claims
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        pods.add_handler(self._pod, lambda _, new: self._pod(new))
        claims.add_handler(on_delete=self._claim_deleted)

    def _pod(self, pod: RawObject) -> None:
        if any(
            isinstance(v, dict) and "ephemeral" in v
            for v in (pod.get("spec") or {}).get("volumes") or ()
        ):
            meta = pod.get("metadata") or {}
            self.queue.add(f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}")

    def _claim_deleted(self, claim: RawObject) -> None:
        for ref in (claim.get("metadata") or {}).get("ownerReferences") or ():
            if ref.get("kind") == "Pod" and ref.get("controller"):
                namespace = (claim.get("metadata") or {}).get("namespace") or "default"
                self.queue.add(f"{namespace}/{ref.get('name', '')}")

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        await self.pods.has_synced.wait()
        await self.claims.has_synced.wait()
        await run_workers(self.queue, self.sync, NAME, 1)

    async def sync(self, key: str) -> None:
        """``syncHandler``: create the pod's missing ephemeral claims."""
        pod = self.pods.get(key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        for claim in ephemeral_claims(pod):
            cmeta = claim["metadata"]
            if self.claims.get(f"{cmeta['namespace']}/{cmeta['name']}") is not None:
                continue
            with contextlib.suppress(AlreadyExists):
                await self.client.create(PERSISTENT_VOLUME_CLAIMS, claim)


def start(ctx: ControllerContext) -> EphemeralVolumeController:
    """The ephemeral volume controller's init function for the controller manager."""
    return EphemeralVolumeController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
    )
