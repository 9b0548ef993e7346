"""Micro-benchmark of PodTopologySpread's vector methods on the ``spread`` workload's
cluster (5,000 nodes over three zones, 1,000 bound spread pods by default).

Prints µs per call of each vector method, and of the per-node path for comparison:

    .venv/bin/python bench/micro_podtopologyspread.py [--nodes N] [--init-pods I]
"""

from __future__ import annotations

import argparse
import dataclasses
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import NoClient, Nominator, StaticClusterLister
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeScore
from kubesched.framework.vector import NodeInfoView
from kubesched.objects.pod import Pod
from kubesched.objects.policy import Workload
from kubesched.plugins.podtopologyspread import new
from kubesched.sim.workloads import make_nodes, make_pods


class Handle:
    def __init__(self, snapshot: Snapshot, workloads: tuple[Workload, ...]) -> None:
        self.snapshot = snapshot
        self.cluster = StaticClusterLister(workloads=workloads)
        self.nominator = Nominator()
        self.client = NoClient()


def timed(label: str, fn: Callable[[], Any], number: int) -> None:
    seconds = min(timeit.repeat(fn, number=number, repeat=3)) / number
    print(f"  {label:<44} {seconds * 1e6:10.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=1000)
    args = parser.parse_args()
    nodes = make_nodes(args.nodes)
    bound = [
        dataclasses.replace(p, node_name=nodes[(i * 7) % len(nodes)].name)
        for i, p in enumerate(make_pods("spread", args.init_pods, "init"))
    ]
    service = Workload.from_dict(
        {
            "kind": "Service",
            "metadata": {"name": "blue", "namespace": "default"},
            "spec": {"selector": {"color": "blue"}},
        }
    )
    columnar = Snapshot.from_objects(nodes, bound, columnar=True)
    per_node = Snapshot.from_objects(nodes, bound)
    table = columnar.table
    assert table is not None
    rows = np.arange(table.size, dtype=np.int64)
    view = NodeInfoView(columnar.list(), rows)
    spread = next(iter(make_pods("spread", 1, "p")))
    soft = dataclasses.replace(
        spread,
        topology_spread_constraints=tuple(
            dataclasses.replace(c, when_unsatisfiable="ScheduleAnyway")
            for c in spread.topology_spread_constraints
        ),
    )
    defaulted = dataclasses.replace(spread, topology_spread_constraints=())
    plain = dataclasses.replace(defaulted, labels={})
    print(f"PodTopologySpread, {table.size} nodes, {args.init_pods} bound pods")

    pl = new({"defaultingType": "System"}, Handle(columnar, (service,)))  # type: ignore[arg-type]
    ref = new({"defaultingType": "System"}, Handle(per_node, (service,)))  # type: ignore[arg-type]

    print("spread pod (zone, DoNotSchedule):")
    state = CycleState()
    timed("pre_filter (table)", lambda: pl.pre_filter(state, spread, view), 300)
    timed("filter_nodes (all rows)", lambda: pl.filter_nodes(state, spread, table, rows), 300)
    ref_state = CycleState()
    timed("pre_filter (per node)", lambda: ref.pre_filter(ref_state, spread, per_node.list()), 3)
    infos = per_node.list()
    timed("filter x nodes (per node)", lambda: [ref.filter(ref_state, spread, i) for i in infos], 3)

    for label, pod in (
        ("zone, ScheduleAnyway", soft),
        ("system defaults: hostname + zone", defaulted),
    ):
        print(f"{label}:")
        score_vector(pl, pod, view, rows)
        timed("pre_score+score+normalize (per node)", partial(per_node_scores, ref, pod, infos), 3)

    print("pod without constraints, selected by no workload:")
    timed("pre_filter (skip)", lambda: pl.pre_filter(CycleState(), plain, view), 3000)
    timed("pre_score (skip)", lambda: pl.pre_score(CycleState(), plain, view), 3000)


def score_vector(pl: Any, pod: Pod, view: NodeInfoView, rows: Any) -> None:
    table = pl._handle.snapshot.table
    state = CycleState()
    timed("pre_score (table)", partial(pl.pre_score, state, pod, view), 300)
    timed("score_nodes", partial(pl.score_nodes, state, pod, table, rows), 300)
    raw = pl.score_nodes(state, pod, table, rows)
    timed("normalize_scores", partial(pl.normalize_scores, state, pod, raw), 300)


def per_node_scores(pl: Any, pod: Pod, infos: list[Any]) -> None:
    state = CycleState()
    pl.pre_score(state, pod, infos)
    scores = [NodeScore(i.name, pl.score(state, pod, i)[0]) for i in infos]
    pl.normalize_score(state, pod, scores)


if __name__ == "__main__":
    main()
