"""Run the embedded API server: in a background thread (tests, ``demo``) or in the foreground.

:func:`start_apiserver` returns an :class:`ApiServerHandle` once the server listens; it runs
its own event loop in a daemon thread, so callers need no asyncio. :func:`write_kubeconfig`
writes a kubeconfig that ``kubectl --kubeconfig`` and the ``kubernetes`` client use as is.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from kubesched.apiserver import errors
from kubesched.apiserver.crd import stored_resources
from kubesched.apiserver.faults import Faults, FaultSpec, parse_faults
from kubesched.apiserver.nodes import create_nodes
from kubesched.apiserver.persist import SqliteStorage
from kubesched.apiserver.priority import system_priority_classes
from kubesched.apiserver.records import ServerRecords
from kubesched.apiserver.resources import BUILTIN, NAMESPACES, PRIORITYCLASSES
from kubesched.apiserver.server import make_app
from kubesched.apiserver.store import DEFAULT_WINDOW, Store
from kubesched.apiserver.tls import (
    ServingCertificate,
    TLSError,
    issue_serving_certificate,
    load_serving_certificate,
    pki_dir_for,
    server_ssl_context,
)
from kubesched.objects.nodes import load_template, make_nodes

#: Namespaces that exist in every new cluster.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def new_store(window: int = DEFAULT_WINDOW, data: str | os.PathLike[str] | None = None) -> Store:
    """A store holding what a fresh cluster has: the system namespaces and the system
    priority classes.

    **data**: an SQLite data file to keep the objects in (created if missing; what it holds
    is loaded, and the system objects are created only where missing, as kube-apiserver's
    bootstrap does). Raises :class:`~kubesched.apiserver.persist.StorageError` for a file
    it cannot use.
    """
    from kubesched.apiserver.admission import default_on_create

    storage = SqliteStorage(data, window) if data is not None else None
    try:
        # The custom resources of stored CRDs are served before their objects load.
        custom = stored_resources(storage) if storage is not None else ()
        store = Store(BUILTIN + custom, window=window, storage=storage)
    except BaseException:
        if storage is not None:
            storage.close()
        raise
    for name in SYSTEM_NAMESPACES:
        if storage is not None and _exists(store, NAMESPACES.key, "", name):
            continue
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        default_on_create(NAMESPACES, obj)
        store.create(NAMESPACES, obj)
    for pc in system_priority_classes():
        if storage is not None and _exists(store, PRIORITYCLASSES.key, "", pc["metadata"]["name"]):
            continue
        store.create(PRIORITYCLASSES, pc)
    return store


def _exists(store: Store, key: tuple[str, str, str], namespace: str, name: str) -> bool:
    res = store.resource(*key)
    if res is None:
        return False
    try:
        store.get(res, namespace, name)
    except errors.ApiError:
        return False
    return True


def write_kubeconfig(
    path: str | os.PathLike[str],
    url: str,
    token: str | None = None,
    ca_data: bytes | None = None,
) -> Path:
    """Write a kubeconfig for ``url`` (one cluster, user and context, all ``kubesched``):
    the bearer ``token`` and the CA to verify an https server with (``ca_data``, PEM),
    when given.

    It is JSON, which every kubeconfig reader accepts as YAML, readable by its owner only
    (it may hold a token), as client-go writes kubeconfigs. Returns the path written.
    """
    user: dict[str, str] = {"token": token} if token else {}
    cluster: dict[str, str] = {"server": url}
    if ca_data:
        cluster["certificate-authority-data"] = base64.b64encode(ca_data).decode("ascii")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubesched", "cluster": cluster}],
        "users": [{"name": "kubesched", "user": user}],
        "contexts": [
            {
                "name": "kubesched",
                "context": {"cluster": "kubesched", "user": "kubesched", "namespace": "default"},
            }
        ],
        "current-context": "kubesched",
        "preferences": {},
    }
    target = Path(path)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(config, indent=2) + "\n")
    return target


def server_url(scheme: str, host: str, port: int) -> str:
    """The URL clients dial for a server listening on host:port: a wildcard address
    (``0.0.0.0``, ``::``) is reached on loopback; IPv6 addresses go in brackets."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def serving_certificate(
    tls: bool,
    host: str = "127.0.0.1",
    data: str | os.PathLike[str] | None = None,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
) -> ServingCertificate | None:
    """What the server serves HTTPS with, or None for plain HTTP.

    ``tls_cert`` and ``tls_key`` (PEM files, together): the user's certificate, and
    ``tls_ca`` the CA clients should trust. Else with ``tls``: a certificate for
    ``host`` from a generated CA, kept beside ``data``
    (:func:`~kubesched.apiserver.tls.pki_dir_for`) so that a restart serves the same CA.
    Raises :class:`~kubesched.apiserver.tls.TLSError`.
    """
    if (tls_cert is None) != (tls_key is None):
        raise TLSError("--tls-cert and --tls-key go together: give both or neither")
    if tls_cert is not None and tls_key is not None:
        return load_serving_certificate(tls_cert, tls_key, tls_ca)
    if tls_ca is not None:
        raise TLSError("--tls-ca names the CA of a certificate given with --tls-cert")
    if not tls:
        return None
    hosts = [host] if host not in ("", "0.0.0.0", "::") else []
    directory = pki_dir_for(data) if data is not None else None
    return issue_serving_certificate(hosts, directory)


@dataclass
class ApiServerHandle:
    """A running in-process API server: its URL, its kubeconfig, its store; stop it."""

    url: str
    kubeconfig_path: Path
    store: Store
    _loop: asyncio.AbstractEventLoop = field(repr=False)
    _runner: web.AppRunner = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _owns_store: bool = field(default=False, repr=False)
    #: The bearer token requests must carry (empty: none needed).
    token: str = field(default="", repr=False)
    #: PEM of the CA that verifies an https server (None for http).
    ca_data: bytes | None = field(default=None, repr=False)
    #: The faults it injects (None: none).
    faults: Faults | None = field(default=None, repr=False)
    #: What it served, when kept (with faults, or ``records=True``).
    records: ServerRecords | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Close every connection and watch, and end the server's thread (and close the
        data file of a store it opened itself)."""
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        future.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> ApiServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: The longest request line (method, path and query string) served.
MAX_REQUEST_LINE_BYTES = 1 << 20


async def start_site(
    store: Store,
    host: str,
    port: int,
    bookmark_interval: float,
    token: str = "",
    served: ServingCertificate | None = None,
    faults: Faults | None = None,
    records: ServerRecords | None = None,
) -> tuple[web.AppRunner, str]:
    """Start serving ``store`` on host:port in the running loop; return the runner and URL.
    ``token``: the bearer token requests must carry; ``served``: serve HTTPS with it;
    ``faults``: inject them; ``records``: keep what was served there."""
    ssl_context = server_ssl_context(served) if served is not None else None
    runner = web.AppRunner(
        make_app(store, bookmark_interval, token, faults, records),
        access_log=None,
        shutdown_timeout=2.0,
        # Go's http.Server reads up to DefaultMaxHeaderBytes (1 MiB) of request line and
        # headers, so kube-apiserver takes query strings up to about that; aiohttp's
        # default is 8 KiB. Beyond it aiohttp answers a plain-text 400 (Go: a plain 431).
        max_line_size=MAX_REQUEST_LINE_BYTES,
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
    await site.start()
    bound_port = runner.addresses[0][1]
    return runner, server_url("https" if served is not None else "http", host, bound_port)


def add_nodes(
    store: Store, nodes: int = 0, node_template: str | os.PathLike[str] | None = None
) -> int:
    """Create ``nodes`` simulated nodes (:mod:`kubesched.objects.nodes`) from
    ``node_template`` (a YAML Node manifest whose name is the prefix; default template
    when None); a template with ``nodes == 0`` makes one node. Nodes that exist are kept.
    Returns how many were created. Raises
    :class:`~kubesched.objects.nodes.NodeTemplateError` for an unusable template."""
    template = load_template(node_template) if node_template is not None else None
    count = nodes if nodes or template is None else 1
    return len(create_nodes(store, make_nodes(count, template)))


def start_apiserver(
    port: int = 0,
    host: str = "127.0.0.1",
    kubeconfig_path: str | os.PathLike[str] | None = None,
    store: Store | None = None,
    bookmark_interval: float = 10.0,
    data: str | os.PathLike[str] | None = None,
    nodes: int = 0,
    node_template: str | os.PathLike[str] | None = None,
    token: str = "",
    tls: bool = False,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    faults: str | FaultSpec | None = None,
    records: bool = False,
) -> ApiServerHandle:
    """Start an API server in a background thread and return once it listens.

    **port**: 0 picks a free one. **kubeconfig_path**: where to write its kubeconfig
    (a temporary file by default). **store**: serve an existing store (default: a fresh
    one with the system namespaces). **bookmark_interval**: seconds between BOOKMARK
    events on watches that allow them. **data**: keep the objects in this SQLite file
    (see :func:`new_store`; not with **store**); the handle closes it on :meth:`stop`.
    **nodes**, **node_template**: simulated nodes to create (see :func:`add_nodes`); no
    kubelet runs them here: :func:`kubesched.cli.cluster.start_cluster` starts the server
    with the controllers (the simulated kubelet among them) beside it.
    **token**: requests must carry it as a bearer token (health checks and ``/version``
    stay open; :mod:`kubesched.apiserver.auth`). **tls**: serve HTTPS with a certificate
    from a generated CA (kept beside **data**, so a restart serves the same CA);
    **tls_cert**/**tls_key**/**tls_ca**: a certificate of yours instead (see
    :func:`serving_certificate`). The kubeconfig carries the token and the CA.
    **faults**: a fault SPEC (text, or parsed) to inject
    (:mod:`kubesched.apiserver.faults`; a bad one raises its
    :class:`~kubesched.apiserver.faults.FaultSpecError`); **records**: keep bindings,
    Lease and pod writes (:mod:`kubesched.apiserver.records`; always with faults).
    """
    if store is not None and data is not None:
        raise ValueError("start_apiserver: give either store or data, not both")
    spec = parse_faults(faults) if isinstance(faults, str) else faults
    injected = Faults(spec) if spec is not None else None
    kept = ServerRecords() if records or injected is not None else None
    served = serving_certificate(tls, host, data, tls_cert, tls_key, tls_ca)
    owns = store is None
    store = store if store is not None else new_store(data=data)
    try:
        add_nodes(store, nodes, node_template)
    except BaseException:
        if owns:
            store.close()
        raise
    loop = asyncio.new_event_loop()
    sites: list[tuple[web.AppRunner, str]] = []
    failures: list[BaseException] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            sites.append(
                loop.run_until_complete(
                    start_site(store, host, port, bookmark_interval, token, served, injected, kept)
                )
            )
        except BaseException as exc:  # reported to the caller below
            failures.append(exc)
            started.set()
            return
        started.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name="kubesched-apiserver", daemon=True)
    thread.start()
    started.wait()
    if failures:
        loop.close()
        if owns:
            store.close()
        raise RuntimeError(f"the API server could not start on {host}:{port}") from failures[0]
    runner, url = sites[0]
    if kubeconfig_path is None:
        fd, name = tempfile.mkstemp(prefix="kubesched-", suffix=".kubeconfig")
        os.close(fd)
        kubeconfig_path = name
    ca_data = served.ca_pem if served is not None else None
    path = write_kubeconfig(kubeconfig_path, url, token or None, ca_data)
    return ApiServerHandle(
        url, path, store, loop, runner, thread, owns, token, ca_data, injected, kept
    )
