"""The errors of ``kubesched.kube``: one hierarchy for everything that can go wrong
between us and an API server.

Whatever the HTTP library raises is translated at the boundary (:func:`translate`), with
the original chained as ``__cause__``; no aiohttp exception leaves this package. An
answer other than 2xx becomes the :class:`ApiError` subclass of its HTTP status, carrying
the Kubernetes ``Status`` body the server sent::

    KubeError
    ├── ConfigError               a kubeconfig / in-cluster setting is wrong (file, field)
    ├── CredentialError           an exec credential plugin failed or answered nonsense
    ├── ApiError                  the server answered with a failure Status
    │   ├── BadRequest            400
    │   ├── Unauthorized          401
    │   ├── Forbidden             403
    │   ├── NotFound              404
    │   ├── Conflict              409
    │   │   └── AlreadyExists     409, reason AlreadyExists
    │   ├── Gone                  410 (reason Expired: relist)
    │   ├── Invalid               422
    │   ├── TooManyRequests       429
    │   └── ServerError           5xx
    └── TransportError            no usable answer
        ├── ConnectionFailed      could not connect, or the connection broke
        ├── Timeout               no answer in time
        └── ProtocolError         an answer that is not Kubernetes JSON
"""

from __future__ import annotations

import asyncio
from typing import Any, NotRequired, TypedDict

import aiohttp

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "ConfigError",
    "Conflict",
    "ConnectionFailed",
    "CredentialError",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeError",
    "NotFound",
    "ProtocolError",
    "RawStatus",
    "ServerError",
    "Timeout",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "error_for_status",
    "translate",
]


class RawStatusCause(TypedDict, total=False):
    """One cause in ``Status.details.causes``."""

    reason: str
    message: str
    field: str


class RawStatusDetails(TypedDict, total=False):
    """``Status.details``: which object, and the field-level causes."""

    name: str
    group: str
    kind: str
    uid: str
    causes: list[RawStatusCause]
    retryAfterSeconds: int


class RawStatus(TypedDict):
    """A meta/v1 Status body, as the API server sends it."""

    kind: NotRequired[str]
    apiVersion: NotRequired[str]
    metadata: NotRequired[dict[str, Any]]
    status: NotRequired[str]
    message: NotRequired[str]
    reason: NotRequired[str]
    details: NotRequired[RawStatusDetails]
    code: NotRequired[int]


class KubeError(Exception):
    """Base of every error this package raises."""


class ConfigError(KubeError):
    """A connection setting is missing or wrong; says which file and which field."""

    def __init__(self, source: str, field: str, message: str) -> None:
        super().__init__(f"{source}: {field}: {message}" if field else f"{source}: {message}")
        self.source = source
        self.field = field
        self.message = message


class CredentialError(KubeError):
    """An exec credential plugin could not be run, failed, or printed no usable credential."""


class ApiError(KubeError):
    """The API server answered with a failure; ``status`` is its Status body.

    ``retry_after``: seconds the server asked us to wait before trying again (its
    ``Retry-After`` header or ``details.retryAfterSeconds``), None if it did not say.
    """

    def __init__(
        self,
        code: int,
        status: RawStatus,
        method: str = "",
        url: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.code = code
        self.status = status
        self.reason: str = status.get("reason", "") or ""
        self.message: str = status.get("message", "") or ""
        self.details: RawStatusDetails = status.get("details", {}) or {}
        self.method = method
        self.url = url
        seconds = self.details.get("retryAfterSeconds")
        if retry_after is None and isinstance(seconds, int):
            retry_after = float(seconds)
        self.retry_after = retry_after
        where = f" ({method} {url})" if method else ""
        super().__init__(f"{code} {self.reason or 'Failure'}: {self.message}{where}")


class BadRequest(ApiError):
    """400: the request itself is malformed."""


class Unauthorized(ApiError):
    """401: the credentials were refused (expired token, wrong certificate)."""


class Forbidden(ApiError):
    """403: authenticated, but RBAC does not allow this verb on this resource."""


class NotFound(ApiError):
    """404: the object (or the resource, or its namespace) does not exist."""


class Conflict(ApiError):
    """409: a stale resourceVersion, or an operation the object's state refuses."""


class AlreadyExists(Conflict):
    """409 with reason AlreadyExists: create of a name that is taken."""


class Gone(ApiError):
    """410: the resourceVersion (or continue token) is older than the server keeps; relist."""


class Invalid(ApiError):
    """422: the object failed validation; ``details['causes']`` names the fields."""


class TooManyRequests(ApiError):
    """429: the server (or API priority and fairness) asks us to slow down."""


class ServerError(ApiError):
    """5xx: the server failed; usually worth retrying later."""


class TransportError(KubeError):
    """No usable answer came back; ``__cause__`` is the transport's own exception."""


class ConnectionFailed(TransportError):
    """The connection could not be made, or broke before the answer was complete."""


class Timeout(TransportError):
    """The server did not answer in time."""


class ProtocolError(TransportError):
    """The server answered, but not with the JSON the Kubernetes API speaks."""


_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def error_for_status(
    code: int, body: object, method: str = "", url: str = "", retry_after: float | None = None
) -> ApiError:
    """The :class:`ApiError` for an HTTP failure ``code`` whose decoded body is ``body``.

    A body that is not a Status (a proxy's HTML page) becomes a synthetic one with the
    text as its message, so that every ApiError has a Status to show.
    """
    if isinstance(body, dict) and body.get("kind") == "Status":
        status: RawStatus = body  # type: ignore[assignment]
    else:
        text = body if isinstance(body, str) else ""
        status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code}
        status["message"] = text.strip()[:500] or f"the server answered HTTP {code}"
    if code == 409 and status.get("reason") == "AlreadyExists":
        cls: type[ApiError] = AlreadyExists
    elif code >= 500:
        cls = ServerError
    else:
        cls = _BY_CODE.get(code, ApiError)
    return cls(code, status, method, url, retry_after)


def translate(exc: BaseException, what: str) -> KubeError:
    """The :class:`TransportError` for an exception of the HTTP library (or a timeout).

    ``what`` says what we were doing (``GET https://…/pods``). The caller raises the
    result ``from exc`` so that the original stays reachable as ``__cause__``.
    """
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return Timeout(f"{what}: no answer in time")
    if isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError | OSError):
        return ConnectionFailed(f"{what}: {exc or type(exc).__name__}")
    if isinstance(exc, ValueError):
        return ProtocolError(f"{what}: {exc}")
    return TransportError(f"{what}: {exc or type(exc).__name__}")
