"""`kubesched explain` of a gang member: the verdicts are for the member alone, and the
output says which group it belongs to, its quorum and how many members are placed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kubesched.cli import main
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.sim import document
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_pod_group

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
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
"""


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    return path


def explain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pod: dict[str, Any], *args: str
) -> str:
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110") for i in range(2)]
    placed = make_pod("train-0").label(POD_GROUP_LABEL, "train").req(cpu="1").node("n0")
    cluster = write(
        tmp_path / "cluster.yaml",
        *(n.dict() for n in nodes),
        make_pod_group("train").min_member(3).dict(),
        placed.dict(),
    )
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    pod_file = write(tmp_path / "pod.yaml", pod)
    code = main(
        [
            "explain",
            *("--cluster", str(cluster), "--pod", str(pod_file), "--config", str(config)),
            *args,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_a_gang_members_explanation_names_its_group_and_what_is_placed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = make_pod("train-1").label(POD_GROUP_LABEL, "train").req(cpu="1").dict()
    data = json.loads(explain(tmp_path, capsys, pod, "--output", "json"))
    jsonschema.validate(data, document.schema())
    assert data["podGroup"]["key"] == "default/train"
    assert (data["podGroup"]["minMember"], data["podGroup"]["placed"]) == (3, 1)
    assert "together with 1 more member(s)" in data["podGroup"]["note"]
    table = explain(tmp_path, capsys, pod)
    assert "pod group default/train (minMember 3, 1 placed)" in table.splitlines()[1]


def test_a_pod_outside_any_group_has_no_group_in_its_explanation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(
        explain(tmp_path, capsys, make_pod("web").req(cpu="1").dict(), "--output", "json")
    )
    jsonschema.validate(data, document.schema())
    assert "podGroup" not in data
