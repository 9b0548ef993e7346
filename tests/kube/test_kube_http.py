"""The lean HTTP/1.1 pool behind the client's plain calls, against real aiohttp servers:
chunked and sized answers, keep-alive reuse, servers that close, bad answers."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from kubesched.kube import Client, ConnectionConfig, ConnectionFailed, ProtocolError
from kubesched.kube.http import ConnectionClosed, HttpPool
from kubesched.kube.resources import NAMESPACES


async def _serve(handler) -> tuple[web.AppRunner, str]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


def test_sized_and_chunked_answers_on_one_kept_alive_connection():
    peers: list[object] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport)
        body = await request.read()
        if request.query.get("chunked"):
            response = web.StreamResponse(status=201)
            response.enable_chunked_encoding()
            await response.prepare(request)
            for part in (b'{"echo": ', body, b', "path": "', request.path.encode(), b'"}'):
                await response.write(part)
            await response.write_eof()
            return response
        return web.Response(body=body, status=200, headers={"X-Seen": request.method})

    async def body():
        runner, url = await _serve(handler)
        pool = HttpPool(url + "/prefix/", None, "test")
        try:
            first = await pool.request("POST", "/a", {}, b'{"n":1}', 5)
            second = await pool.request("PUT", "/b?chunked=1", {}, b"[2]", 5)
            third = await pool.request("GET", "/c", {}, None, 5)
            return first, second, third
        finally:
            pool.close()
            await runner.cleanup()

    first, second, third = asyncio.run(body())
    assert first[0] == 200 and first[1]["x-seen"] == "POST" and first[2] == b'{"n":1}'
    assert second[0] == 201 and second[2] == b'{"echo": [2], "path": "/prefix/b"}'
    assert third[0] == 200 and third[2] == b""
    # Sequential requests reuse the one connection.
    assert len(set(map(id, peers))) == 1


def test_connection_close_answers_are_honoured_and_the_next_call_reconnects():
    served: list[str] = []
    peers: list[object] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        served.append(request.method)
        peers.append(request.transport)
        # "Connection: close": the pool must not reuse it.
        return web.Response(text="{}", headers={"Connection": "close"})

    async def body():
        runner, url = await _serve(handler)
        pool = HttpPool(url, None, "test")
        try:
            for _ in range(3):
                status, _, _ = await pool.request("GET", "/", {}, None, 5)
                assert status == 200
        finally:
            pool.close()
            await runner.cleanup()

    asyncio.run(body())
    assert served == ["GET", "GET", "GET"]
    assert len(set(map(id, peers))) == 3


def test_a_post_whose_connection_drops_is_not_sent_twice():
    posts: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        posts.append(request.method)
        assert request.transport is not None
        request.transport.close()
        return web.Response(text="{}")

    async def body():
        runner, url = await _serve(handler)
        pool = HttpPool(url, None, "test")
        try:
            with pytest.raises(ConnectionClosed):
                await pool.request("POST", "/", {}, b"{}", 5)
        finally:
            pool.close()
            await runner.cleanup()

    asyncio.run(body())
    assert posts == ["POST"]


def test_an_answer_that_is_not_http_is_a_protocol_error():
    async def body():
        async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
            await writer.drain()

        server = await asyncio.start_server(talk, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with Client(ConnectionConfig(server=f"http://127.0.0.1:{port}")) as client:
                with pytest.raises(ProtocolError, match="not an HTTP answer"):
                    await client.get(NAMESPACES, "default")
        finally:
            server.close()

    asyncio.run(body())


def test_unsupported_urls_are_refused():
    with pytest.raises(ValueError, match="unsupported server URL"):
        HttpPool("ftp://example.com", None, "test")

    async def body():
        async with Client(ConnectionConfig(server="http://127.0.0.1:1")) as client:
            with pytest.raises(ConnectionFailed):
                await client.get(NAMESPACES, "default")

    asyncio.run(body())


def test_a_connection_with_bytes_beyond_the_answer_is_not_reused():
    async def body():
        connections = 0

        async def talk(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return
                # One answer and the start of a second nobody asked for.
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 200")
                await writer.drain()

        server = await asyncio.start_server(talk, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        pool = HttpPool(f"http://127.0.0.1:{port}", None, "test")
        try:
            for _ in range(2):
                assert await pool.request("GET", "/", {}, None, 5) == (
                    200,
                    {"content-length": "2"},
                    b"{}",
                )
        finally:
            pool.close()
            server.close()
        return connections

    assert asyncio.run(body()) == 2
