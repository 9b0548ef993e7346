"""PodDisruptionBudgets as ``pkg/apis/policy/validation`` checks them."""

from __future__ import annotations

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    as_dict,
    invalid,
    label_selector,
    regex_error,
)

_PERCENT_MESSAGE = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)


def pod_disruption_budget(obj: Object) -> Errors:
    """``ValidatePodDisruptionBudgetSpec``: minAvailable or maxUnavailable, each a
    non-negative integer or a percentage up to 100%, and a valid selector."""
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(
            invalid(
                "spec",
                GoValue("policy.PodDisruptionBudgetSpec{...}"),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        elif isinstance(value, str):
            digits = value[:-1]
            if not value.endswith("%") or not digits.isdigit():
                errs.append(invalid(f"spec.{key}", value, _PERCENT_MESSAGE))
            elif int(digits) > 100:
                errs.append(invalid(f"spec.{key}", value, "must not be greater than 100%"))
    errs.extend(label_selector(spec.get("selector"), "spec.selector"))
    return errs
