"""PodDisruptionBudget arithmetic, as ``pkg/controller/disruption`` computes it.

Pure functions of wire objects (plain dicts), shared by the disruption controller
(:mod:`kubesched.controllers.disruption`, which writes PDB status) and the API server's
eviction subresource (which reads it and needs the same idea of "covered" and "ready"):

* the pods a PDB covers are the pods of its namespace its ``spec.selector`` matches (an
  empty selector matches every pod, a missing one none — policy/v1);
* ``currentHealthy``: those not being deleted, not in ``disruptedPods``, Running and Ready;
* ``minAvailable`` (int or percentage, rounded up) gives ``desiredHealthy``;
  ``maxUnavailable`` (int or percentage, rounded up) gives ``expectedPods - maxUnavailable``;
* ``disruptionsAllowed = max(currentHealthy - desiredHealthy, 0)``, the condition
  ``DisruptionAllowed`` (SufficientPods / InsufficientPods), ``observedGeneration``;
* ``disruptedPods`` entries are dropped once the pod is being deleted or gone, or after
  :data:`DELETION_TIMEOUT` seconds.

Difference from upstream: ``expectedPods`` is the number of matched pods. Upstream takes
it from the scale of the pods' controllers (Deployment, ReplicaSet, StatefulSet, ...) for
percentages and ``maxUnavailable``, and refuses (condition False, SyncFailed) when pods
have no controller.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import LabelSelector

__all__ = [
    "DELETION_TIMEOUT",
    "compute_status",
    "is_ready",
    "matches",
    "pdb_selector",
]

#: How long an eviction's ``disruptedPods`` entry waits for the pod's deletion (upstream 2 min).
DELETION_TIMEOUT = 120.0

Object = Mapping[str, Any]


def pdb_selector(pdb: Object) -> LabelSelector | None:
    """The PDB's selector; None when it selects nothing (missing or not decodable)."""
    selector = (pdb.get("spec") or {}).get("selector")
    if not isinstance(selector, dict):
        return None
    try:
        return LabelSelector.from_dict(selector)
    except ObjectError:
        return None


def matches(pdb: Object, pod: Object) -> bool:
    """Whether ``pdb`` covers ``pod`` (same namespace, selector matches)."""
    if (pdb["metadata"].get("namespace") or "") != (pod["metadata"].get("namespace") or ""):
        return False
    selector = pdb_selector(pdb)
    return selector is not None and selector.matches(pod["metadata"].get("labels") or {})


def is_ready(pod: Object) -> bool:
    """Running with the Ready condition True."""
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ()
        if isinstance(c, dict)
    )


def _scaled(value: Any, total: int) -> int:
    # intstr.GetScaledValueFromIntOrPercent with roundUp=true.
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        try:
            percent = int(text[:-1])
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: {text!r}") from None
        return math.ceil(percent * total / 100)
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: {text!r}") from None


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def compute_status(pdb: Object, pods: Iterable[Object], now: datetime) -> dict[str, Any]:
    """The status the disruption controller writes for ``pdb`` given the pods of its
    namespace. Raises ValueError for a malformed minAvailable / maxUnavailable."""
    spec = pdb.get("spec") or {}
    selector = pdb_selector(pdb)
    covered = (
        []
        if selector is None
        else [p for p in pods if selector.matches(p["metadata"].get("labels") or {})]
    )
    by_name = {p["metadata"]["name"]: p for p in covered}
    old = pdb.get("status") or {}
    disrupted: dict[str, str] = {}
    for name, when in (old.get("disruptedPods") or {}).items():
        pod = by_name.get(name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            continue
        try:
            if _parse_time(str(when)) + timedelta(seconds=DELETION_TIMEOUT) < now:
                continue
        except ValueError:
            continue
        disrupted[name] = str(when)
    healthy = sum(
        1
        for p in covered
        if not p["metadata"].get("deletionTimestamp")
        and p["metadata"]["name"] not in disrupted
        and is_ready(p)
    )
    expected = len(covered)
    if spec.get("maxUnavailable") is not None:
        desired = max(expected - _scaled(spec["maxUnavailable"], expected), 0)
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected)
    else:
        desired = 0
    allowed = max(healthy - desired, 0)
    generation = int(pdb["metadata"].get("generation", 1))
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    reason = "SufficientPods" if allowed > 0 else "InsufficientPods"
    status["conditions"] = [_condition(old, allowed > 0, reason, generation, now)]
    return status


def _condition(
    old_status: Mapping[str, Any], allowed: bool, reason: str, generation: int, now: datetime
) -> dict[str, Any]:
    value = "True" if allowed else "False"
    for c in old_status.get("conditions") or ():
        if (
            isinstance(c, dict)
            and c.get("type") == "DisruptionAllowed"
            and (c.get("status"), c.get("reason")) == (value, reason)
        ):
            return dict(c, observedGeneration=generation)
    return {
        "type": "DisruptionAllowed",
        "status": value,
        "reason": reason,
        "message": "",
        "observedGeneration": generation,
        "lastTransitionTime": _format_time(now),
    }
