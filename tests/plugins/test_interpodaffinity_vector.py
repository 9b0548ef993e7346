"""InterPodAffinity's columnar path: PreFilter/PreScore from the node table,
``filter_nodes``, ``score_nodes`` and ``normalize_scores`` against the per-node reference.

Random small clusters (nodes with random topology labels, pods with random labels,
namespaces, terminating state and every kind of affinity term) are built twice: a
per-node snapshot for the reference and a columnar one. Every node must get the same
Filter status and the same raw and normalized score, also after AddPod/RemovePod and
after pods were added to and removed from the snapshot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle as FrameworkHandle
from kubesched.framework.handle import NoClient, Nominator, StaticClusterLister
from kubesched.framework.interface import Code, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeScore, PodInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Namespace
from kubesched.plugins.interpodaffinity import InterPodAffinity, new
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
)
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY_KEYS = (HOSTNAME, "zone", "region", "rack")
NAMESPACES = (
    Namespace("ns1", {"team": "a"}),
    Namespace("ns2", {"team": "b"}),
    Namespace("default", {"team": "a"}),
)  # "ns3" has no Namespace object
NAMESPACE_NAMES = ("default", "ns1", "ns2", "ns3")

AFFINITY = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)


@dataclass
class Handle:
    """The parts of a framework handle the plugin reads."""

    snapshot: Snapshot
    cluster: StaticClusterLister
    nominator: Nominator
    client: NoClient
    rng: random.Random


def handle_for(nodes: list[Node], pods: list[Pod], *, columnar: bool) -> Handle:
    return Handle(
        Snapshot.from_objects(nodes, pods, columnar=columnar),
        StaticClusterLister(namespaces=NAMESPACES),
        Nominator(),
        NoClient(),
        random.Random(0),
    )


# --- strategies ------------------------------------------------------------------------

label_sets = st.fixed_dictionaries(
    {},
    optional={"app": st.sampled_from(["web", "db"]), "tier": st.sampled_from(["a", "b"])},
)


@st.composite
def selectors(draw: st.DrawFn) -> dict[str, Any] | None:
    kind = draw(st.sampled_from(["none", "empty", "labels", "in", "notin", "exists", "absent"]))
    key = draw(st.sampled_from(["app", "tier"]))
    value = draw(st.sampled_from(["web", "db", "a", "b"]))
    if kind == "none":
        return None
    if kind == "empty":
        return {}
    if kind == "labels":
        return {"matchLabels": {key: value}}
    operator = {"in": "In", "notin": "NotIn", "exists": "Exists", "absent": "DoesNotExist"}[kind]
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if operator in ("In", "NotIn"):
        expression["values"] = [value]
    return {"matchExpressions": [expression]}


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "topology_key": draw(st.sampled_from(TOPOLOGY_KEYS)),
        "selector": draw(selectors()),
        "namespaces": draw(st.sampled_from([None, ["ns1"], ["default", "ns3"]])),
        "namespace_selector": draw(
            st.sampled_from([None, None, {}, {"matchLabels": {"team": "a"}}])
        ),
        "weight": draw(st.integers(1, 100)),
    }


def with_terms(w: PodWrapper, draw: st.DrawFn, scale: int) -> PodWrapper:
    for kind in ("required", "preferred"):
        for method in (w.pod_affinity, w.pod_anti_affinity):
            for t in draw(st.lists(terms(), max_size=scale)):
                method(
                    t["topology_key"],
                    t["selector"],
                    weight=t["weight"] if kind == "preferred" else None,
                    namespaces=t["namespaces"],
                    namespace_selector=t["namespace_selector"],
                )
    return w


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod, Pod, int]:
    """Nodes, bound pods, the incoming pod, one more pod (bound), hardPodAffinityWeight."""
    nodes = []
    for i in range(draw(st.integers(1, 7))):
        labels = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "zone": st.sampled_from(["z1", "z2", "z3"]),
                    "region": st.sampled_from(["r1", "r2"]),
                    "rack": st.sampled_from(["k1", "k2"]),
                    "other": st.just("x"),
                },
            )
        )
        if draw(st.booleans()) or not labels:
            labels[HOSTNAME] = f"n{i}"
        nodes.append(make_node(f"n{i}").labels(labels).obj())
    names = [n.name for n in nodes]

    def a_pod(name: str, scale: int, bound: bool) -> Pod:
        w = make_pod(name).namespace(draw(st.sampled_from(NAMESPACE_NAMES)))
        w = w.labels(draw(label_sets))
        if bound:
            w = w.node(draw(st.sampled_from(names)))
            if draw(st.integers(0, 5)) == 0:
                w = w.terminating()
        if draw(st.booleans()):
            w = with_terms(w, draw, scale)
        return w.obj()

    pods = [a_pod(f"p{i}", 1, True) for i in range(draw(st.integers(0, 10)))]
    incoming = a_pod("incoming", 2, False)
    extra = a_pod("extra", 1, True)
    return nodes, pods, incoming, extra, draw(st.sampled_from([0, 1, 5]))


# --- comparing the two paths -----------------------------------------------------------


def verdicts(plugin: InterPodAffinity, state: CycleState, pod: Pod, handle: Handle) -> list[Any]:
    table = handle.snapshot.table
    assert table is not None
    rows = np.arange(table.size, dtype=np.int64)[::-1].copy()  # any order must do
    got = plugin.filter_nodes(state, pod, table, rows)
    out: list[Any] = [None] * table.size
    if got is not None:
        for row, code in zip(rows.tolist(), got.codes.tolist(), strict=True):
            out[row] = got.statuses[code - 1] if code else None
    return out


def per_node(plugin: InterPodAffinity, state: CycleState, pod: Pod, handle: Handle) -> list[Any]:
    return [plugin.filter(state, pod, info) for info in handle.snapshot.list()]


def check_filter(
    pod: Pod,
    ref: tuple[InterPodAffinity, CycleState, Handle],
    vec: tuple[InterPodAffinity, CycleState, Handle],
) -> None:
    want = per_node(ref[0], ref[1], pod, ref[2])
    assert verdicts(vec[0], vec[1], pod, vec[2]) == want
    # The per-node Filter on the state the table built answers the same.
    assert per_node(vec[0], vec[1], pod, vec[2]) == want


def pre_filter(
    nodes: list[Node], pods: list[Pod], pod: Pod, weight: int, *, columnar: bool
) -> tuple[InterPodAffinity, CycleState, Handle, Status | None]:
    handle = handle_for(nodes, pods, columnar=columnar)
    plugin = new({"hardPodAffinityWeight": weight}, cast(FrameworkHandle, handle))
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, handle.snapshot.list())
    return plugin, state, handle, status


def check_cycle(nodes: list[Node], pods: list[Pod], pod: Pod, extra: Pod, weight: int) -> None:
    ref_plugin, ref_state, ref_handle, ref_status = pre_filter(
        nodes, pods, pod, weight, columnar=False
    )
    vec_plugin, vec_state, vec_handle, vec_status = pre_filter(
        nodes, pods, pod, weight, columnar=True
    )
    assert vec_status == ref_status
    if ref_status is None:
        assert vec_state.read(PRE_FILTER_STATE_KEY) == ref_state.read(PRE_FILTER_STATE_KEY)
        ref = (ref_plugin, ref_state, ref_handle)
        vec = (vec_plugin, vec_state, vec_handle)
        check_filter(pod, ref, vec)
        # AddPod / RemovePod on copies, as preemption and nominated pods do.
        info = PodInfo(extra)
        for sign in (1, -1):
            ref_copy, vec_copy = ref_state.clone(), vec_state.clone()
            for plugin, state, handle in (
                (ref_plugin, ref_copy, ref_handle),
                (vec_plugin, vec_copy, vec_handle),
            ):
                node_info = handle.snapshot.get(extra.node_name)
                change = plugin.add_pod if sign > 0 else plugin.remove_pod
                assert change(state, pod, info, node_info) is None
            check_filter(
                pod, (ref_plugin, ref_copy, ref_handle), (vec_plugin, vec_copy, vec_handle)
            )
        # The original state is untouched by the copies.
        check_filter(pod, ref, vec)
    check_scores(ref_plugin, ref_handle, vec_plugin, vec_handle, pod)


def check_scores(
    ref_plugin: InterPodAffinity,
    ref_handle: Handle,
    vec_plugin: InterPodAffinity,
    vec_handle: Handle,
    pod: Pod,
) -> None:
    ref_state, vec_state = CycleState(), CycleState()
    infos = ref_handle.snapshot.list()
    ref_status = ref_plugin.pre_score(ref_state, pod, infos)
    vec_status = vec_plugin.pre_score(vec_state, pod, vec_handle.snapshot.list())
    assert vec_status == ref_status
    if ref_status is not None:
        return
    assert vec_state.read(PRE_SCORE_STATE_KEY) == ref_state.read(PRE_SCORE_STATE_KEY)
    table = vec_handle.snapshot.table
    assert table is not None
    # Score the feasible nodes only, in evaluation order: here every other row, rotated.
    rows = np.roll(np.arange(table.size, dtype=np.int64), 1)[::2].copy()
    ref_scores = []
    for row in rows.tolist():
        score, status = ref_plugin.score(ref_state, pod, infos[row])
        assert status is None
        ref_scores.append(NodeScore(infos[row].name, score))
    raw = vec_plugin.score_nodes(vec_state, pod, table, rows)
    assert raw.tolist() == [s.score for s in ref_scores]
    vec_infos = vec_handle.snapshot.list()
    assert [vec_plugin.score(vec_state, pod, vec_infos[r])[0] for r in rows.tolist()] == [
        s.score for s in ref_scores
    ]
    assert ref_plugin.normalize_score(ref_state, pod, ref_scores) is None
    normalized = vec_plugin.normalize_scores(vec_state, pod, raw)
    assert normalized.dtype == np.int64
    assert normalized.tolist() == [s.score for s in ref_scores]


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_columnar_path_matches_per_node_path(
    cluster: tuple[list[Node], list[Pod], Pod, Pod, int],
) -> None:
    nodes, pods, incoming, extra, weight = cluster
    check_cycle(nodes, pods, incoming, extra, weight)


@settings(deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_columnar_path_matches_after_snapshot_changes(
    cluster: tuple[list[Node], list[Pod], Pod, Pod, int], data: st.DataObject
) -> None:
    """The table is updated in place by Snapshot.add_pod/remove_pod; the answers follow."""
    nodes, pods, incoming, extra, weight = cluster
    ref = handle_for(nodes, pods, columnar=False)
    vec = handle_for(nodes, pods, columnar=True)
    removed = data.draw(st.sampled_from(pods)) if pods else None
    for handle in (ref, vec):
        handle.snapshot.add_pod(extra)
        if removed is not None:
            assert handle.snapshot.remove_pod(removed)
    remaining = [p for p in pods if p is not removed]
    for plugin_handle in (ref, vec):
        assert len(plugin_handle.snapshot.list()) == len(nodes)
    ref_plugin, vec_plugin = (
        new({"hardPodAffinityWeight": weight}, cast(FrameworkHandle, ref)),
        new({"hardPodAffinityWeight": weight}, cast(FrameworkHandle, vec)),
    )
    ref_state, vec_state = CycleState(), CycleState()
    _, ref_status = ref_plugin.pre_filter(ref_state, incoming, ref.snapshot.list())
    _, vec_status = vec_plugin.pre_filter(vec_state, incoming, vec.snapshot.list())
    assert vec_status == ref_status
    if ref_status is None:
        check_filter(incoming, (ref_plugin, ref_state, ref), (vec_plugin, vec_state, vec))
    check_scores(ref_plugin, ref, vec_plugin, vec, incoming)
    # And a table built from scratch with the same pods agrees with the updated one.
    check_cycle(nodes, [*remaining, extra], incoming, extra, weight)


# --- plain cases -----------------------------------------------------------------------


def green(w: PodWrapper) -> PodWrapper:
    return w.labels({"color": "green"}).pod_anti_affinity(
        HOSTNAME, {"matchLabels": {"color": "green"}}
    )


def zone_node(name: str, zone: str | None) -> Node:
    labels = {HOSTNAME: name}
    if zone is not None:
        labels["zone"] = zone
    return make_node(name).labels(labels).obj()


NODES = [zone_node("a", "z1"), zone_node("b", "z1"), zone_node("c", "z2"), zone_node("d", None)]


@pytest.mark.parametrize(
    ("pods", "incoming", "want"),
    [
        pytest.param(
            [green(make_pod("p1")).node("a").obj()],
            green(make_pod("in")).obj(),
            {"a": ANTI},
            id="anti-affinity on hostname against its own label rejects the occupied node",
        ),
        pytest.param(
            [green(make_pod("p1")).node("a").obj()],
            make_pod("in").labels({"color": "green"}).obj(),
            {"a": EXISTING},
            id="an existing pod's anti-affinity rejects its node for a matching pod",
        ),
        pytest.param(
            [make_pod("p1").labels({"app": "db"}).node("c").obj()],
            make_pod("in").pod_affinity("zone", {"matchLabels": {"app": "db"}}).obj(),
            {"a": AFFINITY, "b": AFFINITY, "d": AFFINITY},
            id="affinity to a zone admits that zone's nodes only",
        ),
        pytest.param(
            [],
            make_pod("in")
            .labels({"app": "db"})
            .pod_affinity("zone", {"matchLabels": {"app": "db"}})
            .obj(),
            {"d": AFFINITY},
            id="the first pod of a group may go to any node with the topology key",
        ),
        pytest.param(
            [
                make_pod("p1").labels({"app": "db"}).node("a").obj(),
                green(make_pod("p2")).node("c").obj(),
            ],
            green(make_pod("in"))
            .pod_affinity("zone", {"matchLabels": {"app": "db"}})
            .pod_anti_affinity("zone", {"matchLabels": {"color": "green"}})
            .obj(),
            {"c": AFFINITY, "d": AFFINITY},
            id="affinity is checked before both anti-affinity rules",
        ),
        pytest.param(
            [
                make_pod("p1").labels({"app": "db"}).node("b").obj(),
                green(make_pod("p2")).node("a").obj(),
            ],
            green(make_pod("in")).pod_anti_affinity("zone", {"matchLabels": {"app": "db"}}).obj(),
            {"a": ANTI, "b": ANTI},
            id="the pod's anti-affinity is checked before existing pods' anti-affinity",
        ),
        pytest.param(
            [make_pod("p1").namespace("ns2").labels({"app": "db"}).node("a").obj()],
            make_pod("in")
            .pod_anti_affinity(
                "zone",
                {"matchLabels": {"app": "db"}},
                namespace_selector={"matchLabels": {"team": "b"}},
            )
            .obj(),
            {"a": ANTI, "b": ANTI},
            id="a namespaceSelector selects the namespaces by their labels",
        ),
        pytest.param(
            [green(make_pod("p1")).node("a").terminating().obj()],
            green(make_pod("in")).obj(),
            {"a": ANTI},
            id="a terminating pod still counts",
        ),
    ],
)
def test_filter_nodes(pods: list[Pod], incoming: Pod, want: dict[str, Status]) -> None:
    plugin, state, handle, status = pre_filter(NODES, pods, incoming, 1, columnar=True)
    assert status is None
    got = verdicts(plugin, state, incoming, handle)
    names = [info.name for info in handle.snapshot.list()]
    assert dict(zip(names, got, strict=True)) == {n: want.get(n) for n in names}


def test_pre_filter_skips_without_terms_anywhere() -> None:
    pods = [make_pod("p1").labels({"color": "green"}).node("a").obj()]
    status = pre_filter(NODES, pods, make_pod("in").obj(), 1, columnar=True)[3]
    assert status == Status(Code.SKIP)


def test_filter_nodes_without_pre_filter_state_is_an_error() -> None:
    handle = handle_for(NODES, [], columnar=True)
    plugin = new(None, cast(FrameworkHandle, handle))
    table = handle.snapshot.table
    assert table is not None
    got = plugin.filter_nodes(CycleState(), make_pod("in").obj(), table, np.arange(table.size))
    assert got is not None
    assert set(got.codes.tolist()) == {1}
    assert got.statuses[0].code is Code.ERROR


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param([3, 3, 3], [0, 0, 0], id="all equal scores map to 0"),
        pytest.param([2, 4, 10], [0, 25, 100], id="positive scores map from their minimum"),
        pytest.param([-7, 1, 2], [0, 88, 100], id="fractions are truncated"),
        pytest.param([0, 1, 3], [0, 33, 100], id="one third truncates to 33"),
        pytest.param([], [], id="no nodes"),
    ],
)
def test_normalize_scores(raw: list[int], want: list[int]) -> None:
    handle = handle_for(NODES, [], columnar=True)
    plugin = new(None, cast(FrameworkHandle, handle))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({"zone": {"z1": 0}}))
    got = plugin.normalize_scores(state, make_pod("in").obj(), np.array(raw, dtype=np.int64))
    assert got.tolist() == want


def test_pre_score_skips_when_no_pod_has_terms() -> None:
    handle = handle_for(NODES, [make_pod("p1").node("a").obj()], columnar=True)
    plugin = new(None, cast(FrameworkHandle, handle))
    assert plugin.pre_score(CycleState(), make_pod("in").obj(), handle.snapshot.list()) == Status(
        Code.SKIP
    )


def test_score_nodes_sums_existing_and_incoming_terms() -> None:
    pods = [
        make_pod("p1").labels({"app": "db"}).node("a").obj(),
        make_pod("p2")
        .labels({"app": "web"})
        .node("c")
        .pod_affinity("zone", {"matchLabels": {"app": "cache"}}, weight=7)
        .obj(),
    ]
    incoming = (
        make_pod("in")
        .labels({"app": "cache"})
        .pod_affinity("zone", {"matchLabels": {"app": "db"}}, weight=5)
        .pod_anti_affinity(HOSTNAME, {"matchLabels": {"app": "db"}}, weight=3)
        .obj()
    )
    handle = handle_for(NODES, pods, columnar=True)
    plugin = new(None, cast(FrameworkHandle, handle))
    state = CycleState()
    assert plugin.pre_score(state, incoming, handle.snapshot.list()) is None
    table = handle.snapshot.table
    assert table is not None
    rows = np.arange(table.size, dtype=np.int64)
    raw = plugin.score_nodes(state, incoming, table, rows)
    names = [info.name for info in handle.snapshot.list()]
    assert dict(zip(names, raw.tolist(), strict=True)) == {"a": 2, "b": 5, "c": 7, "d": 0}
    normalized = plugin.normalize_scores(state, incoming, raw)
    assert dict(zip(names, normalized.tolist(), strict=True)) == {
        "a": 28,
        "b": 71,
        "c": 100,
        "d": 0,
    }
