"""`kubesched capacity`: cluster-capacity's answer — how many more instances of a shape
fit, per node, and why each node stopped — on files and on a live cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes
import pytest
import yaml

from kubesched.apiserver.runner import start_apiserver
from kubesched.cli import main
from kubesched.sim import document
from kubesched.testing import make_node, make_pod


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["capacity", *argv, "-o", "json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, document.schema())
    return data


@pytest.fixture
def four_nodes(tmp_path: Path) -> Path:
    return write(
        tmp_path / "c.yaml",
        *[make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="110").dict() for i in range(4)],
    )


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write(tmp_path / "small.yaml", make_pod("small").req(cpu="150m").dict())


def test_the_issue_example_four_nodes_of_2_cpu_hold_52_pods_of_150m(
    four_nodes: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run(capsys, "--cluster", str(four_nodes), "--pod", str(small))
    assert data["kind"] == "CapacityReport"
    (shape,) = data["shapes"]
    assert (shape["name"], shape["count"]) == ("small", 52)
    assert shape["sentence"] == "The cluster can schedule 52 instance(s) of the pod small."
    assert shape["requests"] == {"cpu": 150, "memory": 0}
    assert shape["perNode"] == [
        {"node": f"n{i}", "count": 13, "limit": "Insufficient cpu"} for i in range(4)
    ]
    assert shape["stopReason"].startswith("0/4 nodes are available: 4 Insufficient cpu.")
    assert data["mix"] is None
    # The table keeps cluster-capacity's sentence word for word.
    assert main(["capacity", "--cluster", str(four_nodes), "--pod", str(small)]) == 0
    assert "The cluster can schedule 52 instance(s) of the pod small.\n" in capsys.readouterr().out


def test_max_caps_the_count(
    four_nodes: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shape,) = run(capsys, "--cluster", str(four_nodes), "--pod", str(small), "--max", "10")[
        "shapes"
    ]
    assert shape["count"] == 10
    assert shape["stopReason"] == "reached --max 10"
    assert sum(n["count"] for n in shape["perNode"]) == 10
    assert {n["limit"] for n in shape["perNode"]} == {"not limited: stopped at --max"}


def test_each_node_says_what_limits_it(
    tmp_path: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "c.yaml",
        make_node("cpu-bound").capacity(cpu="1", memory="4Gi", pods="110").dict(),
        make_node("pod-bound").capacity(cpu="8", memory="4Gi", pods="3").dict(),
        make_node("tainted")
        .capacity(cpu="8", memory="4Gi", pods="110")
        .taint("dedicated", "infra")
        .dict(),
        make_pod("existing").node("pod-bound").req(cpu="100m").dict(),
    )
    (shape,) = run(capsys, "--cluster", str(cluster), "--pod", str(small))["shapes"]
    assert shape["perNode"] == [
        {"node": "cpu-bound", "count": 6, "limit": "Insufficient cpu"},
        {"node": "pod-bound", "count": 2, "limit": "Too many pods"},
        {
            "node": "tainted",
            "count": 0,
            "limit": "node(s) had untolerated taint {dedicated: infra}",
        },
    ]
    assert shape["count"] == 8


def test_several_shapes_alone_and_in_a_round_robin_mix(
    tmp_path: Path, four_nodes: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = write(tmp_path / "big.yaml", make_pod("big").req(cpu="100m", memory="1Gi").dict())
    data = run(capsys, "--cluster", str(four_nodes), "--pod", str(small), "--pod", str(big))
    assert [(s["name"], s["count"]) for s in data["shapes"]] == [("small", 52), ("big", 16)]
    mix = data["mix"]
    assert mix["order"] == ["small", "big"]
    # Alternating: big runs out of memory after 16 (with 16 small beside it, 4 per node:
    # 4 x 150m + 4 x 100m = 1000m), then small fills the cpu left: 1000m / 150m = 6 more.
    assert mix["perShape"] == {"small": 16 + 4 * 6, "big": 16}
    assert mix["count"] == 56
    assert all(n["counts"] == {"small": 10, "big": 4} for n in mix["perNode"])
    assert mix["perNode"][0]["limit"] == "small: Insufficient cpu; big: Insufficient memory"


def test_a_workload_counts_under_its_own_name(
    tmp_path: Path, four_nodes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}}}
                    ]
                },
            },
        },
    }
    shape = write(tmp_path / "web.yaml", deployment)
    (result,) = run(capsys, "--cluster", str(four_nodes), "--pod", str(shape))["shapes"]
    assert (result["name"], result["count"]) == ("web", 16)


def test_bad_input_is_named(
    tmp_path: Path, four_nodes: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["capacity", "--cluster", str(four_nodes), "--pod", str(small), "--pod", str(small)])
        == 2
    )
    assert f"--pod {small}: a shape named small is given already" in capsys.readouterr().err
    assert main(["capacity", "--cluster", str(four_nodes), "--pod", str(small), "--max", "-1"]) == 2
    assert "--max: Invalid value: -1: must be 0 or more" in capsys.readouterr().err


def test_a_live_cluster_is_copied_through_export(
    tmp_path: Path, small: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig")
    try:
        api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
        core = kubernetes.client.CoreV1Api(api)
        for i in range(4):
            core.create_node(
                make_node(f"live-{i}").capacity(cpu="2", memory="4Gi", pods="110").dict()
            )
        core.create_namespaced_pod("default", make_pod("busy").node("live-0").req(cpu="1").dict())
        api.close()
        data = run(capsys, "--kubeconfig", str(server.kubeconfig_path), "--pod", str(small))
    finally:
        server.stop()
    (shape,) = data["shapes"]
    assert shape["count"] == 13 * 3 + 6
    assert [n["count"] for n in shape["perNode"]] == [6, 13, 13, 13]
    assert data["metadata"]["inputs"]["cluster"] == f"kubeconfig:{server.kubeconfig_path}"
