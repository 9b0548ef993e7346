"""What ``kubesched demo`` puts on its cluster: nodes, scheduler profiles and the workload.

Nine simulated nodes over three zones: six CPU nodes, two GPU nodes (``nvidia.com/gpu``
capacity, the ``nvidia.com/gpu.present`` label and the ``nvidia.com/gpu=present:NoSchedule``
taint that GPU clusters use to keep other pods off them) and one node tainted for
infrastructure. Two profiles: kube-scheduler's defaults, and ``gpu-aware``, the same
plugins with NodeResourcesFit scoring ``MostAllocated`` with GPUs weighted high, so
that GPU jobs are packed and whole GPU nodes stay free for large jobs.

The workload comes in waves, each submitted once the previous one has settled, because
the story depends on order: the batch pods must run before the urgent pod comes, or
there would be nothing to preempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.objects.nodes import GPU_RESOURCE, REGION_LABEL, ZONE_LABEL, make_nodes

NAMESPACE = "default"
#: The region of every node; zones are REGION-a, -b and -c.
REGION = "eu-west"
DEFAULT_PROFILE = "default-scheduler"
GPU_PROFILE = "gpu-aware"
GPU_LABEL = "nvidia.com/gpu.present"
GPU_TAINT = {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"}
INFRA_TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
HOSTNAME_LABEL = "kubernetes.io/hostname"

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
    ],
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


#: Zones are the nodes' indexes modulo 3 (``make_nodes``): a, b, c, a, b, c, ...
NODE_GROUPS = (
    NodeGroup("cpu", ("cpu-a1", "cpu-b1", "cpu-c1", "cpu-a2", "cpu-b2", "cpu-c2"), "4", "16Gi"),
    NodeGroup("gpu", ("gpu-a1", "gpu-b1"), "16", "64Gi", 4, (GPU_TAINT,), {GPU_LABEL: "true"}),
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
                "metadata": {"name": "demo", "labels": {REGION_LABEL: REGION, **group.labels}},
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


def zone_of(node: Mapping[str, Any]) -> str:
    """The node's ``topology.kubernetes.io/zone`` label ("" if none)."""
    return str(((node.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL, ""))


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


@dataclass(frozen=True)
class Wave:
    """Pods submitted together, and what the demo says about them."""

    title: str
    pods: Sequence[dict[str, Any]]
    #: A profile to schedule these pods with again in the policy lab, for contrast
    #: ("" for none): what they would have got without the profile they name.
    replay_with: str = ""


#: Annotation on each demo pod: the rule that decides where it goes (the "why" column).
RULE_ANNOTATION = "demo.kubesched.io/rule"


def pod(
    name: str,
    cpu: str,
    memory: str,
    *,
    rule: str,
    priority_class: str = "standard",
    scheduler: str = DEFAULT_PROFILE,
    labels: Mapping[str, str] | None = None,
    gpus: int = 0,
    spread: Sequence[Mapping[str, Any]] = (),
    tolerations: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A Pod manifest with one container and the given requests and constraints."""
    requests: dict[str, str] = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    if gpus:
        # Extended resources must be given as limits (requests then default to them).
        requests[GPU_RESOURCE] = str(gpus)
        resources["limits"] = {GPU_RESOURCE: str(gpus)}
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "priorityClassName": priority_class,
        # Preempted pods leave at once: simulated containers have nothing to flush.
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}
        ],
    }
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": dict(labels or {}),
            "annotations": {RULE_ANNOTATION: rule},
        },
        "spec": spec,
    }


def _spread(key: str, labels: Mapping[str, str]) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": dict(labels)},
        # Tainted nodes the pod cannot use are not domains to balance over.
        "nodeTaintsPolicy": "Honor",
    }


def waves() -> list[Wave]:
    """The workload, wave by wave."""
    gpu_toleration = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
    batch = [
        pod(
            f"batch-{i}",
            "3",
            "4Gi",
            rule="priority batch: first to go",
            priority_class="batch",
            labels={"app": "nightly-batch"},
        )
        for i in range(1, 7)
    ]
    web = [
        pod(
            f"web-{i}",
            "250m",
            "256Mi",
            rule="zone spread, maxSkew 1",
            labels={"app": "web"},
            spread=[_spread(ZONE_LABEL, {"app": "web"})],
        )
        for i in range(1, 7)
    ]
    tenants = [
        pod(
            f"{tenant}-{i}",
            "200m",
            "512Mi",
            rule=f"tenant {tenant}: node spread",
            labels={"tenant": tenant},
            spread=[_spread(HOSTNAME_LABEL, {"tenant": tenant})],
        )
        for tenant in ("acme", "globex")
        for i in range(1, 4)
    ]
    workers = [
        pod(f"worker-{i}", "100m", "128Mi", rule="defaults: least allocated") for i in range(1, 4)
    ]
    gpu_rule = "gpu-aware: GPUs packed"
    train = [
        pod(
            f"train-{i}",
            "2",
            "8Gi",
            rule=gpu_rule,
            scheduler=GPU_PROFILE,
            gpus=1,
            tolerations=[gpu_toleration],
            labels={"app": "train"},
        )
        for i in range(1, 4)
    ]
    train.append(
        pod(
            "train-4gpu",
            "4",
            "16Gi",
            rule="gpu-aware: a whole GPU node left",
            scheduler=GPU_PROFILE,
            gpus=4,
            tolerations=[gpu_toleration],
            labels={"app": "train"},
        )
    )
    urgent = [
        pod(
            "checkout-hotfix",
            "2",
            "1Gi",
            rule="priority critical: preempts",
            priority_class="critical",
            labels={"app": "checkout"},
        ),
        pod(
            "train-8gpu",
            "8",
            "32Gi",
            rule="8 GPUs: more than any node has",
            scheduler=GPU_PROFILE,
            gpus=8,
            tolerations=[gpu_toleration],
            labels={"app": "train"},
        ),
    ]
    return [
        Wave("nightly batch jobs fill every CPU node (priority batch, 3 of 4 CPUs each)", batch),
        Wave(
            "services: web spread over zones, two tenants spread over nodes, workers",
            [*web, *tenants, *workers],
        ),
        Wave(
            "training jobs for the gpu-aware profile (1-GPU jobs, then a 4-GPU job)",
            train,
            replay_with=DEFAULT_PROFILE,
        ),
        Wave("an urgent pod on a full cluster, and a job no node can hold", urgent),
    ]
