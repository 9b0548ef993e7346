"""Daemon pods (pinned to a node by ``metadata.name`` node affinity) in the policy lab:
the ``daemonset`` bench workload in scheduler_perf's shape, and what ``simulate`` and
``explain`` report for the nodes NodeAffinity's PreFilterResult leaves out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.config import default_config
from kubesched.objects.selectors import NODE_NAME_FIELD
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.simulator import Simulator
from kubesched.sim.workloads import DAEMONSET_NODE, make_cluster, make_pods
from kubesched.testing import make_node, make_pod

NOT_NAMED = "node(s) didn't satisfy plugin(s) [NodeAffinity]"


def pinned(name: str, node: str) -> Any:
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    return make_pod(name).container().node_affinity_term([], [field])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_daemonset_places_every_pod(capsys: pytest.CaptureFixture[str]) -> None:
    # scheduler_perf's integration-size case (5Nodes): 5 nodes besides the named one.
    code, out, _ = run(
        capsys, "bench", "--workload", "daemonset", "--nodes", "5", "--init-pods", "0",
        "--pods", "10", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert (data["nodes"], data["pods"], data["scheduled"]) == (6, 10, 10)


def test_daemonset_workload_pins_every_pod_to_the_named_node() -> None:
    nodes = make_cluster("daemonset", 20)
    assert len(nodes) == 21 and nodes[0].name == DAEMONSET_NODE
    assert nodes[0].allocatable.allowed_pod_number == 90000
    pods = list(make_pods("daemonset", 30, "pod"))
    (term,) = pods[0].required_node_affinity.terms  # type: ignore[union-attr]
    (field,) = term.match_fields
    assert (field.key, field.operator, field.values) == (NODE_NAME_FIELD, "In", (DAEMONSET_NODE,))
    assert pods[0].requests.milli_cpu == 0 and pods[0].requests.memory == 0
    sim = Simulator(nodes, (), default_config(), in_tree_registry(), seed=0)
    placements = sim.run(pods)
    assert {p.node for p in placements} == {DAEMONSET_NODE}
    assert len(placements) == 30


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Four nodes with room for two pods each; n1 is full of higher-priority pods."""
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="2").dict() for i in range(4)]
    occupants = [make_pod(f"occ{i}").container().node("n1").priority(100).dict() for i in range(2)]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, *occupants]})
    )
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        yaml.safe_dump_all(
            [pinned("d1", "n1").dict(), pinned("d2", "ghost").dict(), pinned("d3", "n2").dict()]
        )
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(pinned("d1", "n1").dict()))
    return cluster, pods, pod


def test_simulate_reports_the_other_nodes_as_upstream(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods, _ = files
    code, out, _ = run(
        capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"
    )
    assert code == 0
    placements = {p["pod"]: p for p in json.loads(out)["placements"]}
    assert placements["default/d3"]["node"] == "n2"
    assert placements["default/d1"]["message"] == (
        f"0/4 nodes are available: 1 Too many pods, 3 {NOT_NAMED}. "
        "preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, "
        "3 Preemption is not helpful for scheduling."
    )
    assert placements["default/d2"]["message"] == (
        f"0/4 nodes are available: 4 {NOT_NAMED}. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )


def test_explain_names_nodeaffinity_for_the_nodes_not_named(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _, pod = files
    code, out, _ = run(
        capsys, "explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json"
    )
    assert code == 0
    verdicts = {n["name"]: (n["rejectedBy"], n["reason"]) for n in json.loads(out)["nodes"]}
    assert verdicts == {
        "n0": ("NodeAffinity", NOT_NAMED),
        "n1": ("NodeResourcesFit", "Too many pods"),
        "n2": ("NodeAffinity", NOT_NAMED),
        "n3": ("NodeAffinity", NOT_NAMED),
    }


def test_a_pod_pinned_to_a_missing_node_waits_for_a_node_event() -> None:
    # NodeAffinity narrowed the nodes, so it is among the rejectors, as upstream: pods
    # bound meanwhile cannot help, and the pod is not retried after each of them.
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").obj() for i in range(3)]
    pods = [pinned("ghost", "gone").obj(), *(make_pod(f"p{i}").obj() for i in range(5))]
    placements = Simulator(nodes, (), default_config(), in_tree_registry(), seed=0).run(pods)
    ghost = next(p for p in placements if p.pod.name == "ghost")
    assert ghost.node is None
    assert ghost.attempts == 1
    assert ghost.message == (
        f"0/3 nodes are available: 3 {NOT_NAMED}. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
