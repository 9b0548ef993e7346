"""A small cluster in-process: the embedded API server plus the controllers beside it.

:func:`start_cluster` is what tests, the demo and benchmarks use when they want a
cluster that behaves like one (pods on simulated nodes run and finish, PDB status is kept,
...): it starts :func:`kubesched.apiserver.runner.start_apiserver` (a bare server, in its
own thread) and a :class:`~kubesched.controllers.ControllerManager` in a second thread
with its own event loop, a client over HTTP of that server like any other — as
``kubesched apiserver --nodes N`` composes them in one process. The handle's
:meth:`ClusterHandle.stop` stops the controllers, then the server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.apiserver.store import Store
from kubesched.controllers import (
    CONTROLLERS,
    DEFAULT_BURST,
    DEFAULT_QPS,
    ControllerDescriptor,
    ControllerManager,
    ControllerOptions,
)
from kubesched.kube import load_kubeconfig

__all__ = ["ClusterHandle", "ControllersHandle", "start_cluster", "start_controllers"]


@dataclass
class ControllersHandle:
    """Controllers running in a thread of their own; :meth:`stop` them."""

    manager: ControllerManager
    _loop: asyncio.AbstractEventLoop = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop every controller and end the thread."""
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self.manager.stop(), self._loop)
        future.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def start_controllers(
    kubeconfig: str | os.PathLike[str],
    options: ControllerOptions | None = None,
    selection: Collection[str] = ("*",),
    descriptors: Sequence[ControllerDescriptor] = CONTROLLERS,
    qps: float = DEFAULT_QPS,
    burst: int = DEFAULT_BURST,
) -> ControllersHandle:
    """Run the controllers against the server of ``kubeconfig`` in a background thread;
    return once their informers have synced."""
    manager = ControllerManager(
        load_kubeconfig([kubeconfig]), descriptors, options, selection, qps, burst
    )
    loop = asyncio.new_event_loop()
    failures: list[BaseException] = []
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(manager.start())
        except BaseException as exc:  # reported to the caller below
            failures.append(exc)
            started.set()
            loop.close()
            return
        started.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name="kubesched-controllers", daemon=True)
    thread.start()
    started.wait()
    if failures:
        raise RuntimeError("the controllers could not start") from failures[0]
    return ControllersHandle(manager, loop, thread)


@dataclass
class ClusterHandle:
    """A running API server with controllers beside it."""

    server: ApiServerHandle
    controllers: ControllersHandle | None

    @property
    def url(self) -> str:
        """The server's URL."""
        return self.server.url

    @property
    def kubeconfig_path(self) -> Path:
        """The server's kubeconfig (kubectl, the ``kubernetes`` client, ``kube``)."""
        return self.server.kubeconfig_path

    @property
    def store(self) -> Store:
        """The server's store (for tests that look under the hood)."""
        return self.server.store

    def stop(self) -> None:
        """Stop the controllers, then the server."""
        if self.controllers is not None:
            self.controllers.stop()
        self.server.stop()

    def __enter__(self) -> ClusterHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_cluster(
    nodes: int = 0,
    node_template: str | os.PathLike[str] | None = None,
    options: ControllerOptions | None = None,
    controllers: Collection[str] = ("*",),
    qps: float = DEFAULT_QPS,
    burst: int = DEFAULT_BURST,
    kubeconfig_path: str | os.PathLike[str] | None = None,
    bookmark_interval: float = 10.0,
    data: str | os.PathLike[str] | None = None,
    token: str = "",
    tls: bool = False,
    faults: str | None = None,
    **option_values: Any,
) -> ClusterHandle:
    """Start an API server with ``nodes`` simulated nodes (see
    :func:`~kubesched.apiserver.runner.start_apiserver`) and the ``controllers``
    (``--controllers`` syntax: ``*``, ``name``, ``-name``; empty: none) beside it.

    **options**: the controllers' settings; keywords named after
    :class:`~kubesched.controllers.ControllerOptions` fields override single ones
    (``start_cluster(nodes=3, run_delay=0.1, node_lease_interval=0)``). **faults**: a
    fault SPEC for the server (:mod:`kubesched.apiserver.faults`); the controllers are its
    clients and meet the faults too.
    """
    settings = dataclasses.replace(options or ControllerOptions(), **option_values)
    server = start_apiserver(
        kubeconfig_path=kubeconfig_path,
        bookmark_interval=bookmark_interval,
        data=data,
        nodes=nodes,
        node_template=node_template,
        token=token,
        tls=tls,
        faults=faults,
    )
    if not controllers:
        return ClusterHandle(server, None)
    try:
        running = start_controllers(
            server.kubeconfig_path, settings, controllers, qps=qps, burst=burst
        )
    except BaseException:
        server.stop()
        raise
    return ClusterHandle(server, running)
