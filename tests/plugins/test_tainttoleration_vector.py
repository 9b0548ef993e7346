"""TaintToleration's columnar forms give the per-node answers, node for node; and the
vector ``default_normalize_scores`` is the list one."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeScore
from kubesched.framework.vector import (
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import tainttoleration
from kubesched.plugins.helper import default_normalize_score, default_normalize_scores
from kubesched.testing.wrappers import make_node, make_pod

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
KEYS = ("dedicated", "gpu", "spot")
VALUES = ("", "a", "b")


def untolerated(key: str, value: str) -> Status:
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) had untolerated taint {{{key}: {value}}}",)
    )


# --- building clusters --------------------------------------------------------------------

taints = st.tuples(st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from(EFFECTS))


@st.composite
def tolerations(draw: st.DrawFn) -> dict[str, str]:
    """A valid toleration: an empty key needs Exists, Exists needs an empty value."""
    key = draw(st.sampled_from(("", *KEYS)))
    operator = "Exists" if not key else draw(st.sampled_from(("", "Equal", "Exists")))
    value = "" if operator == "Exists" else draw(st.sampled_from(VALUES))
    effect = draw(st.sampled_from(("", *EFFECTS)))
    return {"key": key, "operator": operator, "value": value, "effect": effect}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod]]:
    """Up to 8 nodes over two zones with up to 4 taints each (repeats allowed), and a few
    bound pods."""
    nodes = []
    for i in range(draw(st.integers(1, 8))):
        wrapper = make_node(f"node-{i}").label("topology.kubernetes.io/zone", f"z{i % 2}")
        for key, value, effect in draw(st.lists(taints, max_size=4)):
            wrapper = wrapper.taint(key, value, effect)
        nodes.append(wrapper.obj())
    pods = [
        make_pod(f"bound-{j}").node(nodes[draw(st.integers(0, len(nodes) - 1))].name).obj()
        for j in range(draw(st.integers(0, 3)))
    ]
    return nodes, pods


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    wrapper = make_pod("incoming")
    for t in draw(st.lists(tolerations(), max_size=4)):
        wrapper = wrapper.toleration(**t)
    return wrapper.obj()


# --- comparing ----------------------------------------------------------------------------


def per_node_filter(
    plugin: tainttoleration.TaintToleration, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> list[Status | None]:
    infos = snapshot.list()
    return [plugin.filter(CycleState(), pod, infos[r]) for r in rows]


def vector_filter(
    plugin: tainttoleration.TaintToleration, table: NodeTable, pod: Pod, rows: list[int]
) -> list[Status | None]:
    verdicts = plugin.filter_nodes(CycleState(), pod, table, np.array(rows, dtype=np.int64))
    if verdicts is None:
        return [None] * len(rows)
    assert len(verdicts.codes) == len(rows)
    return [None if c == 0 else verdicts.statuses[c - 1] for c in verdicts.codes.tolist()]


def per_node_scores(
    plugin: tainttoleration.TaintToleration, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> tuple[list[int], list[int]]:
    infos = [snapshot.list()[r] for r in rows]
    state = CycleState()
    assert plugin.pre_score(state, pod, infos) is None
    raw = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        raw.append(score)
    listed = [NodeScore(info.name, s) for info, s in zip(infos, raw, strict=True)]
    assert plugin.normalize_score(state, pod, listed) is None
    return raw, [s.score for s in listed]


def vector_scores(
    plugin: tainttoleration.TaintToleration, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> tuple[list[int], list[int]]:
    assert snapshot.table is not None
    state = CycleState()
    assert plugin.pre_score(state, pod, [snapshot.list()[r] for r in rows]) is None
    raw = plugin.score_nodes(state, pod, snapshot.table, np.array(rows, dtype=np.int64))
    assert raw.dtype == np.int64
    normalized = plugin.normalize_scores(state, pod, raw)
    return raw.tolist(), normalized.tolist()


def assert_same(
    plugin: tainttoleration.TaintToleration, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> None:
    assert snapshot.table is not None
    assert vector_filter(plugin, snapshot.table, pod, rows) == per_node_filter(
        plugin, snapshot, pod, rows
    )
    assert vector_scores(plugin, snapshot, pod, rows) == per_node_scores(
        plugin, snapshot, pod, rows
    )


@settings(deadline=None, max_examples=300)
@given(cluster=clusters(), incoming=st.lists(pods(), min_size=1, max_size=3), data=st.data())
def test_vector_forms_agree_with_the_per_node_ones_on_random_clusters(
    cluster: tuple[list[Node], list[Pod]], incoming: list[Pod], data: st.DataObject
) -> None:
    nodes, bound = cluster
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    # One plugin for every pod and table state, so its per-table memo is exercised.
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    order = data.draw(st.permutations(range(len(nodes))))
    rows = order[: data.draw(st.integers(0, len(nodes)))]
    for pod in incoming:
        assert_same(plugin, snapshot, pod, rows)
    # Pods coming and going do not change taints; the answers must stay the same.
    extra = make_pod("extra").node(nodes[0].name).obj()
    snapshot.add_pod(extra)
    assert_same(plugin, snapshot, incoming[0], rows)
    if bound:
        assert snapshot.remove_pod(bound[0])
        assert_same(plugin, snapshot, incoming[-1], rows)
    # A new table (nodes changed) is not answered from the old one's memo.
    rebuilt = Snapshot.from_objects(list(reversed(nodes)), bound, columnar=True)
    assert_same(plugin, rebuilt, incoming[0], list(range(len(nodes))))


# --- plain cases --------------------------------------------------------------------------


@dataclass
class Case:
    nodes: list[Node]
    pod: Pod
    filter: list[Status | None]
    raw: list[int]
    normalized: list[int]


def node_with(name: str, *node_taints: tuple[str, str, str]) -> Node:
    wrapper = make_node(name)
    for key, value, effect in node_taints:
        wrapper = wrapper.taint(key, value, effect)
    return wrapper.obj()


def pod_with(*items: dict[str, str]) -> Pod:
    wrapper = make_pod("pod1")
    for t in items:
        wrapper = wrapper.toleration(**t)
    return wrapper.obj()


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            Case(
                [node_with("n1"), node_with("n2")],
                pod_with(),
                [None, None],
                [0, 0],
                [100, 100],
            ),
            id="a cluster without taints passes everything and scores every node 100",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("a", "1", "NoSchedule"), ("b", "2", "NoExecute")),
                    node_with("n2", ("b", "2", "NoExecute"), ("a", "1", "NoSchedule")),
                    node_with("n3", ("c", "", "PreferNoSchedule")),
                ],
                pod_with(),
                [untolerated("a", "1"), untolerated("b", "2"), None],
                [0, 0, 1],
                [100, 100, 0],
            ),
            id="each node is rejected for the first untolerated taint in its own order",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("a", "1", "NoSchedule")),
                    node_with("n2", ("a", "1", "NoExecute")),
                ],
                pod_with(),
                [untolerated("a", "1"), untolerated("a", "1")],
                [0, 0],
                [100, 100],
            ),
            id="taints that differ only by effect read the same",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("a", "1", "NoSchedule"), ("b", "2", "NoSchedule")),
                    node_with("n2", ("b", "2", "NoSchedule")),
                ],
                pod_with({"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"}),
                [untolerated("b", "2"), untolerated("b", "2")],
                [0, 0],
                [100, 100],
            ),
            id="a tolerated first taint gives way to the next untolerated one",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("a", "1", "NoSchedule"), ("p", "", "PreferNoSchedule")),
                    node_with("n2", ("p", "", "PreferNoSchedule"), ("q", "", "PreferNoSchedule")),
                    node_with("n3", ("p", "", "PreferNoSchedule"), ("p", "", "PreferNoSchedule")),
                ],
                pod_with({"operator": "Exists", "effect": "NoSchedule"}),
                [None, None, None],
                [1, 2, 2],
                [50, 0, 0],
            ),
            id="PreferNoSchedule taints are counted, repeats too, and the counts reversed",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("a", "1", "NoSchedule"), ("p", "", "PreferNoSchedule")),
                    node_with("n2", ("p", "", "PreferNoSchedule")),
                ],
                pod_with({"operator": "Exists"}),
                [None, None],
                [0, 0],
                [100, 100],
            ),
            id="a pod tolerating everything passes and scores 100 everywhere",
        ),
        pytest.param(
            Case(
                [
                    node_with("n1", ("p", "x", "PreferNoSchedule")),
                    node_with("n2", ("p", "y", "PreferNoSchedule"), ("q", "", "PreferNoSchedule")),
                    node_with("n3"),
                ],
                pod_with({"key": "p", "value": "x", "effect": "PreferNoSchedule"}),
                [None, None, None],
                [0, 2, 0],
                [100, 0, 100],
            ),
            id="only the PreferNoSchedule taints the pod does not tolerate count",
        ),
    ],
)
def test_vector_forms(case: Case) -> None:
    snapshot = Snapshot.from_objects(case.nodes, [], columnar=True)
    assert snapshot.table is not None
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    rows = [snapshot.table.rows[n.name] for n in case.nodes]
    assert vector_filter(plugin, snapshot.table, case.pod, rows) == case.filter
    assert vector_scores(plugin, snapshot, case.pod, rows) == (case.raw, case.normalized)
    assert per_node_scores(plugin, snapshot, case.pod, rows) == (case.raw, case.normalized)


def test_filter_nodes_is_none_without_hard_taints() -> None:
    snapshot = Snapshot.from_objects(
        [node_with("n1", ("p", "", "PreferNoSchedule"))], [], columnar=True
    )
    assert snapshot.table is not None
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    rows = np.array([0], dtype=np.int64)
    assert plugin.filter_nodes(CycleState(), pod_with(), snapshot.table, rows) is None


def test_score_nodes_without_pre_score_raises() -> None:
    snapshot = Snapshot.from_objects([node_with("n1")], [], columnar=True)
    assert snapshot.table is not None
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="PreScoreTaintToleration"):
        plugin.score_nodes(CycleState(), pod_with(), snapshot.table, np.array([0]))


def test_the_plugin_offers_the_vector_protocols() -> None:
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    assert isinstance(plugin, VectorFilterPlugin)
    assert isinstance(plugin, VectorScorePlugin)
    assert isinstance(plugin.score_extensions(), VectorScoreExtensions)


# --- default_normalize_scores -------------------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(
    scores=st.lists(st.integers(-1000, 10**12), max_size=12),
    max_priority=st.sampled_from((10, 100)),
    reverse=st.booleans(),
)
def test_default_normalize_scores_is_the_list_form(
    scores: list[int], max_priority: int, reverse: bool
) -> None:
    listed = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(max_priority, reverse, listed) is None
    got = default_normalize_scores(max_priority, reverse, np.array(scores, dtype=np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == [s.score for s in listed]


@pytest.mark.parametrize(
    ("scores", "reverse", "expected"),
    [
        pytest.param([], False, [], id="no scores"),
        pytest.param([0, 0], False, [0, 0], id="all zero stays zero"),
        pytest.param([0, 0], True, [100, 100], id="all zero reversed is the maximum"),
        pytest.param([1, 2, 3], False, [33, 66, 100], id="scaled with truncation"),
        pytest.param([5, 999, 1000], False, [0, 99, 100], id="large scores scale the same"),
        pytest.param([5, 999, 1000], True, [100, 1, 0], id="large scores reversed"),
        pytest.param([1, 2, 3], True, [67, 34, 0], id="reversed after truncation"),
        pytest.param([-5, 10], False, [-50, 100], id="a negative score truncates toward zero"),
        pytest.param([-3, 7], False, [-42, 100], id="truncation toward zero, not floor"),
    ],
)
def test_default_normalize_scores(scores: list[int], reverse: bool, expected: list[int]) -> None:
    got = default_normalize_scores(100, reverse, np.array(scores, dtype=np.int64))
    assert got.tolist() == expected
