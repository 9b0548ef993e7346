"""PodTopologySpread PreScore, Score and NormalizeScore.

The tables reproduce upstream's ``scoring_test.go`` (TestPreScoreSkip,
TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore), release 1.34 with every
feature gate at its default.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.node import LABEL_HOSTNAME, LABEL_ZONE, Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Workload
from kubesched.objects.selectors import LabelSelector, selector_from_set
from kubesched.plugins.podtopologyspread import PodTopologySpread, new
from kubesched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    topology_normalizing_weight,
)
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
SA = "ScheduleAnyway"
DNS = "DoNotSchedule"
HOST = LABEL_HOSTNAME
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
LIST = {"defaultingType": "List"}
SYSTEM = {"defaultingType": "System"}


def node(name: str, *labels: str, hostname: bool = True, taint: bool = False) -> Node:
    """A node with ``labels`` (``key=value``); the hostname label unless told not to."""
    w = make_node(name)
    if not hostname:
        w.raw["metadata"]["labels"] = {}
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    if taint:
        w.taint(UNSCHEDULABLE_TAINT)
    return w.obj()


def pod(name: str, node_name: str, *labels: str, ns: str = "") -> Pod:
    w = make_pod(name).node(node_name)
    if ns:
        w.namespace(ns)
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    return w.obj()


def incoming(*labels: str) -> Any:
    w = make_pod("p")
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    return w


def plugin_for(
    nodes: list[Node], pods: list[Pod], args: dict[str, Any], workloads: tuple[Workload, ...] = ()
) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = Snapshot.from_objects(nodes, pods)
    return new(args, PluginHandle(snapshot, workloads=workloads)), snapshot  # type: ignore[arg-type]


def filtered(nodes: list[Node]) -> list[NodeInfo]:
    """Feasible nodes as the framework passes them: NodeInfos of the nodes."""
    return [NodeInfo(n) for n in nodes]


RS_FOO = Workload("ReplicaSet", "default", "rs1", LabelSelector.from_dict(FOO))

SKIP_CASES = [
    pytest.param(
        incoming(),
        [node("node-a"), node("node-b")],
        LIST,
        (),
        id="the-pod-has-no-soft-constraints",
    ),
    pytest.param(
        incoming("foo=bar", "baz=sup"),
        [node("node-a", "planet=mars")],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}
            ],
        },
        (
            Workload(
                "ReplicaSet",
                "default",
                "rs1",
                LabelSelector.from_dict(
                    {"matchExpressions": [{"key": "tar", "operator": "Exists"}]}
                ),
            ),
        ),
        id="default-constraints-and-a-replicaset-that-does-not-match",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", DNS, FOO),
        [node("node-a", "zone=zone1")],
        LIST,
        (),
        id="the-pod-has-only-hard-constraints",
    ),
]


@pytest.mark.parametrize(("incoming_pod", "nodes", "args", "workloads"), SKIP_CASES)
def test_pre_score_skip(incoming_pod, nodes, args, workloads):
    pl, _ = plugin_for(nodes, [], args, workloads)
    state = CycleState()
    assert pl.pre_score(state, incoming_pod.obj(), filtered(nodes)) == Status.skip()
    assert state.get(PRE_SCORE_STATE_KEY) is None


def test_pre_score_skips_without_nodes():
    pl, _ = plugin_for([], [], LIST)
    p = incoming("foo").spread_constraint(1, "zone", SA, FOO).obj()
    assert pl.pre_score(CycleState(), p, []) == Status.skip()


W = topology_normalizing_weight
ZONE_3 = [
    node("node-a", "zone=zone1"),
    node("node-b", "zone=zone1"),
    node("node-x", "zone=zone2"),
]
AFF_NODES = [
    node("node-a", "zone=zone1", "foo"),
    node("node-b", "zone=zone1", "foo"),
    node("node-x", "zone=zone2"),
]

# id, incoming pod, nodes (all feasible), args, workloads, expected
# (constraint keys and skews, ignored nodes, pod counts, weights)
PRE_SCORE_STATE_CASES = [
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOST, SA, FOO),
        ZONE_3,
        LIST,
        (),
        ([(1, "zone"), (1, HOST)], set(), [{"zone1": 0, "zone2": 0}, {}], [W(2), W(3)]),
        id="normal-case",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, None),
        ZONE_3,
        LIST,
        (),
        ([(1, "zone")], set(), [{"zone1": 0, "zone2": 0}], [W(2)]),
        id="null-selector",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, FOO).spread_constraint(1, HOST, SA, BAR),
        [node("node-a", "zone=zone1"), node("node-b", "zone=zone1"), node("node-x")],
        LIST,
        (),
        ([(1, "zone"), (1, HOST)], {"node-x"}, [{"zone1": 0}, {}], [W(1), W(2)]),
        id="node-x-without-a-zone-label-is-ignored",
    ),
    pytest.param(
        incoming("foo=tar", "baz=sup"),
        [
            node("node-a", f"{LABEL_ZONE}=mars"),
            node("node-b", f"{LABEL_ZONE}=mars"),
            # Nodes without a zone are not excluded: they form a zone of their own.
            node("node-c"),
            node("node-d"),
        ],
        SYSTEM,
        (RS_FOO,),
        ([(3, HOST), (5, LABEL_ZONE)], set(), [{}, {"mars": 0, "": 0}], [W(4), W(2)]),
        id="system-default-constraints-and-a-replicaset",
    ),
    pytest.param(
        incoming("foo=tar", "baz=sup"),
        [node("node-a", "rack=rack1", "planet=mars")],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
            ],
        },
        (RS_FOO,),
        ([(1, HOST), (2, "planet")], set(), [{}, {"mars": 0}], [W(1), W(1)]),
        id="default-constraints-and-a-replicaset",
    ),
    pytest.param(
        incoming("foo=bar", "baz=sup")
        .spread_constraint(1, "zone", DNS, BAR)
        .spread_constraint(2, "planet", SA, {"matchLabels": {"baz": "sup"}}),
        [node("node-a", "planet=mars", "galaxy=andromeda")],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SA}
            ],
        },
        (RS_FOO,),
        ([(2, "planet")], set(), [{"mars": 0}], [W(1)]),
        id="default-constraints-and-a-replicaset-but-the-pod-has-constraints",
    ),
    pytest.param(
        incoming("foo").node_selector({"foo": ""}).spread_constraint(1, "zone", SA, BAR),
        AFF_NODES,
        LIST,
        (),
        ([(1, "zone")], set(), [{"zone1": 0, "zone2": 0}], [W(2)]),
        id="node-affinity-policy-honored-keeps-feasible-domains",
    ),
    pytest.param(
        incoming("foo").spread_constraint(1, "zone", SA, BAR, node_taints_policy="Honor"),
        [
            node("node-a", "zone=zone1", "foo"),
            node("node-b", "zone=zone1", "foo"),
            node("node-x", "zone=zone2", taint=True),
        ],
        LIST,
        (),
        ([(1, "zone")], set(), [{"zone1": 0, "zone2": 0}], [W(2)]),
        id="node-taints-policy-honored-keeps-feasible-domains",
    ),
]


@pytest.mark.parametrize(
    ("incoming_pod", "nodes", "args", "workloads", "want"), PRE_SCORE_STATE_CASES
)
def test_pre_score_state(incoming_pod, nodes, args, workloads, want):
    pl, _ = plugin_for(nodes, [], args, workloads)
    state = CycleState()
    assert pl.pre_score(state, incoming_pod.obj(), filtered(nodes)) is None
    s = state.read(PRE_SCORE_STATE_KEY)
    got = (
        [(c.max_skew, c.topology_key) for c in s.constraints],
        s.ignored_nodes,
        s.pod_counts,
        s.normalizing_weight,
    )
    assert got == want


def test_default_constraints_use_the_workload_selector():
    pl, _ = plugin_for([node("node-a", f"{LABEL_ZONE}=mars")], [], SYSTEM, (RS_FOO,))
    state = CycleState()
    p = incoming("foo=tar").obj()
    assert pl.pre_score(state, p, filtered([node("node-a", f"{LABEL_ZONE}=mars")])) is None
    selectors = {str(c.selector) for c in state.read(PRE_SCORE_STATE_KEY).constraints}
    assert selectors == {"foo"}


def test_normalizing_weight_is_the_log_of_the_domain_count_plus_two():
    assert topology_normalizing_weight(3) == math.log(5)


# matching pods spread as 2/1/0/3 and 4/3/2/1 over node-a..node-d
P_2103 = [
    pod("p-a1", "node-a", "foo"),
    pod("p-a2", "node-a", "foo"),
    pod("p-b1", "node-b", "foo"),
    pod("p-d1", "node-d", "foo"),
    pod("p-d2", "node-d", "foo"),
    pod("p-d3", "node-d", "foo"),
]
P_4321 = [
    *(pod(f"p-a{i}", "node-a", "foo") for i in range(1, 5)),
    *(pod(f"p-b{i}", "node-b", "foo") for i in range(1, 4)),
    *(pod(f"p-c{i}", "node-c", "foo") for i in range(1, 3)),
    pod("p-d1", "node-d", "foo"),
]
P_4213 = [
    *(pod(f"p-a{i}", "node-a", "foo") for i in range(1, 5)),
    pod("p-b1", "node-b", "foo"),
    pod("p-b2", "node-b", "foo"),
    pod("p-x1", "node-x", "foo"),
    *(pod(f"p-y{i}", "node-y", "foo") for i in range(1, 4)),
]
ABCD = [node("node-a"), node("node-b"), node("node-c"), node("node-d")]
NODE_ABC = [
    node("node-a", "node=node-a"),
    node("node-b", "node=node-b"),
    node("node-c", "node=node-c"),
]
POLICY_PODS = [
    pod("p-a1", "node-a", "foo"),
    pod("p-a2", "node-a", "foo"),
    pod("p-b1", "node-b", "foo"),
    pod("p-c1", "node-c", "foo"),
]
POLICY_NODES = [
    node("node-a", "node=node-a", "foo"),
    node("node-b", "node=node-b", "foo"),
    node("node-c", "node=node-c"),
]
ZONED_ABCD = [
    node("node-a", "zone=zone1"),
    node("node-b", "zone=zone1"),
    node("node-c", "zone=zone2"),
    node("node-d", "zone=zone2"),
]
ZONED_ABXY = [
    node("node-a", "zone=zone1"),
    node("node-b", "zone=zone1"),
    node("node-x", "zone=zone2"),
    node("node-y", "zone=zone2"),
]


def one(skew: int, key: str, selector: dict[str, Any] | None = FOO, **kw: Any) -> Any:
    return incoming("foo").spread_constraint(skew, key, SA, selector, **kw)


def with_min_domains(p: Pod, min_domains: int) -> Pod:
    """``p`` with minDomains on its ScheduleAnyway constraints, which the API server
    would reject; the plugin must still ignore it."""
    constraints = tuple(
        dataclasses.replace(c, min_domains=min_domains) for c in p.topology_spread_constraints
    )
    return dataclasses.replace(p, topology_spread_constraints=constraints)


# id, incoming pod, feasible nodes, failed nodes, existing pods, workloads, expected scores
SCORE_CASES = [
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b")],
        [],
        [],
        (),
        {"node-a": 100, "node-b": 100},
        id="one-constraint-on-node-no-existing-pods",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a")],
        [node("node-b")],
        [pod("p-a1", "node-a", "foo"), pod("p-a2", "node-a", "foo"), pod("p-b1", "node-b", "foo")],
        (),
        {"node-a": 100},
        id="one-constraint-on-node-only-one-candidate",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b")],
        [],
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo")],
        (),
        {"node-a": 100, "node-b": 100},
        id="one-constraint-on-node-same-number-of-matching-pods",
    ),
    pytest.param(
        one(1, HOST),
        ABCD,
        [],
        P_2103,
        (),
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
        id="one-constraint-on-node-all-4-nodes-candidates",
    ),
    pytest.param(
        one(1, HOST, None),
        ABCD,
        [],
        P_2103,
        (),
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
        id="one-constraint-on-node-null-selector",
    ),
    pytest.param(
        one(2, HOST),
        ABCD,
        [],
        P_2103,
        (),
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
        id="one-constraint-on-node-max-skew-2",
    ),
    pytest.param(
        one(3, HOST),
        ABCD,
        [],
        P_4321,
        (),
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="one-constraint-on-node-max-skew-3",
    ),
    pytest.param(
        incoming("foo"),
        ABCD,
        [],
        P_4321,
        (Workload("Service", "default", "svc", selector_from_set({"foo": ""})),),
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
        id="system-defaulting-nodes-without-zone-pods-match-a-service",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b"), node("node-x")],
        [node("node-y")],
        P_4213,
        (),
        {"node-a": 33, "node-b": 83, "node-x": 100},
        id="one-constraint-on-node-3-of-4-nodes-candidates",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b", "n=node-b", hostname=False), node("node-x")],
        [node("node-y")],
        P_4213,
        (),
        {"node-a": 16, "node-b": 0, "node-x": 100},
        id="one-constraint-on-node-a-candidate-lacks-the-topology-key",
    ),
    pytest.param(
        one(1, "zone"),
        ZONED_ABXY[:3],
        [ZONED_ABXY[3]],
        P_4213,
        (),
        {"node-a": 75, "node-b": 75, "node-x": 100},
        id="one-constraint-on-zone-3-of-4-nodes-candidates",
    ),
    pytest.param(
        one(1, "zone").spread_constraint(1, HOST, SA, FOO),
        [ZONED_ABXY[0], ZONED_ABXY[2]],
        [ZONED_ABXY[1], ZONED_ABXY[3]],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-x2", "node-x", "foo"),
            *(pod(f"p-y{i}", "node-y", "foo") for i in range(1, 5)),
        ],
        (),
        {"node-a": 100, "node-x": 63},
        id="two-constraints-on-zone-and-node-2-of-4-nodes-candidates",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, "zone", SA, BAR),
        [node("node-a", "zone=zone1"), node("node-x", "zone=zone2")],
        [node("node-b", "zone=zone1"), node("node-y", "zone=zone2")],
        [
            pod("p-a1", "node-a", "foo", "bar"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "foo", "bar"),
            pod("p-y3", "node-y", "foo"),
        ],
        (),
        {"node-a": 85, "node-x": 100},
        id="two-constraints-on-zone-2-of-4-nodes-candidates",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR),
        ZONED_ABXY,
        [],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "bar"),
        ],
        (),
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
        id="two-constraints-with-different-selectors",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR),
        ZONED_ABXY,
        [],
        [
            pod("p-b1", "node-b", "bar"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo", "bar"),
        ],
        (),
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
        id="two-constraints-with-different-selectors-some-nodes-empty",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR),
        ZONED_ABXY[:3],
        [ZONED_ABXY[3]],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "bar"),
        ],
        (),
        {"node-a": 50, "node-b": 25, "node-x": 100},
        id="two-constraints-with-different-selectors-3-of-4-nodes-candidates",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b")],
        [],
        [
            pod("p-a1", "node-a", "foo", ns="ns1"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-b2", "node-b", "foo"),
        ],
        (),
        {"node-a": 100, "node-b": 33},
        id="existing-pods-in-another-namespace-do-not-count",
    ),
    pytest.param(
        one(1, HOST),
        [node("node-a"), node("node-b")],
        [],
        [
            make_pod("p-a").node("node-a").label("foo", "").terminating().obj(),
            pod("p-b", "node-b", "foo"),
        ],
        (),
        {"node-a": 100, "node-b": 0},
        id="terminating-pods-are-excluded",
    ),
    pytest.param(
        with_min_domains(one(2, "node").obj(), 10),
        NODE_ABC,
        [],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-b2", "node-b", "foo"),
            pod("p-c1", "node-c", "foo"),
        ],
        (),
        {"node-a": 75, "node-b": 75, "node-c": 100},
        id="min-domains-has-no-effect-on-schedule-anyway",
    ),
    pytest.param(
        one(1, "node").node_selector({"foo": ""}),
        POLICY_NODES,
        [],
        POLICY_PODS,
        (),
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="node-affinity-policy-honored-with-node-selector",
    ),
    pytest.param(
        one(1, "node", node_affinity_policy="Ignore").node_selector({"foo": ""}),
        POLICY_NODES,
        [],
        POLICY_PODS,
        (),
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="node-affinity-policy-ignored-with-node-selector",
    ),
    pytest.param(
        one(1, "node").node_affinity_in("foo", [""]),
        POLICY_NODES,
        [],
        POLICY_PODS,
        (),
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="node-affinity-policy-honored-with-node-affinity",
    ),
    pytest.param(
        one(1, "node", node_affinity_policy="Ignore").node_affinity_in("foo", [""]),
        POLICY_NODES,
        [],
        POLICY_PODS,
        (),
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="node-affinity-policy-ignored-with-node-affinity",
    ),
    pytest.param(
        one(1, "node", node_taints_policy="Honor"),
        [
            node("node-a", "node=node-a"),
            node("node-b", "node=node-b"),
            node("node-c", "node=node-c", taint=True),
        ],
        [],
        POLICY_PODS,
        (),
        {"node-a": 0, "node-b": 33, "node-c": 100},
        id="node-taints-policy-honored",
    ),
    pytest.param(
        one(1, "node"),
        [
            node("node-a", "node=node-a"),
            node("node-b", "node=node-b"),
            node("node-c", "node=node-c", taint=True),
        ],
        [],
        POLICY_PODS,
        (),
        {"node-a": 66, "node-b": 100, "node-c": 100},
        id="node-taints-policy-ignored",
    ),
    pytest.param(
        incoming("foo", "bar")
        .spread_constraint(1, "zone", SA, {}, match_label_keys=["foo"])
        .spread_constraint(1, HOST, SA, {}, match_label_keys=["bar"]),
        ZONED_ABCD,
        [],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-c", "foo"),
            pod("p-y2", "node-c", "bar"),
        ],
        (),
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="match-label-keys-anded-with-an-empty-selector",
    ),
    pytest.param(
        incoming("foo", "bar", "baz")
        .spread_constraint(1, "zone", SA, FOO)
        .spread_constraint(1, HOST, SA, BAR, match_label_keys=["baz"]),
        ZONED_ABCD,
        [],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar", "baz"),
            pod("p-c1", "node-c", "foo"),
            pod("p-c2", "node-c", "bar"),
            pod("p-d3", "node-c", "bar", "baz"),
        ],
        (),
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
        id="match-label-keys-anded-with-a-non-empty-selector",
    ),
    pytest.param(
        one(1, HOST, {}),
        [node("node-a"), node("node-b")],
        [],
        [pod("p-a1", "node-a", "foo"), pod("p-a2", "node-a", "foo")],
        (),
        {"node-a": 100, "node-b": 100},
        id="empty-selector-counts-no-pod-as-in-1.34",
    ),
]


@pytest.mark.parametrize(
    ("incoming_pod", "nodes", "failed", "pods", "workloads", "want"), SCORE_CASES
)
def test_pod_topology_spread_score(incoming_pod, nodes, failed, pods, workloads, want):
    # As upstream's table, the plugin runs with the system defaults (List only matters
    # for pods without constraints, where it would change the defaults used).
    pl, snapshot = plugin_for([*nodes, *failed], pods, SYSTEM, workloads)
    p = incoming_pod if isinstance(incoming_pod, Pod) else incoming_pod.obj()
    state = CycleState()
    assert pl.pre_score(state, p, filtered(nodes)) is None
    scores = []
    for n in nodes:
        value, status = pl.score(state, p, snapshot.get(n.name))
        assert status is None
        scores.append(NodeScore(n.name, value))
    ext = pl.score_extensions()
    assert ext.normalize_score(state, p, scores) is None
    assert {s.name: s.score for s in scores} == want


def test_score_without_pre_score_is_an_error():
    pl, snapshot = plugin_for([node("node-a")], [], LIST)
    value, status = pl.score(CycleState(), incoming().obj(), snapshot.get("node-a"))
    assert (value, status) == (
        0,
        Status.error('reading "PreScorePodTopologySpread" from cycleState: not found'),
    )
