"""The lab's report document: every command's ``--output json`` is one versioned shape,
valid against the published JSON Schema, carrying the figures the report shows."""

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
ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(list(argv)) == 0
    out, _ = capsys.readouterr()
    data: dict[str, Any] = json.loads(out)
    jsonschema.validate(data, document.schema())
    return data


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cluster = write(
        tmp_path / "cluster.yaml",
        make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").label(ZONE, "a").dict(),
        make_node("n2")
        .capacity(cpu="2", memory="4Gi", pods="10", **{"example.com/gpu": "2"})
        .label(ZONE, "b")
        .dict(),
        make_node("n3")
        .capacity(cpu="2", memory="4Gi", pods="10")
        .label(ZONE, "b")
        .taint("dedicated", "infra")
        .dict(),
        make_pod("old").node("n1").req(cpu="500m", memory="1Gi").label("app", "db").dict(),
    )
    pods = write(
        tmp_path / "pods.yaml",
        *[make_pod(f"web-{i}").label("app", "web").req(cpu="300m").dict() for i in range(3)],
        make_pod("gpu")
        .container(
            requests={"cpu": "100m", "example.com/gpu": "1"}, limits={"example.com/gpu": "1"}
        )
        .dict(),
        make_pod("huge-1").req(cpu="3").dict(),
        make_pod("huge-2").req(cpu="3").dict(),
    )
    return cluster, pods


def test_simulate_document_is_versioned_valid_and_keeps_the_old_fields(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    data = run_json(
        capsys,
        "simulate",
        "--cluster",
        str(cluster),
        "--pods",
        str(pods),
        "--seed",
        "3",
        "-o",
        "json",
    )
    assert (data["apiVersion"], data["kind"]) == ("lab.kubesched.io/v1alpha1", "SimulationReport")
    assert data["metadata"]["command"] == "simulate"
    assert data["metadata"]["seed"] == 3
    # The fields scripts read before the document existed are still there, unchanged.
    assert {p["pod"] for p in data["placements"]} == {
        "default/web-0",
        "default/web-1",
        "default/web-2",
        "default/gpu",
        "default/huge-1",
        "default/huge-2",
    }
    assert data["summary"]["unschedulable"] == 2
    usage = {n["name"]: n for n in data["nodeUsage"]}
    assert usage["n2"]["zone"] == "b"
    assert usage["n2"]["resources"]["example.com/gpu"] == {"requested": 1, "allocatable": 2}
    assert usage["n1"]["resources"]["cpu"]["allocatable"] == 2000
    assert usage["n1"]["resources"]["memory"]["allocatable"] == 4 * 1024**3
    placed_cpu = {name: 0 for name in usage}
    placed_cpu["n1"] = 500
    for p in data["placements"]:
        if p["node"]:
            placed_cpu[p["node"]] += 100 if p["pod"] == "default/gpu" else 300
    assert {n: u["resources"]["cpu"]["requested"] for n, u in usage.items()} == placed_cpu
    # The two huge pods are pending for the same reasons, in the scheduler's words.
    reasons = {r["reason"]: r for r in data["pending"]["reasons"]}
    assert reasons["Insufficient cpu"]["count"] == 2
    assert reasons["node(s) had untolerated taint {dedicated: infra}"]["count"] == 2
    pending = data["pending"]["pods"]
    assert [p["pod"] for p in pending] == ["default/huge-1", "default/huge-2"]
    assert pending[0]["verdicts"] == pending[1]["verdicts"] == 0
    assert data["pending"]["verdictSets"][0] == {
        "Insufficient cpu": ["n1", "n2"],
        "node(s) had untolerated taint {dedicated: infra}": ["n3"],
    }
    web = next(s for s in data["spread"] if s["workload"] == "app=web")
    assert sum(web["perZone"].values()) == 3
    assert web["perZone"].keys() == {"a", "b"}
    assert data["kpis"]["placed"] == 4
    assert data["kpis"]["pending"] == 2


def test_explain_document_scores_add_up_with_the_weights(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = files
    pod = write(tmp_path / "pod.yaml", make_pod("one").req(cpu="200m").dict())
    data = run_json(capsys, "explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json")
    assert data["kind"] == "ExplainReport"
    assert data["profile"] == "default-scheduler"
    assert data["weights"]["NodeResourcesFit"] == 1
    assert data["weights"]["TaintToleration"] == 3
    for node in data["nodes"]:
        if node["feasible"]:
            weighted = sum(s * data["weights"][p] for p, s in node["scores"].items())
            assert weighted == node["score"]
    assert {n["name"]: n["feasible"] for n in data["nodes"]} == {
        "n1": True,
        "n2": True,
        "n3": False,
    }


def test_simulate_explains_named_pods_as_their_attempt_saw_the_cluster(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    data = run_json(
        capsys,
        "simulate",
        "--cluster",
        str(cluster),
        "--pods",
        str(pods),
        "--seed",
        "1",
        "--explain",
        "web-2",
        "--explain",
        "default/huge-1",
        "-o",
        "json",
    )
    explained = {e["pod"]: e for e in data["explained"]}
    assert list(explained) == ["default/web-2", "default/huge-1"]
    placed = {p["pod"]: p["node"] for p in data["placements"]}
    web = explained["default/web-2"]
    assert web["node"] == placed["default/web-2"]
    best = max(n["score"] for n in web["nodes"] if n["feasible"])
    assert next(n for n in web["nodes"] if n["name"] == web["node"])["score"] == best
    assert explained["default/huge-1"]["node"] is None
    assert "Insufficient cpu" in explained["default/huge-1"]["message"]


def test_simulate_refuses_to_explain_a_pod_it_does_not_schedule(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    code = main(["simulate", "--cluster", str(cluster), "--pods", str(pods), "--explain", "nope"])
    assert code == 2
    assert (
        "--explain nope: no pod default/nope among the pods to schedule" in capsys.readouterr().err
    )


def test_same_inputs_give_identical_bytes_and_the_time_comes_from_source_date_epoch(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster, pods = files
    argv = ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--seed", "9", "-o", "json"]
    outs = []
    for _ in range(2):
        assert main(argv) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert json.loads(outs[0])["metadata"]["generatedAt"] is None
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["metadata"]["generatedAt"] == "2023-11-14T22:13:20Z"


def test_the_published_schema_is_the_shipped_one() -> None:
    shipped = (ROOT / "src/kubesched/sim/report.schema.json").read_text()
    assert (ROOT / "docs/report.schema.json").read_text() == shipped
    jsonschema.Draft202012Validator.check_schema(document.schema())


def test_the_schema_rejects_a_document_of_another_version(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    data = run_json(
        capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"
    )
    data["apiVersion"] = "lab.kubesched.io/v2"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, document.schema())


def test_simulate_explains_at_most_ten_pods(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    many = [arg for i in range(11) for arg in ("--explain", f"web-{i}")]
    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pods), *many]) == 2
    err = capsys.readouterr().err
    assert "--explain: at most 10 pods (each adds every node's scores to the report), got 11" in err
