"""PersistentVolumes and PersistentVolumeClaims, as the volume plugins, the simulator and
the PV controller read them: decoded once from their JSON, fields type-checked with their
paths. Lossy on purpose (spec.mountOptions, status.conditions... are not kept): code that
writes an object back works on its JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.objects._decode import (
    Raw,
    as_map,
    get_list,
    get_map,
    get_str,
    get_str_list,
    get_str_map,
    join,
    nested,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import Quantity, QuantityError, parse_quantity_value
from kubesched.objects.selectors import LabelSelector, NodeSelector
from kubesched.objects.storage.sources import Source, decode_source, source_member

# Access modes.
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

# Volume modes.
FILESYSTEM = "Filesystem"
BLOCK = "Block"

# PersistentVolume phases.
VOLUME_PENDING = "Pending"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
VOLUME_FAILED = "Failed"

# PersistentVolumeClaim phases.
CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"

# Reclaim policies.
RECLAIM_RETAIN = "Retain"
RECLAIM_DELETE = "Delete"
RECLAIM_RECYCLE = "Recycle"

#: The annotation the scheduler writes on a claim to have it provisioned on a node.
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_MIGRATED_TO = "pv.kubernetes.io/migrated-to"
#: The deprecated way to name a class, still read before the spec field (upstream's
#: GetPersistentVolumeClaimClass and GetPersistentVolumeClass).
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"

STORAGE = "storage"
_ZERO = Quantity(parse_quantity_value("0").value)


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """A PersistentVolume's ``spec.claimRef``: the claim it is bound (or pre-bound) to."""

    namespace: str
    name: str
    uid: str = ""

    @property
    def key(self) -> str:
        """``namespace/name`` of the claim."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    """core/v1 PersistentVolume."""

    name: str
    uid: str = ""
    resource_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    capacity: Quantity = _ZERO
    access_modes: tuple[str, ...] = ()
    volume_mode: str = FILESYSTEM
    #: spec.storageClassName, or the beta annotation that takes precedence over it.
    storage_class_name: str = ""
    claim_ref: ClaimRef | None = None
    reclaim_policy: str = RECLAIM_RETAIN
    node_affinity: NodeSelector | None = None
    #: The JSON name of its source (``csi``, ``gcePersistentDisk``, ``local``...).
    source_kind: str = ""
    source: Source | None = None
    phase: str = VOLUME_PENDING
    deleting: bool = False

    @classmethod
    def from_dict(cls, raw: object) -> PersistentVolume:
        """Decode a v1.PersistentVolume. Raises ObjectError naming the volume and field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            annotations = get_str_map(meta, "annotations", "metadata")
            kind, member = source_member(spec, "spec")
            claim_raw = spec.get("claimRef")
            claim_ref = None
            if claim_raw is not None:
                ref = as_map(claim_raw, "spec.claimRef")
                claim_ref = ClaimRef(
                    namespace=get_str(ref, "namespace", "spec.claimRef"),
                    name=get_str(ref, "name", "spec.claimRef"),
                    uid=get_str(ref, "uid", "spec.claimRef"),
                )
            affinity = get_map(spec, "nodeAffinity", "spec")
            required = affinity.get("required")
            return cls(
                name=name,
                uid=get_str(meta, "uid", "metadata"),
                resource_version=get_str(meta, "resourceVersion", "metadata"),
                labels=get_str_map(meta, "labels", "metadata"),
                annotations=annotations,
                capacity=_storage(get_map(spec, "capacity", "spec"), "spec.capacity"),
                access_modes=get_str_list(spec, "accessModes", "spec"),
                volume_mode=get_str(spec, "volumeMode", "spec") or FILESYSTEM,
                storage_class_name=(
                    annotations[ANN_BETA_STORAGE_CLASS]
                    if ANN_BETA_STORAGE_CLASS in annotations
                    else get_str(spec, "storageClassName", "spec")
                ),
                claim_ref=claim_ref,
                reclaim_policy=get_str(spec, "persistentVolumeReclaimPolicy", "spec")
                or RECLAIM_RETAIN,
                node_affinity=(
                    None
                    if required is None
                    else nested("spec.nodeAffinity.required", NodeSelector.from_dict, required)
                ),
                source_kind=kind,
                source=decode_source(kind, member, join("spec", kind)) if kind else None,
                phase=get_str(status, "phase", "status") or VOLUME_PENDING,
                deleting=meta.get("deletionTimestamp") is not None,
            )
        except ObjectError as err:
            raise err.located(f"PersistentVolume {name}") from None


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    """core/v1 PersistentVolumeClaim."""

    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    access_modes: tuple[str, ...] = ()
    #: spec.resources.requests.storage (zero when not set).
    request: Quantity = _ZERO
    selector: LabelSelector | None = None
    #: spec.storageClassName as written: None when not set, "" for "no class".
    spec_storage_class_name: str | None = None
    volume_name: str = ""
    volume_mode: str = FILESYSTEM
    phase: str = CLAIM_PENDING
    #: The uid of the claim's controller (its owner reference with controller: true).
    controller_uid: str = ""
    deleting: bool = False

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def storage_class_name(self) -> str:
        """The claim's class, as upstream's GetPersistentVolumeClaimClass: the beta
        annotation, else ``spec.storageClassName``, else "" (no class)."""
        beta = self.annotations.get(ANN_BETA_STORAGE_CLASS)
        if beta is not None:
            return beta
        return self.spec_storage_class_name or ""

    @property
    def is_bound(self) -> bool:
        """Whether the claim names its volume (``spec.volumeName``): the PV controller
        (or the user, pre-binding it) has chosen one."""
        return bool(self.volume_name)

    @property
    def is_fully_bound(self) -> bool:
        """Bound and the binding finished (``pv.kubernetes.io/bind-completed``): upstream's
        isPVCFullyBound, which VolumeBinding asks of a pod's claims."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    @property
    def selected_node(self) -> str:
        """The node the scheduler chose for its provisioning ("" if none)."""
        return self.annotations.get(ANN_SELECTED_NODE, "")

    @classmethod
    def from_dict(cls, raw: object) -> PersistentVolumeClaim:
        """Decode a v1.PersistentVolumeClaim. Raises ObjectError naming the claim."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            resources = get_map(spec, "resources", "spec")
            requests = get_map(resources, "requests", "spec.resources")
            selector_raw = spec.get("selector")
            class_raw = spec.get("storageClassName")
            if class_raw is not None and not isinstance(class_raw, str):
                raise ObjectError("spec.storageClassName", f"expected a string, got {class_raw!r}")
            return cls(
                namespace=namespace,
                name=name,
                uid=get_str(meta, "uid", "metadata"),
                resource_version=get_str(meta, "resourceVersion", "metadata"),
                labels=get_str_map(meta, "labels", "metadata"),
                annotations=get_str_map(meta, "annotations", "metadata"),
                access_modes=get_str_list(spec, "accessModes", "spec"),
                request=_storage(requests, "spec.resources.requests"),
                selector=(
                    None
                    if selector_raw is None
                    else nested("spec.selector", LabelSelector.from_dict, selector_raw)
                ),
                spec_storage_class_name=class_raw,
                volume_name=get_str(spec, "volumeName", "spec"),
                volume_mode=get_str(spec, "volumeMode", "spec") or FILESYSTEM,
                phase=get_str(status, "phase", "status") or CLAIM_PENDING,
                controller_uid=_controller_uid(meta),
                deleting=meta.get("deletionTimestamp") is not None,
            )
        except ObjectError as err:
            raise err.located(f"PersistentVolumeClaim {namespace}/{name}") from None


def _storage(resources: Raw, path: str) -> Quantity:
    value = resources.get(STORAGE)
    if value is None:
        return _ZERO
    try:
        return parse_quantity_value(value)
    except QuantityError as err:
        raise ObjectError(join(path, STORAGE), err.message) from None


def _controller_uid(meta: Raw) -> str:
    for i, ref in enumerate(get_list(meta, "ownerReferences", "metadata")):
        ref_map = as_map(ref, join("metadata.ownerReferences", i))
        if ref_map.get("controller") is True:
            return get_str(ref_map, "uid", join("metadata.ownerReferences", i))
    return ""
