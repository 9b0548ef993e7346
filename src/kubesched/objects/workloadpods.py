"""The pods a workload's controller creates first, one function per kind.

What kube-controller-manager does with a new workload, reduced to its first sync and
without the API server in between, so that a manifest can be scheduled as the pods it
becomes: a Deployment makes a ReplicaSet ``<deployment>-<pod-template-hash>``, which makes
``replicas`` pods ``<replicaset>-<5 random characters>``; a StatefulSet makes
``<set>-<ordinal>`` for each replica (:mod:`kubesched.objects.statefulset`); a Job makes
``min(parallelism, completions - succeeded)`` pods (Indexed: indexes 0, 1, ...); a
DaemonSet one per node that should run it (:mod:`kubesched.objects.daemonset`); a
CronJob none until its schedule fires. Every pod has its controller's labels and owner
reference. Children the workload already has (pods, or a Deployment's ReplicaSet) are
subtracted, as a controller counts what exists before creating.

Names the API server would generate (``generateName`` + five characters, uids) come from
a :class:`Names` over a seeded :class:`random.Random`, so one seed gives one answer.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.objects import daemonset, statefulset
from kubesched.objects import deployment as du
from kubesched.objects.node import Node
from kubesched.objects.podtemplate import controller_ref, pod_from_template

__all__ = [
    "JOB_TRACKING_FINALIZER",
    "Expansion",
    "Names",
    "cron_job_pods",
    "daemon_set_pods",
    "deployment_pods",
    "generate_job_selector",
    "indexed_job_generate_name",
    "indexed_job_pod_template",
    "job_pod_template",
    "job_pods",
    "new_replica_set",
    "replica_set_pods",
    "stateful_set_pods",
]

Raw = dict[str, Any]

#: The finalizer the Job controller puts on its pods until it has counted them.
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
#: The annotation and label carrying an Indexed Job pod's completion index.
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: The environment variable an Indexed Job's containers read their index from.
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
#: The labels a Job's generated selector puts on its template (``batch.JobNameLabel``,
#: ``batch.ControllerUidLabel`` and their legacy forms).
JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
CONTROLLER_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
#: ``names.MaxGeneratedNameLength`` and the random suffix of a generated name.
MAX_GENERATED_NAME_LENGTH = 58
_SUFFIX_LENGTH = 5
#: ``utilrand``'s alphabet: no vowels, no look-alike characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


class Names:
    """What the API server generates on create: names for ``generateName`` (the prefix,
    cut to 58 characters, and five random characters) and uids — from ``rng``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def generate(self, prefix: str) -> str:
        """``SimpleNameGenerator.GenerateName``."""
        base = prefix[:MAX_GENERATED_NAME_LENGTH]
        return base + "".join(self.rng.choice(_ALPHANUMS) for _ in range(_SUFFIX_LENGTH))

    def uid(self) -> str:
        """A version-4 UUID."""
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def name(self, pod: Raw) -> Raw:
        """``pod`` with ``metadata.name`` generated from its ``generateName``."""
        meta = pod["metadata"]
        if not meta.get("name"):
            meta["name"] = self.generate(str(meta.get("generateName") or ""))
        return pod


@dataclass
class Expansion:
    """What a workload's controller creates first."""

    #: The pods, named, in the order the controller sends them.
    pods: list[Raw] = field(default_factory=list)
    #: Other objects it creates (a Deployment's ReplicaSet).
    owners: list[Raw] = field(default_factory=list)
    #: Why it creates fewer pods than its spec asks (suspended, finished, ...).
    notes: list[str] = field(default_factory=list)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def replica_set_pods(
    rs: Mapping[str, Any], names: Names, existing: int = 0, kind: str = "ReplicaSet"
) -> Expansion:
    """A ReplicaSet's (or, with ``kind``, a ReplicationController's) missing replicas:
    ``replicas - existing`` pods from its template (``manageReplicas``)."""
    api_version = "v1" if kind == "ReplicationController" else "apps/v1"
    missing = _int(_spec(rs).get("replicas"), 1) - existing
    out = Expansion()
    if missing <= 0:
        return out
    template = _spec(rs).get("template") or {}
    ref = controller_ref(rs, api_version, kind)
    pod = pod_from_template(template, rs, ref)
    out.pods = [names.name(copy.deepcopy(pod)) for _ in range(missing)]
    return out


def new_replica_set(d: Mapping[str, Any], revision: str = "1") -> Raw:
    """The ReplicaSet a Deployment creates for its template (``getNewReplicaSet``):
    ``<deployment>-<pod-template-hash>``, the hash label on its template, selector and
    labels, owned by the Deployment, with the revision and replica annotations, and the
    Deployment's replicas (a new Deployment has no old ReplicaSets to surge over)."""
    spec = _spec(d)
    meta = _meta(d)
    template = copy.deepcopy(dict(spec.get("template") or {}))
    collisions = (d.get("status") or {}).get("collisionCount")
    hash_ = du.compute_hash(template, collisions if isinstance(collisions, int) else None)
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**(tmeta.get("labels") or {}), du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: hash_}
    selector = copy.deepcopy(dict(spec.get("selector") or {}))
    selector["matchLabels"] = {
        **(selector.get("matchLabels") or {}),
        du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: hash_,
    }
    rs_meta: Raw = {
        "name": f"{meta.get('name', '')}-{hash_}",
        "ownerReferences": [controller_ref(d, "apps/v1", "Deployment")],
        "labels": dict(tmeta["labels"]),
    }
    if meta.get("namespace"):
        rs_meta["namespace"] = meta["namespace"]
    rs: Raw = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": rs_meta,
        "spec": {
            "replicas": du.spec_replicas(d),
            "minReadySeconds": spec.get("minReadySeconds") or 0,
            "selector": selector,
            "template": template,
        },
    }
    du.set_new_rs_annotations(d, rs, revision, False)
    return rs


def deployment_pods(d: Mapping[str, Any], names: Names, has_replica_set: bool = False) -> Expansion:
    """A Deployment's new ReplicaSet (:func:`new_replica_set`, with a generated uid) and
    its pods; nothing when it has a ReplicaSet already (that one makes its own pods) or
    is paused (a paused Deployment creates no ReplicaSet)."""
    out = Expansion()
    if has_replica_set:
        return out
    if _spec(d).get("paused") is True:
        out.notes.append("paused: its controller creates no ReplicaSet until it is resumed")
        return out
    rs = new_replica_set(d)
    rs["metadata"]["uid"] = names.uid()
    out.owners.append(rs)
    out.pods = replica_set_pods(rs, names).pods
    return out


def stateful_set_pods(sts: Mapping[str, Any], existing: Collection[str] = ()) -> Expansion:
    """A StatefulSet's replicas that do not exist yet (``existing``: pod names), by
    ordinal: ``<set>-<ordinal>`` with its identity, labels and claim volumes
    (:func:`kubesched.objects.statefulset.stateful_pod`). All of them, whatever the
    podManagementPolicy: the policy decides when each is created, not which."""
    revision = statefulset.revision_name(sts)
    out = Expansion()
    for ordinal in statefulset.ordinals(sts):
        if statefulset.pod_name(sts, ordinal) not in existing:
            out.pods.append(statefulset.stateful_pod(sts, ordinal, revision))
    return out


def generate_job_selector(job: Raw) -> None:
    """What the Job strategy's ``PrepareForCreate`` adds to a Job without
    ``manualSelector: true`` (it needs ``metadata.uid``): the template labels that select
    its pods (kept when the user set them; validation refuses a conflict) and the
    selector on its uid."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    meta = _meta(job)
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    tmeta = template.setdefault("metadata", {})
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    for key in JOB_NAME_LABELS:
        labels.setdefault(key, name)
    for key in CONTROLLER_UID_LABELS:
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABELS[1], uid)


def _job_finished(job: Mapping[str, Any]) -> str:
    for cond in (job.get("status") or {}).get("conditions") or []:
        finished = isinstance(cond, Mapping) and cond.get("status") == "True"
        if finished and cond.get("type") in ("Complete", "Failed"):
            return str(cond["type"])
    return ""


def indexed_job_generate_name(job_name: str, index: int) -> str:
    """``<job>-<index>-``, the Job's name cut so that the server can add its five
    characters (``podGenerateNameWithIndex``)."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = job_name[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


def _with_completion_index_env(template: Raw) -> None:
    """Give every container ``JOB_COMPLETION_INDEX`` from the pod's annotation, unless
    it sets the variable itself (``addCompletionIndexEnvVariables``)."""
    spec = template.setdefault("spec", {})
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            env = container.setdefault("env", [])
            if any(var.get("name") == COMPLETION_INDEX_ENV for var in env):
                continue
            env.append(
                {
                    "name": COMPLETION_INDEX_ENV,
                    "valueFrom": {
                        "fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}
                    },
                }
            )


def job_pod_template(job: Mapping[str, Any]) -> Raw:
    """The template a Job's pods are made from, as ``manageJob`` prepares it: a copy of
    the Job's with the job-tracking finalizer and, for an Indexed Job,
    ``JOB_COMPLETION_INDEX`` in every container."""
    spec = _spec(job)
    template: Raw = copy.deepcopy(dict(spec.get("template") or {}))
    if spec.get("completionMode") == "Indexed":
        _with_completion_index_env(template)
    tmeta = template.setdefault("metadata", {})
    finalizers = list(tmeta.get("finalizers") or [])
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    tmeta["finalizers"] = finalizers
    return template


def indexed_job_pod_template(template: Mapping[str, Any], job_name: str, index: int) -> Raw:
    """The template of an Indexed Job's pod of ``index`` (from :func:`job_pod_template`):
    the index in its annotation and label, the hostname ``<job>-<index>``."""
    indexed: Raw = copy.deepcopy(dict(template))
    imeta = indexed.setdefault("metadata", {})
    imeta.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
    imeta.setdefault("labels", {})[COMPLETION_INDEX] = str(index)
    indexed.setdefault("spec", {})["hostname"] = f"{job_name}-{index}"
    return indexed


def job_pods(
    job: Mapping[str, Any], names: Names, existing: int = 0, existing_indexes: Collection[int] = ()
) -> Expansion:
    """A Job's first pods: ``min(parallelism, completions - succeeded) - existing`` (all
    of ``parallelism`` without completions), none when it is suspended or finished.
    Each carries the job-tracking finalizer; an Indexed Job's pods take the lowest
    indexes not in ``existing_indexes``, named ``<job>-<index>-xxxxx`` with the
    completion-index annotation, label and environment variable and the hostname
    ``<job>-<index>`` — the templates the Job controller creates its pods from."""
    spec = _spec(job)
    out = Expansion()
    finished = _job_finished(job)
    if finished:
        out.notes.append(f"finished ({finished}): its controller creates no pods")
        return out
    if spec.get("suspend") is True:
        out.notes.append("suspended: its controller creates no pods until it is resumed")
        return out
    parallelism = _int(spec.get("parallelism"), 1)
    completions = spec.get("completions")
    succeeded = _int((job.get("status") or {}).get("succeeded"), 0)
    want = parallelism
    if isinstance(completions, int):
        want = min(parallelism, max(completions - succeeded, 0))
    missing = want - existing
    if missing <= 0:
        return out
    name = str(_meta(job).get("name") or "")
    template = job_pod_template(job)
    ref = controller_ref(job, "batch/v1", "Job")
    if spec.get("completionMode") != "Indexed":
        pod = pod_from_template(template, job, ref)
        out.pods = [names.name(copy.deepcopy(pod)) for _ in range(missing)]
        return out
    taken = set(existing_indexes)
    index = 0
    limit = completions if isinstance(completions, int) else want
    while len(out.pods) < missing and index < limit:
        if index not in taken:
            pod = pod_from_template(indexed_job_pod_template(template, name, index), job, ref)
            pod["metadata"]["generateName"] = indexed_job_generate_name(name, index)
            out.pods.append(names.name(pod))
        index += 1
    return out


def daemon_set_pods(
    ds: Mapping[str, Any], nodes: Sequence[Node], names: Names, existing: Collection[str] = ()
) -> Expansion:
    """A DaemonSet's pods: one for each of ``nodes`` (in their order) that should run it
    (:func:`kubesched.objects.daemonset.node_should_run_daemon_pod`) and has none yet
    (``existing``: node names), pinned to it by node affinity."""
    out = Expansion()
    template = daemonset.daemon_pod_template(ds, daemonset.revision_hash(ds))
    for node in nodes:
        if node.name in existing:
            continue
        should_run, _ = daemonset.node_should_run_daemon_pod(node, ds)
        if should_run:
            out.pods.append(names.name(daemonset.daemon_pod(ds, node.name, template)))
    if not out.pods and not existing:
        out.notes.append(f"no node of {len(nodes)} should run its pods")
    return out


def cron_job_pods(cron_job: Mapping[str, Any]) -> Expansion:
    """A CronJob's pods: none — its Jobs come when its schedule fires."""
    schedule = _spec(cron_job).get("schedule")
    return Expansion(
        notes=[f"creates no pods until its schedule {schedule!r} makes a Job; not simulated"]
    )
