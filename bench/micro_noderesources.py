"""Micro-benchmark: the vector Filter/Score of the resource and simple filter plugins.

SchedulingBasic's cluster (identical 4 cpu / 32Gi / 110-pod nodes, pods asking 100m /
500Mi) with pods spread over the nodes; prints µs per call of each vector method, and
of the per-node method over every node for comparison.

    .venv/bin/python bench/micro_noderesources.py [--nodes 5000] [--init-pods 1000]
"""

from __future__ import annotations

import argparse
import random
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins import nodename, nodeports, nodeunschedulable
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.sim.workloads import make_nodes, make_pods
from kubesched.testing.wrappers import make_pod


class _Handle:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot


def _time(call: Callable[[], Any], number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    parser.add_argument("--number", type=int, default=500)
    opts = parser.parse_args()

    nodes = make_nodes(opts.nodes)
    rng = random.Random(0)
    pods = [
        p.evolve(node_name=nodes[rng.randrange(len(nodes))].name)
        for p in make_pods("basic", opts.init_pods, "init")
    ]
    snapshot = Snapshot.from_objects(nodes, pods, columnar=True)
    table = snapshot.table
    assert table is not None
    handle: Any = _Handle(snapshot)
    pod = next(make_pods("basic", 1, "pod"))
    rows = np.roll(np.arange(table.size, dtype=np.int64), -opts.nodes // 3)
    infos = snapshot.list()

    fit_plugin = fit.new(None, handle)
    balanced = balanced_allocation.new(None, handle)
    ports = nodeports.new(None, handle)
    unschedulable = nodeunschedulable.new(None, handle)
    name = nodename.new(None, handle)
    state = CycleState()
    with_port = make_pod("with-port").host_port(8080).obj()
    ports_state = CycleState()
    ports.pre_filter(ports_state, with_port, infos)
    fit_plugin.pre_filter(state, pod, infos)
    fit_plugin.pre_score(state, pod, infos)
    balanced.pre_score(state, pod, infos)

    cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        (
            "NodeResourcesFit.filter_nodes",
            lambda: fit_plugin.filter_nodes(state, pod, table, rows),
            lambda: [fit_plugin.filter(state, pod, ni) for ni in infos],
        ),
        (
            "NodeResourcesFit.score_nodes (LeastAllocated)",
            lambda: fit_plugin.score_nodes(state, pod, table, rows),
            lambda: [fit_plugin.score(state, pod, ni) for ni in infos],
        ),
        (
            "NodeResourcesBalancedAllocation.score_nodes",
            lambda: balanced.score_nodes(state, pod, table, rows),
            lambda: [balanced.score(state, pod, ni) for ni in infos],
        ),
        (
            "NodeUnschedulable.filter_nodes",
            lambda: unschedulable.filter_nodes(state, pod, table, rows),
            lambda: [unschedulable.filter(state, pod, ni) for ni in infos],
        ),
        (
            "NodeName.filter_nodes",
            lambda: name.filter_nodes(state, pod, table, rows),
            lambda: [name.filter(state, pod, ni) for ni in infos],
        ),
        (
            "NodePorts.filter_nodes (pod with a host port)",
            lambda: ports.filter_nodes(ports_state, with_port, table, rows),
            lambda: [ports.filter(ports_state, with_port, ni) for ni in infos],
        ),
    ]
    print(f"{opts.nodes} nodes, {opts.init_pods} pods on them")
    print(f"{'method':50s} {'vector µs':>10s} {'per-node µs':>12s}")
    for label, vector, per_node in cases:
        fast = _time(vector, opts.number)
        print(f"{label:50s} {fast:10.1f} {_time(per_node, 3):12.0f}")


if __name__ == "__main__":
    main()
