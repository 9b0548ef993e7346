"""Property tests of the scheduling core on random clusters and pods.

The clusters (``prop_model``) have 3–12 nodes with cpu/memory/pods, extended resources,
zone and other labels, taints of every effect and some cordoned nodes, and pods bound
where they fit; the pending pods draw requests (init containers, sidecars, overhead),
node selectors and affinity, tolerations, pod (anti-)affinity, spread constraints,
priorities and host ports. Everything is built with ``kubesched.testing``.

The filter properties are checked against an independent reference model of upstream's
semantics (``prop_reference``). Examples are derandomized and no database is kept, so a
run is the same on every machine.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prop_model import (
    CPU,
    MEMORY,
    UNSCHEDULABLE_TAINT_KEY,
    ClusterSpec,
    NodeSpec,
    PodSpec,
    build_cluster,
    build_pod,
    clusters,
    pending_lists,
    pod_specs,
)
from prop_reference import (
    filter_violations,
    pod_requests,
    required_node_affinity_matches,
    tolerates,
    untolerated_taint,
)

from kubesched.config import default_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Code
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.lab import explain, simulate, simulation_json

CONFIG = default_config()
PROFILE = CONFIG.profiles[0]
REGISTRY = in_tree_registry()

MIB = 1024 * 1024

#: The default profile's score weights (upstream's getDefaultPlugins).
DEFAULT_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def props(max_examples: int) -> settings:
    """Reproducible settings: derandomized, no example database, no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def framework_for(cluster: ClusterSpec) -> tuple[Framework, Snapshot]:
    objects = build_cluster(cluster)
    snapshot = Snapshot.from_objects(objects.nodes, objects.pods)
    return Framework(PROFILE, REGISTRY, snapshot=snapshot), snapshot


def feasible_nodes(cluster: ClusterSpec, pod: PodSpec) -> dict[str, Any]:
    """Per node: None when PreFilter or Filter rejected it, else the passing status."""
    fwk, snapshot = framework_for(cluster)
    state = CycleState()
    obj = build_pod(pod)
    result, status, _ = fwk.run_pre_filter_plugins(state, obj)
    verdicts: dict[str, Any] = {}
    if status is not None and status.code is not Code.SUCCESS:
        assert status.is_rejected(), f"PreFilter failed: {status}"
        return {info.name: status for info in snapshot.list()}
    for info in snapshot.list():
        names = result.node_names if result is not None else None
        if names is not None and info.name not in names:
            verdicts[info.name] = "excluded by PreFilterResult"
            continue
        verdict = fwk.run_filter_plugins(state, obj, info)
        assert verdict is None or verdict.code is not Code.ERROR, f"Filter failed: {verdict}"
        verdicts[info.name] = verdict if verdict is not None and not verdict.is_success() else None
    return verdicts


# --- 1. Filter soundness (and completeness) against the reference model ---------------


@props(150)
@given(cluster=clusters(), pod=pod_specs("incoming"))
def test_nodes_passing_filter_satisfy_every_constraint(cluster: ClusterSpec, pod: PodSpec) -> None:
    """A node that passes PreFilter+Filter of the default profile really fits the pod:
    resources, pod count, taints, unschedulable, node selector and affinity, pod
    (anti-)affinity both ways, DoNotSchedule spread constraints, host ports."""
    for name, verdict in feasible_nodes(cluster, pod).items():
        if verdict is None:
            problems = filter_violations(cluster, pod, cluster.node(name))
            assert not problems, f"{name} passed Filter but: {problems}"


@props(150)
@given(cluster=clusters(), pod=pod_specs("incoming"))
def test_nodes_satisfying_every_constraint_pass_filter(cluster: ClusterSpec, pod: PodSpec) -> None:
    """The converse: Filter rejects no node that the reference model accepts."""
    for name, verdict in feasible_nodes(cluster, pod).items():
        if verdict is not None:
            problems = filter_violations(cluster, pod, cluster.node(name))
            assert problems, f"{name} fits by the reference model but was rejected: {verdict}"


# --- 2. Normalized scores in range -------------------------------------------------------


@props(80)
@given(cluster=clusters(), pod=pod_specs("incoming"))
def test_normalized_scores_stay_within_range(cluster: ClusterSpec, pod: PodSpec) -> None:
    fwk, _ = framework_for(cluster)
    try:
        result = SchedulingAlgorithm(fwk).schedule_pod(CycleState(), build_pod(pod), explain=True)
    except FitError:
        return
    assert result.plugin_scores, "a feasible node was found but nothing was scored"
    for plugin, per_node in result.plugin_scores.items():
        for node, score in per_node.items():
            assert MIN_NODE_SCORE <= score <= MAX_NODE_SCORE, (plugin, node, score)


# --- 3. Simulation never overcommits -----------------------------------------------------


def _fits_statically(node: NodeSpec, pod: PodSpec) -> bool:
    """What does not depend on the other pods: taints, cordon, node selector/affinity."""
    cordoned = node.unschedulable and not any(
        tolerates(t, (UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")) for t in pod.tolerations
    )
    return (
        not cordoned
        and untolerated_taint(node, pod) is None
        and required_node_affinity_matches(pod, node)
    )


@props(100)
@given(
    cluster=st.one_of(clusters(), clusters(crowded=True)),
    pending=pending_lists(),
    seed=st.integers(0, 3),
)
def test_simulation_never_overcommits_a_node(
    cluster: ClusterSpec, pending: list[PodSpec], seed: int
) -> None:
    objects = build_cluster(cluster)
    result = simulate(objects, [build_pod(p) for p in pending], CONFIG, REGISTRY, seed=seed)
    assert len(result.placements) == len(pending)
    assert sorted(p.pod.key for p in result.placements) == sorted(p.key for p in pending)

    specs = {p.key: p for p in (*cluster.bound, *pending)}
    where: dict[str, str] = {p.key: p.node_name for p in cluster.bound}
    n_nodes = len(cluster.nodes)
    for step, placement in enumerate(result.placements):
        for victim in placement.preempted:
            assert victim in where, f"step {step}: preempted {victim}, which is not running"
            del where[victim]
        if placement.node is None:
            message = placement.message or ""
            assert message.startswith(f"0/{n_nodes} nodes are available") or (
                "no profile" in message
            ), message
            continue
        spec = specs[placement.pod.key]
        node = cluster.node(placement.node)
        assert _fits_statically(node, spec), f"{spec.key} placed on {node.name}"
        where[spec.key] = node.name
        on_node = [specs[k] for k, n in where.items() if n == node.name]
        assert len(on_node) <= node.pods, f"step {step}: {node.name} holds {len(on_node)} pods"
        for res in (CPU, MEMORY):
            used = sum(pod_requests(p).get(res, 0) for p in on_node)
            assert used <= node.allocatable[res], f"step {step}: {node.name} {res} {used}"

    # The replay ends where the simulation did: the same pods and requests on each node.
    final = {n["name"]: n for n in simulation_json(result)["summary"]["nodes"]}
    for node in cluster.nodes:
        on_node = [specs[k] for k, n in where.items() if n == node.name]
        summary = final[node.name]
        assert summary["pods"] == len(on_node), node.name
        assert summary["cpu"]["requested"] == sum(pod_requests(p).get(CPU, 0) for p in on_node)
        assert summary["memory"]["requested"] == MIB * sum(
            pod_requests(p).get(MEMORY, 0) for p in on_node
        )


# --- 4. explain picks the best feasible node ------------------------------------------


@props(80)
@given(cluster=clusters(), pod=pod_specs("incoming"), seed=st.integers(0, 3))
def test_explain_chooses_the_best_weighted_total(
    cluster: ClusterSpec, pod: PodSpec, seed: int
) -> None:
    objects = build_cluster(cluster)
    obj = build_pod(pod)
    out = explain(objects, obj, CONFIG, REGISTRY, seed=seed)
    assert out == explain(objects, obj, CONFIG, REGISTRY, seed=seed), "not deterministic"
    feasible = [n for n in out["nodes"] if n["feasible"]]
    for n in out["nodes"]:
        if n["feasible"]:
            assert set(n["scores"]) <= set(DEFAULT_WEIGHTS), n
            weighted = sum(DEFAULT_WEIGHTS[p] * s for p, s in n["scores"].items())
            assert n["score"] == weighted, n
        else:
            assert n["scores"] == {} and n["score"] is None, n
            assert n["rejectedBy"], n
    if out["node"] is None:
        assert not feasible
        assert out["message"].startswith(f"0/{len(cluster.nodes)} nodes are available")
        return
    chosen = next(n for n in out["nodes"] if n["name"] == out["node"])
    assert chosen["feasible"]
    assert chosen["score"] == max(n["score"] for n in feasible)


# --- 5. Determinism ----------------------------------------------------------------------


@props(30)
@given(
    cluster=st.one_of(clusters(), clusters(crowded=True)),
    pending=pending_lists(),
    seed=st.integers(0, 1000),
)
def test_simulation_is_deterministic_for_a_seed(
    cluster: ClusterSpec, pending: list[PodSpec], seed: int
) -> None:
    def run() -> str:
        objects = build_cluster(cluster)
        result = simulate(objects, [build_pod(p) for p in pending], CONFIG, REGISTRY, seed=seed)
        return json.dumps(simulation_json(result), sort_keys=True)

    assert run() == run()
