"""DaemonSets and ControllerRevisions as ``pkg/apis/apps/validation`` checks them
(``ValidateDaemonSetSpec``, ``ValidateDaemonSetUpdateStrategy``,
``ValidateRollingUpdateDaemonSet``, ``validateDaemonSetStatus``,
``ValidateControllerRevision`` and their update rules).

Objects are validated after defaulting (updateStrategy RollingUpdate with maxUnavailable 1
and maxSurge 0) and after the strategy's template generation (the
``deprecated.daemonset.template.generation`` annotation the API server keeps).
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    Object,
    as_dict,
    immutable,
    invalid,
    label_selector,
    nonnegative_int,
    not_supported,
    required,
    selector_matches,
)
from kubesched.objects.validation.deployment import (
    is_zero_int_or_percent,
    percent_not_over_100,
    positive_int_or_percent,
    selector_unchanged,
)
from kubesched.objects.validation.workloads import pod_template_spec, selector_struct

_UPDATE_STRATEGIES = ("RollingUpdate", "OnDelete")
_STATUS_COUNTS = (
    "currentNumberScheduled",
    "numberMisscheduled",
    "desiredNumberScheduled",
    "numberReady",
    "observedGeneration",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
    "collisionCount",
)


def _update_strategy(strategy: Any, path: str) -> Errors:
    strat = as_dict(strategy)
    kind = strat.get("type")
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, strat, _UPDATE_STRATEGIES)]
    rolling = strat.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return [required(f"{path}.rollingUpdate")]
    at = f"{path}.rollingUpdate.maxUnavailable"
    surge_at = f"{path}.rollingUpdate.maxSurge"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    errs = positive_int_or_percent(unavailable, at)
    errs.extend(positive_int_or_percent(surge, surge_at))
    errs.extend(percent_not_over_100(unavailable, at))
    errs.extend(percent_not_over_100(surge, surge_at))
    # ValidateRollingUpdateDaemonSet: exactly one of the two is non-zero (a surge
    # update replaces pods new-first, so it must not also take pods down first).
    has_unavailable = not is_zero_int_or_percent(unavailable)
    has_surge = not is_zero_int_or_percent(surge)
    if has_unavailable and has_surge:
        errs.append(invalid(surge_at, surge, "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(required(at, "cannot be 0 when maxSurge is 0"))
    return errs


def daemon_set(obj: Object) -> Errors:
    """``ValidateDaemonSetSpec`` (metadata is checked by the caller)."""
    spec = as_dict(obj.get("spec"))
    selector = spec.get("selector")
    template = as_dict(spec.get("template"))
    template_labels = as_dict(as_dict(template.get("metadata")).get("labels"))
    errs: Errors = []
    found: Errors = []
    if isinstance(selector, dict):
        found = label_selector(selector, "spec.selector")
        errs.extend(found)
    # A missing selector selects nothing (LabelSelectorAsSelector(nil)), so no template.
    if not found and not (
        isinstance(selector, dict) and selector_matches(selector, template_labels)
    ):
        errs.append(
            invalid(
                "spec.template.metadata.labels",
                template_labels,
                "`selector` does not match template `labels`",
            )
        )
    if isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            invalid(
                "spec.selector",
                selector_struct(selector),
                "empty selector is invalid for daemonset",
            )
        )
    errs.extend(pod_template_spec(spec.get("template"), "spec.template"))
    pod = as_dict(template.get("spec"))
    restart = pod.get("restartPolicy") or "Always"
    if restart != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    deadline = pod.get("activeDeadlineSeconds")
    if deadline is not None:
        errs.append(
            invalid("spec.template.spec.activeDeadlineSeconds", deadline, "must not be specified")
        )
    errs.extend(nonnegative_int(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    errs.extend(_update_strategy(spec.get("updateStrategy"), "spec.updateStrategy"))
    errs.extend(nonnegative_int(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit"))
    return errs


def daemon_set_update(new: Object, old: Object) -> Errors:
    """``ValidateDaemonSetUpdate`` (the template generation is the server's, so its rules
    hold by construction) and the apps/v1 selector rule."""
    return daemon_set(new) + selector_unchanged(new, old)


def daemon_set_status(new: Object) -> Errors:
    """``validateDaemonSetStatus``: no count negative."""
    status = as_dict(new.get("status"))
    errs: Errors = []
    for key in _STATUS_COUNTS:
        errs.extend(nonnegative_int(status.get(key), f"status.{key}"))
    return errs


def controller_revision(obj: Object) -> Errors:
    """``ValidateControllerRevision``: data is mandatory, revision not negative."""
    errs: Errors = []
    if obj.get("data") is None:
        errs.append(required("data", "data is mandatory"))
    errs.extend(nonnegative_int(obj.get("revision"), "revision"))
    return errs


def controller_revision_update(new: Object, old: Object) -> Errors:
    """``ValidateControllerRevisionUpdate``: as on create, and data never changes."""
    return controller_revision(new) + immutable("data", new.get("data"), old.get("data"))
