"""examples/tenant_spread.py: a tenant label is required; tenants spread over nodes."""

from __future__ import annotations

from typing import Any

import pytest
import tenant_spread

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.pod import Pod
from kubesched.testing import make_node, make_pod

REASON = "pod has no tenant label"


def pod(name: str, tenant: str | None = None) -> Pod:
    wrapper = make_pod(name)
    if tenant is not None:
        wrapper = wrapper.label("tenant", tenant)
    return wrapper.obj()


def node_with(name: str, *tenants: str | None) -> NodeInfo:
    pods = [
        make_pod(f"{name}-{i}").node(name).labels({"tenant": t} if t else {}).obj()
        for i, t in enumerate(tenants)
    ]
    return NodeInfo(make_node(name).obj(), tuple(pods))


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        pytest.param(pod("p", "acme"), None, id="labelled-pod-passes"),
        pytest.param(
            pod("p"), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)), id="no-label"
        ),
        pytest.param(
            pod("p", ""),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)),
            id="empty-label-counts-as-none",
        ),
        pytest.param(
            make_pod("p").label("team", "acme").obj(),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)),
            id="another-label-is-not-a-tenant",
        ),
    ],
)
def test_pre_filter(the_pod: Pod, expected: Status | None) -> None:
    result, status = tenant_spread.new(None, None).pre_filter(CycleState(), the_pod, [])
    assert result is None  # never narrows the nodes
    assert status == expected


def test_pre_filter_has_no_extensions() -> None:
    assert tenant_spread.new(None, None).pre_filter_extensions() is None


@pytest.mark.parametrize(
    ("nodes", "raw", "normalized"),
    [
        pytest.param(
            [node_with("a"), node_with("b")], [0, 0], [100, 100], id="no-pod-of-the-tenant-anywhere"
        ),
        pytest.param(
            [node_with("a", "acme", "acme"), node_with("b", "acme"), node_with("c")],
            [2, 1, 0],
            [0, 50, 100],
            id="fewest-of-the-tenant-scores-highest",
        ),
        pytest.param(
            [node_with("a", "globex", "globex", "globex"), node_with("b", "acme")],
            [0, 1],
            [100, 0],
            id="other-tenants-do-not-count",
        ),
        pytest.param(
            [node_with("a", None, None), node_with("b", "acme", None)],
            [0, 1],
            [100, 0],
            id="unlabelled-pods-do-not-count",
        ),
        pytest.param(
            [node_with("a", "acme", "acme", "acme"), node_with("b", "acme")],
            [3, 1],
            [0, 67],
            id="integer-arithmetic-of-the-reversal",
        ),
    ],
)
def test_score_and_normalize(nodes: list[NodeInfo], raw: list[int], normalized: list[int]) -> None:
    plugin = tenant_spread.new(None, None)
    the_pod = pod("new", "acme")
    scores = []
    for info in nodes:
        value, status = plugin.score(CycleState(), the_pod, info)
        assert status is None
        scores.append(NodeScore(info.name, value))
    assert [s.score for s in scores] == raw
    ext = plugin.score_extensions()
    assert ext is plugin
    assert ext.normalize_score(CycleState(), the_pod, scores) is None
    assert [s.score for s in scores] == normalized


def test_registers_for_label_changes_of_unscheduled_pods_only() -> None:
    events = tenant_spread.new(None, None).events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)
    ]
    assert events[0].hint is tenant_spread.is_schedulable_after_pod_change


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(pod("p"), pod("p", "acme"), QueueingHint.QUEUE, id="queue-on-tenant-added"),
        pytest.param(
            pod("p"),
            make_pod("p").label("team", "x").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-other-label-added",
        ),
        pytest.param(
            pod("other"),
            pod("other", "acme"),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-another-pod-labelled",
        ),
        pytest.param(
            pod("p"),
            make_pod("p").uid("other-uid").label("tenant", "acme").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-pod-of-same-name-but-another-uid",
        ),
    ],
)
def test_hint(old: Pod, new: Pod, expected: QueueingHint) -> None:
    assert tenant_spread.is_schedulable_after_pod_change(pod("p"), old, new) is expected


def test_hint_fails_on_unexpected_objects_so_the_pod_is_queued() -> None:
    with pytest.raises(TypeError):
        tenant_spread.is_schedulable_after_pod_change(pod("p"), None, make_node("n").obj())


def test_args() -> None:
    with pytest.raises(ArgsError) as info:
        tenant_spread.new({"label": "team"}, None)
    assert [str(e) for e in info.value.errors] == ['label: Invalid value: "label": unknown field']


def test_the_example_profile(framework_for: Any) -> None:
    nodes = [make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in "abc"]
    bound = [make_pod("x").node("a").label("tenant", "acme").obj()]
    fwk = framework_for("config-tenant-spread.yaml", "tenant-scheduler", nodes, bound)
    assert [p.name for p in fwk.plugins_at("score")] == ["TenantSpread"]
    assert "TenantSpread" in [p.name for p in fwk.plugins_at("preFilter")]

    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), pod("p"))
    assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,), "TenantSpread")

    state = CycleState()
    the_pod = pod("p", "acme")
    _, status, _ = fwk.run_pre_filter_plugins(state, the_pod)
    assert status is None
    by_plugin, status = fwk.run_score_plugins(state, the_pod, fwk.snapshot.list())
    assert status is None
    assert {s.name: s.score for s in by_plugin["TenantSpread"]} == {"a": 0, "b": 100, "c": 100}
