"""Fault injection: the embedded API server misbehaving on purpose, as real ones do.

Real API servers drop watch connections, compact the history that watches resume from,
refuse requests with 429 and 503 under load, fail with 500 and stall. kube-apiserver's
clients (client-go's reflector and rest client, kube-scheduler's leader election) are
built to survive exactly that; ``kubesched apiserver --faults SPEC`` (and
``start_apiserver(faults=...)``, ``start_cluster(faults=...)``) makes this server do it, so
that clients can be shown to survive it too.

A SPEC is ``key=value`` parts separated by commas; a value that is a list continues over
the following commas (``codes=503,429,verbs=create``)::

    errors=R         answer a fraction R (0..1) of requests with an error, before serving
                     them (the server did nothing)
    codes=C,...      the codes errors are drawn from, evenly: 429, 500, 502, 503, 504
                     (default 500,503,429)
    retry-after=S    the Retry-After header (and details.retryAfterSeconds) of 429 and 503
                     answers, whole seconds (default 1; 0: none). 500, 502 and 504 carry none
    resets=R         serve a fraction R of requests, then cut the connection before the
                     answer (the write happened; the client cannot know)
    delay=S | A-B    wait S seconds (or uniformly A to B) before serving each request
    verbs=V,...      errors, resets and delays only for these verbs: get, list, watch,
                     create, update, patch, delete, deletecollection (default: all)
    resources=R,...  ... and only for these resources: pods, pods/binding, leases, ...
                     (default: all)
    drop-watches=S   every S seconds, cut every open watch connection (no clean end)
    window=N         a watch resuming from more than N resourceVersions before the newest
                     gets 410 Gone (expired), as after a compaction; N >= 1
    seed=N           the random generator's seed (default 0): the same spec and the same
                     sequence of requests give the same faults

Faults apply to resource requests only: discovery, /openapi, /version, the health
endpoints and :data:`RECORDS_PATH` are always served. Every injected answer is a
``kind: Status`` whose message says it was injected. Counts of what was injected are in
:attr:`Faults.injected`.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.apiserver import errors

__all__ = [
    "ERROR_CODES",
    "VERBS",
    "FaultSpec",
    "FaultSpecError",
    "Faults",
    "Verdict",
    "parse_faults",
    "request_verb",
]

#: The codes ``errors`` may inject.
ERROR_CODES = (429, 500, 502, 503, 504)
#: kube-apiserver's RequestInfo verbs.
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_LIST_KEYS = ("codes", "verbs", "resources")
_KEYS = (
    "errors",
    "codes",
    "retry-after",
    "resets",
    "delay",
    "verbs",
    "resources",
    "drop-watches",
    "window",
    "seed",
)


class FaultSpecError(ValueError):
    """A fault SPEC that cannot be used; the message names the part and what is wrong."""


@dataclass(frozen=True)
class FaultSpec:
    """What to inject (see the module docstring for the meaning of each field)."""

    errors: float = 0.0
    codes: tuple[int, ...] = (500, 503, 429)
    retry_after: int = 1
    resets: float = 0.0
    delay: tuple[float, float] = (0.0, 0.0)
    verbs: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    drop_watches: float = 0.0
    window: int = 0
    seed: int = 0
    #: The text it was parsed from (for logs and the records).
    text: str = ""

    def matches(self, verb: str, resource: str) -> bool:
        """Whether errors, resets and delays apply to a request for verb and resource."""
        return (not self.verbs or verb in self.verbs) and (
            not self.resources or resource in self.resources
        )


def parse_faults(text: str) -> FaultSpec:
    """Parse a fault SPEC; :class:`FaultSpecError` names the first bad part."""
    values: dict[str, list[str]] = {}
    key = ""
    for number, part in enumerate(text.split(","), start=1):
        part = part.strip()
        where = f"part {number} {part!r}"
        if not part:
            raise FaultSpecError(f"{where}: empty (two commas in a row, or a trailing comma?)")
        name, sep, value = part.partition("=")
        if not sep:
            if key not in _LIST_KEYS:
                raise FaultSpecError(f"{where}: expected key=value; keys: {', '.join(_KEYS)}")
            values[key].append(part)
            continue
        key = name.strip().lower()
        if key not in _KEYS:
            raise FaultSpecError(f"{where}: unknown key {name!r}; keys: {', '.join(_KEYS)}")
        if key in values:
            raise FaultSpecError(f"{where}: {key} given twice")
        values[key] = [value.strip()]
    fields: dict[str, Any] = {}
    for key, given in values.items():
        where = f"{key}={','.join(given)!r}"
        try:
            fields[key.replace("-", "_")] = _PARSERS[key](given)
        except ValueError as exc:
            raise FaultSpecError(f"{where}: {exc}") from None
    return FaultSpec(text=text, **fields)


def _one(given: list[str]) -> str:
    if len(given) != 1 or not given[0]:
        raise ValueError("expected one value")
    return given[0]


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} must be a finite number >= 0")
    return value


def _fraction(given: list[str]) -> float:
    value = _number(_one(given))
    if value > 1:
        raise ValueError(f"the fraction must be between 0 and 1, not {value:g}")
    return value


def _whole(given: list[str], least: int) -> int:
    text = _one(given)
    if not text.isdigit() or int(text) < least:
        raise ValueError(f"{text!r} must be a whole number >= {least}")
    return int(text)


def _codes(given: list[str]) -> tuple[int, ...]:
    codes = []
    for text in given:
        if not text.isdigit() or int(text) not in ERROR_CODES:
            raise ValueError(f"{text!r} is not one of {', '.join(map(str, ERROR_CODES))}")
        codes.append(int(text))
    return tuple(codes)


def _delay(given: list[str]) -> tuple[float, float]:
    low, sep, high = _one(given).partition("-")
    first = _number(low)
    last = _number(high) if sep else first
    if last < first:
        raise ValueError(f"the range {first:g}-{last:g} runs backwards")
    return first, last


def _verbs(given: list[str]) -> frozenset[str]:
    for verb in given:
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r}; verbs: {', '.join(VERBS)}")
    return frozenset(given)


def _resources(given: list[str]) -> frozenset[str]:
    for name in given:
        plural, _, sub = name.partition("/")
        if not plural or not all(c.islower() or c.isdigit() or c in "-." for c in plural + sub):
            raise ValueError(f"{name!r} is not a resource (a plural, maybe /subresource)")
    return frozenset(given)


_PARSERS: dict[str, Callable[[list[str]], Any]] = {
    "errors": _fraction,
    "codes": _codes,
    "retry-after": lambda given: _whole(given, 0),
    "resets": _fraction,
    "delay": _delay,
    "verbs": _verbs,
    "resources": _resources,
    "drop-watches": lambda given: _period(_one(given)),
    "window": lambda given: _whole(given, 1),
    "seed": lambda given: _whole(given, 0),
}


def _period(text: str) -> float:
    value = _number(text)
    if value == 0:
        raise ValueError("the period must be more than 0 seconds")
    return value


def request_verb(method: str, named: bool, watch: bool) -> str:
    """kube-apiserver's RequestInfo verb of a resource request."""
    if watch:
        return "watch"
    if method == "GET":
        return "get" if named else "list"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


@dataclass(frozen=True)
class Verdict:
    """What to do to one request: wait ``delay`` seconds, then answer ``error`` (if
    any) without serving it, or serve it and cut the connection (``reset``)."""

    delay: float = 0.0
    error: errors.ApiError | None = None
    reset: bool = False


_CLEAN = Verdict()

_MESSAGES = {
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected fault"),
    502: ("", "the server is temporarily unavailable (bad gateway)"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "the server was unable to return a response in the time allotted, but may still be "
        "processing the request",
    ),
}


@dataclass
class Faults:
    """The faults of one server: the spec, its seeded random generator, what it injected."""

    spec: FaultSpec
    #: Injected faults by kind (``error 503``, ``reset``, ``delay``, ``watch drop``,
    #: ``expired``).
    injected: Counter[str] = field(default_factory=Counter)
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _started: float = field(default_factory=time.monotonic, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.spec.seed)

    def verdict(self, verb: str, resource: str) -> Verdict:
        """Draw the fate of one request (``resource``: plural, with ``/subresource``)."""
        spec = self.spec
        if not spec.matches(verb, resource):
            return _CLEAN
        if not (spec.errors or spec.resets or spec.delay[1]):
            return _CLEAN
        with self._lock:
            rng = self._rng
            low, high = spec.delay
            delay = rng.uniform(low, high) if high else 0.0
            error = None
            reset = False
            if spec.errors and rng.random() < spec.errors:
                error = self._error(rng.choice(spec.codes))
                self.injected[f"error {error.code}"] += 1
            elif spec.resets and verb != "watch" and rng.random() < spec.resets:
                reset = True
                self.injected["reset"] += 1
            if delay:
                self.injected["delay"] += 1
        return Verdict(delay, error, reset)

    def _error(self, code: int) -> errors.ApiError:
        reason, message = _MESSAGES[code]
        message = f"{message} (injected by --faults)"
        retry = self.spec.retry_after if code in (429, 503) else 0
        details: errors.StatusDetails | None = {"retryAfterSeconds": retry} if retry else None
        return errors.failure(code, reason, message, details)

    def next_watch_drop(self, now: float) -> float | None:
        """When a watch open at ``now`` is cut (monotonic seconds), or None: the first
        tick of the ``drop-watches`` clock after ``now``."""
        period = self.spec.drop_watches
        if not period:
            return None
        ticks = math.floor((now - self._started) / period) + 1
        return self._started + ticks * period

    def watch_dropped(self) -> None:
        """Count one cut watch."""
        with self._lock:
            self.injected["watch drop"] += 1

    def expired(self, version: int, newest: int) -> bool:
        """Whether a watch resuming from ``version`` meets 410 Gone under ``window``
        (counted when it does)."""
        window = self.spec.window
        if not window or version <= 0 or newest - version <= window:
            return False
        with self._lock:
            self.injected["expired"] += 1
        return True
