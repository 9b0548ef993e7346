"""Bearer-token authentication of the API server's requests (``--token``).

It answers as kube-apiserver does with a static token authenticator and anonymous
requests allowed only where its default RBAC lets ``system:anonymous`` in
(``system:public-info-viewer``: ``/healthz``, ``/livez``, ``/readyz``, ``/version``):

- ``Authorization: Bearer <token>`` with the right token: the request goes through;
- a bearer token that is not the right one: 401, on every path, health checks included
  (upstream's union authenticator fails on a token it cannot verify before it would try
  anonymous);
- no bearer token (no header, another scheme, an empty token): the request is
  ``system:anonymous``'s. The public paths are served; everything else gets the 403 that
  RBAC gives an anonymous user, with the request's attributes read from the path as
  upstream's ``RequestInfoFactory`` reads them (verb, resource, subresource, namespace,
  name), e.g. ``pods is forbidden: User "system:anonymous" cannot list resource "pods" in
  API group "" in the namespace "default"``.

The 401 is kube-apiserver's Status word for word: reason and message ``Unauthorized``.
Tokens are compared in constant time. A valid token grants everything: there is one user
and no authorization beyond this.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from kubesched.apiserver import errors

__all__ = [
    "ADMIN_USER",
    "ANONYMOUS",
    "ANONYMOUS_USER",
    "PUBLIC_PATHS",
    "USER_KEY",
    "RequestAttributes",
    "UserInfo",
    "bearer_token",
    "forbidden_status",
    "request_attributes",
    "token_middleware",
    "unauthorized_status",
]

#: The user name upstream's anonymous authenticator gives a request without credentials.
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class UserInfo:
    """Who made a request, as an authenticator says (upstream's ``user.Info``)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()


#: The user of a request carrying the server's token: it may do anything.
ADMIN_USER = UserInfo("kubesched-admin", groups=("system:masters", "system:authenticated"))
#: The user of a request without credentials (the only user when there is no token).
ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=("system:unauthenticated",))
#: Where the middleware leaves the request's :class:`UserInfo`.
USER_KEY = web.RequestKey("user", UserInfo)

#: Paths anyone may read without credentials (system:public-info-viewer's nonResourceURLs).
PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


def unauthorized_status() -> dict[str, object]:
    """The body of kube-apiserver's 401 (``apierrors.NewUnauthorized("Unauthorized")``)."""
    return dict(errors.failure(401, "Unauthorized", "Unauthorized").status)


@dataclass(frozen=True)
class RequestAttributes:
    """What an authorizer sees of a request (upstream's ``authorizer.Attributes``)."""

    verb: str
    path: str
    resource_request: bool = False
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""


#: Verbs that come first in a path (``/api/v1/watch/pods``); upstream's specialVerbs.
_PATH_VERBS = frozenset({"proxy", "watch"})
#: Method → verb of a resource request before list/watch/deletecollection are told apart.
_METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> RequestAttributes:
    """Read a request's attributes as upstream's ``RequestInfoFactory.NewRequestInfo``
    does: ``/api/{version}/...`` and ``/apis/{group}/{version}/...`` are resource requests,
    anything shorter or elsewhere is a non-resource request whose verb is the method."""
    parts = [p for p in path.split("/") if p]
    plain = RequestAttributes(verb=method.lower(), path=path)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return plain
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(parts) < 3:
            return plain
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    if parts[0] in _PATH_VERBS:
        if len(parts) < 2:
            return plain
        verb, parts = parts[0], parts[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        # /namespaces/{ns}/status and /finalize are the namespace's own subresources.
        if len(parts) > 2 and parts[2] not in ("status", "finalize"):
            parts = parts[2:]
    resource = parts[0]
    name = parts[1] if len(parts) > 1 else ""
    subresource = parts[2] if len(parts) > 2 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "").lower() in ("true", "1") else "list"
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestAttributes(
        verb, path, True, group, version, namespace, resource, subresource, name
    )


def forbidden_status(user: str, attrs: RequestAttributes) -> dict[str, object]:
    """The body of kube-apiserver's 403 when the authorizer denies ``user`` the request
    (``responsewriters.Forbidden`` with an RBAC denial, which gives no reason)."""
    if not attrs.resource_request:
        denial = f"User {_quote(user)} cannot {attrs.verb} path {_quote(attrs.path)}"
        return dict(errors.forbidden("", "", denial).status)
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    scope = (
        f"in the namespace {_quote(attrs.namespace)}" if attrs.namespace else "at the cluster scope"
    )
    denial = (
        f"User {_quote(user)} cannot {attrs.verb} resource {_quote(resource)} "
        f"in API group {_quote(attrs.group)} {scope}"
    )
    return dict(errors.forbidden(attrs.resource, attrs.name, denial, attrs.group).status)


def _quote(text: str) -> str:
    """Go's ``%q`` for the names that reach these messages (JSON escaping agrees with it
    for printable text)."""
    return json.dumps(text, ensure_ascii=False)


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
            if not hmac.compare_digest(given.encode(), expected):
                return web.Response(status=401, body=refusal, content_type="application/json")
            request[USER_KEY] = ADMIN_USER
        elif request.path not in PUBLIC_PATHS:
            attrs = request_attributes(request.method, request.path, request.query)
            body = json.dumps(forbidden_status(ANONYMOUS, attrs), separators=(",", ":"))
            return web.Response(status=403, text=body, content_type="application/json")
        return await handler(request)

    return authenticate
