"""Benchmark: scheduler_perf's volumes cases, and what the volume plugins cost pods
without volumes.

Runs SchedulingSecrets, SchedulingInTreePVs, SchedulingMigratedInTreePVs and
SchedulingCSIPVs (``kubesched bench --workload secrets|in-tree-pvs|...``) with the default
profile, then SchedulingBasic alternately with the default profile and with the same
profile minus the four volume plugins (VolumeRestrictions, NodeVolumeLimits,
VolumeBinding, VolumeZone), ``--rounds`` times each, in one process — so that the
comparison of the two sees the same machine load — and prints the median pods/s of each
and their ratio, by wall clock and by the process's CPU time (which other work on a
shared machine disturbs less), and the slowdown in percent.

    .venv/bin/python bench/volume_plugins.py [--nodes 5000] [--rounds 5] [--basic-pods 10000]
    .venv/bin/python bench/volume_plugins.py --basic   # only the basic comparison, then --micro
    .venv/bin/python bench/volume_plugins.py --micro   # one basic pod's PreFilter and attempt, µs

``--micro`` times, best of repeats (what load adds is never the best), one SchedulingBasic
pod's PreFilter and its whole scheduling attempt (not bound) on 5,000 nodes with 1,000
pods, with and without the three plugins.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import timeit

from kubesched.config import KubeSchedulerConfiguration, default_config
from kubesched.config.load import loads_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import SchedulingAlgorithm
from kubesched.framework.snapshot import Snapshot
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import every_node_config, run_bench
from kubesched.sim.simulator import Simulator
from kubesched.sim.workloads import make_cluster, make_nodes, make_pods

VOLUME_CASES = {
    "secrets": "SchedulingSecrets",
    "in-tree-pvs": "SchedulingInTreePVs",
    "migrated-in-tree-pvs": "SchedulingMigratedInTreePVs",
    "csi-pvs": "SchedulingCSIPVs",
}
#: Upstream's thresholds the issue names (pods/s).
THRESHOLDS = {"secrets": 790, "in-tree-pvs": 290, "migrated-in-tree-pvs": 100, "csi-pvs": 100}
VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


def without_volume_plugins() -> KubeSchedulerConfiguration:
    """The default configuration with the volume plugins disabled."""
    disabled = "".join(f"\n        - name: {name}" for name in VOLUME_PLUGINS)
    return loads_config(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: default-scheduler\n"
        "    plugins:\n"
        "      multiPoint:\n"
        f"        disabled:{disabled}\n"
    )


def basic_rates(
    config: KubeSchedulerConfiguration, nodes: int, init_pods: int, pods: int
) -> tuple[float, float]:
    """SchedulingBasic's measured pods per wall-clock second and per CPU second."""
    sim = Simulator(
        make_cluster("basic", nodes), (), every_node_config(config), in_tree_registry(), seed=0
    )
    sim.run(list(make_pods("basic", init_pods, "init")))
    measured = list(make_pods("basic", pods, "pod"))
    wall, cpu = time.perf_counter(), time.process_time()
    sim.run(measured)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return pods / wall, pods / cpu


def micro(nodes: int, init_pods: int) -> dict[str, float]:
    """µs of one basic pod's PreFilter and attempt, best of repeats, per profile, and the
    volume plugins' share of the attempt in percent."""
    cluster = make_nodes(nodes)
    rng = random.Random(0)
    placed = [
        p.evolve(node_name=cluster[rng.randrange(nodes)].name)
        for p in make_pods("basic", init_pods, "init")
    ]
    snapshot = Snapshot.from_objects(cluster, placed, columnar=True)
    pod = next(make_pods("basic", 1, "pod"))
    out: dict[str, float] = {}
    for label, config in (("default", default_config()), ("without", without_volume_plugins())):
        profile = every_node_config(config).profiles[0]
        fwk = Framework(
            profile,
            in_tree_registry(),
            cluster=StaticClusterLister(),
            snapshot=snapshot,
            rng=random.Random(0),
        )
        algorithm = SchedulingAlgorithm(fwk, columnar=True)

        def pre_filter(fwk: Framework = fwk) -> object:
            return fwk.run_pre_filter_plugins(CycleState(), pod)

        def attempt(algorithm: SchedulingAlgorithm = algorithm) -> object:
            return algorithm.schedule_pod(CycleState(), pod)

        for name, call, number in (("pre_filter", pre_filter, 2000), ("attempt", attempt, 200)):
            best = min(timeit.repeat(call, number=number, repeat=9)) / number * 1e6
            out[f"{name}_us_{label}"] = round(best, 2)
    out["attempt_slowdown_percent"] = round(
        100 * (out["attempt_us_default"] / out["attempt_us_without"] - 1), 2
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--basic-init-pods", type=int, default=1000)
    parser.add_argument("--basic-pods", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-volumes", action="store_true", help="only the basic comparison")
    parser.add_argument("--micro", action="store_true", help="only the per-pod micro timings")
    parser.add_argument(
        "--basic",
        action="store_true",
        help="the issue's 3 %% check: the basic comparison, then the micro timings",
    )
    opts = parser.parse_args()
    if opts.micro:
        print(json.dumps(micro(opts.nodes, opts.basic_init_pods)))
        return
    if opts.basic:
        opts.skip_volumes = True
    registry = in_tree_registry()
    config = default_config()
    if not opts.skip_volumes:
        for workload, case in VOLUME_CASES.items():
            result = run_bench(workload, opts.nodes, opts.init_pods, opts.pods, config, registry)
            print(
                json.dumps(
                    {
                        "case": case,
                        "threshold": THRESHOLDS[workload],
                        "x_threshold": round(result.pods_per_second / THRESHOLDS[workload], 1),
                        **result.to_json(),
                    }
                ),
                flush=True,
            )
    plain = without_volume_plugins()
    labels = ("default", "without-volume-plugins")
    wall: dict[str, list[float]] = {label: [] for label in labels}
    cpu: dict[str, list[float]] = {label: [] for label in labels}
    for i in range(opts.rounds):
        # Alternate which goes first, so neither always meets the same moment of load.
        order = [("default", config), ("without-volume-plugins", plain)]
        for label, profile in order if i % 2 == 0 else order[::-1]:
            w, c = basic_rates(profile, opts.nodes, opts.basic_init_pods, opts.basic_pods)
            wall[label].append(round(w, 1))
            cpu[label].append(round(c, 1))
    summary: dict[str, object] = {"case": "SchedulingBasic", "wall": wall, "cpu": cpu}
    for kind, rates in (("wall", wall), ("cpu", cpu)):
        medians = {label: statistics.median(values) for label, values in rates.items()}
        summary[f"{kind}_median"] = medians
        ratio = medians["default"] / medians["without-volume-plugins"]
        summary[f"{kind}_default/without"] = round(ratio, 4)
        # Fewer pods per second with the plugins: how much slower, in percent.
        summary[f"{kind}_slowdown_percent"] = round(100 * (1 / ratio - 1), 2)
    print(json.dumps(summary), flush=True)
    if opts.basic:
        print(
            json.dumps(
                {"case": "SchedulingBasic, one pod", **micro(opts.nodes, opts.basic_init_pods)}
            )
        )


if __name__ == "__main__":
    main()
