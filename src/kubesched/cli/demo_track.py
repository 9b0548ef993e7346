"""What ``kubesched demo`` sees of the scheduler's work: it watches pods and events through
the API, as ``kubectl get pods,events -w`` would, prints a line per scheduler event, and
tells when a set of pods has settled.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import TextIO

from kubesched.kube import Client, Informer
from kubesched.kube.resources import EVENTS, PODS, RawObject

__all__ = ["SCHEDULER_REASONS", "PodTracker", "pod_scheduled_condition"]

#: The event reasons the scheduler writes (upstream's ``Scheduled``, ``FailedScheduling``
#: and the preemption victim's ``Preempted``).
SCHEDULER_REASONS = ("Scheduled", "FailedScheduling", "Preempted")


def pod_scheduled_condition(raw: RawObject) -> RawObject | None:
    """The pod's PodScheduled condition, if it has one."""
    for condition in (raw.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def _name(raw: RawObject) -> str:
    return str((raw.get("metadata") or {}).get("name", ""))


class PodTracker:
    """Follows the pods and events of one namespace; prints progress to ``out`` (None:
    silent). ``zone_of(node_name)`` labels placements in the progress lines."""

    def __init__(
        self,
        client: Client,
        namespace: str,
        out: TextIO | None,
        zone_of: Callable[[str], str],
        started: float,
    ) -> None:
        self.namespace = namespace
        self.out = out
        self.zone_of = zone_of
        self.started = started
        self.pods: Informer[RawObject] = Informer(client, PODS.raw, namespace)
        self.events: Informer[RawObject] = Informer(client, EVENTS, namespace)
        #: When the demo created each pod, and when the tracker first saw it bound.
        self.created_at: dict[str, float] = {}
        self.bound_at: dict[str, float] = {}
        #: Scheduler event reasons per pod name, in the order they arrived.
        self.reasons: dict[str, list[str]] = {}
        self._changed = asyncio.Event()
        self.pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_gone)
        self.events.add_handler(self._on_event, lambda _, new: self._on_event(new, seen=True))

    async def start(self, timeout: float) -> None:
        """Start both informers and wait for their first lists."""
        for informer in (self.pods, self.events):
            informer.start()
        await asyncio.wait_for(
            asyncio.gather(self.pods.wait_for_sync(), self.events.wait_for_sync()), timeout
        )

    async def stop(self) -> None:
        """Stop both informers."""
        for informer in (self.pods, self.events):
            await informer.stop()

    def pod(self, name: str) -> RawObject | None:
        """The pod as last seen (None once deleted)."""
        return self.pods.get(f"{self.namespace}/{name}")

    # --- handlers -------------------------------------------------------------------

    def _on_pod(self, raw: RawObject) -> None:
        name = _name(raw)
        if (raw.get("spec") or {}).get("nodeName") and name not in self.bound_at:
            self.bound_at[name] = time.monotonic()
        self._changed.set()

    def _on_gone(self, raw: RawObject) -> None:
        self._changed.set()

    def _on_event(self, event: RawObject, seen: bool = False) -> None:
        reason = str(event.get("reason", ""))
        if reason not in SCHEDULER_REASONS:
            return
        name = str((event.get("involvedObject") or {}).get("name", ""))
        # An update is a repeat of an event already counted (its count went up).
        if not seen:
            self.reasons.setdefault(name, []).append(reason)
        self._changed.set()
        if self.out is None or seen:
            return
        message = str(event.get("message", ""))
        if reason == "Scheduled":
            node = message.rsplit(" to ", 1)[-1]
            detail = f"{name} → {node} ({self.zone_of(node)})"
        else:
            detail = f"{name}: {message}"
        elapsed = time.monotonic() - self.started
        self.out.write(f"  {elapsed:6.2f}s  {reason:<16}  {detail}\n")
        self.out.flush()

    # --- waiting --------------------------------------------------------------------

    def unsettled(self, names: Iterable[str]) -> list[str]:
        """The pods of ``names`` whose scheduling has not come to rest: a settled pod is
        bound with its Scheduled event written, or unschedulable with no node nominated
        and its FailedScheduling event written; a deleted pod is settled once its
        Preempted event (if it was preempted) is in."""
        waiting = []
        for name in names:
            raw = self.pod(name)
            reasons = self.reasons.get(name, [])
            if raw is None:
                # Not seen yet, or deleted: a preemption victim is done once its
                # Preempted event is in.
                if "Preempted" not in reasons:
                    waiting.append(name)
                continue
            if (raw.get("metadata") or {}).get("deletionTimestamp"):
                waiting.append(name)
            elif (raw.get("spec") or {}).get("nodeName"):
                if "Scheduled" not in reasons:
                    waiting.append(name)
            else:
                condition = pod_scheduled_condition(raw) or {}
                nominated = (raw.get("status") or {}).get("nominatedNodeName")
                unschedulable = condition.get("status") == "False" and not nominated
                if not unschedulable or "FailedScheduling" not in reasons:
                    waiting.append(name)
        return waiting

    async def wait(self, check: Callable[[], list[str]], timeout: float) -> list[str]:
        """Wait until ``check()`` returns nothing, or ``timeout`` seconds pass; returns
        what ``check()`` last returned (empty: done)."""
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            left = check()
            remaining = deadline - time.monotonic()
            if not left or remaining <= 0:
                return left
            # Every pod or event change the informers apply wakes us.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    def not_running(self, names: Iterable[str]) -> list[str]:
        """The bound pods of ``names`` whose phase is not yet Running."""
        waiting = []
        for name in names:
            raw = self.pod(name)
            if raw is None or not (raw.get("spec") or {}).get("nodeName"):
                continue
            if (raw.get("status") or {}).get("phase") != "Running":
                waiting.append(name)
        return waiting

    def bind_latencies(self) -> list[float]:
        """Seconds from each bound pod's creation to the tracker seeing its binding."""
        return sorted(
            self.bound_at[name] - created
            for name, created in self.created_at.items()
            if name in self.bound_at
        )
