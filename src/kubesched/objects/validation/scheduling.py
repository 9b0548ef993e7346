"""PriorityClasses as ``pkg/apis/scheduling/validation`` checks them."""

from __future__ import annotations

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    forbidden,
    invalid,
    not_supported,
)

HIGHEST_USER_PRIORITY = 1_000_000_000


def priority_class(obj: Object) -> Errors:
    """``ValidatePriorityClass``: an integer value, at most 1e9 unless the name is a
    ``system-`` one, and a known preemption policy."""
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value", 0)
    errs: Errors = []
    if not isinstance(value, int) or isinstance(value, bool):
        return [invalid("value", GoValue(str(value)), "must be an integer")]
    if not name.startswith("system-") and value > HIGHEST_USER_PRIORITY:
        errs.append(
            forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        errs.append(not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority")))
    return errs


def priority_class_update(new: Object, old: Object) -> Errors:
    """``ValidatePriorityClassUpdate``: the value and the preemption policy are frozen."""
    errs: Errors = []
    if new.get("value") != old.get("value"):
        errs.append(forbidden("value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable"))
    return errs
