"""Chaos, short: the embedded API server injecting faults, two ``kubesched run`` replicas
with leader election, pods created through the official client, and the guarantees
checked from the server's records (bench/chaos.py; its ``main`` is the soak).

Within the budget of docs/faults.md the leader keeps its Lease; beyond it (every Lease
request failing for longer than renewDeadline) the leader exits 1 and another replica
takes over. Either way every pod is bound exactly once, on a node it fits, and the pods
of another scheduler are left alone. No timing is asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chaos import BUDGET_FAULTS, ChaosPlan, run_chaos


def test_within_the_budget_the_leader_keeps_its_lease_and_every_pod_is_bound_once(
    tmp_path: Path,
) -> None:
    plan = ChaosPlan(
        pods=200,
        other_pods=10,
        faults=BUDGET_FAULTS + ",seed=5",
        lease_duration=15.0,
        renew_deadline=10.0,
        retry_period=2.0,
        timeout=120.0,
        # As `kubesched apiserver --nodes N`: the controllers (the simulated kubelet
        # among them) beside the server, its clients, meeting the faults too.
        controllers=True,
    )
    result = run_chaos(plan, tmp_path)
    assert result.violations == [], result.summary()
    assert result.bound == 200
    assert result.exits == [] and result.failovers == 0, result.summary()
    # The faults were there: errors of each code, cut watches, lost answers.
    for kind in ("error 429", "error 500", "error 503", "watch drop", "reset"):
        assert result.injected.get(kind, 0) > 0, kind


def test_beyond_the_budget_the_leader_exits_1_and_another_takes_over(tmp_path: Path) -> None:
    plan = ChaosPlan(
        pods=200,
        other_pods=10,
        faults=BUDGET_FAULTS + ",seed=6",
        lease_duration=3.0,
        renew_deadline=2.0,
        retry_period=0.5,
        # Lease requests fail for three renewDeadlines, once a quarter of the pods are
        # bound; creates go on meanwhile and after.
        outage=6.0,
        pace=0.1,
        timeout=120.0,
    )
    result = run_chaos(plan, tmp_path)
    assert result.violations == [], result.summary()
    assert result.bound == 200
    assert 1 in result.exits, result.summary()
    assert result.failovers >= 1, result.summary()
