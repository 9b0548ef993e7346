"""Raw HTTP for the fuzz tests, and the oracle every answer is held to.

The official client would refuse most of what the fuzzer sends, so requests go out with
``http.client`` on one kept-alive connection. :func:`check_answer` is the oracle: an
answer comes, within the timeout, as JSON; a failure is a ``Status`` with the code of
the HTTP answer and below 500; :class:`Snapshot` says whether a refused request changed
anything stored.
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

#: Seconds an answer may take before the request counts as hung.
TIMEOUT = 10.0


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    """One kept-alive connection to ``url``; a dropped connection is a test failure."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
            return self._conn, True
        return self._conn, False

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str | None = "application/json",
        accept: str = "application/json",
        watch: bool = False,
    ) -> Reply:
        """Send one request; for a watch, read what arrives in a moment, then hang up."""
        what = f"{method} {path[:300]}"
        for attempt in (1, 2):
            conn, fresh = self._connection()
            try:
                conn.putrequest(method, path, skip_accept_encoding=True)
                conn.putheader("Accept", accept)
                if body is not None:
                    if content_type is not None:
                        conn.putheader("Content-Type", content_type)
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                response = conn.getresponse()
                if watch and response.status == 200:
                    return Reply(response.status, response.headers, self._some(conn, response))
                data = response.read()
                if response.will_close:
                    self.close()
                return Reply(response.status, response.headers, data)
            except TimeoutError:
                self.close()
                raise AssertionError(f"{what}: no answer within {TIMEOUT} s") from None
            except (ConnectionError, http.client.HTTPException) as exc:
                self.close()
                # A kept-alive connection the server had closed meanwhile: once more, fresh.
                if attempt == 1 and not fresh:
                    continue
                raise AssertionError(
                    f"{what}: the connection dropped with no answer ({exc!r})"
                ) from None
        raise AssertionError("unreachable")

    def _some(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> bytes:
        # A watch streams until its timeout: take what comes within a short while (its
        # initial events, an ERROR event), then drop the connection.
        sock = conn.sock
        chunks: list[bytes] = []
        if sock is not None:
            sock.settimeout(0.05)
            try:
                while True:
                    line = response.readline()
                    if not line:
                        break
                    chunks.append(line)
            except (TimeoutError, http.client.IncompleteRead, ValueError):
                pass
        self.close()
        return b"".join(chunks)


#: The longest request line the server reads (Go's 1 MiB of headers); beyond it the answer
#: is a plain-text 400 (kube-apiserver: a plain 431), before any handler runs.
MAX_REQUEST_LINE = 1 << 20


#: The one 500 kube-apiserver itself answers to a client's input: a custom resource's
#: scale read without the replicas its CRD points at (ScaleREST.Get).
_UPSTREAM_500 = b'the spec replicas field \\".spec.replicas\\" does not exist'


def check_answer(reply: Reply, what: str, line_length: int = 0) -> Any:
    """The oracle for one answer: JSON; a failure is a Status naming its own code, below
    500 (but for 504, the wait for a resourceVersion not reached). Returns the body.
    A request line longer than the server reads may get a plain 400 instead."""
    context = f"{what}: {reply.status} {reply.body[:600]!r}"
    if line_length > MAX_REQUEST_LINE - 100 and reply.status in (400, 431):
        return None
    try:
        body = reply.json()
    except ValueError:
        raise AssertionError(f"not JSON: {context}") from None
    assert reply.status < 500 or reply.status == 504 or _UPSTREAM_500 in reply.body, (
        f"server error: {context}"
    )
    if reply.status >= 400:
        assert isinstance(body, dict), context
        assert body.get("kind") == "Status", context
        assert body.get("status") == "Failure", context
        assert body.get("code") == reply.status, context
        assert isinstance(body.get("message"), str), context
    else:
        assert isinstance(body, dict), context
    return body


def check_watch(reply: Reply, what: str, line_length: int = 0) -> None:
    """The oracle for a watch: a 200 streams JSON events, none an internal error; any
    other answer is held to :func:`check_answer`."""
    if reply.status != 200:
        check_answer(reply, what, line_length)
        return
    for line in reply.body.splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        assert event.get("type") in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"), (
            f"{what}: {line[:300]!r}"
        )
        if event["type"] == "ERROR":
            code = event["object"].get("code", 0)
            assert code < 500, f"{what}: {line[:600]!r}"


class Snapshot:
    """What a store holds of one resource, and its resourceVersion, to compare after a
    refused request. Objects being deleted gracefully may go meanwhile (the server's
    reaper): they are left out, and the resourceVersion is compared only when no pod is
    going."""

    def __init__(self, store: Any, res: Any) -> None:
        self.store = store
        self.res = res.storage
        self.version = store.resource_version
        self.objects = self._objects()
        # Only pods are deleted gracefully (the reaper removes them when their grace ends).
        pods = store.resource("", "v1", "pods")
        self.reaping = any("deletionTimestamp" in pod["metadata"] for pod in store.list(pods).items)

    def _objects(self) -> dict[tuple[str, str], str]:
        return {
            (o["metadata"].get("namespace", ""), o["metadata"]["name"]): json.dumps(
                o, sort_keys=True
            )
            for o in self.store.list(self.res).items
        }

    def assert_unchanged(self, what: str) -> None:
        after = self._objects()
        for key, before in self.objects.items():
            if '"deletionTimestamp"' in before:
                continue
            assert after.get(key) == before, f"{what}: refused, yet {self.res.plural} {key} changed"
        added = set(after) - set(self.objects)
        assert not added, f"{what}: refused, yet {self.res.plural} {sorted(added)} were stored"
        if not self.reaping:
            assert self.store.resource_version == self.version, (
                f"{what}: refused, yet the resourceVersion moved from {self.version} "
                f"to {self.store.resource_version}"
            )
