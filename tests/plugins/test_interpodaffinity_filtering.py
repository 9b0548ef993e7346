"""InterPodAffinity PreFilter / Filter / AddPod / RemovePod.

The tables reproduce upstream's ``interpodaffinity/filtering_test.go`` (release-1.34):
TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes,
TestPreFilterStateAddRemovePod, TestPreFilterDisabled, TestPreFilterStateClone and
TestGetTPMapMatchingIncomingAffinityAntiAffinity. Upstream's "invalid label syntax" cases
are not here: such pods fail to decode before any plugin sees them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.interface import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Namespace
from kubesched.plugins.interpodaffinity import NAME, InterPodAffinity, new
from kubesched.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    IncomingTerm,
    PreFilterState,
    incoming_affinity_counts,
)
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

# --- helpers ---------------------------------------------------------------------------


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def sel_in(key: str, *values: str) -> dict[str, Any]:
    return sel(expr(key, "In", *values))


def sel_not_in(key: str, *values: str) -> dict[str, Any]:
    return sel(expr(key, "NotIn", *values))


def sel_exists(key: str) -> dict[str, Any]:
    return sel(expr(key, "Exists"))


def node(name: str, **labels: str) -> Node:
    return make_node(name).labels(labels).obj()


def run_filter(
    pod: Pod, pods: list[Pod], nodes: list[Node], namespaces: Sequence[Namespace] = ()
) -> tuple[Status | None, list[Status | None]]:
    """PreFilter, then Filter on every node unless PreFilter did not succeed."""
    handle = PluginHandle(nodes=nodes, pods=pods, namespaces=namespaces)
    plugin = new(None, handle)
    state = CycleState()
    _, pre_status = plugin.pre_filter(state, pod, handle.snapshot.list())
    if pre_status is not None:
        return pre_status, []
    return None, [plugin.filter(state, pod, handle.snapshot.get(n.name)) for n in nodes]


SKIP = Status(Code.SKIP)
AFFINITY = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
ANTI = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
EXISTING = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)

NAMESPACES = [
    Namespace("subteam1.team1", {"team": "team1"}),
    Namespace("subteam2.team1", {"team": "team1"}),
    Namespace("subteam1.team2", {"team": "team2"}),
    Namespace("subteam2.team2", {"team": "team2"}),
]

# --- TestRequiredAffinitySingleNode ----------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")


def existing() -> Pod:
    return make_pod("existing").labels(POD_LABEL).node("node1").obj()


SINGLE_NODE_CASES = [
    pytest.param(
        make_pod("in").obj(),
        [],
        SKIP,
        None,
        id="a pod without required affinity skips on a node with no existing pods",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel_in("service", "securityscan", "value2"))
        .obj(),
        [existing()],
        None,
        None,
        id="affinity with In matching the existing pod is satisfied",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel_not_in("service", "securityscan3", "value3"))
        .obj(),
        [existing()],
        None,
        None,
        id="affinity with NotIn matching the existing pod is satisfied",
    ),
    pytest.param(
        # Upstream leaves topologyKey empty here; the API requires one, and "region" keeps
        # the point of the case: the namespace differs.
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity(
            "region", sel_in("service", "securityscan", "value2"), namespaces=["DiffNameSpace"]
        )
        .obj(),
        [make_pod("existing").namespace("ns").labels(POD_LABEL).node("node1").obj()],
        None,
        [AFFINITY],
        id="affinity is not satisfied by a pod in another namespace",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL)
        .pod_affinity("region", sel_in("service", "antivirusscan", "value2"))
        .obj(),
        [existing()],
        None,
        [AFFINITY],
        id="affinity is not satisfied when the label selector does not match the existing pod",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")))
        .pod_affinity(
            "region",
            sel(expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")),
        )
        .obj(),
        [existing()],
        None,
        None,
        id="affinity with different operators in several terms is satisfied",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")))
        .pod_affinity(
            "region",
            sel(expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")),
        )
        .obj(),
        [existing()],
        None,
        [AFFINITY],
        id="match expressions are ANDed so one failing expression fails the affinity",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel_in("service", "securityscan", "value2"))
        .pod_anti_affinity("node", sel_in("service", "antivirusscan", "value2"))
        .obj(),
        [existing()],
        None,
        None,
        id="affinity and anti-affinity are both satisfied by the existing pod",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel_in("service", "securityscan", "value2"))
        .pod_anti_affinity("node", sel_in("service", "antivirusscan", "value2"))
        .obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity("node", sel_in("service", "antivirusscan", "value2"))
            .obj()
        ],
        None,
        None,
        id="affinity, anti-affinity and the existing pod's anti-affinity are all satisfied",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity("region", sel_in("service", "securityscan", "value2"))
        .pod_anti_affinity("zone", sel_in("service", "securityscan", "value2"))
        .obj(),
        [existing()],
        None,
        [ANTI],
        id="affinity is satisfied but anti-affinity is not",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL)
        .pod_affinity("region", sel_in("service", "securityscan", "value2"))
        .pod_anti_affinity("node", sel_in("service", "antivirusscan", "value2"))
        .obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity("zone", sel_in("service", "securityscan", "value2"))
            .obj()
        ],
        None,
        [EXISTING],
        id="the pod's terms are satisfied but the existing pod's anti-affinity is not",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL)
        .pod_affinity("region", sel_not_in("service", "securityscan", "value2"))
        .obj(),
        [make_pod("existing").label("service", "securityscan").node("node2").obj()],
        None,
        [AFFINITY],
        id="a pod not matching its own affinity cannot start a group",
    ),
    pytest.param(
        make_pod("in").labels(POD_LABEL).obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity("zone", sel_in("service", "securityscan", "value2"))
            .obj()
        ],
        None,
        [EXISTING],
        id="an existing pod's anti-affinity is respected when the pod has none",
    ),
    pytest.param(
        make_pod("in").labels(POD_LABEL).obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity("zone", sel_not_in("service", "securityscan", "value2"))
            .obj()
        ],
        SKIP,
        None,
        id="an existing pod's anti-affinity not selecting the pod leaves nothing to filter",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL)
        .pod_anti_affinity("region", sel_exists("service"))
        .pod_anti_affinity("region", sel_exists("security"))
        .obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL2)
            .node("node1")
            .pod_anti_affinity("zone", sel_exists("security"))
            .obj()
        ],
        None,
        [ANTI],
        id="the pod's anti-affinity is checked before the existing pod's",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL)
        .pod_anti_affinity("zone", sel_exists("service"))
        .pod_anti_affinity("zone", sel_exists("security"))
        .obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL2)
            .node("node1")
            .pod_anti_affinity("zone", sel_exists("security"))
            .obj()
        ],
        None,
        [ANTI],
        id="symmetry a1: one of the pod's anti-affinity terms matches the existing pod",
    ),
    pytest.param(
        make_pod("in").labels(POD_LABEL2).pod_anti_affinity("zone", sel_exists("security")).obj(),
        [
            make_pod("existing")
            .labels(POD_LABEL)
            .node("node1")
            .pod_anti_affinity("zone", sel_exists("service"))
            .pod_anti_affinity("zone", sel_exists("security"))
            .obj()
        ],
        None,
        [EXISTING],
        id="symmetry a2: one of the existing pod's anti-affinity terms matches the pod",
    ),
    pytest.param(
        make_pod("in")
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity("zone", sel_exists("abc"))
        .pod_anti_affinity("zone", sel_exists("def"))
        .obj(),
        [
            make_pod("existing")
            .labels({"def": "", "xyz": ""})
            .node("node1")
            .pod_anti_affinity("zone", sel_exists("abc"))
            .pod_anti_affinity("zone", sel_exists("def"))
            .obj()
        ],
        None,
        [ANTI],
        id="symmetry b1: both pods' anti-affinity partially match each other",
    ),
    pytest.param(
        make_pod("in")
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity("zone", sel_exists("abc"))
        .pod_anti_affinity("zone", sel_exists("def"))
        .obj(),
        [
            make_pod("existing")
            .labels({"abc": "", "xyz": ""})
            .node("node1")
            .pod_anti_affinity("zone", sel_exists("abc"))
            .pod_anti_affinity("zone", sel_exists("def"))
            .obj()
        ],
        None,
        [ANTI],
        id="symmetry b2: both pods' anti-affinity partially match each other",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity(
            "region",
            sel_in("service", "securityscan", "value2"),
            namespace_selector=sel_in("team", "team1"),
        )
        .obj(),
        [make_pod("existing").namespace("subteam1.team1").labels(POD_LABEL).node("node1").obj()],
        None,
        None,
        id="affinity with a namespaceSelector selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod("in")
        .labels(POD_LABEL2)
        .pod_affinity(
            "region",
            sel_in("service", "securityscan", "value2"),
            namespace_selector=sel_in("team", "team1"),
        )
        .obj(),
        [make_pod("existing").namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()],
        None,
        [AFFINITY],
        id="affinity with a namespaceSelector not selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod("in")
        .namespace("subteam1.team1")
        .labels(POD_LABEL2)
        .pod_anti_affinity(
            "zone",
            sel_in("service", "securityscan", "value2"),
            namespace_selector=sel_in("team", "team1"),
        )
        .obj(),
        [make_pod("existing").namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()],
        None,
        [ANTI],
        id="anti-affinity with a namespaceSelector selecting the existing pod's namespace",
    ),
    pytest.param(
        make_pod("in")
        .namespace("subteam1.team1")
        .labels(POD_LABEL2)
        .pod_anti_affinity(
            "zone", sel_in("service", "securityscan", "value2"), namespace_selector={}
        )
        .obj(),
        [make_pod("existing").namespace("subteam2.team1").labels(POD_LABEL).node("node1").obj()],
        None,
        [ANTI],
        id="anti-affinity with the empty namespaceSelector selecting every namespace",
    ),
    pytest.param(
        make_pod("in")
        .namespace("subteam1.team1")
        .labels(POD_LABEL2)
        .pod_anti_affinity(
            "zone",
            sel_in("service", "securityscan", "value2"),
            namespace_selector=sel_in("team", "team1"),
        )
        .obj(),
        [make_pod("existing").namespace("subteam1.team2").labels(POD_LABEL).node("node1").obj()],
        None,
        [None],
        id="anti-affinity with a namespaceSelector not selecting the existing pod's namespace",
    ),
]


@pytest.mark.parametrize(("pod", "pods", "want_pre_filter", "want_filter"), SINGLE_NODE_CASES)
def test_required_affinity_single_node(
    pod: Pod, pods: list[Pod], want_pre_filter: Status | None, want_filter: list[Any] | None
) -> None:
    pre_status, statuses = run_filter(pod, pods, [NODE1], NAMESPACES)
    assert pre_status == want_pre_filter
    if want_pre_filter is None:
        assert statuses == (want_filter or [None])


# --- TestRequiredAffinityMultipleNodes -------------------------------------------------

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def three_regions(*names: str) -> list[Node]:
    a, b, c = names
    return [node(a, **RG_CHINA), node(b, **RG_CHINA_AZ1), node(c, **RG_INDIA)]


def two_nodes(zone_a: str, zone_b: str) -> list[Node]:
    return [
        node("nodeA", region="r1", zone=zone_a, hostname="nodeA"),
        node("nodeB", region="r1", zone=zone_b, hostname="nodeB"),
    ]


MULTI_NODE_CASES = [
    pytest.param(
        make_pod("in").pod_affinity("region", sel_in("foo", "bar")).obj(),
        [make_pod("p1").node("node1").label("foo", "bar").obj()],
        three_regions("node1", "node2", "node3"),
        None,
        [None, None, AFFINITY],
        id="every node sharing the topology value of a matching pod passes affinity",
    ),
    pytest.param(
        make_pod("in")
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity("zone", sel_in("foo", "bar"))
        .pod_affinity("zone", sel_in("service", "securityscan"))
        .obj(),
        [make_pod("p1").node("nodeA").label("foo", "bar").obj()],
        [
            node("nodeA", zone="az1", hostname="h1"),
            node("nodeB", zone="az2", hostname="h2"),
        ],
        None,
        [None, None],
        id="the first pod of a group matching its own affinity may go anywhere",
    ),
    pytest.param(
        make_pod("in")
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity("zone", sel_in("foo", "bar"))
        .pod_affinity("zone", sel_in("service", "securityscan"))
        .obj(),
        [make_pod("p1").node("nodeA").label("foo", "bar").obj()],
        [
            node("nodeA", zoneLabel="az1", hostname="h1"),
            node("nodeB", zoneLabel="az2", hostname="h2"),
        ],
        None,
        [AFFINITY, AFFINITY],
        id="the first pod of a group needs nodes with the topology keys",
    ),
    pytest.param(
        make_pod("in").pod_anti_affinity("region", sel_in("foo", "abc")).obj(),
        [make_pod("p1").node("nodeA").label("foo", "abc").obj()],
        [
            node("nodeA", region="r1", hostname="nodeA"),
            node("nodeB", region="r1", hostname="nodeB"),
        ],
        None,
        [ANTI, ANTI],
        id="anti-affinity rejects every node sharing the topology value of a matching pod",
    ),
    pytest.param(
        make_pod("in")
        .pod_anti_affinity("region", sel_in("foo", "abc"))
        .pod_anti_affinity("zone", sel_in("service", "securityscan"))
        .obj(),
        [make_pod("p1").node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        two_nodes("z1", "z2"),
        None,
        [ANTI, ANTI],
        id="anti-affinity rejects when any of its terms matches a pod",
    ),
    pytest.param(
        make_pod("in").pod_anti_affinity("region", sel_in("foo", "abc")).obj(),
        [make_pod("p1").node("nodeA").label("foo", "abc").obj()],
        three_regions("nodeA", "nodeB", "nodeC"),
        None,
        [ANTI, ANTI, None],
        id="anti-affinity allows a node in another region",
    ),
    pytest.param(
        make_pod("in")
        .namespace("NS1")
        .label("foo", "123")
        .pod_anti_affinity("region", sel_in("foo", "bar"))
        .obj(),
        [
            make_pod("p1").node("nodeA").namespace("NS1").label("foo", "bar").obj(),
            make_pod("p2")
            .node("nodeC")
            .namespace("NS2")
            .pod_anti_affinity("region", sel_in("foo", "123"))
            .obj(),
        ],
        three_regions("nodeA", "nodeB", "nodeC"),
        None,
        [ANTI, ANTI, None],
        id="an existing pod's anti-affinity applies only to its own namespace",
    ),
    pytest.param(
        make_pod("in").label("foo", "").obj(),
        [
            make_pod("p1")
            .node("nodeA")
            .pod_anti_affinity("invalid-node-label", sel_exists("foo"))
            .obj()
        ],
        two_nodes("z1", "z1"),
        SKIP,
        None,
        id="an existing pod's term counts only where its topology key is on the node",
    ),
    pytest.param(
        make_pod("in")
        .node("nodeA")
        .pod_anti_affinity("invalid-node-label", sel_exists("foo"))
        .obj(),
        [make_pod("p1").node("nodeA").label("foo", "").obj()],
        two_nodes("z1", "z1"),
        None,
        [None, None],
        id="the pod's anti-affinity term counts only where its topology key is on the node",
    ),
    pytest.param(
        make_pod("in").labels({"foo": "", "bar": ""}).obj(),
        [
            make_pod("p1").node("nodeA").pod_anti_affinity("zone", sel_exists("foo")).obj(),
            make_pod("p2").node("nodeA").pod_anti_affinity("region", sel_exists("bar")).obj(),
        ],
        two_nodes("z1", "z2"),
        None,
        [EXISTING, EXISTING],
        id="the pod violates an existing pod's anti-affinity on every node",
    ),
    pytest.param(
        make_pod("in")
        .pod_anti_affinity("zone", sel_exists("foo"))
        .pod_anti_affinity("region", sel_exists("bar"))
        .obj(),
        [
            make_pod("p1").node("nodeA").label("foo", "").obj(),
            make_pod("p2").node("nodeB").label("bar", "").obj(),
        ],
        two_nodes("z1", "z2"),
        None,
        [ANTI, ANTI],
        id="the pod's anti-affinity is violated by some pod on every node",
    ),
    pytest.param(
        make_pod("in").labels({"foo": "", "bar": ""}).obj(),
        [
            make_pod("p1")
            .node("nodeA")
            .pod_anti_affinity("invalid-node-label", sel_exists("foo"))
            .pod_anti_affinity("zone", sel_exists("bar"))
            .obj()
        ],
        two_nodes("z1", "z2"),
        None,
        [EXISTING, None],
        id="an existing pod's terms count one by one, one with an absent topology key",
    ),
    pytest.param(
        make_pod("in")
        .pod_anti_affinity("invalid-node-label", sel_exists("foo"))
        .pod_anti_affinity("zone", sel_exists("bar"))
        .obj(),
        [make_pod("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        two_nodes("z1", "z2"),
        None,
        [ANTI, None],
        id="the pod's terms count one by one, one with an absent topology key",
    ),
    pytest.param(
        make_pod("in").labels({"foo": "", "bar": ""}).obj(),
        [
            make_pod("p1")
            .node("nodeA")
            .pod_anti_affinity("region", sel_exists("foo"))
            .pod_anti_affinity("zone", sel_exists("bar"))
            .obj()
        ],
        two_nodes("z1", "z2"),
        None,
        [EXISTING, EXISTING],
        id="an existing pod's terms count one by one, all topology keys present",
    ),
    pytest.param(
        make_pod("in")
        .pod_anti_affinity("region", sel_exists("foo"))
        .pod_anti_affinity("zone", sel_exists("bar"))
        .obj(),
        [make_pod("p1").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        two_nodes("z1", "z2"),
        None,
        [ANTI, ANTI],
        id="the pod's terms count one by one, all topology keys present",
    ),
    pytest.param(
        make_pod("in").labels({"foo": "", "bar": ""}).obj(),
        [
            make_pod("p1")
            .node("nodeA")
            .pod_anti_affinity("zone", sel_exists("foo"))
            .pod_anti_affinity("zone", sel_exists("labelA"))
            .obj(),
            make_pod("p2")
            .node("nodeB")
            .pod_anti_affinity("zone", sel_exists("bar"))
            .pod_anti_affinity("zone", sel_exists("labelB"))
            .obj(),
        ],
        [*two_nodes("z1", "z2"), node("nodeC", region="r1", zone="z3", hostname="nodeC")],
        None,
        [EXISTING, EXISTING, None],
        id="existing pods on two nodes reject the pod, which can only go to the third",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity("region", sel_exists("foo"))
        .pod_affinity("zone", sel_exists("bar"))
        .obj(),
        [make_pod("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        two_nodes("z1", "z1"),
        None,
        [None, None],
        id="one pod matching all affinity terms satisfies them in its topology domains",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity("region", sel_exists("foo"))
        .pod_affinity("zone", sel_exists("bar"))
        .obj(),
        [
            make_pod("pod1").node("nodeA").label("foo", "").obj(),
            make_pod("pod2").node("nodeB").label("bar", "").obj(),
        ],
        two_nodes("z1", "z2"),
        None,
        [AFFINITY, AFFINITY],
        id="affinity terms must all be matched by the same pod",
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "want_pre_filter", "want_filters"), MULTI_NODE_CASES
)
def test_required_affinity_multiple_nodes(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    want_pre_filter: Status | None,
    want_filters: list[Status | None] | None,
) -> None:
    pre_status, statuses = run_filter(pod, pods, nodes, [Namespace("NS1")])
    assert pre_status == want_pre_filter
    if want_pre_filter is None:
        assert statuses == want_filters


def test_filter_without_pre_filter_state_is_an_error() -> None:
    handle = PluginHandle(nodes=[NODE1], pods=[])
    plugin = new(None, handle)
    status = plugin.filter(CycleState(), make_pod("in").obj(), handle.snapshot.get("node1"))
    assert status == Status.error(
        'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    )
    assert PRE_FILTER_STATE_KEY == "PreFilter" + NAME


# --- TestPreFilterStateAddRemovePod ----------------------------------------------------

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
FOO_BAR = {"foo": "bar"}


def anti_foo_bar(w: Any) -> Any:
    return w.pod_anti_affinity("region", sel_in("foo", "bar"))


def anti_complex(w: Any) -> Any:
    return w.pod_anti_affinity("region", sel_in("foo", "bar", "buzz")).pod_anti_affinity(
        "zone", sel_not_in("service", "bar", "security", "test")
    )


def affinity_complex(w: Any) -> Any:
    return w.pod_affinity("region", sel_in("foo", "bar", "buzz")).pod_affinity(
        "zone", sel_not_in("service", "bar", "security", "test")
    )


ADD_REMOVE_NODES = [node("nodeA", **LABEL1), node("nodeB", **LABEL2), node("nodeC", **LABEL3)]

ADD_REMOVE_CASES = [
    pytest.param(
        anti_foo_bar(make_pod("pending").labels(FOO_BAR)).obj(),
        [
            make_pod("p1").labels(FOO_BAR).node("nodeA").obj(),
            anti_foo_bar(make_pod("p2").node("nodeC")).obj(),
        ],
        anti_foo_bar(make_pod("addedPod").labels(FOO_BAR).node("nodeB")).obj(),
        {("region", "r1"): 2},
        {},
        id="anti-affinity counts follow a pod added to and removed from another node",
    ),
    pytest.param(
        anti_complex(make_pod("pending").labels(FOO_BAR)).obj(),
        [
            make_pod("p1").labels(FOO_BAR).node("nodeA").obj(),
            anti_foo_bar(make_pod("p2").node("nodeC")).obj(),
        ],
        anti_complex(make_pod("addedPod").labels(FOO_BAR).node("nodeA")).obj(),
        {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        {},
        id="anti-affinity counts of several terms follow a pod added and removed",
    ),
    pytest.param(
        affinity_complex(make_pod("pending").labels(FOO_BAR)).obj(),
        [
            make_pod("p1").labels(FOO_BAR).node("nodeA").obj(),
            affinity_complex(anti_foo_bar(make_pod("p2").node("nodeC"))).obj(),
        ],
        anti_complex(make_pod("addedPod").labels(FOO_BAR).node("nodeA")).obj(),
        {},
        {("region", "r1"): 2, ("zone", "z11"): 2},
        id="affinity and anti-affinity counts follow a pod added and removed",
    ),
]


def pre_filter_state(pending: Pod, pods: list[Pod]) -> tuple[Any, CycleState, PluginHandle]:
    handle = PluginHandle(nodes=ADD_REMOVE_NODES, pods=pods)
    plugin = new(None, handle)
    state = CycleState()
    _, status = plugin.pre_filter(state, pending, handle.snapshot.list())
    assert status is None
    return plugin, state, handle


def counts(s: PreFilterState) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


@pytest.mark.parametrize(
    ("pending", "existing_pods", "added", "want_anti", "want_affinity"), ADD_REMOVE_CASES
)
def test_pre_filter_state_add_remove_pod(
    pending: Pod,
    existing_pods: list[Pod],
    added: Pod,
    want_anti: dict[Any, int],
    want_affinity: dict[Any, int],
) -> None:
    _, all_state, _ = pre_filter_state(pending, [*existing_pods, added])
    plugin, state, handle = pre_filter_state(pending, existing_pods)
    original: PreFilterState = state.read(PRE_FILTER_STATE_KEY).clone()
    node_info = handle.snapshot.get(added.node_name)

    assert plugin.add_pod(state, pending, PodInfo(added), node_info) is None
    after_add: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert after_add.anti_affinity_counts == want_anti
    assert after_add.affinity_counts == want_affinity
    assert counts(after_add) == counts(all_state.read(PRE_FILTER_STATE_KEY))

    assert plugin.remove_pod(state, pending, PodInfo(added), node_info) is None
    assert counts(state.read(PRE_FILTER_STATE_KEY)) == counts(original)


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    handle = PluginHandle(nodes=[NODE1], pods=[])
    plugin = new(None, handle)
    pod = make_pod("in").obj()
    status = plugin.add_pod(CycleState(), pod, PodInfo(pod), handle.snapshot.get("node1"))
    assert status is not None and status.code is Code.ERROR


def test_pre_filter_state_clone_copies_the_counts() -> None:
    pod = make_pod("in").obj()
    source = PreFilterState(
        {("name", "node1"): 1, ("name", "node2"): 1},
        {("name", "nodeA"): 1, ("name", "nodeC"): 2},
        {("name", "nodeN"): 3, ("name", "nodeM"): 1},
        pod,
        (),
        (),
        None,
        False,
    )
    clone = source.clone()
    assert clone is not source
    assert clone == source
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


def test_cycle_state_clone_isolates_preemption_changes() -> None:
    handle = PluginHandle(
        nodes=ADD_REMOVE_NODES, pods=[make_pod("p1").labels(FOO_BAR).node("nodeA").obj()]
    )
    plugin: InterPodAffinity = new(None, handle)
    pending = anti_foo_bar(make_pod("pending")).obj()
    state = CycleState()
    plugin.pre_filter(state, pending, handle.snapshot.list())
    trial = state.clone()
    victim = PodInfo(make_pod("p1").labels(FOO_BAR).node("nodeA").obj())
    plugin.remove_pod(trial, pending, victim, handle.snapshot.get("nodeA"))
    assert plugin.filter(trial, pending, handle.snapshot.get("nodeB")) is None
    assert plugin.filter(state, pending, handle.snapshot.get("nodeB")) == ANTI


# --- TestGetTPMapMatchingIncomingAffinityAntiAffinity ----------------------------------


def normal_pod(*labels: str) -> Pod:
    return make_pod("normal").node("nodeA").labels(dict.fromkeys(labels, "")).obj()


INCOMING_COUNT_CASES = [
    pytest.param([], make_pod("aaa-normal").obj(), {}, {}, id="nil test"),
    pytest.param(
        [normal_pod("aaa")],
        make_pod("aaa-normal").obj(),
        {},
        {},
        id="incoming pod without affinity or anti-affinity counts nothing",
    ),
    pytest.param(
        [normal_pod("bbb")],
        make_pod("aaa-anti")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .obj(),
        {},
        {},
        id="no pod has a label the incoming pod's terms select",
    ),
    pytest.param(
        [normal_pod("aaa")],
        make_pod("affi-antiaffi")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .obj(),
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
        id="existing pod matches affinity and anti-affinity, single term",
    ),
    pytest.param(
        [normal_pod("aaa", "bbb")],
        make_pod("affi-antiaffi")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_affinity("hostname", sel_exists("bbb"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .obj(),
        {("hostname", "nodeA"): 2},
        {("hostname", "nodeA"): 1},
        id="existing pod matches affinity (one count per term) and anti-affinity",
    ),
    pytest.param(
        [normal_pod("aaa")],
        make_pod("affi-antiaffi")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_affinity("hostname", sel_exists("bbb"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .pod_anti_affinity("hostname", sel_exists("bbb"))
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="existing pod matches anti-affinity but not all affinity terms",
    ),
    pytest.param(
        [normal_pod("aaa", "bbb")],
        make_pod("anaffi-antiaffiti")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_affinity("hostname", sel_exists("ccc"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .pod_anti_affinity("hostname", sel_exists("ccc"))
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="existing pod violates part of several anti-affinity terms, case 1",
    ),
    pytest.param(
        [normal_pod("bbb")],
        make_pod("affi-antiaffi")
        .pod_affinity("hostname", sel_exists("aaa"))
        .pod_affinity("hostname", sel_exists("bbb"))
        .pod_anti_affinity("hostname", sel_exists("aaa"))
        .pod_anti_affinity("hostname", sel_exists("bbb"))
        .obj(),
        {},
        {("hostname", "nodeA"): 1},
        id="existing pod violates part of several anti-affinity terms, case 2",
    ),
]


@pytest.mark.parametrize(("pods", "pod", "want_affinity", "want_anti"), INCOMING_COUNT_CASES)
def test_incoming_affinity_counts(
    pods: list[Pod], pod: Pod, want_affinity: dict[Any, int], want_anti: dict[Any, int]
) -> None:
    handle = PluginHandle(nodes=[node("nodeA", hostname="nodeA")], pods=pods)
    cluster = handle.cluster
    got_affinity, got_anti = incoming_affinity_counts(
        [IncomingTerm(t, cluster) for t in pod.required_affinity],
        [IncomingTerm(t, cluster) for t in pod.required_anti_affinity],
        handle.snapshot.list(),
    )
    assert got_affinity == want_affinity
    assert got_anti == want_anti


# --- namespaceSelector resolution ------------------------------------------------------

NS_RESOLUTION_CASES = [
    pytest.param("subteam1.team1", True, id="a namespace whose labels match is selected"),
    pytest.param("subteam1.team2", False, id="a namespace whose labels differ is not"),
    pytest.param("unknown", False, id="a namespace without a Namespace object is not"),
]


@pytest.mark.parametrize(("namespace", "want"), NS_RESOLUTION_CASES)
def test_incoming_term_resolves_namespace_selector(namespace: str, want: bool) -> None:
    # NotIn also matches an empty label set: a missing Namespace must still not match,
    # as upstream only merges namespaces that exist.
    pod = (
        make_pod("in")
        .pod_affinity(
            "zone",
            sel_exists("app"),
            namespace_selector=sel_not_in("team", "team2"),
        )
        .obj()
    )
    term = IncomingTerm(pod.required_affinity[0], StaticClusterLister(namespaces=NAMESPACES))
    other = make_pod("other").namespace(namespace).label("app", "x").obj()
    assert term.matches(other) is want
    assert term.matches(other) is want  # second call answers from the memo
