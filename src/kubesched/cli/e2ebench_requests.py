"""API requests per scheduling attempt, for ``kubesched bench --e2e``.

The scheduler counts its own requests (``kubesched_api_requests_total`` on its
``/metrics``: by client, verb, resource and code). The benchmark reads them before and
after each phase, once they have settled (events and status patches are written in the
background), and divides by the attempts of the phase:

- **scheduled**: the pods that fit (the benchmark's main run): a binding and a
  ``Scheduled`` event each, upstream's cost;
- **unschedulable**: pods that fit nowhere, created after the others are bound: each
  costs a FailedScheduling event and a PodScheduled condition (upstream's cost).

The leader election client's requests are left out: they do not depend on the pods.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["AttemptCost", "parse_requests", "per_attempt", "settled"]

_SAMPLE = re.compile(r"^kubesched_api_requests_total\{([^}]*)\} (\S+)$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')
_ATTEMPTS = re.compile(r'^scheduler_schedule_attempts_total\{[^}]*result="(\w+)"[^}]*\} (\S+)$')

#: CPU every pod of the unschedulable phase asks for: more than any node has.
UNSCHEDULABLE_CPU = "100000"


def parse_requests(text: str) -> dict[str, float]:
    """``"verb resource"`` → requests, from a ``/metrics`` text (all codes; the
    scheduler's and the events' clients), plus ``attempts:<result>`` counts."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        if match := _SAMPLE.match(line):
            labels = dict(_LABEL.findall(match[1]))
            if labels.get("client") == "leader-election":
                continue
            key = f"{labels.get('verb', '')} {labels.get('resource', '')}"
            found[key] = found.get(key, 0.0) + float(match[2])
        elif match := _ATTEMPTS.match(line):
            key = f"attempts:{match[1]}"
            found[key] = found.get(key, 0.0) + float(match[2])
    return found


def per_attempt(
    before: dict[str, float], after: dict[str, float], result: str
) -> tuple[int, dict[str, float]]:
    """Attempts with ``result`` between two readings, and each kind of request per
    attempt (kinds that did not change are left out)."""
    key = f"attempts:{result}"
    attempts = int(after.get(key, 0.0) - before.get(key, 0.0))
    per: dict[str, float] = {}
    for kind, n in after.items():
        if kind.startswith("attempts:"):
            continue
        delta = n - before.get(kind, 0.0)
        if delta and attempts:
            per[kind] = round(delta / attempts, 3)
    return attempts, dict(sorted(per.items()))


async def settled(
    read: Callable[[], Awaitable[dict[str, float]]],
    quiet: float = 1.0,
    timeout: float = 60.0,
) -> dict[str, float]:
    """Read until two readings ``quiet`` seconds apart agree (background writes done),
    at most ``timeout`` seconds; the last reading."""
    deadline = time.monotonic() + timeout
    last = await read()
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet)
        now = await read()
        if now == last:
            break
        last = now
    return last


class AttemptCost:
    """Requests per attempt of the two phases (``to_json`` for the report)."""

    def __init__(self) -> None:
        self.scheduled: tuple[int, dict[str, float]] = (0, {})
        self.unschedulable: tuple[int, dict[str, float]] = (0, {})
        self.unschedulable_pods = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "per_scheduled_attempt": round(sum(self.scheduled[1].values()), 3),
            "per_unschedulable_attempt": round(sum(self.unschedulable[1].values()), 3),
            "scheduled_attempts": self.scheduled[0],
            "unschedulable_attempts": self.unschedulable[0],
            "unschedulable_pods": self.unschedulable_pods,
            "scheduled": self.scheduled[1],
            "unschedulable": self.unschedulable[1],
        }


def text(data: dict[str, Any]) -> str:
    """The report's line for ``AttemptCost.to_json()``."""

    def kinds(per: dict[str, float]) -> str:
        return ", ".join(f"{k} {v}" for k, v in per.items()) or "none"

    return (
        f"  API requests    {data['per_scheduled_attempt']} per scheduled attempt "
        f"({kinds(data['scheduled'])}); {data['per_unschedulable_attempt']} per "
        f"unschedulable attempt ({kinds(data['unschedulable'])}; "
        f"{data['unschedulable_pods']} pods that fit nowhere)"
    )
