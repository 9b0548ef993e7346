"""``/healthz``, ``/readyz`` and ``/metrics`` of a running scheduler (aiohttp).

Upstream serves these on the secure port 10259 over HTTPS with delegated authn/authz;
kubesched serves them on the same port number over **plain HTTP** without authentication
(put it behind a network policy, or bind it to 127.0.0.1 with ``--bind-address``).

- ``/healthz``: 200 ``ok`` while the scheduler's run loop is alive (started, not stopped)
  and, with leader election, the leader election check passes (client-go's
  ``HealthzAdaptor``, which kube-scheduler wires with a 20 s tolerance: it fails only for a
  replica that believes it leads but has not renewed for leaseDuration + 20 s, a stuck
  renewal loop that should have made it step down); else 503 naming the failed check.
- ``/readyz``: 200 ``ok`` once every informer has synced (upstream's ``sched-handler-sync``
  check) and the leader election check passes, **whether or not this replica leads**: a
  standby replica is ready, as upstream's watchdog passes for non-leaders. 503 before the
  sync and after stop.
- ``/metrics``: the Prometheus text exposition of :mod:`kubesched.scheduler.metrics`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from kubesched.scheduler.metrics import CONTENT_TYPE

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

__all__ = ["DEFAULT_BIND_ADDRESS", "DEFAULT_PORT", "Endpoints", "EndpointsError", "make_app"]

#: kube-scheduler's secure port number (served here as plain HTTP).
DEFAULT_PORT = 10259
DEFAULT_BIND_ADDRESS = "0.0.0.0"


class EndpointsError(Exception):
    """The endpoints could not be served (address in use, bad address)."""


def make_app(scheduler: Scheduler) -> web.Application:
    """The aiohttp application serving ``scheduler``'s endpoints."""

    async def healthz(_: web.Request) -> web.Response:
        if not scheduler.alive:
            return web.Response(status=503, text="scheduler loop not running")
        problems = scheduler.health_problems()
        if problems:
            return web.Response(status=503, text="\n".join(problems))
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        if not (scheduler.alive and scheduler.synced):
            return web.Response(status=503, text="informers not synced")
        problems = scheduler.health_problems()
        if problems:
            return web.Response(status=503, text="\n".join(problems))
        return web.Response(text="ok")

    async def metrics(_: web.Request) -> web.Response:
        body = scheduler.metrics.render().encode()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


class Endpoints:
    """Serves :func:`make_app` on ``host:port`` (port 0: any free port, see :attr:`port`)."""

    def __init__(
        self, scheduler: Scheduler, host: str = DEFAULT_BIND_ADDRESS, port: int = DEFAULT_PORT
    ) -> None:
        self.scheduler = scheduler
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self._runner = web.AppRunner(make_app(self.scheduler), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError as err:
            await self.stop()
            raise EndpointsError(f"cannot serve on {self.host}:{self.port}: {err}") from err
        if self.port == 0:
            address = self._runner.addresses[0]  # the bound port of an ephemeral bind
            self.port = int(address[1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Endpoints:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()
