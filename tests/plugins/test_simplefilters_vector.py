"""NodeUnschedulable's, NodeName's and NodePorts' ``filter_nodes`` give the per-node
answers, node for node, for random clusters and pods (and, for NodePorts, again after
pods come and go)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.vector import VectorFilterPlugin
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import nodename, nodeports, nodeunschedulable
from kubesched.testing.wrappers import make_node, make_pod


def handle(snapshot: Snapshot) -> Any:
    """A stand-in for the framework: the plugins only read its snapshot here."""
    return SimpleNamespace(snapshot=snapshot)


def assert_same_filter(
    plugin: Any, state: CycleState, pod: Pod, snapshot: Snapshot, rows: np.ndarray
) -> list[Status | None]:
    """Compare every row; return the verdicts (to check the tests exercise rejections)."""
    table = snapshot.table
    assert table is not None
    infos = snapshot.list()
    verdicts = plugin.filter_nodes(state, pod, table, rows)
    got_all = []
    for i, row in enumerate(rows.tolist()):
        expected = plugin.filter(state, pod, infos[row])
        got = None
        if verdicts is not None and verdicts.codes[i]:
            got = verdicts.statuses[int(verdicts.codes[i]) - 1]
        assert got == expected, infos[row].name
        got_all.append(got)
    return got_all


@st.composite
def row_orders(draw: st.DrawFn, size: int) -> np.ndarray:
    order = draw(st.permutations(range(size)))
    keep = draw(st.integers(1, size))
    return np.array(order[:keep], dtype=np.int64)


# --- NodeUnschedulable ----------------------------------------------------------------------

UNSCHEDULABLE_TOLERATIONS = [
    None,
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "operator": "Exists"},
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute", "operator": "Exists"},
    {"operator": "Exists"},
    {"key": "other", "operator": "Exists"},
]


@settings(deadline=None, max_examples=80)
@given(
    cordoned=st.lists(st.booleans(), min_size=1, max_size=10),
    toleration=st.sampled_from(UNSCHEDULABLE_TOLERATIONS),
    data=st.data(),
)
def test_node_unschedulable_vector_filter_matches_per_node(
    cordoned: list[bool], toleration: dict[str, str] | None, data: st.DataObject
) -> None:
    nodes = [make_node(f"n{i}").unschedulable(c).obj() for i, c in enumerate(cordoned)]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    wrapper = make_pod("p")
    if toleration is not None:
        wrapper = wrapper.toleration(**toleration)
    plugin = nodeunschedulable.new(None, handle(snapshot))
    rows = data.draw(row_orders(len(nodes)))
    assert_same_filter(plugin, CycleState(), wrapper.obj(), snapshot, rows)


def test_node_unschedulable_rejects_only_cordoned_rows() -> None:
    nodes = [make_node(f"n{i}").unschedulable(i % 2 == 1).obj() for i in range(4)]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    plugin = nodeunschedulable.NodeUnschedulable()
    rows = np.array([3, 2, 1, 0], dtype=np.int64)
    got = assert_same_filter(plugin, CycleState(), make_pod("p").obj(), snapshot, rows)
    rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))
    assert got == [rejected, None, rejected, None]
    tolerant = make_pod("p").toleration("node.kubernetes.io/unschedulable", operator="Exists")
    table = snapshot.table
    assert table is not None
    assert plugin.filter_nodes(CycleState(), tolerant.obj(), table, rows) is None


# --- NodeName -----------------------------------------------------------------------------


@settings(deadline=None, max_examples=60)
@given(
    size=st.integers(1, 8), target=st.sampled_from(["", "n0", "n3", "elsewhere"]), data=st.data()
)
def test_node_name_vector_filter_matches_per_node(
    size: int, target: str, data: st.DataObject
) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(size)]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    wrapper = make_pod("p")
    if target:
        wrapper = wrapper.node(target)
    rows = data.draw(row_orders(size))
    assert_same_filter(nodename.NodeName(), CycleState(), wrapper.obj(), snapshot, rows)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        pytest.param("", [False, False, False], id="no node name passes everywhere"),
        pytest.param("n1", [True, False, True], id="only the named node passes"),
        pytest.param(
            "gone", [True, True, True], id="a node name not in the cluster fails everywhere"
        ),
    ],
)
def test_node_name_filter_nodes_cases(target: str, expected: list[bool]) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(3)]
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    wrapper = make_pod("p")
    if target:
        wrapper = wrapper.node(target)
    rows = np.array([0, 1, 2], dtype=np.int64)
    got = assert_same_filter(nodename.NodeName(), CycleState(), wrapper.obj(), snapshot, rows)
    rejected = Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",)
    )
    assert got == [rejected if e else None for e in expected]


# --- NodePorts ----------------------------------------------------------------------------

ports = st.tuples(
    st.sampled_from([80, 443, 8080]),
    st.sampled_from(["TCP", "UDP"]),
    st.sampled_from(["", "0.0.0.0", "127.0.0.1", "10.0.0.1"]),
)


def with_ports(name: str, wanted: list[tuple[int, str, str]], node: str = "") -> Pod:
    wrapper = make_pod(name)
    for port, protocol, host_ip in wanted:
        wrapper = wrapper.host_port(port, protocol, host_ip)
    if not wanted:
        wrapper = wrapper.container("pause")
    if node:
        wrapper = wrapper.node(node)
    return wrapper.obj()


@st.composite
def port_clusters(draw: st.DrawFn) -> tuple[list[Node], list[Pod]]:
    nodes = [make_node(f"n{i}").obj() for i in range(draw(st.integers(1, 8)))]
    bound = [
        with_ports(
            f"b{j}",
            draw(st.lists(ports, max_size=2)),
            nodes[draw(st.integers(0, len(nodes) - 1))].name,
        )
        for j in range(draw(st.integers(0, 8)))
    ]
    return nodes, bound


def ports_cycle(plugin: Any, pod: Pod, snapshot: Snapshot, rows: np.ndarray) -> None:
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snapshot.list())
    if status is not None:
        assert status.code is Code.SKIP
        assert not pod.host_ports
        return
    assert_same_filter(plugin, state, pod, snapshot, rows)


@settings(deadline=None, max_examples=100)
@given(
    cluster=port_clusters(),
    wanted=st.lists(ports, max_size=3),
    data=st.data(),
)
def test_node_ports_vector_filter_matches_per_node(
    cluster: tuple[list[Node], list[Pod]], wanted: list[tuple[int, str, str]], data: st.DataObject
) -> None:
    nodes, bound = cluster
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    plugin = nodeports.new(None, handle(snapshot))
    pod = with_ports("p", wanted)
    ports_cycle(plugin, pod, snapshot, data.draw(row_orders(len(nodes))))
    added = with_ports("added", data.draw(st.lists(ports, max_size=2)), nodes[0].name)
    snapshot.add_pod(added)
    ports_cycle(plugin, pod, snapshot, data.draw(row_orders(len(nodes))))
    for gone in [added, *bound[:2]]:
        assert snapshot.remove_pod(gone)
        ports_cycle(plugin, pod, snapshot, data.draw(row_orders(len(nodes))))


def test_node_ports_rejects_only_nodes_using_the_port() -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(4)]
    bound = [
        with_ports("tcp80", [(80, "TCP", "")], "n1"),
        with_ports("udp80", [(80, "UDP", "")], "n2"),
        with_ports("tcp80-local", [(80, "TCP", "127.0.0.1")], "n3"),
    ]
    snapshot = Snapshot.from_objects(nodes, bound, columnar=True)
    plugin = nodeports.new(None, handle(snapshot))
    state = CycleState()
    pod = with_ports("p", [(80, "TCP", "10.0.0.1")])
    plugin.pre_filter(state, pod, snapshot.list())
    rows = np.arange(4, dtype=np.int64)
    got = assert_same_filter(plugin, state, pod, snapshot, rows)
    rejected = Status(
        Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",)
    )
    assert got == [None, rejected, None, None]


def test_node_ports_without_prefilter_state_is_an_error_everywhere() -> None:
    snapshot = Snapshot.from_objects([make_node("n").obj()], [], columnar=True)
    plugin = nodeports.new(None, handle(snapshot))
    table = snapshot.table
    assert table is not None
    verdicts = plugin.filter_nodes(CycleState(), make_pod("p").obj(), table, np.array([0]))
    assert verdicts is not None
    assert verdicts.statuses == (
        Status.error('reading "PreFilterNodePorts" from cycleState: not found'),
    )
    assert verdicts.codes.tolist() == [1]


def test_node_ports_needs_the_snapshot_behind_the_table() -> None:
    nodes = [make_node("n").obj()]
    snapshot = Snapshot.from_objects(
        nodes, [with_ports("b", [(80, "TCP", "")], "n")], columnar=True
    )
    other = Snapshot.from_objects(nodes, [with_ports("b", [(80, "TCP", "")], "n")], columnar=True)
    plugin = nodeports.new(None, handle(other))
    state = CycleState()
    pod = with_ports("p", [(80, "TCP", "")])
    plugin.pre_filter(state, pod, snapshot.list())
    table = snapshot.table
    assert table is not None
    with pytest.raises(LookupError):
        plugin.filter_nodes(state, pod, table, np.array([0]))


def test_plugins_implement_the_vector_filter_protocol() -> None:
    assert isinstance(nodeunschedulable.NodeUnschedulable(), VectorFilterPlugin)
    assert isinstance(nodename.NodeName(), VectorFilterPlugin)
    assert isinstance(nodeports.NodePorts(), VectorFilterPlugin)
