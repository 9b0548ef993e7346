"""What the server served, kept for checking clients afterwards: bindings, Lease writes,
writes to pods.

A chaos run asks questions only the server can answer: was each pod bound by exactly one
successful binding call, did a Lease ever change hands before its holder's record had
expired, did a scheduler write to pods it does not own. kube-apiserver answers them from
its audit log; this server keeps :class:`ServerRecords` (when started with faults, or
``records=True``) and serves them as JSON at :data:`RECORDS_PATH`.

Times are the server's monotonic clock, in seconds.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

from kubesched.apiserver.faults import Faults, request_verb

__all__ = ["RECORDS_PATH", "BindingRecord", "LeaseRecord", "PodWrite", "ServerRecords"]

#: Where the records are served (GET; JSON).
RECORDS_PATH = "/debug/kubesched/records"
#: Entries kept per list; beyond it the oldest go (a long run with records on).
MAX_ENTRIES = 1_000_000


@dataclass(frozen=True)
class BindingRecord:
    """One binding call (pods/binding or bindings) and its answer's code."""

    namespace: str
    name: str
    node: str
    code: int
    user_agent: str
    at: float


@dataclass(frozen=True)
class LeaseRecord:
    """One successful Lease write: who holds it after the write."""

    namespace: str
    name: str
    holder: str
    lease_duration_seconds: int
    lease_transitions: int
    user_agent: str
    at: float


@dataclass(frozen=True)
class PodWrite:
    """One successful write to a pod or its subresources, other than its creation."""

    verb: str
    resource: str
    namespace: str
    name: str
    user_agent: str


@dataclass
class ServerRecords:
    """Bindings, Lease writes and pod writes, in the order the server served them."""

    bindings: list[BindingRecord] = field(default_factory=list)
    leases: list[LeaseRecord] = field(default_factory=list)
    pod_writes: list[PodWrite] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def binding(self, namespace: str, name: str, node: str, code: int, user_agent: str) -> None:
        """Record one binding call's answer."""
        self._add(
            self.bindings,
            BindingRecord(namespace, name, node, code, user_agent, time.monotonic()),
        )

    def lease(self, lease: dict[str, Any], user_agent: str) -> None:
        """Record the Lease a successful create or update stored."""
        meta = lease.get("metadata") or {}
        spec = lease.get("spec") or {}
        record = LeaseRecord(
            str(meta.get("namespace") or ""),
            str(meta.get("name") or ""),
            str(spec.get("holderIdentity") or ""),
            int(spec.get("leaseDurationSeconds") or 0),
            int(spec.get("leaseTransitions") or 0),
            user_agent,
            time.monotonic(),
        )
        self._add(self.leases, record)

    def pod_write(
        self, verb: str, resource: str, namespace: str, name: str, user_agent: str
    ) -> None:
        """Record one successful write to a pod."""
        self._add(self.pod_writes, PodWrite(verb, resource, namespace, name, user_agent))

    async def record(
        self,
        request: web.Request,
        response: web.StreamResponse,
        plural: str,
        subresource: str,
        namespace: str,
        name: str,
    ) -> None:
        """Keep what a served write tells: a binding call (whatever its answer), a Lease
        written, a write to an existing pod (``plural``/``subresource``, ``namespace``,
        ``name``: what the path named)."""
        method, status = request.method, response.status
        agent = request.headers.get("User-Agent", "")
        binding = subresource == "binding" or plural == "bindings"
        body: dict[str, Any] | None = None
        if binding and method == "POST":
            body = _loads_quietly(await _read_quietly(request))
            meta = body.get("metadata") or {}
            target = body.get("target") or {}
            name = name or str(meta.get("name") or "")
            node = str(target.get("name") or "") if isinstance(target, dict) else ""
            self.binding(namespace, name, node, status, agent)
        if status >= 300:
            return
        if plural == "leases" and method in ("POST", "PUT", "PATCH"):
            raw = response.body if isinstance(response, web.Response) else None
            if isinstance(raw, bytes):
                self.lease(_loads_quietly(raw), agent)
        elif binding or (plural == "pods" and not (method == "POST" and not subresource)):
            verb = request_verb(method, bool(name), False)
            resource = f"{plural}/{subresource}" if subresource else plural
            self.pod_write(verb, resource, namespace, name, agent)

    def _add(self, entries: list[Any], entry: Any) -> None:
        with self._lock:
            if len(entries) >= MAX_ENTRIES:
                del entries[: MAX_ENTRIES // 10]
            entries.append(entry)

    def to_json(self, faults: Faults | None = None) -> dict[str, Any]:
        """The records as JSON data (camelCase keys), with the ``faults`` spec and what
        they injected when given."""
        with self._lock:
            body: dict[str, Any] = {
                "bindings": [_camel(asdict(b)) for b in self.bindings],
                "leases": [_camel(asdict(le)) for le in self.leases],
                "podWrites": [_camel(asdict(w)) for w in self.pod_writes],
            }
        if faults is not None:
            body["faults"] = {"spec": faults.spec.text, "injected": dict(faults.injected)}
        return body


async def _read_quietly(request: web.Request) -> bytes:
    # The body again (aiohttp keeps it), or nothing if the client cut it short.
    try:
        return await request.read()
    except (ConnectionResetError, web.HTTPRequestEntityTooLarge):
        return b""


def _loads_quietly(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _camel(entry: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in entry.items():
        head, *rest = key.split("_")
        out[head + "".join(word.title() for word in rest)] = value
    return out
