"""NodeName, after upstream's node_name_test.go."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import nodename
from kubesched.plugins.nodename import is_schedulable_after_node_change
from kubesched.testing.wrappers import make_node, make_pod

MISMATCH = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) didn't match the requested node name",)
)


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(make_pod("p").obj(), make_node("foo").obj(), None, id="no host specified"),
        pytest.param(
            make_pod("p").node("foo").obj(), make_node("foo").obj(), None, id="host matches"
        ),
        pytest.param(
            make_pod("p").node("bar").obj(),
            make_node("foo").obj(),
            MISMATCH,
            id="host doesn't match",
        ),
    ],
)
def test_filter(pod: Pod, node: Node, want: Status | None) -> None:
    got = nodename.NodeName().filter(CycleState(), pod, NodeInfo(node))
    assert got == want


@pytest.mark.parametrize(
    ("pod", "new", "expected"),
    [
        pytest.param(
            make_pod("p").node("foo").obj(),
            make_node("foo").obj(),
            QueueingHint.QUEUE,
            id="queue-on-named-node-added",
        ),
        pytest.param(
            make_pod("p").node("foo").obj(),
            make_node("bar").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-other-node-added",
        ),
        pytest.param(
            make_pod("p").obj(),
            make_node("bar").obj(),
            QueueingHint.QUEUE,
            id="queue-on-node-added-for-pod-without-node-name",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod: Pod, new: Node, expected: QueueingHint) -> None:
    assert is_schedulable_after_node_change(pod, None, new) is expected


def test_hint_raises_on_wrong_object() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(make_pod("p").obj(), None, "not-a-node")


def test_events_register_node_add_only() -> None:
    (event,) = nodename.NodeName().events_to_register()
    assert event.event.resource is EventResource.NODE
    assert event.event.action == ActionType.ADD


def test_factory_builds_a_filter_plugin() -> None:
    plugin = nodename.new(None, None)  # type: ignore[arg-type]
    assert plugin.name == "NodeName"
    assert isinstance(plugin, FilterPlugin)
    assert isinstance(plugin, EnqueueExtensions)
