"""API errors map to the right classes with the server's Status; transport failures are
ours, with aiohttp's exception chained, and no aiohttp exception escapes."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest
from aiohttp import web
from kube_helpers import pod, run

from kubesched.kube import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Client,
    Conflict,
    ConnectionConfig,
    ConnectionFailed,
    Forbidden,
    Gone,
    Informer,
    Invalid,
    KubeError,
    NotFound,
    ProtocolError,
    ServerError,
    Timeout,
    TooManyRequests,
    Unauthorized,
    errors,
)
from kubesched.kube.resources import NAMESPACES, PODS


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (400, "BadRequest", BadRequest),
        (401, "Unauthorized", Unauthorized),
        (403, "Forbidden", Forbidden),
        (404, "NotFound", NotFound),
        (409, "Conflict", Conflict),
        (409, "AlreadyExists", AlreadyExists),
        (410, "Expired", Gone),
        (422, "Invalid", Invalid),
        (429, "TooManyRequests", TooManyRequests),
        (500, "InternalError", ServerError),
        (503, "ServiceUnavailable", ServerError),
        (418, "", ApiError),
    ],
    ids=lambda v: str(v) if not isinstance(v, type) else v.__name__,
)
def test_status_codes_map_to_subclasses(code, reason, expected):
    status = {"kind": "Status", "status": "Failure", "reason": reason, "message": "m", "code": code}
    err = errors.error_for_status(code, status, "GET", "/x")
    assert type(err) is expected
    assert (err.code, err.reason, err.status) == (code, reason, status)


def test_a_body_that_is_not_a_status_becomes_one():
    err = errors.error_for_status(502, "<html>bad gateway</html>")
    assert isinstance(err, ServerError) and err.status["code"] == 502
    assert "bad gateway" in err.message


def test_errors_from_the_real_server_carry_its_status(with_client):
    async def body(client: Client):
        with pytest.raises(NotFound) as missing:
            await client.get(PODS, "nope", "default")
        assert missing.value.status["reason"] == "NotFound"
        assert missing.value.details.get("name") == "nope"
        await client.create(PODS.raw, pod("twice"))
        with pytest.raises(AlreadyExists) as twice:
            await client.create(PODS.raw, pod("twice"))
        assert twice.value.status["reason"] == "AlreadyExists"
        stale = await client.get(PODS.raw, "twice", "default")
        await client.patch(PODS.raw, "twice", {"metadata": {"labels": {"a": "b"}}}, "default")
        with pytest.raises(Conflict) as conflict:
            await client.update(PODS.raw, stale)
        assert not isinstance(conflict.value, AlreadyExists)
        bad = pod("")
        bad["metadata"]["name"] = "Not_A_Name"
        with pytest.raises(Invalid) as invalid:
            await client.create(PODS.raw, bad)
        assert invalid.value.status["code"] == 422 and invalid.value.details.get("causes")
        with pytest.raises(BadRequest) as bad_token:
            await client.list(PODS, "default", limit=1, continue_token="garbage")
        assert bad_token.value.status["code"] == 400

    with_client(body)


def test_an_expired_continue_token_is_gone(tmp_path):
    from kubesched.apiserver.runner import new_store, start_apiserver
    from kubesched.kube import load_kubeconfig

    async def body(config):
        async with Client(config) as client:
            for i in range(3):
                await client.create(PODS.raw, pod(f"g{i}"))
            first = await client.list(PODS, "default", limit=1)
            for i in range(5):  # more writes than the window of 3 keeps
                await client.patch(
                    PODS.raw, "g0", {"metadata": {"labels": {"n": str(i)}}}, "default"
                )
            with pytest.raises(Gone) as gone:
                await client.list(PODS, "default", limit=1, continue_token=first.continue_token)
            return gone.value

    with start_apiserver(store=new_store(window=3), kubeconfig_path=tmp_path / "kc") as server:
        err = run(body(load_kubeconfig([server.kubeconfig_path])))
    assert (err.code, err.reason) == (410, "Expired")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_connection_failed_with_the_cause_chained():
    config = ConnectionConfig(server=f"http://127.0.0.1:{_free_port()}")

    async def body():
        async with Client(config) as client:
            await client.get(NAMESPACES, "default")

    with pytest.raises(ConnectionFailed) as caught:
        run(body())
    # The transport's own error stays reachable (plain calls do not go through aiohttp).
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


async def _stub(handler) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def _dropping(request: web.Request) -> web.StreamResponse:
    """Promise a long body, send half of it, then cut the connection."""
    response = web.StreamResponse(headers={"Content-Length": "1000"})
    await response.prepare(request)
    await response.write(b'{"kind": "Pod", ')
    assert request.transport is not None
    request.transport.close()
    return response


async def _slow(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(5)
    return web.json_response({})


async def _garbage(request: web.Request) -> web.StreamResponse:
    return web.Response(text="this is not json", content_type="application/json")


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (_dropping, ConnectionFailed),
        (_slow, Timeout),
        (_garbage, ProtocolError),
    ],
    ids=["dropped-mid-body", "no-answer-in-time", "not-json"],
)
def test_transport_failures_never_leak_aiohttp_exceptions(handler, expected):
    async def body():
        runner, url = await _stub(handler)
        try:
            async with Client(ConnectionConfig(server=url), timeout=0.5) as client:
                with pytest.raises(KubeError) as caught:
                    await client.get(PODS, "x", "default")
                return caught.value
        finally:
            await runner.cleanup()

    err = run(body())
    assert type(err) is expected
    assert not isinstance(err, aiohttp.ClientError)


def test_a_watch_cut_mid_stream_is_connection_failed():
    async def cut(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(b'{"type": "ADDED", "object": {"metadata": {"name": "a"}}}\n{"ty')
        assert request.transport is not None
        request.transport.close()
        return response

    async def body():
        runner, url = await _stub(cut)
        seen = []
        try:
            async with Client(ConnectionConfig(server=url)) as client:
                with pytest.raises(KubeError) as caught:
                    async for event in client.watch_stream(PODS, "default"):
                        seen.append(event["object"]["metadata"]["name"])
                return seen, caught.value
        finally:
            await runner.cleanup()

    seen, err = run(body())
    assert seen == ["a"]
    assert isinstance(err, ConnectionFailed) and isinstance(err.__cause__, aiohttp.ClientError)


def test_the_public_api_exports_no_aiohttp_exception():
    import kubesched.kube as kube

    for name in kube.__all__:
        value = getattr(kube, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert issubclass(value, KubeError), name
            assert not issubclass(value, aiohttp.ClientError), name
    assert Informer  # informers catch only KubeError: see test_kube_informer


@pytest.mark.parametrize(
    ("refusals", "max_retries", "expected"),
    [
        ([(429, "0")], 3, None),
        ([(503, "0"), (429, "0")], 3, None),
        ([(429, "0")] * 3, 2, TooManyRequests),
        ([(500, None)], 3, ServerError),
    ],
    ids=[
        "429-with-retry-after-is-retried",
        "503-then-429-both-retried",
        "gives-up-after-max-retries",
        "5xx-without-retry-after-is-not-retried",
    ],
)
def test_retry_after_is_honoured(refusals, max_retries, expected):
    answers = list(refusals)
    calls: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        calls.append(request.method)
        if answers:
            code, after = answers.pop(0)
            headers = {"Retry-After": after} if after is not None else {}
            status = {"kind": "Status", "status": "Failure", "code": code, "message": "busy"}
            return web.json_response(status, status=code, headers=headers)
        return web.json_response({"kind": "Namespace", "metadata": {"name": "default"}})

    async def body():
        runner, url = await _stub(handler)
        try:
            async with Client(ConnectionConfig(server=url), max_retries=max_retries) as client:
                try:
                    return await client.get(NAMESPACES, "default")
                except ApiError as err:
                    return err
        finally:
            await runner.cleanup()

    result = run(body())
    if expected is None:
        assert result.name == "default" and len(calls) == len(refusals) + 1
    else:
        assert type(result) is expected
        assert len(calls) == min(len(refusals), max_retries + 1)
