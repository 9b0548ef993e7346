"""A log of which storage objects changed, for the listers that serve them.

A plugin that derives state from storage objects (NodeVolumeLimits' per-node attach
counts) asks for the changes since the version it last read and recomputes only what
depended on them. A change is named by a key: ``Kind/name`` or ``Kind/namespace/name``;
a VolumeAttachment by the node it attaches to (``VolumeAttachment@node``), which is what
its readers look it up by.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from kubesched.objects.storage.persistentvolume import PersistentVolume, PersistentVolumeClaim
from kubesched.objects.storage.storageclass import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["ChangeLog", "change_key", "claim_key", "csi_node_key", "volume_key"]

_Object = (
    PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | VolumeAttachment
)


def claim_key(namespace: str, name: str) -> str:
    """The change key of claim ``namespace/name``."""
    return f"PersistentVolumeClaim/{namespace}/{name}"


def volume_key(name: str) -> str:
    """The change key of PersistentVolume ``name``."""
    return f"PersistentVolume/{name}"


def class_key(name: str) -> str:
    """The change key of StorageClass ``name``."""
    return f"StorageClass/{name}"


def csi_node_key(name: str) -> str:
    """The change key of the CSINode of node ``name``."""
    return f"CSINode/{name}"


def attachments_key(node_name: str) -> str:
    """The change key of the VolumeAttachments of node ``node_name``."""
    return f"VolumeAttachment@{node_name}"


def change_key(obj: _Object) -> str:
    """The key a change of ``obj`` is logged under."""
    match obj:
        case PersistentVolumeClaim():
            return claim_key(obj.namespace, obj.name)
        case PersistentVolume():
            return volume_key(obj.name)
        case StorageClass():
            return class_key(obj.name)
        case CSINode():
            return csi_node_key(obj.name)
        case VolumeAttachment():
            return attachments_key(obj.node_name)
        case CSIStorageCapacity():
            return f"CSIStorageCapacity/{obj.namespace}/{obj.name}"
        case CSIDriver():
            return f"CSIDriver/{obj.name}"
    raise TypeError(f"not a storage object: {obj!r}")


class ChangeLog:
    """The keys of the last ``limit`` changes, by version (the version counts changes)."""

    def __init__(self, limit: int = 4096) -> None:
        self.version = 0
        self._keys: deque[str] = deque(maxlen=limit)

    def record(self, *keys: str) -> None:
        """Log one change touching ``keys`` (a moved VolumeAttachment touches two nodes)."""
        self.version += 1
        # One entry per version, so that a version maps to a position in the log.
        self._keys.append("\0".join(keys))

    def since(self, version: int) -> Sequence[str] | None:
        """The keys changed after ``version``; None when the log no longer reaches back
        that far (read everything again)."""
        missed = self.version - version
        if missed < 0 or missed > len(self._keys):
            return None
        if missed == 0:
            return ()
        entries = list(self._keys)[-missed:]
        return [key for entry in entries for key in entry.split("\0")]
