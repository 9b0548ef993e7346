"""The HTTP face of the embedded API server: routing, JSON in and out, watch streams.

:func:`make_app` builds an aiohttp application over a :class:`~kubesched.apiserver.store.Store`.
Paths follow kube-apiserver (``/api/v1/namespaces/<ns>/pods/<name>/status``,
``/apis/<group>/<version>/...``, the legacy ``/watch/`` prefix); every failure is a
``kind: Status`` body with the HTTP code it names. Watches are chunked streams of JSON
lines, one ``{"type", "object"}`` per line, as the Go and Python clients read them.

A GET (or watch) whose ``Accept`` asks for ``as=Table`` gets a meta.k8s.io/v1 Table
(:mod:`kubesched.apiserver.tables`). A resource that is a view of another
(events.k8s.io/v1 events) is served from the other's objects, converted on the way in and
out (:mod:`kubesched.apiserver.eventsv1`). A background task reaps objects whose graceful
deletion is due (:meth:`Store.reap <kubesched.apiserver.store.Store.reap>`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from kubesched.apiserver import (
    access,
    admission,
    crd,
    deleteoptions,
    discovery,
    discovery_aggregated,
    errors,
    eventsv1,
    eviction,
    faults,
    fieldvalidation,
    flowcontrol,
    health,
    listing,
    openapi,
    protobuf,
    rest,
    scale,
    strategy,
    tables,
)
from kubesched.apiserver.auth import ANONYMOUS_USER, USER_KEY, token_middleware
from kubesched.apiserver.records import RECORDS_PATH, ServerRecords
from kubesched.apiserver.resources import BINDINGS, Resource
from kubesched.apiserver.store import Store, parse_resource_version
from kubesched.apiserver.watch import WatchEvent
from kubesched.objects import jsontext

log = logging.getLogger(__name__)

#: Request bodies larger than this are refused (kube-apiserver's limit is 3 MiB).
MAX_BODY_BYTES = 3 * 1024 * 1024
#: How long a watch stays open without ``timeoutSeconds`` (upstream: 30–60 minutes).
DEFAULT_WATCH_SECONDS = 1800.0

STORE_KEY = web.AppKey("store", Store)
CONFIG_KEY: web.AppKey[ServerConfig] = web.AppKey("config")
WATCHES_KEY: web.AppKey[set[asyncio.Event]] = web.AppKey("watches")
#: Seats for writes, Leases ahead (:mod:`kubesched.apiserver.flowcontrol`).
FLOW_KEY = web.AppKey("flow", flowcontrol.FlowControl)
#: The faults to inject (:mod:`kubesched.apiserver.faults`), if any.
FAULTS_KEY: web.AppKey[faults.Faults | None] = web.AppKey("faults")
#: What was served, for checks after a run (:mod:`kubesched.apiserver.records`), if kept.
RECORDS_KEY: web.AppKey[ServerRecords | None] = web.AppKey("records")
#: What a pods/eviction body is (policy/v1 Eviction), for its field validation.
_EVICTIONS = Resource("policy", "v1", "evictions", "Eviction", True)
#: What a .../scale body is (autoscaling/v1 Scale), for its field validation.
_SCALE = Resource("autoscaling", "v1", "scales", "Scale", True)
#: The request's fieldValidation and what it found (its warnings become headers).
_FIELD_CHECK: web.RequestKey[fieldvalidation.FieldCheck] = web.RequestKey("field_check")


@dataclass
class ServerConfig:
    """Server-wide settings that requests read."""

    bookmark_interval: float = 10.0
    closing: bool = False
    #: Seconds between looks for objects whose graceful deletion is due.
    reap_interval: float = 0.5


def _dumps(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def _reply(status: int, body: Any) -> web.Response:
    return web.Response(status=status, body=_dumps(body), content_type="application/json")


def _error(err: errors.ApiError) -> web.Response:
    return _reply(err.code, err.status)


@dataclass
class Target:
    """What a request path names: a resource, and maybe a namespace, name, subresource."""

    resource: Resource
    namespace: str | None
    name: str
    subresource: str
    watch_path: bool


def _route(store: Store, parts: list[str]) -> Target | dict[str, Any]:
    """Resolve a path to a discovery document or a Target; 404 for anything else."""
    resources = store.resources
    if parts == ["version"]:
        return discovery.version_info()
    if parts[:2] == ["openapi", "v3"]:
        doc = (
            openapi.root(resources)
            if len(parts) == 2
            else openapi.group_version(resources, *_openapi_gv(parts[2:]))
        )
        if doc is None:
            raise errors.not_found_path()
        return doc
    if parts[:1] == ["api"]:
        if len(parts) == 1:
            return discovery.core_versions("")
        if parts[1] != "v1":
            raise errors.not_found_path()
        group, version, rest_parts = "", "v1", parts[2:]
    elif parts[:1] == ["apis"]:
        if len(parts) == 1:
            return discovery.group_list(resources)
        if len(parts) == 2:
            found = discovery.group(resources, parts[1])
            if found is None:
                raise errors.not_found_path()
            return found
        group, version, rest_parts = parts[1], parts[2], parts[3:]
    else:
        raise errors.not_found_path()
    if not rest_parts:
        listing = discovery.resource_list(resources, group, version)
        if listing is None:
            raise errors.not_found_path()
        return listing
    watch_path = rest_parts[0] == "watch"
    if watch_path:
        rest_parts = rest_parts[1:]
    namespace = None
    if (
        len(rest_parts) >= 3
        and rest_parts[0] == "namespaces"
        and (res := store.resource(group, version, rest_parts[2])) is not None
        and res.namespaced
    ):
        namespace, rest_parts = rest_parts[1], rest_parts[2:]
    if not rest_parts or len(rest_parts) > 3:
        raise errors.not_found_path()
    res = store.resource(group, version, rest_parts[0])
    if res is None or (namespace is None and res.namespaced and len(rest_parts) > 1):
        raise errors.not_found_path()
    name = rest_parts[1] if len(rest_parts) > 1 else ""
    sub = rest_parts[2] if len(rest_parts) > 2 else ""
    if sub and sub not in res.subresources:
        raise errors.not_found_path()
    return Target(res, namespace, name, sub, watch_path)


def _openapi_gv(parts: list[str]) -> tuple[str, str]:
    if parts[:1] == ["api"] and len(parts) == 2:
        return "", parts[1]
    if parts[:1] == ["apis"] and len(parts) == 3:
        return parts[1], parts[2]
    raise errors.not_found_path()


#: Body media types kube-apiserver accepts that this server cannot decode.
_UNDECODABLE_MEDIA_TYPES = ("application/cbor",)


async def _json_body(request: web.Request, into: tuple[str, str] = ("v1", "")) -> Any:
    """The request's body as JSON data: parsed, or decoded from protobuf (which Go clients
    send) for an endpoint whose objects are ``into`` (apiVersion, kind)."""
    media_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if media_type in _UNDECODABLE_MEDIA_TYPES:
        # As kube-apiserver answers a body in a format it has no serializer for: 415.
        raise errors.unsupported_media_type(("application/json",))
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise errors.failure(
            413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}"
        ) from None
    except ConnectionResetError:
        # The client went away mid-body (it gave up waiting): nothing was done, and no
        # one will read the answer; not a server error.
        raise errors.bad_request("the request body was cut short: the connection closed") from None
    if not raw.strip():
        return None
    if media_type == protobuf.MEDIA_TYPE:
        return protobuf.decode_body(raw, *into)
    # Duplicate keys are looked for (at a cost) only where fieldValidation reports them.
    check = request.get(_FIELD_CHECK)
    try:
        if check is None or not check.reports:
            return jsontext.loads(raw)
        body, check.duplicates = fieldvalidation.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None
    return body


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


async def handle(request: web.Request) -> web.StreamResponse:
    """Serve one request (every path goes through here); writes wait for a seat, Lease
    requests do not (:mod:`kubesched.apiserver.flowcontrol`)."""
    parts = [p for p in request.path.split("/") if p]
    injected = request.app[FAULTS_KEY]
    verdict = _verdict(request, injected, parts) if injected is not None else None
    if verdict is not None:
        # Before a seat is taken: a stalled network, not a server that serves slowly.
        if verdict.delay:
            await asyncio.sleep(verdict.delay)
        if verdict.error is not None:
            return _error_with_retry_after(verdict.error)
    async with request.app[FLOW_KEY].seat(request.method, parts):
        response = await _serve_request(request, parts)
    records = request.app[RECORDS_KEY]
    if records is not None and request.method != "GET":
        target = _target_of(request, parts)
        if target is not None:
            await records.record(
                request,
                response,
                target.resource.plural,
                target.subresource,
                target.namespace or "",
                target.name,
            )
    if verdict is not None and verdict.reset and request.transport is not None:
        # Served, and the answer lost: the client sees the connection break.
        request.transport.abort()
    return response


def _target_of(request: web.Request, parts: list[str]) -> Target | None:
    """The resource request a path names, or None (discovery, a bad path)."""
    try:
        target = _route(request.app[STORE_KEY], parts)
    except errors.ApiError:
        return None
    return target if isinstance(target, Target) else None


def _verdict(
    request: web.Request, injected: faults.Faults, parts: list[str]
) -> faults.Verdict | None:
    target = _target_of(request, parts)
    if target is None:
        return None
    watch = target.watch_path or (
        request.method == "GET" and not target.name and _flag(request, "watch")
    )
    verb = faults.request_verb(request.method, bool(target.name), watch)
    return injected.verdict(verb, _resource_name(target))


def _resource_name(target: Target) -> str:
    plural = target.resource.plural
    return f"{plural}/{target.subresource}" if target.subresource else plural


async def _serve_request(request: web.Request, parts: list[str]) -> web.StreamResponse:
    store = request.app[STORE_KEY]
    try:
        if request.query.get("dryRun"):
            raise errors.bad_request("dryRun is not supported by the kubesched API server")
        if parts == ["openapi", "v2"] and request.method == "GET":
            body, content_type = openapi.v2(request.headers.get("Accept", ""))
            return web.Response(body=body, headers={"Content-Type": content_type})
        target = _route(store, parts)
        if isinstance(target, dict):
            if request.method != "GET":
                raise errors.method_not_supported("", request.method.lower())
            if parts in (["api"], ["apis"]) and discovery_aggregated.wants_aggregated(
                request.headers.get("Accept", "")
            ):
                return _aggregated(request, store, parts == ["api"])
            if parts == ["api"]:
                target = discovery.core_versions(request.host)
            return _reply(200, target)
        return _with_warnings(request, await _dispatch(request, store, target))
    except errors.ApiError as err:
        return _with_warnings(request, _error(err))
    except Exception as exc:  # a bug: say so as kube-apiserver does, and keep serving
        log.exception("internal error serving %s %s", request.method, request.path)
        return _error(errors.failure(500, "InternalError", f"Internal error occurred: {exc}"))


def _with_warnings(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    # One Warning header per problem fieldValidation=Warn found, on success or failure.
    check = request.get(_FIELD_CHECK)
    if check is not None and check.warnings and not response.prepared:
        for header in fieldvalidation.warning_headers(check.warnings):
            response.headers.add("Warning", header)
    return response


def _field_check(request: web.Request, options_kind: str) -> fieldvalidation.FieldCheck:
    check = fieldvalidation.parse(request.query, options_kind)
    request[_FIELD_CHECK] = check
    return check


def _aggregated(request: web.Request, store: Store, core: bool) -> web.Response:
    # Upstream's ServeHTTPWithETag: the ETag on every answer, 304 when the client has it.
    body, etag = discovery_aggregated.cached(store.resources, core)
    headers = {"ETag": etag, "Vary": "Accept", "Cache-Control": "public"}
    if request.headers.get("If-None-Match") == etag:
        return web.Response(status=304, headers=headers)
    headers["Content-Type"] = discovery_aggregated.CONTENT_TYPE
    return web.Response(status=200, body=body, headers=headers)


def _conversion(view: Resource) -> Any:
    """How a view's objects convert to and from the stored ones: a custom resource's
    other versions (:class:`crd.VersionView`), or events.k8s.io/v1 (:mod:`eventsv1`)."""
    return crd.VersionView(view) if view.custom is not None else eventsv1


async def _dispatch(request: web.Request, store: Store, t: Target) -> web.StreamResponse:
    if t.subresource == "scale":
        if t.watch_path:  # a Scale cannot be watched: kube-apiserver has no such route
            raise errors.not_found_path()
        return await _scale(request, store, t)
    view = t.resource if t.resource.view_of is not None else None
    if view is None:
        return await _serve(request, store, t, None)
    stored = Target(view.storage, t.namespace, t.name, t.subresource, t.watch_path)
    try:
        return await _serve(request, store, stored, view)
    except errors.ApiError as err:
        raise _conversion(view).convert_error(err) from None


async def _scale(request: web.Request, store: Store, t: Target) -> web.StreamResponse:
    # An autoscaling/v1 Scale whatever the parent's version: no conversion of views.
    method, res, ns = request.method, t.resource, t.namespace
    if method == "GET":
        status, body = scale.get(store, res, ns, t.name)
        if tables.wants_table(request.headers.get("Accept", "")):
            body = scale.table(body, request.query.get("includeObject", ""))
        return _reply(status, body)
    if method == "PUT":
        body = await _body(request, _SCALE, None, "UpdateOptions")
        return _reply(*scale.update(store, res, ns, t.name, body))
    if method == "PATCH":
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type not in errors.PATCH_MEDIA_TYPES:
            raise errors.unsupported_media_type()
        body = await _json_body(request)
        return _reply(*scale.patch(store, res, ns, t.name, body, content_type))
    raise errors.method_not_supported(f"{res.plural}/scale", method.lower(), res.group)


async def _body(request: web.Request, res: Resource, view: Resource | None, options: str) -> Any:
    # A create or update body, decoded as kube-apiserver's decoder does: unknown fields
    # dropped (and reported as fieldValidation says) in the version it was sent in.
    check = _field_check(request, options)
    into = view or res
    body = await _json_body(request, (into.group_version, into.kind))
    if (into is BINDINGS or into is _EVICTIONS) and isinstance(body, dict):
        # Stored through their own paths, not admission's check_body: the decoder's
        # type check is here for them.
        admission.check_types(into, body)
    fieldvalidation.check_body(check, into, body)
    return _conversion(view).to_core(body) if view is not None else body


def _out(view: Resource | None, status: int, body: Any) -> web.Response:
    return _reply(status, _conversion(view).convert_reply(body) if view is not None else body)


async def _serve(
    request: web.Request, store: Store, t: Target, view: Resource | None
) -> web.StreamResponse:
    method, res, q = request.method, t.resource, request.query
    as_table = method == "GET" and tables.wants_table(request.headers.get("Accept", ""))
    fields = q.get("fieldSelector", "")
    if view is not None:
        fields = _conversion(view).field_selector(fields)
    if t.watch_path or (method == "GET" and not t.name and _flag(request, "watch")):
        initial_events = listing.watch_options(q)
        if t.name:
            named = f"metadata.name={t.name}"
            fields = f"{fields},{named}" if fields else named
        printer = _watch_printer(view or res, as_table, q.get("includeObject", ""))
        if initial_events:
            # NotOlderThan: the state streamed must be at least as new as the version.
            wanted = parse_resource_version(q.get("resourceVersion", ""))
            if wanted > store.resource_version:
                try:
                    await _wait_for_version(store, wanted)
                except errors.ApiError as err:
                    return _error_with_retry_after(err)
        return await _watch(request, store, t, fields, view, printer, initial_events)
    if res in access.REVIEWS:
        if method != "POST" or t.name:
            raise errors.method_not_supported(res.plural, method.lower(), res.group)
        body = await _json_body(request, (res.group_version, res.kind))
        return _reply(201, access.review(res, body, request.get(USER_KEY, ANONYMOUS_USER)))
    if res.plural == "bindings":
        if method != "POST" or t.name:
            raise errors.method_not_supported(res.plural, method.lower())
        body = await _body(request, BINDINGS, None, "CreateOptions")
        return _reply(*rest.bind(store, t.namespace or "", "", body))
    if t.subresource == "binding":
        if method != "POST":
            raise errors.method_not_supported("pods/binding", method.lower())
        body = await _body(request, BINDINGS, None, "CreateOptions")
        return _reply(*rest.bind(store, t.namespace or "", t.name, body))
    if t.subresource == "eviction":
        if method != "POST":
            raise errors.method_not_supported("pods/eviction", method.lower())
        body = await _body(request, _EVICTIONS, None, "CreateOptions")
        return _reply(*eviction.evict(store, t.namespace or "", t.name, body))
    if not t.name:
        if method == "GET":
            limit = _int(q.get("limit", "0"), "limit")
            read = listing.list_options(q, limit)
            if read.version > store.resource_version:
                try:
                    await _wait_for_version(store, read.version)
                except errors.ApiError as err:
                    return _error_with_retry_after(err)
            page = store.list(
                res,
                t.namespace,
                q.get("labelSelector", ""),
                fields,
                limit,
                q.get("continue", ""),
                read.version if read.exact else 0,
            )
            body = rest.list_body(
                res, page.items, page.resource_version, page.continue_token, page.remaining
            )
            if as_table:
                return _reply(200, _table(view or res, body, q.get("includeObject", "")))
            return _out(view, 200, body)
        if method == "POST":
            if res.namespaced and not t.namespace:
                raise errors.not_found_path()
            body = await _body(request, res, view, "CreateOptions")
            return _out(view, *rest.create(store, res, t.namespace, body, view))
        if method == "DELETE":
            if res.namespaced and not t.namespace:
                raise errors.not_found_path()
            options = await _delete_options(request)
            return _out(
                view,
                *rest.delete_collection(
                    store, res, t.namespace, q.get("labelSelector", ""), fields, options
                ),
            )
        raise errors.method_not_supported(res.plural, method.lower(), res.group)
    if method == "GET":
        obj = store.get(res, t.namespace, t.name)
        if as_table:
            one = {"metadata": {"resourceVersion": obj["metadata"].get("resourceVersion", "")}}
            return _reply(
                200, _table(view or res, dict(one, items=[obj]), q.get("includeObject", ""))
            )
        return _out(view, 200, obj)
    if method == "PUT":
        body = await _body(request, res, view, "UpdateOptions")
        return _out(view, *rest.update(store, res, t.namespace, t.name, body, t.subresource, view))
    if method == "PATCH":
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type not in errors.PATCH_MEDIA_TYPES:
            raise errors.unsupported_media_type()
        check = _field_check(request, "PatchOptions")
        body = await _json_body(request)
        if view is not None:
            json_patch = content_type == errors.PATCH_MEDIA_TYPES[0]
            body = _conversion(view).convert_patch(body, json_patch)
        return _out(
            view,
            *rest.patch(
                store, res, t.namespace, t.name, body, content_type, t.subresource, check, view
            ),
        )
    if method == "DELETE" and not t.subresource:
        options = await _delete_options(request)
        reply = rest.delete(store, res, t.namespace, t.name, options)
        warnings = strategy.delete_warnings(res, options)
        if warnings:
            check = request.get(_FIELD_CHECK) or fieldvalidation.FieldCheck()
            check.warn(warnings)
            request[_FIELD_CHECK] = check
        return _out(view, *reply)
    raise errors.method_not_supported(res.plural, method.lower(), res.group)


async def _delete_options(request: web.Request) -> dict[str, Any]:
    """A delete's DeleteOptions: the body's, with the query's parameters over them
    (:mod:`kubesched.apiserver.deleteoptions`); any error before anything is deleted."""
    media_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    # _json_body answers both.
    with contextlib.suppress(web.HTTPRequestEntityTooLarge, ConnectionResetError):
        if (await request.read()).strip():
            deleteoptions.check_media_type(media_type)
    body = await _json_body(request, ("meta.k8s.io/v1", "DeleteOptions"))
    return deleteoptions.with_query(deleteoptions.from_body(body), request.query)


async def _wait_for_version(store: Store, version: int) -> None:
    """Wait until the store has reached ``version``, as the watch cache waits for a list
    that asks for a newer version than it holds; 504 after ``FRESHNESS_TIMEOUT``."""
    # Writes reach the store from any thread: polling its version is simpler than a
    # watcher per waiting list, and such waits are short and rare.
    deadline = time.monotonic() + listing.FRESHNESS_TIMEOUT
    while store.resource_version < version:
        if time.monotonic() >= deadline:
            raise listing.too_large_resource_version(version, store.resource_version)
        await asyncio.sleep(0.02)


def _error_with_retry_after(err: errors.ApiError) -> web.Response:
    # kube-apiserver turns details.retryAfterSeconds into a Retry-After header.
    response = _error(err)
    retry = err.status.get("details", {}).get("retryAfterSeconds")
    if retry:
        response.headers["Retry-After"] = str(retry)
    return response


def _table(res: Resource, body: dict[str, Any], include_object: str) -> dict[str, Any]:
    # Rows are printed from stored (core) objects; a view's rows carry its own schema.
    shown = _conversion(res).to_v1 if res.view_of is not None else None
    columns = res.custom.columns if res.custom is not None else None
    return tables.table(
        res.plural, body["items"], body["metadata"], include_object, None, shown, columns
    )


def _int(text: str, name: str) -> int:
    try:
        value = int(text or "0")
    except ValueError:
        raise errors.bad_request(f"invalid {name}: {text!r}") from None
    if value < 0:
        raise errors.bad_request(f"invalid {name}: {text!r}")
    return value


def _watch_printer(
    res: Resource, as_table: bool, include_object: str
) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """For a watch asked as Table: turns each event's object into a one-row Table, with
    the column definitions in the first event only (as kube-apiserver sends them)."""
    if not as_table:
        return None
    tables.table(res.plural, [], {}, include_object)  # 400 for a bad includeObject, now
    first = True

    def print_event(event: dict[str, Any]) -> dict[str, Any]:
        nonlocal first
        if event["type"] in ("BOOKMARK", "ERROR"):
            return event
        obj = event["object"]
        meta = {"resourceVersion": obj.get("metadata", {}).get("resourceVersion", "")}
        printed = _table(res, {"metadata": meta, "items": [obj]}, include_object)
        if not first:
            printed["columnDefinitions"] = []
        first = False
        return dict(event, object=printed)

    return print_event


async def _watch(
    request: web.Request,
    store: Store,
    t: Target,
    field_selector: str,
    view: Resource | None,
    printer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    initial_events: bool | None = None,
) -> web.StreamResponse:
    config = request.app[CONFIG_KEY]
    q = request.query
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    wake = asyncio.Event()

    def notify() -> None:
        if threading.get_ident() == loop_thread:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    injected = request.app[FAULTS_KEY]
    try:
        if injected is not None and not initial_events:
            _check_window(injected, store, q.get("resourceVersion", ""))
        watcher = store.watch(
            t.resource,
            t.namespace,
            q.get("resourceVersion", ""),
            q.get("labelSelector", ""),
            field_selector,
            notify,
            initial_events,
        )
    except errors.ApiError as err:
        if err.code != 410:
            raise
        # As kube-apiserver: a watch from an expired version is a 200 with one ERROR event.
        await response.prepare(request)
        await response.write(_dumps({"type": "ERROR", "object": err.status}) + b"\n")
        await response.write_eof()
        return response
    timeout = float(_int(q.get("timeoutSeconds", "0"), "timeoutSeconds")) or DEFAULT_WATCH_SECONDS
    bookmarks = _flag(request, "allowWatchBookmarks")
    deadline = time.monotonic() + timeout
    next_bookmark = time.monotonic() + config.bookmark_interval
    watches = request.app[WATCHES_KEY]
    watches.add(wake)
    # The streamed state ends with a BOOKMARK saying so, when bookmarks are allowed.
    state_left = watcher.initial_count if initial_events and bookmarks else -1
    drop_at = injected.next_watch_drop(time.monotonic()) if injected is not None else None
    try:
        await response.prepare(request)
        while not config.closing:
            wake.clear()
            if drop_at is not None and time.monotonic() >= drop_at and injected is not None:
                # Cut, not ended: no last chunk, as a broken connection looks.
                injected.watch_dropped()
                if request.transport is not None:
                    request.transport.abort()
                return response
            if state_left == 0:
                await _send_initial_events_end(response, watcher, view or t.resource)
                state_left = -1
            events = watcher.take()
            if events:
                wire = [e.wire() for e in events]
                if printer is not None:
                    wire = [printer(w) for w in wire]
                elif view is not None:
                    convert = _conversion(view).convert_reply
                    wire = [dict(w, object=convert(w["object"])) for w in wire]
                if 0 < state_left < len(wire):
                    # The state and changes after it came in one batch: end the state
                    # first, so the bookmark sits between them.
                    await response.write(b"".join(_dumps(w) + b"\n" for w in wire[:state_left]))
                    wire, state_left = wire[state_left:], 0
                    await _send_initial_events_end(response, watcher, view or t.resource)
                    state_left = -1
                elif state_left > 0:
                    state_left -= len(wire)
                await response.write(b"".join(_dumps(w) + b"\n" for w in wire))
                continue
            if watcher.overflowed:
                break
            now = time.monotonic()
            if now >= deadline:
                break
            if bookmarks and now >= next_bookmark:
                await _send_bookmark(response, store, watcher, view or t.resource)
                next_bookmark = now + config.bookmark_interval
                continue
            wait = min(deadline, next_bookmark if bookmarks else deadline, drop_at or deadline)
            wait -= now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=max(wait, 0.0))
        await response.write_eof()
    except ConnectionError:
        pass  # the client went away: nothing to tell it
    finally:
        watches.discard(wake)
        watcher.close()
    return response


def _check_window(injected: faults.Faults, store: Store, resource_version: str) -> None:
    """410 Expired for a resume older than the fault's window (a compaction)."""
    version = parse_resource_version(resource_version)
    newest = store.resource_version
    if injected.expired(version, newest):
        raise errors.too_old_resource_version(version, newest - injected.spec.window)


#: The annotation of the BOOKMARK that ends a watch's initial events (KEP-3157).
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


async def _send_initial_events_end(
    response: web.StreamResponse, watcher: Any, res: Resource
) -> None:
    version = watcher.initial_version
    obj = {
        "kind": res.kind,
        "apiVersion": res.group_version,
        "metadata": {
            "resourceVersion": str(version),
            "annotations": {INITIAL_EVENTS_END: "true"},
        },
    }
    await response.write(_dumps(WatchEvent("BOOKMARK", obj, version).wire()) + b"\n")


async def _send_bookmark(
    response: web.StreamResponse, store: Store, watcher: Any, res: Resource
) -> None:
    version = store.bookmark(watcher)
    if version is None:
        return
    obj = {
        "kind": res.kind,
        "apiVersion": res.group_version,
        "metadata": {"resourceVersion": str(version)},
    }
    await response.write(_dumps(WatchEvent("BOOKMARK", obj, version).wire()) + b"\n")


async def _reap(app: web.Application) -> None:
    # Removes objects whose deletion is due (graceful pod deletes, see rest.delete).
    store, config = app[STORE_KEY], app[CONFIG_KEY]
    while not config.closing:
        try:
            store.reap()
        except Exception:  # a bug: log it, keep reaping
            log.exception("reaping deleted objects failed")
        await asyncio.sleep(config.reap_interval)


async def _reaper_context(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.create_task(_reap(app))
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _serve_records(request: web.Request) -> web.Response:
    # The server's records and the faults it injected, for checks after a chaos run.
    records, injected = request.app[RECORDS_KEY], request.app[FAULTS_KEY]
    if records is None:
        return _error(errors.not_found_path())
    return _reply(200, records.to_json(injected))


async def _on_shutdown(app: web.Application) -> None:
    app[CONFIG_KEY].closing = True
    watches = app[WATCHES_KEY]
    for wake in tuple(watches):
        wake.set()


def make_app(
    store: Store,
    bookmark_interval: float = 10.0,
    token: str = "",
    injected: faults.Faults | None = None,
    records: ServerRecords | None = None,
) -> web.Application:
    """The aiohttp application serving ``store``; with ``token``, requests must carry it
    as a bearer token (:mod:`kubesched.apiserver.auth`). PodDisruptionBudget status is
    the disruption controller's (:mod:`kubesched.controllers.disruption`), a client.
    **injected**: faults to inject (:mod:`kubesched.apiserver.faults`); **records**: keep
    bindings, Lease and pod writes there, served at
    :data:`~kubesched.apiserver.records.RECORDS_PATH`."""
    middlewares = [token_middleware(token)] if token else []
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=middlewares)
    app[STORE_KEY] = store
    app[CONFIG_KEY] = ServerConfig(bookmark_interval=bookmark_interval)
    watches: set[asyncio.Event] = set()
    app[WATCHES_KEY] = watches
    app[FLOW_KEY] = flowcontrol.FlowControl()
    app[FAULTS_KEY] = injected
    app[RECORDS_KEY] = records
    health.add_routes(app)
    app.router.add_get(RECORDS_PATH, _serve_records)
    # Every path, even one whose decoded name holds a newline (``.../configmaps/%0A``),
    # which ``.*`` would not match: aiohttp's own 404 is plain text, not a Status.
    app.router.add_route("*", r"/{tail:[\s\S]*}", handle)
    app.on_shutdown.append(_on_shutdown)
    app.cleanup_ctx.append(_reaper_context)
    return app
