"""What DynamicResources costs: scheduler_perf's ``dra`` cases in the simulator, beside
upstream's thresholds, with the CEL selectors' cost and cache hit rate.

Runs ``kubesched bench``'s three dra workloads (500 nodes with 10 devices each, 2,500
initial pods, 2,500 measured; every node filtered) and, for each, the selectors'
evaluations, cache hits and mean time per evaluation (``objects.dra.cel.stats``).

    .venv/bin/python bench/dra_plugin.py [--nodes 500] [--init-pods 2500] [--pods 2500] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from kubesched.config.defaults import default_config
from kubesched.objects.dra.cel import reset_stats, stats
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import run_bench

#: scheduler_perf's thresholds (pods/s) for these cases, as the issue quotes them.
UPSTREAM = {
    "dra-claim-template": "40-56",
    "dra-steady-state": "60-70",
    "dra-shared-claim": "40-56",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--init-pods", type=int, default=2500)
    parser.add_argument("--pods", type=int, default=2500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for workload, upstream in UPSTREAM.items():
        reset_stats()
        cpu = time.process_time()
        result = run_bench(
            workload, args.nodes, args.init_pods, args.pods, default_config(), in_tree_registry()
        )
        cel = stats()
        rows.append(
            {
                **result.to_json(),
                "cpu_seconds_total": round(time.process_time() - cpu, 3),
                "upstream_pods_per_second": upstream,
                "cel_evaluations": cel.evaluations,
                "cel_cache_hits": cel.cache_hits,
                "cel_hit_rate": round(cel.hit_rate, 4),
                "cel_us_per_evaluation": round(1e6 * cel.seconds_per_evaluation, 1),
            }
        )
    if args.json:
        print(json.dumps(rows))
        return
    for r in rows:
        print(
            f"{r['workload']}: {r['pods_per_second']} pods/s "
            f"(upstream {r['upstream_pods_per_second']}), "
            f"p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, {r['scheduled']}/{r['pods']} scheduled; "
            f"CEL {r['cel_evaluations']} evaluations at {r['cel_us_per_evaluation']} us, "
            f"{r['cel_cache_hits']} cache hits ({100 * r['cel_hit_rate']:.1f}%)"
        )


if __name__ == "__main__":
    main()
