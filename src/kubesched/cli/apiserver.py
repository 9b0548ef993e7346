"""``kubesched apiserver``: serve the embedded API server until SIGTERM or SIGINT, with
the controllers beside it when it has simulated nodes.

``main(argv)`` parses ``[--host H] [--port N] [--write-kubeconfig FILE] [--window N]
[--data FILE] [--nodes N] [--node-template FILE] [--no-controllers]
[--token [T] | --token-file FILE] [--tls | --tls-cert FILE --tls-key FILE [--tls-ca FILE]]
[--faults SPEC]``
and the controllers' flags (:func:`kubesched.cli.controllers.add_controller_flags`),
creates the simulated nodes, writes the kubeconfig (with the token and the CA), prints
where it listens, and returns 0 after a clean stop (2 for a bad command line, 1 when the
port cannot be bound, or the data file, node template, token file or certificates are
unusable).

The controllers (:mod:`kubesched.controllers`: the simulated kubelet, the disruption
controller, ...) run in the same process and event loop, as clients over HTTP of the
server, when there are simulated nodes (``--nodes``, ``--node-template``) or
``--controllers`` is given; ``--no-controllers`` leaves a bare server (benchmarks), and
``kubesched controllers`` runs them alone against any server.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from kubesched.apiserver.faults import Faults, FaultSpecError, parse_faults
from kubesched.apiserver.persist import StorageError
from kubesched.apiserver.records import RECORDS_PATH, ServerRecords
from kubesched.apiserver.runner import (
    add_nodes,
    new_store,
    serving_certificate,
    start_site,
    write_kubeconfig,
)
from kubesched.apiserver.store import DEFAULT_WINDOW, Store
from kubesched.apiserver.tls import ServingCertificate, TLSError
from kubesched.cli.controllers import add_controller_flags, options_from, selection_from
from kubesched.controllers import CONTROLLERS, ControllerManager
from kubesched.kube import load_kubeconfig
from kubesched.objects.nodes import NodeTemplateError

DEFAULT_PORT = 8080
DEFAULT_KUBECONFIG = "kubesched.kubeconfig"
#: ``--token`` given without a value: make a random one (it goes only to the kubeconfig).
GENERATE = object()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched apiserver``."""
    parser = argparse.ArgumentParser(
        prog="kubesched apiserver",
        description="Serve a Kubernetes-compatible API server in memory, for kubectl, the "
        "kubernetes client and kubesched's scheduler.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    parser.add_argument(
        "--write-kubeconfig",
        metavar="FILE",
        default=DEFAULT_KUBECONFIG,
        help=f"kubeconfig to write for this server (default ./{DEFAULT_KUBECONFIG})",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help="past events kept per resource for watches to resume from",
    )
    parser.add_argument(
        "--data",
        metavar="FILE",
        default=None,
        help="keep objects in this SQLite file (created if missing) instead of in memory "
        "only; a restart keeps every object and resourceVersion",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=0,
        metavar="N",
        help="create N simulated Ready nodes (node-0, ...; with --node-template: copies of it)",
    )
    parser.add_argument(
        "--node-template",
        metavar="FILE",
        default=None,
        help="YAML Node manifest to copy for the simulated nodes; its name is the prefix "
        "of theirs (one node unless --nodes says how many)",
    )
    parser.add_argument(
        "--no-controllers",
        "--no-agent",  # its name before the kubelet moved to the controllers
        dest="no_controllers",
        action="store_true",
        help="run no controllers beside the server (bound pods stay Pending; graceful "
        "deletions wait for their whole grace period), as for benchmarks",
    )
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--token",
        nargs="?",
        const=GENERATE,
        default=None,
        metavar="T",
        help="requests must carry 'Authorization: Bearer T' (/healthz, /livez, /readyz and "
        "/version stay open); without T a random token is made; the kubeconfig carries it",
    )
    auth.add_argument(
        "--token-file",
        metavar="FILE",
        default=None,
        help="as --token, with the token read from FILE (its first line), which keeps it "
        "out of the process list",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a certificate from a CA made at start (kept beside --data "
        "FILE as FILE.pki/, so a restart serves the same CA); the kubeconfig carries the CA",
    )
    parser.add_argument(
        "--tls-cert", metavar="FILE", default=None, help="serve HTTPS with this PEM certificate"
    )
    parser.add_argument("--tls-key", metavar="FILE", default=None, help="the PEM key of --tls-cert")
    parser.add_argument(
        "--tls-ca",
        metavar="FILE",
        default=None,
        help="the CA clients verify --tls-cert with (written into the kubeconfig; default: "
        "their system CAs)",
    )
    parser.add_argument(
        "--faults",
        metavar="SPEC",
        default=None,
        help="inject faults, e.g. 'errors=0.2,codes=503,429,delay=0-0.1,drop-watches=5,"
        "window=100,seed=1' (see docs/apiserver.md); what was served is kept at "
        f"{RECORDS_PATH}",
    )
    add_controller_flags(parser)
    return parser


def _token(token: object, token_file: str | None) -> str:
    """The bearer token asked for: given, read from a file, made up, or none ("")."""
    if token is GENERATE:
        return secrets.token_urlsafe(32)
    if token_file is not None:
        try:
            lines = Path(token_file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--token-file {token_file}: cannot read it: {exc}") from exc
        value = lines[0].strip() if lines else ""
        if not value:
            raise ValueError(f"--token-file {token_file}: the first line holds no token")
        return value
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ValueError("--token: the token must not be empty")
    return str(token or "").strip()


async def serve(
    host: str,
    port: int,
    kubeconfig: str,
    window: int,
    data: str | None = None,
    nodes: int = 0,
    node_template: str | None = None,
    controllers: Callable[[str], ControllerManager] | None = None,
    token: str = "",
    served: ServingCertificate | None = None,
    faults: Faults | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT; the kubeconfig is written once the port is bound.
    ``controllers``: makes the controller manager to run beside the server, from the
    kubeconfig's path; ``token``: the bearer token requests must carry; ``served``:
    serve HTTPS with it; ``faults``: inject them (and keep records)."""
    store = new_store(window, data)
    try:
        created = add_nodes(store, nodes, node_template)
        if created:
            print(f"{created} simulated nodes created", flush=True)
        await _serve_store(store, host, port, kubeconfig, controllers, token, served, faults)
    finally:
        store.close()
    if data is not None:
        print(f"data kept in {data} (resourceVersion {store.resource_version})", flush=True)


async def _serve_store(
    store: Store,
    host: str,
    port: int,
    kubeconfig: str,
    controllers: Callable[[str], ControllerManager] | None = None,
    token: str = "",
    served: ServingCertificate | None = None,
    faults: Faults | None = None,
) -> None:
    records = ServerRecords() if faults is not None else None
    runner, url = await start_site(store, host, port, 10.0, token, served, faults, records)
    ca_data = served.ca_pem if served is not None else None
    write_kubeconfig(kubeconfig, url, token or None, ca_data)
    manager = controllers(kubeconfig) if controllers is not None else None
    try:
        if manager is not None:
            await manager.start()
    except BaseException:
        await runner.cleanup()
        raise
    print(f"kubesched apiserver listening on {url}", flush=True)
    if faults is not None:
        print(f"injecting faults {faults.spec.text!r}; records at {url}{RECORDS_PATH}", flush=True)
    if manager is not None:
        print(f"controllers running: {', '.join(sorted(manager.controllers))}", flush=True)
    print(f"kubeconfig written to {kubeconfig}: kubectl --kubeconfig {kubeconfig} get nodes")
    if token and served is None:
        # client-go's clientcmd sets a kubeconfig's token only for TLS connections.
        print(
            "note: kubectl sends no bearer token to a plain-HTTP server (its requests are "
            "anonymous and get 403): add --tls to use kubectl with --token",
            flush=True,
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        if manager is not None:
            await manager.stop()
        await runner.cleanup()


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kubesched apiserver`` with ``argv`` (without the program and subcommand)."""
    args = build_parser().parse_args(argv)
    if args.window < 1:
        print("kubesched apiserver: --window must be at least 1", file=sys.stderr)
        return 2
    if args.nodes < 0:
        print("kubesched apiserver: --nodes must not be negative", file=sys.stderr)
        return 2
    try:
        options = options_from(args)
    except ValueError as exc:
        print(f"kubesched apiserver: {exc}", file=sys.stderr)
        return 2
    try:
        faults = Faults(parse_faults(args.faults)) if args.faults is not None else None
    except FaultSpecError as exc:
        print(f"kubesched apiserver: --faults: {exc}", file=sys.stderr)
        return 2
    selection = selection_from(args.controllers)
    wanted = args.nodes > 0 or args.node_template is not None or args.controllers is not None
    controllers = None
    if wanted and not args.no_controllers:

        def controllers(path: str) -> ControllerManager:
            return ControllerManager(
                load_kubeconfig([path]),
                CONTROLLERS,
                options,
                selection,
                args.kube_api_qps,
                args.kube_api_burst,
            )

    try:
        token = _token(args.token, args.token_file)
        served = serving_certificate(
            args.tls, args.host, args.data, args.tls_cert, args.tls_key, args.tls_ca
        )
        asyncio.run(
            serve(
                args.host,
                args.port,
                args.write_kubeconfig,
                args.window,
                args.data,
                args.nodes,
                args.node_template,
                controllers,
                token,
                served,
                faults,
            )
        )
    except (StorageError, NodeTemplateError, TLSError, ValueError) as exc:
        print(f"kubesched apiserver: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"kubesched apiserver: cannot listen on {args.host}:{args.port}: {exc.strerror}; "
            "choose another --port",
            file=sys.stderr,
        )
        return 1
    print("kubesched apiserver stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
