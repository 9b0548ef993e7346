"""In-tree volumes seen as the CSI volumes they migrate to, as upstream's
``k8s.io/csi-translation-lib`` sees them: which CSI driver takes over each in-tree plugin,
and which volume handle a translated volume gets. NodeVolumeLimits counts migrated
in-tree volumes against the CSI driver's attach limit through this.

Only the attachable block disks are translated (GCE PD, AWS EBS, Azure Disk, Cinder,
vSphere, Portworx). DEVIATION: Azure File is not (it attaches nothing), and an inline
Azure Disk of a kind other than Managed translates here where upstream refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubesched.objects.storage.persistentvolume import PersistentVolume
from kubesched.objects.storage.sources import (
    AWS_EBS_PLUGIN,
    AZURE_DISK_PLUGIN,
    CINDER_PLUGIN,
    GCE_PD_PLUGIN,
    PORTWORX_PLUGIN,
    VSPHERE_PLUGIN,
    DiskSource,
    Volume,
)
from kubesched.objects.storage.storageclass import CSINode

__all__ = [
    "CSI_DRIVER_OF",
    "TranslationError",
    "csi_driver_of_plugin",
    "inline_migratable",
    "is_csi_migration_on",
    "pv_migratable",
    "translate_inline",
    "translate_pv",
]

#: In-tree plugin name → the CSI driver its volumes migrate to.
CSI_DRIVER_OF: Mapping[str, str] = {
    GCE_PD_PLUGIN: "pd.csi.storage.gke.io",
    AWS_EBS_PLUGIN: "ebs.csi.aws.com",
    AZURE_DISK_PLUGIN: "disk.csi.azure.com",
    CINDER_PLUGIN: "cinder.csi.openstack.org",
    VSPHERE_PLUGIN: "csi.vsphere.vmware.com",
    PORTWORX_PLUGIN: "pxd.portworx.com",
}

#: Plugins whose migration is locked on (GA): the node need not announce it.
_MIGRATION_LOCKED_ON = frozenset(
    {GCE_PD_PLUGIN, AWS_EBS_PLUGIN, AZURE_DISK_PLUGIN, CINDER_PLUGIN, VSPHERE_PLUGIN}
)
_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")


class TranslationError(ValueError):
    """An in-tree volume whose CSI form cannot be built (upstream logs or reports it)."""


def csi_driver_of_plugin(plugin: str) -> str | None:
    """The CSI driver of in-tree ``plugin`` (a provisioner name), None if not migratable."""
    return CSI_DRIVER_OF.get(plugin)


def inline_migratable(volume: Volume) -> bool:
    """Whether a pod's inline volume is an in-tree disk that migrates to CSI."""
    return isinstance(volume.source, DiskSource)


def pv_migratable(pv: PersistentVolume) -> bool:
    """Whether a PersistentVolume is an in-tree disk that migrates to CSI."""
    return isinstance(pv.source, DiskSource)


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Whether the node handles ``plugin``'s volumes through CSI (upstream's
    ``isCSIMigrationOn``): never without a CSINode; always for the plugins whose migration
    is GA; otherwise when the CSINode lists the plugin in its migrated-plugins annotation."""
    if csi_node is None or not plugin:
        return False
    if plugin in _MIGRATION_LOCKED_ON:
        return True
    if plugin != PORTWORX_PLUGIN:
        return False
    return plugin in csi_node.migrated_plugins


def translate_inline(volume: Volume) -> tuple[str, str]:
    """(CSI driver, volume handle) of an inline in-tree disk; raises TranslationError."""
    source = volume.source
    if not isinstance(source, DiskSource):
        raise TranslationError(f"volume {volume.name} is not a migratable in-tree volume")
    return CSI_DRIVER_OF[source.plugin], _handle(source, {})


def translate_pv(pv: PersistentVolume) -> tuple[str, str]:
    """(CSI driver, volume handle) of an in-tree PersistentVolume; raises TranslationError."""
    source = pv.source
    if not isinstance(source, DiskSource):
        raise TranslationError(f"persistent volume {pv.name} is not a migratable in-tree volume")
    return CSI_DRIVER_OF[source.plugin], _handle(source, pv.labels)


def _handle(source: DiskSource, labels: Mapping[str, str]) -> str:
    if source.plugin == AWS_EBS_PLUGIN:
        return _ebs_volume_id(source.disk_id)
    if source.plugin == GCE_PD_PLUGIN:
        zone = next((labels[k] for k in _ZONE_LABELS if labels.get(k)), "")
        zones = [z for z in zone.split("__") if z]
        if len(zones) > 1:
            # A regional disk: its region is the zones' name without the zone suffix.
            region = zones[0].rsplit("-", 1)[0]
            return f"projects/UNSPECIFIED/regions/{region}/disks/{source.disk_id}"
        zone = zones[0] if zones else "UNSPECIFIED"
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{source.disk_id}"
    return source.disk_id


def _ebs_volume_id(kubernetes_id: str) -> str:
    """``aws://<zone>/vol-123`` → ``vol-123``; a bare id is kept as it is."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    path = kubernetes_id[len("aws://") :].partition("/")[2].strip("/")
    if not _AWS_VOLUME_ID.match(path):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return path
