"""NodeUnschedulable, after upstream's node_unschedulable_test.go."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    Code,
    EnqueueExtensions,
    FilterPlugin,
    QueueingHint,
    Status,
)
from kubesched.framework.interface import QueueingHintFn as HintFn
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import nodeunschedulable
from kubesched.plugins.nodeunschedulable import (
    TAINT_NODE_UNSCHEDULABLE,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from kubesched.testing.wrappers import make_node, make_pod

UNSCHEDULABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))

CORDONED = make_node("n").unschedulable().obj()
READY = make_node("n").obj()
CORDONED_NOT_READY = (
    make_node("n").unschedulable().taint("node.kubernetes.io/not-ready", effect="NoExecute").obj()
)
READY_NOT_READY = make_node("n").taint("node.kubernetes.io/not-ready", effect="NoExecute").obj()


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            CORDONED,
            UNSCHEDULABLE,
            id="does not schedule pod to unschedulable node",
        ),
        pytest.param(make_pod("p").obj(), READY, None, id="schedules pod to normal node"),
        pytest.param(
            make_pod("p").toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule").obj(),
            CORDONED,
            None,
            id="schedules pod with toleration to unschedulable node",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists").obj(),
            CORDONED,
            None,
            id="schedules pod tolerating everything to unschedulable node",
        ),
        pytest.param(
            make_pod("p").toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoExecute").obj(),
            CORDONED,
            UNSCHEDULABLE,
            id="a toleration of another effect does not help",
        ),
    ],
)
def test_filter(pod: Pod, node: Node, want: Status | None) -> None:
    got = nodeunschedulable.NodeUnschedulable().filter(CycleState(), pod, NodeInfo(node))
    assert got == want


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            None, CORDONED, QueueingHint.QUEUE_SKIP, id="skip-queue-on-unschedulable-node-added"
        ),
        pytest.param(None, READY, QueueingHint.QUEUE, id="queue-on-schedulable-node-added"),
        pytest.param(
            CORDONED,
            CORDONED_NOT_READY,
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
        pytest.param(
            READY,
            READY_NOT_READY,
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-change-unschedulable-false",
        ),
        pytest.param(CORDONED, READY, QueueingHint.QUEUE, id="queue-on-unschedulable-field-change"),
        pytest.param(READY, CORDONED, QueueingHint.QUEUE_SKIP, id="skip-queue-on-node-cordoned"),
    ],
)
def test_is_schedulable_after_node_change(
    old: Node | None, new: Node, expected: QueueingHint
) -> None:
    assert is_schedulable_after_node_change(make_pod("p").obj(), old, new) is expected


POD = make_pod("p").uid("uid").obj()


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            make_pod("q").uid("different-uid").obj(),
            make_pod("q")
            .uid("different-uid")
            .toleration(TAINT_NODE_UNSCHEDULABLE, operator="Exists", effect="NoSchedule")
            .obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-different-pod-update",
        ),
        pytest.param(
            POD,
            make_pod("p")
            .uid("uid")
            .toleration(TAINT_NODE_UNSCHEDULABLE, operator="Exists", effect="NoSchedule")
            .obj(),
            QueueingHint.QUEUE,
            id="queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            POD,
            make_pod("p")
            .uid("uid")
            .toleration("unrelated-key", operator="Exists", effect="NoSchedule")
            .obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
    ],
)
def test_is_schedulable_after_pod_change(old: Pod, new: Pod, expected: QueueingHint) -> None:
    assert is_schedulable_after_pod_change(POD, old, new) is expected


@pytest.mark.parametrize(
    ("hint", "old", "new"),
    [
        pytest.param(
            is_schedulable_after_node_change, None, "not-a-node", id="error-wrong-new-node"
        ),
        pytest.param(
            is_schedulable_after_node_change, "not-a-node", CORDONED, id="error-wrong-old-node"
        ),
        pytest.param(is_schedulable_after_pod_change, None, "not-a-pod", id="error-wrong-new-pod"),
        pytest.param(is_schedulable_after_pod_change, "not-a-pod", POD, id="error-wrong-old-pod"),
    ],
)
def test_hints_raise_on_wrong_objects(hint: HintFn, old: object, new: object) -> None:
    with pytest.raises(TypeError):
        hint(POD, old, new)


def test_factory_builds_a_filter_plugin() -> None:
    plugin = nodeunschedulable.new(None, None)  # type: ignore[arg-type]
    assert plugin.name == "NodeUnschedulable"
    assert isinstance(plugin, FilterPlugin)
    assert isinstance(plugin, EnqueueExtensions)
