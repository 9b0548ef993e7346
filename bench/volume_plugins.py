"""Benchmark: scheduler_perf's volumes cases, and what the volume plugins cost pods
without volumes.

Runs SchedulingSecrets, SchedulingInTreePVs, SchedulingMigratedInTreePVs and
SchedulingCSIPVs (``kubesched bench --workload secrets|in-tree-pvs|...``) with the default
profile, then SchedulingBasic alternately with the default profile and with the same
profile minus VolumeRestrictions, NodeVolumeLimits and VolumeZone, ``--rounds`` times
each, in one process — so that the comparison of the two sees the same machine load —
and prints the median pods/s of each and their ratio.

    .venv/bin/python bench/volume_plugins.py [--nodes 5000] [--rounds 5] [--basic-pods 10000]
"""

from __future__ import annotations

import argparse
import json
import statistics

from kubesched.config import KubeSchedulerConfiguration, default_config
from kubesched.config.load import loads_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import run_bench

VOLUME_CASES = {
    "secrets": "SchedulingSecrets",
    "in-tree-pvs": "SchedulingInTreePVs",
    "migrated-in-tree-pvs": "SchedulingMigratedInTreePVs",
    "csi-pvs": "SchedulingCSIPVs",
}
#: Upstream's thresholds the issue names (pods/s).
THRESHOLDS = {"secrets": 790, "in-tree-pvs": 290, "migrated-in-tree-pvs": 100, "csi-pvs": 100}
VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeZone")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--init-pods", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--basic-init-pods", type=int, default=1000)
    parser.add_argument("--basic-pods", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-volumes", action="store_true", help="only the basic comparison")
    opts = parser.parse_args()
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
    rates: dict[str, list[float]] = {"default": [], "without-volume-plugins": []}
    for _ in range(opts.rounds):
        for label, profile in (("default", config), ("without-volume-plugins", plain)):
            result = run_bench(
                "basic",
                opts.nodes,
                opts.basic_init_pods,
                opts.basic_pods,
                profile,
                registry,  # type: ignore[arg-type]
            )
            rates[label].append(result.pods_per_second)
    medians = {label: statistics.median(values) for label, values in rates.items()}
    print(
        json.dumps(
            {
                "case": "SchedulingBasic",
                "rounds": rates,
                "median": medians,
                "default/without": round(medians["default"] / medians["without-volume-plugins"], 4),
            }
        )
    )


if __name__ == "__main__":
    main()
