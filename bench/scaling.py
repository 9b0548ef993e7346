"""How time and memory grow with nodes and with pods.

Runs ``kubesched bench --json`` in a fresh process per size (so that peak RSS is that
run's own) and prints one table per workload. Usage:

    python bench/scaling.py                 # the grid in bench/README.md
    python bench/scaling.py --quick         # a smaller grid, a minute or so
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

FULL = {
    "nodes": [(1000, 1000, 10000), (5000, 1000, 10000), (15000, 1000, 10000)],
    "pods": [(5000, 1000, 2000), (5000, 1000, 10000), (5000, 1000, 30000)],
    "large": [(5000, 1000, 10000), (15000, 1000, 30000)],
}
QUICK = {
    "nodes": [(1000, 500, 2000), (5000, 500, 2000)],
    "pods": [(2000, 500, 1000), (2000, 500, 4000)],
    "large": [],
}


def run(workload: str, nodes: int, init: int, pods: int) -> dict[str, object]:
    cmd = [
        sys.executable,
        "-m",
        "kubesched.cli",
        "bench",
        "--workload",
        workload,
        "--nodes",
        str(nodes),
        "--init-pods",
        str(init),
        "--pods",
        str(pods),
        "--json",
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    result: dict[str, object] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workload", default="basic")
    args = parser.parse_args()
    grid = QUICK if args.quick else FULL
    columns = ("nodes", "init", "pods", "pods/s", "p50 ms", "p99 ms", "RSS MiB")
    header = f"{'series':<7} " + " ".join(f"{c:>8}" for c in columns)
    print(f"workload {args.workload}")
    print(header)
    for series, sizes in grid.items():
        for nodes, init, pods in sizes:
            r = run(args.workload, nodes, init, pods)
            print(
                f"{series:<7} {nodes:>8} {init:>8} {pods:>8} {r['pods_per_second']:>8} "
                f"{r['p50_ms']:>8} {r['p99_ms']:>8} {r['peak_rss_mb']:>8}",
                flush=True,
            )


if __name__ == "__main__":
    main()
