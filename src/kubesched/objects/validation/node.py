"""Nodes as ``ValidateNode`` checks them: taints (``validateNodeTaints``), then the status
quantities (capacity, allocatable)."""

from __future__ import annotations

from kubesched.objects.validation.core import (
    Errors,
    FieldError,
    GoValue,
    Object,
    as_dict,
    as_list,
    go_quote,
    invalid,
    is_label_value,
    not_supported,
    qualified_name,
    required,
)
from kubesched.objects.validation.pod import resource_quantity

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def node(obj: Object) -> Errors:
    """``ValidateNode``. Upstream hangs the taints under the metadata path
    (``metadata.taints[0].effect``), and so do we."""
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(as_list(as_dict(obj.get("spec")).get("taints"))):
        at = f"metadata.taints[{i}]"
        if not isinstance(taint, dict):
            continue
        key, effect = str(taint.get("key") or ""), str(taint.get("effect") or "")
        errs.extend(qualified_name(key, f"{at}.key"))
        value = str(taint.get("value") or "")
        problems = is_label_value(value)
        if problems:
            errs.append(invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errs.append(required(f"{at}.effect"))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            added = taint.get("timeAdded")
            struct = (
                f"core.Taint{{Key:{go_quote(key)}, Value:{go_quote(value)}, "
                f"Effect:{go_quote(effect)}, TimeAdded:{'<nil>' if added is None else added}}}"
            )
            errs.append(
                FieldError(
                    "FieldValueDuplicate",
                    at,
                    GoValue(struct),
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((key, effect))
    return errs + node_status(obj)


def node_status(obj: Object) -> Errors:
    """The status quantities, which the status subresource validates on its own."""
    status = as_dict(obj.get("status"))
    errs: Errors = []
    for key in ("capacity", "allocatable"):
        amounts = status.get(key)
        if isinstance(amounts, dict):
            for name, amount in amounts.items():
                errs.extend(resource_quantity(name, amount, f"status.{key}.{name}"))
    return errs
