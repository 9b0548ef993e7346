"""The scheduling queue: where pods go on add, rejection, cluster events, updates and
deletes, with the default profile's real plugins and hints."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.framework.interface import ActionType, ClusterEvent, EventResource
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.scheduler.backend.queue import (
    ACTIVE,
    BACKOFF,
    IN_FLIGHT,
    UNSCHEDULABLE,
    SchedulingQueue,
)
from kubesched.scheduler.backend.queue.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
)
from kubesched.testing import make_node, make_pod

FIT = names.NODE_RESOURCES_FIT
TAINT = names.TAINT_TOLERATION
NODE_TAINT_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)

PENDING = make_pod("pending").req(cpu="2").obj()
BOUND = make_pod("bound").req(cpu="1").node("n1").obj()
UNBOUND = make_pod("other").req(cpu="1").obj()
BIG_NODE = make_node("big").capacity(cpu="8", pods="10").obj()
SMALL_NODE = make_node("small").capacity(cpu="1", pods="10").obj()
TAINTED = make_node("n1").capacity(cpu="8", pods="10").taint("k", "v").obj()
UNTAINTED = make_node("n1").capacity(cpu="8", pods="10").obj()


def table(*rows: tuple[Any, ...]) -> list[Any]:
    """Rows ``(id, *values)`` as pytest params with sentence-like ids."""
    return [pytest.param(*values, id=id_) for id_, *values in rows]


def reject(
    q: SchedulingQueue, pod: Pod, *plugins: str, pending: tuple[str, ...] = ()
) -> str | None:
    """Add ``pod``, pop it, and bring it back rejected by ``plugins``."""
    q.add(pod)
    info = q.pop_nowait()
    assert info is not None and info.pod.key == pod.key
    info.unschedulable_plugins = frozenset(plugins)
    info.pending_plugins = frozenset(pending)
    return q.add_unschedulable_if_not_present(info)


@dataclass(frozen=True)
class MoveCase:
    id: str
    plugins: tuple[str, ...]
    event: ClusterEvent
    old: Any
    new: Any
    want: str
    pending: tuple[str, ...] = ()


MOVE_CASES = [
    MoveCase(
        "pod-rejected-by-fit-moves-on-assigned-pod-delete",
        (FIT,),
        ASSIGNED_POD_DELETE,
        BOUND,
        None,
        ACTIVE,
    ),
    MoveCase(
        "pod-rejected-by-fit-stays-on-unscheduled-pod-delete",
        (FIT,),
        UNSCHEDULED_POD_DELETE,
        UNBOUND,
        None,
        UNSCHEDULABLE,
    ),
    MoveCase(
        "pod-rejected-by-fit-moves-on-node-add-that-fits", (FIT,), NODE_ADD, None, BIG_NODE, ACTIVE
    ),
    MoveCase(
        "pod-rejected-by-fit-stays-on-node-add-too-small",
        (FIT,),
        NODE_ADD,
        None,
        SMALL_NODE,
        UNSCHEDULABLE,
    ),
    MoveCase(
        "pod-rejected-by-taint-stays-on-assigned-pod-delete",
        (TAINT,),
        ASSIGNED_POD_DELETE,
        BOUND,
        None,
        UNSCHEDULABLE,
    ),
    MoveCase(
        "pod-rejected-by-taint-moves-on-taint-removed",
        (TAINT,),
        NODE_TAINT_UPDATE,
        TAINTED,
        UNTAINTED,
        ACTIVE,
    ),
    MoveCase(
        "pod-rejected-by-taint-stays-on-taint-added",
        (TAINT,),
        NODE_TAINT_UPDATE,
        UNTAINTED,
        TAINTED,
        UNSCHEDULABLE,
    ),
    MoveCase(
        "pod-rejected-by-two-plugins-moves-if-either-helps",
        (TAINT, FIT),
        ASSIGNED_POD_DELETE,
        BOUND,
        None,
        ACTIVE,
    ),
    MoveCase(
        "pod-rejected-by-unregistered-plugin-never-moves",
        ("NoSuchPlugin",),
        NODE_ADD,
        None,
        BIG_NODE,
        UNSCHEDULABLE,
    ),
    MoveCase(
        "hint-that-raises-queues-the-pod", (FIT,), ASSIGNED_POD_DELETE, "not a pod", None, ACTIVE
    ),
    MoveCase(
        "unschedulable-timeout-moves-any-rejected-pod",
        (TAINT,),
        UNSCHEDULABLE_TIMEOUT,
        None,
        None,
        ACTIVE,
    ),
    MoveCase(
        "pending-plugin-queue-skips-backoff", (), NODE_ADD, None, BIG_NODE, ACTIVE, pending=(FIT,)
    ),
]


@pytest.mark.parametrize("case", MOVE_CASES, ids=lambda c: c.id)
def test_move_after_backoff_ended(case: MoveCase, clock, queue_factory) -> None:
    q = queue_factory(clock)
    assert reject(q, PENDING, *case.plugins, pending=case.pending) == UNSCHEDULABLE
    clock.advance(60)  # every backoff is over
    q.move_all_to_active_or_backoff(case.event, case.old, case.new)
    assert q.where(PENDING.key) == case.want


@pytest.mark.parametrize(
    ("pending", "want"),
    table(
        ("moved-pod-still-backing-off-goes-to-backoffq", (), BACKOFF),
        ("moved-pod-of-pending-plugin-goes-to-activeq-at-once", (FIT,), ACTIVE),
    ),
)
def test_move_during_backoff(pending, want, clock, queue_factory) -> None:
    q = queue_factory(clock)
    plugins = () if pending else (FIT,)
    reject(q, PENDING, *plugins, pending=pending)
    q.move_all_to_active_or_backoff(NODE_ADD, None, BIG_NODE)
    assert q.where(PENDING.key) == want


def test_pod_failed_by_error_goes_to_backoffq_then_activeq(clock, queue_factory) -> None:
    q = queue_factory(clock)
    assert reject(q, PENDING) == BACKOFF
    clock.advance(0.99)
    assert q.pop_nowait() is None and q.where(PENDING.key) == BACKOFF
    clock.advance(0.01)
    info = q.pop_nowait()
    assert info is not None and info.attempts == 2


def test_backoff_doubles_up_to_max_in_queue(clock, queue_factory) -> None:
    q = queue_factory(clock)  # default config: 1 s initial, 10 s max
    q.add(PENDING)
    waits = []
    for _ in range(6):
        info = q.pop_nowait()
        assert info is not None
        q.add_unschedulable_if_not_present(info)  # an error: straight to backoffQ
        start = clock.now
        while q.where(PENDING.key) == BACKOFF:
            clock.advance(0.5)
            q.flush_backoff_completed()
        waits.append(clock.now - start)
    assert waits == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_moved_pods_keep_queue_sort_order(clock, queue_factory) -> None:
    q = queue_factory(clock)
    low = make_pod("low").priority(1).obj()
    high = make_pod("high").priority(100).obj()
    same1 = make_pod("same1").priority(5).obj()
    same2 = make_pod("same2").priority(5).obj()
    for pod in (low, same1, high, same2):
        q.add(pod)
    order = [q.pop_nowait() for _ in range(4)]
    assert [i.pod.name for i in order if i] == ["high", "same1", "same2", "low"]


def test_unschedulable_leftover_is_flushed_after_five_minutes(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, TAINT)
    clock.advance(299)
    q.flush()
    assert q.where(PENDING.key) == UNSCHEDULABLE
    clock.advance(2)
    q.flush_unschedulable_leftover()
    assert q.where(PENDING.key) == ACTIVE


def test_flush_checks_leftovers_every_thirty_seconds(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, TAINT)
    for _ in range(10):  # 300 s, checked at every 30 s mark: not yet over 300 s
        clock.advance(30)
        q.flush()
    assert q.where(PENDING.key) == UNSCHEDULABLE
    clock.advance(30)
    q.flush()
    assert q.where(PENDING.key) == ACTIVE


def test_pop_from_backoffq_when_activeq_is_empty(clock, queue_factory) -> None:
    q = queue_factory(clock, pop_from_backoff_q=True)
    reject(q, PENDING, FIT)
    q.move_all_to_active_or_backoff(NODE_ADD, None, BIG_NODE)
    assert q.where(PENDING.key) == BACKOFF
    info = q.pop_nowait()
    assert info is not None and info.pod.key == PENDING.key


def test_pods_of_other_schedulers_are_ignored(clock, queue_factory) -> None:
    q = queue_factory(clock, "a", "b")
    assert q.add(make_pod("x").scheduler_name("a").obj())
    assert q.add(make_pod("y").scheduler_name("b").priority(9).obj())
    assert not q.add(make_pod("z").scheduler_name("default-scheduler").obj())
    assert [q.pop_nowait().pod.name for _ in range(2)] == ["y", "x"]  # type: ignore[union-attr]
    assert q.pop_nowait() is None


# --- PreEnqueue: scheduling gates ---------------------------------------------------

GATED = make_pod("gated").scheduling_gates("a", "b").obj()
ONE_GATE = make_pod("gated").scheduling_gates("b").obj()
UNGATED = make_pod("gated").obj()


@pytest.mark.parametrize(
    ("updates", "want"),
    table(
        ("gated-pod-stays-out-of-activeq", [], UNSCHEDULABLE),
        ("gated-pod-stays-when-one-of-two-gates-removed", [(GATED, ONE_GATE)], UNSCHEDULABLE),
        ("gated-pod-enters-activeq-when-last-gate-removed", [(GATED, UNGATED)], ACTIVE),
        (
            "gated-pod-enters-activeq-after-two-updates",
            [(GATED, ONE_GATE), (ONE_GATE, UNGATED)],
            ACTIVE,
        ),
    ),
)
def test_scheduling_gates(updates, want, clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(GATED)
    info = q.get(GATED.key)
    assert (
        info is not None and info.gated and info.unschedulable_plugins == {names.SCHEDULING_GATES}
    )
    q.move_all_to_active_or_backoff(NODE_ADD, None, BIG_NODE)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    for old, new in updates:
        q.update(old, new)
    assert q.where(GATED.key) == want
    if want == UNSCHEDULABLE:
        assert q.pop_nowait() is None


# --- updates and deletes -------------------------------------------------------------


def test_updated_pod_in_activeq_is_popped_with_new_spec(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    newer = PENDING.evolve(labels={"v": "2"})
    q.update(PENDING, newer)
    info = q.pop_nowait()
    assert info is not None and info.pod is newer


def test_updated_pod_in_backoffq_keeps_backoff_and_new_spec(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING)
    newer = PENDING.evolve(labels={"v": "2"})
    q.update(PENDING, newer)
    assert q.where(PENDING.key) == BACKOFF
    clock.advance(1)
    info = q.pop_nowait()
    assert info is not None and info.pod is newer


@pytest.mark.parametrize(
    ("plugins", "change", "want"),
    table(
        ("unschedulable-pod-gaining-toleration-moves", (TAINT,), {"tolerations": ("t",)}, ACTIVE),
        (
            "unschedulable-pod-label-change-does-not-help-taint",
            (TAINT,),
            {"labels": {"a": "b"}},
            UNSCHEDULABLE,
        ),
        ("unschedulable-pod-identical-update-stays", (TAINT,), {}, UNSCHEDULABLE),
    ),
)
def test_update_of_unschedulable_pod(plugins, change, want, clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, *plugins)
    clock.advance(60)
    if change.get("tolerations"):
        newer = make_pod("pending").req(cpu="2").toleration("k", "v").obj()
    else:
        newer = PENDING.evolve(**change)
    q.update(PENDING, newer)
    assert q.where(PENDING.key) == want
    assert q.get(PENDING.key).pod is newer  # type: ignore[union-attr]


def test_update_that_binds_the_pod_removes_it(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    q.update(PENDING, PENDING.evolve(node_name="n1"))
    assert q.where(PENDING.key) is None and len(q) == 0


@pytest.mark.parametrize("where", [ACTIVE, BACKOFF, UNSCHEDULABLE])
def test_deleted_pod_leaves_every_queue(where, clock, queue_factory) -> None:
    q = queue_factory(clock)
    if where == ACTIVE:
        q.add(PENDING)
    elif where == BACKOFF:
        reject(q, PENDING)
    else:
        reject(q, PENDING, FIT)
    assert q.where(PENDING.key) == where
    q.delete(PENDING)
    assert q.where(PENDING.key) is None and len(q) == 0


# --- in flight ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "old", "new", "want"),
    table(
        ("event-during-cycle-that-helps-is-replayed", NODE_ADD, None, BIG_NODE, BACKOFF),
        (
            "event-during-cycle-that-cannot-help-is-ignored",
            NODE_ADD,
            None,
            SMALL_NODE,
            UNSCHEDULABLE,
        ),
    ),
)
def test_in_flight_events(event, old, new, want, clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    info = q.pop_nowait()
    assert info is not None and q.where(PENDING.key) == IN_FLIGHT
    q.move_all_to_active_or_backoff(event, old, new)
    info.unschedulable_plugins = frozenset({FIT})
    assert q.add_unschedulable_if_not_present(info) == want
    assert q.in_flight.event_count() == 0  # no pod in flight: nothing kept


def test_events_before_pop_are_not_replayed(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    q.add(UNBOUND)
    first = q.pop_nowait()
    q.move_all_to_active_or_backoff(NODE_ADD, None, BIG_NODE)  # only `first` is in flight
    second = q.pop_nowait()
    assert first is not None and second is not None
    second.unschedulable_plugins = frozenset({FIT})
    assert q.add_unschedulable_if_not_present(second) == UNSCHEDULABLE
    first.unschedulable_plugins = frozenset({FIT})
    assert q.add_unschedulable_if_not_present(first) == BACKOFF


def test_pod_updated_in_flight_requeues_with_new_spec(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, TAINT)
    clock.advance(60)
    q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT)
    info = q.pop_nowait()
    assert info is not None
    tolerant = make_pod("pending").req(cpu="2").toleration("k", "v").obj()
    q.update(PENDING, tolerant)
    assert q.where(PENDING.key) == IN_FLIGHT
    info.unschedulable_plugins = frozenset({TAINT})
    assert q.add_unschedulable_if_not_present(info) == BACKOFF  # the toleration may help
    assert q.get(PENDING.key).pod is tolerant  # type: ignore[union-attr]


def test_pod_deleted_in_flight_is_not_requeued(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    info = q.pop_nowait()
    assert info is not None
    q.delete(PENDING)
    info.unschedulable_plugins = frozenset({FIT})
    assert q.add_unschedulable_if_not_present(info) is None
    assert q.where(PENDING.key) is None


def test_requeue_of_pod_already_queued_is_refused(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    with pytest.raises(ValueError, match="already present"):
        q.add_unschedulable_if_not_present(QueuedPodInfo(PENDING))


# --- nominator -----------------------------------------------------------------------


def test_nominated_pod_from_status_is_tracked_and_dropped_on_delete(clock, queue_factory) -> None:
    q = queue_factory(clock)
    pod = PENDING.evolve(nominated_node_name="n1")
    q.add(pod)
    assert [i.pod.key for i in q.nominator.nominated_pods_for_node("n1")] == [pod.key]
    q.delete(pod)
    assert q.nominator.nominated_pods_for_node("n1") == []


def test_update_without_nomination_keeps_in_memory_nomination(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, FIT)
    q.nominator.add_nominated_pod(PENDING, "n2")  # preemption, before the API has it
    newer = PENDING.evolve(labels={"x": "y"})
    q.update(PENDING, newer)
    assert [i.pod for i in q.nominator.nominated_pods_for_node("n2")] == [newer]


def test_requeue_with_nominated_node_overrides_status(clock, queue_factory) -> None:
    q = queue_factory(clock)
    q.add(PENDING)
    info = q.pop_nowait()
    assert info is not None
    info.unschedulable_plugins = frozenset({FIT})
    q.add_unschedulable_if_not_present(info, nominated_node="n3")
    assert q.nominator.nominated_node(PENDING) == "n3"


# --- async pop -----------------------------------------------------------------------


def test_async_pop_waits_for_a_pod_and_close_releases_it(clock, queue_factory) -> None:
    async def scenario() -> tuple[QueuedPodInfo | None, QueuedPodInfo | None]:
        q = queue_factory(clock)
        waiter = asyncio.create_task(q.pop())
        await asyncio.sleep(0)
        assert not waiter.done()
        q.add(PENDING)
        got = await asyncio.wait_for(waiter, 2)
        second = asyncio.create_task(q.pop())
        await asyncio.sleep(0)
        q.close()
        return got, await asyncio.wait_for(second, 2)

    got, after_close = asyncio.run(scenario())
    assert got is not None and got.pod.key == PENDING.key
    assert after_close is None


# --- helpers for the event handlers ----------------------------------------------------


def test_assigned_pod_deleted_moves_pods_rejected_for_resources(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, FIT)
    clock.advance(60)
    q.assigned_pod_added(BOUND)
    assert q.where(PENDING.key) == UNSCHEDULABLE  # Fit does not register pod adds
    q.assigned_pod_deleted(BOUND)
    assert q.where(PENDING.key) == ACTIVE


def test_assigned_pod_label_update_does_not_move_pods_rejected_for_resources(
    clock, queue_factory
) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, FIT)
    clock.advance(60)
    q.assigned_pod_updated(BOUND, BOUND.evolve(labels={"x": "y"}))
    assert q.where(PENDING.key) == UNSCHEDULABLE


def test_activate_moves_waiting_pods_to_activeq_at_once(clock, queue_factory) -> None:
    q = queue_factory(clock)
    reject(q, PENDING, FIT)
    reject(q, UNBOUND)
    assert q.counts() == {ACTIVE: 0, BACKOFF: 1, UNSCHEDULABLE: 1, "gated": 0}
    q.activate([PENDING, UNBOUND])
    assert q.counts() == {ACTIVE: 2, BACKOFF: 0, UNSCHEDULABLE: 0, "gated": 0}


def test_recreated_pod_is_queued_while_its_old_incarnation_is_in_flight(
    clock, queue_factory
) -> None:
    q = queue_factory(clock)
    old = make_pod("same").uid("1").obj()
    q.add(old)
    info = q.pop_nowait()
    assert info is not None
    q.delete(old)
    new = make_pod("same").uid("2").obj()
    q.add(new)
    assert q.where(new.key) == ACTIVE
    info.unschedulable_plugins = frozenset({FIT})
    assert q.add_unschedulable_if_not_present(info) is None  # the old one is gone
    popped = q.pop_nowait()
    assert popped is not None and popped.pod is new
