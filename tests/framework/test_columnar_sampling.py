"""Node sampling (percentageOfNodesToScore) and the rotating start index give the same
answers on the columnar path as on the per-node path, attempt after attempt."""

from __future__ import annotations

import dataclasses

import pytest

from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import simulate, simulation_json
from kubesched.testing import make_node, make_pod


@pytest.mark.parametrize("percentage", [1, 10, 50])
def test_sampled_simulation_is_identical_on_both_paths(percentage: int) -> None:
    nodes = [
        make_node(f"n{i}")
        .capacity(cpu=str(1 + i % 3), memory="4Gi", pods="5")
        .label("topology.kubernetes.io/zone", f"z{i % 4}")
        .obj()
        for i in range(260)
    ]
    # Every seventh node is tainted so that filtering rejects some nodes in every sample.
    nodes = [
        dataclasses.replace(n, taints=make_node("t").taint("k", "v").obj().taints)
        if i % 7 == 0
        else n
        for i, n in enumerate(nodes)
    ]
    pods = [make_pod(f"p{i}").req(cpu="300m", memory="200Mi").obj() for i in range(400)]
    cluster = ClusterObjects(nodes=nodes)
    config = dataclasses.replace(default_config(), percentage_of_nodes_to_score=percentage)
    registry = in_tree_registry()
    fast = simulation_json(simulate(cluster, pods, config, registry, seed=5, columnar=True))
    slow = simulation_json(simulate(cluster, pods, config, registry, seed=5, columnar=False))
    assert fast == slow
    assert fast["summary"]["scheduled"] > 0
