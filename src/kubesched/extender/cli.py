"""``kubesched extender serve``: run a scheduling profile as an extender.

``main(argv)`` takes the arguments after ``kubesched extender``::

    kubesched extender serve [--config FILE] [--profile NAME] [--host ADDR] [--port N]
                             [--prefix PATH] [--tls-cert FILE --tls-key FILE]
                             [--kubeconfig FILE | --in-cluster] [--master URL]

Without ``--config`` the profile is kube-scheduler's default one. With cluster access
(``--kubeconfig``, ``--in-cluster`` or ``--master``) the server keeps a node and pod
cache through informers: it answers nodeCacheCapable requests and preempt, plugins see
the bound pods, and ``/readyz`` answers ok once the cache synced. Problems a user can
fix (a bad file, a missing profile, half a TLS pair) print one line each and exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import ssl
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kubesched.config import ConfigError, KubeSchedulerConfiguration, default_config, load_config
from kubesched.extender.cache import ClusterCache
from kubesched.extender.profile import ProfileExtender
from kubesched.extender.server import ExtenderServer
from kubesched.framework.runtime import ProfileError
from kubesched.kube import Client, ConnectionConfig, load_incluster_config
from kubesched.kube import ConfigError as KubeConfigError
from kubesched.kube import load_config as load_connection
from kubesched.plugins.registry import in_tree_registry

EXIT_USAGE = 2
DEFAULT_PORT = 8888


class UsageError(Exception):
    """A problem with the command line or its files, reported without a traceback."""


@dataclass
class Serving:
    """What ``serve`` runs: the server and where it listens."""

    server: ExtenderServer
    host: str
    port: int
    ssl_context: ssl.SSLContext | None
    #: The API server connection and the cache over it (None: no cluster access).
    client: Client | None = None
    cache: ClusterCache | None = None


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``kubesched extender``."""
    parser = argparse.ArgumentParser(
        prog="kubesched extender",
        description="Serve kubesched plugins to a stock kube-scheduler as an HTTP extender.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser("serve", help="serve a profile's Filter and Score plugins")
    serve.add_argument("--config", help="KubeSchedulerConfiguration file (default profile)")
    serve.add_argument("--profile", help="schedulerName of the profile to serve (default: first)")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")
    serve.add_argument("--prefix", default="", help="path the verbs are under (urlPrefix path)")
    serve.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--tls-key", help="the certificate's private key (PEM)")
    access = serve.add_mutually_exclusive_group()
    access.add_argument(
        "--kubeconfig", help="keep a node and pod cache of the cluster of this kubeconfig"
    )
    access.add_argument(
        "--in-cluster",
        action="store_true",
        help="keep a node and pod cache of the cluster, with the pod's service account",
    )
    serve.add_argument("--master", help="the API server URL (overrides the kubeconfig)")
    return parser


def _load(path: str | None) -> KubeSchedulerConfiguration:
    if path is None:
        return default_config()
    # Import-path plugins (``module:Factory``) are looked up beside the config file.
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return load_config(path)


def _connection(args: argparse.Namespace) -> ConnectionConfig | None:
    """Where the cache connects, or None when no cluster access was asked for."""
    try:
        if args.in_cluster:
            config = load_incluster_config()
            return config if args.master is None else _with_server(config, args.master)
        if args.kubeconfig is not None or args.master is not None:
            return load_connection(args.kubeconfig, master=args.master)
    except KubeConfigError as err:
        flag = "--in-cluster" if args.in_cluster else "--kubeconfig"
        raise UsageError(f"{flag}: cannot connect: {err}") from None
    return None


def _with_server(config: ConnectionConfig, master: str) -> ConnectionConfig:
    return replace(config, server=master.rstrip("/"))


def build_serving(args: argparse.Namespace) -> Serving:
    """Everything ``serve`` needs, checked; raises ConfigError or UsageError."""
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port: Invalid value: {args.port}: must be in the range [0, 65535]")
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key: Required value: give both or neither")
    config = _load(args.config)
    profiles = {p.scheduler_name: p for p in config.profiles}
    if args.profile is None:
        profile = config.profiles[0]
    elif args.profile in profiles:
        profile = profiles[args.profile]
    else:
        names = ", ".join(sorted(profiles))
        raise UsageError(f"--profile: Not found: {args.profile!r}: profiles are {names}")
    connection = _connection(args)
    client = Client(connection) if connection is not None else None
    cache = ClusterCache(client) if client is not None else None
    try:
        backend = ProfileExtender.from_profile(profile, in_tree_registry(), cache)
    except ProfileError as err:
        raise ConfigError(args.config or "", err.errors) from None
    context = None
    if args.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as err:
            raise UsageError(f"--tls-cert/--tls-key: cannot load: {err}") from None
    ready = (lambda: cache.synced) if cache is not None else None
    server = ExtenderServer(backend, prefix=args.prefix, ready=ready)
    return Serving(server, args.host, args.port, context, client, cache)


async def serve(
    serving: Serving,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Start the cache's informers and the server; serve until ``stop`` is set (or
    SIGTERM / SIGINT), then shut both down. ``on_listening`` gets the bound port."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    if serving.cache is not None:
        # Serve at once (liveness), while the informers sync (readiness).
        serving.cache.start()
    runner, port = await serving.server.start(serving.host, serving.port, serving.ssl_context)
    if on_listening is not None:
        on_listening(port)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        if serving.cache is not None:
            await serving.cache.stop()
        if serving.client is not None:
            await serving.client.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kubesched extender``; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        serving = build_serving(args)
    except ConfigError as err:
        print(str(err), file=sys.stderr)
        return EXIT_USAGE
    except UsageError as err:
        print(f"kubesched extender: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if serving.cache is None:
        serving.server.run(serving.host, serving.port, serving.ssl_context)
    else:
        asyncio.run(serve(serving))
    return 0
