"""Synthetic clusters and workloads in the shape of kube-scheduler's scheduler_perf.

``test/integration/scheduler_perf``: nodes of 4 cpu / 32Gi / 110 pods (here labelled
over three zones), pods of one container asking 100m cpu / 500Mi. The workloads:

- ``basic`` — SchedulingBasic: plain pods.
- ``anti-affinity`` — SchedulingPodAntiAffinity: pods with required anti-affinity on
  ``kubernetes.io/hostname`` against their own label (one such pod per node).
- ``spread`` — TopologySpreading: pods with a zone topology spread constraint
  (maxSkew 5, DoNotSchedule) over their own label.
- ``daemonset`` — SchedulingDaemonset: one more node, ``scheduler-perf-node`` (room for
  90,000 pods), and pods without requests, each pinned to it by required node affinity on
  ``metadata.name`` (``matchFields``), as the DaemonSet controller pins its pods. Every
  pod goes through a daemon pod's scheduling: NodeAffinity's PreFilterResult names one
  node, and the others are never evaluated.
- ``secrets`` — SchedulingSecrets: pods with a secret volume (``pod-with-secret-volume``).
- ``in-tree-pvs`` — SchedulingInTreePVs: each pod claims its own pre-bound AWS EBS
  PersistentVolume (``pv-aws.yaml``, ``pvc.yaml``: ReadOnlyMany, 1Gi); nodes have no
  CSINode, so nothing counts against an attach limit.
- ``migrated-in-tree-pvs`` — SchedulingMigratedInTreePVs: the same pods, on nodes whose
  CSINodes report 39 attachments for ``ebs.csi.aws.com`` and the AWS EBS plugin migrated:
  every volume counts through its CSI translation.
- ``csi-pvs`` — SchedulingCSIPVs: pre-bound CSI PersistentVolumes of ``ebs.csi.aws.com``
  (``pv-csi.yaml``) on those nodes.

Upstream names the volumes ``vol-<i>`` in each ``createPods`` step's namespace (so the
measured pods' AWS volume IDs repeat the initial pods'); here every volume has its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.quantity import parse_quantity
from kubesched.objects.resources import Resource
from kubesched.objects.storage import (
    ClaimRef,
    CSINode,
    CSINodeDriver,
    CSISource,
    DiskSource,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageObject,
    Volume,
)
from kubesched.objects.storage.sources import AWS_EBS_PLUGIN
from kubesched.sim.draworkloads import DRA_WORKLOADS, with_claims
from kubesched.sim.gangworkloads import GANG_WORKLOADS, with_group

ZONES = ("zone-a", "zone-b", "zone-c")
WORKLOADS = (
    "basic",
    "anti-affinity",
    "spread",
    "daemonset",
    "secrets",
    "in-tree-pvs",
    "migrated-in-tree-pvs",
    "csi-pvs",
    *DRA_WORKLOADS,
    *GANG_WORKLOADS,
)
#: The workloads whose pods each claim a pre-bound PersistentVolume.
VOLUME_WORKLOADS = ("in-tree-pvs", "migrated-in-tree-pvs", "csi-pvs")
EBS_CSI_DRIVER = "ebs.csi.aws.com"
#: The attach limit of scheduler_perf's ``nodeAllocatableStrategy`` for EBS.
EBS_ATTACH_LIMIT = 39
#: The node every ``daemonset`` pod is pinned to (upstream's ``node-with-name.yaml``).
DAEMONSET_NODE = "scheduler-perf-node"
#: Default (nodes, initial pods, measured pods) per workload, as scheduler_perf's cases.
DEFAULT_SIZES = {
    "basic": (5000, 1000, 10000),
    "anti-affinity": (5000, 1000, 1000),
    "spread": (5000, 1000, 10000),
    # 15000Nodes: upstream creates no initial pods in this case.
    "daemonset": (15000, 0, 30000),
    # The volumes cases' 5000Nodes: 5,000 initial pods, 1,000 measured.
    "secrets": (5000, 5000, 1000),
    "in-tree-pvs": (5000, 5000, 1000),
    "migrated-in-tree-pvs": (5000, 5000, 1000),
    "csi-pvs": (5000, 5000, 1000),
    # The dra cases' 5000pods_500nodes: 2,500 initial pods, 2,500 measured.
    "dra-claim-template": (500, 2500, 2500),
    "dra-steady-state": (500, 2500, 2500),
    "dra-shared-claim": (500, 2500, 2500),
    # Gangs (sim/gangworkloads.py): 1,000 gangs of 3; 3 gangs of 1,000.
    "gang": (5000, 0, 3000),
    "gang-large": (5000, 0, 3000),
}


def make_nodes(count: int) -> list[Node]:
    """``count`` identical nodes, round robin over three zones."""
    allocatable = Resource.from_list({"cpu": "4", "memory": "32Gi", "pods": "110"})
    return [_node(f"node-{i}", ZONES[i % len(ZONES)], allocatable) for i in range(count)]


def _node(name: str, zone: str, allocatable: Resource) -> Node:
    return Node(
        name=name,
        uid=name,
        labels={
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": zone,
            "topology.kubernetes.io/region": "region-1",
        },
        taints=(),
        unschedulable=False,
        allocatable=allocatable.copy(),
    )


def make_cluster(workload: str, count: int) -> list[Node]:
    """The nodes of ``workload``: ``count`` nodes as :func:`make_nodes` makes them, and
    for ``daemonset`` first the node its pods are pinned to."""
    _check(workload)
    nodes = make_nodes(count)
    if workload == "daemonset":
        # Upstream's node-with-name.yaml: 4 cpu, 32Gi, and room for every pod of the case.
        room = Resource.from_list({"cpu": "4", "memory": "32Gi", "pods": "90000"})
        nodes.insert(0, _node(DAEMONSET_NODE, ZONES[0], room))
    return nodes


_CONTAINER = {
    "name": "pause",
    "image": "registry.k8s.io/pause:3.10",
    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
}


def _pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> Pod:
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels or {}},
            "spec": {"containers": [_CONTAINER], **spec},
        }
    )


def _basic(name: str) -> Pod:
    return _pod(name)


def _anti_affinity(name: str) -> Pod:
    term = {
        "labelSelector": {"matchLabels": {"color": "green"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    return _pod(
        name,
        {"color": "green", "name": "test"},
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


def _spread(name: str) -> Pod:
    constraint = {
        "maxSkew": 5,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return _pod(name, {"color": "blue"}, topologySpreadConstraints=[constraint])


def _daemonset(name: str) -> Pod:
    # Upstream's daemonset-pod.yaml: no requests, required affinity naming the node.
    pinned = {"key": "metadata.name", "operator": "In", "values": [DAEMONSET_NODE]}
    required = {"nodeSelectorTerms": [{"matchFields": [pinned]}]}
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {
                "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}],
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
                },
            },
        }
    )


def _secret(name: str) -> Pod:
    # Upstream's pod-with-secret-volume.yaml: limits equal to the requests, a port.
    container = {
        **_CONTAINER,
        "ports": [{"containerPort": 80}],
        "resources": {
            "requests": {"cpu": "100m", "memory": "500Mi"},
            "limits": {"cpu": "100m", "memory": "500Mi"},
        },
    }
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {
                "containers": [container],
                "volumes": [{"name": "secret", "secret": {"secretName": "secret"}}],
            },
        }
    )


_MAKERS: dict[str, Callable[[str], Pod]] = {
    "basic": _basic,
    "anti-affinity": _anti_affinity,
    "spread": _spread,
    "daemonset": _daemonset,
    "secrets": _secret,
    "in-tree-pvs": _basic,
    "migrated-in-tree-pvs": _basic,
    "csi-pvs": _basic,
    "dra-claim-template": _basic,
    "dra-steady-state": _basic,
    "dra-shared-claim": _basic,
    "gang": _basic,
    "gang-large": _basic,
}


def _check(workload: str) -> None:
    if workload not in _MAKERS:
        raise ValueError(f"unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")


def make_pods(workload: str, count: int, prefix: str) -> Iterator[Pod]:
    """``count`` pods of ``workload`` named ``<prefix>-<i>``.

    Pods of one workload are identical but for their name, so the first is decoded and the
    rest are copies of it with another name (decoding 30,000 pods is not what we measure).
    """
    _check(workload)
    template = _MAKERS[workload](f"{prefix}-0")
    claims = workload in VOLUME_WORKLOADS
    for i in range(count):
        name = f"{prefix}-{i}"
        if workload in DRA_WORKLOADS:
            yield with_claims(workload, template, prefix, i)
        elif workload in GANG_WORKLOADS:
            yield with_group(workload, template, prefix, i)
        elif claims:
            volume = Volume("vol", "persistentVolumeClaim", claim_name(prefix, i))
            yield template.evolve(name=name, uid=name, volumes=(volume,))
        else:
            yield template.evolve(name=name, uid=name)


def claim_name(prefix: str, i: int) -> str:
    """The claim of pod ``<prefix>-<i>`` in the volume workloads (upstream's ``pvc-<i>``)."""
    return f"pvc-{prefix}-{i}"


_GI = parse_quantity("1Gi")
_ROX = ("ReadOnlyMany",)


def make_storage(
    workload: str, nodes: Iterable[Node], prefixes: dict[str, int]
) -> list[StorageObject]:
    """The storage objects of ``workload``: for each ``prefix: count`` of pods, a
    pre-bound PersistentVolume and claim per pod (upstream's
    ``CreatePodWithPersistentVolume`` with ``bindVolume``), and the nodes' CSINodes for
    the cases that have them. None for the other workloads."""
    _check(workload)
    if workload not in VOLUME_WORKLOADS:
        return []
    out: list[StorageObject] = []
    if workload != "in-tree-pvs":
        migrated = (
            frozenset({AWS_EBS_PLUGIN}) if workload == "migrated-in-tree-pvs" else frozenset()
        )
        driver = CSINodeDriver(EBS_CSI_DRIVER, "", (), EBS_ATTACH_LIMIT)
        out.extend(CSINode(n.name, (driver,), migrated) for n in nodes)
    for prefix, count in prefixes.items():
        for i in range(count):
            claim = claim_name(prefix, i)
            volume = f"{prefix}-vol-{i}"
            if workload == "csi-pvs":
                source: CSISource | DiskSource = CSISource(EBS_CSI_DRIVER, volume)
                kind = "csi"
            else:
                source = DiskSource(AWS_EBS_PLUGIN, f"vol-{prefix}-{i}")
                kind = "awsElasticBlockStore"
            out.append(
                PersistentVolume(
                    name=volume,
                    uid=volume,
                    capacity=_GI,
                    access_modes=_ROX,
                    claim_ref=ClaimRef("default", claim),
                    source_kind=kind,
                    source=source,
                    phase="Bound",
                )
            )
            out.append(
                PersistentVolumeClaim(
                    namespace="default",
                    name=claim,
                    uid=claim,
                    annotations={"pv.kubernetes.io/bind-completed": "true"},
                    access_modes=_ROX,
                    request=_GI,
                    volume_name=volume,
                    phase="Bound",
                )
            )
    return out
