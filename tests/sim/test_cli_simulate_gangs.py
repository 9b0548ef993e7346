"""`kubesched simulate` of gangs from files, as users write them: scheduler-plugins'
configuration, PodGroups and labelled pods; each held-back scenario of the issue in one
run (a quorum placed whole, a quorum that does not exist yet, two interleaved gangs of
which one fits, a gang too big for the cluster that blocks no one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_pod_group

CONFIG = """
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
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
"""


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return path


def member(name: str, group: str, cpu: str = "1") -> dict[str, Any]:
    return make_pod(name).label(POD_GROUP_LABEL, group).req(cpu=cpu).dict()


def test_gangs_from_files_are_placed_whole_or_wait_holding_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two nodes of 4 CPUs.
    cluster = write(
        tmp_path / "cluster.yaml",
        *(make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").dict() for i in range(2)),
    )
    groups = [
        make_pod_group("train").min_member(2).creation_timestamp("2026-01-01T00:00:00Z"),
        make_pod_group("huge").min_member(4).creation_timestamp("2026-01-02T00:00:00Z"),
        make_pod_group("sweep").min_member(4).creation_timestamp("2026-01-03T00:00:00Z"),
        # a and b each need 3 CPUs on each node: one fits beside train, not both.
        make_pod_group("a").min_member(2).creation_timestamp("2026-01-04T00:00:00Z"),
        make_pod_group("b").min_member(2).creation_timestamp("2026-01-04T00:00:00Z"),
    ]
    pods = [member(f"train-{i}", "train", cpu="500m") for i in range(2)]
    pods += [member(f"huge-{i}", "huge", cpu="3") for i in range(4)]
    pods += [member(f"sweep-{i}", "sweep") for i in range(2)]
    for i in range(2):
        pods += [member(f"a-{i}", "a", cpu="3"), member(f"b-{i}", "b", cpu="3")]
    web = make_pod("web").req(cpu="500m").creation_timestamp("2026-02-01T00:00:00Z")
    pods.append(web.dict())
    pods_file = write(tmp_path / "pods.yaml", *(g.dict() for g in groups), *pods)
    config = tmp_path / "scheduler-config.yaml"
    config.write_text(CONFIG)
    files = ["--cluster", str(cluster), "--pods", str(pods_file), "--config", str(config)]
    code = main(["simulate", *files, "--output", "json", "--seed", "1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    placements = {p["pod"]: p for p in json.loads(out)["placements"]}

    def node(name: str) -> str | None:
        return placements[f"default/{name}"]["node"]

    assert node("train-0") and node("train-1")
    # huge needs 12 CPUs of 8: none of its members holds anything.
    assert all(node(f"huge-{i}") is None for i in range(4))
    assert placements["default/huge-0"]["message"].startswith(
        "pod group default/huge (minMember 4): "
    )
    # sweep has 2 of its 4 members.
    assert placements["default/sweep-0"]["message"] == (
        "pod group default/sweep: 2 of 4 members exist; waiting for the rest before "
        "scheduling any of them"
    )
    # One of a and b, whole; the other not at all.
    placed = {g for g in "ab" if node(f"{g}-0") and node(f"{g}-1")}
    assert len(placed) == 1
    other = ({"a", "b"} - placed).pop()
    assert node(f"{other}-0") is None and node(f"{other}-1") is None
    # The plain pod behind the gangs is placed (no head-of-line blocking).
    assert node("web") is not None
