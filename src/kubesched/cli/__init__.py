"""The ``kubesched`` command: one entry point, a subcommand per part (the subcommands that
compose several parts — demo, export, the end-to-end bench — live in modules beside this one).

Errors a user can fix (a broken file, a bad config) print one line per problem naming
the file, the object and the field, and exit with status 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from kubesched.cli import terminal
from kubesched.cli.htmlreport import ReportError, write_html
from kubesched.config import ConfigError, KubeSchedulerConfiguration, default_config
from kubesched.config.load import read_document
from kubesched.config.parse import parse_config
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, ProfileError
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import report
from kubesched.sim.bench import run_bench
from kubesched.sim.files import InputError
from kubesched.sim.lab import (
    explain,
    explain_document,
    load_cluster,
    simulate,
    simulation_document,
)
from kubesched.sim.simulator import TIE_BREAKS
from kubesched.sim.workloads import DEFAULT_SIZES, WORKLOADS

#: The end-to-end workload mode: a Deployment through controllers, scheduler and kubelet.
E2E_DEPLOYMENT = "deployment"

EXIT_USAGE = 2


class UserError(Exception):
    """A problem with the user's input, reported without a traceback."""


def load_profiles_config(path: str | None, registry: Registry) -> KubeSchedulerConfiguration:
    """Read and validate a configuration, plugin arguments included, reporting every
    problem of the file at once (decoding, structure, and each plugin's args)."""
    if path is None:
        return default_config()
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        raise UserError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"{path}: byte {err.start}: invalid UTF-8 (0x{err.object[err.start]:02x})"
        ) from None
    # Import-path plugins (``module:Factory``) are looked up beside the config file.
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    data, errors = read_document(text, path, is_json=file.suffix.lower() == ".json")
    config, problems = parse_config(data, path)
    errors += problems
    for profile in config.profiles:
        try:
            Framework(profile, registry)
        except ProfileError as err:
            errors.extend(err.errors)
    if errors:
        raise ConfigError(path, errors)
    return config


def _cmd_simulate(args: argparse.Namespace) -> int:
    registry = in_tree_registry()
    config = load_profiles_config(args.config, registry)
    cluster, pending = load_cluster(
        Path(args.cluster), *(Path(p) for p in args.pods or ()), seed=args.seed
    )
    warn(cluster.warnings)
    with terminal.progress(len(pending), "scheduling") as advance:
        result = simulate(
            cluster,
            pending,
            config,
            registry,
            seed=args.seed,
            tie_break=args.tie_break,
            explain_pods=args.explain or (),
            observe=pods_done(advance),
        )
    inputs = {"cluster": args.cluster, "pods": list(args.pods or ()), "config": args.config}
    data = simulation_document(result, args.seed, inputs)
    emit(args.output, data, lambda: report.simulation_table(data))
    write_report(args.report, data)
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    registry = in_tree_registry()
    config = load_profiles_config(args.config, registry)
    cluster, pods = load_cluster(Path(args.cluster), Path(args.pod), seed=args.seed)
    warn(cluster.warnings)
    owner = cluster.owners.get(pods[0].key) if pods else None
    if len(pods) > 1 and owner and all(cluster.owners.get(p.key) == owner for p in pods):
        # One workload's replicas differ by name only: its first pod stands for them all.
        warn([f"{args.pod}: {owner[0]} {owner[1]} makes {len(pods)} pods; explaining the first"])
    elif len(pods) != 1:
        raise UserError(f"{args.pod}: expected exactly one pod, found {len(pods)}")
    data = explain(cluster, pods[0], config, registry, seed=args.seed)
    inputs = {"cluster": args.cluster, "pod": args.pod, "config": args.config}
    data = explain_document(data, cluster, args.seed, inputs)
    emit(args.output, data, lambda: report.explain_table(data))
    write_report(args.report, data)
    return 0


def pods_done(advance: Callable[[int], None] | None) -> Callable[[Pod, float], None] | None:
    """An ``observe`` callback that reports how many distinct pods were attempted."""
    if advance is None:
        return None
    seen: set[str] = set()

    def observe(pod: Pod, _seconds: float) -> None:
        if pod.key not in seen:
            seen.add(pod.key)
            advance(len(seen))

    return observe


def write_report(path: str | None, data: dict[str, Any]) -> None:
    """``--report FILE.html``: the document rendered as one self-contained page."""
    if path is not None:
        write_html(data, Path(path))


def warn(lines: Sequence[str]) -> None:
    """Print what the user should know but is no error, one line each, on stderr."""
    for line in lines:
        print(f"kubesched: warning: {line}", file=sys.stderr)


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.workload == E2E_DEPLOYMENT:
        if not args.e2e:
            raise UserError(f"--workload {E2E_DEPLOYMENT}: only with --e2e")
        from kubesched.cli.e2eworkload import run_workload_command

        return run_workload_command(args)
    if args.e2e:
        from kubesched.cli.e2ebench import run_e2e_command

        return run_e2e_command(args)
    if args.kubeconfig is not None:
        raise UserError("--kubeconfig: only with --e2e")
    registry = in_tree_registry()
    config = load_profiles_config(args.config, registry)
    nodes, init_pods, pods = DEFAULT_SIZES[args.workload]
    nodes = nodes if args.nodes is None else args.nodes
    init_pods = init_pods if args.init_pods is None else args.init_pods
    pods = pods if args.pods is None else args.pods
    for name, value in (("--nodes", nodes), ("--init-pods", init_pods), ("--pods", pods)):
        if value < 0 or (name == "--nodes" and value == 0):
            raise UserError(f"{name}: Invalid value: {value}: must be a positive number")
    show = sys.stderr.isatty() and not args.json
    result = run_bench(
        args.workload,
        nodes,
        init_pods,
        pods,
        config,
        registry,
        seed=args.seed,
        progress=_progress_bar if show else None,
        columnar=not args.per_node,
    )
    if show:
        sys.stderr.write("\n")
    if args.json:
        json.dump(result.to_json(), sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report.bench_text(result.to_json()))
    return 0


def _progress_bar(done: int, total: int) -> None:
    if done % 100 and done != total:
        return
    width = 40
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} pods")
    sys.stderr.flush()


def emit(output: str, data: dict[str, Any], table: Any) -> None:
    """Print ``data`` as JSON or YAML, or ``table()``'s text."""
    if output == "json":
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif output == "yaml":
        yaml.safe_dump(data, sys.stdout, sort_keys=False)
    else:
        terminal.show(data, table)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched``."""
    parser = argparse.ArgumentParser(
        prog="kubesched",
        description="Write, run, test and explain Kubernetes pod scheduling in Python.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = sub.add_parser(
        "simulate", help="schedule pods onto a cluster described in files, in-process"
    )
    sim.add_argument("--cluster", required=True, help="Nodes, bound pods, PDBs, ... (YAML/JSON)")
    sim.add_argument("--pods", action="append", help="pods to schedule (YAML/JSON); repeatable")
    sim.add_argument("--config", help="KubeSchedulerConfiguration file (default profile if unset)")
    sim.add_argument("--seed", type=int, default=None, help="seed for tie-breaking")
    sim.add_argument("--output", "-o", choices=("table", "json", "yaml"), default="table")
    sim.add_argument("--report", metavar="FILE.html", help="also write the HTML report")
    sim.add_argument(
        "--explain",
        action="append",
        metavar="POD",
        help="add the per-node, per-plugin scores of this pod (namespace/name); repeatable",
    )
    sim.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default="random",
        help="random: one random source for the run, as kube-scheduler; per-pod: each pod's "
        "own, from the seed and its key (what compare uses)",
    )
    sim.set_defaults(func=_cmd_simulate)

    exp = sub.add_parser("explain", help="why a pod goes where it goes, or why it is pending")
    exp.add_argument("--cluster", required=True, help="Nodes, bound pods, PDBs, ... (YAML/JSON)")
    exp.add_argument("--pod", required=True, help="the pod to evaluate (YAML/JSON)")
    exp.add_argument("--config", help="KubeSchedulerConfiguration file (default profile if unset)")
    exp.add_argument("--seed", type=int, default=None, help="seed for tie-breaking")
    exp.add_argument("--output", "-o", choices=("table", "json"), default="table")
    exp.add_argument("--report", metavar="FILE.html", help="also write the HTML report")
    exp.set_defaults(func=_cmd_explain)

    bench = sub.add_parser(
        "bench", help="measure a profile on a scheduler_perf-like workload, every node scored"
    )
    bench.add_argument(
        "--workload",
        choices=(*WORKLOADS, E2E_DEPLOYMENT),
        default="basic",
        help=f"with --e2e, {E2E_DEPLOYMENT}: one Deployment of --pods replicas through the "
        "whole control plane",
    )
    bench.add_argument(
        "--nodes", type=int, help="nodes (default per workload: 5000; daemonset 15000 + 1)"
    )
    bench.add_argument("--init-pods", type=int, help="pods placed before measuring")
    bench.add_argument("--pods", type=int, help="pods measured")
    bench.add_argument("--config", help="KubeSchedulerConfiguration file (default profile)")
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument(
        "--per-node",
        action="store_true",
        help="measure the per-node reference path (no node table), for comparison",
    )
    bench.add_argument(
        "--e2e",
        action="store_true",
        help="time the live scheduler end to end against an API server (embedded, in its "
        "own process, unless --kubeconfig): default 5000 nodes, 5000 pods",
    )
    bench.add_argument(
        "--kubeconfig", help="with --e2e: a cluster whose nodes may be filled with pods"
    )
    bench.set_defaults(func=_cmd_bench)

    from kubesched.cli import capacity, compare, reportcmd

    compare.add_parser(sub)
    capacity.add_parser(sub)
    reportcmd.add_parser(sub)

    # Listed for --help; ``main`` hands their arguments to their own parsers.
    sub.add_parser("run", help="schedule a live cluster (kubeconfig or in-cluster)")
    sub.add_parser("extender", help="serve plugins to a stock kube-scheduler as an HTTP extender")
    sub.add_parser(
        "apiserver", help="an embedded Kubernetes-compatible API server (and its controllers)"
    )
    sub.add_parser(
        "controllers", help="run the controllers and simulated kubelet against an API server"
    )
    sub.add_parser("export", help="write a live cluster to a file kubesched simulate reads")
    sub.add_parser("config", help="configuration chores: migrate a removed Policy file")
    sub.add_parser("demo", help="API server, simulated nodes, scheduler, workload: the tour")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kubesched`` command line; returns the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # The API server, the controllers and the extender have parsers of their own: everything after
    # their word (--help included) is theirs.
    if args_list[:1] == ["extender"]:
        from kubesched.extender import cli as extender_cli

        return extender_cli.main(args_list[1:])
    if args_list[:1] == ["apiserver"]:
        from kubesched.cli import apiserver as apiserver_cli

        return apiserver_cli.main(args_list[1:])
    if args_list[:1] == ["controllers"]:
        from kubesched.cli import controllers as controllers_cli

        return controllers_cli.main(args_list[1:])
    if args_list[:1] == ["run"]:
        from kubesched.scheduler import cli as scheduler_cli

        return scheduler_cli.main(args_list[1:])
    if args_list[:1] == ["export"]:
        from kubesched.cli import export

        return export.main(args_list[1:])
    if args_list[:1] == ["config"]:
        from kubesched.cli import config as config_cli

        return config_cli.main(args_list[1:])
    if args_list[:1] == ["demo"]:
        from kubesched.cli import demo

        return demo.main(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        code: int = args.func(args)
    except ConfigError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    except (InputError, UserError, ReportError) as err:
        for line in str(err).splitlines():
            print(f"kubesched: error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
