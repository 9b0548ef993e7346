"""Fluent builders for the storage objects, in the manner of upstream's
``pkg/scheduler/testing/wrappers.go`` (``MakePersistentVolume``, ``MakePersistentVolumeClaim``,
``MakeCSINode``...): build the Kubernetes JSON, decode it with the real decoders.

    pv = make_pv("pv-1").capacity("10Gi").access_modes("ReadWriteOnce").csi("ebs", "vol-1").obj()
    pvc = make_pvc("data").request("5Gi").storage_class("fast").volume_name("pv-1").obj()
"""

from __future__ import annotations

import copy
from typing import Any, Self

from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = [
    "make_csi_driver",
    "make_csi_node",
    "make_csi_storage_capacity",
    "make_pv",
    "make_pvc",
    "make_storage_class",
    "make_volume_attachment",
]


class _Wrapper:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    @property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.raw["metadata"]
        return meta

    def _set(self, key: str, value: Any) -> Self:
        self.raw.setdefault("spec", {})[key] = value
        return self

    def dict(self) -> dict[str, Any]:
        """The Kubernetes JSON built so far (a copy)."""
        return copy.deepcopy(self.raw)


class PVWrapper(_Wrapper):
    """Builds a v1.PersistentVolume; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "uid": name},
                "spec": {},
                "status": {"phase": "Available"},
            }
        )

    def label(self, key: str, value: str) -> PVWrapper:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def annotation(self, key: str, value: str) -> PVWrapper:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def capacity(self, storage: str) -> PVWrapper:
        return self._set("capacity", {"storage": storage})

    def access_modes(self, *modes: str) -> PVWrapper:
        return self._set("accessModes", list(modes))

    def volume_mode(self, mode: str) -> PVWrapper:
        return self._set("volumeMode", mode)

    def storage_class(self, name: str) -> PVWrapper:
        return self._set("storageClassName", name)

    def claim_ref(self, name: str, namespace: str = "default", uid: str = "") -> PVWrapper:
        ref = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
        if uid:
            ref["uid"] = uid
        return self._set("claimRef", ref)

    def phase(self, phase: str) -> PVWrapper:
        self.raw["status"]["phase"] = phase
        return self

    def terminating(self) -> PVWrapper:
        self._meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def node_affinity_in(self, key: str, *values: str) -> PVWrapper:
        """A required node affinity term ``key in (values)`` (terms are ORed)."""
        affinity = self.raw["spec"].setdefault("nodeAffinity", {"required": {}})
        terms = affinity["required"].setdefault("nodeSelectorTerms", [])
        terms.append({"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]})
        return self

    def source(self, kind: str, source: dict[str, Any]) -> PVWrapper:
        """Set the volume source member ``kind`` (``gcePersistentDisk``, ``local``...)."""
        return self._set(kind, copy.deepcopy(source))

    def csi(self, driver: str, handle: str) -> PVWrapper:
        return self.source("csi", {"driver": driver, "volumeHandle": handle})

    def obj(self) -> PersistentVolume:
        """The decoded PersistentVolume."""
        return PersistentVolume.from_dict(self.raw)


class PVCWrapper(_Wrapper):
    """Builds a v1.PersistentVolumeClaim; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default", "uid": name},
                "spec": {},
                "status": {},
            }
        )

    def namespace(self, ns: str) -> PVCWrapper:
        self._meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> PVCWrapper:
        self._meta["uid"] = uid
        return self

    def annotation(self, key: str, value: str) -> PVCWrapper:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def owner(self, kind: str, name: str, uid: str, controller: bool = True) -> PVCWrapper:
        ref: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid}
        if controller:
            ref["controller"] = True
        self._meta.setdefault("ownerReferences", []).append(ref)
        return self

    def request(self, storage: str) -> PVCWrapper:
        return self._set("resources", {"requests": {"storage": storage}})

    def access_modes(self, *modes: str) -> PVCWrapper:
        return self._set("accessModes", list(modes))

    def volume_mode(self, mode: str) -> PVCWrapper:
        return self._set("volumeMode", mode)

    def storage_class(self, name: str) -> PVCWrapper:
        return self._set("storageClassName", name)

    def selector(self, match_labels: dict[str, str]) -> PVCWrapper:
        return self._set("selector", {"matchLabels": dict(match_labels)})

    def volume_name(self, name: str) -> PVCWrapper:
        return self._set("volumeName", name)

    def phase(self, phase: str) -> PVCWrapper:
        self.raw["status"]["phase"] = phase
        return self

    def obj(self) -> PersistentVolumeClaim:
        """The decoded PersistentVolumeClaim."""
        return PersistentVolumeClaim.from_dict(self.raw)


class StorageClassWrapper(_Wrapper):
    """Builds a storage.k8s.io/v1 StorageClass; ``obj()`` decodes it."""

    def __init__(self, name: str, provisioner: str) -> None:
        super().__init__(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name},
                "provisioner": provisioner,
            }
        )

    def binding_mode(self, mode: str) -> StorageClassWrapper:
        self.raw["volumeBindingMode"] = mode
        return self

    def allowed_topology(self, key: str, *values: str) -> StorageClassWrapper:
        term = {"matchLabelExpressions": [{"key": key, "values": list(values)}]}
        self.raw.setdefault("allowedTopologies", []).append(term)
        return self

    def default(self) -> StorageClassWrapper:
        annotations = self._meta.setdefault("annotations", {})
        annotations["storageclass.kubernetes.io/is-default-class"] = "true"
        return self

    def obj(self) -> StorageClass:
        return StorageClass.from_dict(self.raw)


class CSINodeWrapper(_Wrapper):
    """Builds a storage.k8s.io/v1 CSINode; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name},
                "spec": {"drivers": []},
            }
        )

    def driver(self, name: str, count: int | None = None, node_id: str = "") -> CSINodeWrapper:
        """Add driver ``name`` with attach limit ``count`` (None: no limit reported)."""
        entry: dict[str, Any] = {"name": name, "nodeID": node_id or self._meta["name"]}
        if count is not None:
            entry["allocatable"] = {"count": count}
        self.raw["spec"]["drivers"].append(entry)
        return self

    def migrated(self, *plugins: str) -> CSINodeWrapper:
        """Annotate the in-tree plugins migrated to CSI on this node."""
        annotations = self._meta.setdefault("annotations", {})
        annotations["storage.alpha.kubernetes.io/migrated-plugins"] = ",".join(plugins)
        return self

    def obj(self) -> CSINode:
        return CSINode.from_dict(self.raw)


class CSIDriverWrapper(_Wrapper):
    """Builds a storage.k8s.io/v1 CSIDriver; ``obj()`` decodes it."""

    def __init__(self, name: str) -> None:
        super().__init__(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSIDriver",
                "metadata": {"name": name},
                "spec": {},
            }
        )

    def attach_required(self, value: bool) -> CSIDriverWrapper:
        return self._set("attachRequired", value)

    def storage_capacity(self, value: bool) -> CSIDriverWrapper:
        return self._set("storageCapacity", value)

    def obj(self) -> CSIDriver:
        return CSIDriver.from_dict(self.raw)


def make_pv(name: str = "pv") -> PVWrapper:
    """Start building an Available PersistentVolume named ``name``."""
    return PVWrapper(name)


def make_pvc(name: str = "pvc") -> PVCWrapper:
    """Start building a claim named ``name`` in namespace ``default`` (uid = name)."""
    return PVCWrapper(name)


def make_storage_class(name: str, provisioner: str = "csi.example.com") -> StorageClassWrapper:
    """Start building a StorageClass."""
    return StorageClassWrapper(name, provisioner)


def make_csi_node(name: str) -> CSINodeWrapper:
    """Start building the CSINode of node ``name``."""
    return CSINodeWrapper(name)


def make_csi_driver(name: str) -> CSIDriverWrapper:
    """Start building a CSIDriver."""
    return CSIDriverWrapper(name)


def make_csi_storage_capacity(
    name: str, storage_class: str, capacity: str, topology: dict[str, str] | None = None
) -> CSIStorageCapacity:
    """A CSIStorageCapacity of ``storage_class`` in the segment ``topology`` selects."""
    raw: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "default"},
        "storageClassName": storage_class,
        "capacity": capacity,
    }
    if topology is not None:
        raw["nodeTopology"] = {"matchLabels": dict(topology)}
    return CSIStorageCapacity.from_dict(raw)


def make_volume_attachment(
    name: str, attacher: str, node_name: str, pv_name: str = ""
) -> VolumeAttachment:
    """A VolumeAttachment of PV ``pv_name`` by ``attacher`` to ``node_name``."""
    source = {"persistentVolumeName": pv_name} if pv_name else {}
    raw = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": {"attacher": attacher, "nodeName": node_name, "source": source},
        "status": {"attached": True},
    }
    return VolumeAttachment.from_dict(raw)
