"""Leases as ``pkg/apis/coordination/validation`` checks them."""

from __future__ import annotations

from kubesched.objects.validation.core import Errors, Object, as_dict, invalid, nonnegative_int


def lease(obj: Object) -> Errors:
    """``ValidateLeaseSpec``: a positive duration, non-negative transitions."""
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    errs.extend(nonnegative_int(spec.get("leaseTransitions"), "spec.leaseTransitions"))
    return errs
