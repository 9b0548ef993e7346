"""The queue's building blocks on their own: backoff arithmetic, pod-update events,
the requeue decision, the activeQ heap and the in-flight event log."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.interface import ActionType, ClusterEvent, EventResource
from kubesched.framework.types import QueuedPodInfo
from kubesched.scheduler.backend.queue import (
    Strategy,
    backoff_duration,
    node_update_events,
    pod_update_events,
)
from kubesched.scheduler.backend.queue.active import ActiveQueue
from kubesched.scheduler.backend.queue.events import NODE_ADD, requeue_strategy
from kubesched.scheduler.backend.queue.inflight import InFlightPods
from kubesched.testing import make_node, make_pod


def table(*rows: tuple[Any, ...]) -> list[Any]:
    return [pytest.param(*values, id=id_) for id_, *values in rows]


@pytest.mark.parametrize(
    ("attempts", "initial", "maximum", "want"),
    table(
        ("no-backoff-before-any-attempt", 0, 1, 10, 0),
        ("first-attempt-waits-initial", 1, 1, 10, 1),
        ("backoff-doubles-per-attempt", 3, 1, 10, 4),
        ("backoff-doubles-up-to-max", 5, 1, 10, 10),
        ("backoff-stays-at-max", 60, 1, 10, 10),
        ("initial-above-max-is-capped", 1, 20, 10, 10),
    ),
)
def test_backoff_duration(attempts, initial, maximum, want) -> None:
    assert backoff_duration(attempts, initial, maximum) == want


BASE = make_pod("p").req(cpu="1", memory="1Gi").label("a", "1").obj()


def pod_events(*actions: ActionType) -> list[ClusterEvent]:
    return [ClusterEvent(EventResource.UNSCHEDULED_POD, a) for a in actions]


@pytest.mark.parametrize(
    ("new", "want"),
    table(
        (
            "label-change",
            make_pod("p").req(cpu="1", memory="1Gi").label("a", "2").obj(),
            pod_events(ActionType.UPDATE_POD_LABEL),
        ),
        (
            "scale-down",
            make_pod("p").req(cpu="500m", memory="1Gi").label("a", "1").obj(),
            pod_events(ActionType.UPDATE_POD_SCALE_DOWN),
        ),
        (
            "scale-up-is-generic",
            make_pod("p").req(cpu="2", memory="1Gi").label("a", "1").obj(),
            pod_events(ActionType.UPDATE),
        ),
        (
            "toleration-added",
            make_pod("p").req(cpu="1", memory="1Gi").label("a", "1").toleration("k", "v").obj(),
            pod_events(ActionType.UPDATE_POD_TOLERATION),
        ),
        (
            "label-and-toleration",
            make_pod("p").req(cpu="1", memory="1Gi").toleration("k", "v").obj(),
            pod_events(ActionType.UPDATE_POD_LABEL, ActionType.UPDATE_POD_TOLERATION),
        ),
    ),
)
def test_pod_update_events(new, want) -> None:
    assert pod_update_events(BASE, new) == want


def test_gates_eliminated_event() -> None:
    gated = make_pod("p").scheduling_gates("g").obj()
    assert pod_update_events(gated, make_pod("p").obj()) == pod_events(
        ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    )


@pytest.mark.parametrize(
    ("unschedulable", "pending", "registered", "want"),
    table(
        ("no-rejector-requeues-on-any-event", (), (), {}, Strategy.AFTER_BACKOFF),
        ("rejector-without-registration-skips", ("X",), (), {}, Strategy.SKIP),
        ("registered-without-hint-queues", ("X",), (), {"X": [NODE_ADD]}, Strategy.AFTER_BACKOFF),
        ("pending-plugin-queues-immediately", (), ("X",), {"X": [NODE_ADD]}, Strategy.IMMEDIATELY),
        (
            "other-resource-skips",
            ("X",),
            (),
            {"X": [ClusterEvent(EventResource.POD, ActionType.ALL)]},
            Strategy.SKIP,
        ),
    ),
)
def test_requeue_strategy(unschedulable, pending, registered, want) -> None:
    from kubesched.framework.interface import ClusterEventWithHint

    info = QueuedPodInfo(
        BASE, unschedulable_plugins=frozenset(unschedulable), pending_plugins=frozenset(pending)
    )
    hints = {k: [ClusterEventWithHint(e) for e in v] for k, v in registered.items()}
    assert requeue_strategy(info, hints, NODE_ADD, None, object()) is want


def test_active_queue_orders_by_less_then_insertion_and_deletes_lazily() -> None:
    q = ActiveQueue(lambda a, b: a.pod.priority > b.pod.priority)
    pods = [make_pod(f"p{i}").priority(i % 3).obj() for i in range(9)]
    for pod in pods:
        q.add(QueuedPodInfo(pod))
    q.delete("default/p8")
    q.delete("default/p5")
    out = []
    while (info := q.pop()) is not None:
        out.append(info.pod.name)
    assert out == ["p2", "p1", "p4", "p7", "p0", "p3", "p6"]
    assert len(q) == 0


def test_in_flight_keeps_only_events_someone_needs() -> None:
    f = InFlightPods()
    a, b = make_pod("a").obj(), make_pod("b").obj()
    assert not f.record(NODE_ADD, None, None)  # nobody in flight
    f.start(a)
    f.record(NODE_ADD, None, "x")
    f.start(b)
    f.record(NODE_ADD, None, "y")
    assert [n for _, _, n in f.events_for(a)] == ["x", "y"]
    assert [n for _, _, n in f.events_for(b)] == ["y"]
    f.done(a)
    assert f.event_count() == 1
    f.done(b)
    assert f.event_count() == 0


def test_in_flight_tells_incarnations_apart_by_uid() -> None:
    f = InFlightPods()
    first = make_pod("a").uid("1").obj()
    f.start(first)
    assert f.get(make_pod("a").uid("2").obj()) is None
    assert f.get(first) is not None and f.has_key("default/a")


NODE = make_node("n").capacity(cpu="4").label("zone", "a").obj()


@pytest.mark.parametrize(
    ("new", "want"),
    table(
        (
            "nothing-changed-means-no-event",
            make_node("n").capacity(cpu="4").label("zone", "a").obj(),
            [],
        ),
        (
            "allocatable-change",
            make_node("n").capacity(cpu="8").label("zone", "a").obj(),
            [ActionType.UPDATE_NODE_ALLOCATABLE],
        ),
        (
            "label-change",
            make_node("n").capacity(cpu="4").label("zone", "b").obj(),
            [ActionType.UPDATE_NODE_LABEL],
        ),
        (
            "taint-added",
            make_node("n").capacity(cpu="4").label("zone", "a").taint("k").obj(),
            [ActionType.UPDATE_NODE_TAINT],
        ),
    ),
)
def test_node_update_events(new, want) -> None:
    assert node_update_events(NODE, new) == [ClusterEvent(EventResource.NODE, a) for a in want]


def test_node_turning_schedulable_is_a_taint_update() -> None:
    cordoned = make_node("n").capacity(cpu="4").label("zone", "a").unschedulable().obj()
    assert node_update_events(cordoned, NODE) == [
        ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    ]
    assert node_update_events(NODE, cordoned) == []


def test_assigned_pod_update_events_are_on_assigned_pods() -> None:
    old = make_pod("p").node("n").label("a", "1").obj()
    new = make_pod("p").node("n").label("a", "2").obj()
    assert pod_update_events(old, new) == [
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
    ]
