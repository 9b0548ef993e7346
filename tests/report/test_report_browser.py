"""The HTML report in headless Chromium, network blocked: what the page shows is what the
document says (the data-testid hooks of issue 18), with no console error and no request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli import main
from kubesched.testing import make_node, make_pod

from .conftest import OpenedReport, write
from .test_html_report import big_report

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    return write(
        tmp_path / "cluster.yaml",
        make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").label(ZONE, "a").dict(),
        make_node("n2").capacity(cpu="4", memory="8Gi", pods="10").label(ZONE, "b").dict(),
        make_node("n3")
        .capacity(cpu="2", memory="4Gi", pods="10")
        .label(ZONE, "b")
        .taint("dedicated", "infra")
        .dict(),
        make_pod("db").node("n1").req(cpu="500m", memory="1Gi").label("app", "db").dict(),
    )


def assert_clean(report: OpenedReport) -> None:
    assert report.console_errors == []
    assert report.requests == []
    assert report.dialogs == []


def assert_scores_match(report: OpenedReport, item: dict[str, Any], run: str = "") -> None:
    """Per node: the cells are score x weight, they add up to the total, and the chosen
    node is the one marked."""
    within = f'[data-testid=explanation][data-pod="{item["pod"]}"][data-run="{run}"]'
    nodes = {n["name"]: n for n in item["nodes"]}
    cells: dict[str, int] = {}
    for cell in report.attrs(
        "score-cell", "data-node", "data-plugin", "data-weighted", within=within
    ):
        node, plugin = cell["data-node"] or "", cell["data-plugin"] or ""
        weighted = int(cell["data-weighted"] or "")
        assert weighted == nodes[node]["scores"][plugin] * item["weights"][plugin]
        cells[node] = cells.get(node, 0) + weighted
    totals = {
        t["data-node"]: t
        for t in report.attrs(
            "node-total", "data-node", "data-total", "data-selected", within=within
        )
    }
    feasible = {name: n for name, n in nodes.items() if n["feasible"]}
    # Every feasible node, or the 100 best of them (the chosen one always among them).
    assert set(totals) <= set(feasible)
    assert len(totals) == min(len(feasible), 100)
    if item["node"] is not None:
        assert item["node"] in totals
    shown = sorted(feasible.values(), key=lambda n: -n["score"])[: len(totals)]
    assert (
        min(int(t["data-total"] or "") for t in totals.values()) == shown[-1]["score"]
        if shown
        else True
    )
    for name, total in totals.items():
        assert int(total["data-total"] or "") == feasible[name]["score"] == cells[name]
        assert total["data-selected"] == ("true" if name == item["node"] else "false")


def test_simulate_report_shows_the_document(
    tmp_path: Path, cluster: Path, open_report: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(
        tmp_path / "pods.yaml",
        *[
            make_pod(f"web-{i}").label("app", "web").req(cpu="300m", memory="256Mi").dict()
            for i in range(4)
        ],
        make_pod("huge-1").req(cpu="8").dict(),
        make_pod("huge-2").req(cpu="8").dict(),
        make_pod("picky").node_selector({"disk": "ssd"}).req(cpu="100m").dict(),
    )
    html = tmp_path / "sim.html"
    argv = ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--seed", "2"]
    assert main([*argv, "--explain", "web-3", "--report", str(html), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = open_report(html)
    assert report.data == doc
    assert_clean(report)

    rows = report.attrs(
        "node-row",
        "data-node",
        "data-cpu-req-m",
        "data-cpu-alloc-m",
        "data-mem-req",
        "data-mem-alloc",
    )
    assert rows == [
        {
            "data-node": n["name"],
            "data-cpu-req-m": str(n["resources"]["cpu"]["requested"]),
            "data-cpu-alloc-m": str(n["resources"]["cpu"]["allocatable"]),
            "data-mem-req": str(n["resources"]["memory"]["requested"]),
            "data-mem-alloc": str(n["resources"]["memory"]["allocatable"]),
        }
        for n in doc["nodeUsage"]
    ]
    # Our own expectation, not the document's: 500m of the db pod and 300m per web pod.
    placed = [p["node"] for p in doc["placements"] if p["pod"].startswith("default/web-")]
    cpu = {r["data-node"]: int(r["data-cpu-req-m"] or "") for r in rows}
    assert cpu == {n: 300 * placed.count(n) + (500 if n == "n1" else 0) for n in ("n1", "n2", "n3")}

    reasons = {
        r["data-reason"]: int(r["data-count"] or "")
        for r in report.attrs("pending-reason", "data-reason", "data-count")
    }
    assert reasons["Insufficient cpu"] == 2
    assert reasons["node(s) didn't match Pod's node affinity/selector"] == 1
    assert reasons["node(s) had untolerated taint {dedicated: infra}"] == 3

    # Opening a pending pod shows every node's verdict.
    reason = report.page.locator('[data-testid=pending-reason][data-reason="Insufficient cpu"]')
    reason.locator("summary").first.click()
    pod = reason.locator('[data-testid=pending-pod][data-pod="default/huge-1"]')
    pod.locator("summary").click()
    # The verdicts are drawn by the page's toggle handler, which runs after the click.
    pod.locator("[data-testid=node-verdict]").first.wait_for(state="visible")
    verdicts = {
        el.get_attribute("data-node"): el.get_attribute("data-verdict")
        for el in pod.locator("[data-testid=node-verdict]").all()
    }
    assert verdicts == {
        "n1": "Insufficient cpu",
        "n2": "Insufficient cpu",
        "n3": "node(s) had untolerated taint {dedicated: infra}",
    }
    assert pod.locator("[data-testid=node-verdict]").first.is_visible()

    (item,) = doc["explained"]
    assert_scores_match(report, item)
    assert_clean(report)


def test_explain_report_scores_add_up(
    tmp_path: Path, cluster: Path, open_report: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("one").req(cpu="1", memory="1Gi").dict())
    html = tmp_path / "explain.html"
    argv = [
        "explain",
        "--cluster",
        str(cluster),
        "--pod",
        str(pod),
        "--report",
        str(html),
        "-o",
        "json",
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    report = open_report(html)
    assert_clean(report)
    assert report.data == doc
    assert doc["node"] == "n2"  # the emptiest node by LeastAllocated and balance
    assert_scores_match(report, doc)


def swap(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string (and key) in ``names`` replaced, at any depth."""
    if isinstance(value, dict):
        return {names.get(k, k): swap(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [swap(v, names) for v in value]
    if isinstance(value, str):
        for old, new in names.items():
            value = (
                value.replace(old, new) if value == old or old.startswith("Insufficient") else value
            )
        return value
    return value


def test_hostile_names_are_text(
    tmp_path: Path, cluster: Path, open_report: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names cannot hold markup in files the loader accepts, but a document can be edited:
    whatever it holds is shown as text and cannot end the embedded script."""
    pods = write(tmp_path / "pods.yaml", make_pod("web").req(cpu="8").dict())
    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"]) == 0
    hostile = '</script><script>alert("x")</script><img src=x onerror=alert(1)>'
    doc = json.loads(capsys.readouterr().out)
    doc = swap(doc, {"n1": hostile, "Insufficient cpu": f"Insufficient {hostile}"})
    text = json.dumps(doc)
    doc_path = tmp_path / "hostile.json"
    doc_path.write_text(text)
    html = tmp_path / "hostile.html"
    assert main(["report", str(doc_path), "-o", str(html)]) == 0
    report = open_report(html)
    assert_clean(report)
    assert report.data == json.loads(text)
    names = [r["data-node"] for r in report.attrs("node-row", "data-node")]
    assert names == [hostile, "n2", "n3"]
    row = report.page.locator("[data-testid=node-row]").first
    assert row.locator("td").first.text_content() == hostile
    assert report.page.locator("img").count() == 0
    assert report.page.locator("script").count() == 2  # the document and the page's own
    reasons = [r["data-reason"] for r in report.attrs("pending-reason", "data-reason")]
    assert f"Insufficient {hostile}" in reasons


def test_compare_report_shows_deltas(
    tmp_path: Path, open_report: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "cluster.yaml",
        *[
            make_node(f"n{i}")
            .capacity(cpu="2", memory="4Gi", pods="20")
            .label(ZONE, "ab"[i // 2])
            .dict()
            for i in range(4)
        ],
    )
    pods = write(
        tmp_path / "pods.yaml", *[make_pod(f"p{i}").req(cpu="200m").dict() for i in range(4)]
    )
    pack = write(
        tmp_path / "pack.yaml",
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ]
                }
            ],
        },
    )
    spread = write(
        tmp_path / "spread.yaml",
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
    )
    html = tmp_path / "compare.html"
    argv = [
        "compare",
        "--cluster",
        str(cluster),
        "--pods",
        str(pods),
        "--config",
        str(pack),
        "--config",
        str(spread),
    ]
    assert main([*argv, "--seed", "1", "--explain", "p2", "--report", str(html), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = open_report(html)
    assert_clean(report)
    assert report.data == doc
    (used,) = report.attrs("kpi-nodes-used", "data-a", "data-b")
    assert used == {"data-a": "1", "data-b": "4"}
    rows = report.attrs("placement-delta-row", "data-pod", "data-node-a", "data-node-b")
    a, b = ({p["pod"]: p["node"] for p in run["placements"]} for run in doc["runs"])
    assert len(rows) == 3
    assert rows == [
        {"data-pod": pod, "data-node-a": a[pod], "data-node-b": b[pod]}
        for pod in a
        if a[pod] != b[pod]
    ]
    for run in ("A", "B"):
        node_rows = report.page.locator(
            f'section.utilisation[data-run="{run}"] [data-testid=node-row]'
        )
        assert node_rows.count() == 4
    for run in doc["runs"]:
        (item,) = run["explained"]
        assert item["pod"] == "default/p2"
        assert_scores_match(report, item, run["label"])
    assert report.page.locator("[data-testid=explanation]").count() == 2


def test_capacity_report_shows_each_total(
    tmp_path: Path, open_report: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "cluster.yaml",
        *[make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="110").dict() for i in range(4)],
    )
    small = write(tmp_path / "small.yaml", make_pod("small").req(cpu="150m").dict())
    big = write(tmp_path / "big.yaml", make_pod("big").req(cpu="100m", memory="1Gi").dict())
    html = tmp_path / "capacity.html"
    argv = ["capacity", "--cluster", str(cluster), "--pod", str(small), "--pod", str(big)]
    assert main([*argv, "--report", str(html), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    report = open_report(html)
    assert_clean(report)
    assert report.data == doc
    totals = report.attrs("capacity-total", "data-shape", "data-count")
    assert totals == [
        {"data-shape": "small", "data-count": "52"},
        {"data-shape": "big", "data-count": "16"},
    ]
    assert report.page.get_by_text(
        "The cluster can schedule 52 instance(s) of the pod small."
    ).is_visible()
    (mix,) = report.attrs("capacity-mix", "data-count")
    assert mix == {"data-count": str(doc["mix"]["count"])}


def test_a_500_node_report_opens_cleanly(tmp_path: Path, open_report: Any) -> None:
    html, doc = big_report(tmp_path)
    report = open_report(html)
    assert_clean(report)
    assert report.page.locator("[data-testid=node-row]").count() == 500
    assert report.page.locator("[data-testid=heatmap-zone]").count() == 3
    for item in doc["explained"]:
        if item["node"] is not None:
            assert_scores_match(report, item)
    reason = report.page.locator('[data-testid=pending-reason][data-reason="Insufficient cpu"]')
    assert reason.get_attribute("data-count") == "50"
    reason.locator("summary").first.click()
    pod = reason.locator('[data-testid=pending-pod][data-pod="default/huge-49"]')
    pod.locator("summary").click()
    # The verdicts are drawn by the page's toggle handler, which runs after the click.
    pod.locator("[data-testid=node-verdict]").first.wait_for(state="visible")
    verdicts = report.attrs(
        "node-verdict", "data-node", "data-verdict", within='[data-pod="default/huge-49"]'
    )
    assert len(verdicts) == 500
    assert {v["data-verdict"] for v in verdicts} == {"Insufficient cpu"}
    assert_clean(report)
