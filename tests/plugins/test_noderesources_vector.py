"""NodeResourcesFit's and NodeResourcesBalancedAllocation's columnar forms give the
per-node answers, node for node: random clusters and pods, every scoring strategy, rows in
any order or a few of them, and again after pods come and go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.vector import VectorFilterPlugin, VectorScorePlugin
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.testing.wrappers import make_node, make_pod

GPU = "example.com/gpu"
NEW = "example.com/new"  # on no node and no bound pod: the table has no column for it
HUGE = "hugepages-2Mi"
GI = 1 << 30

FIT_ARGS: list[Mapping[str, Any] | None] = [
    None,
    {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [
                {"name": "cpu", "weight": 2},
                {"name": "memory", "weight": 1},
                {"name": "ephemeral-storage", "weight": 1},
                {"name": GPU, "weight": 5},
                {"name": NEW, "weight": 3},
            ],
        }
    },
    {
        "scoringStrategy": {
            "type": "MostAllocated",
            "resources": [
                {"name": "cpu", "weight": 3},
                {"name": "memory", "weight": 1},
                {"name": GPU, "weight": 2},
                {"name": "pods", "weight": 1},
            ],
        }
    },
    {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [
                {"name": "cpu", "weight": 1},
                {"name": "memory", "weight": 4},
                {"name": "ephemeral-storage", "weight": 1},
                {"name": HUGE, "weight": 2},
            ],
            "requestedToCapacityRatio": {
                "shape": [
                    {"utilization": 0, "score": 0},
                    {"utilization": 30, "score": 7},
                    {"utilization": 100, "score": 3},
                ]
            },
        }
    },
    {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 10, "score": 10}, {"utilization": 90, "score": 0}]
            },
        }
    },
    {"ignoredResources": [GPU], "ignoredResourceGroups": ["example.org"]},
]

BALANCED_ARGS: list[Mapping[str, Any] | None] = [
    None,
    {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]},
    {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]},
    {"resources": [{"name": "memory"}]},
    {
        "resources": [
            {"name": "cpu"},
            {"name": "memory"},
            {"name": "ephemeral-storage"},
            {"name": GPU},
            {"name": HUGE},
            {"name": NEW},
        ]
    },
]


def handle(snapshot: Snapshot) -> Any:
    """A stand-in for the framework: the plugins only read its snapshot here."""
    return SimpleNamespace(snapshot=snapshot)


# --- building clusters --------------------------------------------------------------------

cpu_amounts = st.sampled_from([None, "0", "100m", "1", "2500m", "4"]) | st.integers(1, 9000).map(
    lambda m: f"{m}m"
)
memory_amounts = st.sampled_from([None, "0", "200Mi", "1Gi", "32Gi"]) | st.integers(1, 1 << 40).map(
    str
)
storage_amounts = st.sampled_from([None, "0", "1Gi", "10Gi"])
gpu_amounts = st.sampled_from([None, "0", "1", "2", "4"])
#: Allocatable is not validated here: negative amounts take the literal per-node rules.
odd_amounts = st.sampled_from(["-1", "-3Gi"])


def _resources(**amounts: str | None) -> dict[str, str]:
    names = {"storage": "ephemeral-storage", "gpu": GPU, "huge": HUGE, "new": NEW}
    return {names.get(k, k): v for k, v in amounts.items() if v is not None}


@st.composite
def requests(draw: st.DrawFn, *, extra: bool = False) -> dict[str, str]:
    """A container's requests; cpu or memory left out count with the non-zero defaults."""
    out = _resources(
        cpu=draw(cpu_amounts),
        memory=draw(memory_amounts),
        storage=draw(storage_amounts),
        gpu=draw(gpu_amounts),
        huge=draw(st.sampled_from([None, "0", "2Mi", "4Mi"])),
    )
    if extra:
        out.update(_resources(new=draw(st.sampled_from([None, "0", "1"]))))
        out.update(_resources(**{"example.org/x": draw(st.sampled_from([None, "1"]))}))
    return out


def pod_of(name: str, reqs: dict[str, str], node: str = "") -> Pod:
    wrapper = make_pod(name)
    wrapper = wrapper.req(**reqs) if reqs else wrapper.container("pause")
    if node:
        wrapper = wrapper.node(node)
    return wrapper.obj()


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod]]:
    """Up to 10 nodes with varied allocatable (zeros and missing resources included) and
    up to 12 bound pods."""
    nodes = []
    for i in range(draw(st.integers(1, 10))):
        alloc = _resources(
            cpu=draw(cpu_amounts | odd_amounts),
            memory=draw(memory_amounts | odd_amounts),
            storage=draw(storage_amounts),
            gpu=draw(gpu_amounts),
            huge=draw(st.sampled_from([None, "0", "8Mi"])),
            pods=draw(st.sampled_from([None, "0", "1", "3", "110"])),
        )
        nodes.append(make_node(f"node-{i}").allocatable(**alloc).obj())
    pods = [
        pod_of(f"bound-{j}", draw(requests()), nodes[draw(st.integers(0, len(nodes) - 1))].name)
        for j in range(draw(st.integers(0, 12)))
    ]
    return nodes, pods


@st.composite
def row_orders(draw: st.DrawFn, size: int) -> np.ndarray:
    """All rows in some order, or a few of them (the gather-first path)."""
    order = draw(st.permutations(range(size)))
    keep = draw(st.sampled_from([size, size, max(1, size // 5), 1]))
    return np.array(order[:keep], dtype=np.int64)


# --- comparing ----------------------------------------------------------------------------


def assert_same_filter(
    plugin: fit.Fit, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> None:
    table = snapshot.table
    assert table is not None
    infos = snapshot.list()
    verdicts = plugin.filter_nodes(state, pod, table, rows)
    for i, row in enumerate(rows.tolist()):
        expected = plugin.filter(state, pod, infos[row])
        got = None
        if verdicts is not None and verdicts.codes[i]:
            got = verdicts.statuses[int(verdicts.codes[i]) - 1]
        assert got == expected, infos[row].name


def assert_same_scores(
    plugin: fit.Fit | balanced_allocation.BalancedAllocation,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    rows: np.ndarray,
) -> None:
    table = snapshot.table
    assert table is not None
    infos = snapshot.list()
    expected = []
    for row in rows.tolist():
        score, status = plugin.score(state, pod, infos[row])
        assert status is None
        expected.append(score)
    got = plugin.score_nodes(state, pod, table, rows)
    assert got.dtype == np.int64
    assert got.tolist() == expected
    assert plugin.score_extensions() is None


def fit_cycle(plugin: fit.Fit, pod: Pod, snapshot: Snapshot, rows: np.ndarray) -> None:
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    assert_same_filter(plugin, state, pod, snapshot, rows)
    plugin.pre_score(state, pod, snapshot.list())
    assert_same_scores(plugin, state, pod, snapshot, rows)
    # Without PreScore state, both compute the pod's requests themselves.
    assert_same_scores(plugin, CycleState(), pod, snapshot, rows)


def balanced_cycle(
    plugin: balanced_allocation.BalancedAllocation, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> None:
    state = CycleState()
    if plugin.pre_score(state, pod, snapshot.list()) is None:
        assert_same_scores(plugin, state, pod, snapshot, rows)
    assert_same_scores(plugin, CycleState(), pod, snapshot, rows)


# --- equivalence --------------------------------------------------------------------------


@settings(deadline=None, max_examples=150)
@given(
    cluster=clusters(),
    incoming=requests(extra=True),
    args=st.sampled_from(FIT_ARGS),
    data=st.data(),
)
def test_fit_vector_forms_match_per_node(
    cluster: tuple[list[Node], list[Pod]],
    incoming: dict[str, str],
    args: Mapping[str, Any] | None,
    data: st.DataObject,
) -> None:
    nodes, bound = cluster
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    plugin = fit.new(args, handle(snapshot))
    pod = pod_of("incoming", incoming)
    size = len(nodes)
    fit_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))

    # Pods come and go.
    added = pod_of("added", data.draw(requests(extra=True)), nodes[0].name)
    snapshot.add_pod(added)
    fit_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))
    for gone in [*bound[:2], added]:
        assert snapshot.remove_pod(gone)
        fit_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))


@settings(deadline=None, max_examples=150)
@given(
    cluster=clusters(),
    incoming=requests(extra=True),
    args=st.sampled_from(BALANCED_ARGS),
    data=st.data(),
)
def test_balanced_vector_score_matches_per_node(
    cluster: tuple[list[Node], list[Pod]],
    incoming: dict[str, str],
    args: Mapping[str, Any] | None,
    data: st.DataObject,
) -> None:
    nodes, bound = cluster
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    plugin = balanced_allocation.new(args, handle(snapshot))
    pod = pod_of("incoming", incoming)
    size = len(nodes)
    balanced_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))
    added = pod_of("added", data.draw(requests(extra=True)), nodes[-1].name)
    snapshot.add_pod(added)
    balanced_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))
    assert snapshot.remove_pod(added)
    balanced_cycle(plugin, pod, snapshot, data.draw(row_orders(size)))


fractions_amounts = st.integers(0, 1 << 45)


@settings(deadline=None, max_examples=200)
@given(
    allocs=st.lists(
        st.tuples(st.integers(1, 1 << 45), st.integers(1, 1 << 45), st.integers(0, 1 << 45)),
        min_size=1,
        max_size=6,
    ),
    used=st.lists(st.tuples(fractions_amounts, fractions_amounts), min_size=6, max_size=6),
    incoming=st.tuples(st.integers(1, 1 << 40), st.integers(0, 1 << 40)),
    three=st.booleans(),
)
def test_balanced_float_formula_is_bit_identical(
    allocs: list[tuple[int, int, int]],
    used: list[tuple[int, int]],
    incoming: tuple[int, int],
    three: bool,
) -> None:
    """Large, uneven amounts, so that fractions are far from round numbers: the vector
    std (two fractions, or the population formula over three) truncates the same way."""
    nodes = [
        make_node(f"node-{i}")
        .allocatable(cpu=f"{c}m", memory=str(m), **{"ephemeral-storage": str(e)}, pods="100")
        .obj()
        for i, (c, m, e) in enumerate(allocs)
    ]
    bound = [
        pod_of(f"bound-{i}", {"cpu": f"{c}m", "memory": str(m)}, nodes[i % len(nodes)].name)
        for i, (c, m) in enumerate(used)
        if c and m
    ]
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    args = (
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]}
        if three
        else None
    )
    plugin = balanced_allocation.new(args, handle(snapshot))
    pod = pod_of(
        "incoming",
        {"cpu": f"{incoming[0]}m", "memory": str(incoming[1]), "ephemeral-storage": "1"},
    )
    balanced_cycle(plugin, pod, snapshot, np.arange(len(nodes), dtype=np.int64))


# --- plain cases --------------------------------------------------------------------------


def _one_node_cluster(
    alloc: dict[str, Any], bound: Sequence[dict[str, str]] = ()
) -> tuple[Snapshot, list[Pod]]:
    node = make_node("n").allocatable(**alloc).obj()
    pods = [pod_of(f"b{i}", r, "n") for i, r in enumerate(bound)]
    return Snapshot.from_objects([node], pods, columnar=True), pods


def _filter_one(snapshot: Snapshot, pod: Pod, args: Mapping[str, Any] | None = None) -> Any:
    plugin = fit.new(args, handle(snapshot))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    table = snapshot.table
    assert table is not None
    verdicts = plugin.filter_nodes(state, pod, table, np.arange(table.size, dtype=np.int64))
    assert_same_filter(plugin, state, pod, snapshot, np.arange(table.size, dtype=np.int64))
    if verdicts is None or not verdicts.codes[0]:
        return None
    return verdicts.statuses[int(verdicts.codes[0]) - 1]


@pytest.mark.parametrize(
    ("alloc", "bound", "incoming", "expected"),
    [
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "10"},
            [],
            {"cpu": "500m", "memory": "512Mi"},
            None,
            id="a pod that fits passes",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "2"},
            [{"cpu": "500m", "memory": "512Mi"}],
            {"cpu": "500m", "memory": "512Mi"},
            None,
            id="a pod taking exactly what is left passes",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "2"},
            [{"cpu": "500m", "memory": "512Mi"}],
            {"cpu": "501m", "memory": "512Mi"},
            Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
            id="one millicore short is short",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "10"},
            [{"cpu": "800m", "memory": "800Mi"}],
            {"cpu": "500m", "memory": "512Mi"},
            Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
            id="short of cpu and memory gives both reasons in one status",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "1"},
            [{"cpu": "100m"}],
            {"cpu": "2", "memory": "512Mi"},
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("Too many pods", "Insufficient cpu"),
            ),
            id="a request beyond allocatable is unresolvable, after too many pods",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "1"},
            [{"cpu": "100m"}],
            {"cpu": "100m"},
            Status(Code.UNSCHEDULABLE, ("Too many pods",)),
            id="too many pods alone is unschedulable",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "10"},
            [],
            {"cpu": "100m", NEW: "1"},
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {NEW}",)),
            id="an extended resource no node has is short everywhere and unresolvable",
        ),
        pytest.param(
            {"cpu": "1", "memory": "1Gi", "pods": "10", GPU: "2"},
            [{GPU: "1"}],
            {GPU: "2", "ephemeral-storage": "1Gi"},
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ("Insufficient ephemeral-storage", f"Insufficient {GPU}"),
            ),
            id="ephemeral storage comes before scalar resources",
        ),
    ],
)
def test_fit_filter_nodes_cases(
    alloc: dict[str, str],
    bound: list[dict[str, str]],
    incoming: dict[str, str],
    expected: Status | None,
) -> None:
    snapshot, _ = _one_node_cluster(alloc, bound)
    assert _filter_one(snapshot, pod_of("p", incoming)) == expected


def test_fit_filter_nodes_skips_ignored_resources() -> None:
    snapshot, _ = _one_node_cluster({"cpu": "1", "memory": "1Gi", "pods": "10"})
    pod = pod_of("p", {"cpu": "100m", GPU: "1", "example.org/x": "1"})
    assert _filter_one(snapshot, pod) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"Insufficient {GPU}", "Insufficient example.org/x")
    )
    args = {"ignoredResources": [GPU], "ignoredResourceGroups": ["example.org"]}
    assert _filter_one(snapshot, pod, args) is None


def test_fit_filter_nodes_groups_nodes_by_failing_resources() -> None:
    nodes = [
        make_node("fits").allocatable(cpu="4", memory="4Gi", pods="10").obj(),
        make_node("no-cpu").allocatable(cpu="1", memory="4Gi", pods="10").obj(),
        make_node("no-memory").allocatable(cpu="4", memory="1Gi", pods="10").obj(),
        make_node("no-cpu-2").allocatable(cpu="1", memory="4Gi", pods="10").obj(),
        make_node("neither").allocatable(cpu="1", memory="1Gi", pods="10").obj(),
    ]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    plugin = fit.new(None, handle(snapshot))
    pod = pod_of("p", {"cpu": "2", "memory": "2Gi"})
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    table = snapshot.table
    assert table is not None
    rows = np.array([table.rows[n.name] for n in nodes], dtype=np.int64)
    verdicts = plugin.filter_nodes(state, pod, table, rows)
    assert verdicts is not None
    got = [None if not c else verdicts.statuses[c - 1].reasons for c in verdicts.codes.tolist()]
    assert got == [
        None,
        ("Insufficient cpu",),
        ("Insufficient memory",),
        ("Insufficient cpu",),
        ("Insufficient cpu", "Insufficient memory"),
    ]
    assert len(verdicts.statuses) == 3
    assert {s.code for s in verdicts.statuses} == {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


def test_fit_filter_nodes_without_prefilter_state_is_an_error_everywhere() -> None:
    snapshot, _ = _one_node_cluster({"cpu": "1", "memory": "1Gi", "pods": "10"})
    plugin = fit.new(None, handle(snapshot))
    table = snapshot.table
    assert table is not None
    verdicts = plugin.filter_nodes(CycleState(), pod_of("p", {}), table, np.array([0]))
    assert verdicts is not None
    assert verdicts.codes.tolist() == [1]
    assert verdicts.statuses == (
        Status.error('error reading "PreFilterNodeResourcesFit" from cycleState: not found'),
    )


def _scores(plugin: Any, snapshot: Snapshot, pod: Pod) -> list[int]:
    state = CycleState()
    plugin.pre_score(state, pod, snapshot.list())
    table = snapshot.table
    assert table is not None
    rows = np.arange(table.size, dtype=np.int64)
    assert_same_scores(plugin, state, pod, snapshot, rows)
    return list(plugin.score_nodes(state, pod, table, rows).tolist())


def test_least_and_balanced_scores_on_a_known_cluster() -> None:
    """Upstream's least_allocated_test "nothing scheduled, resources requested, differently
    sized nodes" and balanced_allocation_test's matching case."""
    nodes = [
        make_node("node1").allocatable(cpu="4", memory="10000", pods="10").obj(),
        make_node("node2").allocatable(cpu="6", memory="10000", pods="10").obj(),
    ]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    pod = make_pod("p").req(cpu="1", memory="2000").req(cpu="2", memory="3000").obj()
    fwk = handle(snapshot)
    # cpu (4000-3000)*100/4000 = 25, memory 50 → 37; cpu 50, memory 50 → 50.
    assert _scores(fit.new(None, fwk), snapshot, pod) == [37, 50]
    # |0.75 - 0.5| / 2 = 0.125 → 87; |0.5 - 0.5| → 100.
    assert _scores(balanced_allocation.new(None, fwk), snapshot, pod) == [87, 100]


def test_balanced_score_nodes_of_a_best_effort_pod_without_prescore_is_zero() -> None:
    snapshot, _ = _one_node_cluster({"cpu": "1", "memory": "1Gi", "pods": "10"})
    plugin = balanced_allocation.new(None, handle(snapshot))
    table = snapshot.table
    assert table is not None
    pod = pod_of("p", {})
    assert plugin.pre_score(CycleState(), pod, snapshot.list()) == Status.skip()
    assert plugin.score_nodes(CycleState(), pod, table, np.array([0])).tolist() == [0]


def test_plugins_implement_the_vector_protocols() -> None:
    snapshot, _ = _one_node_cluster({"cpu": "1"})
    fwk = handle(snapshot)
    fit_plugin = fit.new(None, fwk)
    assert isinstance(fit_plugin, VectorFilterPlugin)
    assert isinstance(fit_plugin, VectorScorePlugin)
    assert isinstance(balanced_allocation.new(None, fwk), VectorScorePlugin)


def test_a_pod_bringing_a_new_resource_column() -> None:
    """A bound pod asking for an extended resource the table has no column for adds one
    (and replaces both matrices): the cached allocatable columns must follow."""
    nodes = [make_node(f"n{i}").allocatable(cpu="4", memory="8Gi", pods="10").obj() for i in (0, 1)]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    fit_plugin = fit.new(FIT_ARGS[1], handle(snapshot))
    balanced = balanced_allocation.new(BALANCED_ARGS[4], handle(snapshot))
    pod = pod_of("p", {"cpu": "1", NEW: "1"})
    rows = np.arange(2, dtype=np.int64)
    fit_cycle(fit_plugin, pod, snapshot, rows)
    balanced_cycle(balanced, pod, snapshot, rows)
    snapshot.add_pod(pod_of("brings-new", {"cpu": "1", NEW: "1"}, "n0"))
    fit_cycle(fit_plugin, pod, snapshot, rows)
    balanced_cycle(balanced, pod, snapshot, rows)


def test_requested_to_capacity_ratio_rounds_half_away_from_zero() -> None:
    """Shape 0→0, 100→10 scores utilization itself: cpu 50 and memory 25 average 37.5."""
    node = make_node("n").allocatable(cpu="1", memory="1000", pods="10").obj()
    snapshot = Snapshot.from_objects([node], [], columnar=True)
    args = {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {
                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
            },
        }
    }
    pod = pod_of("p", {"cpu": "500m", "memory": "250"})
    assert _scores(fit.new(args, handle(snapshot)), snapshot, pod) == [38]


@pytest.mark.parametrize("fit_args", FIT_ARGS)
@pytest.mark.parametrize("balanced_args", BALANCED_ARGS)
def test_negative_allocatable_everywhere_takes_the_literal_rules(
    fit_args: Mapping[str, Any] | None, balanced_args: Mapping[str, Any] | None
) -> None:
    """No node with 0 of a resource, some with less than 0: the unmasked general paths."""
    nodes = [
        make_node("a").allocatable(cpu="-1", memory="4Gi", pods="10").obj(),
        make_node("b").allocatable(cpu="2", memory="-1Gi", pods="10").obj(),
        make_node("c").allocatable(cpu="3", memory="3Gi", pods="10").obj(),
    ]
    bound = [pod_of("b0", {"cpu": "500m", "memory": "1Gi"}, "c")]
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    fwk = handle(snapshot)
    pod = pod_of("p", {"cpu": "700m", "memory": "1536Mi", "ephemeral-storage": "1"})
    rows = np.array([2, 0, 1], dtype=np.int64)
    fit_cycle(fit.new(fit_args, fwk), pod, snapshot, rows)
    balanced_cycle(balanced_allocation.new(balanced_args, fwk), pod, snapshot, rows)


def test_more_resources_than_key_bits_are_judged_alike() -> None:
    """A pod asking for 62 extended resources (more than the bit key holds)."""
    names = [f"example.com/r{i:02d}" for i in range(62)]
    nodes = [
        make_node("all").allocatable(cpu="1", pods="10", **{n: "1" for n in names}).obj(),
        make_node("half").allocatable(cpu="1", pods="10", **{n: "1" for n in names[::2]}).obj(),
        make_node("none").allocatable(cpu="1", pods="10").obj(),
    ]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    pod = pod_of("p", {"cpu": "100m", **{n: "1" for n in names}})
    plugin = fit.new(None, handle(snapshot))
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    rows = np.array([2, 0, 1], dtype=np.int64)
    assert_same_filter(plugin, state, pod, snapshot, rows)
    table = snapshot.table
    assert table is not None
    verdicts = plugin.filter_nodes(state, pod, table, rows)
    assert verdicts is not None
    assert verdicts.codes.tolist()[1] == 0
    assert len(verdicts.statuses) == 2
