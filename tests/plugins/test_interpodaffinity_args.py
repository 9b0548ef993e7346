"""InterPodAffinity arguments, requeue events and queueing hints (``plugin.py``).

Args validation follows ``ValidateInterPodAffinityArgs`` (validation_pluginargs.go); the
hint tables reproduce upstream's ``interpodaffinity/plugin_test.go``
(Test_isSchedulableAfterPodChange, Test_isSchedulableAfterNodeChange).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    EventResource,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
)
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.interpodaffinity import NAME, InterPodAffinity, InterPodAffinityArgs, new
from kubesched.plugins.interpodaffinity.plugin import (
    is_schedulable_after_node_change,
    is_schedulable_after_pod_change,
)
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP


# --- args ------------------------------------------------------------------------------

VALID_ARGS_CASES = [
    pytest.param(None, InterPodAffinityArgs(1, False), id="no args give the defaults"),
    pytest.param({}, InterPodAffinityArgs(1, False), id="empty args give the defaults"),
    pytest.param(
        {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False), id="weight 0 is allowed"
    ),
    pytest.param(
        {"hardPodAffinityWeight": 100},
        InterPodAffinityArgs(100, False),
        id="weight 100 is allowed",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": True},
        InterPodAffinityArgs(1, True),
        id="ignorePreferredTermsOfExistingPods can be turned on",
    ),
    pytest.param(
        {"kind": "InterPodAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"},
        InterPodAffinityArgs(1, False),
        id="kind and apiVersion are accepted",
    ),
]


@pytest.mark.parametrize(("raw", "want"), VALID_ARGS_CASES)
def test_valid_args(raw: dict[str, Any] | None, want: InterPodAffinityArgs) -> None:
    plugin = new(raw, PluginHandle())
    assert plugin.args == want


INVALID_ARGS_CASES = [
    pytest.param(
        {"hardPodAffinityWeight": -1},
        ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
        id="negative weight",
    ),
    pytest.param(
        {"hardPodAffinityWeight": 101},
        ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
        id="weight above 100",
    ),
    pytest.param(
        {"hardPodAffinityWeight": "1"},
        ['hardPodAffinityWeight: Invalid value: "1": must be int'],
        id="weight of the wrong type",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": "yes"},
        ['ignorePreferredTermsOfExistingPods: Invalid value: "yes": must be bool'],
        id="ignorePreferredTermsOfExistingPods of the wrong type",
    ),
    pytest.param(
        {"hardPodAffinityWeigth": 2, "hardPodAffinityWeight": 200},
        [
            'hardPodAffinityWeigth: Invalid value: "hardPodAffinityWeigth": unknown field',
            "hardPodAffinityWeight: Invalid value: 200: not in valid range [0, 100]",
        ],
        id="every problem is reported at once",
    ),
]


@pytest.mark.parametrize(("raw", "want"), INVALID_ARGS_CASES)
def test_invalid_args(raw: dict[str, Any], want: list[str]) -> None:
    with pytest.raises(ArgsError) as info:
        new(raw, PluginHandle())
    assert [str(e) for e in info.value.errors] == want


def test_args_validate_paths() -> None:
    errors = InterPodAffinityArgs(hard_pod_affinity_weight=-5).validate()
    assert [(e.path, e.value) for e in errors] == [("hardPodAffinityWeight", -5)]
    assert InterPodAffinityArgs().validate() == []


# --- plugin surface ---------------------------------------------------------------------


def test_plugin_implements_its_extension_points() -> None:
    plugin = new(None, PluginHandle())
    assert plugin.name == NAME == "InterPodAffinity"
    assert isinstance(plugin, InterPodAffinity)
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
        assert isinstance(plugin, protocol)
    assert plugin.pre_filter_extensions() is plugin
    assert plugin.score_extensions() is plugin


def test_events_to_register() -> None:
    events = new(None, PluginHandle()).events_to_register()
    assert [(e.event, e.hint) for e in events] == [
        (
            ClusterEvent(
                EventResource.POD,
                ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
            ),
            is_schedulable_after_pod_change,
        ),
        (
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
            is_schedulable_after_node_change,
        ),
    ]


# --- pod hints -------------------------------------------------------------------------


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


AFFINITY_POD = (
    make_pod("p").pod_affinity("region", sel(expr("service", "In", "securityscan", "value2"))).obj()
)
TWO_TERM_POD = (
    make_pod("p")
    .pod_affinity("hostname", sel(expr("aaa", "Exists")))
    .pod_affinity("hostname", sel(expr("bbb", "Exists")))
    .obj()
)
ANTI_POD = (
    make_pod("p")
    .pod_anti_affinity("region", sel(expr("service", "In", "securityscan", "value2")))
    .obj()
)


def assigned(**labels: str) -> Pod:
    return make_pod("other").node("fake-node").labels(labels).obj()


def unassigned(**labels: str) -> Pod:
    return make_pod("other").labels(labels).obj()


POD_HINT_CASES = [
    pytest.param(
        AFFINITY_POD,
        None,
        assigned(service="securityscan"),
        QUEUE,
        id="queue-on-added-pod-matching-affinity",
    ),
    pytest.param(
        AFFINITY_POD,
        None,
        unassigned(service="securityscan"),
        SKIP,
        id="skip-queue-on-added-unscheduled-pod",
    ),
    pytest.param(
        AFFINITY_POD, None, assigned(aaa="a"), SKIP, id="skip-queue-on-added-pod-not-matching"
    ),
    pytest.param(
        AFFINITY_POD,
        assigned(aaa="a"),
        assigned(service="securityscan"),
        QUEUE,
        id="queue-on-pod-updated-to-match-affinity",
    ),
    pytest.param(
        AFFINITY_POD,
        assigned(service="value2"),
        assigned(service="securityscan"),
        SKIP,
        id="skip-queue-on-pod-matching-affinity-before-and-after",
    ),
    pytest.param(
        AFFINITY_POD,
        unassigned(service="securityscan"),
        unassigned(service="securityscan"),
        SKIP,
        id="skip-queue-on-updated-unscheduled-pod",
    ),
    pytest.param(
        AFFINITY_POD,
        assigned(service="securityscan"),
        assigned(aaa="a"),
        SKIP,
        id="skip-queue-on-pod-updated-to-stop-matching-affinity",
    ),
    pytest.param(
        TWO_TERM_POD,
        assigned(aaa="a"),
        assigned(service="securityscan"),
        SKIP,
        id="skip-queue-on-pod-updated-away-from-two-affinity-terms",
    ),
    pytest.param(
        TWO_TERM_POD,
        assigned(aaa="a"),
        assigned(aaa="", bbb=""),
        QUEUE,
        id="queue-on-pod-updated-to-match-all-affinity-terms",
    ),
    pytest.param(
        ANTI_POD,
        assigned(service="securityscan"),
        assigned(service="aaaa"),
        QUEUE,
        id="queue-on-pod-updated-to-stop-matching-anti-affinity",
    ),
    pytest.param(
        ANTI_POD,
        assigned(service="bbb"),
        assigned(service="securityscan"),
        SKIP,
        id="skip-queue-on-pod-updated-to-match-anti-affinity",
    ),
    pytest.param(
        ANTI_POD, assigned(aaa="a"), None, SKIP, id="skip-queue-on-deleted-pod-not-matching"
    ),
    pytest.param(
        ANTI_POD,
        assigned(service="securityscan"),
        None,
        QUEUE,
        id="queue-on-deleted-pod-matching-anti-affinity",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new_obj", "want"), POD_HINT_CASES)
def test_is_schedulable_after_pod_change(
    pod: Pod, old: Pod | None, new_obj: Pod | None, want: QueueingHint
) -> None:
    assert is_schedulable_after_pod_change(pod, old, new_obj) is want


def test_pod_hint_rejects_other_objects() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_pod_change(AFFINITY_POD, None, make_node("n").obj())


# --- node hints ------------------------------------------------------------------------

ZONE_AFFINITY_POD = (
    make_pod("p").pod_affinity("zone", sel(expr("service", "In", "securityscan", "value2"))).obj()
)
REGION_AFFINITY_POD = (
    make_pod("p").pod_affinity("region", sel(expr("service", "In", "securityscan", "value2"))).obj()
)
ZONE_ANTI_POD = make_pod("p").pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}).obj()


def n(**labels: str) -> Node:
    return make_node("node-a").labels(labels).obj()


NODE_HINT_CASES = [
    pytest.param(
        ZONE_AFFINITY_POD,
        None,
        n(zone="zone1"),
        QUEUE,
        id="queue-on-added-node-with-affinity-topology-key",
    ),
    pytest.param(
        REGION_AFFINITY_POD,
        None,
        n(zone="zone1"),
        SKIP,
        id="skip-queue-on-added-node-without-affinity-topology-key",
    ),
    pytest.param(
        ZONE_AFFINITY_POD,
        n(aaa="a"),
        n(aaa="b"),
        SKIP,
        id="skip-queue-on-node-label-update-not-touching-affinity-topology-key",
    ),
    pytest.param(
        ZONE_AFFINITY_POD,
        n(zone="zone1"),
        n(zone="zone1", **{"unrelated-label": "unrelated"}),
        SKIP,
        id="skip-queue-on-unrelated-node-label-added",
    ),
    pytest.param(
        ZONE_AFFINITY_POD,
        n(zone="zone1"),
        n(zone="zone2"),
        QUEUE,
        id="queue-on-node-affinity-topology-value-changed",
    ),
    pytest.param(
        ZONE_AFFINITY_POD,
        n(aaa="a"),
        n(zone="zone1"),
        QUEUE,
        id="queue-on-node-gaining-affinity-topology-key",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        None,
        n(zone="zone1"),
        QUEUE,
        id="queue-on-added-node-with-anti-affinity-topology-key",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        None,
        n(),
        QUEUE,
        id="queue-on-added-node-without-anti-affinity-topology-key",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        n(zone="zone1"),
        n(zone="zone1", **{"unrelated-label": "unrelated"}),
        SKIP,
        id="skip-queue-on-unrelated-node-label-added-for-anti-affinity",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        n(zone="zone1"),
        n(zone="zone2"),
        QUEUE,
        id="queue-on-node-anti-affinity-topology-value-changed",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        n(aaa="a"),
        n(zone="zone1"),
        SKIP,
        id="skip-queue-on-node-gaining-anti-affinity-topology-key",
    ),
    pytest.param(
        ZONE_ANTI_POD,
        n(zone="zone1"),
        n(aaa="a"),
        QUEUE,
        id="queue-on-node-losing-anti-affinity-topology-key",
    ),
    pytest.param(
        make_pod("p").obj(),
        None,
        n(zone="zone1"),
        SKIP,
        id="skip-queue-on-added-node-for-pod-without-affinity-terms",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new_obj", "want"), NODE_HINT_CASES)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new_obj: Node, want: QueueingHint
) -> None:
    assert is_schedulable_after_node_change(pod, old, new_obj) is want


def test_node_hint_rejects_a_missing_new_node() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_node_change(ZONE_AFFINITY_POD, n(zone="zone1"), None)
