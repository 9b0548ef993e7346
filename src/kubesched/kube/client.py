"""An asyncio REST client for the Kubernetes API, on aiohttp.

:class:`Client` does what the scheduler needs and nothing more: get, list (selectors,
limit/continue), create, update, patch, delete, and watch streams for the informers, plus
the scheduler's writes: :meth:`Client.bind`, :meth:`Client.create_event`,
:meth:`Client.patch_pod_status` and leases. Objects are decoded by the
:class:`~kubesched.kube.resources.Resource` given (compact ``objects`` types or dicts).

Every request waits for the token bucket first (``qps``/``burst``), as client-go does.
:meth:`Client.derive` makes a second client to the same server with a bucket and
connections of its own (client-go's ``NewForConfig`` on a copy of the rest config), so
that one kind of traffic cannot starve another: the scheduler's events and its leader
election each get one. Each client counts its requests by verb, resource and status code
(:attr:`Client.requests`). Failures are :mod:`kubesched.kube.errors`; aiohttp's
exceptions never escape.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import urlencode

import aiohttp

from kubesched.kube.auth import Authenticator
from kubesched.kube.config import ConnectionConfig
from kubesched.kube.errors import (
    ConnectionFailed,
    ProtocolError,
    ServerError,
    TooManyRequests,
    Unauthorized,
    error_for_status,
    translate,
)
from kubesched.kube.http import HttpPool
from kubesched.kube.ratelimit import TokenBucket
from kubesched.kube.requestinfo import request_info
from kubesched.kube.resources import EVENTS, LEASES, PODS, RawObject, Resource

__all__ = ["Client", "ObjectList", "PatchType"]

T = TypeVar("T")
PatchType = Literal["merge", "json", "strategic"]
_PATCH_MEDIA = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
_JSON = "application/json"
#: The longest Retry-After we honour before retrying (client-go caps waits likewise).
MAX_RETRY_AFTER = 10.0
#: The ``code`` of a request that got no HTTP answer (client-go's rest_client metrics).
NO_ANSWER = "<error>"


@dataclass(frozen=True)
class ObjectList(Generic[T]):
    """One list answer: decoded items, the list's resourceVersion, the continue token."""

    items: list[T]
    resource_version: str
    continue_token: str = ""


class Client:
    """A connection to one API server. Use as ``async with Client(config) as client:``.

    **qps**/**burst**: the token bucket (client-go defaults 5/10 are too low for a
    scheduler; kube-scheduler's are 50/100). **timeout**: seconds for a whole request
    (watches have their own, server-side ``timeoutSeconds``). **max_retries**: how
    often a request the server refused with ``Retry-After`` is tried again.
    """

    def __init__(
        self,
        config: ConnectionConfig,
        qps: float = 50.0,
        burst: int = 100,
        timeout: float = 30.0,
        user_agent: str = "kubesched",
        max_retries: int = 3,
    ) -> None:
        self.config = config
        self.auth = Authenticator(config)
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        self.user_agent = user_agent
        self.max_retries = max_retries
        self._session: aiohttp.ClientSession | None = None
        self._session_lock = asyncio.Lock()
        #: Plain calls go through the lean pool; watches through aiohttp's session.
        self._pool: HttpPool | None = None
        #: Requests sent, by ``(verb, resource, code)``: ``("create", "pods/binding",
        #: "201")``; ``code`` is :data:`NO_ANSWER` when no answer came. Retries count.
        self.requests: Counter[tuple[str, str, str]] = Counter()

    def derive(self, user_agent: str = "", timeout: float | None = None) -> Client:
        """A new client to the same server with the same limits but its own token bucket
        and connections (client-go's ``NewForConfig`` on a copy of the rest config).
        **user_agent**: appended to ours after a ``/`` (``rest.AddUserAgent``);
        **timeout**: its own per-request timeout."""
        return Client(
            self.config,
            qps=self.limiter.qps,
            burst=self.limiter.burst,
            timeout=self.timeout if timeout is None else timeout,
            user_agent=f"{self.user_agent}/{user_agent}" if user_agent else self.user_agent,
            max_retries=self.max_retries,
        )

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every pooled connection."""
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    async def _get_session(self) -> aiohttp.ClientSession:
        async with self._session_lock:
            if self._session is None:
                ssl_context = await self.auth.ssl_context()
                connector = aiohttp.TCPConnector(
                    ssl=ssl_context if ssl_context is not None else False,
                    limit=100,
                )
                self._session = aiohttp.ClientSession(
                    self.config.server,
                    connector=connector,
                    headers={"User-Agent": self.user_agent, "Accept": _JSON},
                )
            return self._session

    async def _get_pool(self) -> HttpPool:
        if self._pool is None:
            ssl_context = await self.auth.ssl_context()
            if self._pool is None:  # another task may have made it meanwhile
                self._pool = HttpPool(self.config.server, ssl_context, self.user_agent)
        return self._pool

    # --- the one place that speaks HTTP ---------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None = None,
        body: object = None,
        content_type: str = _JSON,
    ) -> Any:
        """Send one request and return its decoded JSON; raise the matching error.

        A 401 invalidates cached credentials and retries once (an exec plugin's token
        may have expired early). A 429 or 5xx that carries ``Retry-After`` is retried
        after that delay, up to ``max_retries`` times: the server says it did not act.
        A GET whose connection broke (reset, or closed before the answer; not refused)
        is sent again at once, up to ``max_retries`` times:
        reads are safe to repeat; writes are not (the server may have acted), so their
        callers decide. All as client-go's rest client does (``checkWait``,
        ``IsRetryableError``).
        """
        reauthenticated = False
        retries = 0
        while True:
            try:
                return await self._request_once(method, path, params, body, content_type)
            except Unauthorized:
                renewable = self.config.exec is not None or bool(self.config.token_file)
                if reauthenticated or not renewable:
                    raise
                reauthenticated = True
                self.auth.invalidate()
            except (TooManyRequests, ServerError) as exc:
                if exc.retry_after is None or retries >= self.max_retries:
                    raise
                retries += 1
                await asyncio.sleep(min(exc.retry_after, MAX_RETRY_AFTER))
            except ConnectionFailed as exc:
                if method != "GET" or not _broke(exc) or retries >= self.max_retries:
                    raise
                retries += 1

    async def _request_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: object,
        content_type: str,
    ) -> Any:
        await self.limiter.acquire()
        headers = await self.auth.headers()
        headers["Accept"] = _JSON
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = content_type
        what = f"{method} {self.config.server}{path}"
        target = f"{path}?{urlencode(params)}" if params else path
        verb, resource = request_info(method, path, params)
        try:
            pool = await self._get_pool()
            status, answer_headers, raw = await pool.request(
                method, target, headers, data, self.timeout
            )
        except (TimeoutError, OSError, ValueError) as exc:
            self.requests[verb, resource, NO_ANSWER] += 1
            raise translate(exc, what) from exc
        self.requests[verb, resource, str(status)] += 1
        retry_after = _seconds(answer_headers.get("retry-after"))
        return _decode_answer(status, raw, method, f"{self.config.server}{path}", retry_after)

    async def watch_stream(
        self,
        resource: Resource[Any],
        namespace: str | None = None,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        timeout_seconds: int = 300,
        allow_bookmarks: bool = True,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Raw watch events (``{"type": ..., "object": {...}}``), until the server ends
        the stream. An HTTP failure raises its ApiError (410 Gone included); an ERROR
        event is yielded as is, for the informer to judge."""
        params = {"watch": "true", "timeoutSeconds": str(timeout_seconds)}
        if resource_version:
            params["resourceVersion"] = resource_version
        if allow_bookmarks:
            params["allowWatchBookmarks"] = "true"
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        path = resource.path(namespace)
        what = f"WATCH {self.config.server}{path}"
        await self.limiter.acquire()
        headers = await self.auth.headers()
        session = await self._get_session()
        # No total timeout: the server closes the stream after timeoutSeconds; a silent
        # connection is caught by the read timeout (bookmarks keep a healthy one talking).
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.timeout, sock_read=timeout_seconds + 30
        )
        counted = False
        retries = 0
        try:
            while True:
                resp = await session.get(path, params=params, headers=headers, timeout=timeout)
                self.requests["watch", resource.plural, str(resp.status)] += 1
                counted = True
                retry_after = _seconds(resp.headers.get("Retry-After"))
                if resp.status >= 300 and _retryable(resp.status, retry_after, retries, self):
                    # As request(): the server asked us to come back later; it did nothing.
                    resp.release()
                    retries += 1
                    await asyncio.sleep(min(retry_after or 0.0, MAX_RETRY_AFTER))
                    await self.limiter.acquire()
                    continue
                break
            async with resp:
                if resp.status >= 300:
                    raw = await resp.read()
                    _decode_answer(resp.status, raw, "WATCH", f"{self.config.server}{path}")
                buffer = b""
                async for chunk in resp.content.iter_any():
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield _event(line, what)
                if buffer.strip():
                    yield _event(buffer, what)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            if not counted:
                self.requests["watch", resource.plural, NO_ANSWER] += 1
            raise translate(exc, what) from exc

    # --- generic verbs --------------------------------------------------------------

    async def get(self, resource: Resource[T], name: str, namespace: str | None = None) -> T:
        """GET one object."""
        raw = await self.request("GET", resource.path(namespace, name))
        return resource.decode(raw)

    async def list(
        self,
        resource: Resource[T],
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
    ) -> ObjectList[T]:
        """LIST one page (all of it if ``limit`` is 0). ``namespace=None``: all namespaces."""
        params: dict[str, str] = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if limit:
            params["limit"] = str(limit)
        if continue_token:
            params["continue"] = continue_token
        if resource_version:
            params["resourceVersion"] = resource_version
        body = await self.request("GET", resource.path(namespace), params)
        if not isinstance(body, dict) or not isinstance(body.get("items", []), list):
            raise ProtocolError(f"LIST {resource}: the answer is not a list")
        meta = body.get("metadata") or {}
        api_version = resource.group_version
        items = []
        for item in body.get("items") or []:
            # Items of a list carry no kind/apiVersion on the wire; decoders may need them.
            item.setdefault("kind", resource.kind)
            item.setdefault("apiVersion", api_version)
            items.append(resource.decode(item))
        return ObjectList(items, str(meta.get("resourceVersion", "")), meta.get("continue", ""))

    async def list_all(
        self,
        resource: Resource[T],
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        page_size: int = 500,
    ) -> ObjectList[T]:
        """Every page of a list; the resourceVersion is the first page's (the snapshot)."""
        first = await self.list(resource, namespace, label_selector, field_selector, page_size)
        items, token = list(first.items), first.continue_token
        while token:
            page = await self.list(
                resource, namespace, label_selector, field_selector, page_size, token
            )
            items.extend(page.items)
            token = page.continue_token
        return ObjectList(items, first.resource_version)

    async def create(
        self, resource: Resource[T], body: RawObject, namespace: str | None = None
    ) -> T:
        """POST a new object; ``namespace`` defaults to the body's."""
        ns = namespace or body.get("metadata", {}).get("namespace")
        return resource.decode(await self.request("POST", resource.path(ns), body=body))

    async def update(self, resource: Resource[T], body: RawObject, subresource: str = "") -> T:
        """PUT an object (optimistic: its metadata.resourceVersion must be current)."""
        meta = body.get("metadata", {})
        path = resource.path(meta.get("namespace"), meta.get("name", ""), subresource)
        return resource.decode(await self.request("PUT", path, body=body))

    async def patch(
        self,
        resource: Resource[T],
        name: str,
        patch: object,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> T:
        """PATCH an object with a merge (RFC 7386), JSON (RFC 6902) or strategic patch."""
        path = resource.path(namespace, name, subresource)
        raw = await self.request("PATCH", path, body=patch, content_type=_PATCH_MEDIA[patch_type])
        return resource.decode(raw)

    async def delete(
        self,
        resource: Resource[Any],
        name: str,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
        uid: str = "",
    ) -> RawObject:
        """DELETE an object; returns the server's answer (the object or a Status).

        ``uid`` is a precondition: the delete fails with 409 if the name now belongs to
        another object (a preemption victim recreated under the same name).
        """
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if uid:
            options["preconditions"] = {"uid": uid}
        answer: RawObject = await self.request(
            "DELETE", resource.path(namespace, name), body=options
        )
        return answer

    # --- what the scheduler writes --------------------------------------------------

    async def bind(self, namespace: str, name: str, node: str, uid: str = "") -> None:
        """Bind a pod to ``node`` (POST pods/{name}/binding); raises on any failure.

        The answer is a Status, which we check ourselves (the official clients try to
        decode it as a Binding and fail).
        """
        meta: dict[str, str] = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        path = PODS.path(namespace, name, "binding")
        answer = await self.request("POST", path, body=body)
        failed = isinstance(answer, dict) and answer.get("status") not in (None, "Success")
        if failed and answer.get("kind") == "Status":
            raise error_for_status(int(answer.get("code") or 500), answer, "POST", path)

    async def create_event(
        self,
        involved: RawObject,
        reason: str,
        message: str,
        event_type: str = "Normal",
        action: str = "",
        component: str = "kubesched",
        timestamp: str = "",
    ) -> RawObject:
        """Record a core/v1 Event about ``involved`` (an object reference: kind,
        namespace, name, uid, ...), named ``<object>.<unix nanos in hex>`` as client-go's
        recorder names events (a generateName ending in '.' is not a valid prefix)."""
        import time
        from datetime import UTC, datetime

        stamp = timestamp or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        namespace = involved.get("namespace") or "default"
        base = str(involved.get("name", "object")).lower()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{base}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message[:1024],
            "type": event_type,
            "action": action or reason,
            "source": {"component": component},
            "reportingComponent": component,
            "reportingInstance": component,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        return await self.create(EVENTS, event, namespace)

    async def patch_pod_status(
        self, namespace: str, name: str, patch: RawObject, patch_type: PatchType = "strategic"
    ) -> RawObject:
        """Patch a pod's status subresource (conditions merge by type when strategic)."""
        return await self.patch(PODS.raw, name, patch, namespace, patch_type, "status")

    async def get_lease(self, namespace: str, name: str) -> RawObject:
        """GET a coordination.k8s.io/v1 Lease."""
        return await self.get(LEASES, name, namespace)

    async def create_lease(self, lease: RawObject) -> RawObject:
        """Create a Lease (AlreadyExists if another replica was first)."""
        return await self.create(LEASES, lease)

    async def update_lease(self, lease: RawObject) -> RawObject:
        """Replace a Lease; Conflict if someone else renewed it since we read it."""
        return await self.update(LEASES, lease)


def _broke(exc: ConnectionFailed) -> bool:
    """Whether a connection broke under a request (reset, closed before the answer), as
    client-go's ``IsConnectionReset`` / ``IsProbableEOF``; a refused one did not."""
    cause = exc.__cause__
    return isinstance(cause, ConnectionError) and not isinstance(cause, ConnectionRefusedError)


def _retryable(status: int, retry_after: float | None, retries: int, client: Client) -> bool:
    """Whether an answer is one to try again after ``Retry-After`` (client-go's
    ``checkWait``: 429 or 5xx with the header), retries left."""
    return (
        retry_after is not None
        and (status == 429 or status >= 500)
        and retries < client.max_retries
    )


def _seconds(header: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (the HTTP-date form is not used by Kubernetes)."""
    if header is None:
        return None
    try:
        return max(float(header), 0.0)
    except ValueError:
        return None


def _decode_answer(
    status: int, raw: bytes, method: str, url: str, retry_after: float | None = None
) -> Any:
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        if status >= 300:
            body = raw.decode(errors="replace")
        else:
            raise ProtocolError(f"{method} {url}: the answer is not JSON") from None
    if status >= 300:
        raise error_for_status(status, body, method, url, retry_after)
    return body


def _event(line: bytes, what: str) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise ProtocolError(f"{what}: a watch event is not JSON") from exc
    if not isinstance(event, dict) or "type" not in event:
        raise ProtocolError(f"{what}: a watch event without a type")
    return event
