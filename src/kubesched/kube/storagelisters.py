"""Listers of the storage objects over informers: what the volume plugins read through
the framework's ``ClusterLister`` (PersistentVolumes, claims, StorageClasses, CSINodes,
CSIDrivers, CSIStorageCapacities, VolumeAttachments), for the live scheduler and the
extender server alike.

The informers are optional: a server that does not serve a collection (404) leaves its
store empty instead of holding up the scheduler's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.kube.client import Client
from kubesched.kube.informer import Informer
from kubesched.kube.resources import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
)
from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.objects.storage.changes import ChangeLog, change_key

__all__ = ["StorageListers"]


class StorageListers:
    """The storage informers and the lookups over their stores (start the informers
    first; :attr:`storage_informers` lists them)."""

    def __init__(self, client: Client) -> None:
        self.pv_informer: Informer[PersistentVolume] = Informer(
            client, PERSISTENT_VOLUMES, optional=True
        )
        self.pvc_informer: Informer[PersistentVolumeClaim] = Informer(
            client, PERSISTENT_VOLUME_CLAIMS, optional=True
        )
        self.storage_class_informer: Informer[StorageClass] = Informer(
            client, STORAGE_CLASSES, optional=True
        )
        self.csi_node_informer: Informer[CSINode] = Informer(client, CSI_NODES, optional=True)
        self.csi_driver_informer: Informer[CSIDriver] = Informer(client, CSI_DRIVERS, optional=True)
        self.capacity_informer: Informer[CSIStorageCapacity] = Informer(
            client, CSI_STORAGE_CAPACITIES, optional=True
        )
        self.attachment_informer: Informer[VolumeAttachment] = Informer(
            client, VOLUME_ATTACHMENTS, optional=True
        )
        # Upstream indexes VolumeAttachments by node for NodeVolumeLimits; so do we.
        self._by_node: dict[str, dict[str, VolumeAttachment]] = {}
        self.attachment_informer.add_handler(
            self._attachment_added, self._attachment_updated, self._attachment_deleted
        )
        self._log = ChangeLog()
        for informer in self.storage_informers:
            informer.add_handler(self._changed, self._updated, self._changed)

    @property
    def storage_informers(self) -> list[Informer[Any]]:
        """Every storage informer, to start, sync and stop with the others."""
        return [
            self.pv_informer,
            self.pvc_informer,
            self.storage_class_informer,
            self.csi_node_informer,
            self.csi_driver_informer,
            self.capacity_informer,
            self.attachment_informer,
        ]

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PersistentVolume ``name``, if known."""
        return self.pv_informer.get(name)

    def persistent_volumes(self) -> Sequence[PersistentVolume]:
        """Every PersistentVolume."""
        return self.pv_informer.list()

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The claim ``namespace/name``, if known."""
        return self.pvc_informer.get(f"{namespace}/{name}")

    def persistent_volume_claims(self) -> Sequence[PersistentVolumeClaim]:
        """Every PersistentVolumeClaim."""
        return self.pvc_informer.list()

    def storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass ``name``, if known."""
        return self.storage_class_informer.get(name)

    def storage_classes(self) -> Sequence[StorageClass]:
        """Every StorageClass."""
        return self.storage_class_informer.list()

    def csi_node(self, name: str) -> CSINode | None:
        """The CSINode of node ``name``, if known."""
        return self.csi_node_informer.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver ``name``, if known."""
        return self.csi_driver_informer.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        """Every CSIStorageCapacity."""
        return self.capacity_informer.list()

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        """The VolumeAttachments of node ``node_name``."""
        return list(self._by_node.get(node_name, {}).values())

    def storage_version(self) -> int:
        """Changes whenever a storage object does (an informer event)."""
        return self._log.version

    def storage_changes(self, since: int) -> Sequence[str] | None:
        """The change keys of the storage objects changed after version ``since``."""
        return self._log.since(since)

    def _changed(self, obj: Any) -> None:
        self._log.record(change_key(obj))

    def _updated(self, old: Any, new: Any) -> None:
        self._log.record(*sorted({change_key(old), change_key(new)}))

    def _attachment_added(self, va: VolumeAttachment) -> None:
        self._by_node.setdefault(va.node_name, {})[va.name] = va

    def _attachment_updated(self, old: VolumeAttachment, new: VolumeAttachment) -> None:
        self._attachment_deleted(old)
        self._attachment_added(new)

    def _attachment_deleted(self, va: VolumeAttachment) -> None:
        on_node = self._by_node.get(va.node_name)
        if on_node is not None:
            on_node.pop(va.name, None)
            if not on_node:
                del self._by_node[va.node_name]
