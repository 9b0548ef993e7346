"""``kubesched run``: the live scheduler as a command.

``main(argv)`` parses ``[--config FILE] [--kubeconfig FILE] [--master URL]``, connects
with the configuration's clientConnection QPS and burst, and schedules until SIGTERM or
SIGINT: it stops taking pods, gives in-flight bindings a few seconds
(``SHUTDOWN_GRACE``), releases the Lease when it leads, and exits 0. A lost Lease exits 1,
as kube-scheduler does. Without ``--config`` it runs one default profile named
``kubesched``, so that it never takes kube-scheduler's pods by accident. ``/healthz``,
``/readyz`` and ``/metrics`` are served on
``--bind-address``:``--secure-port`` (default 0.0.0.0:10259, kube-scheduler's port number,
but plain HTTP without authentication; ``--secure-port 0`` turns them off, as upstream).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import signal
import sys
from collections.abc import Sequence

from kubesched.config import ConfigError, KubeSchedulerConfiguration, default_config, load_config
from kubesched.extender.client_tls import ExtenderConfigError
from kubesched.framework.runtime import ProfileError
from kubesched.kube import Client, KubeError
from kubesched.kube import load_config as load_connection
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.endpoints import (
    DEFAULT_BIND_ADDRESS,
    DEFAULT_PORT,
    Endpoints,
    EndpointsError,
)
from kubesched.scheduler.scheduler import Scheduler

__all__ = ["DEFAULT_PROFILE_NAME", "build_parser", "main", "run"]

#: The schedulerName of the profile used when no configuration file is given.
DEFAULT_PROFILE_NAME = "kubesched"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched run``."""
    parser = argparse.ArgumentParser(
        prog="kubesched run", description="Schedule the pods of a live cluster."
    )
    parser.add_argument("--config", help="a KubeSchedulerConfiguration file")
    parser.add_argument("--kubeconfig", help="the kubeconfig to connect with")
    parser.add_argument("--master", help="the API server URL (overrides the kubeconfig)")
    parser.add_argument(
        "--secure-port",
        "--metrics-port",
        dest="secure_port",
        type=int,
        default=DEFAULT_PORT,
        help="port of /healthz, /readyz and /metrics (plain HTTP; 0 disables; "
        f"default {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--bind-address",
        default=DEFAULT_BIND_ADDRESS,
        help=f"address to serve /healthz, /readyz and /metrics on (default {DEFAULT_BIND_ADDRESS})",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logs")
    return parser


def scheduler_config(path: str | None) -> KubeSchedulerConfiguration:
    """The file's configuration, or one default profile named ``kubesched``."""
    if path:
        return load_config(path)
    config = default_config()
    profile = dataclasses.replace(config.profiles[0], scheduler_name=DEFAULT_PROFILE_NAME)
    return dataclasses.replace(config, profiles=(profile,))


async def run(args: argparse.Namespace) -> bool:
    """Connect, schedule, and stop cleanly on SIGTERM / SIGINT; False when leadership
    was lost (kube-scheduler exits with an error then, and so do we)."""
    config = scheduler_config(args.config)
    kubeconfig = args.kubeconfig or config.client_connection.kubeconfig or None
    connection = load_connection(kubeconfig, master=args.master)
    qps, burst = config.client_connection.qps, config.client_connection.burst
    async with Client(connection, qps=qps, burst=burst) as client:
        scheduler = Scheduler(config, in_tree_registry(), client)
        port, host = args.secure_port, args.bind_address
        async with contextlib.AsyncExitStack() as stack:
            if port:
                # A port already taken is fatal, as for kube-scheduler (EndpointsError).
                await stack.enter_async_context(Endpoints(scheduler, host, port))
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, scheduler.stop)
            try:
                await scheduler.run()
            finally:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(sig)
        return not scheduler.leadership_lost


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kubesched run``; the exit status."""
    args = build_parser().parse_args(argv)
    level = logging.DEBUG if args.verbose > 1 else logging.INFO if args.verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        kept = asyncio.run(run(args))
    except (ConfigError, ProfileError, KubeError, ExtenderConfigError) as err:
        print(f"kubesched run: {err}", file=sys.stderr)
        return 1
    except TimeoutError:
        print("kubesched run: the informers did not sync in time", file=sys.stderr)
        return 1
    except EndpointsError as err:
        print(f"kubesched run: /healthz, /readyz, /metrics: {err}", file=sys.stderr)
        return 1
    if not kept:
        print("kubesched run: leader election lost", file=sys.stderr)
        return 1
    return 0
