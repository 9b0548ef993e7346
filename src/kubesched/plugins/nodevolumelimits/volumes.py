"""The attachable volumes a pod brings to a node, as NodeVolumeLimits counts them
(upstream's ``filterAttachableVolumes``, ``getCSIDriverInfo`` and
``getNodeVolumeAttachmentInfo``).

A volume is named ``<driver>/<volume handle>``, so that one volume used by two pods of a
node counts once. A claim bound to a CSI PersistentVolume names its driver and handle; a
claim bound to an in-tree disk counts as the CSI volume it migrates to when the node
migrated that plugin; a claim not bound yet counts under its class's provisioner with a
handle of its own (so two pods sharing the unbound claim still count once).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from kubesched.framework.interface import Status
from kubesched.objects.pod import Pod
from kubesched.objects.storage import (
    CSINode,
    CSISource,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    claim_is_for_pod,
)
from kubesched.objects.storage.sources import DiskSource
from kubesched.objects.storage.translation import (
    TranslationError,
    csi_driver_of_plugin,
    inline_migratable,
    is_csi_migration_on,
    pv_migratable,
    translate_inline,
    translate_pv,
)
from kubesched.plugins.helper import not_found

__all__ = [
    "StorageReader",
    "attachable_volumes",
    "attachment_volumes",
    "counts_volumes",
    "volume_limits",
]


class StorageReader(Protocol):
    """The lookups resolving volumes takes (a ``ClusterLister`` is one)."""

    def persistent_volume(self, name: str) -> PersistentVolume | None: ...

    def persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None: ...

    def storage_class(self, name: str) -> StorageClass | None: ...

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]: ...


def counts_volumes(pod: Pod) -> bool:
    """Whether any volume of the pod can count against an attach limit: a claim, a
    generic ephemeral volume, or an inline in-tree disk that migrates to CSI."""
    for volume in pod.volumes:
        if volume.kind in ("persistentVolumeClaim", "ephemeral") or inline_migratable(volume):
            return True
    return False


def attachable_volumes(
    pod: Pod,
    csi_node: CSINode | None,
    cluster: StorageReader,
    new_pod: bool,
    random_prefix: str,
    out: dict[str, str],
) -> Status | None:
    """Add the pod's attachable volumes to ``out`` (unique name → driver).

    For the pod being scheduled (``new_pod``) a missing claim is UnschedulableAndUnresolvable;
    for a pod already on the node it is skipped (nothing says it counts). An ephemeral
    volume's claim not owned by the pod, or an inline disk that cannot be translated, is
    an Error for both, as upstream's.
    """
    for volume in pod.volumes:
        kind = volume.kind
        if kind == "persistentVolumeClaim" or kind == "ephemeral":
            claim_name = volume.claim_name_for(pod.name)
            claim = cluster.persistent_volume_claim(pod.namespace, claim_name)
            if claim is None:
                if new_pod:
                    return Status.unresolvable(
                        f"looking up PVC {pod.namespace}/{claim_name}: "
                        + not_found("persistentvolumeclaim", claim_name)
                    )
                continue
            if kind == "ephemeral":
                problem = claim_is_for_pod(pod.namespace, pod.name, pod.uid, claim)
                if problem is not None:
                    return Status.error(problem)
            driver, handle = _claim_driver(claim, csi_node, cluster, random_prefix)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        elif isinstance(volume.source, DiskSource):
            # An inline in-tree disk counts through CSI where the node migrated it.
            if not is_csi_migration_on(csi_node, volume.source.plugin):
                continue
            try:
                driver, handle = translate_inline(volume)
            except TranslationError as err:
                return Status.error(f"converting volume({volume.name}) from inline to csi: {err}")
            if handle:
                out[f"{driver}/{handle}"] = driver
    return None


def _claim_driver(
    claim: PersistentVolumeClaim,
    csi_node: CSINode | None,
    cluster: StorageReader,
    random_prefix: str,
) -> tuple[str, str]:
    """(driver, handle) of a claim's volume; ("", "") when it does not count."""
    pv = cluster.persistent_volume(claim.volume_name) if claim.volume_name else None
    if pv is None:
        # Not bound yet, or bound to a volume not created yet: the class says which
        # driver will provision it.
        return _class_driver(claim, csi_node, cluster, random_prefix)
    source = pv.source
    if isinstance(source, CSISource):
        return source.driver, source.volume_handle
    if not pv_migratable(pv) or not isinstance(source, DiskSource):
        return "", ""
    if not is_csi_migration_on(csi_node, source.plugin):
        return "", ""
    try:
        return translate_pv(pv)
    except TranslationError:
        return "", ""


def _class_driver(
    claim: PersistentVolumeClaim,
    csi_node: CSINode | None,
    cluster: StorageReader,
    random_prefix: str,
) -> tuple[str, str]:
    class_name = claim.storage_class_name
    if not class_name:
        # Without a class the claim binds immediately, so it was bound before scheduling.
        return "", ""
    cls = cluster.storage_class(class_name)
    if cls is None:
        return "", ""
    # A handle no real volume has, unique to the claim.
    handle = f"{random_prefix}-{claim.namespace}/{claim.name}"
    provisioner = cls.provisioner
    migrated = csi_driver_of_plugin(provisioner)
    if migrated is not None:
        if not is_csi_migration_on(csi_node, provisioner):
            return "", ""
        provisioner = migrated
    return provisioner, handle


def volume_limits(csi_node: CSINode | None) -> Mapping[str, int]:
    """Driver → attach limit, from the node's CSINode (drivers reporting a count)."""
    if csi_node is None:
        return {}
    return {
        d.name: d.allocatable_count for d in csi_node.drivers if d.allocatable_count is not None
    }


def attachment_volumes(node_name: str, cluster: StorageReader) -> dict[str, str]:
    """The volumes VolumeAttachments say are attached to the node (unique name → driver):
    those of CSI PersistentVolumes, by attacher and the volume's handle. A volume still
    being detached from a deleted pod counts until its VolumeAttachment is gone."""
    out: dict[str, str] = {}
    for attachment in cluster.volume_attachments(node_name):
        if not attachment.attacher or not attachment.persistent_volume_name:
            continue
        pv = cluster.persistent_volume(attachment.persistent_volume_name)
        if pv is None or not isinstance(pv.source, CSISource):
            continue
        out[f"{attachment.attacher}/{pv.source.volume_handle}"] = attachment.attacher
    return out
