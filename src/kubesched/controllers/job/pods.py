"""What the Job controller reads off a pod: phase, readiness, termination, the tracking
finalizer, restarts, when it finished, and the order in which active pods are deleted
(``controller.ActivePods``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.objects.workloadpods import JOB_TRACKING_FINALIZER

__all__ = [
    "JOB_TRACKING_FINALIZER",
    "RawObject",
    "active_pods_order_key",
    "controller_ref",
    "finished_time",
    "format_time",
    "has_tracking_finalizer",
    "is_active",
    "is_deleting",
    "is_ready",
    "is_terminal",
    "is_terminating",
    "meta",
    "parse_time",
    "phase",
    "restart_count",
    "status",
    "uid",
]

RawObject = dict[str, Any]


_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def meta(obj: RawObject) -> RawObject:
    """``metadata`` (empty if missing)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def status(obj: RawObject) -> RawObject:
    """``status`` (empty if missing)."""
    value = obj.get("status")
    return value if isinstance(value, dict) else {}


def phase(pod: RawObject) -> str:
    """``status.phase`` (Pending if unset)."""
    return str(status(pod).get("phase") or "Pending")


def uid(obj: RawObject) -> str:
    """``metadata.uid``."""
    return str(meta(obj).get("uid") or "")


def is_terminal(pod: RawObject) -> bool:
    """Succeeded or Failed."""
    return phase(pod) in ("Succeeded", "Failed")


def is_deleting(pod: RawObject) -> bool:
    """The pod has a deletionTimestamp."""
    return bool(meta(pod).get("deletionTimestamp"))


def is_active(pod: RawObject) -> bool:
    """Neither finished nor being deleted (``FilterActivePods``)."""
    return not is_terminal(pod) and not is_deleting(pod)


def is_terminating(pod: RawObject) -> bool:
    """Being deleted and not finished (``CountTerminatingPods``)."""
    return is_deleting(pod) and not is_terminal(pod)


def is_ready(pod: RawObject) -> bool:
    """The Ready condition is True."""
    for cond in status(pod).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def has_tracking_finalizer(pod: RawObject) -> bool:
    """Whether the pod carries :data:`JOB_TRACKING_FINALIZER`."""
    return JOB_TRACKING_FINALIZER in (meta(pod).get("finalizers") or [])


def controller_ref(obj: RawObject) -> RawObject | None:
    """The owner reference with ``controller: true``, if any."""
    for ref in meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def restart_count(pod: RawObject) -> int:
    """Restarts of all containers, init containers included."""
    st = status(pod)
    total = 0
    for field in ("initContainerStatuses", "containerStatuses"):
        for cs in st.get(field) or []:
            total += int(cs.get("restartCount") or 0)
    return total


def parse_time(text: Any) -> datetime | None:
    """An RFC 3339 timestamp, or None."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def format_time(moment: datetime) -> str:
    """A timestamp as the API writes it (seconds, ``Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def finished_time(pod: RawObject) -> datetime:
    """When the pod finished: its containers' last finish, else the Ready=False
    transition, else its deletion minus the grace period, else its creation
    (``getFinishedTime``)."""
    st = status(pod)
    latest: datetime | None = None
    statuses = st.get("containerStatuses") or []
    for cs in statuses:
        finished = parse_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if finished is None:
            latest = None
            break
        latest = finished if latest is None or finished > latest else latest
    if latest is not None:
        return latest
    for cond in st.get("conditions") or []:
        if cond.get("type") == "Ready" and cond.get("status") == "False":
            moment = parse_time(cond.get("lastTransitionTime"))
            if moment is not None:
                return moment
    deleted = parse_time(meta(pod).get("deletionTimestamp"))
    if deleted is not None:
        return deleted - timedelta(seconds=int(meta(pod).get("deletionGracePeriodSeconds") or 0))
    return parse_time(meta(pod).get("creationTimestamp")) or datetime.now(UTC)


def active_pods_order_key(pod: RawObject) -> tuple[Any, ...]:
    """Sort key putting the pods to delete first: unscheduled before scheduled, pending
    before running, not ready before ready, more restarts before fewer, newer before
    older (``controller.ActivePods``)."""
    spec = pod.get("spec") or {}
    created = parse_time(meta(pod).get("creationTimestamp"))
    stamp = created.timestamp() if created is not None else 0.0
    return (
        bool(spec.get("nodeName")),
        _PHASE_RANK.get(phase(pod), 0),
        is_ready(pod),
        -restart_count(pod),
        -stamp,
    )
