"""Workloads read from files become the pods their controllers would create first.

The kinds' rules are :mod:`kubesched.objects.workloadpods` (shared with the
controllers); here they are applied to what the files hold: a workload's children already
in the files (pods, or a Deployment's ReplicaSet, found by owner reference) are not made
again, DaemonSets are matched against the cluster file's nodes, and each pod made is
defaulted and validated as the API server would on create before it is decoded. A
Deployment's ReplicaSet joins the workloads, so that PodTopologySpread's default
constraints select its pods as in a cluster. A StatefulSet's claims (one per
``volumeClaimTemplates`` entry and replica) join the storage objects unless the files
hold them already, as the StatefulSet controller creates them before its pods.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Workload
from kubesched.objects.statefulset import POD_INDEX_LABEL
from kubesched.objects.statefulset import claims as stateful_claims
from kubesched.objects.storage import PersistentVolumeClaim, StorageClass
from kubesched.objects.storage.storageclass import ANN_DEFAULT_CLASS
from kubesched.objects.workloadpods import (
    COMPLETION_INDEX,
    Expansion,
    Names,
    cron_job_pods,
    daemon_set_pods,
    deployment_pods,
    job_pods,
    replica_set_pods,
    stateful_set_pods,
)
from kubesched.sim.files import ClusterObjects, InputError, Manifest, admit, owner_of

__all__ = ["expand_manifests"]


class _Children:
    """What exists of each owner (by uid): its pods and its ReplicaSets."""

    def __init__(self, objs: Sequence[ClusterObjects]) -> None:
        self.pods: dict[str, list[Pod]] = defaultdict(list)
        self.replica_sets: Counter[str] = Counter()
        for loaded in objs:
            by_key = {p.key: p for p in loaded.pods}
            for key, (_, _, uid) in loaded.owners.items():
                if key in by_key and uid:
                    self.pods[uid].append(by_key[key])
            for manifest in loaded.manifests:
                _, _, uid = owner_of(manifest.obj)
                if manifest.kind == "ReplicaSet" and uid:
                    self.replica_sets[uid] += 1

    def of(self, obj: dict[str, Any]) -> list[Pod]:
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        return [p for p in self.pods.get(uid, ()) if p.phase not in ("Succeeded", "Failed")]


def _expand(manifest: Manifest, nodes: Sequence[Node], names: Names, kids: _Children) -> Expansion:
    obj = manifest.obj
    kind = manifest.kind
    existing = kids.of(obj)
    if kind == "Deployment":
        uid = str(obj["metadata"].get("uid") or "")
        return deployment_pods(obj, names, has_replica_set=kids.replica_sets[uid] > 0)
    if kind in ("ReplicaSet", "ReplicationController"):
        return replica_set_pods(obj, names, len(existing), kind)
    if kind == "StatefulSet":
        return stateful_set_pods(obj, {p.name for p in existing})
    if kind == "Job":
        indexes = {
            int(p.labels[COMPLETION_INDEX])
            for p in existing
            if p.labels.get(COMPLETION_INDEX, "").isdigit()
        }
        return job_pods(obj, names, len(existing), indexes)
    if kind == "DaemonSet":
        return daemon_set_pods(obj, nodes, names, {p.node_name for p in existing if p.node_name})
    return cron_job_pods(obj)


def expand_manifests(loaded: Sequence[ClusterObjects], nodes: Sequence[Node], names: Names) -> None:
    """Expand the workloads of every file of ``loaded`` into its ``pods`` (each at the
    workload's place in the file), add the ReplicaSets that Deployments create to its
    ``workloads``, record each pod's owner and warn about workloads that create no pods.
    Raises :class:`InputError` naming the workload when a pod it makes would be refused."""
    kids = _Children(loaded)
    problems: list[str] = []
    claims = {
        o.key for objs in loaded for o in objs.storage if isinstance(o, PersistentVolumeClaim)
    }
    # DefaultStorageClass admission gives a claim without a class the default one.
    default_class = next(
        (
            o.name
            for objs in loaded
            for o in objs.storage
            if isinstance(o, StorageClass) and o.is_default
        ),
        None,
    )
    if default_class is None:
        default_class = _assume_default_class(loaded)
    for objs in loaded:
        inserted = 0
        for manifest in objs.manifests:
            what = f'{manifest.kind} "{manifest.key}"'
            try:
                expansion = _expand(manifest, nodes, names, kids)
            except ObjectError as err:
                problems.append(f"{manifest.where}: {what}: {err}")
                continue
            for note in expansion.notes:
                objs.warnings.append(f"{manifest.where}: {what}: {note}")
            for owner in expansion.owners:
                objs.workloads.append(Workload.from_dict(owner))
            if manifest.kind == "StatefulSet":
                problems.extend(
                    f"{manifest.where}: {what} makes {p}"
                    for p in _add_claims(manifest.obj, expansion, objs, claims, default_class)
                )
            pods: list[Pod] = []
            for raw in expansion.pods:
                refused = admit("Pod", raw, names)
                if refused:
                    problems.extend(f"{manifest.where}: {what} makes {p}" for p in refused)
                    continue
                try:
                    pod = Pod.from_dict(raw)
                except ObjectError as err:
                    problems.append(f"{manifest.where}: {what} makes {err}")
                    continue
                objs.owners[pod.key] = owner_of(raw)
                pods.append(pod)
            at = manifest.position + inserted
            objs.pods[at:at] = pods
            inserted += len(pods)
    if problems:
        raise InputError(*problems)


#: The class assumed when no file holds a StorageClass: the embedded cluster's (and
#: kind's) default, node-local volumes provisioned where the first consumer goes.
ASSUMED_DEFAULT_CLASS = "standard"


def _assume_default_class(loaded: Sequence[ClusterObjects]) -> str | None:
    """With no StorageClass in any file, the files say nothing of the cluster's storage,
    and a StatefulSet's claims would stay unbound forever ("pod has unbound immediate
    PersistentVolumeClaims") although nearly every cluster has a default class and the
    classes its manifests name. So assume them: a default ``standard`` and every class a
    claim or claim template names, each WaitForFirstConsumer with node-local volumes as
    the embedded cluster's ``standard``, added to the file of the first StatefulSet with
    claim templates, with one warning naming them. None (nothing assumed) when a file has
    a StorageClass (its owner decided) or no StatefulSet asks for claims."""
    if any(isinstance(o, StorageClass) for objs in loaded for o in objs.storage):
        return None
    named = {
        o.storage_class_name
        for objs in loaded
        for o in objs.storage
        if isinstance(o, PersistentVolumeClaim) and o.storage_class_name
    }
    first: tuple[ClusterObjects, Manifest] | None = None
    for objs in loaded:
        for manifest in objs.manifests:
            if manifest.kind != "StatefulSet":
                continue
            templates = (manifest.obj.get("spec") or {}).get("volumeClaimTemplates") or []
            for template in templates:
                name = ((template or {}).get("spec") or {}).get("storageClassName")
                if isinstance(name, str) and name:
                    named.add(name)
            if templates and first is None:
                first = (objs, manifest)
    if first is None:
        return None
    objs, manifest = first
    for name in sorted(named | {ASSUMED_DEFAULT_CLASS}):
        meta: dict[str, Any] = {"name": name}
        if name == ASSUMED_DEFAULT_CLASS:
            meta["annotations"] = {ANN_DEFAULT_CLASS: "true"}
        raw: dict[str, Any] = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta,
            "provisioner": "local.csi.kubesched.io",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        objs.storage.append(StorageClass.from_dict(raw))
        objs.storage_raw.append(raw)
    classes = ", ".join(f'"{n}"' for n in sorted(named | {ASSUMED_DEFAULT_CLASS}))
    objs.warnings.append(
        f'{manifest.where}: StatefulSet "{manifest.key}" has claim templates and no file '
        f"has a StorageClass: assuming the classes {classes} (default "
        f'"{ASSUMED_DEFAULT_CLASS}"; WaitForFirstConsumer, node-local volumes, as the '
        "embedded cluster's); put StorageClasses in the cluster file to say otherwise"
    )
    return ASSUMED_DEFAULT_CLASS


def _add_claims(
    sts: dict[str, Any],
    expansion: Expansion,
    objs: ClusterObjects,
    known: set[str],
    default_class: str | None,
) -> list[str]:
    """Add the claims of the replicas ``expansion`` makes (those not in ``known``) to
    ``objs.storage`` (and, as written, to ``objs.storage_raw``: the simulator's store
    holds them); the problems of claims that would be refused. A claim without a class
    gets ``default_class``."""
    problems: list[str] = []
    for raw_pod in expansion.pods:
        labels = (raw_pod.get("metadata") or {}).get("labels") or {}
        index = labels.get(POD_INDEX_LABEL, "")
        if not str(index).isdigit():
            continue
        for raw in stateful_claims(sts, int(index)):
            spec = raw.setdefault("spec", {})
            if default_class is not None and spec.get("storageClassName") is None:
                spec["storageClassName"] = default_class
            refused = admit("PersistentVolumeClaim", raw)
            if refused:
                problems.extend(refused)
                continue
            try:
                claim = PersistentVolumeClaim.from_dict(raw)
            except ObjectError as err:
                problems.append(str(err))
                continue
            if claim.key not in known:
                known.add(claim.key)
                objs.storage.append(claim)
                objs.storage_raw.append(raw)
    return problems
