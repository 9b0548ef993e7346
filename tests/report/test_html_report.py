"""The HTML report as bytes: reproducible, bounded in size, safe to embed, and refused
with a clear error when the document is not one this version reads."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli import main
from kubesched.cli.htmlreport import embed_json
from kubesched.testing import make_node, make_pod

from .conftest import write

ZONE = "topology.kubernetes.io/zone"


def test_same_inputs_and_seed_give_identical_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "c.yaml",
        *[
            make_node(f"n{i}")
            .capacity(cpu="4", memory="8Gi", pods="20")
            .label(ZONE, "ab"[i % 2])
            .dict()
            for i in range(6)
        ],
    )
    pods = write(
        tmp_path / "p.yaml", *[make_pod(f"p{i}").req(cpu="300m").dict() for i in range(15)]
    )
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    pages = []
    for run in range(2):
        html = tmp_path / f"r{run}.html"
        argv = ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--seed", "4"]
        assert main([*argv, "--explain", "p3", "--report", str(html)]) == 0
        pages.append(html.read_bytes())
    capsys.readouterr()
    assert pages[0] == pages[1]
    assert b"generated 2023-11-14T22:13:20Z" in pages[0]


def big_report(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """simulate --report on 500 nodes in three zones (a tenth with GPUs) and 1,000 pods,
    50 of which fit nowhere, two of them explained; the page and the document."""
    nodes = [
        make_node(f"node-{i:03d}")
        .capacity(
            cpu="8", memory="32Gi", pods="110", **({"nvidia.com/gpu": "4"} if i % 10 == 0 else {})
        )
        .label(ZONE, f"zone-{i % 3}")
        .dict()
        for i in range(500)
    ]
    cluster = write(tmp_path / "c.yaml", *nodes)
    pods = [
        make_pod(f"app-{i % 20}-{i:04d}")
        .label("app", f"app-{i % 20}")
        .req(cpu="250m", memory="512Mi")
        .dict()
        for i in range(950)
    ]
    pods += [make_pod(f"huge-{i:02d}").req(cpu=f"{16 + i}").dict() for i in range(50)]
    pod_file = write(tmp_path / "p.yaml", *pods)
    html = tmp_path / "big.html"
    argv = ["simulate", "--cluster", str(cluster), "--pods", str(pod_file), "--seed", "1"]
    argv += ["--explain", "app-0-0000", "--explain", "huge-00", "--report", str(html), "-o", "json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return html, json.loads(out.getvalue())


def test_a_500_node_1000_pod_report_stays_under_5_mb(tmp_path: Path) -> None:
    html, doc = big_report(tmp_path)
    assert doc["summary"]["pods"] == 1000
    assert doc["summary"]["unschedulable"] == 50
    size = html.stat().st_size
    assert size < 5 * 1024 * 1024, f"{size} bytes"
    text = html.read_text()
    assert text.count('data-testid="node-row"') == 500
    assert text.count('data-testid="pending-pod"') == 50


@pytest.mark.parametrize(
    "value",
    ["</script><script>alert(1)</script>", "<!--", "a & b", "\u2028line", "]]>"],
    ids=["script-close", "comment-open", "ampersand", "line-separator", "cdata-end"],
)
def test_embedded_json_cannot_end_the_script_and_reads_back(value: str) -> None:
    data: dict[str, Any] = {"name": value, "nested": [{value: value}]}
    text = str(embed_json(data))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == data


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"apiVersion": "lab.kubesched.io/v9", "kind": "SimulationReport"}',
            "apiVersion: Unsupported value: 'lab.kubesched.io/v9'",
        ),
        ("{not json", "not JSON"),
        ('{"apiVersion": "lab.kubesched.io/v1alpha1", "kind": "Nothing"}', "doc.json: "),
    ],
    ids=["another-version", "not-json", "unknown-kind"],
)
def test_report_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    doc = tmp_path / "doc.json"
    doc.write_text(content)
    assert main(["report", str(doc), "-o", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {doc}")
    assert message in err
    assert not (tmp_path / "out.html").exists()


def test_a_report_that_cannot_be_written_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "c.yaml", make_node("n1").capacity(cpu="1", memory="1Gi", pods="10").dict()
    )
    target = tmp_path / "missing" / "r.html"
    assert main(["simulate", "--cluster", str(cluster), "--report", str(target)]) == 2
    assert (
        f"kubesched: error: {target}: cannot write: No such file or directory"
        in capsys.readouterr().err
    )
