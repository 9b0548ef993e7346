"""The resources the embedded API server serves, and what it knows about each.

A :class:`Resource` is one REST collection (``pods`` in core/v1, ``leases`` in
coordination.k8s.io/v1): its kind, scope, subresources and the field selectors its
list and watch accept (upstream registers those per resource, e.g. ``pod.GetAttrs``).
:data:`BUILTIN` is the served set; the store and the HTTP layer look resources up here. A
resource with ``view_of`` keeps no objects of its own: it serves another's under a
different schema (:mod:`kubesched.apiserver.eventsv1`, or another version of a custom
resource). Custom resources (:mod:`kubesched.apiserver.crd`) are resources made at run
time from a CustomResourceDefinition; they carry a :class:`CustomInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_META_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class ScalePaths:
    """A CRD version's ``subresources.scale``: where a custom resource keeps its replicas."""

    spec_replicas: str
    status_replicas: str
    #: Empty when the CRD names no ``labelSelectorPath``.
    label_selector: str = ""


@dataclass(frozen=True, eq=False)
class CustomInfo:
    """What a custom resource's version serves, from its CustomResourceDefinition."""

    #: The CRD's name (``<plural>.<group>``).
    crd: str
    #: The version's ``schema.openAPIV3Schema`` (None: anything goes).
    schema: dict[str, Any] | None
    #: The version's ``additionalPrinterColumns`` (with upstream's default, Age, if empty).
    columns: tuple[dict[str, Any], ...] = ()
    #: The version's scale subresource, if it declares one.
    scale: ScalePaths | None = None


@dataclass(frozen=True)
class Resource:
    """One served collection, as discovery describes it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    #: Subresources served (``status``, ``binding``, ``scale``).
    subresources: tuple[str, ...] = ()
    #: Field selector labels accepted besides metadata.name/namespace.
    fields: tuple[str, ...] = ()
    #: Verbs advertised in discovery.
    verbs: tuple[str, ...] = (
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    )
    #: Delete returns the deleted object (pods, namespaces) rather than a Success Status.
    delete_returns_object: bool = False
    categories: tuple[str, ...] = field(default=())
    #: For a second view of another resource's objects (events.k8s.io/v1 events over
    #: core/v1 events): the resource whose store holds them.
    view_of: Resource | None = None
    #: Whether an annotation change bumps ``metadata.generation`` too (Deployments: their
    #: annotations are copied to their ReplicaSets, deploymentStrategy.PrepareForUpdate).
    annotations_bump_generation: bool = False
    #: For a custom resource: its schema and printer columns (not compared: one
    #: collection is one resource whatever its CRD says now).
    custom: CustomInfo | None = field(default=None, compare=False)
    #: False for a collection kept only as the storage behind views (a custom resource's
    #: objects, whatever version wrote them): neither routed nor in discovery.
    served: bool = True

    @property
    def group_version(self) -> str:
        """``v1`` for the core group, ``coordination.k8s.io/v1`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str, str]:
        """(group, version, plural): how the store names a collection."""
        return (self.group, self.version, self.plural)

    @property
    def storage(self) -> Resource:
        """The resource whose objects this one serves: itself, or the one it is a view of."""
        return self.view_of if self.view_of is not None else self

    @property
    def has_status(self) -> bool:
        """Whether ``status`` is a subresource, kept apart from the main resource's writes."""
        return "status" in self.subresources

    def spec_changed(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether an update from ``old`` to ``new`` bumps ``metadata.generation``.

        Built-ins: a change of ``spec``. Custom resources (upstream's
        customResourceStrategy): a change of anything but metadata, and but status when
        status is a subresource.
        """
        if self.custom is None:
            if self.annotations_bump_generation and _annotations(old) != _annotations(new):
                return True
            return old.get("spec") != new.get("spec")
        kept = ("metadata", "status") if self.has_status else ("metadata",)
        return {k: v for k, v in old.items() if k not in kept} != {
            k: v for k, v in new.items() if k not in kept
        }

    @property
    def selectable_fields(self) -> tuple[str, ...]:
        """Every field label that list and watch accept in ``fieldSelector``."""
        return _META_FIELDS + self.fields


def _annotations(obj: dict[str, Any]) -> Any:
    meta = obj.get("metadata")
    return (meta.get("annotations") or None) if isinstance(meta, dict) else None


NAMESPACES = Resource(
    "",
    "v1",
    "namespaces",
    "Namespace",
    False,
    "namespace",
    ("ns",),
    ("status",),
    fields=("status.phase",),
    delete_returns_object=True,
)
NODES = Resource(
    "",
    "v1",
    "nodes",
    "Node",
    False,
    "node",
    ("no",),
    ("status",),
    fields=("spec.unschedulable",),
)
PODS = Resource(
    "",
    "v1",
    "pods",
    "Pod",
    True,
    "pod",
    ("po",),
    ("status", "binding", "eviction"),
    fields=(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    delete_returns_object=True,
    categories=("all",),
)
BINDINGS = Resource("", "v1", "bindings", "Binding", True, "binding", verbs=("create",))
EVENTS = Resource(
    "",
    "v1",
    "events",
    "Event",
    True,
    "event",
    ("ev",),
    fields=(
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True, "lease")
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True, "configmap", ("cm",))
SERVICES = Resource(
    "",
    "v1",
    "services",
    "Service",
    True,
    "service",
    ("svc",),
    ("status",),
    delete_returns_object=True,
    categories=("all",),
)
REPLICATIONCONTROLLERS = Resource(
    "",
    "v1",
    "replicationcontrollers",
    "ReplicationController",
    True,
    "replicationcontroller",
    ("rc",),
    ("status", "scale"),
    fields=("status.replicas",),
    categories=("all",),
)
PRIORITYCLASSES = Resource(
    "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, "priorityclass", ("pc",)
)
PODDISRUPTIONBUDGETS = Resource(
    "policy",
    "v1",
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    True,
    "poddisruptionbudget",
    ("pdb",),
    ("status",),
)
REPLICASETS = Resource(
    "apps",
    "v1",
    "replicasets",
    "ReplicaSet",
    True,
    "replicaset",
    ("rs",),
    ("status", "scale"),
    fields=("status.replicas",),
    categories=("all",),
)
STATEFULSETS = Resource(
    "apps",
    "v1",
    "statefulsets",
    "StatefulSet",
    True,
    "statefulset",
    ("sts",),
    ("status", "scale"),
    categories=("all",),
)
DAEMONSETS = Resource(
    "apps",
    "v1",
    "daemonsets",
    "DaemonSet",
    True,
    "daemonset",
    ("ds",),
    ("status",),
    categories=("all",),
)
CONTROLLERREVISIONS = Resource(
    "apps", "v1", "controllerrevisions", "ControllerRevision", True, "controllerrevision"
)
DEPLOYMENTS = Resource(
    "apps",
    "v1",
    "deployments",
    "Deployment",
    True,
    "deployment",
    ("deploy",),
    ("status", "scale"),
    categories=("all",),
    annotations_bump_generation=True,
)
JOBS = Resource(
    "batch",
    "v1",
    "jobs",
    "Job",
    True,
    "job",
    (),
    ("status",),
    fields=("status.successful",),
    categories=("all",),
)
CRONJOBS = Resource(
    "batch",
    "v1",
    "cronjobs",
    "CronJob",
    True,
    "cronjob",
    ("cj",),
    ("status",),
    categories=("all",),
)
SECRETS = Resource("", "v1", "secrets", "Secret", True, "secret", fields=("type",))
SERVICEACCOUNTS = Resource(
    "", "v1", "serviceaccounts", "ServiceAccount", True, "serviceaccount", ("sa",)
)
# Storage: core/v1 volumes and claims (their field selectors keep upstream's legacy
# ``name`` label, "a bug, but we need to support it"), and storage.k8s.io/v1.
PERSISTENTVOLUMES = Resource(
    "",
    "v1",
    "persistentvolumes",
    "PersistentVolume",
    False,
    "persistentvolume",
    ("pv",),
    ("status",),
    fields=("name",),
)
PERSISTENTVOLUMECLAIMS = Resource(
    "",
    "v1",
    "persistentvolumeclaims",
    "PersistentVolumeClaim",
    True,
    "persistentvolumeclaim",
    ("pvc",),
    ("status",),
    fields=("name",),
)
STORAGECLASSES = Resource(
    "storage.k8s.io", "v1", "storageclasses", "StorageClass", False, "storageclass", ("sc",)
)
CSINODES = Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False, "csinode")
CSIDRIVERS = Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, "csidriver")
CSISTORAGECAPACITIES = Resource(
    "storage.k8s.io",
    "v1",
    "csistoragecapacities",
    "CSIStorageCapacity",
    True,
    "csistoragecapacity",
)
VOLUMEATTACHMENTS = Resource(
    "storage.k8s.io",
    "v1",
    "volumeattachments",
    "VolumeAttachment",
    False,
    "volumeattachment",
    subresources=("status",),
)
VOLUMEATTRIBUTESCLASSES = Resource(
    "storage.k8s.io",
    "v1",
    "volumeattributesclasses",
    "VolumeAttributesClass",
    False,
    "volumeattributesclass",
    ("vac",),
)
#: events.k8s.io/v1 events: the core/v1 events under upstream's other field names.
EVENTS_V1 = Resource(
    "events.k8s.io",
    "v1",
    "events",
    "Event",
    True,
    "event",
    ("ev",),
    fields=EVENTS.fields,
    view_of=EVENTS,
)

CUSTOMRESOURCEDEFINITIONS = Resource(
    "apiextensions.k8s.io",
    "v1",
    "customresourcedefinitions",
    "CustomResourceDefinition",
    False,
    "customresourcedefinition",
    ("crd", "crds"),
    ("status",),
    categories=("api-extensions",),
)

#: The self-reviews (:mod:`kubesched.apiserver.access`): created, answered, never stored.
SELF_SUBJECT_ACCESS_REVIEWS = Resource(
    "authorization.k8s.io",
    "v1",
    "selfsubjectaccessreviews",
    "SelfSubjectAccessReview",
    False,
    "selfsubjectaccessreview",
    verbs=("create",),
)
SELF_SUBJECT_RULES_REVIEWS = Resource(
    "authorization.k8s.io",
    "v1",
    "selfsubjectrulesreviews",
    "SelfSubjectRulesReview",
    False,
    "selfsubjectrulesreview",
    verbs=("create",),
)
SELF_SUBJECT_REVIEWS = Resource(
    "authentication.k8s.io",
    "v1",
    "selfsubjectreviews",
    "SelfSubjectReview",
    False,
    "selfsubjectreview",
    verbs=("create",),
)

#: resource.k8s.io/v1 (Dynamic Resource Allocation; v1 only, as 1.34 serves it by default).
DEVICECLASSES = Resource(
    "resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, "deviceclass"
)
RESOURCECLAIMS = Resource(
    "resource.k8s.io",
    "v1",
    "resourceclaims",
    "ResourceClaim",
    True,
    "resourceclaim",
    (),
    ("status",),
)
RESOURCECLAIMTEMPLATES = Resource(
    "resource.k8s.io",
    "v1",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    True,
    "resourceclaimtemplate",
)
RESOURCESLICES = Resource(
    "resource.k8s.io",
    "v1",
    "resourceslices",
    "ResourceSlice",
    False,
    "resourceslice",
    fields=("spec.nodeName", "spec.driver"),
)

#: Every resource this server serves, in discovery order.
BUILTIN: tuple[Resource, ...] = (
    NAMESPACES,
    NODES,
    PODS,
    BINDINGS,
    EVENTS,
    CONFIGMAPS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    REPLICATIONCONTROLLERS,
    LEASES,
    PRIORITYCLASSES,
    PODDISRUPTIONBUDGETS,
    DEPLOYMENTS,
    REPLICASETS,
    STATEFULSETS,
    DAEMONSETS,
    CONTROLLERREVISIONS,
    JOBS,
    CRONJOBS,
    PERSISTENTVOLUMES,
    PERSISTENTVOLUMECLAIMS,
    STORAGECLASSES,
    CSINODES,
    CSIDRIVERS,
    CSISTORAGECAPACITIES,
    VOLUMEATTACHMENTS,
    VOLUMEATTRIBUTESCLASSES,
    EVENTS_V1,
    CUSTOMRESOURCEDEFINITIONS,
    DEVICECLASSES,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    RESOURCESLICES,
    SELF_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_RULES_REVIEWS,
    SELF_SUBJECT_REVIEWS,
)


def by_key(resources: tuple[Resource, ...] = BUILTIN) -> dict[tuple[str, str, str], Resource]:
    """Index resources by (group, version, plural)."""
    return {r.key: r for r in resources}
