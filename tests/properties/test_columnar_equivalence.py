"""One answer, two paths: the columnar fast path against the per-node reference.

For random clusters and pods, a scheduling attempt through the node table must give the
same feasible set, the same status for every rejected node, the same normalized score of
every plugin on every node and the same chosen node (same seed) as the reference path;
and whole simulations (with preemption and retries) must produce identical results.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prop_model import build_cluster, build_pod, clusters, pending_lists, pod_specs

from kubesched.config import default_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm, SchedulingError
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.lab import simulate, simulation_json

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def attempt(cluster: Any, pod: Any, *, columnar: bool, seed: int) -> dict[str, Any]:
    """One explain-mode attempt; everything an observer could compare."""
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods, columnar=columnar)
    profile = default_config().profiles[0]
    fwk = Framework(
        profile,
        in_tree_registry(),
        cluster=StaticClusterLister(),
        snapshot=snapshot,
        rng=random.Random(seed),
    )
    algo = SchedulingAlgorithm(fwk, columnar=columnar)
    try:
        result = algo.schedule_pod(CycleState(), pod, explain=True)
    except FitError as fit:
        return {
            "message": str(fit),
            "statuses": {
                name: (s.code, s.reasons, s.plugin)
                for name, s in fit.diagnosis.node_to_status.items()
            },
            "unschedulable": sorted(fit.diagnosis.unschedulable_plugins),
        }
    except SchedulingError as err:
        return {"error": err.status.message}
    return {
        "host": result.suggested_host,
        "feasible": result.feasible_nodes,
        "statuses": {
            name: (s.code, s.reasons, s.plugin)
            for name, s in result.diagnosis.node_to_status.items()
        },
        "scores": result.plugin_scores,
        "totals": result.totals,
    }


@SETTINGS
@given(cluster=clusters(), pod=pod_specs("q"), seed=st.integers(0, 2**16))
def test_an_attempt_gives_the_same_answer_on_both_paths(cluster: Any, pod: Any, seed: int) -> None:
    objs = build_cluster(cluster)
    built = build_pod(pod)
    assert attempt(objs, built, columnar=True, seed=seed) == attempt(
        objs, built, columnar=False, seed=seed
    )


@SETTINGS
@given(cluster=clusters(), pending=pending_lists(max_size=8), seed=st.integers(0, 2**16))
def test_a_simulation_gives_the_same_placements_on_both_paths(
    cluster: Any, pending: Any, seed: int
) -> None:
    objs = build_cluster(cluster)
    pods = [build_pod(p) for p in pending]
    config = default_config()
    registry = in_tree_registry()
    fast = simulation_json(simulate(objs, pods, config, registry, seed=seed, columnar=True))
    slow = simulation_json(simulate(objs, pods, config, registry, seed=seed, columnar=False))
    assert fast == slow
