"""The pod states workload controllers count, and which pods a scale-down removes first.

Pure functions of pods as plain dicts, after upstream's ``pkg/api/v1/pod`` (``IsPodReady``,
``IsPodAvailable``) and ``pkg/controller/controller_utils.go`` (``IsPodActive``,
``ActivePodsWithRanks`` with the PodDeletionCost and LogarithmicScaleDown features on, as
they are by default in 1.34). Timestamps are RFC 3339 strings as the API writes them;
``now`` is seconds since the epoch, so that callers can inject a clock.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

__all__ = [
    "DELETION_COST_ANNOTATION",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "parse_time",
    "pod_ready_condition",
    "pods_to_delete",
    "rank_by_related_pods_on_same_node",
]

#: A pod's cost of deletion relative to its siblings (lower goes first).
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_NS = 1_000_000_000


def parse_time(value: object) -> float | None:
    """An RFC 3339 timestamp as seconds since the epoch; None if absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """``IsPodActive``: neither Succeeded nor Failed, and not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return False
    return not (pod.get("metadata") or {}).get("deletionTimestamp")


def pod_ready_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod's ``Ready`` condition, if it has one."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition
    return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """``IsPodReady``: its Ready condition is True."""
    condition = pod_ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: ready, and for ``min_ready_seconds`` already (by the Ready
    condition's lastTransitionTime) when that is not 0."""
    condition = pod_ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return False
    if min_ready_seconds == 0:
        return True
    since = parse_time(condition.get("lastTransitionTime"))
    return since is not None and since + min_ready_seconds < now


def _deletion_cost(pod: Mapping[str, Any]) -> int:
    """The pod-deletion-cost annotation (an int32); 0 when absent or unreadable, as
    ``GetDeletionCostFromPodAnnotations`` errors are ignored by the ranking."""
    text = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST_ANNOTATION)
    if not isinstance(text, str):
        return 0
    try:
        cost = int(text.strip())
    except ValueError:
        return 0
    return cost if -(2**31) <= cost < 2**31 else 0


def _max_restarts(pod: Mapping[str, Any]) -> int:
    status = pod.get("status") or {}
    counts = [
        int(c.get("restartCount") or 0)
        for c in (status.get("containerStatuses") or ())
        if isinstance(c, dict)
    ]
    return max(counts, default=0)


class _Ranked:
    """What the comparison reads of one pod, read once."""

    __slots__ = (
        "assigned",
        "cost",
        "created",
        "phase",
        "pod",
        "rank",
        "ready",
        "ready_at",
        "restarts",
        "uid",
    )

    def __init__(self, pod: Mapping[str, Any], rank: int) -> None:
        meta = pod.get("metadata") or {}
        self.pod = pod
        self.rank = rank
        self.assigned = bool((pod.get("spec") or {}).get("nodeName"))
        self.phase = _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase") or "", 0)
        condition = pod_ready_condition(pod)
        self.ready = condition is not None and condition.get("status") == "True"
        self.ready_at = (
            parse_time(condition.get("lastTransitionTime")) if condition and self.ready else None
        )
        self.cost = _deletion_cost(pod)
        self.restarts = _max_restarts(pod)
        self.created = parse_time(meta.get("creationTimestamp"))
        self.uid = str(meta.get("uid") or "")


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    """``afterOrZero``: a missing time first, else the later one."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank(moment: float, now: float) -> int:
    age = int((now - moment) * _NS)
    return int(math.log2(age)) if age > 0 else -1


def _younger(a: _Ranked, b: _Ranked, t1: float | None, t2: float | None, now: float) -> bool:
    """Rules 6 and 8 with LogarithmicScaleDown: times compared by the power of two of
    their age, equal powers ordered by UID (a pseudo-random but stable order)."""
    if t1 is None or t2 is None:
        return _after_or_zero(t1, t2)
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return a.uid < b.uid
    return diff < 0


def _less(a: _Ranked, b: _Ranked, now: float) -> bool:
    """``ActivePodsWithRanks.Less``: whether ``a`` should be deleted before ``b``."""
    if a.assigned != b.assigned:  # 1. unassigned first
        return not a.assigned
    if a.phase != b.phase:  # 2. Pending < Unknown < Running
        return a.phase < b.phase
    if a.ready != b.ready:  # 3. not ready first
        return not a.ready
    if a.cost != b.cost:  # 4. lower deletion cost first
        return a.cost < b.cost
    if a.rank != b.rank:  # 5. doubled up with more related pods first
        return a.rank > b.rank
    if a.ready and b.ready and a.ready_at != b.ready_at:  # 6. ready for less time first
        return _younger(a, b, a.ready_at, b.ready_at, now)
    if a.restarts != b.restarts:  # 7. more restarts first
        return a.restarts > b.restarts
    if a.created != b.created:  # 8. newer first
        return _younger(a, b, a.created, b.created, now)
    return False


def rank_by_related_pods_on_same_node(
    pods: Sequence[Mapping[str, Any]], related: Iterable[Mapping[str, Any]]
) -> list[int]:
    """``getPodsRankedByRelatedPodsOnSameNode``: for each pod, how many active pods of
    ``related`` (the pods of every ReplicaSet with the same owner) share its node."""
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = (pod.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    return [on_node.get((pod.get("spec") or {}).get("nodeName") or "", 0) for pod in pods]


def pods_to_delete(
    pods: Sequence[Mapping[str, Any]],
    related: Iterable[Mapping[str, Any]],
    count: int,
    now: float,
) -> list[Mapping[str, Any]]:
    """``getPodsToDelete``: the ``count`` pods of ``pods`` a scale-down removes first
    (unscheduled, then pending, not ready, cheaper to delete, doubled up on a node,
    ready for less time, restarted more, newer)."""
    if count >= len(pods):
        return list(pods)
    ranks = rank_by_related_pods_on_same_node(pods, related)
    ranked = [_Ranked(pod, rank) for pod, rank in zip(pods, ranks, strict=True)]

    def compare(a: _Ranked, b: _Ranked) -> int:
        if _less(a, b, now):
            return -1
        return 1 if _less(b, a, now) else 0

    ranked.sort(key=functools.cmp_to_key(compare))
    return [entry.pod for entry in ranked[:count]]
