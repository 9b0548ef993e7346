"""storage.k8s.io/v1 objects the scheduler reads: StorageClass, CSIDriver, CSINode,
CSIStorageCapacity and VolumeAttachment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.objects._decode import (
    as_map,
    get_bool,
    get_int,
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
from kubesched.objects.selectors import LabelSelector

# Volume binding modes.
BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

#: The provisioner of classes whose volumes are only ever created by hand.
NO_PROVISIONER = "kubernetes.io/no-provisioner"
#: The annotation that marks the default StorageClass.
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
#: The CSINode annotation listing the in-tree plugins migrated to CSI on the node.
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


@dataclass(frozen=True, slots=True)
class TopologySelectorTerm:
    """One term of a class's ``allowedTopologies``: every (key, values) must hold."""

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` have, for every key, one of its values."""
        return all(labels.get(key) in values for key, values in self.match_label_expressions)


@dataclass(frozen=True, slots=True)
class StorageClass:
    """storage.k8s.io/v1 StorageClass."""

    name: str
    provisioner: str = ""
    parameters: Mapping[str, str] = field(default_factory=dict)
    reclaim_policy: str = "Delete"
    #: As written; "" when not set (the API server sets Immediate, so only objects made
    #: without it lack one; VolumeZone reports such a class).
    volume_binding_mode: str = BINDING_IMMEDIATE
    allow_volume_expansion: bool = False
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_default(self) -> bool:
        """Marked as the cluster's default class (either annotation, value ``true``)."""
        return (
            self.annotations.get(ANN_DEFAULT_CLASS) == "true"
            or self.annotations.get(ANN_BETA_DEFAULT_CLASS) == "true"
        )

    @property
    def waits_for_first_consumer(self) -> bool:
        """Whether its claims bind only once a pod using them is scheduled."""
        return self.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER

    @classmethod
    def from_dict(cls, raw: object) -> StorageClass:
        """Decode a storage.k8s.io/v1 StorageClass (defaults as the API server's)."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            terms = []
            for i, t in enumerate(get_list(obj, "allowedTopologies", "")):
                path = join("allowedTopologies", i)
                exprs = []
                for j, e in enumerate(get_list(as_map(t, path), "matchLabelExpressions", path)):
                    epath = join(join(path, "matchLabelExpressions"), j)
                    emap = as_map(e, epath)
                    exprs.append((get_str(emap, "key", epath), get_str_list(emap, "values", epath)))
                terms.append(TopologySelectorTerm(tuple(exprs)))
            return cls(
                name=name,
                provisioner=get_str(obj, "provisioner", ""),
                parameters=get_str_map(obj, "parameters", ""),
                reclaim_policy=get_str(obj, "reclaimPolicy", "") or "Delete",
                volume_binding_mode=get_str(obj, "volumeBindingMode", ""),
                allow_volume_expansion=get_bool(obj, "allowVolumeExpansion", ""),
                allowed_topologies=tuple(terms),
                annotations=get_str_map(meta, "annotations", "metadata"),
            )
        except ObjectError as err:
            raise err.located(f"StorageClass {name}") from None


@dataclass(frozen=True, slots=True)
class CSIDriver:
    """storage.k8s.io/v1 CSIDriver: how Kubernetes treats a CSI driver's volumes."""

    name: str
    attach_required: bool = True
    pod_info_on_mount: bool = False
    storage_capacity: bool = False
    volume_lifecycle_modes: tuple[str, ...] = ("Persistent",)
    node_allocatable_update_period_seconds: int | None = None

    @classmethod
    def from_dict(cls, raw: object) -> CSIDriver:
        """Decode a storage.k8s.io/v1 CSIDriver (defaults as the API server's)."""
        obj = as_map(raw, "")
        name = get_str(get_map(obj, "metadata", ""), "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            return cls(
                name=name,
                attach_required=get_bool(spec, "attachRequired", "spec", True),
                pod_info_on_mount=get_bool(spec, "podInfoOnMount", "spec"),
                storage_capacity=get_bool(spec, "storageCapacity", "spec"),
                volume_lifecycle_modes=get_str_list(spec, "volumeLifecycleModes", "spec")
                or ("Persistent",),
                node_allocatable_update_period_seconds=get_int(
                    spec, "nodeAllocatableUpdatePeriodSeconds", "spec"
                ),
            )
        except ObjectError as err:
            raise err.located(f"CSIDriver {name}") from None


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    """One driver installed on a node: its node id, topology keys, and attach limit
    (``allocatable_count``; None when the driver reports none)."""

    name: str
    node_id: str = ""
    topology_keys: tuple[str, ...] = ()
    allocatable_count: int | None = None


@dataclass(frozen=True, slots=True)
class CSINode:
    """storage.k8s.io/v1 CSINode: the CSI drivers of the node of the same name."""

    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    #: The in-tree plugins whose volumes the node handles through CSI (annotation).
    migrated_plugins: frozenset[str] = frozenset()

    def driver(self, name: str) -> CSINodeDriver | None:
        """The entry for driver ``name``, if installed."""
        for d in self.drivers:
            if d.name == name:
                return d
        return None

    @classmethod
    def from_dict(cls, raw: object) -> CSINode:
        """Decode a storage.k8s.io/v1 CSINode."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            drivers = []
            spec = get_map(obj, "spec", "")
            for i, d in enumerate(get_list(spec, "drivers", "spec")):
                path = join("spec.drivers", i)
                dmap = as_map(d, path)
                allocatable = get_map(dmap, "allocatable", path)
                drivers.append(
                    CSINodeDriver(
                        name=get_str(dmap, "name", path),
                        node_id=get_str(dmap, "nodeID", path),
                        topology_keys=get_str_list(dmap, "topologyKeys", path),
                        allocatable_count=get_int(allocatable, "count", join(path, "allocatable")),
                    )
                )
            migrated = get_str_map(meta, "annotations", "metadata").get(ANN_MIGRATED_PLUGINS, "")
            return cls(
                name=name,
                drivers=tuple(drivers),
                migrated_plugins=frozenset(p.strip() for p in migrated.split(",") if p.strip()),
            )
        except ObjectError as err:
            raise err.located(f"CSINode {name}") from None


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    """storage.k8s.io/v1 CSIStorageCapacity: how much a class can still provision in the
    topology segment its ``node_topology`` selects."""

    namespace: str
    name: str
    storage_class_name: str
    node_topology: LabelSelector | None = None
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None

    @classmethod
    def from_dict(cls, raw: object) -> CSIStorageCapacity:
        """Decode a storage.k8s.io/v1 CSIStorageCapacity."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            topology = obj.get("nodeTopology")
            return cls(
                namespace=namespace,
                name=name,
                storage_class_name=get_str(obj, "storageClassName", ""),
                node_topology=(
                    None
                    if topology is None
                    else nested("nodeTopology", LabelSelector.from_dict, topology)
                ),
                capacity=_quantity(obj, "capacity"),
                maximum_volume_size=_quantity(obj, "maximumVolumeSize"),
            )
        except ObjectError as err:
            raise err.located(f"CSIStorageCapacity {namespace}/{name}") from None


@dataclass(frozen=True, slots=True)
class VolumeAttachment:
    """storage.k8s.io/v1 VolumeAttachment: a volume a CSI driver attaches to a node
    (``persistent_volume_name`` is "" for an inline volume)."""

    name: str
    attacher: str
    node_name: str
    persistent_volume_name: str = ""
    attached: bool = False

    @classmethod
    def from_dict(cls, raw: object) -> VolumeAttachment:
        """Decode a storage.k8s.io/v1 VolumeAttachment."""
        obj = as_map(raw, "")
        name = get_str(get_map(obj, "metadata", ""), "name", "metadata")
        try:
            spec = get_map(obj, "spec", "")
            source = get_map(spec, "source", "spec")
            return cls(
                name=name,
                attacher=get_str(spec, "attacher", "spec"),
                node_name=get_str(spec, "nodeName", "spec"),
                persistent_volume_name=get_str(source, "persistentVolumeName", "spec.source"),
                attached=get_bool(get_map(obj, "status", ""), "attached", "status"),
            )
        except ObjectError as err:
            raise err.located(f"VolumeAttachment {name}") from None


def _quantity(obj: object, key: str) -> Quantity | None:
    value = as_map(obj, "").get(key)
    if value is None:
        return None
    try:
        return parse_quantity_value(value)
    except QuantityError as err:
        raise ObjectError(key, err.message) from None
