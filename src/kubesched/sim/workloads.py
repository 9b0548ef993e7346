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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource

ZONES = ("zone-a", "zone-b", "zone-c")
WORKLOADS = ("basic", "anti-affinity", "spread", "daemonset")
#: The node every ``daemonset`` pod is pinned to (upstream's ``node-with-name.yaml``).
DAEMONSET_NODE = "scheduler-perf-node"
#: Default (nodes, initial pods, measured pods) per workload, as scheduler_perf's cases.
DEFAULT_SIZES = {
    "basic": (5000, 1000, 10000),
    "anti-affinity": (5000, 1000, 1000),
    "spread": (5000, 1000, 10000),
    # 15000Nodes: upstream creates no initial pods in this case.
    "daemonset": (15000, 0, 30000),
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


_MAKERS: dict[str, Callable[[str], Pod]] = {
    "basic": _basic,
    "anti-affinity": _anti_affinity,
    "spread": _spread,
    "daemonset": _daemonset,
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
    for i in range(count):
        name = f"{prefix}-{i}"
        yield template.evolve(name=name, uid=name)
