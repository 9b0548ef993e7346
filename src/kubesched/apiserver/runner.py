"""Run the embedded API server: in a background thread (tests, ``demo``) or in the foreground.

:func:`start_apiserver` returns an :class:`ApiServerHandle` once the server listens; it runs
its own event loop in a daemon thread, so callers need no asyncio. :func:`write_kubeconfig`
writes a kubeconfig that ``kubectl --kubeconfig`` and the ``kubernetes`` client use as is.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from kubesched.apiserver import errors
from kubesched.apiserver.agent import DEFAULT_LEASE_INTERVAL, DEFAULT_RUN_DELAY, NodeAgent
from kubesched.apiserver.crd import stored_resources
from kubesched.apiserver.nodes import create_nodes, load_template, make_nodes
from kubesched.apiserver.persist import SqliteStorage
from kubesched.apiserver.priority import system_priority_classes
from kubesched.apiserver.resources import BUILTIN, NAMESPACES, PRIORITYCLASSES
from kubesched.apiserver.server import make_app
from kubesched.apiserver.store import DEFAULT_WINDOW, Store

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


def write_kubeconfig(path: str | os.PathLike[str], url: str, token: str | None = None) -> Path:
    """Write a kubeconfig for ``url`` (one cluster, user and context, all ``kubesched``).

    It is JSON, which every kubeconfig reader accepts as YAML. Returns the path written.
    """
    user: dict[str, str] = {"token": token} if token else {}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubesched", "cluster": {"server": url}}],
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
    target.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return target


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
    #: The node agent running in the server's loop (None with ``agent=False``).
    agent: NodeAgent | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Close every connection and watch, and end the server's thread (and close the
        data file of a store it opened itself)."""
        if not self._thread.is_alive():
            return
        if self.agent is not None:
            asyncio.run_coroutine_threadsafe(self.agent.stop(), self._loop).result(timeout=10)
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


async def start_site(
    store: Store, host: str, port: int, bookmark_interval: float, disruption: bool = True
) -> tuple[web.AppRunner, str]:
    """Start serving ``store`` on host:port in the running loop; return the runner and URL.
    ``disruption``: run the disruption controller (PodDisruptionBudget status)."""
    runner = web.AppRunner(
        make_app(store, bookmark_interval, disruption), access_log=None, shutdown_timeout=2.0
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_port = runner.addresses[0][1]
    return runner, f"http://{host}:{bound_port}"


def add_nodes(
    store: Store, nodes: int = 0, node_template: str | os.PathLike[str] | None = None
) -> int:
    """Create ``nodes`` simulated nodes (:mod:`kubesched.apiserver.nodes`) from
    ``node_template`` (a YAML Node manifest whose name is the prefix; default template
    when None); a template with ``nodes == 0`` makes one node. Nodes that exist are kept.
    Returns how many were created. Raises
    :class:`~kubesched.apiserver.nodes.NodeTemplateError` for an unusable template."""
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
    agent: bool = True,
    run_delay: float = DEFAULT_RUN_DELAY,
    lease_interval: float = DEFAULT_LEASE_INTERVAL,
    disruption: bool | None = None,
) -> ApiServerHandle:
    """Start an API server in a background thread and return once it listens.

    **port**: 0 picks a free one. **kubeconfig_path**: where to write its kubeconfig
    (a temporary file by default). **store**: serve an existing store (default: a fresh
    one with the system namespaces). **bookmark_interval**: seconds between BOOKMARK
    events on watches that allow them. **data**: keep the objects in this SQLite file
    (see :func:`new_store`; not with **store**); the handle closes it on :meth:`stop`.
    **nodes**, **node_template**: simulated nodes to create (see :func:`add_nodes`).
    **agent**: run the node agent (:mod:`kubesched.apiserver.agent`) for simulated nodes;
    **run_delay**: seconds before it marks a bound pod Running; **lease_interval**:
    seconds between node lease renewals. **disruption**: run the disruption controller
    (:mod:`kubesched.apiserver.disruption`: PodDisruptionBudget status); by default it
    runs when the node agent does and has simulated nodes to run (``nodes`` or
    ``node_template``), so that a bare server keeps whatever PDB status a client writes.
    """
    if store is not None and data is not None:
        raise ValueError("start_apiserver: give either store or data, not both")
    owns = store is None
    store = store if store is not None else new_store(data=data)
    try:
        add_nodes(store, nodes, node_template)
    except BaseException:
        if owns:
            store.close()
        raise
    node_agent = NodeAgent(store, run_delay, lease_interval=lease_interval) if agent else None
    if disruption is None:
        disruption = agent and (nodes > 0 or node_template is not None)
    loop = asyncio.new_event_loop()
    sites: list[tuple[web.AppRunner, str]] = []
    failures: list[BaseException] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            sites.append(
                loop.run_until_complete(
                    start_site(store, host, port, bookmark_interval, disruption)
                )
            )
            if node_agent is not None:
                loop.run_until_complete(_start_agent(node_agent))
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
    path = write_kubeconfig(kubeconfig_path, url)
    return ApiServerHandle(url, path, store, loop, runner, thread, owns, node_agent)


async def _start_agent(agent: NodeAgent) -> None:
    agent.start()
