"""Random sequences of queue operations never lose a pod nor hold it in two places."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.plugins import names
from kubesched.scheduler.backend.queue import IN_FLIGHT
from kubesched.scheduler.backend.queue.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
)
from kubesched.testing import make_node, make_pod

POD_NAMES = [f"p{i}" for i in range(3)]
PLUGINS = [names.NODE_RESOURCES_FIT, names.TAINT_TOLERATION, names.NODE_AFFINITY]
BIG_NODE = make_node("big").capacity(cpu="64", pods="100").obj()
BOUND = make_pod("bound").req(cpu="1").node("n1").obj()


def version(name: str, gated: bool, label: int, incarnation: int) -> object:
    w = make_pod(name).uid(f"{name}-{incarnation}").req(cpu="2").label("v", str(label))
    if gated:
        w = w.scheduling_gates("g")
    return w.obj()


operation = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(POD_NAMES), st.booleans()),
    st.tuples(st.just("update"), st.sampled_from(POD_NAMES), st.booleans()),
    st.tuples(st.just("delete"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("pop")),
    st.tuples(st.just("reject"), st.frozensets(st.sampled_from(PLUGINS), max_size=2)),
    st.tuples(st.just("bound")),
    st.tuples(
        st.just("move"), st.sampled_from([NODE_ADD, ASSIGNED_POD_DELETE, UNSCHEDULABLE_TIMEOUT])
    ),
    st.tuples(st.just("tick"), st.sampled_from([0.5, 3.0, 40.0, 400.0])),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(operation, min_size=5, max_size=60))
def test_queue_never_loses_or_duplicates_a_pod(clock_class, queue_factory, ops) -> None:
    clock = clock_class()
    q = queue_factory(clock, pop_from_backoff_q=True)
    current = {}  # key -> latest Pod object of pods pending in the model
    labels = dict.fromkeys(POD_NAMES, 0)
    incarnation = dict.fromkeys(POD_NAMES, 0)
    popped = []  # [QueuedPodInfo, not deleted since popped], oldest first
    for op in ops:
        kind = op[0]
        if kind == "add":
            known = current.get(f"default/{op[1]}")
            if known is None:
                incarnation[op[1]] += 1  # created (again): a new UID
            # Gates only ever shrink (the API forbids adding one): a re-add keeps or drops them.
            gated = op[2] and (known is None or known.scheduling_gates != ())
            pod = version(op[1], gated, labels[op[1]], incarnation[op[1]])
            q.add(pod)
            current[pod.key] = pod
        elif kind == "update" and f"default/{op[1]}" in current:
            key = f"default/{op[1]}"
            labels[op[1]] += 1
            gated = op[2] and current[key].scheduling_gates != ()
            new = version(op[1], gated, labels[op[1]], incarnation[op[1]])
            q.update(current[key], new)
            current[key] = new
        elif kind == "delete" and f"default/{op[1]}" in current:
            q.delete(current.pop(f"default/{op[1]}"))
            for entry in popped:
                if entry[0].pod.key == f"default/{op[1]}":
                    entry[1] = False
        elif kind == "pop":
            info = q.pop_nowait()
            if info is not None:
                assert info.pod.key in current and not info.gated
                assert not any(e[1] and e[0].pod.key == info.pod.key for e in popped)
                popped.append([info, True])
        elif kind == "reject" and popped:
            info, alive = popped.pop(0)
            info.unschedulable_plugins = op[1]
            where = q.add_unschedulable_if_not_present(info)
            assert (where is None) == (not alive)
            if alive:
                assert q.get(info.pod.key).pod is current[info.pod.key]
        elif kind == "bound" and popped:
            info, alive = popped.pop(0)
            q.done(info.pod)
            if alive:
                current.pop(info.pod.key)  # bound: no longer pending
        elif kind == "move":
            q.move_all_to_active_or_backoff(
                op[1], *((None, BIG_NODE) if op[1] is NODE_ADD else (BOUND, None))
            )
        elif kind == "tick":
            clock.advance(op[1])
            q.flush()
        check(q, current, {e[0].pod.key for e in popped if e[1]})


def check(q, current, in_flight) -> None:
    places = {}
    for info, name in q.pending_pods():
        assert info.pod.key not in places, (
            f"{info.pod.key} in {places.get(info.pod.key)} and {name}"
        )
        places[info.pod.key] = name
    for key in in_flight:
        assert key not in places, f"{key} in flight and in {places[key]}"
        assert q.where(key) == IN_FLIGHT
    waiting = set(current) - in_flight
    assert set(places) == waiting
    for key in waiting:
        assert q.get(key).pod is current[key]
        assert q.get(key).gated == bool(current[key].scheduling_gates)
    assert len(q) == len(waiting)
