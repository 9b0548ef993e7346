"""CapacityScheduling through ``kubesched simulate`` and ``kubesched explain``: ElasticQuotas
in the cluster file, scheduler-plugins' configuration file as written, quota max,
borrowing, reclaim, same-namespace-only preemption over min, scheduler-plugins issue
683, and explain naming the quota with the numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main

GPU = "nvidia.com/gpu"

#: scheduler-plugins' configuration for CapacityScheduling, as its manifests write it.
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "REPLACE_ME_WITH_KUBE_CONFIG_PATH"
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: CapacityScheduling
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
"""


def node(name: str, cpu: str = "2", gpus: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "8Gi", "pods": "20"}
    if gpus:
        allocatable[GPU] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": allocatable},
    }


def quota(ns: str, min_: dict[str, str], max_: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota", "namespace": ns},
        "spec": {"min": min_, "max": max_},
    }


def pod(
    name: str, ns: str, *, cpu: str = "", gpus: int = 0, priority: int | None = None
) -> dict[str, Any]:
    requests = {"cpu": cpu} if cpu else {}
    limits = {}
    if gpus:
        requests[GPU] = limits[GPU] = str(gpus)
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": requests, "limits": limits}}
        ]
    }
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def bound(obj: dict[str, Any], node_name: str) -> dict[str, Any]:
    obj["spec"]["nodeName"] = node_name
    return obj


def write(path: Path, objs: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: list[Any], pods: list[Any]
) -> dict[str, Any]:
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(CONFIG)
    code = main(
        [
            "simulate",
            "--cluster",
            write(tmp_path / "cluster.yaml", cluster),
            "--pods",
            write(tmp_path / "pods.yaml", pods),
            "--config",
            str(config),
            "--seed",
            "1",
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def placements(data: dict[str, Any]) -> dict[str, tuple[str | None, list[str]]]:
    return {p["pod"]: (p["node"], p.get("preempted", [])) for p in data["placements"]}


TWO_TEAMS = [
    node("n1"),
    node("n2"),
    quota("team-a", {"cpu": "2", "memory": "4Gi"}, {"cpu": "4", "memory": "8Gi"}),
    quota("team-b", {"cpu": "2", "memory": "4Gi"}, {"cpu": "4", "memory": "8Gi"}),
]


def test_quota_max_holds_a_namespace_with_the_numbers(tmp_path, capsys):
    cluster = [
        node("n1", cpu="8"),
        quota("team-a", {"cpu": "1"}, {"cpu": "2"}),
        quota("team-b", {"cpu": "4"}, {"cpu": "4"}),
    ]
    data = simulate(tmp_path, capsys, cluster, [pod(f"p{i}", "team-a", cpu="1") for i in range(3)])

    got = placements(data)
    assert [got[f"team-a/p{i}"][0] for i in range(3)] == ["n1", "n1", None]
    message = next(p["message"] for p in data["placements"] if p["pod"] == "team-a/p2")
    assert message.startswith(
        "0/1 nodes are available: Pod team-a/p2 is rejected in PreFilter because "
        "ElasticQuota team-a is more than Max (ElasticQuota team-a/quota cpu: "
        "used 2, request 1, max 2)."
    )


def test_borrowing_then_reclaim_by_preemption(tmp_path, capsys):
    """team-a borrows team-b's unused min (4 pods on 4 cpu), a fifth is over its max;
    team-b's pod within its min takes one cpu back."""
    pods = [pod(f"a{i}", "team-a", cpu="1") for i in range(4)] + [pod("b0", "team-b", cpu="1")]
    data = simulate(tmp_path, capsys, TWO_TEAMS, pods)

    got = placements(data)
    assert all(got[f"team-a/a{i}"][0] for i in range(4))
    node_b, preempted = got["team-b/b0"]
    assert node_b in ("n1", "n2")
    assert len(preempted) == 1 and preempted[0].startswith("team-a/")


def test_over_its_min_a_namespace_preempts_only_its_own_pods(tmp_path, capsys):
    """Both teams at their min with low priority; a high-priority team-a pod would take
    team-a over its min: a team-a pod goes, never team-b's."""
    running = [
        bound(pod("b0", "team-b", cpu="1", priority=10), "n1"),
        bound(pod("a0", "team-a", cpu="1", priority=10), "n1"),
        bound(pod("b1", "team-b", cpu="1", priority=10), "n2"),
        bound(pod("a1", "team-a", cpu="1", priority=10), "n2"),
    ]
    pods = [pod("a-high", "team-a", cpu="1", priority=1000)]
    data = simulate(tmp_path, capsys, TWO_TEAMS + running, pods)

    node_high, preempted = placements(data)["team-a/a-high"]
    assert node_high is not None
    assert len(preempted) == 1 and preempted[0] in ("team-a/a0", "team-a/a1")


def test_683_a_namespace_within_its_min_gets_its_gpu_back(tmp_path, capsys):
    cluster = [
        node("gpu-1", cpu="8", gpus=2),
        node("gpu-2", cpu="8", gpus=3),
        quota("team-a", {GPU: "4", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
        quota("team-b", {GPU: "1", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
    ]
    pods = [pod(f"a{i}", "team-a", gpus=1) for i in range(5)] + [pod("b0", "team-b", gpus=1)]
    data = simulate(tmp_path, capsys, cluster, pods)

    got = placements(data)
    assert all(got[f"team-a/a{i}"][0] for i in range(5))
    node_b, preempted = got["team-b/b0"]
    assert node_b is not None
    assert len(preempted) == 1 and preempted[0].startswith("team-a/")


def test_explain_names_the_quota_with_the_numbers(tmp_path, capsys):
    cluster = [
        node("gpu-1", cpu="8", gpus=5),
        quota("team-a", {GPU: "4", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
        quota("team-b", {GPU: "1", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
    ] + [
        {
            **pod(f"a{i}", "team-a", gpus=1),
            "spec": {**pod(f"a{i}", "team-a", gpus=1)["spec"], "nodeName": "gpu-1"},
        }
        for i in range(5)
    ]
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(CONFIG)
    code = main(
        [
            "explain",
            "--cluster",
            write(tmp_path / "cluster.yaml", cluster),
            "--pod",
            write(tmp_path / "pod.yaml", [pod("b0", "team-b", gpus=1)]),
            "--config",
            str(config),
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    reason = (
        "Pod team-b/b0 is rejected in PreFilter because total ElasticQuota used is more "
        f"than min ({GPU}: total used 5, request 1, sum of min 5)"
    )
    assert data["nodes"][0]["rejectedBy"] == "CapacityScheduling"
    assert data["nodes"][0]["reason"] == reason
    assert data["message"].startswith(f"0/1 nodes are available: {reason}.")


# --- accounting after failures ------------------------------------------------------------

#: A plugin of the user's (``module:factory`` beside the configuration): its Reserve
#: refuses the pods labelled ``refuse=reserve`` after CapacityScheduling's, and it is the
#: binder, failing the pods labelled ``refuse=bind``.
FAILING_PLUGIN = """
from kubesched.framework.interface import Status


class Failing:
    name = "failing:new"

    def __init__(self, handle):
        self.handle = handle

    def reserve(self, state, pod, node_name):
        if pod.labels.get("refuse") == "reserve":
            return Status.unschedulable("refused at Reserve")
        return None

    def unreserve(self, state, pod, node_name):
        return None

    def bind(self, state, pod, node_name):
        if pod.labels.get("refuse") == "bind":
            return Status.error("bind failed")
        self.handle.client.bind(pod, node_name)
        return None


def new(args, handle):
    return Failing(handle)
"""

FAILING_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: CapacityScheduling
    reserve:
      enabled:
      - name: failing:new
    bind:
      enabled:
      - name: failing:new
      disabled:
      - name: DefaultBinder
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
"""


@pytest.mark.parametrize("where", ["reserve", "bind"])
def test_a_pod_that_fails_after_reserve_leaves_its_quota_as_it_was(tmp_path, capsys, where):
    """team-a may use 2 cpu; its first pod fails (a later Reserve plugin refuses it, or
    its bind fails). Had its reservation leaked, only one of the next two would fit."""
    (tmp_path / "failing.py").write_text(FAILING_PLUGIN)
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(FAILING_CONFIG)
    cluster = [
        node("n1", cpu="8"),
        quota("team-a", {"cpu": "1"}, {"cpu": "2"}),
        quota("team-b", {"cpu": "4"}, {"cpu": "4"}),
    ]
    doomed = pod("doomed", "team-a", cpu="1")
    doomed["metadata"]["labels"] = {"refuse": where}
    pods = [doomed, pod("p0", "team-a", cpu="1"), pod("p1", "team-a", cpu="1")]
    code = main(
        [
            "simulate",
            *("--cluster", write(tmp_path / "cluster.yaml", cluster)),
            *("--pods", write(tmp_path / "pods.yaml", pods)),
            *("--config", str(config), "--seed", "1", "-o", "json"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    got = placements(json.loads(out))
    assert got["team-a/doomed"][0] is None
    assert got["team-a/p0"][0] == "n1" and got["team-a/p1"][0] == "n1"
