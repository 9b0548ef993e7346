"""A lean HTTP/1.1 client for the plain request/answer calls of :class:`~kubesched.kube.Client`.

The scheduler makes two small calls per pod (the binding and its event); through
aiohttp's client each costs about 190 µs of CPU, more than the scheduling cycle itself
at a few thousand nodes. Kubernetes' REST calls need little of HTTP: a request with a
JSON body, an answer with ``Content-Length`` or chunked, keep-alive. :class:`HttpPool`
does exactly that over asyncio protocols (TLS through the same ``ssl.SSLContext``), with
a bounded pool of kept-alive connections. Watches stay on aiohttp (streams).

Errors: ``OSError`` (refused, reset, closed early: :class:`ConnectionClosed`),
``TimeoutError``, ``ValueError`` for an answer that is not HTTP; the client translates
them into its own error hierarchy.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["ConnectionClosed", "HttpAnswer", "HttpPool"]

#: status, lower-cased headers, body.
HttpAnswer = tuple[int, dict[str, str], bytes]
_MAX_HEAD = 64 * 1024


class ConnectionClosed(ConnectionError):
    """The server closed the connection before the answer was complete."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection; answers one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buffer = bytearray()
        self._answer: asyncio.Future[HttpAnswer] | None = None
        self._status = 0
        self._headers: dict[str, str] = {}
        self._length: int | None = None  # body length; None: chunked or until close
        self._chunked = False
        self._in_body = False
        self._body = bytearray()
        self._received = False
        self.keep_alive = True

    # --- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._received = True
        if self._answer is None or self._answer.done():
            # Nothing was asked: a server that talks out of turn is not to be trusted
            # with the next request.
            self.close()
            return
        self._buffer += data
        try:
            self._parse()
        except ValueError as exc:
            self.closed = True
            self._answer.set_exception(exc)
            if self.transport is not None:
                self.transport.close()

    def eof_received(self) -> bool:
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        answer = self._answer
        if answer is None or answer.done():
            return
        if self._in_body and self._length is None and not self._chunked:
            # A body delimited by the end of the connection (HTTP/1.0 style).
            self._finish()
            return
        reason = f": {exc}" if exc is not None else ""
        answer.set_exception(ConnectionClosed(f"connection closed before the answer{reason}"))

    # --- requests -----------------------------------------------------------------------

    @property
    def received_anything(self) -> bool:
        return self._received

    def send(self, payload: bytes, answer: asyncio.Future[HttpAnswer]) -> None:
        assert self.transport is not None
        self._answer = answer
        self._received = False
        self._status, self._headers, self._length = 0, {}, None
        self._chunked = self._in_body = False
        self._body = bytearray()
        self.transport.write(payload)

    def _parse(self) -> None:
        buf = self._buffer
        if not self._in_body:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > _MAX_HEAD:
                    raise ValueError("the answer's header is too long")
                return
            head = bytes(buf[:end]).decode("latin-1").split("\r\n")
            del buf[: end + 4]
            status_line = head[0].split(" ", 2)
            if len(status_line) < 2 or not status_line[0].startswith("HTTP/"):
                raise ValueError(f"not an HTTP answer: {head[0][:80]!r}")
            try:
                self._status = int(status_line[1])
            except ValueError:
                raise ValueError(f"not an HTTP status: {head[0][:80]!r}") from None
            headers = self._headers
            for line in head[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            length = headers.get("content-length")
            if not self._chunked and length is not None:
                try:
                    self._length = int(length)
                except ValueError:
                    raise ValueError(f"bad Content-Length {length!r}") from None
            connection = headers.get("connection", "").lower()
            self.keep_alive = connection != "close" and status_line[0] != "HTTP/1.0"
            if self._status in (204, 304) or 100 <= self._status < 200:
                self._length = 0
            self._in_body = True
        if self._chunked:
            self._parse_chunks()
        elif self._length is not None and len(buf) >= self._length:
            self._body += buf[: self._length]
            del buf[: self._length]
            self._finish()

    def _parse_chunks(self) -> None:
        buf = self._buffer
        while True:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                return
            size_text = bytes(buf[:line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ValueError(f"bad chunk size {size_text[:20]!r}") from None
            if size == 0:
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    return
                del buf[: trailer_end + 4]
                self._finish()
                return
            start = line_end + 2
            if len(buf) < start + size + 2:
                return
            self._body += buf[start : start + size]
            del buf[: start + size + 2]

    def _finish(self) -> None:
        answer, self._answer = self._answer, None
        self._in_body = False
        if answer is not None and not answer.done():
            answer.set_result((self._status, self._headers, bytes(self._body)))
        # Bytes beyond the answer mean we no longer know where the next one starts.
        if (not self.keep_alive or self._buffer) and self.transport is not None:
            self.closed = True
            self.transport.close()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class HttpPool:
    """Kept-alive connections to one server (``http://`` or ``https://`` URL, with an
    optional path prefix); at most ``limit`` requests in flight."""

    def __init__(
        self,
        server: str,
        ssl_context: ssl.SSLContext | None,
        user_agent: str,
        limit: int = 100,
    ) -> None:
        url = urlsplit(server)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"unsupported server URL {server!r}")
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.prefix = url.path.rstrip("/")
        if url.scheme == "https" and ssl_context is None:
            # As aiohttp's ssl=False: the caller asked for no verification.
            ssl_context = ssl.create_default_context()
            ssl_context.check_hostname = False
            ssl_context.verify_mode = ssl.CERT_NONE
        self.ssl = ssl_context
        netloc = url.netloc.rpartition("@")[2]
        self._fixed = f"Host: {netloc}\r\nUser-Agent: {user_agent}\r\n"
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(limit)

    async def request(
        self,
        method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float,
    ) -> HttpAnswer:
        """Send one request (``path`` includes its query) and return the whole answer."""
        head = [f"{method} {self.prefix}{path} HTTP/1.1\r\n", self._fixed]
        head.extend(f"{name}: {value}\r\n" for name, value in headers.items())
        head.append(f"Content-Length: {len(body)}\r\n\r\n" if body is not None else "\r\n")
        payload = "".join(head).encode("latin-1") + (body or b"")
        async with self._slots, asyncio.timeout(timeout):
            while True:
                conn, reused = await self._connection()
                answer: asyncio.Future[HttpAnswer] = asyncio.get_running_loop().create_future()
                conn.send(payload, answer)
                try:
                    result = await answer
                except ConnectionClosed:
                    conn.close()
                    # A kept-alive connection the server had closed meanwhile: nothing
                    # was processed if nothing came back; only safe to resend for
                    # idempotent methods.
                    if reused and not conn.received_anything and method in ("GET", "PUT"):
                        continue
                    raise
                except BaseException:
                    conn.close()
                    raise
                if not conn.closed:
                    self._idle.append(conn)
                return result

    async def _connection(self) -> tuple[_Connection, bool]:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                return conn, True
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(
            _Connection,
            self.host,
            self.port,
            ssl=self.ssl,
            server_hostname=self.host if self.ssl is not None else None,
        )
        return protocol, False

    def close(self) -> None:
        """Close every idle connection (those in use close when their request ends)."""
        for conn in self._idle:
            conn.close()
        self._idle.clear()
