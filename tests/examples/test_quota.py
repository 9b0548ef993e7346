"""examples/config-quota.yaml and pods-quota.yaml: two teams share the GPUs through
ElasticQuotas; team-a borrows, team-b takes its guaranteed share back by preemption."""

from __future__ import annotations

from typing import Any

GPU_NODES = {"gpu-a1", "gpu-b1"}


def test_team_b_gets_its_min_back_from_the_borrowing_team(simulate: Any) -> None:
    result = simulate("pods-quota.yaml", "config-quota.yaml")
    by_pod = {p["pod"]: p for p in result["placements"]}

    # Everyone is placed, on the GPU nodes: team-a first (borrowing), then team-b.
    assert all(p["node"] in GPU_NODES for p in result["placements"])
    assert [p["pod"] for p in result["placements"][:5]] == [f"team-a/train-a{i}" for i in range(5)]
    # team-b's first pod takes the last GPU the sum of min allows; the next two each
    # take one of team-a's borrowed GPUs back.
    assert by_pod["team-b/train-b0"].get("preempted", []) == []
    taken = by_pod["team-b/train-b1"]["preempted"] + by_pod["team-b/train-b2"]["preempted"]
    assert len(taken) == 2 and all(key.startswith("team-a/") for key in taken)
    assert result["summary"]["preempted"] == 2
    # In the end each team holds its guaranteed 3 GPUs.
    remaining = [k for k in by_pod if k.startswith("team-a/") and k not in taken]
    assert len(remaining) == 3


def test_without_capacity_scheduling_nobody_is_limited(simulate: Any) -> None:
    """The default profile ignores ElasticQuotas: team-a takes 5 GPUs and team-b's
    third pod finds no GPU and cannot preempt (same priority)."""
    result = simulate("pods-quota.yaml", None)
    by_pod = {p["pod"]: p for p in result["placements"]}
    assert by_pod["team-b/train-b2"]["node"] is None
    assert result["summary"]["preempted"] == 0
