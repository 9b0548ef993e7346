"""InterPodAffinity PreScore / Score / NormalizeScore.

The tables reproduce upstream's ``interpodaffinity/scoring_test.go`` (release-1.34):
TestPreferredAffinity and TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
Upstream's "invalid (anti-)affinity labels fail PreScore" cases are not here: such pods
fail to decode before any plugin sees them. Upstream's namespace "" is "default" here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.types import NodeScore
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Namespace
from kubesched.plugins.interpodaffinity import new
from kubesched.plugins.interpodaffinity.scoring import PRE_SCORE_STATE_KEY, PreScoreState
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

# --- helpers ---------------------------------------------------------------------------


NAMESPACES = [
    Namespace("subteam1.team1", {"team": "team1"}),
    Namespace("subteam2.team1", {"team": "team1"}),
    Namespace("subteam1.team2", {"team": "team2"}),
    Namespace("subteam2.team2", {"team": "team2"}),
]


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def node(name: str, labels: dict[str, str]) -> Node:
    return make_node(name).labels(labels).obj()


def run_score(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    args: dict[str, Any] | None = None,
) -> tuple[Status | None, list[tuple[str, int]]]:
    """PreScore over ``nodes``; then Score each node and NormalizeScore, as upstream."""
    handle = PluginHandle(nodes=nodes, pods=pods, namespaces=NAMESPACES)
    plugin = new(args, handle)
    state = CycleState()
    status = plugin.pre_score(state, pod, [handle.snapshot.get(n.name) for n in nodes])
    if status is not None:
        return status, []
    scores = []
    for n in nodes:
        score, score_status = plugin.score(state, pod, handle.snapshot.get(n.name))
        assert score_status is None
        scores.append(NodeScore(n.name, score))
    assert plugin.normalize_score(state, pod, scores) is None
    return None, [(s.name, s.score) for s in scores]


SKIP = Status(Code.SKIP)
MAX = MAX_NODE_SCORE

RG_CHINA = {"region": "China"}
RG_INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}

Affinity = Callable[[PodWrapper], PodWrapper]


def stay_with_s1_in_region(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity("region", sel(expr("security", "In", "S1")), weight=5)


def stay_with_s2_in_region(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity("region", sel(expr("security", "In", "S2")), weight=6)


def affinity3(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity(
        "region",
        sel(expr("security", "NotIn", "S1"), expr("security", "In", "S2")),
        weight=8,
    ).pod_affinity(
        "region", sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")), weight=2
    )


def hard_affinity(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity("region", sel(expr("security", "In", "S1", "value2"))).pod_affinity(
        "region", sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist"))
    )


def away_from_s1_in_az(w: PodWrapper) -> PodWrapper:
    return w.pod_anti_affinity("az", sel(expr("security", "In", "S1")), weight=5)


def away_from_s2_in_az(w: PodWrapper) -> PodWrapper:
    return w.pod_anti_affinity("az", sel(expr("security", "In", "S2")), weight=5)


def stay_with_s1_in_region_away_from_s2_in_az(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity("region", sel(expr("security", "In", "S1")), weight=8).pod_anti_affinity(
        "az", sel(expr("security", "In", "S2")), weight=5
    )


def affinity_namespace_selector(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity(
        "region",
        sel(expr("security", "In", "S1")),
        weight=5,
        namespaces=["subteam2.team2"],
        namespace_selector=sel(expr("team", "In", "team1")),
    )


def anti_affinity_namespace_selector(w: PodWrapper) -> PodWrapper:
    return w.pod_anti_affinity(
        "region",
        sel(expr("security", "In", "S1")),
        weight=5,
        namespaces=["subteam2.team2"],
        namespace_selector=sel(expr("team", "In", "team1")),
    )


def no_affinity(w: PodWrapper) -> PodWrapper:
    return w


_counter = iter(range(1_000_000))


def pod(
    labels: dict[str, str] | None = None,
    affinity: Affinity = no_affinity,
    node_name: str = "",
    namespace: str = "default",
) -> Pod:
    w = make_pod(f"pod{next(_counter)}").namespace(namespace).labels(labels or {})
    if node_name:
        w = w.node(node_name)
    return affinity(w).obj()


# --- TestPreferredAffinity -------------------------------------------------------------

PREFERRED_CASES = [
    pytest.param(
        pod(S1),
        [],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        SKIP,
        None,
        id="no affinity anywhere skips scoring",
    ),
    pytest.param(
        pod(S1, stay_with_s1_in_region),
        [pod(S1, node_name="node1"), pod(S2, node_name="node2"), pod(S1, node_name="node3")],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", MAX), ("node2", 0), ("node3", 0)],
        id="affinity scores the node matching the topology key and the pods highest",
    ),
    pytest.param(
        pod(None, stay_with_s1_in_region),
        [pod(S1, node_name="node1")],
        [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)],
        {},
        None,
        [("node1", MAX), ("node2", MAX), ("node3", 0)],
        id="nodes sharing the topology value of a matching pod score the same",
    ),
    pytest.param(
        pod(S1, stay_with_s2_in_region),
        [
            pod(S2, node_name="node1"),
            pod(S2, node_name="node1"),
            pod(S2, node_name="node2"),
            pod(S2, node_name="node3"),
            pod(S2, node_name="node4"),
            pod(S2, node_name="node5"),
        ],
        [
            node("node1", RG_CHINA),
            node("node2", RG_INDIA),
            node("node3", RG_CHINA),
            node("node4", RG_CHINA),
            node("node5", RG_INDIA),
        ],
        {},
        None,
        [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", MAX), ("node5", 0)],
        id="the region with more matching pods scores higher",
    ),
    pytest.param(
        pod(S1, affinity3),
        [pod(S1, node_name="node1"), pod(S2, node_name="node2"), pod(S1, node_name="node3")],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", 20), ("node2", MAX), ("node3", 0)],
        id="different operators and weights, some not matching, give graded scores",
    ),
    pytest.param(
        pod(S2),
        [
            pod(S1, stay_with_s1_in_region, node_name="node1"),
            pod(S2, stay_with_s2_in_region, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", 0), ("node2", MAX), ("node3", 0)],
        id="affinity symmetry: existing pods' preferred affinity the pod matches",
    ),
    pytest.param(
        pod(S1, namespace="subteam1.team1"),
        [
            pod(S1, affinity_namespace_selector, node_name="node1"),
            pod(S2, stay_with_s2_in_region, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", MAX), ("node2", 0), ("node3", 0)],
        id="affinity symmetry with a namespaceSelector selecting the pod's namespace",
    ),
    pytest.param(
        pod(S1, namespace="subteam1.team1"),
        [
            pod(S1, anti_affinity_namespace_selector, node_name="node1"),
            pod(S2, stay_with_s2_in_region, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", 0), ("node2", MAX), ("node3", MAX)],
        id="anti-affinity symmetry with a namespaceSelector selecting the pod's namespace",
    ),
    pytest.param(
        pod(S1),
        [
            pod(S1, hard_affinity, node_name="node1"),
            pod(S2, hard_affinity, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)],
        {},
        None,
        [("node1", MAX), ("node2", MAX), ("node3", 0)],
        id="affinity symmetry: existing pods' required affinity counts with the hard weight",
    ),
    pytest.param(
        pod(S1, away_from_s1_in_az),
        [pod(S1, node_name="node1"), pod(S2, node_name="node2")],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity: a node without matching pods scores high",
    ),
    pytest.param(
        pod(S1, away_from_s1_in_az),
        [pod(S1, node_name="node1"), pod(S1, node_name="node2")],
        [node("node1", AZ1), node("node2", RG_CHINA)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity: a node without the topology key scores high",
    ),
    pytest.param(
        pod(S1, away_from_s1_in_az),
        [pod(S1, node_name="node1"), pod(S1, node_name="node1"), pod(S2, node_name="node2")],
        [node("node1", AZ1), node("node2", RG_INDIA)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity: the node with more matching pods scores lower",
    ),
    pytest.param(
        pod(S2),
        [
            pod(S1, away_from_s2_in_az, node_name="node1"),
            pod(S2, away_from_s1_in_az, node_name="node2"),
        ],
        [node("node1", AZ1), node("node2", AZ2)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity symmetry: existing pods' preferred anti-affinity the pod matches",
    ),
    pytest.param(
        pod(S1, stay_with_s1_in_region_away_from_s2_in_az),
        [pod(S1, node_name="node1"), pod(S1, node_name="node2")],
        [node("node1", RG_CHINA), node("node2", AZ1)],
        {},
        None,
        [("node1", MAX), ("node2", 0)],
        id="affinity and anti-affinity together",
    ),
    pytest.param(
        pod(S1, stay_with_s1_in_region_away_from_s2_in_az),
        [
            pod(S1, node_name="node1"),
            pod(S1, node_name="node1"),
            pod(S1, node_name="node2"),
            pod(S1, node_name="node3"),
            pod(S1, node_name="node3"),
            pod(S1, node_name="node4"),
            pod(S1, node_name="node5"),
        ],
        [
            node("node1", RG_CHINA_AZ1),
            node("node2", RG_INDIA),
            node("node3", RG_CHINA),
            node("node4", RG_CHINA),
            node("node5", RG_INDIA),
        ],
        {},
        None,
        [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", MAX), ("node5", 0)],
        id="affinity and anti-affinity with pods of the same labels as the pod",
    ),
    pytest.param(
        pod(S1, stay_with_s1_in_region_away_from_s2_in_az),
        [
            pod(S1, node_name="node1"),
            pod(S2, node_name="node2"),
            pod(None, stay_with_s1_in_region_away_from_s2_in_az, node_name="node3"),
            pod(None, away_from_s1_in_az, node_name="node4"),
        ],
        [
            node("node1", RG_CHINA),
            node("node2", AZ1),
            node("node3", RG_INDIA),
            node("node4", AZ2),
        ],
        {},
        None,
        [("node1", MAX), ("node2", 0), ("node3", MAX), ("node4", 0)],
        id="affinity, anti-affinity and both symmetries together",
    ),
    pytest.param(
        pod(S1),
        [
            pod(S1, node_name="node1"),
            pod(None, stay_with_s1_in_region_away_from_s2_in_az, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_CHINA)],
        {},
        None,
        [("node1", 0), ("node2", 0)],
        id="nodes of a topology partly without pods with affinity (issue 82796)",
    ),
    pytest.param(
        pod(S1, affinity_namespace_selector, namespace="subteam1.team1"),
        [
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team2"),
            pod(S1, node_name="node2", namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {},
        None,
        [("node1", MAX), ("node2", 0)],
        id="affinity with pods in namespaces the namespaceSelector selects",
    ),
    pytest.param(
        pod(S1, affinity_namespace_selector, namespace="subteam1.team1"),
        [
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam2.team2"),
            pod(S1, node_name="node2", namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {},
        None,
        [("node1", MAX), ("node2", 0)],
        id="affinity with pods selected by both the namespaceSelector and namespaces",
    ),
    pytest.param(
        pod(S1, anti_affinity_namespace_selector, namespace="subteam1.team1"),
        [
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team2"),
            pod(S1, node_name="node2", namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity with pods in namespaces the namespaceSelector selects",
    ),
    pytest.param(
        pod(S1, anti_affinity_namespace_selector, namespace="subteam1.team1"),
        [
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam1.team1"),
            pod(S1, node_name="node1", namespace="subteam2.team2"),
            pod(S1, node_name="node2", namespace="subteam2.team1"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {},
        None,
        [("node1", 0), ("node2", MAX)],
        id="anti-affinity with pods selected by both the namespaceSelector and namespaces",
    ),
    pytest.param(
        pod(S2),
        [
            pod(S1, stay_with_s1_in_region_away_from_s2_in_az, node_name="node1"),
            pod(S2, stay_with_s2_in_region, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {"ignorePreferredTermsOfExistingPods": True},
        SKIP,
        None,
        id="ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
    ),
    pytest.param(
        pod(S2),
        [
            pod(S1, stay_with_s1_in_region_away_from_s2_in_az, node_name="node1"),
            pod(S2, stay_with_s2_in_region, node_name="node2"),
        ],
        [node("node1", RG_CHINA), node("node2", RG_INDIA)],
        {"ignorePreferredTermsOfExistingPods": False},
        None,
        [("node1", 0), ("node2", MAX)],
        id="existing pods' preferred terms count by default",
    ),
    pytest.param(pod(S2), [], [], {}, SKIP, None, id="no nodes to score skips"),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "nodes", "args", "want_status", "want_scores"), PREFERRED_CASES
)
def test_preferred_affinity(
    incoming: Pod,
    pods: list[Pod],
    nodes: list[Node],
    args: dict[str, Any],
    want_status: Status | None,
    want_scores: list[tuple[str, int]] | None,
) -> None:
    status, scores = run_score(incoming, pods, nodes, {"hardPodAffinityWeight": 1, **args})
    assert status == want_status
    if want_status is None:
        assert scores == want_scores


# --- TestPreferredAffinityWithHardPodAffinitySymmetricWeight ---------------------------


def hard_pod_affinity(w: PodWrapper) -> PodWrapper:
    return w.pod_affinity(
        "region",
        sel(expr("service", "In", "S1")),
        namespaces=["default", "subteam2.team2"],
        namespace_selector=sel(expr("team", "In", "team1")),
    )


SERVICE_S1 = {"service": "S1"}
HARD_NODES = [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", AZ1)]

HARD_WEIGHT_CASES = [
    pytest.param(
        "default",
        1,
        None,
        [("node1", MAX), ("node2", MAX), ("node3", 0)],
        id="with the default weight",
    ),
    pytest.param("default", 0, SKIP, None, id="with zero weight"),
    pytest.param("subteam1.team2", 1, SKIP, None, id="with no matching namespace"),
    pytest.param(
        "subteam1.team1",
        1,
        None,
        [("node1", MAX), ("node2", MAX), ("node3", 0)],
        id="with a matching namespaceSelector",
    ),
    pytest.param(
        "subteam2.team2",
        1,
        None,
        [("node1", MAX), ("node2", MAX), ("node3", 0)],
        id="with matching namespaces",
    ),
]


@pytest.mark.parametrize(("namespace", "weight", "want_status", "want_scores"), HARD_WEIGHT_CASES)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    namespace: str,
    weight: int,
    want_status: Status | None,
    want_scores: list[tuple[str, int]] | None,
) -> None:
    existing = [
        pod(None, hard_pod_affinity, node_name="node1"),
        pod(None, hard_pod_affinity, node_name="node2"),
    ]
    status, scores = run_score(
        pod(SERVICE_S1, namespace=namespace),
        existing,
        HARD_NODES,
        {"hardPodAffinityWeight": weight},
    )
    assert status == want_status
    if want_status is None:
        assert scores == want_scores


# --- NormalizeScore and state ----------------------------------------------------------

NORMALIZE_CASES = [
    pytest.param([5, 0, 0], [100, 0, 0], id="the highest score maps to 100"),
    pytest.param([-5, 0, 0], [0, 100, 100], id="negative scores map from the minimum"),
    pytest.param([3, 3, 3], [0, 0, 0], id="all equal scores map to 0"),
    pytest.param([2, 4, 10], [0, 25, 100], id="positive scores map from their minimum"),
    pytest.param([-7, 1, 2], [0, 88, 100], id="fractions are truncated"),
]


@pytest.mark.parametrize(("raw", "want"), NORMALIZE_CASES)
def test_normalize_score(raw: list[int], want: list[int]) -> None:
    plugin = new(None, PluginHandle(nodes=[], pods=[]))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({"region": {"x": 0}}))
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert plugin.normalize_score(state, make_pod("in").obj(), scores) is None
    assert [s.score for s in scores] == want


def test_normalize_score_leaves_scores_when_no_topology_score() -> None:
    plugin = new(None, PluginHandle(nodes=[], pods=[]))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState({}))
    scores = [NodeScore("n0", 7), NodeScore("n1", 3)]
    assert plugin.normalize_score(state, make_pod("in").obj(), scores) is None
    assert [s.score for s in scores] == [7, 3]


def test_score_without_pre_score_state_is_an_error() -> None:
    n = node("node1", RG_CHINA)
    handle = PluginHandle(nodes=[n], pods=[])
    plugin = new(None, handle)
    score, status = plugin.score(CycleState(), make_pod("in").obj(), handle.snapshot.get("node1"))
    assert score == 0
    assert status is not None and status.code is Code.ERROR
