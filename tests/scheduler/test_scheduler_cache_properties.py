"""Whatever the order of informer events and assume/forget calls, the cache's one
incrementally kept snapshot equals a snapshot built from scratch of the same objects."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.snapshot import Snapshot
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import Cache, CacheError
from kubesched.testing import make_node, make_pod

NODE_NAMES = ["n0", "n1", "n2"]
POD_NAMES = [f"p{i}" for i in range(6)]


def node(name: str, big: bool) -> Node:
    zone = "a" if name != "n1" else "b"
    w = make_node(name).capacity(cpu="16" if big else "8", memory="8Gi", pods="20")
    return w.label("topology.kubernetes.io/zone", zone).image([f"img-{name}", "shared"], 10).obj()


def pod(name: str, node_name: str) -> Pod:
    cpu = f"{100 * (POD_NAMES.index(name) + 1)}m"
    w = make_pod(name).req(cpu=cpu, memory="128Mi").label("app", name).node(node_name)
    if name == "p0":
        w = w.pod_anti_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "p1"}})
    return w.obj()


operation = st.one_of(
    st.tuples(st.just("add_node"), st.sampled_from(NODE_NAMES), st.booleans()),
    st.tuples(st.just("remove_node"), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("add_pod"), st.sampled_from(POD_NAMES), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("remove_pod"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("assume"), st.sampled_from(POD_NAMES), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("forget"), st.sampled_from(POD_NAMES)),
    st.tuples(st.just("snapshot")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(operation, max_size=30))
def test_incremental_snapshot_equals_a_fresh_one(ops: list[tuple[Any, ...]]) -> None:
    cache = Cache()
    nodes: dict[str, Node] = {}
    pods: dict[str, Pod] = {}
    for op in ops:
        kind = op[0]
        if kind == "add_node":
            new = node(op[1], op[2])
            if op[1] in nodes:
                cache.update_node(nodes[op[1]], new)
            else:
                cache.add_node(new)
            nodes[op[1]] = new
        elif kind == "remove_node" and op[1] in nodes:
            cache.remove_node(nodes.pop(op[1]))
        elif kind == "add_pod":
            p = pod(op[1], op[2])
            if op[1] in pods and pods[op[1]].node_name != op[2] and not cache.is_assumed_pod(p):
                continue  # a bound pod never moves; only an assumed one may land elsewhere
            cache.add_pod(p)
            pods[op[1]] = p
        elif kind == "remove_pod" and op[1] in pods:
            assert cache.remove_pod(pods.pop(op[1]))
        elif kind == "assume":
            p = pod(op[1], op[2])
            if op[1] in pods:
                try:
                    cache.assume_pod(p)
                except CacheError:
                    continue
                raise AssertionError("assume of a cached pod must fail")
            cache.assume_pod(p)
            pods[op[1]] = p
        elif kind == "forget" and op[1] in pods and cache.is_assumed_pod(pods[op[1]]):
            cache.forget_pod(pods.pop(op[1]))
        elif kind == "snapshot":
            cache.snapshot()
    assert_same(
        cache.snapshot(), Snapshot.from_objects(list(nodes.values()), pods.values(), columnar=True)
    )


def assert_same(got: Snapshot, want: Snapshot) -> None:
    assert [i.name for i in got.list()] == [i.name for i in want.list()]
    assert got.table is not None and want.table is not None
    for w in want.list():
        g = got.get(w.name)
        assert sorted(p.pod.key for p in g.pods) == sorted(p.pod.key for p in w.pods)
        assert g.requested == w.requested and g.non_zero_requested == w.non_zero_requested
        assert len(g.pods_with_required_anti_affinity) == len(w.pods_with_required_anti_affinity)
        assert g.image_states == w.image_states
        gr, wr = got.table.rows[w.name], want.table.rows[w.name]
        for res in want.table.resources:
            gi, wi = got.table.resource_index.get(res), want.table.resource_index[res]
            got_value = 0 if gi is None else int(got.table.requested[gr, gi])
            assert got_value == int(want.table.requested[wr, wi]), res
            if gi is not None:
                assert int(got.table.allocatable[gr, gi]) == int(want.table.allocatable[wr, wi])
        assert int(got.table.pod_count[gr]) == int(want.table.pod_count[wr])
    assert [len(x.pods) for x in got.have_pods_with_required_anti_affinity_list()] == [
        len(x.pods) for x in want.have_pods_with_required_anti_affinity_list()
    ]
