"""`kubesched compare`: the same pods under two configurations, KPIs side by side, every
pod placed differently, ties told apart from policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kubesched.cli import main
from kubesched.sim import document
from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
PACK = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                }
            ],
        }
    ],
}
SPREAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    return {
        "cluster": write(
            tmp_path / "cluster.yaml",
            *[
                make_node(f"n{i}")
                .capacity(cpu="2", memory="4Gi", pods="20")
                .label(ZONE, "ab"[i // 2])
                .dict()
                for i in range(4)
            ],
        ),
        "pods": write(
            tmp_path / "pods.yaml", *[make_pod(f"p{i}").req(cpu="200m").dict() for i in range(4)]
        ),
        "pack": write(tmp_path / "pack.yaml", PACK),
        "spread": write(tmp_path / "spread.yaml", SPREAD),
    }


def run_compare(
    capsys: pytest.CaptureFixture[str], inputs: dict[str, Path], *extra: str
) -> dict[str, Any]:
    argv = ["compare", "--cluster", str(inputs["cluster"]), "--pods", str(inputs["pods"])]
    argv += [
        "--config",
        str(inputs["pack"]),
        "--config",
        str(inputs["spread"]),
        "--seed",
        "3",
        *extra,
    ]
    assert main([*argv, "-o", "json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, document.schema())
    return data


def test_one_config_packs_and_the_other_spreads(
    inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_compare(capsys, inputs)
    assert data["kind"] == "ComparisonReport"
    kpis = {k["name"]: k for k in data["kpis"]}
    assert (kpis["nodesUsed"]["a"], kpis["nodesUsed"]["b"], kpis["nodesUsed"]["delta"]) == (1, 4, 3)
    assert (kpis["placed"]["a"], kpis["placed"]["b"]) == (4, 4)
    assert kpis["cpu.max"]["a"] == 0.4 and kpis["cpu.max"]["b"] == 0.1
    assert kpis["cpu.mean"]["delta"] == 0
    assert kpis["zoneSkew"]["a"] == 4 and kpis["zoneSkew"]["b"] == 0
    a, b = data["runs"]
    nodes_a = {p["pod"]: p["node"] for p in a["placements"]}
    nodes_b = {p["pod"]: p["node"] for p in b["placements"]}
    assert len(set(nodes_a.values())) == 1 and len(set(nodes_b.values())) == 4
    # The first pod faces four empty nodes under both configurations: the same tie, so
    # the same node; every other pod is placed differently, by policy.
    assert nodes_a["default/p0"] == nodes_b["default/p0"]
    deltas = data["placementDeltas"]
    assert [d["pod"] for d in deltas] == [p for p in nodes_a if nodes_a[p] != nodes_b[p]]
    assert len(deltas) == 3
    assert all(d["nodeA"] == nodes_a[d["pod"]] and d["nodeB"] == nodes_b[d["pod"]] for d in deltas)
    assert not any(d["tieOnly"] for d in deltas)
    per_node = {d["node"]: d for d in data["nodeDeltas"]}
    packed = nodes_a["default/p0"]
    assert per_node[packed]["a"] == {"pods": 4, "cpu": 800, "memory": 0}
    assert per_node[packed]["delta"]["pods"] == -3
    assert {d["path"]: (d["a"], d["b"]) for d in data["profileDiff"]} == {
        "default-scheduler.pluginConfig.NodeResourcesFit.scoringStrategy.resources": (
            [{"name": "cpu", "weight": 1}],
            None,
        ),
        "default-scheduler.pluginConfig.NodeResourcesFit.scoringStrategy.type": (
            "MostAllocated",
            None,
        ),
    }


def test_a_tie_only_delta_is_marked(
    tmp_path: Path, inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """B scores no resources, so every node ties for every pod in B: wherever B put a pod,
    A's node was as good in B's eyes, so each delta is the tie's, not the policy's."""
    indifferent = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "score": {
                        "disabled": [
                            {"name": "NodeResourcesFit"},
                            {"name": "NodeResourcesBalancedAllocation"},
                        ]
                    }
                },
            }
        ],
    }
    inputs["pack"] = inputs["spread"]
    inputs["spread"] = write(tmp_path / "indifferent.yaml", indifferent)
    inputs["pods"] = write(
        tmp_path / "pods.yaml", *[make_pod(f"p{i}").req(cpu="200m").dict() for i in range(12)]
    )
    data = run_compare(capsys, inputs)
    b = data["runs"][1]
    assert len(data["placementDeltas"]) >= 3
    assert all(d["tieOnly"] for d in data["placementDeltas"])
    assert data["profileDiff"] == [
        {
            "path": "default-scheduler.plugins.score",
            "a": [
                "ImageLocality",
                "InterPodAffinity",
                "NodeAffinity",
                "NodeResourcesBalancedAllocation",
                "NodeResourcesFit",
                "PodTopologySpread",
                "TaintToleration",
            ],
            "b": [
                "ImageLocality",
                "InterPodAffinity",
                "NodeAffinity",
                "PodTopologySpread",
                "TaintToleration",
            ],
        },
        {"path": "default-scheduler.weights.NodeResourcesBalancedAllocation", "a": 1, "b": None},
        {"path": "default-scheduler.weights.NodeResourcesFit", "a": 1, "b": None},
    ]
    assert b["kpis"]["placed"] == 12


def test_the_same_config_twice_changes_nothing(
    inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    inputs["pack"] = inputs["spread"]
    data = run_compare(capsys, inputs)
    assert data["placementDeltas"] == []
    assert data["profileDiff"] == []
    assert all(k["delta"] == 0 for k in data["kpis"])


def test_compare_table_and_errors(
    inputs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "compare",
        "--cluster",
        str(inputs["cluster"]),
        "--pods",
        str(inputs["pods"]),
        "--seed",
        "3",
    ]
    assert main([*argv, "--config", str(inputs["pack"]), "--config", str(inputs["spread"])]) == 0
    out = capsys.readouterr().out
    assert "nodesUsed" in out and "3 pod(s) placed differently" in out
    assert main([*argv, "--config", str(inputs["pack"])]) == 2
    assert "--config: give exactly two configurations (A and B), got 1" in capsys.readouterr().err
