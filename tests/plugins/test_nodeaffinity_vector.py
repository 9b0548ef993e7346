"""NodeAffinity's columnar forms give the per-node answers, node for node."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from kubesched.plugins import nodeaffinity
from kubesched.plugins.nodeaffinity import NodeAffinity
from kubesched.testing.handle import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

ERR_POD = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",)
)
ERR_ENFORCED = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match scheduler-enforced node affinity",)
)

LABELS = {
    "zone": ("a", "b", "c"),
    "tier": ("x", "y"),
    "num": ("1", "5", "10", "abc"),
}
KEYS = (*LABELS, "missing")
VALUES = ("a", "b", "c", "x", "y", "1", "5", "10", "abc", "zzz")
NODE_NAMES = tuple(f"node-{i}" for i in range(8))

# --- building clusters, pods and args -----------------------------------------------------


@st.composite
def expressions(draw: st.DrawFn) -> dict[str, Any]:
    key = draw(st.sampled_from(KEYS))
    operator = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")))
    out: dict[str, Any] = {"key": key, "operator": operator}
    if operator in ("In", "NotIn"):
        out["values"] = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
    elif operator in ("Gt", "Lt"):
        out["values"] = [draw(st.sampled_from(("0", "3", "7")))]
    return out


@st.composite
def fields(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(("In", "NotIn")))
    return {
        "key": "metadata.name",
        "operator": operator,
        "values": [draw(st.sampled_from(NODE_NAMES))],
    }


@st.composite
def terms(draw: st.DrawFn) -> dict[str, Any]:
    """A node selector term; sometimes empty (it matches no node)."""
    term: dict[str, Any] = {}
    exprs = draw(st.lists(expressions(), max_size=3))
    if exprs:
        term["matchExpressions"] = exprs
    if draw(st.integers(0, 3)) == 0:
        term["matchFields"] = [draw(fields())]
    return term


@st.composite
def preferred(draw: st.DrawFn) -> list[dict[str, Any]]:
    return [
        {"weight": draw(st.integers(1, 100)), "preference": draw(terms())}
        for _ in range(draw(st.integers(0, 3)))
    ]


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    out = []
    for name in NODE_NAMES[: draw(st.integers(1, len(NODE_NAMES)))]:
        wrapper = make_node(name)
        for key, values in LABELS.items():
            if draw(st.booleans()):
                wrapper = wrapper.label(key, draw(st.sampled_from(values)))
        out.append(wrapper.obj())
    return out


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    wrapper = make_pod("incoming")
    selector = draw(st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2))
    if selector:
        wrapper = wrapper.node_selector(selector)
    affinity: dict[str, Any] = {}
    required = draw(st.lists(terms(), max_size=3))
    if required:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    prefs = draw(preferred())
    if prefs:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
    if affinity:
        wrapper.raw["spec"]["affinity"] = {"nodeAffinity": affinity}
    return wrapper.obj()


@st.composite
def plugin_args(draw: st.DrawFn) -> dict[str, Any] | None:
    added: dict[str, Any] = {}
    if draw(st.booleans()):
        # An empty list of terms is accepted and matches no node.
        added["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": draw(st.lists(terms(), max_size=2))
        }
    prefs = draw(preferred())
    if prefs:
        added["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
    return {"addedAffinity": added} if added else None


# --- comparing ----------------------------------------------------------------------------


def per_node_filter(
    plugin: NodeAffinity, state: CycleState, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> list[Status | None]:
    infos = snapshot.list()
    return [plugin.filter(state, pod, infos[r]) for r in rows]


def vector_filter(
    plugin: NodeAffinity, state: CycleState, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> list[Status | None]:
    assert snapshot.table is not None
    verdicts = plugin.filter_nodes(state, pod, snapshot.table, np.array(rows, dtype=np.int64))
    if verdicts is None:
        return [None] * len(rows)
    assert len(verdicts.codes) == len(rows)
    return [None if c == 0 else verdicts.statuses[c - 1] for c in verdicts.codes.tolist()]


def per_node_scores(
    plugin: NodeAffinity, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> tuple[list[int], list[int]]:
    infos = [snapshot.list()[r] for r in rows]
    state = CycleState()
    raw = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        raw.append(score)
    listed = [NodeScore(info.name, s) for info, s in zip(infos, raw, strict=True)]
    assert plugin.normalize_score(state, pod, listed) is None
    return raw, [s.score for s in listed]


def vector_scores(
    plugin: NodeAffinity, snapshot: Snapshot, pod: Pod, rows: list[int]
) -> tuple[list[int], list[int]]:
    assert snapshot.table is not None
    state = CycleState()
    raw = plugin.score_nodes(state, pod, snapshot.table, np.array(rows, dtype=np.int64))
    assert raw.dtype == np.int64
    return raw.tolist(), plugin.normalize_scores(state, pod, raw).tolist()


def assert_same(plugin: NodeAffinity, snapshot: Snapshot, pod: Pod, rows: list[int]) -> None:
    # With the PreFilter state, as a profile runs it (unless PreFilter skips or rejects)...
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snapshot.list())
    if status is None:
        assert vector_filter(plugin, state, snapshot, pod, rows) == per_node_filter(
            plugin, state, snapshot, pod, rows
        )
    elif status.code is Code.SKIP:
        # The runner would not call Filter; were it called, nothing would fail.
        assert vector_filter(plugin, state, snapshot, pod, rows) == [None] * len(rows)
    # ... and without it, as a profile with PreFilter disabled.
    bare = CycleState()
    assert vector_filter(plugin, bare, snapshot, pod, rows) == per_node_filter(
        plugin, bare, snapshot, pod, rows
    )
    assert vector_scores(plugin, snapshot, pod, rows) == per_node_scores(
        plugin, snapshot, pod, rows
    )


@settings(deadline=None, max_examples=300)
@given(
    cluster=nodes(),
    incoming=st.lists(pods(), min_size=1, max_size=3),
    args=plugin_args(),
    data=st.data(),
)
def test_vector_forms_agree_with_the_per_node_ones_on_random_clusters(
    cluster: list[Node], incoming: list[Pod], args: dict[str, Any] | None, data: st.DataObject
) -> None:
    bound = [make_pod(f"bound-{i}").node(n.name).obj() for i, n in enumerate(cluster[:2])]
    snapshot = Snapshot.from_objects(cluster, bound, columnar=True)
    # Without a handle every selector is matched over the table (and remembered); with
    # one, a few rows (a PreFilterResult's) are matched node by node.
    plugins = [
        nodeaffinity.new(args, None),  # type: ignore[arg-type]
        nodeaffinity.new(args, PluginHandle(snapshot)),
    ]
    order = data.draw(st.permutations(range(len(cluster))))
    rows = order[: data.draw(st.integers(0, len(cluster)))]
    for plugin in plugins:
        for pod in incoming:
            assert_same(plugin, snapshot, pod, rows)
    # Pods coming and going change nothing here; the answers must stay the same.
    snapshot.add_pod(make_pod("extra").node(cluster[-1].name).obj())
    assert snapshot.remove_pod(bound[0])
    for plugin in plugins:
        for pod in incoming:
            assert_same(plugin, snapshot, pod, rows)
    # A new table (nodes changed) is not answered from the old one's memo, nor from the
    # handle's snapshot, which is not the one the table belongs to.
    relabeled = [make_node(n.name).label("zone", "a").obj() for n in cluster]
    rebuilt = Snapshot.from_objects(relabeled, [], columnar=True)
    for plugin in plugins:
        assert_same(plugin, rebuilt, incoming[0], list(range(len(cluster))))


# --- plain cases --------------------------------------------------------------------------

ZONE_A = {"key": "zone", "operator": "In", "values": ["a"]}
ZONE_B = {"key": "zone", "operator": "In", "values": ["b"]}


def labeled(name: str, **labels: str) -> Node:
    return make_node(name).labels(labels).obj()


@pytest.mark.parametrize(
    ("pod", "args", "expected"),
    [
        pytest.param(
            make_pod("p").node_selector({"zone": "a"}).obj(),
            None,
            [None, ERR_POD, ERR_POD],
            id="nodeSelector keeps the nodes with the label value",
        ),
        pytest.param(
            make_pod("p").node_selector({"zone": "a", "tier": "x"}).obj(),
            None,
            [ERR_POD, ERR_POD, ERR_POD],
            id="every nodeSelector label must match",
        ),
        pytest.param(
            make_pod("p")
            .node_affinity_term([ZONE_B])
            .node_affinity_term([], [{"key": "metadata.name", "operator": "In", "values": ["n3"]}])
            .obj(),
            None,
            [ERR_POD, None, None],
            id="required terms are ORed, matchFields on the node name",
        ),
        pytest.param(
            make_pod("p").node_selector({"zone": "b"}).obj(),
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [ZONE_A]}]
                    }
                }
            },
            [ERR_POD, ERR_ENFORCED, ERR_ENFORCED],
            id="the enforced affinity is checked first and its reason wins",
        ),
        pytest.param(
            make_pod("p").obj(),
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            },
            [ERR_ENFORCED, ERR_ENFORCED, ERR_ENFORCED],
            id="an enforced affinity without terms matches no node",
        ),
        pytest.param(
            make_pod("p").obj(),
            None,
            [None, None, None],
            id="a pod without constraints passes everywhere",
        ),
    ],
)
def test_filter_nodes(pod: Pod, args: dict[str, Any] | None, expected: list[Status | None]) -> None:
    cluster = [labeled("n1", zone="a"), labeled("n2", zone="b"), labeled("n3")]
    snapshot = Snapshot.from_objects(cluster, [], columnar=True)
    assert snapshot.table is not None
    plugin = nodeaffinity.new(args, None)  # type: ignore[arg-type]
    rows = [snapshot.table.rows[n.name] for n in cluster]
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    assert vector_filter(plugin, state, snapshot, pod, rows) == expected
    assert per_node_filter(plugin, state, snapshot, pod, rows) == expected


def test_filter_nodes_is_none_for_an_unconstrained_pod() -> None:
    snapshot = Snapshot.from_objects([labeled("n1")], [], columnar=True)
    assert snapshot.table is not None
    plugin = nodeaffinity.new(None, None)  # type: ignore[arg-type]
    rows = np.array([0], dtype=np.int64)
    assert plugin.filter_nodes(CycleState(), make_pod("p").obj(), snapshot.table, rows) is None


@pytest.mark.parametrize(
    ("pod", "args", "raw", "normalized"),
    [
        pytest.param(
            make_pod("p").obj(), None, [0, 0, 0], [0, 0, 0], id="no preferred terms scores zero"
        ),
        pytest.param(
            make_pod("p")
            .preferred_node_affinity(2, [ZONE_A])
            .preferred_node_affinity(5, [{"key": "zone", "operator": "Exists"}])
            .obj(),
            None,
            [7, 5, 0],
            [100, 71, 0],
            id="weights of matching terms add up and scale to the highest",
        ),
        pytest.param(
            make_pod("p").preferred_node_affinity(3, [ZONE_B]).obj(),
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 4, "preference": {"matchExpressions": [ZONE_A]}}
                    ]
                }
            },
            [4, 3, 0],
            [100, 75, 0],
            id="the added preferred terms count with the pod's",
        ),
    ],
)
def test_score_nodes(
    pod: Pod, args: dict[str, Any] | None, raw: list[int], normalized: list[int]
) -> None:
    cluster = [labeled("n1", zone="a"), labeled("n2", zone="b"), labeled("n3")]
    snapshot = Snapshot.from_objects(cluster, [], columnar=True)
    assert snapshot.table is not None
    plugin = nodeaffinity.new(args, None)  # type: ignore[arg-type]
    rows = [snapshot.table.rows[n.name] for n in cluster]
    assert vector_scores(plugin, snapshot, pod, rows) == (raw, normalized)
    assert per_node_scores(plugin, snapshot, pod, rows) == (raw, normalized)


def test_the_plugin_offers_the_vector_protocols() -> None:
    plugin = nodeaffinity.new(None, None)  # type: ignore[arg-type]
    assert isinstance(plugin, VectorFilterPlugin)
    assert isinstance(plugin, VectorScorePlugin)
    assert isinstance(plugin.score_extensions(), VectorScoreExtensions)
