"""What ``kubesched demo`` puts on its cluster: nodes, scheduler profiles, priority classes,
the teams' namespaces and quotas.

Eleven simulated nodes over three zones: six CPU nodes, two GPU nodes (``nvidia.com/gpu``
capacity, the ``nvidia.com/gpu.present`` label and the ``nvidia.com/gpu=present:NoSchedule``
taint that GPU clusters use to keep other pods off them), two GPU nodes whose GPUs are
devices of Dynamic Resource Allocation (the simulated DRA driver publishes them, one node
with the latest model and one with an older one; the same taint) and one node tainted for
infrastructure. The embedded cluster's storage classes (``standard``, ``zonal``) and
CSI driver come with its controllers. Two profiles: kube-scheduler's defaults, and
``gpu-aware``, the same plugins with NodeResourcesFit scoring ``MostAllocated`` with GPUs
weighted high, so that GPU jobs are packed and whole GPU nodes stay free for large jobs;
and ``team-batch`` for two teams' work (gangs with Coscheduling, elastic quotas with
CapacityScheduling), each team in a namespace with an ElasticQuota.

The workload it runs on them is :mod:`kubesched.cli.demo_workloads`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.controllers.dradriver import GPU_MODEL_ANNOTATION, GPUS_ANNOTATION, MODEL
from kubesched.objects.nodes import GPU_RESOURCE, REGION_LABEL, ZONE_LABEL, make_nodes

NAMESPACE = "default"
#: The region of every node; zones are REGION-a, -b and -c.
REGION = "eu-west"
DEFAULT_PROFILE = "default-scheduler"
GPU_PROFILE = "gpu-aware"
#: The profile of the teams' batch work: gangs (Coscheduling) within quotas
#: (CapacityScheduling), both from scheduler-plugins.
TEAM_PROFILE = "team-batch"
#: The teams sharing the GPU nodes, each in its namespace with an ElasticQuota.
TEAMS = ("team-a", "team-b")
GPU_LABEL = "nvidia.com/gpu.present"
GPU_TAINT = {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"}
INFRA_TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: The models of the DRA nodes' GPUs (the ``model`` attribute their devices carry).
LATEST_GPU_MODEL = MODEL
OLDER_GPU_MODEL = "OLDER-GPU-MODEL"

#: The scheduler configuration (``kubescheduler.config.k8s.io/v1``), as a user writes it.
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    # One replica on its own API server: there is no other replica to elect against.
    "leaderElection": {"leaderElect": False},
    "profiles": [
        {"schedulerName": DEFAULT_PROFILE},
        {
            "schedulerName": GPU_PROFILE,
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [
                                {"name": GPU_RESOURCE, "weight": 5},
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                            ],
                        }
                    },
                }
            ],
        },
        {
            # Coscheduling places a gang's quorum in one cycle; it is enabled for its
            # PreFilter (and so as the profile's PodGroupPlugin) only: the queue sort must
            # be the same in every profile, and PrioritySort keeps the other profiles as
            # they are. CapacityScheduling as scheduler-plugins' configuration enables it:
            # its quota-aware preemption in place of DefaultPreemption.
            "schedulerName": TEAM_PROFILE,
            "plugins": {
                "preFilter": {"enabled": [{"name": "Coscheduling"}]},
                "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                "postFilter": {
                    "enabled": [{"name": "CapacityScheduling"}],
                    "disabled": [{"name": "*"}],
                },
            },
        },
    ],
}

#: Each team's ElasticQuota: guaranteed (min) and at most (max), of the GPU nodes.
TEAM_QUOTAS: dict[str, dict[str, dict[str, str]]] = {
    "team-a": {
        "min": {"cpu": "8", "memory": "32Gi", GPU_RESOURCE: "4"},
        "max": {"cpu": "8", "memory": "32Gi", GPU_RESOURCE: "4"},
    },
    "team-b": {
        "min": {"cpu": "4", "memory": "16Gi", GPU_RESOURCE: "2"},
        "max": {"cpu": "4", "memory": "16Gi", GPU_RESOURCE: "2"},
    },
}

#: PriorityClasses the workload uses: name → value.
PRIORITY_CLASSES = {"batch": 100, "standard": 1000, "critical": 100000}


@dataclass(frozen=True)
class NodeGroup:
    """Simulated nodes of one kind: names, size, and what sets them apart."""

    kind: str
    names: Sequence[str]
    cpu: str
    memory: str
    gpus: int = 0
    taints: Sequence[Mapping[str, str]] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    #: GPUs published by the simulated DRA driver (ResourceSlice devices), and their model.
    dra_gpus: int = 0
    dra_model: str = ""


#: Zones are the nodes' indexes modulo 3 (``make_nodes``): a, b, c, a, b, c, ...
NODE_GROUPS = (
    NodeGroup("cpu", ("cpu-a1", "cpu-b1", "cpu-c1", "cpu-a2", "cpu-b2", "cpu-c2"), "4", "16Gi"),
    NodeGroup("gpu", ("gpu-a1", "gpu-b1"), "16", "64Gi", 4, (GPU_TAINT,), {GPU_LABEL: "true"}),
    NodeGroup("dra", ("dra-b1",), "16", "64Gi", 0, (GPU_TAINT,), {}, 4, LATEST_GPU_MODEL),
    NodeGroup("dra", ("dra-c1",), "16", "64Gi", 0, (GPU_TAINT,), {}, 4, OLDER_GPU_MODEL),
    NodeGroup("infra", ("infra-c1",), "4", "16Gi", 0, (INFRA_TAINT,)),
)


def nodes() -> list[dict[str, Any]]:
    """The demo's Node manifests, simulated (the simulated kubelet runs their pods)."""
    manifests: list[dict[str, Any]] = []
    index = 0
    for group in NODE_GROUPS:
        for name in group.names:
            # The index picks the zone (and unique addresses); the zone letter in the
            # name must agree with it.
            while "abc"[index % 3] != name.split("-")[1][0]:
                index += 1
            template = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": "demo",
                    "labels": {REGION_LABEL: REGION, **group.labels},
                    "annotations": _dra_annotations(group),
                },
                "status": {
                    "capacity": {
                        "cpu": group.cpu,
                        "memory": group.memory,
                        "pods": "110",
                        "ephemeral-storage": "100Gi",
                    }
                },
            }
            taints = [dict(t) for t in group.taints]
            (node,) = make_nodes(1, template, gpus=group.gpus, taints=taints, start=index)
            index += 1
            node["metadata"]["name"] = name
            node["metadata"]["labels"][HOSTNAME_LABEL] = name
            for address in node["status"]["addresses"]:
                if address["type"] == "Hostname":
                    address["address"] = name
            manifests.append(node)
    return manifests


def _dra_annotations(group: NodeGroup) -> dict[str, str]:
    """What tells the simulated DRA driver to publish the group's GPUs."""
    if not group.dra_gpus:
        return {}
    return {GPUS_ANNOTATION: str(group.dra_gpus), GPU_MODEL_ANNOTATION: group.dra_model}


def zone_of(node: Mapping[str, Any]) -> str:
    """The node's ``topology.kubernetes.io/zone`` label ("" if none)."""
    return str(((node.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL, ""))


def team_objects() -> list[dict[str, Any]]:
    """Each team's Namespace and ElasticQuota (:data:`TEAM_QUOTAS`)."""
    objects: list[dict[str, Any]] = []
    for team, quota in TEAM_QUOTAS.items():
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team}})
        objects.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "ElasticQuota",
                "metadata": {"name": "quota", "namespace": team},
                "spec": {kind: dict(amounts) for kind, amounts in quota.items()},
            }
        )
    return objects


def priority_classes() -> list[dict[str, Any]]:
    """The PriorityClass manifests of :data:`PRIORITY_CLASSES`."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": f"kubesched demo: {name} work",
        }
        for name, value in PRIORITY_CLASSES.items()
    ]
