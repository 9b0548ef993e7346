"""Upstream's defaulting of the storage kinds: core/v1 PersistentVolume and
PersistentVolumeClaim, storage.k8s.io/v1 StorageClass and CSIDriver.

kube-apiserver applies these ``SetDefaults_*`` functions (``pkg/apis/core/v1/defaults.go``,
``pkg/apis/storage/v1/defaults.go``) to every object it decodes, so a PUT or a patch that
leaves a defaulted field out does not read as a change of it:

- PersistentVolume: ``persistentVolumeReclaimPolicy: Retain``, ``volumeMode: Filesystem``,
  ``status.phase: Pending``; a ``hostPath`` source gets ``type: ""``.
- PersistentVolumeClaim: ``volumeMode: Filesystem``, ``status.phase: Pending``.
- StorageClass: ``reclaimPolicy: Delete``, ``volumeBindingMode: Immediate``.
- CSIDriver: ``attachRequired: true``; ``podInfoOnMount``, ``storageCapacity``,
  ``requiresRepublish`` and ``seLinuxMount`` false (the SELinuxMountReadWriteOncePod gate
  is on in 1.34); ``fsGroupPolicy: ReadWriteOnceWithFSType``; ``volumeLifecycleModes:
  [Persistent]``.

:mod:`kubesched.objects.defaults` applies :data:`DEFAULTERS` on every write. Each function
changes the object in place and leaves values of the wrong JSON type alone: validation
reports those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Object = dict[str, Any]

#: ``v1.PersistentVolumeFilesystem``: the volume mode of a claim or volume that names none.
FILESYSTEM = "Filesystem"


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _status_phase(obj: Object, phase: str) -> None:
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = phase


def default_persistent_volume(obj: Object) -> None:
    """``SetDefaults_PersistentVolume`` (and its hostPath source's)."""
    spec = _dict(obj.setdefault("spec", {}))
    if spec is not None:
        if not spec.get("persistentVolumeReclaimPolicy"):
            spec["persistentVolumeReclaimPolicy"] = "Retain"
        if spec.get("volumeMode") is None:
            spec["volumeMode"] = FILESYSTEM
        host_path = _dict(spec.get("hostPath"))
        if host_path is not None and host_path.get("type") is None:
            host_path["type"] = ""  # SetDefaults_HostPathVolumeSource: HostPathUnset
    _status_phase(obj, "Pending")


def default_persistent_volume_claim(obj: Object) -> None:
    """``SetDefaults_PersistentVolumeClaim`` and ``SetDefaults_PersistentVolumeClaimSpec``."""
    spec = _dict(obj.setdefault("spec", {}))
    if spec is not None and spec.get("volumeMode") is None:
        spec["volumeMode"] = FILESYSTEM
    _status_phase(obj, "Pending")


def default_storage_class(obj: Object) -> None:
    """``SetDefaults_StorageClass``."""
    if obj.get("reclaimPolicy") is None:
        obj["reclaimPolicy"] = "Delete"
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = "Immediate"


#: CSIDriverSpec fields ``SetDefaults_CSIDriver`` fills when they are unset.
_CSI_DRIVER_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("attachRequired", True),
    ("podInfoOnMount", False),
    ("storageCapacity", False),
    ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
    ("requiresRepublish", False),
    ("seLinuxMount", False),
)


def default_csi_driver(obj: Object) -> None:
    """``SetDefaults_CSIDriver``."""
    spec = _dict(obj.setdefault("spec", {}))
    if spec is None:
        return
    for key, value in _CSI_DRIVER_DEFAULTS:
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


#: Kind → defaulting of the storage kinds.
DEFAULTERS: dict[str, Callable[[Object], None]] = {
    "PersistentVolume": default_persistent_volume,
    "PersistentVolumeClaim": default_persistent_volume_claim,
    "StorageClass": default_storage_class,
    "CSIDriver": default_csi_driver,
}
