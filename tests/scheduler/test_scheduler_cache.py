"""The scheduler cache: assumed pods (assume, confirm, forget, expire), informer events
for pods and nodes, and the one snapshot kept up to date in place."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.scheduler.backend.cache import Cache, CacheError
from kubesched.testing import make_node, make_pod

N1 = (
    make_node("n1")
    .capacity(cpu="4", memory="8Gi", pods="10")
    .label("topology.kubernetes.io/zone", "a")
    .obj()
)
N2 = (
    make_node("n2")
    .capacity(cpu="4", memory="8Gi", pods="10")
    .label("topology.kubernetes.io/zone", "b")
    .obj()
)
P1 = make_pod("p1").req(cpu="1", memory="1Gi").node("n1").obj()
P2 = make_pod("p2").req(cpu="2").node("n1").obj()


def table(*rows: tuple[Any, ...]) -> list[Any]:
    return [pytest.param(*values, id=id_) for id_, *values in rows]


def requested_cpu(cache: Cache, node: str) -> tuple[int, int]:
    """The node's requested milli-CPU in its NodeInfo and in the snapshot's table."""
    snap = cache.snapshot()
    info = snap.get(node)
    assert snap.table is not None
    row = snap.table.rows[node]
    return info.requested.milli_cpu, int(snap.table.requested[row, 0])


# --- assumed pods ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "steps", "advance", "still_there"),
    table(
        ("assumed-pod-expires", 10, ["finish"], 11, False),
        ("assumed-pod-not-expired-before-ttl", 10, ["finish"], 9, True),
        ("assumed-pod-not-expired-before-binding-finished", 10, [], 100, True),
        ("confirmed-pod-not-expired", 10, ["finish", "confirm"], 100, True),
        ("default-ttl-zero-never-expires", 0, ["finish"], 10_000, True),
    ),
)
def test_assumed_pod_expiry(ttl, steps, advance, still_there, clock) -> None:
    cache = Cache(ttl=ttl, clock=clock)
    cache.add_node(N1)
    cache.snapshot()
    cache.assume_pod(P1)
    for step in steps:
        if step == "finish":
            cache.finish_binding(P1)
        else:
            cache.add_pod(P1)
    clock.advance(advance)
    expired = cache.cleanup_assumed_pods()
    assert (cache.get_pod(P1) is not None) == still_there
    assert expired == ([] if still_there else [P1])
    assert requested_cpu(cache, "n1") == ((1000, 1000) if still_there else (0, 0))


def test_confirmation_ends_assumed_state(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.assume_pod(P1)
    assert cache.is_assumed_pod(P1)
    cache.add_pod(P1)
    assert not cache.is_assumed_pod(P1) and cache.pod_count() == 1
    assert requested_cpu(cache, "n1") == (1000, 1000)


def test_confirmation_with_a_snapshot_keeps_equal_pods_and_replaces_changed_ones(clock) -> None:
    cache = Cache(ttl=5.0, clock=clock)
    cache.add_node(N1)
    snapshot = cache.snapshot()
    cache.assume_pod(P1)
    cache.finish_binding(P1)
    cache.add_pod(P1.evolve())  # the informer's copy: equal, another object
    assert not cache.is_assumed_pod(P1) and cache.pod_count() == 1
    assert requested_cpu(cache, "n1") == (1000, 1000)
    clock.advance(10.0)
    assert cache.cleanup_assumed_pods() == []  # confirmed pods never expire
    relabelled = P1.evolve(labels={"app": "new"})
    cache.add_pod(relabelled)
    [held] = snapshot.get("n1").pods
    assert held.pod.labels == {"app": "new"}
    assert requested_cpu(cache, "n1") == (1000, 1000)


def test_pod_bound_elsewhere_than_assumed_moves_to_that_node(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_node(N2)
    cache.snapshot()
    cache.assume_pod(P1)
    cache.add_pod(P1.evolve(node_name="n2"))
    assert requested_cpu(cache, "n1") == (0, 0)
    assert requested_cpu(cache, "n2") == (1000, 1000)


def test_forget_assumed_pod_frees_its_node(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.snapshot()
    cache.assume_pod(P1)
    cache.forget_pod(P1)
    assert cache.get_pod(P1) is None and requested_cpu(cache, "n1") == (0, 0)


@pytest.mark.parametrize(
    ("setup", "op", "message"),
    table(
        ("assume-twice-is-refused", ["assume"], "assume", "so cannot be assumed"),
        ("assume-of-added-pod-is-refused", ["add"], "assume", "so cannot be assumed"),
        ("forget-of-confirmed-pod-is-refused", ["assume", "add"], "forget", "was not assumed"),
        ("forget-of-unknown-pod-is-refused", [], "forget", "was not assumed"),
        ("forget-on-other-node-is-refused", ["assume"], "forget-n2", "but assigned to"),
    ),
)
def test_assume_and_forget_errors(setup, op, message, clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    for step in setup:
        (cache.assume_pod if step == "assume" else cache.add_pod)(P1)
    with pytest.raises(CacheError, match=message):
        if op == "assume":
            cache.assume_pod(P1)
        elif op == "forget":
            cache.forget_pod(P1)
        else:
            cache.forget_pod(P1.evolve(node_name="n2"))


# --- informer events ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "kept"),
    table(
        ("assigned-pod-is-cached", P1, True),
        ("unassigned-pod-is-not-cached", make_pod("q").req(cpu="1").obj(), False),
        (
            "terminal-pod-is-not-cached",
            make_pod("q").req(cpu="1").node("n1").phase("Succeeded").obj(),
            False,
        ),
    ),
)
def test_only_assigned_live_pods_are_cached(pod, kept, clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_pod(pod)
    assert (cache.get_pod(pod) is not None) == kept


def test_pod_turning_terminal_leaves_its_node(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_pod(P1)
    cache.update_pod(P1, P1.evolve(phase="Failed"))
    assert cache.pod_count() == 0 and requested_cpu(cache, "n1") == (0, 0)


def test_pod_update_replaces_its_requests(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.snapshot()
    cache.add_pod(P1)
    bigger = make_pod("p1").req(cpu="3").node("n1").obj()
    cache.update_pod(P1, bigger)
    assert requested_cpu(cache, "n1") == (3000, 3000)


def test_pod_before_its_node_is_attached_when_the_node_arrives(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_pod(P1)
    assert len(cache.snapshot()) == 0  # no node yet: not schedulable onto
    cache.add_node(N1)
    assert requested_cpu(cache, "n1") == (1000, 1000)


def test_node_removed_with_pods_keeps_a_placeholder_until_they_go(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_pod(P1)
    cache.remove_node(N1)
    assert cache.snapshot().find("n1") is None
    placeholder = cache.node_info("n1")
    assert placeholder is not None and not placeholder.has_node and len(placeholder.pods) == 1
    assert cache.remove_pod(P1)
    assert cache.node_info("n1") is None


def test_remove_of_unknown_pod_is_harmless(clock) -> None:
    cache = Cache(clock=clock)
    assert not cache.remove_pod(P1)


# --- the snapshot ---------------------------------------------------------------------


def test_pod_events_update_the_snapshot_in_place(clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_node(N2)
    snap = cache.snapshot()
    version = snap.table.version  # type: ignore[union-attr]
    cache.add_pod(P1)
    cache.assume_pod(P2)
    cache.remove_pod(P1)
    assert cache.snapshot() is snap and cache.rebuilds == 1
    assert snap.table.version > version  # type: ignore[union-attr]
    assert requested_cpu(cache, "n1") == (2000, 2000)


@pytest.mark.parametrize(
    ("new", "rebuilt"),
    table(
        ("node-update-that-changes-nothing-keeps-the-snapshot", N1, False),
        (
            "node-label-update-rebuilds-the-snapshot",
            make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").label("x", "y").obj(),
            True,
        ),
        (
            "node-allocatable-update-rebuilds-the-snapshot",
            make_node("n1")
            .capacity(cpu="8", memory="8Gi", pods="10")
            .label("topology.kubernetes.io/zone", "a")
            .obj(),
            True,
        ),
    ),
)
def test_node_update(new, rebuilt, clock) -> None:
    cache = Cache(clock=clock)
    cache.add_node(N1)
    cache.add_pod(P1)
    snap = cache.snapshot()
    cache.update_node(N1, new)
    assert (cache.snapshot() is not snap) == rebuilt
    assert cache.snapshot().get("n1").node == new
    assert requested_cpu(cache, "n1") == (1000, 1000)


def test_many_node_adds_rebuild_once(clock) -> None:
    cache = Cache(clock=clock)
    for i in range(50):
        cache.add_node(make_node(f"n{i}").capacity(cpu="1").obj())
        cache.add_pod(make_pod(f"p{i}").req(cpu="100m").node(f"n{i}").obj())
    assert len(cache.snapshot()) == 50 and cache.rebuilds == 1


def test_snapshot_interleaves_zones_and_counts_images(clock) -> None:
    cache = Cache(clock=clock)
    a1 = make_node("a1").label("topology.kubernetes.io/zone", "a").image(["img:1"], 100).obj()
    a2 = make_node("a2").label("topology.kubernetes.io/zone", "a").image(["img:1"], 100).obj()
    b1 = make_node("b1").label("topology.kubernetes.io/zone", "b").obj()
    for node in (a1, a2, b1):
        cache.add_node(node)
    snap = cache.snapshot()
    assert [i.name for i in snap.list()] == ["a1", "b1", "a2"]
    assert snap.get("a1").image_states["img:1"].num_nodes == 2
