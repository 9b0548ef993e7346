"""The lab's per-pod tie-break: a pod facing the same tied nodes picks the same one, whatever
else the run did; the default (one random source, as kube-scheduler) is unchanged."""

from __future__ import annotations

import pytest

from kubesched.config import default_config
from kubesched.objects.node import Node
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import simulate
from kubesched.sim.simulator import Simulator
from kubesched.testing import make_node, make_pod


def cluster(n: int, other: int = 0) -> ClusterObjects:
    def node(name: str, pool: str) -> Node:
        return make_node(name).capacity(cpu="4", memory="8Gi", pods="110").label("pool", pool).obj()

    nodes = [node(f"n{i}", "main") for i in range(n)] + [
        node(f"o{i}", "other") for i in range(other)
    ]
    return ClusterObjects(nodes=nodes)


def lone_choices(columnar: bool, tie_break: str, seed: int) -> set[str | None]:
    registry = in_tree_registry()
    lone = make_pod("lone").req(cpu="100m").node_selector({"pool": "main"}).obj()
    # "lone" alone, and "lone" after pods that tie on other nodes (each tie a draw of the
    # run's random source): the nodes it ties on are the same, so it picks the same node.
    others = [
        make_pod(f"x{i}").req(cpu="100m").node_selector({"pool": "other"}).obj() for i in range(5)
    ]
    chosen: set[str | None] = set()
    for pods in ([lone], [*others, lone]):
        result = simulate(
            cluster(4, 3),
            pods,
            default_config(),
            registry,
            seed=seed,
            tie_break=tie_break,
            columnar=columnar,
        )
        placement = next(p for p in result.placements if p.pod.key == "default/lone")
        if tie_break == "per-pod":
            assert placement.tied == ("n0", "n1", "n2", "n3")
        chosen.add(placement.node)
    return chosen


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "per-node"])
def test_a_pod_breaks_the_same_tie_the_same_way_whatever_came_before(columnar: bool) -> None:
    assert all(len(lone_choices(columnar, "per-pod", seed)) == 1 for seed in range(8))
    # With one random source for the run (kube-scheduler's way) the pods before it move it.
    assert any(len(lone_choices(columnar, "random", seed)) == 2 for seed in range(8))


def test_the_seed_and_the_pod_choose_among_ties() -> None:
    registry = in_tree_registry()
    pods = [make_pod(f"p{i}").req(cpu="100m").obj() for i in range(12)]
    runs = [
        [
            p.node
            for p in simulate(
                cluster(12), pods, default_config(), registry, seed=s, tie_break="per-pod"
            ).placements
        ]
        for s in (1, 1, 2)
    ]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_an_unknown_tie_break_is_refused() -> None:
    with pytest.raises(ValueError, match="tie_break: Unsupported value: 'first'"):
        Simulator([], [], default_config(), in_tree_registry(), tie_break="first")
