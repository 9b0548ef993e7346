"""What a profile costs: scheduler_perf-like workloads scheduled in-process.

Every node is evaluated (percentageOfNodesToScore 100), unlike kube-scheduler's adaptive
default, so the figures say what scoring the whole cluster costs.
"""

from __future__ import annotations

import dataclasses
import resource
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework.apiclient import RESOURCE_CLAIMS
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.registry import Registry
from kubesched.objects.pod import Pod
from kubesched.sim.dra import keep_claims_listed
from kubesched.sim.draworkloads import (
    DRA_WORKLOADS,
    STEADY_STATE_BATCH,
    STEADY_STATE_WORKLOADS,
    dra_objects,
)
from kubesched.sim.gangworkloads import GANG_WORKLOADS, gang_config, pod_groups
from kubesched.sim.simulator import Placement, Simulator
from kubesched.sim.workloads import make_cluster, make_pods, make_storage


@dataclass
class BenchResult:
    """The figures of one benchmark run."""

    workload: str
    nodes: int
    init_pods: int
    pods: int
    scheduled: int
    seconds: float
    pods_per_second: float
    p50_ms: float
    p99_ms: float
    setup_seconds: float
    peak_rss_mb: float
    #: Gang workloads: the gangs measured and placed whole per second (0 otherwise).
    gangs: int = 0
    gangs_per_second: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def every_node_config(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """``config`` with percentageOfNodesToScore 100 in every profile."""
    profiles = tuple(
        dataclasses.replace(p, percentage_of_nodes_to_score=100) for p in config.profiles
    )
    return dataclasses.replace(config, profiles=profiles, percentage_of_nodes_to_score=100)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _steady_state(
    sim: Simulator,
    standing: list[Placement],
    measured: list[Pod],
    observe: Callable[[Pod, float], None],
) -> list[Placement]:
    """Schedule ``measured`` in batches; after each, the oldest pods end (deleted with
    their claims, as the resource-claim controller and the garbage collector would) so
    that as many pods hold devices as when measuring began (scheduler_perf's steady
    state)."""
    running = deque(p for p in standing if p.node is not None)
    population = len(running)
    out: list[Placement] = []
    for start in range(0, len(measured), STEADY_STATE_BATCH):
        done = sim.run(measured[start : start + STEADY_STATE_BATCH], observe)
        out.extend(done)
        running.extend(p for p in done if p.node is not None)
        while len(running) > population:
            ended = running.popleft()
            pod = ended.pod.evolve(node_name=ended.node)
            sim.delete_pod(pod, "Completed")
            for name in pod.resource_claim_statuses.values():
                if name is not None:
                    sim.api.delete(RESOURCE_CLAIMS, name, pod.namespace)
    return out


def run_bench(
    workload: str,
    nodes: int,
    init_pods: int,
    pods: int,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    columnar: bool = True,
) -> BenchResult:
    """Place ``init_pods`` (not measured), then schedule and time ``pods`` pods.

    ``columnar=False`` measures the per-node reference path instead of the node table.
    """
    started = time.perf_counter()
    cluster = make_cluster(workload, nodes)
    sizes = {"init": init_pods, "pod": pods}
    storage = make_storage(workload, cluster, sizes)
    dra, claims = dra_objects(workload, cluster, sizes) if workload in DRA_WORKLOADS else ([], [])
    gangs = pod_groups(workload, sizes) if workload in GANG_WORKLOADS else []
    if gangs:
        config = gang_config(config)
    sim = Simulator(
        cluster,
        (),
        every_node_config(config),
        registry,
        cluster=StaticClusterLister(storage=storage, dra=dra, pod_groups=gangs),
        seed=seed,
        columnar=columnar,
    )
    keep_claims_listed(sim)
    for claim in claims:
        sim.api.add(RESOURCE_CLAIMS, claim)
    standing = sim.run(list(make_pods(workload, init_pods, "init")))
    measured = list(make_pods(workload, pods, "pod"))
    setup = time.perf_counter() - started
    latencies: list[float] = []

    def observe(pod: Pod, seconds: float) -> None:
        latencies.append(seconds)
        if progress is not None:
            progress(len(latencies), pods)

    started = time.perf_counter()
    if workload in STEADY_STATE_WORKLOADS:
        placements = _steady_state(sim, standing, measured, observe)
    else:
        placements = sim.run(measured, observe)
    elapsed = time.perf_counter() - started
    scheduled = sum(1 for p in placements if p.node is not None)
    measured_gangs = 0
    if gangs:
        measured_gangs = sum(1 for g in gangs if g.name.startswith("pod-"))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return BenchResult(
        workload=workload,
        nodes=len(cluster),
        init_pods=init_pods,
        pods=pods,
        scheduled=scheduled,
        seconds=round(elapsed, 3),
        pods_per_second=round(pods / elapsed, 1) if elapsed else 0.0,
        p50_ms=round(1000 * statistics.median(latencies), 3) if latencies else 0.0,
        p99_ms=round(1000 * _percentile(latencies, 0.99), 3),
        setup_seconds=round(setup, 3),
        peak_rss_mb=round(peak_kb / 1024, 1),
        gangs=measured_gangs,
        gangs_per_second=round(measured_gangs / elapsed, 1) if elapsed and gangs else 0.0,
    )
