"""PodTopologySpread PreFilter/Filter, AddPod/RemovePod and requeue hints.

The tables reproduce upstream's ``filtering_test.go`` (TestPreFilterState,
TestPreFilterStateAddPod/RemovePod, TestSingleConstraint, TestMultipleConstraints) and
``plugin_test.go`` (the queueing hints), release 1.34 with every feature gate at its
default: node inclusion policies, minDomains and matchLabelKeys are on.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import PodInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Workload
from kubesched.objects.selectors import LabelSelector, selector_from_set
from kubesched.plugins.podtopologyspread import (
    NAME,
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    new,
)
from kubesched.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    CriticalPaths,
    PreFilterState,
)
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
DNS = "DoNotSchedule"
SA = "ScheduleAnyway"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
UNSET = 2**31 - 1


def pod(name: str, node: str = "", *labels: str, ns: str = "") -> Pod:
    """An existing pod; labels are ``key`` (empty value) or ``key=value``."""
    w = make_pod(name)
    if ns:
        w.namespace(ns)
    if node:
        w.node(node)
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    return w.obj()


def zn(name: str, zone: str, *extra: str, taint: bool = False) -> Node:
    """A node labelled ``zone=<zone>`` and ``node=<name>``, plus ``extra`` labels."""
    w = make_node(name).label("zone", zone).label("node", name)
    for label in extra:
        key, _, value = label.partition("=")
        w.label(key, value)
    if taint:
        w.taint(UNSCHEDULABLE_TAINT)
    return w.obj()


def nd(name: str, *labels: str, taint: bool = False) -> Node:
    """A node labelled ``node=<name>`` plus ``labels`` (no zone)."""
    w = make_node(name).label("node", name)
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    if taint:
        w.taint(UNSCHEDULABLE_TAINT)
    return w.obj()


def plugin_for(
    nodes: list[Node],
    pods: list[Pod],
    args: dict[str, Any] | None = None,
    workloads: tuple[Workload, ...] = (),
) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = Snapshot.from_objects(nodes, pods)
    handle = PluginHandle(snapshot, workloads=workloads)
    pl = new(args if args is not None else {"defaultingType": "List"}, handle)  # type: ignore[arg-type]
    return pl, snapshot


def run_pre_filter(
    pl: PodTopologySpread, snapshot: Snapshot, p: Pod
) -> tuple[Status | None, CycleState]:
    state = CycleState()
    _, status = pl.pre_filter(state, p, snapshot.list())
    return status, state


def paths(p: CriticalPaths) -> tuple[tuple[str, int], tuple[str, int]]:
    """The critical paths, with equal counts ordered by value (as upstream compares)."""
    (v0, n0), (v1, n1) = p.pairs()
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return (v0, n0), (v1, n1)


def summary(state: PreFilterState) -> dict[str, Any]:
    return {
        "constraints": [
            (
                c.max_skew,
                c.topology_key,
                None if c.selector is None else sorted(str(r) for r in c.selector.requirements),
                c.min_domains,
                c.node_affinity_policy,
                c.node_taints_policy,
            )
            for c in state.constraints
        ],
        "paths": [paths(p) for p in state.critical_paths],
        "counts": state.match_num,
    }


def spread(
    p: Any, skew: int, key: str, when: str, selector: dict[str, Any] | None, **kw: Any
) -> Any:
    return p.spread_constraint(skew, key, when, selector, **kw)


def incoming(*labels: str) -> Any:
    """The incoming pod ``p`` under construction, with ``labels``."""
    w = make_pod("p")
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    return w


HONOR, IGNORE = "Honor", "Ignore"
FOO_C = ["foo"]
BAR_C = ["bar"]


def c(
    skew: int, key: str, sel: list[str] | None, aff: str = HONOR, taints: str = IGNORE
) -> tuple[Any, ...]:
    return (skew, key, sel, 1, aff, taints)


FOUR_ZONED = [
    zn("node-a", "zone1"),
    zn("node-b", "zone1"),
    zn("node-x", "zone2"),
    zn("node-y", "zone2"),
]
THREE_ZONED = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")]
A2_B1_Y2 = [
    pod("p-a1", "node-a", "foo"),
    pod("p-a2", "node-a", "foo"),
    pod("p-b1", "node-b", "foo"),
    pod("p-y1", "node-y", "foo"),
    pod("p-y2", "node-y", "foo"),
]
A2_B1_Y4 = [*A2_B1_Y2, pod("p-y3", "node-y", "foo"), pod("p-y4", "node-y", "foo")]
POLICY_NODES = [nd("node-a", "foo"), nd("node-b", "foo"), nd("node-c", "bar")]
POLICY_PODS = [
    pod("p-a", "node-a", "bar"),
    pod("p-b", "node-b", "bar"),
    pod("p-c", "node-b", "bar"),
    pod("p-d", "node-c"),
]
TAINT_NODES = [nd("node-a"), nd("node-b"), nd("node-c", "bar", taint=True)]

# id, incoming pod, nodes, existing pods, args, workloads, expected summary (None: Skip)
PRE_FILTER_CASES = [
    pytest.param(
        spread(incoming("foo"), 5, "zone", DNS, {"matchLabels": {"foo": "bar"}}),
        FOUR_ZONED,
        [],
        None,
        (),
        {
            "constraints": [c(5, "zone", ["foo=bar"])],
            "paths": [(("zone1", 0), ("zone2", 0))],
            "counts": [{"zone1": 0, "zone2": 0}],
        },
        id="clean-cluster-with-one-constraint",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, FOO),
        FOUR_ZONED,
        A2_B1_Y2,
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C)],
            "paths": [(("zone2", 2), ("zone1", 3))],
            "counts": [{"zone1": 3, "zone2": 2}],
        },
        id="normal-case-with-one-constraint",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, None),
        FOUR_ZONED,
        A2_B1_Y2,
        None,
        (),
        {
            "constraints": [c(1, "zone", None)],
            "paths": [(("zone1", 0), ("zone2", 0))],
            "counts": [{"zone1": 0, "zone2": 0}],
        },
        id="null-label-selector-counts-nothing",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, FOO),
        [*FOUR_ZONED, zn("node-o", "zone3"), zn("node-p", "zone3")],
        A2_B1_Y2,
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C)],
            "paths": [(("zone3", 0), ("zone2", 2))],
            "counts": [{"zone1": 3, "zone2": 2, "zone3": 0}],
        },
        id="one-constraint-on-a-3-zone-cluster",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, FOO),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo", ns="ns1"),
            pod("p-b1", "node-b", "foo"),
            pod("p-y1", "node-y", "foo", ns="ns2"),
            pod("p-y2", "node-y", "foo"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C)],
            "paths": [(("zone2", 1), ("zone1", 2))],
            "counts": [{"zone1": 2, "zone2": 1}],
        },
        id="namespace-mismatch-does-not-count",
    ),
    pytest.param(
        spread(spread(incoming("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, FOO),
        FOUR_ZONED,
        A2_B1_Y4,
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", FOO_C)],
            "paths": [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
            "counts": [
                {"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
            ],
        },
        id="normal-case-with-two-constraints",
    ),
    pytest.param(
        spread(
            spread(
                spread(spread(incoming("foo"), 1, "zone", SA, FOO), 1, "zone", DNS, FOO),
                1,
                "node",
                SA,
                FOO,
            ),
            1,
            "node",
            DNS,
            FOO,
        ),
        THREE_ZONED,
        A2_B1_Y4,
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", FOO_C)],
            "paths": [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
            "counts": [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        },
        id="soft-constraints-are-bypassed",
    ),
    pytest.param(
        spread(spread(incoming("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR),
        THREE_ZONED,
        [pod("p-a", "node-a", "foo"), pod("p-b", "node-b", "bar")],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", BAR_C)],
            "paths": [(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
            "counts": [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        },
        id="different-label-selectors-simple",
    ),
    pytest.param(
        spread(spread(incoming("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR),
        THREE_ZONED,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo", "bar"),
            pod("p-b1", "node-b", "foo"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "foo", "bar"),
            pod("p-y3", "node-y", "foo"),
            pod("p-y4", "node-y", "foo", "bar"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", BAR_C)],
            "paths": [(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
            "counts": [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
        },
        id="different-label-selectors-complex-pods",
    ),
    pytest.param(
        spread(
            spread(
                incoming("foo").node_affinity_term(
                    [{"key": "node", "operator": "NotIn", "values": ["node-x"]}]
                ),
                1,
                "zone",
                DNS,
                FOO,
            ),
            1,
            "node",
            DNS,
            FOO,
        ),
        FOUR_ZONED,
        A2_B1_Y4,
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", FOO_C)],
            "paths": [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
            "counts": [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        },
        id="two-constraints-and-node-affinity-excluding-node-x",
    ),
    pytest.param(
        incoming("foo=bar", "baz=kar"),
        [],
        [],
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
                {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS},
            ],
        },
        (Workload("Service", "default", "svc", selector_from_set({"foo": "bar"})),),
        {
            "constraints": [c(3, "node", ["foo=bar"]), c(5, "rack", ["foo=bar"])],
            "paths": [(("", UNSET), ("", UNSET))] * 2,
            "counts": [{}, {}],
        },
        id="default-constraints-and-a-service",
    ),
    pytest.param(
        incoming("foo=bar"),
        [],
        [],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        },
        (Workload("Service", "default", "svc", selector_from_set({"baz": "kep"})),),
        None,
        id="skip-default-constraints-and-a-service-that-does-not-match",
    ),
    pytest.param(
        spread(
            spread(incoming("foo=bar", "baz=tar"), 1, "zone", DNS, {"matchLabels": {"baz": "tar"}}),
            2,
            "planet",
            SA,
            {"matchLabels": {"fot": "rok"}},
        ),
        [],
        [],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        },
        (Workload("Service", "default", "svc", selector_from_set({"foo": "bar"})),),
        {
            "constraints": [c(1, "zone", ["baz=tar"])],
            "paths": [(("", UNSET), ("", UNSET))],
            "counts": [{}],
        },
        id="default-constraints-and-a-service-but-pod-has-constraints",
    ),
    pytest.param(
        incoming("foo=bar"),
        [],
        [],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        },
        (Workload("Service", "default", "svc", selector_from_set({"foo": "bar"})),),
        None,
        id="skip-default-soft-constraints-and-a-service",
    ),
    pytest.param(
        incoming("foo=bar"),
        [],
        [],
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        },
        (
            Workload("Service", "default", "svc", selector_from_set({"foo": "bar"})),
            Workload(
                "ReplicaSet",
                "default",
                "rs",
                LabelSelector.from_dict(
                    {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
                ),
            ),
            Workload("Service", "other", "svc2", selector_from_set({"foo": "bar"})),
        ),
        {
            "constraints": [c(1, "node", ["foo", "foo=bar"])],
            "paths": [(("", UNSET), ("", UNSET))],
            "counts": [{}],
        },
        id="default-constraints-merge-the-service-and-replicaset-selectors",
    ),
    pytest.param(
        spread(incoming("foo").node_selector({"foo": ""}), 1, "node", DNS, BAR),
        POLICY_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C)],
            "paths": [(("node-a", 1), ("node-b", 2))],
            "counts": [{"node-a": 1, "node-b": 2}],
        },
        id="node-affinity-policy-honored-with-node-selector",
    ),
    pytest.param(
        spread(
            incoming("foo").node_selector({"foo": ""}),
            1,
            "node",
            DNS,
            BAR,
            node_affinity_policy=IGNORE,
        ),
        POLICY_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C, aff=IGNORE)],
            "paths": [(("node-c", 0), ("node-a", 1))],
            "counts": [{"node-a": 1, "node-b": 2, "node-c": 0}],
        },
        id="node-affinity-policy-ignored-with-node-selector",
    ),
    pytest.param(
        spread(incoming("foo").node_affinity_in("foo", [""]), 1, "node", DNS, BAR),
        POLICY_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C)],
            "paths": [(("node-a", 1), ("node-b", 2))],
            "counts": [{"node-a": 1, "node-b": 2}],
        },
        id="node-affinity-policy-honored-with-node-affinity",
    ),
    pytest.param(
        spread(
            incoming("foo").node_affinity_in("foo", [""]),
            1,
            "node",
            DNS,
            BAR,
            node_affinity_policy=IGNORE,
        ),
        POLICY_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C, aff=IGNORE)],
            "paths": [(("node-c", 0), ("node-a", 1))],
            "counts": [{"node-a": 1, "node-b": 2, "node-c": 0}],
        },
        id="node-affinity-policy-ignored-with-node-affinity",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "node", DNS, BAR),
        TAINT_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C)],
            "paths": [(("node-c", 0), ("node-a", 1))],
            "counts": [{"node-a": 1, "node-b": 2, "node-c": 0}],
        },
        id="node-taints-policy-ignored-by-default",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "node", DNS, BAR, node_taints_policy=HONOR),
        TAINT_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C, taints=HONOR)],
            "paths": [(("node-a", 1), ("node-b", 2))],
            "counts": [{"node-a": 1, "node-b": 2}],
        },
        id="node-taints-policy-honored",
    ),
    pytest.param(
        spread(
            incoming("foo").toleration(
                key=UNSCHEDULABLE_TAINT, operator="Exists", effect="NoSchedule"
            ),
            1,
            "node",
            DNS,
            BAR,
            node_taints_policy=HONOR,
        ),
        TAINT_NODES,
        POLICY_PODS,
        None,
        (),
        {
            "constraints": [c(1, "node", BAR_C, taints=HONOR)],
            "paths": [(("node-c", 0), ("node-a", 1))],
            "counts": [{"node-a": 1, "node-b": 2, "node-c": 0}],
        },
        id="node-taints-policy-honored-with-tolerated-taint",
    ),
    pytest.param(
        spread(
            spread(incoming("foo").node_selector({"foo": ""}), 1, "zone", DNS, FOO),
            1,
            "node",
            DNS,
            FOO,
            node_affinity_policy=IGNORE,
        ),
        [zn("node-a", "zone1", "foo"), zn("node-b", "zone1"), zn("node-x", "zone2", "foo")],
        [pod("p-b1", "node-b", "foo"), pod("p-b2", "node-b", "foo"), pod("p-x1", "node-x", "foo")],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", FOO_C, aff=IGNORE)],
            "paths": [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
            "counts": [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        },
        id="zone-honor-ignore-node-ignore-ignore",
    ),
    pytest.param(
        spread(
            spread(incoming("foo"), 1, "zone", DNS, FOO, node_taints_policy=HONOR),
            1,
            "node",
            DNS,
            FOO,
        ),
        [
            zn("node-a", "zone1", "foo"),
            zn("node-b", "zone1", taint=True),
            zn("node-x", "zone2", "foo"),
        ],
        [pod("p-b1", "node-b", "foo"), pod("p-b2", "node-b", "foo"), pod("p-x1", "node-x", "foo")],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C, taints=HONOR), c(1, "node", FOO_C)],
            "paths": [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
            "counts": [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
        },
        id="zone-honor-honor-node-honor-ignore",
    ),
    pytest.param(
        spread(
            spread(incoming("foo").node_selector({"foo": ""}), 1, "zone", DNS, FOO),
            1,
            "node",
            DNS,
            FOO,
        ),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", "foo", taint=True),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2"),
        ],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "node", FOO_C)],
            "paths": [(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
            "counts": [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        },
        id="zone-honor-ignore-node-honor-ignore",
    ),
    pytest.param(
        spread(
            spread(
                incoming("foo").node_selector({"foo": ""}),
                1,
                "zone",
                DNS,
                FOO,
                node_affinity_policy=IGNORE,
            ),
            1,
            "node",
            DNS,
            FOO,
            node_taints_policy=HONOR,
        ),
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1", "foo", taint=True),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2", "foo"),
        ],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-x2", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C, aff=IGNORE), c(1, "node", FOO_C, taints=HONOR)],
            "paths": [(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
            "counts": [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        },
        id="zone-ignore-ignore-node-honor-honor",
    ),
    pytest.param(
        spread(incoming("foo", "bar=a"), 1, "zone", DNS, FOO, match_label_keys=["bar"]),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo", "bar=a"),
            pod("p-b1", "node-b", "foo"),
            pod("p-y1", "node-y", "foo", "bar=a"),
            pod("p-y2", "node-y", "bar"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", ["bar=a", "foo"])],
            "paths": [(("zone1", 1), ("zone2", 1))],
            "counts": [{"zone1": 1, "zone2": 1}],
        },
        id="match-label-keys-anded-with-a-non-empty-selector",
    ),
    pytest.param(
        spread(incoming("foo=a"), 1, "zone", DNS, {}, match_label_keys=["foo"]),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo=a"),
            pod("p-a2", "node-a", "foo=a"),
            pod("p-b1", "node-b", "foo=a"),
            pod("p-y1", "node-y", "foo=a"),
            pod("p-y2", "node-y", "foo=a"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", ["foo=a"])],
            "paths": [(("zone2", 2), ("zone1", 3))],
            "counts": [{"zone1": 3, "zone2": 2}],
        },
        id="match-label-keys-anded-with-an-empty-selector",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, None, match_label_keys=["bar"]),
        FOUR_ZONED,
        [pod("p-a1", "node-a", "foo=a"), pod("p-y1", "node-y", "foo=a")],
        None,
        (),
        {
            "constraints": [c(1, "zone", None)],
            "paths": [(("zone1", 0), ("zone2", 0))],
            "counts": [{"zone1": 0, "zone2": 0}],
        },
        id="match-label-keys-ignored-when-the-selector-is-null",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, FOO, match_label_keys=["bar"]),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo=a"),
            pod("p-a2", "node-a", "foo=a"),
            pod("p-b1", "node-b", "foo=a"),
            pod("p-y1", "node-y", "foo=a"),
            pod("p-y2", "node-y", "foo=a"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C)],
            "paths": [(("zone2", 2), ("zone1", 3))],
            "counts": [{"zone1": 3, "zone2": 2}],
        },
        id="match-label-key-missing-from-the-pod-labels-is-ignored",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, {}),
        FOUR_ZONED,
        [pod("p-a1", "node-a", "foo"), pod("p-y1", "node-y", "bar")],
        None,
        (),
        {
            "constraints": [c(1, "zone", [])],
            "paths": [(("zone1", 0), ("zone2", 0))],
            "counts": [{"zone1": 0, "zone2": 0}],
        },
        id="empty-selector-counts-no-pod-as-in-1.34",
    ),
    pytest.param(
        spread(spread(incoming("foo", "bar"), 1, "zone", DNS, FOO), 1, "zone", DNS, BAR),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo", "bar"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "bar"),
            pod("p-y1", "node-y", "foo", "bar"),
            pod("p-y2", "node-y", "bar"),
        ],
        None,
        (),
        {
            "constraints": [c(1, "zone", FOO_C), c(1, "zone", BAR_C)],
            "paths": [(("zone2", 1), ("zone1", 2)), (("zone1", 1), ("zone2", 3))],
            "counts": [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        },
        id="two-constraints-with-the-same-topology-key",
    ),
    pytest.param(
        incoming("foo"),
        [zn("node-a", "zone1")],
        [],
        None,
        (),
        None,
        id="skip-if-no-constraint-is-specified",
    ),
]


@pytest.mark.parametrize(
    ("incoming_pod", "nodes", "pods", "args", "workloads", "want"), PRE_FILTER_CASES
)
def test_pre_filter_state(incoming_pod, nodes, pods, args, workloads, want):
    pl, snapshot = plugin_for(nodes, pods, args, workloads)
    status, state = run_pre_filter(pl, snapshot, incoming_pod.obj())
    if want is None:
        assert status == Status.skip()
        assert state.get(PRE_FILTER_STATE_KEY) is None
        return
    assert status is None
    assert summary(state.read(PRE_FILTER_STATE_KEY)) == want


def test_terminating_pods_do_not_count_in_pre_filter():
    nodes = [zn("node-a", "zone1"), zn("node-x", "zone2")]
    gone = make_pod("p-x2").node("node-x").label("foo", "").terminating().obj()
    pl, snapshot = plugin_for(nodes, [pod("p-a1", "node-a", "foo"), gone])
    _, state = run_pre_filter(pl, snapshot, spread(incoming("foo"), 1, "zone", DNS, FOO).obj())
    assert state.read(PRE_FILTER_STATE_KEY).match_num == [{"zone1": 1, "zone2": 0}]


NODE_C = c(1, "node", FOO_C)
ZONE_C = c(1, "zone", FOO_C)
TWO_NODES = [zn("node-a", "zone1"), zn("node-b", "zone1")]
A_AND_X = [zn("node-a", "zone1"), zn("node-x", "zone2")]
A_B_X = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2")]
AFFINITY_NODES = [zn("node-a", "zone1", "foo=bar"), zn("node-b", "zone2", "foo")]
TAINTED_A = [zn("node-a", "zone1", taint=True), zn("node-b", "zone2")]
NOT_IN_BAR = [{"key": "foo", "operator": "NotIn", "values": ["bar"]}]
ON_NODE = spread(incoming("foo"), 1, "node", DNS, FOO)
ON_ZONE_AND_NODE = spread(spread(incoming("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, FOO)
FOO_ZONE_BAR_NODE = spread(spread(incoming("foo", "bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR)
ON_ZONE = spread(incoming("foo"), 1, "zone", DNS, FOO)

# id, preemptor, added pod, existing pods, node of the added pod, nodes, expected summary
ADD_POD_CASES = [
    pytest.param(
        ON_NODE,
        pod("p-a1", "node-a", "foo"),
        [],
        "node-a",
        TWO_NODES,
        {"paths": [(("node-b", 0), ("node-a", 1))], "counts": [{"node-a": 1, "node-b": 0}]},
        id="node-a-and-b-both-impact-the-min-match",
    ),
    pytest.param(
        ON_NODE,
        pod("p-a1", "node-a", "foo"),
        [pod("p-b1", "node-b", "foo")],
        "node-a",
        TWO_NODES,
        {"paths": [(("node-a", 1), ("node-b", 1))], "counts": [{"node-a": 1, "node-b": 1}]},
        id="only-node-a-impacts-the-min-match",
    ),
    pytest.param(
        ON_NODE,
        pod("p-a1", "node-a", "foo", ns="ns1"),
        [pod("p-b1", "node-b", "foo")],
        "node-a",
        TWO_NODES,
        {"paths": [(("node-a", 0), ("node-b", 1))], "counts": [{"node-a": 0, "node-b": 1}]},
        id="a-pod-of-another-namespace-changes-nothing",
    ),
    pytest.param(
        ON_NODE,
        pod("p-b2", "node-b", "foo"),
        [pod("p-b1", "node-b", "foo")],
        "node-b",
        TWO_NODES,
        {"paths": [(("node-a", 0), ("node-b", 2))], "counts": [{"node-a": 0, "node-b": 2}]},
        id="a-pod-on-a-non-critical-node",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        pod("p-a1", "node-a", "foo"),
        [],
        "node-a",
        A_AND_X,
        {
            "paths": [(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
            "counts": [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        },
        id="node-a-and-x-both-impact-zone-and-node",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        pod("p-a1", "node-a", "foo"),
        [pod("p-x1", "node-x", "foo")],
        "node-a",
        A_AND_X,
        {
            "paths": [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
            "counts": [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        },
        id="only-node-a-impacts-zone-and-node",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        pod("p-a1", "node-a", "foo"),
        [pod("p-b1", "node-b", "foo"), pod("p-b2", "node-b", "foo"), pod("p-x1", "node-x", "foo")],
        "node-a",
        A_B_X,
        {
            "paths": [(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
            "counts": [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        },
        id="node-a-impacts-node-and-node-x-impacts-zone",
    ),
    pytest.param(
        FOO_ZONE_BAR_NODE,
        pod("p-a1", "node-a", "foo"),
        [
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-x1", "node-x", "foo", "bar"),
            pod("p-x2", "node-x", "bar"),
        ],
        "node-a",
        A_B_X,
        {
            "paths": [(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
            "counts": [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        },
        id="different-selectors-node-a-impacts-zone",
    ),
    pytest.param(
        FOO_ZONE_BAR_NODE,
        pod("p-a1", "node-a", "foo", "bar"),
        [
            pod("p-b1", "node-b", "bar"),
            pod("p-x1", "node-x", "foo", "bar"),
            pod("p-x2", "node-x", "bar"),
        ],
        "node-a",
        A_B_X,
        {
            "paths": [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
            "counts": [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        },
        id="different-selectors-node-a-impacts-zone-and-node",
    ),
    pytest.param(
        spread(incoming("foo").node_affinity_term(NOT_IN_BAR), 1, "zone", DNS, FOO),
        pod("p-a1", "node-a", "foo", "zone=zone1"),
        [pod("p-a2", "node-a", "foo", "zone=zone1"), pod("p-b1", "node-b", "foo", "zone=zone2")],
        "node-a",
        AFFINITY_NODES,
        {"paths": [(("zone2", 1), ("", UNSET))], "counts": [{"zone2": 1}]},
        id="add-on-a-node-the-preemptor-affinity-excludes",
    ),
    pytest.param(
        ON_ZONE,
        pod("p-b1", "node-b", "foo", "zone=zone2"),
        [pod("p-a1", "node-a", "foo", "zone=zone1"), pod("p-b2", "node-b", "foo", "zone=zone2")],
        "node-b",
        AFFINITY_NODES,
        {"paths": [(("zone1", 1), ("zone2", 2))], "counts": [{"zone1": 1, "zone2": 2}]},
        id="add-on-a-node-the-preemptor-affinity-matches",
    ),
    pytest.param(
        ON_ZONE,
        pod("p-b1", "node-b", "zone=zone2"),
        [pod("p-a1", "node-a", "foo", "zone=zone1"), pod("p-b2", "node-b", "foo", "zone=zone2")],
        "node-b",
        AFFINITY_NODES,
        {"paths": [(("zone1", 1), ("zone2", 1))], "counts": [{"zone1": 1, "zone2": 1}]},
        id="add-a-pod-the-selector-does-not-match",
    ),
    pytest.param(
        spread(
            incoming("foo").toleration(
                key=UNSCHEDULABLE_TAINT, operator="Exists", effect="NoSchedule"
            ),
            1,
            "zone",
            DNS,
            FOO,
        ),
        pod("p-b1", "node-b", "foo", "zone=zone2"),
        [pod("p-a1", "node-a", "foo", "zone=zone1"), pod("p-b2", "node-b", "foo", "zone=zone2")],
        "node-b",
        TAINTED_A,
        {"paths": [(("zone1", 1), ("zone2", 2))], "counts": [{"zone1": 1, "zone2": 2}]},
        id="add-with-a-tainted-node-and-a-tolerating-preemptor",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "added", "pods", "node_name", "nodes", "want"), ADD_POD_CASES
)
def test_pre_filter_state_add_pod(preemptor, added, pods, node_name, nodes, want):
    pl, snapshot = plugin_for(nodes, pods)
    preemptor_pod = preemptor.obj()
    status, state = run_pre_filter(pl, snapshot, preemptor_pod)
    assert status is None
    ext = pl.pre_filter_extensions()
    assert ext.add_pod(state, preemptor_pod, PodInfo(added), snapshot.get(node_name)) is None
    got = summary(state.read(PRE_FILTER_STATE_KEY))
    assert {"paths": got["paths"], "counts": got["counts"]} == want


# id, preemptor, nodes, existing pods, removed pod, its node, expected summary
REMOVE_POD_CASES = [
    pytest.param(
        ON_ZONE,
        A_B_X,
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo"), pod("p-x1", "node-x", "foo")],
        pod("p-a1", "node-a", "foo"),
        "node-a",
        {"paths": [(("zone1", 1), ("zone2", 1))], "counts": [{"zone1": 1, "zone2": 1}]},
        id="one-constraint-on-zone-min-match-unchanged",
    ),
    pytest.param(
        ON_ZONE,
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        pod("p-a1", "node-a", "foo"),
        "node-a",
        {"paths": [(("zone1", 1), ("zone2", 2))], "counts": [{"zone1": 1, "zone2": 2}]},
        id="one-constraint-on-zone-min-match-changed",
    ),
    pytest.param(
        ON_ZONE,
        FOUR_ZONED,
        [
            pod("p-a0", "node-a", "bar"),
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        pod("p-a0", "node-a", "bar"),
        "node-a",
        {"paths": [(("zone1", 2), ("zone2", 2))], "counts": [{"zone1": 2, "zone2": 2}]},
        id="removing-an-irrelevant-pod-does-not-help",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        A_B_X,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-x2", "node-x", "foo"),
        ],
        pod("p-x1", "node-x", "foo"),
        "node-x",
        {
            "paths": [(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
            "counts": [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        },
        id="two-constraints",
    ),
    pytest.param(
        spread(incoming("foo").node_affinity_term(NOT_IN_BAR), 1, "zone", DNS, FOO),
        AFFINITY_NODES,
        [pod("p-a2", "node-a", "foo", "zone=zone1"), pod("p-b1", "node-b", "foo", "zone=zone2")],
        pod("p-a2", "node-a", "foo", "zone=zone1"),
        "node-a",
        {"paths": [(("zone2", 1), ("", UNSET))], "counts": [{"zone2": 1}]},
        id="remove-from-a-node-the-preemptor-affinity-excludes",
    ),
    pytest.param(
        ON_ZONE,
        AFFINITY_NODES,
        [pod("p-a1", "node-a", "foo", "zone=zone1"), pod("p-b2", "node-b", "foo", "zone=zone2")],
        pod("p-b2", "node-b", "foo", "zone=zone2"),
        "node-b",
        {"paths": [(("zone2", 0), ("zone1", 1))], "counts": [{"zone1": 1, "zone2": 0}]},
        id="remove-from-a-node-the-preemptor-affinity-matches",
    ),
]


@pytest.mark.parametrize(
    ("preemptor", "nodes", "pods", "removed", "node_name", "want"), REMOVE_POD_CASES
)
def test_pre_filter_state_remove_pod(preemptor, nodes, pods, removed, node_name, want):
    pl, snapshot = plugin_for(nodes, pods)
    preemptor_pod = preemptor.obj()
    status, state = run_pre_filter(pl, snapshot, preemptor_pod)
    assert status is None
    ext = pl.pre_filter_extensions()
    assert ext.remove_pod(state, preemptor_pod, PodInfo(removed), snapshot.get(node_name)) is None
    got = summary(state.read(PRE_FILTER_STATE_KEY))
    assert {"paths": got["paths"], "counts": got["counts"]} == want


def test_cloned_state_is_independent_of_the_original():
    pl, snapshot = plugin_for(TWO_NODES, [pod("p-b1", "node-b", "foo")])
    preemptor = ON_NODE.obj()
    _, state = run_pre_filter(pl, snapshot, preemptor)
    clone = state.clone()
    pl.add_pod(clone, preemptor, PodInfo(pod("p-a1", "node-a", "foo")), snapshot.get("node-a"))
    assert state.read(PRE_FILTER_STATE_KEY).match_num == [{"node-a": 0, "node-b": 1}]
    assert clone.read(PRE_FILTER_STATE_KEY).match_num == [{"node-a": 1, "node-b": 1}]


OK = Code.SUCCESS
UN = Code.UNSCHEDULABLE
UR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
A2_B1_Y3 = [*A2_B1_Y2, pod("p-y3", "node-y", "foo")]
ABC = [nd("node-a"), nd("node-b"), nd("node-c")]
AB2_C1 = [
    pod("p-a1", "node-a", "foo"),
    pod("p-a2", "node-a", "foo"),
    pod("p-b1", "node-b", "foo"),
    pod("p-b2", "node-b", "foo"),
    pod("p-c1", "node-c", "foo"),
]
ZONE_2_1 = [
    pod("p-b1", "node-a", "foo"),
    pod("p-b2", "node-b", "foo"),
    pod("p-y1", "node-y", "foo"),
]
POLICY_NODES_4 = [nd("node-a", "foo"), nd("node-b", "foo"), nd("node-x", "foo"), nd("node-y")]
TAINT_NODES_4 = [
    nd("node-a", "foo"),
    nd("node-b", "foo"),
    nd("node-x", "foo"),
    nd("node-y", taint=True),
]

# id, incoming pod, nodes, existing pods, expected code per node
SINGLE_CONSTRAINT_CASES = [
    pytest.param(
        ON_ZONE,
        FOUR_ZONED,
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="no-existing-pods",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, BAR),
        FOUR_ZONED,
        [],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="no-existing-pods-and-the-pod-does-not-match-itself",
    ),
    pytest.param(
        ON_ZONE,
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo", ns="ns1"),
            pod("p-b1", "node-a", "foo", ns="ns2"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        {"node-a": OK, "node-b": OK, "node-x": UN, "node-y": UN},
        id="existing-pods-in-another-namespace-do-not-count",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "zone", DNS, None),
        FOUR_ZONED,
        [pod("p-x1", "node-x", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="existing-pods-do-not-match-a-null-selector",
    ),
    pytest.param(
        ON_ZONE,
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="pods-spread-over-zones-as-3-3-all-nodes-fit",
    ),
    pytest.param(
        ON_ZONE,
        [
            zn("node-a", "zone1"),
            make_node("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ],
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-b1", "node-b", "foo"),
            pod("p-x1", "node-x", "foo"),
            pod("p-y1", "node-y", "foo"),
        ],
        {"node-a": OK, "node-b": UR, "node-x": UN, "node-y": UN},
        id="pods-spread-as-1-2-because-node-b-lacks-the-zone-label",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "rack", DNS, FOO),
        [zn("node-a", "zone1"), zn("node-x", "zone2")],
        [],
        {"node-a": UR, "node-x": UR},
        id="no-node-has-the-rack-label",
    ),
    pytest.param(
        ON_NODE,
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="pods-spread-over-nodes-as-2-1-0-3-only-node-x-fits",
    ),
    pytest.param(
        spread(incoming("foo"), 2, "node", DNS, FOO),
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": UN},
        id="pods-spread-as-2-1-0-3-max-skew-2-node-b-and-node-x-fit",
    ),
    pytest.param(
        spread(incoming("bar"), 1, "node", DNS, FOO),
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": UN},
        id="pods-spread-as-2-1-0-3-but-the-pod-does-not-match-itself",
    ),
    pytest.param(
        spread(incoming("foo").node_affinity_in("node", ["node-a", "node-y"]), 1, "node", DNS, FOO),
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": UN},
        id="node-affinity-leaves-2-3-so-node-a-fits",
    ),
    pytest.param(
        ON_NODE,
        [nd("node-a"), nd("node-b")],
        [
            make_pod("p-a").node("node-a").label("foo", "").terminating().obj(),
            pod("p-b", "node-b", "foo"),
        ],
        {"node-a": OK, "node-b": UN},
        id="terminating-pods-are-excluded",
    ),
    pytest.param(
        spread(
            incoming("foo").node_affinity_term(
                [{"key": "node", "operator": "NotIn", "values": ["node-b"]}]
            ),
            1,
            "zone",
            DNS,
            FOO,
        ),
        FOUR_ZONED,
        [pod("p-b1", "node-b", "foo"), pod("p-b2", "node-b", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": OK, "node-b": OK, "node-x": UN, "node-y": UN},
        id="node-affinity-leaves-0-0-1-so-node-a-fits",
    ),
    pytest.param(
        spread(incoming("foo"), 2, "node", DNS, FOO, min_domains=4),
        ABC,
        AB2_C1,
        {"node-a": UN, "node-b": UN, "node-c": OK},
        id="fewer-domains-than-min-domains-makes-the-global-minimum-0",
    ),
    pytest.param(
        spread(incoming("foo"), 2, "node", DNS, FOO, min_domains=2),
        ABC,
        AB2_C1,
        {"node-a": OK, "node-b": OK, "node-c": OK},
        id="more-domains-than-min-domains-keeps-the-global-minimum",
    ),
    pytest.param(
        spread(incoming("foo"), 2, "zone", DNS, FOO, min_domains=3),
        FOUR_ZONED,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": OK},
        id="zones-2-1-with-fewer-domains-than-min-domains",
    ),
    pytest.param(
        spread(incoming("foo"), 2, "zone", DNS, FOO, min_domains=1),
        FOUR_ZONED,
        ZONE_2_1,
        {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
        id="zones-2-1-with-more-domains-than-min-domains",
    ),
    pytest.param(
        spread(incoming("foo").node_selector({"foo": ""}), 1, "node", DNS, FOO),
        POLICY_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": OK},
        id="node-affinity-policy-honored-with-node-selector",
    ),
    pytest.param(
        spread(
            incoming("foo").node_selector({"foo": ""}),
            1,
            "node",
            DNS,
            FOO,
            node_affinity_policy=IGNORE,
        ),
        POLICY_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="node-affinity-policy-ignored-with-node-selector",
    ),
    pytest.param(
        spread(incoming("foo").node_affinity_in("foo", [""]), 1, "node", DNS, FOO),
        POLICY_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": OK},
        id="node-affinity-policy-honored-with-node-affinity",
    ),
    pytest.param(
        spread(
            incoming("foo").node_affinity_in("foo", [""]),
            1,
            "node",
            DNS,
            FOO,
            node_affinity_policy=IGNORE,
        ),
        POLICY_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="node-affinity-policy-ignored-with-node-affinity",
    ),
    pytest.param(
        spread(incoming("foo"), 1, "node", DNS, FOO, node_taints_policy=HONOR),
        TAINT_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": OK},
        id="node-taints-policy-honored",
    ),
    pytest.param(
        ON_NODE,
        TAINT_NODES_4,
        ZONE_2_1,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="node-taints-policy-ignored",
    ),
]


def expected_status(code: Code) -> Status | None:
    if code is OK:
        return None
    if code is UN:
        return Status.unschedulable(REASON_CONSTRAINTS_NOT_MATCH)
    return Status.unresolvable(REASON_NODE_LABEL_NOT_MATCH)


def filter_all(incoming_pod: Any, nodes: list[Node], pods: list[Pod]) -> dict[str, Status | None]:
    pl, snapshot = plugin_for(nodes, pods)
    p = incoming_pod.obj()
    status, state = run_pre_filter(pl, snapshot, p)
    assert status is None
    return {n.name: pl.filter(state, p, snapshot.get(n.name)) for n in nodes}


@pytest.mark.parametrize(("incoming_pod", "nodes", "pods", "want"), SINGLE_CONSTRAINT_CASES)
def test_single_constraint(incoming_pod, nodes, pods, want):
    got = filter_all(incoming_pod, nodes, pods)
    assert got == {name: expected_status(code) for name, code in want.items()}


# id, incoming pod, nodes, existing pods, expected code per node
MULTIPLE_CONSTRAINTS_CASES = [
    pytest.param(
        ON_ZONE_AND_NODE,
        FOUR_ZONED,
        A2_B1_Y3,
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="zone-and-node-spreads-3-3-and-2-1-0-3",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        FOUR_ZONED,
        A2_B1_Y4,
        {"node-a": UN, "node-b": UN, "node-x": UN, "node-y": UN},
        id="zone-and-node-spreads-3-4-and-2-1-0-4",
    ),
    pytest.param(
        FOO_ZONE_BAR_NODE,
        FOUR_ZONED,
        [pod("p-a1", "node-a", "foo"), pod("p-y1", "node-y", "bar")],
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="different-selectors-spreads-1-0-and-1-0-0-1",
    ),
    pytest.param(
        FOO_ZONE_BAR_NODE,
        FOUR_ZONED,
        [pod("p-a1", "node-a", "foo"), pod("p-x1", "node-x", "bar"), pod("p-y1", "node-y", "bar")],
        {"node-a": UN, "node-b": UN, "node-x": UN, "node-y": UN},
        id="different-selectors-spreads-1-0-and-0-0-1-1",
    ),
    pytest.param(
        FOO_ZONE_BAR_NODE,
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo"),
            pod("p-a2", "node-a", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "foo", "bar"),
            pod("p-y3", "node-y", "foo"),
        ],
        {"node-a": UN, "node-b": OK, "node-x": UN, "node-y": UN},
        id="different-selectors-spreads-2-3-and-1-0-0-1",
    ),
    pytest.param(
        spread(spread(incoming("bar"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR),
        FOUR_ZONED,
        [pod("p-a1", "node-a", "foo"), pod("p-x1", "node-x", "bar"), pod("p-y1", "node-y", "bar")],
        {"node-a": OK, "node-b": OK, "node-x": UN, "node-y": UN},
        id="different-selectors-and-the-pod-does-not-match-the-zone-one",
    ),
    pytest.param(
        ON_ZONE_AND_NODE,
        [
            zn("node-a", "zone1"),
            zn("node-b", "zone1"),
            make_node("node-x").label("zone", "zone2").obj(),
            zn("node-y", "zone2"),
        ],
        [pod("p-a1", "node-a", "foo"), pod("p-y3", "node-y", "foo")],
        {"node-a": UN, "node-b": OK, "node-x": UR, "node-y": UN},
        id="node-x-lacks-the-node-label",
    ),
    pytest.param(
        spread(
            spread(incoming("foo").node_selector({"foo": ""}), 1, "zone", DNS, FOO),
            1,
            "node",
            DNS,
            FOO,
            node_affinity_policy=IGNORE,
        ),
        [
            zn("node-a", "zone1", "foo"),
            zn("node-b", "zone1", "foo"),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2"),
        ],
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="zone-honor-ignore-node-ignore-ignore",
    ),
    pytest.param(
        spread(
            spread(incoming("foo"), 1, "zone", DNS, FOO, node_taints_policy=HONOR),
            1,
            "node",
            DNS,
            FOO,
        ),
        [
            zn("node-a", "zone1", "foo"),
            zn("node-b", "zone1", "foo"),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2", taint=True),
        ],
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="zone-honor-honor-node-honor-ignore",
    ),
    pytest.param(
        spread(
            spread(incoming("foo").node_selector({"foo": ""}), 1, "zone", DNS, FOO),
            1,
            "node",
            DNS,
            FOO,
        ),
        [
            zn("node-a", "zone1", "foo"),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2", "foo", taint=True),
        ],
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": UN, "node-b": OK, "node-x": OK, "node-y": UN},
        id="zone-honor-ignore-node-honor-ignore",
    ),
    pytest.param(
        spread(
            spread(
                incoming("foo").node_selector({"foo": ""}),
                1,
                "zone",
                DNS,
                FOO,
                node_taints_policy=HONOR,
            ),
            1,
            "node",
            DNS,
            FOO,
            node_affinity_policy=IGNORE,
        ),
        [
            zn("node-a", "zone1", "foo"),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", "foo"),
            zn("node-y", "zone2", "foo", taint=True),
        ],
        [pod("p-a1", "node-a", "foo"), pod("p-b1", "node-b", "foo"), pod("p-y1", "node-y", "foo")],
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": UN},
        id="zone-honor-honor-node-ignore-ignore",
    ),
    pytest.param(
        spread(spread(incoming("foo", "bar"), 1, "zone", DNS, BAR), 1, "zone", DNS, FOO),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo", "bar"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "foo", "bar"),
            pod("p-y3", "node-y", "foo"),
        ],
        {"node-a": UN, "node-b": UN, "node-x": OK, "node-y": OK},
        id="two-zone-constraints-spreads-3-3-and-2-1",
    ),
    pytest.param(
        spread(spread(incoming("foo", "bar"), 1, "zone", DNS, BAR), 1, "zone", DNS, FOO),
        FOUR_ZONED,
        [
            pod("p-a1", "node-a", "foo", "bar"),
            pod("p-a2", "node-a", "foo"),
            pod("p-b1", "node-b", "foo", "bar"),
            pod("p-y1", "node-y", "foo"),
            pod("p-y2", "node-y", "foo", "bar"),
            pod("p-y3", "node-y", "foo"),
            pod("p-y4", "node-y", "foo"),
        ],
        {"node-a": UN, "node-b": UN, "node-x": UN, "node-y": UN},
        id="two-zone-constraints-spreads-3-4-and-2-1",
    ),
]


@pytest.mark.parametrize(("incoming_pod", "nodes", "pods", "want"), MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(incoming_pod, nodes, pods, want):
    got = filter_all(incoming_pod, nodes, pods)
    assert got == {name: expected_status(code) for name, code in want.items()}


def test_filter_without_pre_filter_is_an_error():
    pl, snapshot = plugin_for([nd("node-a")], [])
    status = pl.filter(CycleState(), incoming("foo").obj(), snapshot.get("node-a"))
    assert status == Status.error('reading "PreFilterPodTopologySpread" from cycleState: not found')


def test_preemption_can_make_a_node_fit():
    # 2/1/0 on nodes, maxSkew 1: node-a fails until one of its pods is removed.
    nodes = [nd("node-a"), nd("node-b"), nd("node-c")]
    victims = [pod("p-a1", "node-a", "foo"), pod("p-a2", "node-a", "foo")]
    pl, snapshot = plugin_for(nodes, [*victims, pod("p-b1", "node-b", "foo")])
    p = ON_NODE.obj()
    _, state = run_pre_filter(pl, snapshot, p)
    assert pl.filter(state, p, snapshot.get("node-a")) == expected_status(UN)
    trial = state.clone()
    for victim in victims:
        pl.remove_pod(trial, p, PodInfo(victim), snapshot.get("node-a"))
    assert pl.filter(trial, p, snapshot.get("node-a")) is None


def test_events_to_register():
    pl, _ = plugin_for([], [])
    events = [e.event for e in pl.events_to_register()]
    assert pl.name == NAME == "PodTopologySpread"
    assert events == [
        ClusterEvent(
            EventResource.POD,
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE,
        ),
        ClusterEvent(
            EventResource.NODE,
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    ]
    assert all(e.hint is not None for e in pl.events_to_register())


Q = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP
ZONE_POD = spread(incoming("foo"), 1, "zone", DNS, FOO)
ZONE_NODE_POD = spread(spread(incoming(), 1, "zone", DNS, FOO), 1, "node", DNS, FOO)


def bare(name: str, *labels: str, taint: bool = False) -> Node:
    """A node with only ``labels`` (no hostname label)."""
    w = make_node(name)
    w.raw["metadata"]["labels"] = {}
    for label in labels:
        key, _, value = label.partition("=")
        w.label(key, value)
    if taint:
        w.taint(UNSCHEDULABLE_TAINT)
    return w.obj()


NODE_HINT_CASES = [
    pytest.param(
        ZONE_POD,
        bare("node-a", "zone=zone1"),
        bare("node-a", "zone=zone2"),
        Q,
        id="queue-on-node-topology-value-changed",
    ),
    pytest.param(
        ZONE_POD,
        bare("node-a", "foo=bar1"),
        bare("node-a", "foo=bar2"),
        SKIP,
        id="skip-queue-on-unrelated-label-of-a-node-without-the-key",
    ),
    pytest.param(
        ZONE_NODE_POD,
        bare("node-a", "zone=zone1", "node=node1", "foo=bar"),
        bare("node-a", "zone=zone1", "node=node1"),
        SKIP,
        id="skip-queue-on-unrelated-label-removed-from-a-matching-node",
    ),
    pytest.param(
        ZONE_POD,
        None,
        bare("node-a", "foo=bar"),
        SKIP,
        id="skip-queue-on-node-added-without-the-key",
    ),
    pytest.param(
        ZONE_POD, None, bare("node-a", "zone=zone1"), Q, id="queue-on-node-added-with-the-key"
    ),
    pytest.param(
        ZONE_POD,
        bare("node-a", "foo=bar"),
        None,
        SKIP,
        id="skip-queue-on-node-deleted-without-the-key",
    ),
    pytest.param(
        ZONE_POD, bare("node-a", "zone=zone1"), None, Q, id="queue-on-node-deleted-with-the-key"
    ),
    pytest.param(
        ZONE_NODE_POD,
        None,
        bare("node-a", "zone=zone1"),
        SKIP,
        id="skip-queue-on-node-added-with-only-one-of-the-keys",
    ),
    pytest.param(
        ZONE_NODE_POD,
        None,
        bare("node-a", "zone=zone1", "node=node1"),
        Q,
        id="queue-on-node-added-with-all-keys",
    ),
    pytest.param(
        ZONE_NODE_POD,
        bare("node-a", "zone=zone1"),
        bare("node-a", "zone=zone1"),
        SKIP,
        id="skip-queue-on-node-updated-with-only-one-of-the-keys",
    ),
    pytest.param(
        ZONE_NODE_POD,
        bare("node-a", "zone=zone1", "node=node1"),
        bare("node-a", "zone=zone1", "node=node2"),
        Q,
        id="queue-on-node-updated-value-of-one-of-all-keys",
    ),
    pytest.param(
        ZONE_POD,
        bare("node-a", "zone=zone1"),
        bare("node-a", "zone=zone1", taint=True),
        Q,
        id="queue-on-taint-change-of-a-matching-node",
    ),
    pytest.param(
        ZONE_POD,
        bare("node-a"),
        bare("node-a", taint=True),
        SKIP,
        id="skip-queue-on-taint-change-of-a-node-without-the-key",
    ),
    pytest.param(
        ZONE_POD,
        bare("node-a"),
        bare("node-a", "zone=zone1"),
        Q,
        id="queue-on-node-gaining-the-key",
    ),
]


@pytest.mark.parametrize(("incoming_pod", "old", "new_node", "want"), NODE_HINT_CASES)
def test_is_schedulable_after_node_change(incoming_pod, old, new_node, want):
    pl, _ = plugin_for([], [])
    assert pl.is_schedulable_after_node_change(incoming_pod.obj(), old, new_node) is want


def assigned(name: str, *labels: str, ns: str = "") -> Pod:
    return pod(name, "fake-node", *labels, ns=ns)


ZONE_BAR_NODE_POD = spread(spread(incoming("foo"), 1, "zone", DNS, FOO), 1, "node", DNS, BAR)
TAINT_HONOR_POD = spread(incoming("foo"), 1, "zone", DNS, FOO, node_taints_policy=HONOR)

POD_HINT_CASES = [
    pytest.param(
        ZONE_POD, None, assigned("q", "foo"), Q, id="queue-on-assigned-matching-pod-added"
    ),
    pytest.param(
        ZONE_POD, None, pod("q", "", "foo"), SKIP, id="skip-queue-on-unscheduled-pod-added"
    ),
    pytest.param(
        ZONE_POD,
        pod("q", "", "bar"),
        pod("q", "", "foo"),
        SKIP,
        id="skip-queue-on-unscheduled-pod-updated",
    ),
    pytest.param(
        ZONE_POD, pod("q", "", "foo"), None, SKIP, id="skip-queue-on-unscheduled-pod-deleted"
    ),
    pytest.param(
        ZONE_POD,
        None,
        assigned("q", "foo", ns="fake-namespace"),
        SKIP,
        id="skip-queue-on-pod-added-in-another-namespace",
    ),
    pytest.param(
        ZONE_POD, None, assigned("q", "bar"), SKIP, id="skip-queue-on-non-matching-pod-added"
    ),
    pytest.param(ZONE_POD, assigned("q", "foo"), None, Q, id="queue-on-matching-pod-deleted"),
    pytest.param(
        ZONE_POD, assigned("q", "bar"), None, SKIP, id="skip-queue-on-non-matching-pod-deleted"
    ),
    pytest.param(
        ZONE_POD,
        assigned("q", "foo", "bar=bar1"),
        assigned("q", "foo", "bar=bar2"),
        SKIP,
        id="skip-queue-on-unrelated-label-updated",
    ),
    pytest.param(
        ZONE_POD, assigned("q"), assigned("q", "foo"), Q, id="queue-on-matching-label-added"
    ),
    pytest.param(
        ZONE_POD, assigned("q", "foo"), assigned("q"), Q, id="queue-on-matching-label-removed"
    ),
    pytest.param(
        ZONE_POD,
        assigned("q", "foo=foo1"),
        assigned("q", "foo=foo2"),
        SKIP,
        id="skip-queue-on-matched-label-value-changed",
    ),
    pytest.param(
        ZONE_BAR_NODE_POD,
        assigned("q", "foo"),
        assigned("q", "foo", "bar=bar2"),
        Q,
        id="queue-on-label-matching-the-second-constraint-added",
    ),
    pytest.param(
        ZONE_BAR_NODE_POD,
        assigned("q", "foo"),
        assigned("q", "foo", "baz"),
        SKIP,
        id="skip-queue-on-label-matching-no-constraint-added",
    ),
    pytest.param(
        ZONE_BAR_NODE_POD,
        assigned("q", "foo", "bar"),
        assigned("q", "foo", "bar=bar2"),
        SKIP,
        id="skip-queue-on-label-value-changed-still-matching",
    ),
    pytest.param(
        TAINT_HONOR_POD,
        make_pod("p").label("foo", "").obj(),
        make_pod("p").label("foo", "").toleration(key="k", operator="Exists").obj(),
        Q,
        id="queue-on-own-toleration-added-with-taints-policy-honor",
    ),
    pytest.param(
        ZONE_POD,
        make_pod("p").label("foo", "").obj(),
        make_pod("p").label("foo", "").toleration(key="k", operator="Exists").obj(),
        SKIP,
        id="skip-queue-on-own-toleration-added-with-taints-policy-ignore",
    ),
]


@pytest.mark.parametrize(("incoming_pod", "old", "new_pod", "want"), POD_HINT_CASES)
def test_is_schedulable_after_pod_change(incoming_pod, old, new_pod, want):
    pl, _ = plugin_for([], [])
    assert pl.is_schedulable_after_pod_change(incoming_pod.obj(), old, new_pod) is want


def test_hint_with_a_wrong_object_type_raises():
    pl, _ = plugin_for([], [])
    with pytest.raises(TypeError):
        pl.is_schedulable_after_node_change(ZONE_POD.obj(), None, "not a node")
