"""Bearer-token authentication of the API server's requests (``--token``).

It answers as kube-apiserver does with a static token authenticator and anonymous
requests allowed only where its default RBAC lets ``system:anonymous`` in
(``system:public-info-viewer``: ``/healthz``, ``/livez``, ``/readyz``, ``/version``):

- ``Authorization: Bearer <token>`` with the right token: the request goes through;
- a bearer token that is not the right one: 401, on every path, health checks included
  (upstream's union authenticator fails on a token it cannot verify before it would try
  anonymous);
- no bearer token (no header, another scheme, an empty token): the public paths are
  served, everything else is 401.

The 401 is kube-apiserver's Status word for word: reason and message ``Unauthorized``.
Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
import json

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

__all__ = ["PUBLIC_PATHS", "bearer_token", "token_middleware", "unauthorized_status"]

#: Paths anyone may read without credentials (system:public-info-viewer's nonResourceURLs).
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


def unauthorized_status() -> dict[str, object]:
    """The body of kube-apiserver's 401 (``apierrors.NewUnauthorized("Unauthorized")``)."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, as upstream's bearertoken
    authenticator reads it (scheme case-insensitive, one space); None when there is none."""
    value = (header or "").strip()
    parts = value.split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def token_middleware(token: str) -> Middleware:
    """An aiohttp middleware that lets through only requests carrying ``token`` (see the
    module docstring for the public paths)."""
    if not token:
        raise ValueError("the API server token must not be empty")
    expected = token.encode()
    refusal = json.dumps(unauthorized_status(), separators=(",", ":")).encode()

    @web.middleware
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = bearer_token(request.headers.get("Authorization"))
        if given is not None:
            allowed = hmac.compare_digest(given.encode(), expected)
        else:
            allowed = request.path in PUBLIC_PATHS
        if not allowed:
            return web.Response(status=401, body=refusal, content_type="application/json")
        return await handler(request)

    return authenticate
