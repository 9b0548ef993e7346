"""Deployments as ``pkg/apis/apps/validation`` checks them (``ValidateDeploymentSpec``,
``ValidateDeploymentStrategy``, ``ValidateRollingUpdateDeployment``), and the apps/v1
update rules of the strategies: a Deployment's (and a ReplicaSet's) selector never
changes, a StatefulSet's spec changes only in the fields ``ValidateStatefulSetUpdate``
lets through; the status counts of Deployments and ReplicaSets.

Objects are validated after defaulting (strategy RollingUpdate with 25%/25%, and so on).
Bad values print as 1.34's ``ErrorBody`` prints them: scalars as themselves, everything
else as JSON.
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    Object,
    as_dict,
    forbidden,
    immutable,
    invalid,
    is_int,
    label_selector,
    nonnegative_int,
    not_supported,
    regex_error,
    required,
    selector_matches,
)
from kubesched.objects.validation.workloads import pod_template, selector_struct

_STRATEGIES = ("Recreate", "RollingUpdate")
#: ``validation.IsValidPercent``'s message.
PERCENT_MESSAGE = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)


def _percent(value: str) -> int | None:
    digits = value[:-1]
    return int(digits) if value.endswith("%") and digits.isdigit() else None


def positive_int_or_percent(value: Any, path: str) -> Errors:
    """``ValidatePositiveIntOrPercent``: a non-negative integer or ``N%``."""
    if isinstance(value, str):
        return [] if _percent(value) is not None else [invalid(path, value, PERCENT_MESSAGE)]
    if is_int(value):
        return nonnegative_int(value, path)
    if value is None:
        return []
    return [invalid(path, value, "must be an integer or percentage (e.g '5%')")]


def is_zero_int_or_percent(value: Any) -> bool:
    """``getIntOrPercentValue(v) == 0``: "0%" and 0 (and an unset value) are both zero."""
    if isinstance(value, str):
        return _percent(value) == 0
    return value is None or value == 0


def percent_not_over_100(value: Any, path: str) -> Errors:
    """``IsNotMoreThan100Percent``."""
    if isinstance(value, str) and (_percent(value) or 0) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _rolling_update(rolling: dict[str, Any], path: str) -> Errors:
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = positive_int_or_percent(unavailable, f"{path}.maxUnavailable")
    errs.extend(positive_int_or_percent(surge, f"{path}.maxSurge"))
    if is_zero_int_or_percent(unavailable) and is_zero_int_or_percent(surge):
        errs.append(
            invalid(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    errs.extend(percent_not_over_100(unavailable, f"{path}.maxUnavailable"))
    return errs


def deployment_strategy(strategy: Any, path: str) -> Errors:
    """``ValidateDeploymentStrategy``: Recreate with no rollingUpdate, RollingUpdate with
    valid surge and unavailability (not both 0)."""
    strat = as_dict(strategy)
    kind = strat.get("type")
    rolling = strat.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                forbidden(
                    f"{path}.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        if not isinstance(rolling, dict):
            return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        return _rolling_update(rolling, f"{path}.rollingUpdate")
    return [not_supported(path, strat, _STRATEGIES)]


def deployment(obj: Object) -> Errors:
    """``ValidateDeploymentSpec``."""
    spec = as_dict(obj.get("spec"))
    errs = nonnegative_int(spec.get("replicas"), "spec.replicas")
    selector = spec.get("selector")
    valid_selector = True
    if not isinstance(selector, dict):
        errs.append(required("spec.selector"))
    else:
        found = label_selector(selector, "spec.selector")
        errs.extend(found)
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            errs.append(
                invalid(
                    "spec.selector",
                    selector_struct(selector),
                    "empty selector is invalid for deployment",
                )
            )
        if found:
            errs.append(
                invalid("spec.selector", selector_struct(selector), "invalid label selector")
            )
            valid_selector = False
    if valid_selector:
        # ValidatePodTemplateSpecForReplicaSet (its message names ReplicaSet); a missing
        # selector selects nothing, so the template's labels do not match it either.
        sel = selector if isinstance(selector, dict) else None
        errs.extend(
            pod_template(
                spec.get("template"),
                lambda ls: sel is not None and selector_matches(sel, ls),
                "spec.template",
                "ReplicaSet",
            )
        )
    errs.extend(deployment_strategy(spec.get("strategy"), "spec.strategy"))
    min_ready = spec.get("minReadySeconds")
    errs.extend(nonnegative_int(min_ready, "spec.minReadySeconds"))
    errs.extend(nonnegative_int(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if is_int(deadline):
        errs.extend(nonnegative_int(deadline, "spec.progressDeadlineSeconds"))
        if deadline <= (min_ready if is_int(min_ready) else 0):
            errs.append(
                invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    return errs


def selector_unchanged(new: Object, old: Object) -> Errors:
    """apps/v1's strategies: ``spec.selector`` is immutable."""
    return immutable(
        "spec.selector",
        as_dict(new.get("spec")).get("selector"),
        as_dict(old.get("spec")).get("selector"),
    )


#: The StatefulSet spec fields an update may change (ValidateStatefulSetUpdate).
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
_STATEFULSET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


def stateful_set_update_rule(new: Object, old: Object) -> Errors:
    """``ValidateStatefulSetUpdate``'s rule: only some spec fields may change (the
    selector, serviceName, volumeClaimTemplates and podManagementPolicy may not)."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    kept = {k: v for k, v in spec.items() if k not in _STATEFULSET_MUTABLE}
    old_kept = {k: v for k, v in old_spec.items() if k not in _STATEFULSET_MUTABLE}
    return [] if kept == old_kept else [forbidden("spec", _STATEFULSET_FORBIDDEN)]


def deployment_update(new: Object, old: Object) -> Errors:
    """``ValidateDeploymentUpdate`` and the apps/v1 selector rule."""
    return deployment(new) + selector_unchanged(new, old)


_COUNTS = (
    "observedGeneration",
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "terminatingReplicas",
    "collisionCount",
)
_RS_COUNTS = (
    "replicas",
    "fullyLabeledReplicas",
    "readyReplicas",
    "availableReplicas",
    "terminatingReplicas",
    "observedGeneration",
)
_OVER_REPLICAS = "cannot be greater than status.replicas"


def _bounded(status: dict[str, Any], counts: tuple[str, ...], below: tuple[str, ...]) -> Errors:
    errs: Errors = []
    for key in counts:
        errs.extend(nonnegative_int(status.get(key), f"status.{key}"))
    replicas = status.get("replicas", 0)
    for key in below:
        value = status.get(key, 0)
        if is_int(value) and is_int(replicas) and value > replicas:
            errs.append(invalid(f"status.{key}", value, _OVER_REPLICAS))
    ready, available = status.get("readyReplicas", 0), status.get("availableReplicas", 0)
    if is_int(ready) and is_int(available) and available > ready:
        errs.append(
            invalid("status.availableReplicas", available, "cannot be greater than readyReplicas")
        )
    return errs


def deployment_status(new: Object) -> Errors:
    """``ValidateDeploymentStatus``: counts not negative, none above ``replicas``, no more
    available than ready replicas."""
    status = as_dict(new.get("status"))
    below = ("updatedReplicas", "readyReplicas", "availableReplicas")
    return _bounded(status, _COUNTS, below)


def replica_set_status(new: Object) -> Errors:
    """``ValidateReplicaSetStatus`` (and ReplicationController's): as for Deployments."""
    status = as_dict(new.get("status"))
    below = ("fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    return _bounded(status, _RS_COUNTS, below)
