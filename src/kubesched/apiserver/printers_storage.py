"""Table printers of the storage kinds: the columns and cells of kube-apiserver's
``printPersistentVolume``, ``printPersistentVolumeClaim``, ``printStorageClass``,
``printCSINode``, ``printCSIDriver``, ``printCSIStorageCapacity``,
``printVolumeAttachment`` and ``printVolumeAttributesClass``
(``pkg/printers/internalversion/printers.go``), so that ``kubectl get
pv,pvc,sc,csinode,csidriver,csistoragecapacity,volumeattachment`` prints what it prints
against a real cluster: a default class is named ``standard (default)``, access modes are
``RWO,ROX,RWX,RWOP``, a volume or claim being deleted is ``Terminating``. Wide columns
(priority 1) are always filled; kubectl shows them with ``-o wide``. Column descriptions
are ours.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubesched.apiserver.storage import BETA_STORAGE_CLASS, claim_class, is_default_class
from kubesched.apiserver.table_cells import AGE_DOC, NAME_DOC, Cells, Column, age, col
from kubesched.apiserver.watch import Object
from kubesched.objects.quantity import QuantityError, parse_quantity_value

__all__ = ["STORAGE_PRINTERS"]

Printer = tuple[list[Column], Callable[[Object, datetime], Cells]]

#: ``GetAccessModesAsString``'s order and abbreviations.
_MODE_ABBREVIATIONS = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _name(obj: Object) -> str:
    return str(_dict(obj.get("metadata")).get("name", ""))


def _created(obj: Object, now: datetime) -> str:
    return age(_dict(obj.get("metadata")).get("creationTimestamp"), now)


def _deleting(obj: Object) -> bool:
    return bool(_dict(obj.get("metadata")).get("deletionTimestamp"))


def access_modes(modes: Any) -> str:
    """``helper.GetAccessModesAsString``: ``RWO,ROX,RWX,RWOP`` in that order, once each."""
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _MODE_ABBREVIATIONS if mode in present)


def quantity_text(value: Any) -> str:
    """A quantity as ``Quantity.String()`` writes it (``0`` when unset)."""
    try:
        return str(parse_quantity_value(value if value is not None else 0))
    except (QuantityError, TypeError):
        return str(value)


def _name_col() -> Column:
    return col("Name", NAME_DOC, fmt="name")


def _age_col() -> Column:
    return col("Age", AGE_DOC)


PERSISTENT_VOLUME_COLUMNS = [
    _name_col(),
    col("Capacity", "The volume's storage capacity."),
    col("Access Modes", "The ways the volume can be mounted."),
    col("Reclaim Policy", "What happens to the volume when its claim is released."),
    col("Status", "The volume's phase."),
    col("Claim", "The claim bound to the volume, as namespace/name."),
    col("StorageClass", "StorageClass of the pv"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    col("Reason", "Why the volume is in its phase."),
    _age_col(),
    col("VolumeMode", "Whether the volume is a filesystem or a block device.", priority=1),
]


def persistent_volume_cells(obj: Object, now: datetime) -> Cells:
    """``printPersistentVolume``."""
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    claim = ""
    ref = spec.get("claimRef")
    if isinstance(ref, dict):
        claim = f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    # GetPersistentVolumeClass: the beta annotation first.
    class_name = annotations.get(BETA_STORAGE_CLASS, spec.get("storageClassName") or "")
    return [
        _name(obj),
        quantity_text(_dict(spec.get("capacity")).get("storage")),
        access_modes(spec.get("accessModes")),
        str(spec.get("persistentVolumeReclaimPolicy") or ""),
        "Terminating" if _deleting(obj) else str(status.get("phase") or ""),
        claim,
        str(class_name),
        str(spec.get("volumeAttributesClassName") or "<unset>"),
        str(status.get("reason") or ""),
        _created(obj, now),
        str(spec.get("volumeMode") or "<unset>"),
    ]


PERSISTENT_VOLUME_CLAIM_COLUMNS = [
    _name_col(),
    col("Status", "The claim's phase."),
    col("Volume", "The volume bound to the claim."),
    col("Capacity", "The bound volume's capacity."),
    col("Access Modes", "The access modes of the bound volume."),
    col("StorageClass", "StorageClass of the pvc"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    _age_col(),
    col("VolumeMode", "Whether the claim wants a filesystem or a block device.", priority=1),
]


def persistent_volume_claim_cells(obj: Object, now: datetime) -> Cells:
    """``printPersistentVolumeClaim``: capacity and access modes once bound to a volume."""
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    volume = str(spec.get("volumeName") or "")
    capacity = modes = ""
    if volume:
        modes = access_modes(status.get("accessModes"))
        capacity = quantity_text(_dict(status.get("capacity")).get("storage"))
    return [
        _name(obj),
        "Terminating" if _deleting(obj) else str(status.get("phase") or ""),
        volume,
        capacity,
        modes,
        claim_class(obj),
        str(spec.get("volumeAttributesClassName") or "<unset>"),
        _created(obj, now),
        str(spec.get("volumeMode") or "<unset>"),
    ]


STORAGE_CLASS_COLUMNS = [
    _name_col(),
    col("Provisioner", "The provisioner that makes this class's volumes."),
    col("ReclaimPolicy", "What happens to a provisioned volume when its claim goes."),
    col("VolumeBindingMode", "When a claim of this class is bound and provisioned."),
    col("AllowVolumeExpansion", "Whether claims of this class may grow."),
    _age_col(),
]


def storage_class_cells(obj: Object, now: datetime) -> Cells:
    """``printStorageClass``: the default class is named ``<name> (default)``."""
    name = _name(obj)
    if is_default_class(obj):
        name += " (default)"
    return [
        name,
        str(obj.get("provisioner") or ""),
        str(obj.get("reclaimPolicy") or "Delete"),
        str(obj.get("volumeBindingMode") or "Immediate"),
        obj.get("allowVolumeExpansion") is True,
        _created(obj, now),
    ]


CSI_NODE_COLUMNS = [
    _name_col(),
    col(
        "Drivers",
        "Drivers indicates the number of CSI drivers registered on the node",
        kind="integer",
    ),
    _age_col(),
]


def csi_node_cells(obj: Object, now: datetime) -> Cells:
    """``printCSINode``: how many drivers the node registered."""
    drivers = _dict(obj.get("spec")).get("drivers")
    return [_name(obj), len(drivers) if isinstance(drivers, list) else 0, _created(obj, now)]


CSI_DRIVER_COLUMNS = [
    _name_col(),
    col("AttachRequired", "Whether volumes need attaching.", kind="boolean"),
    col("PodInfoOnMount", "Whether the driver gets pod information.", kind="boolean"),
    col("StorageCapacity", "Whether the driver publishes capacity.", kind="boolean"),
    col("TokenRequests", "The audiences of the tokens the driver gets."),
    col("RequiresRepublish", "Whether volumes are published again.", kind="boolean"),
    col("Modes", "The driver's volume lifecycle modes."),
    _age_col(),
]


def csi_driver_cells(obj: Object, now: datetime) -> Cells:
    """``printCSIDriver``."""
    spec = _dict(obj.get("spec"))
    audiences = [str(_dict(t).get("audience") or "") for t in spec.get("tokenRequests") or () if t]
    modes = ",".join(str(m) for m in spec.get("volumeLifecycleModes") or ())
    return [
        _name(obj),
        spec.get("attachRequired") is not False,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        ",".join(audiences) if audiences else "<unset>",
        spec.get("requiresRepublish") is True,
        modes or "<none>",
        _created(obj, now),
    ]


CSI_STORAGE_CAPACITY_COLUMNS = [
    _name_col(),
    col("StorageClassName", "The class this capacity is for."),
    col("Capacity", "The capacity available to new volumes of the class."),
]


def csi_storage_capacity_cells(obj: Object, now: datetime) -> Cells:
    """``printCSIStorageCapacity`` (no age column, as upstream's)."""
    capacity = obj.get("capacity")
    return [
        _name(obj),
        str(obj.get("storageClassName") or ""),
        quantity_text(capacity) if capacity is not None else "<unset>",
    ]


VOLUME_ATTACHMENT_COLUMNS = [
    _name_col(),
    col("Attacher", "The driver that attaches the volume.", fmt="name"),
    col("PV", "The attached persistent volume."),
    col("Node", "The node the volume is attached to."),
    col("Attached", "Whether the volume is attached.", kind="boolean"),
    _age_col(),
]


def volume_attachment_cells(obj: Object, now: datetime) -> Cells:
    """``printVolumeAttachment``."""
    spec = _dict(obj.get("spec"))
    return [
        _name(obj),
        str(spec.get("attacher") or ""),
        str(_dict(spec.get("source")).get("persistentVolumeName") or ""),
        str(spec.get("nodeName") or ""),
        _dict(obj.get("status")).get("attached") is True,
        _created(obj, now),
    ]


VOLUME_ATTRIBUTES_CLASS_COLUMNS = [
    _name_col(),
    col("DriverName", "The driver that applies these attributes."),
    _age_col(),
]


def volume_attributes_class_cells(obj: Object, now: datetime) -> Cells:
    """``printVolumeAttributesClass``."""
    return [_name(obj), str(obj.get("driverName") or ""), _created(obj, now)]


#: Plural → (columns, cells) of each storage kind.
STORAGE_PRINTERS: dict[str, Printer] = {
    "persistentvolumes": (PERSISTENT_VOLUME_COLUMNS, persistent_volume_cells),
    "persistentvolumeclaims": (PERSISTENT_VOLUME_CLAIM_COLUMNS, persistent_volume_claim_cells),
    "storageclasses": (STORAGE_CLASS_COLUMNS, storage_class_cells),
    "csinodes": (CSI_NODE_COLUMNS, csi_node_cells),
    "csidrivers": (CSI_DRIVER_COLUMNS, csi_driver_cells),
    "csistoragecapacities": (CSI_STORAGE_CAPACITY_COLUMNS, csi_storage_capacity_cells),
    "volumeattachments": (VOLUME_ATTACHMENT_COLUMNS, volume_attachment_cells),
    "volumeattributesclasses": (VOLUME_ATTRIBUTES_CLASS_COLUMNS, volume_attributes_class_cells),
}
