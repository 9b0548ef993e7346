"""Gangs under elastic quotas, through ``kubesched simulate``: Coscheduling and
CapacityScheduling together, each configured as scheduler-plugins configures it. A quorum
over its namespace's max is placed not at all and leaves the quota as it was; a gang
within its namespace's min takes the borrowed share back by preemption, for the whole
quorum at once (CapacityScheduling is the profile's PreemptionPlanner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group

GPU = "nvidia.com/gpu"

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
      - name: CapacityScheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
"""


def write(path: Path, *objs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return str(path)


def gpu_pod(name: str, ns: str, group: str = "", node: str = "") -> dict[str, Any]:
    w = (
        make_pod(name)
        .namespace(ns)
        .uid(f"{ns}-{name}")
        .container(requests={"cpu": "1", GPU: "1"}, limits={GPU: "1"})
    )
    if group:
        w = w.label(POD_GROUP_LABEL, group)
    if node:
        w = w.node(node)
    return w.dict()


def quota(ns: str, min_gpu: str, max_gpu: str) -> dict[str, Any]:
    return (
        make_elastic_quota(ns).min(cpu="16", **{GPU: min_gpu}).max(cpu="16", **{GPU: max_gpu}).raw
    )


def simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cluster: list[Any], pods: list[Any]
) -> dict[str, dict[str, Any]]:
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(CONFIG)
    argv = [
        "simulate",
        *("--cluster", write(tmp_path / "cluster.yaml", *cluster)),
        *("--pods", write(tmp_path / "pods.yaml", *pods)),
        *("--config", str(config), "--output", "json", "--seed", "1"),
    ]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return {p["pod"]: p for p in json.loads(out)["placements"]}


def gpu_nodes(count: int, gpus: int) -> list[dict[str, Any]]:
    return [
        make_node(f"gpu-{i}").capacity(cpu="16", memory="64Gi", pods="110", **{GPU: gpus}).dict()
        for i in range(count)
    ]


def test_a_quorum_over_its_quotas_max_is_not_placed_and_leaves_the_quota_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """team-a may use 2 GPUs: a gang of 3 would get two members placed one by one and
    the third refused; in one cycle none is. A plain team-a pod after it still gets one
    of the 2 GPUs (the rolled-back members left nothing in the quota)."""
    cluster = [*gpu_nodes(2, 4), quota("team-a", "2", "2"), quota("team-b", "4", "4")]
    group = make_pod_group("train").namespace("team-a").min_member(3)
    group = group.creation_timestamp("2026-01-01T00:00:00Z")
    pods = [group.raw, *(gpu_pod(f"train-{i}", "team-a", group="train") for i in range(3))]
    later = gpu_pod("single", "team-a")
    later["metadata"]["creationTimestamp"] = "2026-02-01T00:00:00Z"
    pods.append(later)

    placed = simulate(tmp_path, capsys, cluster, pods)

    assert all(placed[f"team-a/train-{i}"]["node"] is None for i in range(3))
    message = placed["team-a/train-0"]["message"]
    assert message.startswith("pod group team-a/train (minMember 3): ")
    assert "ElasticQuota team-a is more than Max" in message
    assert placed["team-a/single"]["node"] is not None


def test_a_gang_within_its_min_takes_the_borrowed_share_back_for_the_whole_quorum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """8 GPUs; team-a (min 4) runs 8 pods, borrowing all of team-b's min; team-b's
    gang of 4 (min 4) preempts 4 of team-a's borrowing pods and runs whole."""
    running = [gpu_pod(f"a{i}", "team-a", node=f"gpu-{i % 2}") for i in range(8)]
    cluster = [*gpu_nodes(2, 4), quota("team-a", "4", "8"), quota("team-b", "4", "8"), *running]
    group = make_pod_group("eval").namespace("team-b").min_member(4)
    pods = [group.raw, *(gpu_pod(f"eval-{i}", "team-b", group="eval") for i in range(4))]

    placed = simulate(tmp_path, capsys, cluster, pods)

    assert all(placed[f"team-b/eval-{i}"]["node"] is not None for i in range(4))
    victims = [v for i in range(4) for v in placed[f"team-b/eval-{i}"].get("preempted", [])]
    assert len(victims) == 4 and all(v.startswith("team-a/") for v in victims)
