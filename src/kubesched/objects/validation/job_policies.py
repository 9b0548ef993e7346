"""A Job's ``podFailurePolicy`` and ``successPolicy`` as ``pkg/apis/batch/validation``
checks them.

Pod failure policy (``validatePodFailurePolicy`` and its rules): a known action (FailIndex
only with backoffLimitPerIndex), exactly one of ``onExitCodes`` and ``onPodConditions``,
exit codes that are sorted, unique, not 0 for ``In`` and name a container of the template,
pod condition patterns with a qualified type and a True / False / Unknown status (the
template's restartPolicy must be Never: :mod:`.job`). Success policy
(``validateSuccessPolicy``): Indexed Jobs only, 1 to 20 rules, each with succeeded indexes
(intervals ``0,2-3`` in increasing order below ``completions``) or a count, the count no
more than the completions or the indexes named.
"""

from __future__ import annotations

import re
from typing import Any

from kubesched.objects.validation.core import (
    OMIT,
    TOO_MANY,
    Errors,
    FieldError,
    as_dict,
    as_list,
    duplicate,
    invalid,
    is_int,
    nonnegative_int,
    not_supported,
    qualified_name,
    required,
    too_long,
)

_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
_OPERATORS = ("In", "NotIn")
_STATUSES = ("False", "True", "Unknown")
MAX_RULES = 20
MAX_EXIT_CODES = 255
MAX_CONDITION_PATTERNS = 20
MAX_SUCCESS_RULES = 20
#: maxJobSuccessPolicySucceededIndexesLimit.
MAX_SUCCEEDED_INDEXES = 64 * 1024
_ATOI = re.compile(r"[+-]?[0-9]+")


def _go_quoted_list(values: tuple[str, ...]) -> str:
    # fmt's %q of a []string: ["a" "b"].
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _too_many(path: str, actual: int, most: int) -> FieldError:
    return FieldError(TOO_MANY, path, actual, f"must have at most {most} items")


def _exit_codes(rule: dict[str, Any], path: str, containers: set[str]) -> Errors:
    errs: Errors = []
    operator = rule.get("operator")
    if not operator:
        errs.append(required(f"{path}.operator", f"valid values: {_go_quoted_list(_OPERATORS)}"))
    elif operator not in _OPERATORS:
        errs.append(not_supported(f"{path}.operator", operator, _OPERATORS))
    name = rule.get("containerName")
    if name is not None and name not in containers:
        errs.append(
            invalid(
                f"{path}.containerName",
                name,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    values = as_list(rule.get("values"))
    if not values:
        errs.append(invalid(f"{path}.values", values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODES:
        errs.append(_too_many(f"{path}.values", len(values), MAX_EXIT_CODES))
    seen: set[Any] = set()
    ordered = True
    for j, value in enumerate(values):
        at = f"{path}.values[{j}]"
        if operator == "In" and value == 0:
            errs.append(invalid(at, value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(duplicate(at, value))
        seen.add(value)
        previous = values[j - 1] if j else None
        if is_int(previous) and is_int(value) and previous > value:
            ordered = False
    if not ordered:
        errs.append(invalid(f"{path}.values", values, "must be ordered"))
    return errs


def _pod_conditions(patterns: list[Any], path: str) -> Errors:
    errs: Errors = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        errs.append(_too_many(path, len(patterns), MAX_CONDITION_PATTERNS))
    for j, raw in enumerate(patterns):
        pattern = as_dict(raw)
        at = f"{path}[{j}]"
        errs.extend(qualified_name(str(pattern.get("type") or ""), f"{at}.type"))
        status = pattern.get("status")
        if not status:
            errs.append(required(f"{at}.status", f"valid values: {_go_quoted_list(_STATUSES)}"))
        elif status not in _STATUSES:
            errs.append(not_supported(f"{at}.status", status, _STATUSES))
    return errs


def _rule(spec: dict[str, Any], rule: dict[str, Any], path: str, containers: set[str]) -> Errors:
    errs: Errors = []
    action = rule.get("action")
    if not action:
        errs.append(required(f"{path}.action", f"valid values: {_go_quoted_list(_ACTIONS)}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(
                invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to be set")
            )
    elif action not in _ACTIONS:
        errs.append(not_supported(f"{path}.action", action, _ACTIONS))
    exit_codes = rule.get("onExitCodes")
    patterns = as_list(rule.get("onPodConditions"))
    if isinstance(exit_codes, dict):
        errs.extend(_exit_codes(exit_codes, f"{path}.onExitCodes", containers))
    if patterns:
        errs.extend(_pod_conditions(patterns, f"{path}.onPodConditions"))
    if exit_codes is not None and patterns:
        errs.append(
            invalid(path, OMIT, "specifying both OnExitCodes and OnPodConditions is not supported")
        )
    if exit_codes is None and not patterns:
        errs.append(
            invalid(path, OMIT, "specifying one of OnExitCodes and OnPodConditions is required")
        )
    return errs


def pod_failure_policy(spec: dict[str, Any]) -> Errors:
    """``validatePodFailurePolicy`` for ``spec.podFailurePolicy`` (set)."""
    policy = as_dict(spec.get("podFailurePolicy"))
    rules = as_list(policy.get("rules"))
    path = "spec.podFailurePolicy.rules"
    errs: Errors = []
    if len(rules) > MAX_RULES:
        errs.append(_too_many(path, len(rules), MAX_RULES))
    pod = as_dict(as_dict(spec.get("template")).get("spec"))
    containers = {
        str(as_dict(c).get("name"))
        for key in ("containers", "initContainers")
        for c in as_list(pod.get(key))
    }
    for i, rule in enumerate(rules):
        errs.extend(_rule(spec, as_dict(rule), f"{path}[{i}]", containers))
    return errs


def _index(text: str, completions: int) -> int:
    # strconv.Atoi, then the bound.
    if _ATOI.fullmatch(text) is None:
        raise ValueError(f'cannot convert string to integer for index: "{text}"')
    value = int(text)
    if value >= completions:
        raise ValueError(f'too large index: "{text}"')
    return value


def _interval(text: str, completions: int) -> tuple[int, int]:
    # parseIndexInterval.
    limits = text.split("-")
    if len(limits) > 2:
        raise ValueError(
            f'the fragment "{text}" violates the requirement that an index interval can have '
            "at most two parts separated by '-'"
        )
    low = _index(limits[0], completions)
    if len(limits) == 1:
        return low, low
    high = _index(limits[1], completions)
    if low >= high:
        raise ValueError(f"non-increasing order, previous: {low}, current: {high}")
    return low, high


def indexes_format(text: str, completions: int) -> int:
    """``validateIndexesFormat``: how many indexes ``text`` names; ValueError with
    upstream's words when it is not a list of increasing intervals below ``completions``."""
    if not text:
        return 0
    last: int | None = None
    total = 0
    for part in text.split(","):
        low, high = _interval(part, completions)
        if last is not None and last >= low:
            raise ValueError(f"non-increasing order, previous: {last}, current: {low}")
        total += high - low + 1
        last = high
    return total


def _success_rule(rule: dict[str, Any], path: str, completions: Any) -> Errors:
    errs: Errors = []
    count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
    if count is None and indexes is None:
        errs.append(
            required(path, "at least one of succeededCount or succeededIndexes must be specified")
        )
    total = 0
    if isinstance(indexes, str):
        at = f"{path}.succeededIndexes"
        if len(indexes) > MAX_SUCCEEDED_INDEXES:
            errs.append(too_long(at, MAX_SUCCEEDED_INDEXES))
        if is_int(completions):
            try:
                total = indexes_format(indexes, completions)
            except ValueError as err:
                errs.append(invalid(at, indexes, f"error parsing succeededIndexes: {err}"))
    if is_int(count):
        at = f"{path}.succeededCount"
        errs.extend(nonnegative_int(count, at))
        if is_int(completions) and count > completions:
            errs.append(
                invalid(
                    at,
                    count,
                    f"must be less than or equal to {completions} (the number of specified "
                    "completions)",
                )
            )
        if indexes is not None and count > total:
            errs.append(
                invalid(
                    at,
                    count,
                    f"must be less than or equal to {total} (the number of indexes in the "
                    "specified succeededIndexes field)",
                )
            )
    return errs


def success_policy(spec: dict[str, Any]) -> Errors:
    """``validateSuccessPolicy`` for ``spec.successPolicy`` (set)."""
    policy = spec.get("successPolicy")
    if spec.get("completionMode") != "Indexed":
        return [invalid("spec.successPolicy", policy, "requires indexed completion mode")]
    rules = as_list(as_dict(policy).get("rules"))
    path = "spec.successPolicy.rules"
    errs: Errors = []
    if not rules:
        errs.append(
            required(
                path, "at least one rules must be specified when the successPolicy is specified"
            )
        )
    if len(rules) > MAX_SUCCESS_RULES:
        errs.append(_too_many(path, len(rules), MAX_SUCCESS_RULES))
    for i, rule in enumerate(rules):
        errs.extend(_success_rule(as_dict(rule), f"{path}[{i}]", spec.get("completions")))
    return errs
