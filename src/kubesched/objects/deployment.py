"""Pure Deployment arithmetic, after upstream's
``pkg/controller/deployment/util/deployment_util.go``.

The pod-template hash that names a Deployment's ReplicaSets, revisions and their
annotations, maxSurge / maxUnavailable resolution (ints and percents), how many replicas
a new ReplicaSet may have, the proportions of a scaling event, and the Deployment
conditions. Deployments and ReplicaSets are plain dicts; nothing here waits or writes,
so a simulator can run the same rules.

Deviation: upstream hashes a template with ``DeepHashObject`` (FNV-32a over spew's
printing of the Go struct), which cannot be reproduced outside Go; here FNV-32a runs over
the template's canonical JSON. The hash is as stable and as collision-checked, but
differs from the one kube-controller-manager would give the same template.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kubesched.objects.errors import ObjectError

__all__ = [
    "DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY",
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_REPLICAS_ANNOTATION",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "compute_hash",
    "equal_ignore_hash",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "resolve_fenceposts",
    "scaled_value",
]

#: ``DefaultDeploymentUniqueLabelKey``.
DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
#: The extensions/v1beta1 rollback request annotation (``apps.DeprecatedRollbackTo``).
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotations a Deployment's own that are not copied to its ReplicaSets.
ANNOTATIONS_TO_SKIP = frozenset(
    {
        LAST_APPLIED_ANNOTATION,
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        DEPRECATED_ROLLBACK_TO,
    }
)
#: ``maxRevHistoryLengthInChars``.
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000
MAX_INT32 = 2**31 - 1

# Condition types and reasons (``deployment_util.go``), compared exactly by kubectl.
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_DEPLOY_REASON = "DeploymentPaused"
RESUMED_DEPLOY_REASON = "DeploymentResumed"
RS_UPDATED_REASON = "ReplicaSetUpdated"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"

Raw = dict[str, Any]


# --- accessors --------------------------------------------------------------------------


def spec_replicas(obj: Mapping[str, Any] | None) -> int:
    """``*spec.replicas`` (1 when unset, as the API server defaults it)."""
    if obj is None:
        return 0
    value = (obj.get("spec") or {}).get("replicas")
    return int(value) if isinstance(value, int) else 1


def status_count(obj: Mapping[str, Any] | None, field: str) -> int:
    """A status counter (0 when absent)."""
    if obj is None:
        return 0
    return int((obj.get("status") or {}).get(field) or 0)


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def revision(obj: Mapping[str, Any]) -> int | None:
    """``Revision``: the revision annotation as an int (None if absent or unreadable)."""
    text = annotations_of(obj).get(REVISION_ANNOTATION)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def max_revision(replica_sets: Iterable[Mapping[str, Any]]) -> int:
    """``MaxRevision``: the largest revision (0 without any)."""
    return max((r for r in map(revision, replica_sets) if r is not None), default=0)


def creation_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``ReplicaSetsByCreationTimestamp``: older first, then by name (RFC 3339 UTC
    timestamps sort as strings)."""
    meta = obj.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


def by_revision_key(obj: Mapping[str, Any]) -> tuple[int, str, str]:
    """``ReplicaSetsByRevision``: lower revision first, then by creation."""
    return (revision(obj) or 0, *creation_key(obj))


# --- the template hash ------------------------------------------------------------------


def _fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def _safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: no vowels, no look-alike characters."""
    return "".join(_SAFE_ALPHANUMS[ord(ch) % len(_SAFE_ALPHANUMS)] for ch in text)


def compute_hash(template: Mapping[str, Any], collision_count: int | None) -> str:
    """``controller.ComputeHash``: the pod-template-hash of ``template`` (see the module
    docstring for the deviation), with ``status.collisionCount`` mixed in when set."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(4, "little") + b"\0\0\0\0"
    return _safe_encode(str(_fnv32a(data)))


def _pruned(value: Any) -> Any:
    """Empty maps, lists and nulls dropped: Semantic.DeepEqual treats nil and empty alike."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def equal_ignore_hash(t1: Mapping[str, Any], t2: Mapping[str, Any]) -> bool:
    """``EqualIgnoreHash``: the templates are equal but for the pod-template-hash label."""
    a, b = copy.deepcopy(dict(t1)), copy.deepcopy(dict(t2))
    for template in (a, b):
        labels = (template.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
    return bool(_pruned(a) == _pruned(b))


# --- surge and unavailability -------------------------------------------------------------


def scaled_value(value: object, total: int, round_up: bool, path: str) -> int:
    """``GetScaledValueFromIntOrPercent``: an int as is, ``"25%"`` of ``total`` rounded
    up or down. Raises :class:`ObjectError` at ``path`` for anything else."""
    if isinstance(value, bool):
        raise ObjectError(path, f"invalid value for IntOrString: invalid type: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        if not value.endswith("%"):
            raise ObjectError(
                path, "invalid value for IntOrString: invalid type: string is not a percentage"
            )
        try:
            percent = int(value[:-1])
        except ValueError:
            raise ObjectError(path, f"invalid value {value!r}: not a percentage") from None
        scaled = percent * total / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    raise ObjectError(path, f"invalid value for IntOrString: invalid type: {value!r}")


def is_rolling_update(d: Mapping[str, Any]) -> bool:
    """``IsRollingUpdate`` (the default strategy)."""
    strategy = (d.get("spec") or {}).get("strategy") or {}
    return bool(strategy.get("type", "RollingUpdate") == "RollingUpdate")


def _rolling(d: Mapping[str, Any]) -> Mapping[str, Any]:
    strategy = (d.get("spec") or {}).get("strategy") or {}
    return strategy.get("rollingUpdate") or {}


def resolve_fenceposts(surge: object, unavailable: object, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: (maxSurge rounded up, maxUnavailable rounded down); both
    zero would stall a rollout, so unavailable becomes 1."""
    path = "spec.strategy.rollingUpdate"
    s = scaled_value("25%" if surge is None else surge, desired, True, f"{path}.maxSurge")
    u = scaled_value(
        "25%" if unavailable is None else unavailable, desired, False, f"{path}.maxUnavailable"
    )
    if s == 0 and u == 0:
        u = 1
    return s, u


def max_surge(d: Mapping[str, Any]) -> int:
    """``MaxSurge``: 0 unless RollingUpdate."""
    if not is_rolling_update(d):
        return 0
    rolling = _rolling(d)
    surge, _ = resolve_fenceposts(
        rolling.get("maxSurge"), rolling.get("maxUnavailable"), spec_replicas(d)
    )
    return surge


def max_unavailable(d: Mapping[str, Any]) -> int:
    """``MaxUnavailable``: 0 unless RollingUpdate with replicas; at most the replicas."""
    replicas = spec_replicas(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    rolling = _rolling(d)
    _, unavailable = resolve_fenceposts(
        rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas
    )
    return min(unavailable, replicas)


def replica_count(replica_sets: Iterable[Mapping[str, Any] | None]) -> int:
    """``GetReplicaCountForReplicaSets``: the sum of ``spec.replicas``."""
    return sum(spec_replicas(rs) for rs in replica_sets if rs is not None)


def status_sum(replica_sets: Iterable[Mapping[str, Any] | None], field: str) -> int:
    """The sum of one status counter (``GetActualReplicaCountForReplicaSets``, ...)."""
    return sum(status_count(rs, field) for rs in replica_sets if rs is not None)


def new_rs_new_replicas(
    d: Mapping[str, Any], all_rss: Sequence[Mapping[str, Any] | None], new_rs: Mapping[str, Any]
) -> int:
    """``NewRSNewReplicas``: how many replicas the new ReplicaSet may have now."""
    if is_rolling_update(d):
        surge = scaled_value(
            _rolling(d).get("maxSurge", "25%"),
            spec_replicas(d),
            True,
            "spec.strategy.rollingUpdate.maxSurge",
        )
        current = replica_count(all_rss)
        max_total = spec_replicas(d) + surge
        if current >= max_total:
            return spec_replicas(new_rs)
        scale_up = min(max_total - current, spec_replicas(d) - spec_replicas(new_rs))
        return spec_replicas(new_rs) + scale_up
    return spec_replicas(d)


def is_saturated(d: Mapping[str, Any], rs: Mapping[str, Any] | None) -> bool:
    """``IsSaturated``: the ReplicaSet has every replica, all available."""
    if rs is None:
        return False
    try:
        desired = int(annotations_of(rs).get(DESIRED_REPLICAS_ANNOTATION, ""))
    except ValueError:
        return False
    replicas = spec_replicas(d)
    return (
        spec_replicas(rs) == replicas
        and desired == replicas
        and status_count(rs, "availableReplicas") == replicas
    )


def replicas_annotations_need_update(rs: Mapping[str, Any], desired: int, maximum: int) -> bool:
    """``ReplicasAnnotationsNeedUpdate``."""
    notes = annotations_of(rs)
    return notes.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or notes.get(
        MAX_REPLICAS_ANNOTATION
    ) != str(maximum)


def set_replicas_annotations(rs: Raw, desired: int, maximum: int) -> bool:
    """``SetReplicasAnnotations``; whether anything changed."""
    meta = rs.setdefault("metadata", {})
    notes = meta.get("annotations")
    if not isinstance(notes, dict):
        notes = meta["annotations"] = {}
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, desired), (MAX_REPLICAS_ANNOTATION, maximum)):
        if notes.get(key) != str(value):
            notes[key] = str(value)
            changed = True
    return changed


def set_new_rs_annotations(d: Mapping[str, Any], rs: Raw, new_revision: str, exists: bool) -> bool:
    """``SetNewReplicaSetAnnotations``: the Deployment's annotations (but the skipped
    ones), the revision (only raised; the previous one joins the revision history, as
    in a rollback), and for a ReplicaSet about to be created the replica annotations.
    Whether anything changed."""
    meta = rs.setdefault("metadata", {})
    notes = meta.get("annotations")
    if not isinstance(notes, dict):
        notes = meta["annotations"] = {}
    changed = False
    for key, value in annotations_of(d).items():
        if key in ANNOTATIONS_TO_SKIP or notes.get(key) == value:
            continue
        notes[key] = value
        changed = True
    had = REVISION_ANNOTATION in notes
    old_text = notes.get(REVISION_ANNOTATION, "")
    try:
        old = int(old_text) if old_text else 0
    except ValueError:
        return changed
    try:
        new = int(new_revision)
    except ValueError:
        return changed
    if old < new:
        notes[REVISION_ANNOTATION] = new_revision
        changed = True
        if had:
            history = notes.get(REVISION_HISTORY_ANNOTATION, "")
            olds = history.split(",")
            if not olds[0]:
                notes[REVISION_HISTORY_ANNOTATION] = old_text
            else:
                total = len(history) + len(old_text) + 1
                start = 0
                while total > MAX_REV_HISTORY_LENGTH_IN_CHARS and start < len(olds):
                    total -= len(olds[start]) + 1
                    start += 1
                if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS:
                    notes[REVISION_HISTORY_ANNOTATION] = ",".join([*olds[start:], old_text])
    if not exists:
        replicas = spec_replicas(d)
        if set_replicas_annotations(rs, replicas, replicas + max_surge(d)):
            changed = True
    return changed


def proportion(rs: Mapping[str, Any] | None, d: Mapping[str, Any], to_add: int, added: int) -> int:
    """``GetProportion``: the share of a scaling event (``to_add`` replicas over every
    active ReplicaSet, ``added`` so far) that falls to ``rs``."""
    if rs is None or spec_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(rs: Mapping[str, Any], d: Mapping[str, Any]) -> int:
    """``getReplicaSetFraction``."""
    replicas = spec_replicas(d)
    if replicas == 0:
        return -spec_replicas(rs)
    deployment_max = replicas + max_surge(d)
    try:
        before = int(annotations_of(rs).get(MAX_REPLICAS_ANNOTATION, ""))
    except ValueError:
        before = 0
    if before == 0:
        # No annotation: fall back to the Deployment's current size.
        before = status_count(d, "replicas")
        if before == 0:
            return 0
    size = spec_replicas(rs) * deployment_max / before
    # integer.RoundToInt32: math.Round, halves away from zero.
    rounded = math.floor(size + 0.5) if size >= 0 else -math.floor(-size + 0.5)
    return int(rounded) - spec_replicas(rs)


# --- conditions ---------------------------------------------------------------------------


def now_rfc3339(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(status: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """``GetDeploymentCondition``."""
    for cond in status.get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def new_condition(kind: str, status: str, reason: str, message: str, now: float) -> Raw:
    """``NewDeploymentCondition``: both times now."""
    stamp = now_rfc3339(now)
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def set_condition(status: Raw, cond: Raw) -> None:
    """``SetDeploymentCondition``: nothing if status and reason are the same; the
    transition time kept when only the reason changed."""
    current = condition(status, cond["type"])
    if current is not None and current.get("status") == cond["status"]:
        if current.get("reason") == cond.get("reason"):
            return
        cond["lastTransitionTime"] = current.get("lastTransitionTime")
    remove_condition(status, cond["type"])
    status.setdefault("conditions", []).append(cond)


def remove_condition(status: Raw, kind: str) -> None:
    """``RemoveDeploymentCondition``."""
    conditions = [c for c in status.get("conditions") or () if c.get("type") != kind]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)


def progress_deadline(d: Mapping[str, Any]) -> int | None:
    """``spec.progressDeadlineSeconds``, None when unset or MaxInt32 (no deadline)."""
    value = (d.get("spec") or {}).get("progressDeadlineSeconds")
    if not isinstance(value, int) or value == MAX_INT32:
        return None
    return value


def revision_history_limit(d: Mapping[str, Any]) -> int | None:
    """``spec.revisionHistoryLimit``, None when unset or MaxInt32 (keep all)."""
    value = (d.get("spec") or {}).get("revisionHistoryLimit")
    if not isinstance(value, int) or value == MAX_INT32:
        return None
    return value


def deployment_complete(d: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """``DeploymentComplete``: every replica updated and available, generation seen."""
    replicas = spec_replicas(d)
    generation = (d.get("metadata") or {}).get("generation") or 0
    return (
        int(status.get("updatedReplicas") or 0) == replicas
        and int(status.get("replicas") or 0) == replicas
        and int(status.get("availableReplicas") or 0) == replicas
        and int(status.get("observedGeneration") or 0) >= generation
    )


def deployment_progressing(d: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``DeploymentProgressing``: more updated, ready or available replicas, or fewer
    old ones, than the status says."""
    old = d.get("status") or {}

    def count(status: Mapping[str, Any], field: str) -> int:
        return int(status.get(field) or 0)

    old_old = count(old, "replicas") - count(old, "updatedReplicas")
    new_old = count(new, "replicas") - count(new, "updatedReplicas")
    return (
        count(new, "updatedReplicas") > count(old, "updatedReplicas")
        or new_old < old_old
        or count(new, "readyReplicas") > count(old, "readyReplicas")
        or count(new, "availableReplicas") > count(old, "availableReplicas")
    )


def _parse(stamp: object) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def deployment_timed_out(d: Mapping[str, Any], status: Mapping[str, Any], now: float) -> bool:
    """``DeploymentTimedOut``: no progress for progressDeadlineSeconds (by the
    Progressing condition's lastUpdateTime)."""
    deadline = progress_deadline(d)
    if deadline is None:
        return False
    cond = condition(status, PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.get("reason") == TIMED_OUT_REASON:
        return True
    since = _parse(cond.get("lastUpdateTime"))
    return since is not None and since + deadline < now
