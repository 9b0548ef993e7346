"""TaintToleration, after upstream's taint_toleration_test.go (release 1.34: no Gt/Lt
toleration operators)."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.interface import QueueingHintFn as HintFn
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import tainttoleration
from kubesched.plugins.tainttoleration import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod


def pod_with(*tolerations: dict[str, str]) -> Pod:
    wrapper: PodWrapper = make_pod("pod1")
    for t in tolerations:
        wrapper = wrapper.toleration(**t)
    return wrapper.obj()


def node_with(name: str, *taints: tuple[str, str, str]) -> Node:
    wrapper = make_node(name)
    for key, value, effect in taints:
        wrapper = wrapper.taint(key, value, effect)
    return wrapper.obj()


def untolerated(key: str, value: str) -> Status:
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) had untolerated taint {{{key}: {value}}}",)
    )


PREFER = "PreferNoSchedule"
NO_SCHEDULE = "NoSchedule"


def run_scores(pod: Pod, nodes: list[Node]) -> list[NodeScore]:
    plugin = tainttoleration.TaintToleration()
    state = CycleState()
    infos = [NodeInfo(n) for n in nodes]
    assert plugin.pre_score(state, pod, infos) is None
    scores = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores.append(NodeScore(info.name, score))
    assert plugin.score_extensions().normalize_score(state, pod, scores) is None
    return scores


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        pytest.param(
            pod_with({"key": "foo", "operator": "Equal", "value": "bar", "effect": PREFER}),
            [
                node_with("nodeA", ("foo", "bar", PREFER)),
                node_with("nodeB", ("foo", "blah", PREFER)),
            ],
            [("nodeA", 100), ("nodeB", 0)],
            id="node with taints tolerated by the pod gets a higher score than a node with "
            "intolerable taints",
        ),
        pytest.param(
            pod_with(
                {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": PREFER},
                {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": PREFER},
            ),
            [
                node_with("nodeA"),
                node_with("nodeB", ("cpu-type", "arm64", PREFER)),
                node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
            ],
            [("nodeA", 100), ("nodeB", 100), ("nodeC", 100)],
            id="nodes whose taints are all tolerated get the same score, whatever their number",
        ),
        pytest.param(
            pod_with({"key": "foo", "operator": "Equal", "value": "bar", "effect": PREFER}),
            [
                node_with("nodeA"),
                node_with("nodeB", ("cpu-type", "arm64", PREFER)),
                node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
            ],
            [("nodeA", 100), ("nodeB", 50), ("nodeC", 0)],
            id="the more intolerable taints a node has, the lower score it gets",
        ),
        pytest.param(
            pod_with(
                {"key": "cpu-type", "operator": "Equal", "value": "arm64", "effect": NO_SCHEDULE},
                {"key": "disk-type", "operator": "Equal", "value": "ssd", "effect": NO_SCHEDULE},
            ),
            [
                node_with("nodeA"),
                node_with("nodeB", ("cpu-type", "arm64", NO_SCHEDULE)),
                node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
            ],
            [("nodeA", 100), ("nodeB", 100), ("nodeC", 0)],
            id="only PreferNoSchedule taints and tolerations count for the score",
        ),
        pytest.param(
            pod_with(),
            [node_with("nodeA"), node_with("nodeB", ("cpu-type", "arm64", PREFER))],
            [("nodeA", 100), ("nodeB", 0)],
            id="no taints and tolerations: the pod prefers the node without taints",
        ),
        pytest.param(
            pod_with({"key": "cpu-type", "operator": "Exists"}),
            [node_with("nodeA"), node_with("nodeB", ("cpu-type", "arm64", PREFER))],
            [("nodeA", 100), ("nodeB", 100)],
            id="a toleration without effect tolerates PreferNoSchedule taints",
        ),
    ],
)
def test_score(pod: Pod, nodes: list[Node], expected: list[tuple[str, int]]) -> None:
    assert [(s.name, s.score) for s in run_scores(pod, nodes)] == expected


def test_score_without_pre_score_is_an_error() -> None:
    plugin = tainttoleration.TaintToleration()
    score, status = plugin.score(CycleState(), pod_with(), NodeInfo(node_with("nodeA")))
    assert (score, status) == (
        0,
        Status.error('failed to read "PreScoreTaintToleration" from cycleState: not found'),
    )


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            pod_with(),
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            untolerated("dedicated", "user1"),
            id="a pod with no tolerations can't be scheduled onto a node with taints",
        ),
        pytest.param(
            pod_with({"key": "dedicated", "value": "user1", "effect": NO_SCHEDULE}),
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            None,
            id="a pod can be scheduled on a node dedicated to user1 with effect NoSchedule",
        ),
        pytest.param(
            pod_with(
                {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NO_SCHEDULE}
            ),
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            untolerated("dedicated", "user1"),
            id="a pod can't be scheduled on a node dedicated to user2 with effect NoSchedule",
        ),
        pytest.param(
            pod_with({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE}),
            node_with("nodeA", ("foo", "bar", NO_SCHEDULE)),
            None,
            id="a toleration with operator Exists tolerates the taint",
        ),
        pytest.param(
            pod_with(
                {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NO_SCHEDULE},
                {"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
            ),
            node_with("nodeA", ("dedicated", "user2", NO_SCHEDULE), ("foo", "bar", NO_SCHEDULE)),
            None,
            id="multiple tolerations tolerating all of the node's taints",
        ),
        pytest.param(
            pod_with({"key": "foo", "operator": "Equal", "value": "bar", "effect": PREFER}),
            node_with("nodeA", ("foo", "bar", NO_SCHEDULE)),
            untolerated("foo", "bar"),
            id="key and value match but the (non-empty) effect doesn't",
        ),
        pytest.param(
            pod_with({"key": "foo", "operator": "Equal", "value": "bar"}),
            node_with("nodeA", ("foo", "bar", NO_SCHEDULE)),
            None,
            id="key and value match and the toleration's effect is empty",
        ),
        pytest.param(
            pod_with(
                {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NO_SCHEDULE}
            ),
            node_with("nodeA", ("dedicated", "user1", PREFER)),
            None,
            id="an untolerated PreferNoSchedule taint does not filter",
        ),
        pytest.param(
            pod_with(),
            node_with("nodeA", ("dedicated", "user1", PREFER)),
            None,
            id="no toleration and a PreferNoSchedule taint: the pod fits",
        ),
        pytest.param(
            pod_with(),
            node_with("nodeA", ("node.kubernetes.io/unreachable", "", "NoExecute")),
            untolerated("node.kubernetes.io/unreachable", ""),
            id="an untolerated NoExecute taint filters, an empty value printed empty",
        ),
        pytest.param(
            pod_with({"key": "a", "operator": "Exists"}),
            node_with(
                "nodeA", ("a", "1", NO_SCHEDULE), ("b", "2", NO_SCHEDULE), ("c", "3", NO_SCHEDULE)
            ),
            untolerated("b", "2"),
            id="the reason names the first untolerated taint",
        ),
    ],
)
def test_filter(pod: Pod, node: Node, want: Status | None) -> None:
    got = tainttoleration.TaintToleration().filter(CycleState(), pod, NodeInfo(node))
    assert got == want


HINT_POD = pod_with(
    {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": NO_SCHEDULE}
)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            None,
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            None,
            node_with("nodeA", ("dedicated", "user2", NO_SCHEDULE)),
            QueueingHint.QUEUE,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            node_with(
                "nodeA", ("dedicated", "user1", NO_SCHEDULE), ("dedicated", "user3", NO_SCHEDULE)
            ),
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change",
        ),
        pytest.param(
            node_with("nodeA", ("dedicated", "user1", NO_SCHEDULE)),
            node_with("nodeA", ("dedicated", "user2", NO_SCHEDULE)),
            QueueingHint.QUEUE,
            id="queue-on-taint-change",
        ),
        pytest.param(
            node_with("nodeA"),
            node_with("nodeA", ("extra", "x", PREFER)),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-node-that-already-fitted",
        ),
    ],
)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node, expected: QueueingHint
) -> None:
    assert is_schedulable_after_node_change(HINT_POD, old, new) is expected


TARGET = make_pod("pod-1").namespace("ns-1").obj()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            TARGET,
            make_pod("pod-1").namespace("ns-1").toleration("foo", effect=NO_SCHEDULE).obj(),
            QueueingHint.QUEUE,
            id="queue-on-toleration-added",
        ),
        pytest.param(
            make_pod("pod-2").namespace("ns-1").obj(),
            make_pod("pod-2").namespace("ns-1").toleration("foo", effect=NO_SCHEDULE).obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-toleration-added-to-another-pod",
        ),
    ],
)
def test_is_schedulable_after_pod_change(old: Pod, new: Pod, expected: QueueingHint) -> None:
    assert is_schedulable_after_pod_change(TARGET, old, new) is expected


@pytest.mark.parametrize(
    ("hint", "old", "new"),
    [
        pytest.param(
            is_schedulable_after_node_change, None, "not-a-node", id="backoff-wrong-new-object"
        ),
        pytest.param(
            is_schedulable_after_node_change,
            "not-a-node",
            node_with("nodeA"),
            id="backoff-wrong-old-object",
        ),
        pytest.param(
            is_schedulable_after_pod_change, None, "not-a-pod", id="backoff-wrong-new-pod"
        ),
    ],
)
def test_hints_raise_on_wrong_objects(hint: HintFn, old: object, new: object) -> None:
    with pytest.raises(TypeError):
        hint(HINT_POD, old, new)


def test_events_register_taint_and_toleration_changes() -> None:
    node_event, pod_event = tainttoleration.TaintToleration().events_to_register()
    assert node_event.event.resource is EventResource.NODE
    assert node_event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_TAINT
    assert node_event.hint is is_schedulable_after_node_change
    assert pod_event.event.resource is EventResource.POD
    assert pod_event.event.action == ActionType.UPDATE_POD_TOLERATION
    assert pod_event.hint is is_schedulable_after_pod_change


def test_factory_builds_the_plugin() -> None:
    plugin = tainttoleration.new(None, None)  # type: ignore[arg-type]
    assert plugin.name == "TaintToleration"
    for protocol in (FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        assert isinstance(plugin, protocol)
