"""``kubesched export``: a live cluster, written as a file the policy lab reads.

Lists, through ``kube`` (our only door to an API server), what scheduling reads — nodes,
pods, namespaces, priority classes, PodDisruptionBudgets and the Services / ReplicaSets /
StatefulSets / ReplicationControllers behind PodTopologySpread's default constraints, the
storage objects the volume plugins read (StorageClasses, CSIDrivers, CSINodes,
PersistentVolumes and their claims, CSIStorageCapacities, VolumeAttachments; a server that
does not serve one has none), Dynamic Resource Allocation's DeviceClasses, ResourceSlices,
ResourceClaimTemplates and ResourceClaims (with their allocations), scheduler-plugins'
PodGroups and ElasticQuotas (when their CRDs are installed), and the Jobs and
DaemonSets that own the pods copied — and writes them as one ``kind: List``
that ``kubesched simulate --cluster`` and ``kubesched explain --cluster`` load. Pending
pods (not bound, not finished) go to ``--pending FILE`` for ``simulate --pods``, so a
policy can be tried on a copy of production::

    kubesched export -o cluster.yaml --pending pending.yaml
    kubesched simulate --cluster cluster.yaml --pods pending.yaml --config new-policy.yaml

Objects are cut down to the fields scheduling reads: a copy of production should carry
neither the secrets nor the bulk of production. Containers keep their name, image,
resources, ports and restartPolicy (sidecars) — no env, command, args or mounts; pod specs
keep the placement fields; node status keeps capacity, allocatable and images; Services
keep their selector, ports and type; workloads keep their selectors, replicas and their pod
templates cut as pods are (a Job its counts, and how many succeeded); pods keep their owner
references, so that the policy lab makes only the pods a workload lacks and spreads them as
the default constraints would; ``managedFields`` and resourceVersions go. What is written
stays valid: the policy lab validates what it reads as the API server does.
Annotations are dropped unless ``--keep-annotations`` (custom plugins may read them, but
they are where tools leave configuration and, sometimes, credentials), except the storage
annotations the volume plugins and binding read (``volume.kubernetes.io/selected-node``,
``pv.kubernetes.io/bind-completed``...). ConfigMaps, Secrets and Events are never exported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.kube import Client, KubeError, NotFound
from kubesched.kube import load_config as load_connection
from kubesched.kube.resources import (
    CSI_DRIVERS,
    CSI_NODES,
    CSI_STORAGE_CAPACITIES,
    ELASTIC_QUOTAS,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    POD_DISRUPTION_BUDGETS,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
    STORAGE_CLASSES,
    VOLUME_ATTACHMENTS,
    Resource,
)

__all__ = ["Export", "build_parser", "export_cluster", "main", "split_export"]

Raw = dict[str, Any]

#: Pod spec fields that scheduling reads (placement, priority, resources, preemption).
_POD_SPEC_FIELDS = (
    "nodeName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "schedulerName",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "topologySpreadConstraints",
    "overhead",
    "resources",
    "hostNetwork",
    "schedulingGates",
    "runtimeClassName",
    "terminationGracePeriodSeconds",
    # The volume plugins read the sources (claims, disks, CSI); definitions, not contents.
    "volumes",
    "resourceClaims",
)
_CONTAINER_FIELDS = ("name", "image", "resources", "ports", "restartPolicy")
_POD_STATUS_FIELDS = ("phase", "startTime", "nominatedNodeName", "resourceClaimStatuses")
_NODE_SPEC_FIELDS = ("taints", "unschedulable")
_SERVICE_SPEC_FIELDS = ("selector", "ports", "type", "clusterIP", "externalName")
_NODE_STATUS_FIELDS = ("capacity", "allocatable", "images")
_META_FIELDS = (
    "name",
    "namespace",
    "uid",
    "labels",
    "creationTimestamp",
    "deletionTimestamp",
    "ownerReferences",
)
_TERMINAL_PHASES = ("Succeeded", "Failed")

#: What is listed, in the order written (namespaces and classes before what uses them).
_RESOURCES: tuple[Resource[Any], ...] = (
    NAMESPACES,
    PRIORITY_CLASSES,
    NODES,
    POD_DISRUPTION_BUDGETS,
    SERVICES,
    REPLICATION_CONTROLLERS,
    REPLICA_SETS,
    STATEFUL_SETS,
    PODS,
)
#: The storage objects, listed after the rest; a server that does not serve one has none.
_STORAGE_RESOURCES: tuple[Resource[Any], ...] = (
    STORAGE_CLASSES,
    CSI_DRIVERS,
    CSI_NODES,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    CSI_STORAGE_CAPACITIES,
    VOLUME_ATTACHMENTS,
)
#: scheduler-plugins' PodGroups and ElasticQuotas, copied with spec and status (gang and
#: quota scheduling read both); a server without their CRDs has none.
_SCHEDULING_RESOURCES: tuple[Resource[Any], ...] = (POD_GROUPS, ELASTIC_QUOTAS)
_SCHEDULING_KINDS = frozenset(r.kind for r in _SCHEDULING_RESOURCES)
#: What of each storage object is kept (besides metadata): what matching, binding and the
#: volume plugins read.
_STORAGE_FIELDS: dict[str, tuple[str, ...]] = {
    "StorageClass": (
        "provisioner",
        "parameters",
        "reclaimPolicy",
        "volumeBindingMode",
        "allowVolumeExpansion",
        "allowedTopologies",
        "mountOptions",
    ),
    "CSIDriver": ("spec",),
    "CSINode": ("spec",),
    "PersistentVolume": ("spec", "status"),
    "PersistentVolumeClaim": ("spec", "status"),
    "CSIStorageCapacity": ("storageClassName", "nodeTopology", "capacity", "maximumVolumeSize"),
    "VolumeAttachment": ("spec", "status"),
}
#: Annotations that are state, not configuration: binding and the plugins read them, so
#: they are kept without --keep-annotations.
_STORAGE_ANNOTATIONS = frozenset(
    {
        "volume.kubernetes.io/selected-node",
        "volume.kubernetes.io/storage-provisioner",
        "volume.beta.kubernetes.io/storage-provisioner",
        "volume.beta.kubernetes.io/storage-class",
        "pv.kubernetes.io/bind-completed",
        "pv.kubernetes.io/bound-by-controller",
        "pv.kubernetes.io/provisioned-by",
        "pv.kubernetes.io/migrated-to",
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
        "storage.alpha.kubernetes.io/migrated-plugins",
    }
)


def _as_is(raw: Raw) -> Raw:
    return raw


#: The owners of pods exported when some exported pod names one as its controller (the
#: policy lab makes their missing pods, and must not make the ones that exist again).
JOBS = Resource("batch", "v1", "jobs", "Job", True, _as_is)
DAEMON_SETS = Resource("apps", "v1", "daemonsets", "DaemonSet", True, _as_is)
_OWNER_RESOURCES: dict[str, Resource[Any]] = {"Job": JOBS, "DaemonSet": DAEMON_SETS}
#: Dynamic Resource Allocation (resource.k8s.io/v1), copied whole (a claim with its
#: allocation and consumers) when the server serves it.
_DRA_RESOURCES = tuple(
    Resource("resource.k8s.io", "v1", plural, kind, namespaced, _as_is)
    for plural, kind, namespaced in (
        ("deviceclasses", "DeviceClass", False),
        ("resourceslices", "ResourceSlice", False),
        ("resourceclaimtemplates", "ResourceClaimTemplate", True),
        ("resourceclaims", "ResourceClaim", True),
    )
)
_DRA_KINDS = frozenset(r.kind for r in _DRA_RESOURCES)
_JOB_SPEC_FIELDS = (
    "parallelism",
    "completions",
    "completionMode",
    "suspend",
    "manualSelector",
    "selector",
)


@dataclass
class Export:
    """A cluster read for the policy lab: the cluster objects and the pending pods."""

    cluster: list[Raw] = field(default_factory=list)
    pending: list[Raw] = field(default_factory=list)
    #: Pods left out because they finished (Succeeded / Failed): they hold no resources.
    finished: int = 0

    def counts(self) -> dict[str, int]:
        """Objects per kind in the cluster file, for the summary line."""
        out: dict[str, int] = {}
        for obj in self.cluster:
            out[obj["kind"]] = out.get(obj["kind"], 0) + 1
        return out


def _pick(source: Mapping[str, Any], names: Iterable[str]) -> Raw:
    return {k: source[k] for k in names if source.get(k) not in (None, "", [], {})}


def _metadata(raw: Raw, keep_annotations: bool) -> Raw:
    meta = raw.get("metadata") or {}
    out = _pick(meta, _META_FIELDS)
    if not keep_annotations and raw.get("kind") in _STORAGE_FIELDS:
        kept = {
            k: v for k, v in (meta.get("annotations") or {}).items() if k in _STORAGE_ANNOTATIONS
        }
        if kept:
            out["annotations"] = kept
    if keep_annotations and meta.get("annotations"):
        annotations = {
            k: v
            for k, v in meta["annotations"].items()
            # kubectl's copy of the whole manifest, env values included.
            if k != "kubectl.kubernetes.io/last-applied-configuration"
        }
        if annotations:
            out["annotations"] = annotations
    return out


def _containers(items: Iterable[Mapping[str, Any]]) -> list[Raw]:
    return [_pick(c, _CONTAINER_FIELDS) for c in items]


def _trim(raw: Raw, keep_annotations: bool) -> Raw:
    """The object with only what scheduling reads (see the module docstring)."""
    kind = raw["kind"]
    out: Raw = {"apiVersion": raw["apiVersion"], "kind": kind}
    out["metadata"] = _metadata(raw, keep_annotations)
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    if kind == "Pod":
        out["spec"] = _pod_spec(spec)
        out["status"] = _pick(status, _POD_STATUS_FIELDS)
    elif kind == "Node":
        out["spec"] = _pick(spec, _NODE_SPEC_FIELDS)
        out["status"] = _pick(status, _NODE_STATUS_FIELDS)
    elif kind == "PriorityClass":
        out.update(_pick(raw, ("value", "globalDefault", "preemptionPolicy", "description")))
    elif kind == "PodDisruptionBudget":
        out["spec"] = spec
        out["status"] = _pick(
            status, ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "disruptedPods")
        )
    elif kind in _SCHEDULING_KINDS:
        out["spec"] = spec
        if status:
            out["status"] = status
    elif kind in _DRA_KINDS:
        out["spec"] = spec
        if kind == "ResourceClaim":
            out["status"] = _pick(status, ("allocation", "reservedFor"))
    elif kind == "Service":
        # The selector is what PodTopologySpread's default constraints read; the ports and
        # type keep the Service one the API server (and so the loaders) accepts.
        out["spec"] = _pick(spec, _SERVICE_SPEC_FIELDS)
    elif kind in _STORAGE_FIELDS:
        out.update(_pick(raw, _STORAGE_FIELDS[kind]))
    elif kind in ("ReplicationController", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        # What their controllers would make more of: the lab makes the missing pods (a
        # StatefulSet's with their claims).
        fields = (
            _JOB_SPEC_FIELDS
            if kind == "Job"
            else ("selector", "replicas", "serviceName", "volumeClaimTemplates")
        )
        out["spec"] = _pick(spec, fields)
        template = spec.get("template")
        if isinstance(template, Mapping):
            out["spec"]["template"] = _template(template)
        if kind == "Job":
            # How many succeeded and whether it finished: a finished Job makes no pods.
            out["status"] = _pick(status, ("succeeded",))
            conditions = [_pick(c, ("type", "status")) for c in status.get("conditions") or ()]
            if conditions:
                out["status"]["conditions"] = conditions
    return out


def _pod_spec(spec: Mapping[str, Any]) -> Raw:
    out = _pick(spec, _POD_SPEC_FIELDS)
    for key in ("initContainers", "containers"):
        if spec.get(key):
            out[key] = _containers(spec[key])
    return out


def _template(template: Mapping[str, Any]) -> Raw:
    # A workload's pod template cut as its pods are (labels, placement, resources), so
    # the workload stays valid: validation wants a template matching the selector.
    meta = template.get("metadata") or {}
    out: Raw = {"spec": _pod_spec(template.get("spec") or {})}
    # A Job's template is valid only with its restart policy (OnFailure or Never).
    restart = (template.get("spec") or {}).get("restartPolicy")
    if restart:
        out["spec"]["restartPolicy"] = restart
    if meta.get("labels"):
        out["metadata"] = {"labels": meta["labels"]}
    return out


def split_export(objects: Iterable[Raw], keep_annotations: bool = False) -> Export:
    """Sort listed objects into the cluster file and the pending pods, trimmed."""
    result = Export()
    for raw in objects:
        obj = _trim(raw, keep_annotations)
        if obj["kind"] != "Pod":
            result.cluster.append(obj)
            continue
        phase = obj["status"].get("phase", "Pending")
        if phase in _TERMINAL_PHASES:
            result.finished += 1
        elif obj["spec"].get("nodeName"):
            result.cluster.append(obj)
        else:
            result.pending.append(obj)
    return result


async def export_cluster(
    client: Client, namespaces: Sequence[str] = (), keep_annotations: bool = False
) -> Export:
    """Read everything scheduling needs from the API server behind ``client``.

    With **namespaces**, namespaced objects come from those only (nodes, priority classes
    and the namespaces themselves are always read: placement depends on all of them).
    """
    listed: list[Raw] = []
    for resource in _RESOURCES:
        raw = resource.raw
        if resource.namespaced and namespaces:
            for ns in namespaces:
                listed.extend((await client.list_all(raw, ns)).items)
        else:
            items = (await client.list_all(raw)).items
            if resource is NAMESPACES and namespaces:
                items = [i for i in items if i.get("metadata", {}).get("name") in namespaces]
            listed.extend(items)
    for resource in (*_STORAGE_RESOURCES, *_SCHEDULING_RESOURCES):
        scopes: Sequence[str | None] = namespaces if resource.namespaced and namespaces else [None]
        try:
            for scope in scopes:
                listed.extend((await client.list_all(resource.raw, scope)).items)
        except NotFound:
            continue
    listed.extend(await _owners(client, listed, namespaces))
    listed.extend(await _dra_objects(client, namespaces))
    return split_export(listed, keep_annotations)


async def _dra_objects(client: Client, namespaces: Sequence[str]) -> list[Raw]:
    """DeviceClasses, ResourceSlices, claim templates and claims (none from a server that
    does not serve resource.k8s.io/v1)."""
    found: list[Raw] = []
    for resource in _DRA_RESOURCES:
        try:
            for ns in (namespaces or (None,)) if resource.namespaced else (None,):
                found.extend((await client.list_all(resource.raw, ns)).items)
        except NotFound:
            return found
    return found


async def _owners(client: Client, listed: Sequence[Raw], namespaces: Sequence[str]) -> list[Raw]:
    """The Jobs and DaemonSets that control a pod to be exported (only these: the others
    make pods the copy has no place for); a server that does not serve a kind has none."""
    wanted: dict[str, set[str]] = {}
    for raw in listed:
        if raw.get("kind") != "Pod" or (raw.get("status") or {}).get("phase") in _TERMINAL_PHASES:
            continue
        for ref in (raw.get("metadata") or {}).get("ownerReferences") or ():
            if ref.get("controller") is True and ref.get("kind") in _OWNER_RESOURCES:
                wanted.setdefault(ref["kind"], set()).add(str(ref.get("uid") or ""))
    found: list[Raw] = []
    for kind in sorted(wanted):
        resource = _OWNER_RESOURCES[kind]
        try:
            items: list[Raw] = []
            for ns in namespaces or (None,):
                items.extend((await client.list_all(resource.raw, ns)).items)
        except NotFound:
            continue
        found.extend(o for o in items if (o.get("metadata") or {}).get("uid") in wanted[kind])
    return found


def _as_list(items: list[Raw]) -> Raw:
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}


def _write(path: str, items: list[Raw]) -> None:
    doc = _as_list(items)
    if path == "-":
        yaml.safe_dump(doc, sys.stdout, sort_keys=False)
        return
    target = Path(path)
    if target.suffix.lower() == ".json":
        text = json.dumps(doc, indent=2) + "\n"
    else:
        text = yaml.safe_dump(doc, sort_keys=False)
    target.write_text(text, encoding="utf-8")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched export``."""
    parser = argparse.ArgumentParser(
        prog="kubesched export",
        description="Write a live cluster's nodes and pods to a file kubesched simulate reads.",
    )
    parser.add_argument("--kubeconfig", help="the kubeconfig to connect with")
    parser.add_argument("--context", help="the kubeconfig context to use")
    parser.add_argument("--master", help="the API server URL (overrides the kubeconfig)")
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        help="the cluster file (YAML, or JSON for *.json; - = stdout)",
    )
    parser.add_argument("--pending", help="also write the pending pods here, for simulate --pods")
    parser.add_argument(
        "-n",
        "--namespace",
        action="append",
        default=[],
        help="export namespaced objects from this namespace only (repeatable; default: all)",
    )
    parser.add_argument(
        "--keep-annotations",
        action="store_true",
        help="keep annotations (dropped by default: they may carry credentials)",
    )
    return parser


async def _run(args: argparse.Namespace) -> Export:
    connection = load_connection(args.kubeconfig, context=args.context, master=args.master)
    async with Client(connection, qps=50, burst=100) as client:
        return await export_cluster(client, args.namespace, args.keep_annotations)


def export_to_file(
    kubeconfig: str | None, path: Path, *, context: str | None = None, master: str | None = None
) -> Export:
    """Copy a live cluster into ``path``, as ``kubesched export -o PATH`` does (for the
    lab commands' ``--kubeconfig``). Raises KubeError when the cluster cannot be read."""

    async def read() -> Export:
        connection = load_connection(kubeconfig, context=context, master=master)
        async with Client(connection, qps=50, burst=100) as client:
            return await export_cluster(client, [], False)

    result = asyncio.run(read())
    _write(str(path), result.cluster)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kubesched export``; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        result = asyncio.run(_run(args))
        _write(args.output, result.cluster)
        if args.pending:
            _write(args.pending, result.pending)
    except KubeError as err:
        print(f"kubesched export: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"kubesched export: cannot write: {err}", file=sys.stderr)
        return 1
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(result.counts().items()))
    where = "stdout" if args.output == "-" else args.output
    pending = (
        f"; {len(result.pending)} pending pods to {args.pending}"
        if args.pending
        else f"; {len(result.pending)} pending pods left out (--pending FILE writes them)"
    )
    print(
        f"kubesched export: {counts or 'nothing'} to {where}{pending}; "
        f"{result.finished} finished pods left out",
        file=sys.stderr,
    )
    return 0
