"""``kubesched bench --e2e --workload deployment``: one Deployment through the API server,
the workload controllers, the simulated kubelet and the scheduler, each in its own
process. Sizes are small; figures are checked for sense, never for speed."""

from __future__ import annotations

import json

import pytest

from kubesched.cli import main


def test_a_small_deployment_runs_every_pod_once(capsys):
    code = main(
        ["bench", "--e2e", "--workload", "deployment", "--nodes", "3", "--pods", "6", "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert (data["nodes"], data["pods"], data["running"]) == (3, 6, 6)
    assert data["pods_bound_twice"] == 0
    assert 0 < data["last_created_seconds"] <= data["last_bound_seconds"]
    assert data["last_bound_seconds"] <= data["last_running_seconds"] <= data["seconds"]
    assert data["pods_per_second"] > 0
    # Each process was measured (/proc); six pods may cost one of them less than a tick.
    cpu = data["cpu_seconds"]
    for process in ("apiserver", "controllers", "scheduler", "kubelet", "driver"):
        assert isinstance(cpu[process], float) and cpu[process] >= 0, process
    assert sum(cpu.values()) > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workload", "deployment"], "--workload deployment: only with --e2e"),
        (["--e2e", "--workload", "deployment", "--pods", "0"], "--pods: Invalid value: 0"),
        (["--e2e", "--workload", "deployment", "--kubeconfig", "x"], "--kubeconfig: not supported"),
    ],
    ids=["needs-e2e", "pods-must-be-positive", "no-kubeconfig-yet"],
)
def test_bad_flags_are_refused(capsys, args, message):
    code = main(["bench", *args])
    _, err = capsys.readouterr()
    assert code != 0
    assert message in err
