"""``kubesched compare``: one cluster and workload under two configurations, side by side
(the engine is :mod:`kubesched.sim.compare`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import report
from kubesched.sim.compare import compare
from kubesched.sim.lab import load_cluster


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare`` on the ``kubesched`` parser."""
    cmp = sub.add_parser(
        "compare", help="schedule the same pods under two configurations and set them side by side"
    )
    cmp.add_argument("--cluster", required=True, help="Nodes, bound pods, PDBs, ... (YAML/JSON)")
    cmp.add_argument("--pods", action="append", help="pods to schedule (YAML/JSON); repeatable")
    cmp.add_argument(
        "--config",
        action="append",
        required=True,
        metavar="CONFIG.yaml",
        help="a KubeSchedulerConfiguration; give it twice (A, then B)",
    )
    cmp.add_argument("--seed", type=int, default=None, help="seed for the per-pod tie-break")
    cmp.add_argument(
        "--explain", action="append", metavar="POD", help="add this pod's scores in both runs"
    )
    cmp.add_argument("--output", "-o", choices=("table", "json"), default="table")
    cmp.add_argument("--report", metavar="FILE.html", help="also write the HTML report")
    cmp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load once, run twice, print the comparison."""
    from kubesched.cli import (
        UserError,
        emit,
        load_profiles_config,
        terminal,
        warn,
        write_report,
    )

    if len(args.config) != 2:
        raise UserError(
            f"--config: give exactly two configurations (A and B), got {len(args.config)}"
        )
    registry = in_tree_registry()
    configs = [(path, load_profiles_config(path, registry)) for path in args.config]
    cluster, pending = load_cluster(
        Path(args.cluster), *(Path(p) for p in args.pods or ()), seed=args.seed
    )
    warn(cluster.warnings)
    inputs = {"cluster": args.cluster, "pods": list(args.pods or ()), "config": list(args.config)}
    total = 2 * len(pending)
    with terminal.progress(total, "scheduling A and B") as advance:
        observe = None
        if advance is not None:
            attempts = [0]

            def observe(_pod: Pod, _seconds: float) -> None:
                # Retries count too; the bar stops at the end rather than overshooting.
                attempts[0] += 1
                advance(min(attempts[0], total))

        data = compare(
            cluster,
            pending,
            configs,
            registry,
            args.seed,
            inputs,
            explain_pods=args.explain or (),
            observe=observe,
        )
    emit(args.output, data, lambda: report.comparison_table(data))
    write_report(args.report, data)
    return 0
