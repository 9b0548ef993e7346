"""The kubelet's wait for a pod's volumes: a "may start" hook
(:data:`kubesched.controllers.kubelet.MayStart`) that holds a pod in Pending until every
claim its volumes use is bound to a volume (and, for a CSI volume of a driver that
requires attachment, the volume is attached to the pod's node), as the kubelet's volume
manager waits for attach and mount before it starts the containers.

The reasons it gives are the kubelet's words: ``persistentvolumeclaim "x" not found``,
``persistentvolumeclaim "x" is being deleted``, ``PVC ns/x has non-bound phase
("Pending") or empty pvc.Spec.VolumeName ("")``, ``persistentvolume "v" not found``,
``MountVolume.NodeAffinity check failed for volume "v" : no matching NodeSelectorTerms``
(a volume whose node affinity excludes the pod's node: a local volume of another node, a
disk of another zone), ``volume "v" is not attached to node "n" yet``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.controllers.volume.attachdetach import attach_required, attachment_name
from kubesched.controllers.volume.resources import (
    CSI_DRIVERS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    VOLUME_ATTACHMENTS,
)
from kubesched.kube import Informer
from kubesched.kube.resources import NODES, RawObject
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import NodeSelector

if TYPE_CHECKING:
    from kubesched.controllers.kubelet import MayStart
    from kubesched.controllers.manager import ControllerContext

__all__ = ["PodVolumes", "volumes_may_start"]


class PodVolumes:
    """Answers whether a pod's volumes are ready, from the informers' caches."""

    def __init__(
        self,
        claims: Informer[RawObject],
        volumes: Informer[RawObject],
        nodes: Informer[RawObject],
        attachments: Informer[RawObject] | None = None,
        csi_drivers: Informer[RawObject] | None = None,
    ) -> None:
        self.claims = claims
        self.volumes = volumes
        self.nodes = nodes
        self.attachments = attachments
        self.csi_drivers = csi_drivers

    def __call__(self, pod: RawObject) -> str | None:
        """None when the pod may start, else why it waits."""
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        for volume in (pod.get("spec") or {}).get("volumes") or ():
            if not isinstance(volume, dict):
                continue
            source = volume.get("persistentVolumeClaim")
            if isinstance(source, dict) and source.get("claimName"):
                name = str(source["claimName"])
            elif isinstance(volume.get("ephemeral"), dict):
                name = f"{meta.get('name', '')}-{volume.get('name', '')}"
            else:
                continue
            reason = self._claim_ready(namespace, name, node)
            if reason is not None:
                return reason
        return None

    def _claim_ready(self, namespace: str, name: str, node: str) -> str | None:
        claim = self.claims.get(f"{namespace}/{name}")
        if claim is None:
            return f'persistentvolumeclaim "{name}" not found'
        if (claim.get("metadata") or {}).get("deletionTimestamp"):
            return f'persistentvolumeclaim "{name}" is being deleted'
        phase = (claim.get("status") or {}).get("phase") or ""
        volume_name = str((claim.get("spec") or {}).get("volumeName") or "")
        if phase != "Bound" or not volume_name:
            return (
                f"PVC {namespace}/{name} has non-bound phase ({phase!r}) or empty "
                f"pvc.Spec.VolumeName ({volume_name!r})"
            ).replace("'", '"')
        volume = self.volumes.get(volume_name)
        if volume is None:
            return f'persistentvolume "{volume_name}" not found'
        if not self._node_affinity_allows(volume, node):
            return (
                f'MountVolume.NodeAffinity check failed for volume "{volume_name}" : '
                "no matching NodeSelectorTerms"
            )
        source = (volume.get("spec") or {}).get("csi")
        if not isinstance(source, dict) or self.attachments is None or self.csi_drivers is None:
            return None
        driver = str(source.get("driver") or "")
        if not attach_required(driver, self.csi_drivers):
            return None
        attachment = self.attachments.get(
            attachment_name(str(source.get("volumeHandle") or ""), driver, node)
        )
        if attachment is None or (attachment.get("status") or {}).get("attached") is not True:
            return f'volume "{volume_name}" is not attached to node "{node}" yet'
        return None

    def _node_affinity_allows(self, volume: RawObject, node: str) -> bool:
        """The kubelet's ``checkNodeAffinity`` before it mounts a volume."""
        required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
        if not required:
            return True
        labels = ((self.nodes.get(node) or {}).get("metadata") or {}).get("labels") or {}
        try:
            return NodeSelector.from_dict(required).matches(node, labels)
        except ObjectError:
            return False


def volumes_may_start(ctx: ControllerContext) -> MayStart | None:
    """The hook for the kubelet, over the shared informers; None when the server does
    not serve PersistentVolumeClaims (no pod can then wait for one)."""
    if not ctx.serves(PERSISTENT_VOLUME_CLAIMS) or not ctx.serves(PERSISTENT_VOLUMES):
        return None
    attachments = csi_drivers = None
    if ctx.serves(VOLUME_ATTACHMENTS) and ctx.serves(CSI_DRIVERS):
        attachments = ctx.informers.informer(VOLUME_ATTACHMENTS)
        csi_drivers = ctx.informers.informer(CSI_DRIVERS)
    return PodVolumes(
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
        ctx.informers.informer(PERSISTENT_VOLUMES),
        ctx.informers.informer(NODES),
        attachments,
        csi_drivers,
    )
