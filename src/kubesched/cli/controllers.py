"""``kubesched controllers``: run the controllers alone against any API server, until
SIGTERM or SIGINT, as kube-controller-manager (and KWOK's kubelet) run beside a cluster.

``main(argv)`` parses ``[--kubeconfig FILE] [--context NAME] [--controllers LIST]
[--kube-api-qps Q] [--kube-api-burst B]`` and the controllers' settings
(:func:`add_controller_flags`, shared with ``kubesched apiserver``), and returns 0 after
a clean stop (2 for a bad command line, 1 when the cluster cannot be reached).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from kubesched.controllers import (
    CONTROLLERS,
    DEFAULT_BURST,
    DEFAULT_QPS,
    ControllerManager,
    ControllerOptions,
)
from kubesched.controllers.registry import controller_names
from kubesched.kube import ConfigError, KubeError, load_config

__all__ = ["add_controller_flags", "build_parser", "main", "options_from", "selection_from"]

_DEFAULTS = ControllerOptions()


def add_controller_flags(parser: argparse.ArgumentParser) -> None:
    """The controllers' flags: which to run, client rate limits and their settings."""
    group = parser.add_argument_group("controllers")
    group.add_argument(
        "--controllers",
        default=None,
        metavar="LIST",
        help="comma-separated controllers to run: '*' all, 'name' on, '-name' off "
        f"(default '*'; known: {', '.join(controller_names())})",
    )
    group.add_argument(
        "--kube-api-qps",
        type=float,
        default=DEFAULT_QPS,
        metavar="Q",
        help=f"requests per second of each controller's client (default {DEFAULT_QPS:g})",
    )
    group.add_argument(
        "--kube-api-burst",
        type=int,
        default=DEFAULT_BURST,
        metavar="B",
        help=f"burst of each controller's client (default {DEFAULT_BURST})",
    )
    group.add_argument(
        "--run-delay",
        type=float,
        default=_DEFAULTS.run_delay,
        metavar="SECONDS",
        help=f"seconds before the kubelet marks a pod bound to a simulated node Running "
        f"(default {_DEFAULTS.run_delay:g})",
    )
    group.add_argument(
        "--pod-run-seconds",
        type=float,
        default=_DEFAULTS.pod_run_seconds,
        metavar="SECONDS",
        help="seconds the containers of a restartPolicy Never/OnFailure pod run before "
        "they exit, unless its kubesched.io/run-seconds annotation says otherwise "
        f"(default {_DEFAULTS.pod_run_seconds:g})",
    )
    group.add_argument(
        "--node-lease-interval",
        type=float,
        default=_DEFAULTS.node_lease_interval,
        metavar="SECONDS",
        help="seconds between node lease renewals of simulated nodes; 0 keeps no leases "
        f"(default {_DEFAULTS.node_lease_interval:g}, as the kubelet; 5,000 nodes every "
        "10 s are 500 writes/s)",
    )


def options_from(args: argparse.Namespace) -> ControllerOptions:
    """The controllers' settings from parsed flags; ValueError names a bad one."""
    for flag, value in (
        ("--run-delay", args.run_delay),
        ("--pod-run-seconds", args.pod_run_seconds),
        ("--node-lease-interval", args.node_lease_interval),
    ):
        if not value >= 0:
            raise ValueError(f"{flag}: Invalid value: {value:g}: must not be negative")
    if not args.kube_api_qps > 0 or args.kube_api_burst < 1:
        raise ValueError("--kube-api-qps and --kube-api-burst must be positive")
    return ControllerOptions(
        run_delay=args.run_delay,
        pod_run_seconds=args.pod_run_seconds,
        node_lease_interval=args.node_lease_interval,
    )


def selection_from(text: str | None) -> tuple[str, ...]:
    """``--controllers`` as a tuple (``"*,-kubelet"`` -> ``("*", "-kubelet")``; not
    given: ``("*",)``)."""
    if text is None:
        return ("*",)
    return tuple(part.strip() for part in text.split(",") if part.strip())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched controllers``."""
    parser = argparse.ArgumentParser(
        prog="kubesched controllers",
        description="Run kubesched's controllers (the simulated kubelet, PodDisruptionBudget "
        "status, ...) against an API server, as clients of it.",
    )
    parser.add_argument(
        "--kubeconfig",
        default=None,
        metavar="FILE",
        help="kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster)",
    )
    parser.add_argument("--context", default=None, help="kubeconfig context to use")
    add_controller_flags(parser)
    return parser


async def run_controllers(manager: ControllerManager) -> None:
    """Run ``manager`` until SIGTERM/SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await manager.start()
    print(f"controllers running: {', '.join(sorted(manager.controllers))}", flush=True)
    try:
        await stop.wait()
    finally:
        with contextlib.suppress(Exception):
            await manager.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kubesched controllers`` with ``argv`` (without the program and subcommand)."""
    args = build_parser().parse_args(argv)
    try:
        options = options_from(args)
        connection = load_config(args.kubeconfig, args.context)
        manager = ControllerManager(
            connection,
            CONTROLLERS,
            options,
            selection_from(args.controllers),
            args.kube_api_qps,
            args.kube_api_burst,
        )
    except (ValueError, ConfigError) as exc:
        print(f"kubesched controllers: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(run_controllers(manager))
    except (KubeError, TimeoutError) as exc:
        print(f"kubesched controllers: cannot reach the API server: {exc}", file=sys.stderr)
        return 1
    print("kubesched controllers stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
