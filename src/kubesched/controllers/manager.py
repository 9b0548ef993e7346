"""The controller manager: start named controllers against one API server, sharing informers.

kube-controller-manager's shape (``cmd/kube-controller-manager/app``): each controller is
a :class:`ControllerDescriptor` — its name (upstream's, e.g. ``disruption-controller``),
an init function and the resources it needs served. :class:`ControllerManager` builds a
:class:`ControllerContext` (one :class:`~kubesched.kube.informers.SharedInformerFactory`,
a client per controller, the options), calls every enabled init function (which asks the
factory for informers and adds its handlers), starts the informers, waits for them to
sync, and only then runs each controller's :meth:`Controller.run` in a task of its own,
as ``StartControllers`` does after ``WaitForCacheSync``.

To add a controller: write its module with an init function
``def start_x(ctx: ControllerContext) -> Controller | None`` and add a descriptor to
:data:`kubesched.controllers.registry.CONTROLLERS`.

Each controller gets its own :class:`~kubesched.kube.Client` (user agent
``kubesched-controller-manager/<name>``, its own token bucket of ``qps``/``burst``), as
upstream's ``ClientBuilder.ClientOrDie(name)`` gives each controller its own rate limiter;
the informers share another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubesched.controllers.crds import install_crds
from kubesched.controllers.options import ControllerOptions
from kubesched.kube import Client, ConnectionConfig, NotFound
from kubesched.kube.informers import SharedInformerFactory
from kubesched.kube.resources import Resource

__all__ = [
    "DEFAULT_BURST",
    "DEFAULT_QPS",
    "Controller",
    "ControllerContext",
    "ControllerDescriptor",
    "ControllerManager",
    "InitFunc",
    "is_enabled",
]

log = logging.getLogger(__name__)

#: Client QPS and burst of each controller's client. kube-controller-manager's defaults
#: (20/30) would hold the kubelet's one status write per pod to 20 pods/s; issue 13 asks
#: for 500 pods/s end to end, so each client may do twice that before its bucket, not the
#: server, is the bound.
DEFAULT_QPS = 1000.0
DEFAULT_BURST = 2000


class Controller(Protocol):
    """A started controller."""

    async def run(self) -> None:
        """Do the controller's work until cancelled. Called once, after every informer
        has synced; cancellation is how it stops (clean up in ``finally``)."""


@dataclass
class ControllerContext:
    """What an init function builds its controller from."""

    #: The shared informers: ``ctx.informers.informer(PODS)``; add handlers at init.
    informers: SharedInformerFactory
    options: ControllerOptions
    _new_client: Callable[[str], Client] = field(repr=False)
    _clients: list[Client] = field(default_factory=list, repr=False)
    #: group-version -> the plurals its discovery lists (None: not served), for the
    #: ``requires`` and ``optional`` resources of the enabled controllers.
    _served: dict[str, set[str] | None] = field(default_factory=dict, repr=False)

    def serves(self, resource: Resource[Any]) -> bool:
        """Whether the server serves ``resource`` (answered for the resources that some
        enabled controller ``requires`` or lists as ``optional``; False for others)."""
        names = self._served.get(resource.group_version)
        return names is not None and resource.plural in names

    def client(self, name: str) -> Client:
        """A client of its own for the controller ``name`` (closed with the manager)."""
        made = self._new_client(name)
        self._clients.append(made)
        return made


#: ``init(ctx)`` returns the controller, or None when its options switch it off.
InitFunc = Callable[[ControllerContext], "Controller | None"]


@dataclass(frozen=True)
class ControllerDescriptor:
    """A controller the manager can start: its name, its init function, and the
    resources the server must serve for it (it is skipped, with a log line, if one is
    not served, as upstream skips controllers whose resources are unavailable)."""

    name: str
    init: InitFunc
    requires: tuple[Resource[Any], ...] = ()
    #: Resources the controller uses when they are served (it asks ``ctx.serves``).
    optional: tuple[Resource[Any], ...] = ()
    #: The CustomResourceDefinitions that serve the controller's resources, installed
    #: (when missing and ``options.install_crds``) before ``requires`` is checked.
    crds: Callable[[], list[dict[str, Any]]] | None = None


def is_enabled(name: str, selection: Collection[str]) -> bool:
    """Whether ``--controllers`` ``selection`` enables ``name``: ``foo`` on, ``-foo``
    off, ``*`` every controller not named ``-`` (kube-controller-manager's rule)."""
    if name in selection:
        return True
    if f"-{name}" in selection:
        return False
    return "*" in selection


class ControllerManager:
    """Runs the enabled ``descriptors`` against the server of ``connection``.

    **selection**: the ``--controllers`` list (``*``, ``name``, ``-name``).
    **qps**/**burst**: each controller client's token bucket.
    """

    def __init__(
        self,
        connection: ConnectionConfig,
        descriptors: Sequence[ControllerDescriptor],
        options: ControllerOptions | None = None,
        selection: Collection[str] = ("*",),
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
    ) -> None:
        names = [d.name for d in descriptors]
        unknown = [s.lstrip("-") for s in selection if s != "*" and s.lstrip("-") not in names]
        if unknown:
            raise ValueError(
                f"--controllers: unknown controller(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(names))}"
            )
        self.connection = connection
        self.descriptors = list(descriptors)
        self.options = options or ControllerOptions()
        self.selection = tuple(selection)
        self.qps = qps
        self.burst = burst
        #: name -> controller, for every controller started.
        self.controllers: dict[str, Controller] = {}
        self._informer_client: Client | None = None
        self._context: ControllerContext | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def _client(self, name: str) -> Client:
        agent = f"kubesched-controller-manager/{name}"
        return Client(self.connection, qps=self.qps, burst=self.burst, user_agent=agent)

    async def start(self, sync_timeout: float | None = 60.0) -> None:
        """Init the enabled controllers, sync their informers, then run them (returns
        once they run). Raises TimeoutError if the informers do not sync in time."""
        self._informer_client = self._client("shared-informers")
        informers = SharedInformerFactory(self._informer_client)
        served: dict[str, set[str] | None] = {}
        ctx = ControllerContext(informers, self.options, self._client, _served=served)
        self._context = ctx
        installed: set[str] = set()
        try:
            for descriptor in self.descriptors:
                if not is_enabled(descriptor.name, self.selection):
                    continue
                if descriptor.crds is not None and self.options.install_crds:
                    await _install(self._informer_client, descriptor, installed, served)
                for resource in descriptor.optional:
                    await _serves(self._informer_client, resource, served)
                missing = [
                    str(r)
                    for r in descriptor.requires
                    if not await _serves(self._informer_client, r, served)
                ]
                if missing:
                    log.info("%s not started: %s not served", descriptor.name, ", ".join(missing))
                    continue
                controller = descriptor.init(ctx)
                if controller is not None:
                    self.controllers[descriptor.name] = controller
            informers.start()
            await informers.wait_for_sync(sync_timeout)
        except BaseException:
            await self.stop()
            raise
        for name, controller in self.controllers.items():
            task = asyncio.create_task(_run(name, controller), name=f"controller {name}")
            self._tasks.append(task)
        if self.controllers:
            log.info("controllers started: %s", ", ".join(sorted(self.controllers)))

    async def stop(self) -> None:
        """Stop every controller, then the informers, and close the clients."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        if self._context is not None:
            await self._context.informers.stop()
            for made in self._context._clients:
                await made.close()
            self._context = None
        if self._informer_client is not None:
            await self._informer_client.close()
            self._informer_client = None

    async def __aenter__(self) -> ControllerManager:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _run(name: str, controller: Controller) -> None:
    try:
        await controller.run()
    except asyncio.CancelledError:
        raise
    except Exception:  # a bug: say so; the other controllers keep running
        log.exception("controller %s stopped with an error", name)


async def _install(
    client: Client,
    descriptor: ControllerDescriptor,
    installed: set[str],
    served: dict[str, set[str] | None],
) -> None:
    """Install the CRDs of ``descriptor`` not installed yet by this start."""
    assert descriptor.crds is not None
    crds = [c for c in descriptor.crds() if c["metadata"]["name"] not in installed]
    if not crds:
        return
    await install_crds(client, crds, who=descriptor.name)
    for crd in crds:
        installed.add(crd["metadata"]["name"])
        for version in crd["spec"]["versions"]:
            # Discovery answered before the install is stale now.
            served.pop(f"{crd['spec']['group']}/{version['name']}", None)


async def _serves(
    client: Client, resource: Resource[Any], seen: dict[str, set[str] | None]
) -> bool:
    """Whether the server serves ``resource`` (its group-version's discovery lists it)."""
    group_version = resource.group_version
    if group_version not in seen:
        path = f"/apis/{group_version}" if resource.group else f"/api/{resource.version}"
        try:
            body = await client.request("GET", path)
        except NotFound:
            seen[group_version] = None
        else:
            entries = body.get("resources") if isinstance(body, dict) else None
            seen[group_version] = {str(e.get("name")) for e in entries or () if isinstance(e, dict)}
    names = seen[group_version]
    return names is not None and resource.plural in names
