"""``/healthz``, ``/livez`` and ``/readyz``: the health endpoints kube-apiserver serves.

Plain ``ok`` (``text/plain``); with ``?verbose`` one ``[+]<check> ok`` line per check and
``<endpoint> check passed``, as upstream prints them; ``/<endpoint>/<check>`` asks one
check. The only check of this server is ``ping``: it is up when it answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

__all__ = ["ENDPOINTS", "add_routes"]

ENDPOINTS = ("healthz", "livez", "readyz")
CHECKS = ("ping",)


def _handler(endpoint: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def health(request: web.Request) -> web.Response:
        check = request.match_info.get("check")
        if check is not None and check not in CHECKS:
            raise web.HTTPNotFound(text="404 page not found\n")
        if "verbose" in request.query and check is None:
            lines = [f"[+]{name} ok" for name in CHECKS]
            text = "\n".join([*lines, f"{endpoint} check passed"]) + "\n"
        else:
            text = "ok"
        return web.Response(
            text=text, content_type="text/plain", headers={"X-Content-Type-Options": "nosniff"}
        )

    return health


def add_routes(app: web.Application) -> None:
    """Serve the health endpoints on ``app`` (before its catch-all route)."""
    for endpoint in ENDPOINTS:
        handler = _handler(endpoint)
        app.router.add_get(f"/{endpoint}", handler)
        app.router.add_get(f"/{endpoint}/{{check}}", handler)
