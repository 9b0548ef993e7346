"""``simulate`` reports gangs and quotas: per PodGroup the members placed of how many,
against minMember, with the phase its controller would reach; per ElasticQuota the
namespace's use at the end against min and max — in the JSON document (valid against the
published schema) and in the terminal tables."""

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
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    nodes = [make_node(f"n{i}").capacity(cpu="2", memory="4Gi", pods="10").dict() for i in (1, 2)]
    team = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    cluster = write(
        tmp_path / "cluster.yaml",
        *nodes,
        team,
        make_pod_group("train").min_member(3).dict(),
        make_pod_group("huge").min_member(5).dict(),
        make_elastic_quota("team-a").min(cpu="1").max(cpu="2", memory="1Gi").dict(),
        make_elastic_quota("default", "open").dict(),
    )
    pods = write(
        tmp_path / "pods.yaml",
        *(make_pod(f"train-{i}").pod_group("train").req(cpu="1").dict() for i in range(3)),
        *(make_pod(f"huge-{i}").pod_group("huge").req(cpu="100m").dict() for i in range(2)),
        make_pod("ghost").pod_group("nowhere").req(cpu="100m").dict(),
        make_pod("web").namespace("team-a").req(cpu="250m", memory="256Mi").dict(),
        make_pod("too-big").namespace("team-a").req(cpu="8").dict(),
    )
    return cluster, pods


def test_the_document_has_gangs_and_quotas(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    argv = ["simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, document.schema())
    assert data["gangs"] == [
        {
            "podGroup": "default/huge",
            "minMember": 5,
            "members": 2,
            "placed": 2,
            "pending": 0,
            "phase": "Pending",
        },
        {
            "podGroup": "default/nowhere",
            "minMember": None,
            "members": 1,
            "placed": 1,
            "pending": 0,
            "phase": None,
        },
        {
            "podGroup": "default/train",
            "minMember": 3,
            "members": 3,
            "placed": 3,
            "pending": 0,
            "phase": "Running",
        },
    ]
    assert data["quotas"] == [
        {
            "elasticQuota": "default/open",
            "namespace": "default",
            "used": {"cpu": 3300},
            "min": None,
            "max": None,
        },
        {
            "elasticQuota": "team-a/quota",
            "namespace": "team-a",
            "used": {"cpu": 250, "memory": 256 * 2**20},
            "min": {"cpu": 1000},
            "max": {"cpu": 2000, "memory": 2**30},
        },
    ]


def test_a_gang_short_of_its_quorum_is_scheduling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "cluster.yaml",
        make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").dict(),
        make_pod_group("g").min_member(3).dict(),
    )
    pods = write(
        tmp_path / "pods.yaml",
        *(make_pod(f"g-{i}").pod_group("g").req(cpu="1").dict() for i in range(3)),
    )
    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"]) == 0
    (gang,) = json.loads(capsys.readouterr().out)["gangs"]
    assert (gang["placed"], gang["pending"], gang["phase"]) == (2, 1, "Scheduling")


def test_the_terminal_tables(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    cluster, pods = files
    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pods)]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["POD", "GROUP", "PLACED", "MIN", "MEMBERS", "PHASE"] in lines
    assert ["default/train", "3", "3", "3", "Running"] in lines
    assert ["default/huge", "2", "5", "2", "Pending"] in lines
    assert ["default/nowhere", "1", "-", "1", "no", "PodGroup"] in lines
    assert ["ELASTIC", "QUOTA", "RESOURCE", "USED", "MIN", "MAX"] in lines
    assert ["team-a/quota", "cpu", "250m", "1000m", "2000m"] in lines
    assert ["team-a/quota", "memory", "256.0Mi", "0", "1.0Gi"] in lines
    assert ["default/open", "cpu", "3300m", "0m", "-"] in lines


def test_no_gangs_no_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = write(
        tmp_path / "cluster.yaml", make_node("n1").capacity(cpu="2", memory="4Gi", pods="10").dict()
    )
    pods = write(tmp_path / "pods.yaml", make_pod("p").req(cpu="1").dict())
    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pods)]) == 0
    out = capsys.readouterr().out
    assert "POD GROUP" not in out and "ELASTIC QUOTA" not in out


def test_the_html_report_shows_them(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, pods = files
    html = tmp_path / "report.html"
    argv = ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--report", str(html)]
    assert main(argv) == 0
    capsys.readouterr()
    page = html.read_text()
    assert (
        'data-testid="gang" data-pod-group="default/train" data-placed="3" data-phase="Running"'
        in page
    )
    assert (
        'data-testid="quota" data-quota="team-a/quota" data-resource="cpu" data-used="250"' in page
    )
