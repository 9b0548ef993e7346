"""What the registry strategies of the workload kinds decide beyond defaulting and validation.

Two parts of kube-apiserver's per-kind strategies (``pkg/registry/<group>/<kind>/strategy.go``)
live here:

- **PrepareForCreate** / **PrepareForUpdate**: a new workload (Deployment, ReplicaSet,
  StatefulSet, DaemonSet, ReplicationController, Job, CronJob) starts with an empty status
  whatever the body says (its JSON keeps the counts Go writes without ``omitempty``); a Job without
  ``manualSelector: true`` gets a generated selector on its own uid and the labels that
  select its pods (``batch.kubernetes.io/controller-uid``, ``batch.kubernetes.io/job-name``,
  and the legacy ``controller-uid`` / ``job-name``), unless the template already has them;
  a DaemonSet's ``deprecated.daemonset.template.generation`` annotation starts at 1 and
  grows by one with every template change.
- **The garbage collector's finalizers on delete** (``deletionFinalizersForGarbageCollection``
  in the generic registry's ``store.go``): a delete's ``propagationPolicy`` (or the older
  ``orphanDependents``) adds ``orphan`` or ``foregroundDeletion`` to the object's
  finalizers and takes the other away; with neither, a finalizer already there decides,
  then the kind's ``DefaultGarbageCollectionPolicy`` (batch/v1 Jobs and v1
  ReplicationControllers orphan their pods "for backwards compatibility"; everything else
  is deleted in the background). The object then stays, with a ``deletionTimestamp``,
  until the garbage collector has done its part and removed the finalizer.
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import (
    CRONJOBS,
    DAEMONSETS,
    DEPLOYMENTS,
    DEVICECLASSES,
    JOBS,
    REPLICASETS,
    REPLICATIONCONTROLLERS,
    RESOURCECLAIMS,
    STATEFULSETS,
    Resource,
)
from kubesched.apiserver.watch import Object
from kubesched.objects.dra.gates import drop_disabled_device_class_fields
from kubesched.objects.workloadpods import generate_job_selector

#: metav1.FinalizerOrphanDependents and metav1.FinalizerDeleteDependents.
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
#: metav1.DeletionPropagation values.
POLICIES = ("Orphan", "Background", "Foreground")


#: The empty status each workload's PrepareForCreate sets, as its JSON (fields without
#: ``omitempty`` are written as 0).
_EMPTY_STATUS: dict[Resource, dict[str, int]] = {
    DEPLOYMENTS: {},
    JOBS: {},
    REPLICASETS: {"replicas": 0},
    REPLICATIONCONTROLLERS: {"replicas": 0},
    STATEFULSETS: {"replicas": 0, "availableReplicas": 0},
    DAEMONSETS: {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    },
    CRONJOBS: {},
    # resourceclaimStrategy.PrepareForCreate: a new claim is not allocated.
    RESOURCECLAIMS: {},
}
#: apps/v1's form of the internal DaemonSetSpec.templateGeneration (the conversion keeps it
#: in this annotation): 1 on create, one more on every template change.
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
#: Kinds whose ``DefaultGarbageCollectionPolicy`` is OrphanDependents in this version.
_ORPHAN_BY_DEFAULT = (JOBS, REPLICATIONCONTROLLERS)


def needs_uid(res: Resource) -> bool:
    """Whether :func:`prepare_for_create` needs the object's uid (a Job's selector)."""
    return res == JOBS


def prepare_for_create(res: Resource, obj: Object) -> None:
    """``PrepareForCreate`` of the kind's strategy; ``metadata.uid`` is already the uid
    the object will be stored with when :func:`needs_uid` says it is needed."""
    if res.custom is not None:
        return
    empty = _EMPTY_STATUS.get(res)
    if empty is not None:
        obj["status"] = dict(empty)
    if res == JOBS:
        # Shared with the policy lab, which gives the Jobs of a pods file the same.
        generate_job_selector(obj)
    elif res == DAEMONSETS:
        _set_template_generation(obj, max(_template_generation(obj), 1))
    elif res == DEVICECLASSES:
        # DRAExtendedResource is alpha and off in 1.34: the field is dropped.
        drop_disabled_device_class_fields(obj)


def prepare_for_update(res: Resource, new: Object, old: Object, subresource: str) -> None:
    """``PrepareForUpdate`` beyond keeping status and generation (the store's): a
    DaemonSet's template generation is the server's, one more when the template changes
    (daemonSetStrategy.PrepareForUpdate); a DeviceClass loses the fields of gates that are
    off unless it had them."""
    if res == DEVICECLASSES and subresource == "":
        drop_disabled_device_class_fields(new, old)
        return
    if res != DAEMONSETS or subresource != "":
        return
    generation = _template_generation(old)
    if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
        generation += 1
    _set_template_generation(new, generation)


def _template_generation(obj: Object) -> int:
    annotations = (obj.get("metadata") or {}).get("annotations")
    value = annotations.get(TEMPLATE_GENERATION) if isinstance(annotations, dict) else None
    try:
        return int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0


def _set_template_generation(obj: Object, generation: int) -> None:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = str(generation)


# -- deletion ---------------------------------------------------------------------------


def check_delete_options(options: dict[str, Any]) -> None:
    """``ValidateDeleteOptions``: a known propagation policy, not both ways of saying it
    (422 Invalid on ``DeleteOptions.meta.k8s.io``)."""
    orphan = options.get("orphanDependents")
    policy = options.get("propagationPolicy")
    causes: list[errors.StatusCause] = []
    if orphan is not None and policy is not None:
        causes.append(
            {
                "reason": "FieldValueInvalid",
                "message": f'Invalid value: "{policy}": orphanDependents and '
                "deletionPropagation cannot be both set",
                "field": "propagationPolicy",
            }
        )
    if policy is not None and policy not in POLICIES:
        supported = ", ".join(f'"{p}"' for p in ("Foreground", "Background", "Orphan", "nil"))
        causes.append(
            {
                "reason": "FieldValueNotSupported",
                "message": f'Unsupported value: "{policy}": supported values: {supported}',
                "field": "propagationPolicy",
            }
        )
    if causes:
        raise errors.invalid("DeleteOptions", "", causes, "meta.k8s.io")


#: The job REST storage's warning when a delete leaves batch/v1's orphaning default at work.
JOB_DELETE_WARNING = (
    "child pods are preserved by default when jobs are deleted; set "
    "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress "
    "this warning"
)


def delete_warnings(res: Resource, options: dict[str, Any]) -> list[str]:
    """The warnings a delete with ``options`` gets: a Job deleted without a policy keeps
    its pods, which upstream's job storage says in a Warning header."""
    unset = options.get("propagationPolicy") is None and options.get("orphanDependents") is None
    return [JOB_DELETE_WARNING] if res == JOBS and unset else []


def _orphans(res: Resource, finalizers: list[str], options: dict[str, Any]) -> bool:
    # shouldOrphanDependents.
    orphan = options.get("orphanDependents")
    if orphan is not None:
        return orphan is True
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == "Orphan")
    for name in finalizers:
        if name == ORPHAN:
            return True
        if name == FOREGROUND:
            return False
    return res in _ORPHAN_BY_DEFAULT and res.custom is None


def _in_foreground(finalizers: list[str], options: dict[str, Any]) -> bool:
    # shouldDeleteDependents.
    if options.get("orphanDependents") is not None:
        return False
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == "Foreground")
    return FOREGROUND in finalizers


def finalizers_after_delete(res: Resource, obj: Object, options: dict[str, Any]) -> list[str]:
    """The object's finalizers once a delete with ``options`` has set the garbage
    collector's: both GC finalizers taken out, then ``orphan`` or
    ``foregroundDeletion`` put back as the options (or the object, or the kind) say.
    An unchanged set is returned in its old order."""
    current = [str(f) for f in (obj.get("metadata") or {}).get("finalizers") or []]
    kept = [f for f in current if f not in (ORPHAN, FOREGROUND)]
    if _orphans(res, current, options):
        kept.append(ORPHAN)
    if _in_foreground(current, options):
        kept.append(FOREGROUND)
    return current if set(kept) == set(current) else kept
