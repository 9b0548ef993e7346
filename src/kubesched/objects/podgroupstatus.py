"""A PodGroup's next status from its members, as scheduler-plugins v0.34.7's PodGroup
controller computes it (``pkg/controllers/podgroup_controller.go``, ``Reconcile``).

A pure function of API objects, so that the controller writes it and the policy lab can
say what phase a simulated gang would reach. One call is one reconcile: the phase moves
at most one step (``""`` → Pending → Scheduling → ...), and the controller calls again
when its own write comes back as an update, as upstream's reconciler does.

Upstream's steps:

* a group in Finished or Failed is final: nothing changes;
* no phase yet: Pending;
* Pending: Scheduling once at least ``minMember`` member pods exist, with ``occupiedBy``
  naming the first member's owners; the counters are not touched;
* any other phase: the counters are recounted (Running, Succeeded, Failed pods); with
  fewer than ``minMember`` members the group goes back to Pending; otherwise it is
  Scheduling while running + succeeded < minMember and Running from there; Failed once
  any member failed and failed + running + succeeded ≥ minMember; Finished once
  succeeded ≥ minMember (the last rule wins).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kubesched.objects.podgroup import (
    PHASE_FAILED,
    PHASE_FINISHED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SCHEDULING,
)

__all__ = ["FINAL_PHASES", "SCHEDULE_TIMEOUT", "compute_status", "schedule_timed_out"]

FINAL_PHASES = frozenset({PHASE_FINISHED, PHASE_FAILED})
#: How long after its creation a group that never ran stops being reconciled (upstream:
#: its pods may have been garbage collected by then).
SCHEDULE_TIMEOUT = timedelta(hours=48)

Raw = Mapping[str, Any]


def _counts(pods: Sequence[Raw]) -> tuple[int, int, int]:
    running = succeeded = failed = 0
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Running":
            running += 1
        elif phase == "Succeeded":
            succeeded += 1
        elif phase == "Failed":
            failed += 1
    return running, succeeded, failed


def occupied_by(pod: Raw) -> str | None:
    """``namespace/owner`` for each of ``pod``'s owners, sorted and comma-joined; None
    when it has no owner (upstream then leaves ``occupiedBy`` as it was)."""
    meta = pod.get("metadata") or {}
    refs = meta.get("ownerReferences") or ()
    names = sorted(f"{meta.get('namespace') or ''}/{ref.get('name') or ''}" for ref in refs)
    return ",".join(names) if names else None


def _parse_time(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def schedule_timed_out(group: Raw) -> bool:
    """Whether upstream stops reconciling ``group``: Pending or Scheduling, nothing
    running, and ``scheduleStartTime`` more than 48 hours after its creation (nothing in
    v0.34.7 sets ``scheduleStartTime``; a group that carries one is honoured)."""
    status = group.get("status") or {}
    if status.get("phase") not in (PHASE_PENDING, PHASE_SCHEDULING) or status.get("running"):
        return False
    start = _parse_time(status.get("scheduleStartTime"))
    created = _parse_time((group.get("metadata") or {}).get("creationTimestamp"))
    return start is not None and created is not None and start - created > SCHEDULE_TIMEOUT


def compute_status(group: Raw, pods: Sequence[Raw]) -> dict[str, Any]:
    """The status ``group`` (a PodGroup as stored) should have, given its member pods
    (the pods of its namespace labelled with its name), after one reconcile."""
    status: dict[str, Any] = dict(group.get("status") or {})
    phase = status.get("phase") or ""
    if phase in FINAL_PHASES:
        return status
    min_member = int((group.get("spec") or {}).get("minMember") or 0)
    if phase == "":
        status["phase"] = PHASE_PENDING
        return status
    if phase == PHASE_PENDING:
        if len(pods) >= min_member:
            status["phase"] = PHASE_SCHEDULING
            owners = occupied_by(pods[0]) if pods else None
            if owners is not None:
                status["occupiedBy"] = owners
        return status
    running, succeeded, failed = _counts(pods)
    # Zero counts are omitted on the wire (omitempty), as upstream writes them.
    for key, value in (("running", running), ("succeeded", succeeded), ("failed", failed)):
        if value:
            status[key] = value
        else:
            status.pop(key, None)
    if len(pods) < min_member:
        status["phase"] = PHASE_PENDING
        return status
    status["phase"] = PHASE_SCHEDULING if succeeded + running < min_member else PHASE_RUNNING
    if failed and failed + running + succeeded >= min_member:
        status["phase"] = PHASE_FAILED
    if succeeded >= min_member:
        status["phase"] = PHASE_FINISHED
    return status
