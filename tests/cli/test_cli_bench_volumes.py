"""``kubesched bench`` on scheduler_perf's volumes cases, small: each pod brings its own
pre-bound volume, and where the nodes' CSINodes report 39 EBS attachments, a node takes
39 such pods, not the 40 its cpu would allow. Figures are checked for sense, not speed."""

from __future__ import annotations

import json

import pytest

from kubesched.cli import main


@pytest.mark.parametrize(
    ("workload", "scheduled"),
    [
        pytest.param("secrets", 40, id="secrets-cpu-bound"),
        pytest.param("in-tree-pvs", 40, id="in-tree-no-csinode-no-limit"),
        pytest.param("migrated-in-tree-pvs", 39, id="migrated-ebs-limit"),
        pytest.param("csi-pvs", 39, id="csi-ebs-limit"),
    ],
)
@pytest.mark.parametrize("path", [[], ["--per-node"]], ids=["node-table", "per-node"])
def test_one_node_takes_as_many_volume_pods_as_its_attach_limit(
    capsys: pytest.CaptureFixture[str], workload: str, scheduled: int, path: list[str]
) -> None:
    # One node of 4 cpu; pods of 100m: the cpu allows 40 of them.
    argv = ["bench", "--workload", workload, "--nodes", "1", "--init-pods", "0", "--pods", "45"]
    argv += path
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["workload"], data["pods"], data["scheduled"]) == (workload, 45, scheduled)


def test_initial_volume_pods_count_against_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "--workload", "csi-pvs", "--nodes", "2", "--init-pods", "70", "--pods", "10"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # 78 volumes fit on two nodes (39 each): 8 of the 10 measured pods find room.
    assert data["scheduled"] == 8
