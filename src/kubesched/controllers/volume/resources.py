"""The storage collections the volume controllers follow, decoded as plain dicts (the
controllers write back what they read)."""

from __future__ import annotations

from kubesched.kube.resources import RawObject, Resource

__all__ = [
    "CSI_DRIVERS",
    "CSI_NODES",
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "STORAGE_CLASSES",
    "VOLUME_ATTACHMENTS",
]


def _raw(raw: RawObject) -> RawObject:
    return raw


PERSISTENT_VOLUMES = Resource("", "v1", "persistentvolumes", "PersistentVolume", False, _raw)
PERSISTENT_VOLUME_CLAIMS = Resource(
    "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, _raw
)
STORAGE_CLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, _raw)
CSI_DRIVERS = Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, _raw)
CSI_NODES = Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False, _raw)
VOLUME_ATTACHMENTS = Resource(
    "storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, _raw
)
