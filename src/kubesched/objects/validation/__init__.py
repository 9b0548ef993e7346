"""Validation of API objects as kube-apiserver's registry strategies run it, as pure
functions: an object (and on update the old one) in, a list of :class:`FieldError` out —
apimachinery's ``field.ErrorList``. The embedded API server turns the list into its 422
Invalid Status; the simulator's file loaders report it against the file that held the
object. Both therefore accept exactly the same objects.

:func:`validate_create` is ``Validate`` (metadata, then the kind's own checks);
:func:`validate_update` is ``ValidateUpdate`` or, for ``status``, the status strategy's.
Both first check the JSON types the decoder insists on and raise :class:`Undecodable`
(kube-apiserver answers those 400 BadRequest before validation runs). Each kind's validator
is looked up by kind in :data:`CREATE` / :data:`UPDATE` / :data:`STATUS`; kinds not listed
get the metadata checks only, and kind ``""`` (a custom resource, whose schema is its CRD's
business) too.

Objects are validated as stored, after defaulting: callers that read objects written by
hand default them first, as the API server does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kubesched.objects.validation.coordination import lease
from kubesched.objects.validation.core import (
    Errors,
    FieldError,
    NameCheck,
    Object,
    Undecodable,
    annotation_map,
    as_dict,
    as_list,
    invalid,
    labels,
    name_is_dns_label,
    name_is_dns_subdomain,
    object_meta,
    object_meta_update,
    regex_error,
)
from kubesched.objects.validation.cronjob import cron_job, cron_job_update
from kubesched.objects.validation.daemonset import (
    controller_revision,
    controller_revision_update,
    daemon_set,
    daemon_set_status,
    daemon_set_update,
)
from kubesched.objects.validation.deployment import (
    deployment,
    deployment_status,
    deployment_update,
    replica_set_status,
    selector_unchanged,
    stateful_set_update_rule,
)
from kubesched.objects.validation.job import job, job_status, job_update
from kubesched.objects.validation.kinds import (
    config_map,
    config_map_update,
    event_create,
    event_update,
    namespace,
    service,
)
from kubesched.objects.validation.node import node, node_status
from kubesched.objects.validation.persistentvolume import (
    persistent_volume,
    persistent_volume_claim,
    persistent_volume_claim_status,
    persistent_volume_claim_update,
    persistent_volume_update,
)
from kubesched.objects.validation.pod import pod_create, pod_metadata_and_spec
from kubesched.objects.validation.pod_update import pod_status_update, pod_update
from kubesched.objects.validation.policy import pod_disruption_budget
from kubesched.objects.validation.resource import (
    device_class,
    device_class_update,
    resource_claim,
    resource_claim_status,
    resource_claim_template,
    resource_claim_template_update,
    resource_claim_update,
    resource_slice,
    resource_slice_update,
)
from kubesched.objects.validation.scheduling import priority_class, priority_class_update
from kubesched.objects.validation.secret import secret, secret_update
from kubesched.objects.validation.statefulset import stateful_set, stateful_set_status
from kubesched.objects.validation.storage import (
    csi_driver,
    csi_driver_update,
    csi_node,
    csi_node_update,
    csi_storage_capacity,
    csi_storage_capacity_update,
    storage_class,
    storage_class_update,
    volume_attachment,
    volume_attachment_update,
    volume_attributes_class,
    volume_attributes_class_update,
)
from kubesched.objects.validation.types import check_types
from kubesched.objects.validation.workloads import replica_set, replication_controller

__all__ = [
    "CREATE",
    "STATUS",
    "UPDATE",
    "Errors",
    "FieldError",
    "Object",
    "Undecodable",
    "validate_create",
    "validate_update",
]

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(_DNS1035_FMT)
_DNS1035_MESSAGE = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character",
    _DNS1035_FMT,
    "my-name",
    "abc-123",
)


def _name_is_dns1035_label(name: str, prefix: bool) -> tuple[str, ...]:
    value = name[:-2] + "a" if prefix and len(name) > 1 and name.endswith("-") else name
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if _DNS1035_RE.fullmatch(value) is None:
        problems.append(_DNS1035_MESSAGE)
    return tuple(problems)


#: How each kind's names are checked (``ValidateXName`` in upstream's validation); the
#: others are DNS subdomains.
NAME_CHECKS: dict[str, NameCheck] = {
    "Namespace": name_is_dns_label,
    "Service": _name_is_dns1035_label,
}

#: ``Validate`` of each kind's strategy, after the metadata checks.
CREATE: dict[str, Callable[[Object], Errors]] = {
    "Pod": pod_create,
    "ConfigMap": config_map,
    "Namespace": namespace,
    "Node": node,
    "Service": service,
    "Deployment": deployment,
    "ReplicaSet": replica_set,
    "StatefulSet": stateful_set,
    "DaemonSet": daemon_set,
    "ControllerRevision": controller_revision,
    "Job": job,
    "CronJob": cron_job,
    "Secret": secret,
    "ReplicationController": replication_controller,
    "PodDisruptionBudget": pod_disruption_budget,
    "PriorityClass": priority_class,
    "Lease": lease,
    "DeviceClass": device_class,
    "ResourceClaim": resource_claim,
    "ResourceClaimTemplate": resource_claim_template,
    "ResourceSlice": resource_slice,
    "PersistentVolume": persistent_volume,
    "PersistentVolumeClaim": persistent_volume_claim,
    "StorageClass": storage_class,
    "CSINode": csi_node,
    "CSIDriver": csi_driver,
    "CSIStorageCapacity": csi_storage_capacity,
    "VolumeAttachment": volume_attachment,
    "VolumeAttributesClass": volume_attributes_class,
}


def _pod_update(new: Object, old: Object) -> Errors:
    # ValidatePodUpdate: the spec as validatePodMetadataAndSpec sees it, then what may change.
    return pod_metadata_and_spec(new) + pod_update(new, old)


#: ``ValidateUpdate`` of each kind's strategy; kinds not listed run :data:`CREATE`'s check.
UPDATE: dict[str, Callable[[Object, Object], Errors]] = {
    "Pod": _pod_update,
    "ConfigMap": config_map_update,
    "Namespace": lambda n, o: [],  # ValidateNamespaceUpdate checks the metadata only
    "PriorityClass": lambda n, o: priority_class(n) + priority_class_update(n, o),
    "Deployment": deployment_update,
    "ReplicaSet": lambda n, o: replica_set(n) + selector_unchanged(n, o),
    "StatefulSet": lambda n, o: stateful_set(n) + stateful_set_update_rule(n, o),
    "DaemonSet": daemon_set_update,
    "ControllerRevision": controller_revision_update,
    "Job": job_update,
    "CronJob": cron_job_update,
    "Secret": secret_update,
    "DeviceClass": device_class_update,
    "ResourceClaim": resource_claim_update,
    "ResourceClaimTemplate": resource_claim_template_update,
    "ResourceSlice": resource_slice_update,
    "PersistentVolume": persistent_volume_update,
    "PersistentVolumeClaim": persistent_volume_claim_update,
    "StorageClass": storage_class_update,
    "CSINode": csi_node_update,
    "CSIDriver": csi_driver_update,
    "CSIStorageCapacity": lambda n, o: csi_storage_capacity(n) + csi_storage_capacity_update(n, o),
    "VolumeAttachment": volume_attachment_update,
    "VolumeAttributesClass": volume_attributes_class_update,
}
#: Status subresource writes: what each kind's status strategy validates.
STATUS: dict[str, Callable[[Object], Errors]] = {
    "Pod": pod_status_update,
    "Node": node_status,
    "Deployment": deployment_status,
    "ReplicaSet": replica_set_status,
    "ReplicationController": replica_set_status,
    "StatefulSet": stateful_set_status,
    "DaemonSet": daemon_set_status,
    "Job": job_status,
    "PersistentVolumeClaim": persistent_volume_claim_status,
    "VolumeAttachment": volume_attachment,
}

#: Status writes whose strategy compares with the object before the write.
STATUS_UPDATE: dict[str, Callable[[Object, Object], Errors]] = {
    "ResourceClaim": resource_claim_status,
}

#: ``standardFinalizers``: the unqualified finalizer names the core API accepts.
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def metadata(kind: str, obj: Object, *, namespaced: bool, core_group: bool) -> Errors:
    """``ValidateObjectMeta`` with the kind's name rule; the core API group's adds
    ``validateKubeFinalizerName``."""
    meta = as_dict(obj.get("metadata"))
    errs = object_meta(meta, namespaced, NAME_CHECKS.get(kind, name_is_dns_subdomain))
    if kind and core_group:
        for i, name in enumerate(as_list(meta.get("finalizers"))):
            text = str(name)
            if "/" not in text and text not in _STANDARD_FINALIZERS:
                errs.append(
                    invalid(
                        f"metadata.finalizers[{i}]",
                        text,
                        "name is neither a standard finalizer name nor is it fully qualified",
                    )
                )
    return errs


def validate_create(
    kind: str,
    obj: Object,
    *,
    namespaced: bool,
    core_group: bool,
    strict_events: bool = False,
) -> Errors:
    """Every field error ``Validate`` finds in ``obj``, a new object of the built-in ``kind``
    (``""`` for a custom resource). ``namespaced`` is the kind's scope, ``core_group`` whether
    it is served by the core API (``v1``); ``strict_events`` is for events written through
    events.k8s.io/v1. Raises :class:`Undecodable` for a JSON type the decoder refuses."""
    check_types(kind, obj)
    errs = metadata(kind, obj, namespaced=namespaced, core_group=core_group)
    check = CREATE.get(kind)
    if check is not None:
        errs.extend(check(obj))
    elif kind == "Event":
        errs.extend(event_create(obj, strict_events))
    return errs


def validate_update(
    kind: str,
    new: Object,
    old: Object,
    *,
    namespaced: bool,
    core_group: bool,
    subresource: str = "",
    strict_events: bool = False,
) -> Errors:
    """Every field error ``ValidateUpdate`` (or, for ``subresource="status"``, the status
    strategy) finds in a write of ``new`` over ``old``; as :func:`validate_create`."""
    check_types(kind, new)
    meta = as_dict(new.get("metadata"))
    errs = labels(meta.get("labels"), "metadata.labels")
    errs.extend(annotation_map(meta.get("annotations"), "metadata.annotations"))
    if subresource == "status":
        status_check = STATUS.get(kind)
        if status_check is not None:
            errs.extend(status_check(new))
        status_update = STATUS_UPDATE.get(kind)
        if status_update is not None:
            errs.extend(status_update(new, old))
    elif subresource == "":
        errs = metadata(kind, new, namespaced=namespaced, core_group=core_group)
        errs.extend(object_meta_update(meta, as_dict(old.get("metadata"))))
        update = UPDATE.get(kind)
        if update is not None:
            errs.extend(update(new, old))
        elif kind == "Event":
            errs.extend(event_update(new, old, strict_events))
        else:
            check = CREATE.get(kind)
            if check is not None:
                errs.extend(check(new))
    return errs
