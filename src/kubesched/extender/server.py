"""The extender HTTP server: kube-scheduler's extender protocol over aiohttp.

kube-scheduler POSTs ``<urlPrefix>/<verb>`` with a JSON body and reads a JSON answer;
any status but 200 fails the call. Paths served, under an optional prefix:

* ``POST /filter``, ``/prioritize``, ``/bind``, ``/preempt`` — the verbs the backend
  serves (others answer 404 saying so);
* ``GET /healthz`` — ``ok`` while the server runs (the liveness probe);
* ``GET /readyz`` — ``ok`` once the server can answer: with a node and pod cache, only
  after its informers synced, 503 before (the readiness probe, and the deploy order:
  point kube-scheduler at the extender only once this answers);
* ``GET /metrics`` — Prometheus text: requests and latency per verb.

A request that is not the protocol's JSON, or lacks the Pod, gets a 400 whose body says
what was wrong and where (for filter and bind, the answer type with its ``Error`` set,
so that kube-scheduler's event shows it too); a plugin fault gets a 500. Either way the
server keeps serving.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from kubesched.extender import types as t
from kubesched.extender.backend import VERBS, ExtenderBackend, NoNodeCache
from kubesched.extender.errors import BadRequest, WireError
from kubesched.extender.metrics import CONTENT_TYPE, ExtenderMetrics

log = logging.getLogger(__name__)

#: kube-scheduler sends every candidate node in full: 1,000 nodes with their images make
#: several MiB, far over aiohttp's 1 MiB default.
MAX_REQUEST_BYTES = 256 * 1024 * 1024

_JSON = "application/json"

Answer = tuple[int, bytes, str]


async def _filter(backend: ExtenderBackend, body: object) -> bytes:
    args = t.decode_extender_args(body)
    return t.encode_filter_result(await backend.filter(args))


async def _prioritize(backend: ExtenderBackend, body: object) -> bytes:
    args = t.decode_extender_args(body)
    return t.encode_host_priority_list(await backend.prioritize(args))


async def _bind(backend: ExtenderBackend, body: object) -> bytes:
    args = t.decode_binding_args(body)
    return t.encode_binding_result(await backend.bind(args))


async def _preempt(backend: ExtenderBackend, body: object) -> bytes:
    args = t.decode_preemption_args(body)
    return t.encode_preemption_result(await backend.preempt(args))


_HANDLERS: dict[str, Callable[[ExtenderBackend, object], Awaitable[bytes]]] = {
    "filter": _filter,
    "prioritize": _prioritize,
    "bind": _bind,
    "preempt": _preempt,
}


def _error_answer(verb: str, status: int, message: str) -> Answer:
    """``message`` in the body of the verb's answer type when it has an Error field."""
    if verb == "filter":
        return status, t.encode_filter_result(t.filter_result(error=message)), _JSON
    if verb == "bind":
        return status, t.encode_binding_result(t.ExtenderBindingResult(Error=message)), _JSON
    return status, message.encode("utf-8"), "text/plain"


class ExtenderServer:
    """Serves a backend's verbs over HTTP, with health and metrics endpoints."""

    def __init__(
        self,
        backend: ExtenderBackend,
        *,
        prefix: str = "",
        metrics: ExtenderMetrics | None = None,
        ready: Callable[[], bool] | None = None,
    ) -> None:
        self.backend = backend
        #: Whether the backend can answer yet (None: as soon as the server runs).
        self.ready = ready
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.metrics = metrics or ExtenderMetrics()

    def app(self) -> web.Application:
        """A new aiohttp application serving this server's paths."""
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        for verb in VERBS:
            app.router.add_post(f"{self.prefix}/{verb}", self._verb_handler(verb))
        app.router.add_get(f"{self.prefix}/healthz", self._healthz)
        app.router.add_get(f"{self.prefix}/readyz", self._readyz)
        app.router.add_get(f"{self.prefix}/metrics", self._metrics)
        return app

    def _verb_handler(self, verb: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            start = time.perf_counter()
            status, body, content_type = await self._answer(verb, request)
            self.metrics.observe(verb, status, time.perf_counter() - start)
            return web.Response(status=status, body=body, content_type=content_type)

        return handle

    async def _answer(self, verb: str, request: web.Request) -> Answer:
        if verb not in self.backend.verbs:
            message = (
                f"this extender does not serve the {verb} verb; remove {verb}Verb from "
                "kube-scheduler's extender configuration"
            )
            return 404, message.encode("utf-8"), "text/plain"
        try:
            raw = await request.read()
            body = t.loads(raw, f"{verb} request")
            return 200, await _HANDLERS[verb](self.backend, body), _JSON
        except web.HTTPException:
            raise
        except (WireError, BadRequest) as err:
            return _error_answer(verb, 400, f"bad {verb} request: {err}")
        except NoNodeCache as err:
            # Where the answer has an Error field, a 200 carrying it lets kube-scheduler
            # show the reason; a non-200 would show only the status code.
            return _error_answer(verb, 200 if verb in ("filter", "bind") else err.status, str(err))
        except Exception as err:
            log.exception("extender %s failed", verb)
            return _error_answer(verb, 500, f"{verb} failed: {type(err).__name__}: {err}")

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self.ready is not None and not self.ready():
            return web.Response(status=503, text="not ready: the node and pod cache has not synced")
        return web.Response(text="ok")

    async def _metrics(self, request: web.Request) -> web.Response:
        response = web.Response(text=self.metrics.render())
        response.headers["Content-Type"] = CONTENT_TYPE
        return response

    async def start(
        self, host: str = "0.0.0.0", port: int = 8888, ssl_context: ssl.SSLContext | None = None
    ) -> tuple[web.AppRunner, int]:
        """Start serving in the running loop; returns the runner (``await
        runner.cleanup()`` to stop) and the bound port (useful with ``port=0``)."""
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
        await site.start()
        address: Any = runner.addresses[0]
        return runner, int(address[1])

    def run(
        self, host: str = "0.0.0.0", port: int = 8888, ssl_context: ssl.SSLContext | None = None
    ) -> None:
        """Serve until interrupted (blocking)."""
        web.run_app(
            self.app(), host=host, port=port, ssl_context=ssl_context, print=None, access_log=None
        )
