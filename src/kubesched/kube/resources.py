"""The REST collections the scheduler reads and writes, and how to decode each.

A :class:`Resource` names a collection (group, version, plural, scope) and carries the
function that turns one wire object into what callers get: a compact
:mod:`kubesched.objects` type where one exists (``Pod.from_dict``), the plain dict
otherwise. ``resource.raw`` is the same collection decoded as plain dicts, for callers
that must write back every field (an update of a lossy typed view would drop fields).
:func:`custom_resource` names a collection served through a CustomResourceDefinition
(PodGroups, ElasticQuotas...), decoded as plain dicts unless given a decoder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from kubesched.objects.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod, scheduled_condition
from kubesched.objects.podgroup import PodGroup
from kubesched.objects.policy import Namespace, PodDisruptionBudget, PriorityClass, Workload
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
    "BINDINGS",
    "CSI_DRIVERS",
    "CSI_NODES",
    "CSI_STORAGE_CAPACITIES",
    "CUSTOM_RESOURCE_DEFINITIONS",
    "DEVICE_CLASSES",
    "ELASTIC_QUOTAS",
    "EVENTS",
    "LEASES",
    "NAMESPACES",
    "NODES",
    "PERSISTENT_VOLUMES",
    "PERSISTENT_VOLUME_CLAIMS",
    "PODS",
    "POD_DISRUPTION_BUDGETS",
    "POD_GROUPS",
    "PRIORITY_CLASSES",
    "REPLICATION_CONTROLLERS",
    "REPLICA_SETS",
    "RESOURCE_CLAIMS",
    "RESOURCE_CLAIM_TEMPLATES",
    "RESOURCE_SLICES",
    "SERVICES",
    "SERVICE_ACCOUNTS",
    "STATEFUL_SETS",
    "STORAGE_CLASSES",
    "VOLUME_ATTACHMENTS",
    "RawObject",
    "Resource",
    "custom_resource",
    "decode_pod_update",
]

T = TypeVar("T")
RawObject = dict[str, Any]


def _identity(raw: RawObject) -> RawObject:
    return raw


@dataclass(frozen=True)
class Resource(Generic[T]):
    """One collection and its decoder: ``Resource("", "v1", "pods", "Pod", True, decode)``."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    decode: Callable[[RawObject], T]
    #: ``decode_update(old, old_raw, new_raw)``: the same as ``decode(new_raw)``, cheaper
    #: when it can reuse ``old`` (decoded from ``old_raw``). Informers keep the wire
    #: objects of collections that have one.
    decode_update: Callable[[T, RawObject, RawObject], T] | None = None

    @property
    def raw(self) -> Resource[RawObject]:
        """The same collection, decoded as plain dicts."""
        return Resource(
            self.group, self.version, self.plural, self.kind, self.namespaced, _identity
        )

    def with_decoder(self, decode: Callable[[RawObject], Any]) -> Resource[Any]:
        """The same collection with another decoder (for a custom resource's own type)."""
        return replace(self, decode=decode, decode_update=None)

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, ``apps/v1`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        """The URL path: ``/api/v1/namespaces/ns/pods/name/status`` and the like.

        A namespaced resource without ``namespace`` is the all-namespaces collection.
        """
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [base]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name:
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


#: What ``Pod.from_dict`` reads from metadata and from status.
_POD_METADATA = ("name", "namespace", "uid", "labels", "creationTimestamp", "deletionTimestamp")


def decode_pod_update(old: Pod, old_raw: RawObject, new_raw: RawObject) -> Pod:
    """``Pod.from_dict(new_raw)``, derived from ``old`` when the update changed only what
    a binding or a status write changes (``spec.nodeName``, ``status.phase``,
    ``status.nominatedNodeName``, the PodScheduled condition, fields the typed view does
    not read): the containers,
    requests, affinity and the rest are then the same, and decoding them again was the
    largest cost of a bind's watch event."""
    om, nm = old_raw.get("metadata"), new_raw.get("metadata")
    osp, nsp = old_raw.get("spec"), new_raw.get("spec")
    ost, nst = old_raw.get("status") or {}, new_raw.get("status") or {}
    if not all(isinstance(part, dict) for part in (om, nm, osp, nsp, ost, nst)):
        return Pod.from_dict(new_raw)
    assert isinstance(om, dict) and isinstance(nm, dict)
    assert isinstance(osp, dict) and isinstance(nsp, dict)
    if any(om.get(k) != nm.get(k) for k in _POD_METADATA):
        return Pod.from_dict(new_raw)
    if ost.get("qosClass") != nst.get("qosClass"):
        return Pod.from_dict(new_raw)
    if ost.get("resourceClaimStatuses") != nst.get("resourceClaimStatuses"):
        return Pod.from_dict(new_raw)
    if len(osp) - ("nodeName" in osp) != len(nsp) - ("nodeName" in nsp):
        return Pod.from_dict(new_raw)
    missing = object()
    for key, value in nsp.items():
        if key != "nodeName" and osp.get(key, missing) != value:
            return Pod.from_dict(new_raw)
    node_name = nsp.get("nodeName") or ""
    phase = nst.get("phase") or "Pending"
    nominated = nst.get("nominatedNodeName") or ""
    if not (isinstance(node_name, str) and isinstance(phase, str) and isinstance(nominated, str)):
        return Pod.from_dict(new_raw)  # the decoder names the bad field
    return old.evolve(
        node_name=node_name,
        phase=phase,
        nominated_node_name=nominated,
        scheduled_condition=scheduled_condition(nst),
    )


NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False, Namespace.from_dict)
NODES = Resource("", "v1", "nodes", "Node", False, Node.from_dict)
PODS = Resource("", "v1", "pods", "Pod", True, Pod.from_dict, decode_pod_update)
BINDINGS = Resource("", "v1", "bindings", "Binding", True, _identity)
EVENTS = Resource("", "v1", "events", "Event", True, _identity)
SERVICES = Resource("", "v1", "services", "Service", True, Workload.from_dict)
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", True, _identity)
REPLICATION_CONTROLLERS = Resource(
    "", "v1", "replicationcontrollers", "ReplicationController", True, Workload.from_dict
)
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet", True, Workload.from_dict)
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", "StatefulSet", True, Workload.from_dict)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True, _identity)
PRIORITY_CLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, PriorityClass.from_dict
)
POD_DISRUPTION_BUDGETS = Resource(
    "policy",
    "v1",
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    True,
    PodDisruptionBudget.from_dict,
)
PERSISTENT_VOLUMES = Resource(
    "", "v1", "persistentvolumes", "PersistentVolume", False, PersistentVolume.from_dict
)
PERSISTENT_VOLUME_CLAIMS = Resource(
    "",
    "v1",
    "persistentvolumeclaims",
    "PersistentVolumeClaim",
    True,
    PersistentVolumeClaim.from_dict,
)
STORAGE_CLASSES = Resource(
    "storage.k8s.io", "v1", "storageclasses", "StorageClass", False, StorageClass.from_dict
)
CSI_NODES = Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False, CSINode.from_dict)
CSI_DRIVERS = Resource(
    "storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, CSIDriver.from_dict
)
CSI_STORAGE_CAPACITIES = Resource(
    "storage.k8s.io",
    "v1",
    "csistoragecapacities",
    "CSIStorageCapacity",
    True,
    CSIStorageCapacity.from_dict,
)
VOLUME_ATTACHMENTS = Resource(
    "storage.k8s.io",
    "v1",
    "volumeattachments",
    "VolumeAttachment",
    False,
    VolumeAttachment.from_dict,
)
DEVICE_CLASSES = Resource(
    "resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, DeviceClass.from_dict
)
RESOURCE_SLICES = Resource(
    "resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, ResourceSlice.from_dict
)
RESOURCE_CLAIMS = Resource(
    "resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, ResourceClaim.from_dict
)
RESOURCE_CLAIM_TEMPLATES = Resource(
    "resource.k8s.io",
    "v1",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    True,
    ResourceClaimTemplate.from_dict,
)
#: scheduler-plugins' custom resources (served once their CRDs are installed).
POD_GROUPS = Resource(
    "scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True, PodGroup.from_dict
)
ELASTIC_QUOTAS = Resource(
    "scheduling.x-k8s.io",
    "v1alpha1",
    "elasticquotas",
    "ElasticQuota",
    True,
    ElasticQuota.from_dict,
)
CUSTOM_RESOURCE_DEFINITIONS = Resource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    False,
    _identity,
)


def custom_resource(
    group: str, version: str, plural: str, kind: str, namespaced: bool = True
) -> Resource[RawObject]:
    """A custom resource's collection, decoded as plain dicts (``with_decoder`` for a
    type): ``custom_resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup")``."""
    if not group or not version or not plural or not kind:
        raise ValueError(
            f"a custom resource needs a group, version, plural and kind: got "
            f"{group!r}, {version!r}, {plural!r}, {kind!r}"
        )
    return Resource(group, version, plural, kind, namespaced, _identity)
