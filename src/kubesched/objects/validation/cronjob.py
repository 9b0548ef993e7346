"""CronJobs as ``pkg/apis/batch/validation`` checks them: ``ValidateCronJobSpec`` (a
schedule that parses, no ``TZ=`` in it beside a ``timeZone``, a known time zone, the
concurrency policy, the history limits, the Job template as ``ValidateJobTemplateSpec``
checks it), ``ValidateCronJobUpdate`` and the status strategy's check.

The schedule is parsed by :mod:`kubesched.objects.cron` (croniter), so a bad schedule's
message is croniter's rather than robfig/cron's.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from kubesched.objects.cron import ScheduleError, parse_schedule, time_zone
from kubesched.objects.validation.core import (
    Errors,
    Object,
    as_dict,
    invalid,
    nonnegative_int,
    not_supported,
    required,
)
from kubesched.objects.validation.job import job_spec_fields
from kubesched.objects.validation.workloads import selector_struct

_POLICIES = ("Allow", "Forbid", "Replace")
_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
#: ``validation.DNS1123SubdomainMaxLength`` less the 11 characters a Job name adds.
_NAME_MAX = 52


def _schedule(schedule: Any, zone: Any, allow_tz: bool) -> Errors:
    path = "spec.schedule"
    if not isinstance(schedule, str) or not schedule:
        return [required(path)]
    errs: Errors = []
    try:
        parse_schedule(schedule)
    except ScheduleError as exc:
        errs.append(invalid(path, schedule, str(exc)))
    if "TZ" in schedule:
        if allow_tz and zone is not None:
            errs.append(
                invalid(
                    path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"
                )
            )
        elif not allow_tz:
            errs.append(
                invalid(
                    path,
                    schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    return errs


def _time_zone(zone: Any) -> Errors:
    # validateTimeZone
    path = "spec.timeZone"
    if zone is None:
        return []
    text = str(zone)
    if not text:
        return [invalid(path, text, "timeZone must be nil or non-empty string")]
    for part in text.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.fullmatch(part):
            return [invalid(path, text, f"unknown time zone {text}")]
    if text.lower() == "local":
        return [
            invalid(
                path,
                text,
                "timeZone must be an explicit time zone as defined in "
                "https://www.iana.org/time-zones",
            )
        ]
    try:
        time_zone(text)
    except ScheduleError as exc:
        return [invalid(path, text, str(exc))]
    return []


def _rebased(errs: Errors, prefix: str) -> Errors:
    # The Job validators name paths from the Job ("spec.template..."); here they sit
    # under the CronJob's jobTemplate.
    return [dataclasses.replace(e, field=prefix + e.field) for e in errs]


def job_template(template: Any) -> Errors:
    """``ValidateJobTemplateSpec``: the Job spec without a selector (it is generated)."""
    path = "spec.jobTemplate."
    spec = as_dict(as_dict(template).get("spec"))
    errs = _rebased(job_spec_fields(spec), path)
    selector = spec.get("selector")
    if selector is not None:
        errs.append(
            invalid(
                f"{path}spec.selector",
                selector_struct(selector),
                "`selector` will be auto-generated",
            )
        )
    if spec.get("manualSelector") is True:
        errs.append(not_supported(f"{path}spec.manualSelector", True, ("nil", "false")))
    return errs


def _cron_job_spec(obj: Object, allow_tz: bool) -> Errors:
    spec = as_dict(obj.get("spec"))
    errs = _schedule(spec.get("schedule"), spec.get("timeZone"), allow_tz)
    errs.extend(
        nonnegative_int(spec.get("startingDeadlineSeconds"), "spec.startingDeadlineSeconds")
    )
    policy = spec.get("concurrencyPolicy") or ""
    if policy == "":
        errs.append(required("spec.concurrencyPolicy"))
    elif policy not in _POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", policy, _POLICIES))
    errs.extend(job_template(spec.get("jobTemplate")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs.extend(nonnegative_int(spec.get(key), f"spec.{key}"))
    errs.extend(_time_zone(spec.get("timeZone")))
    return errs


def cron_job(obj: Object) -> Errors:
    """``ValidateCronJobCreate`` (metadata is checked by the caller): the spec, and a name
    that leaves room for the 11 characters the Jobs' names add."""
    errs = _cron_job_spec(obj, allow_tz=False)
    name = str(as_dict(obj.get("metadata")).get("name") or "")
    if len(name) > _NAME_MAX:
        errs.append(invalid("metadata.name", name, f"must be no more than {_NAME_MAX} characters"))
    return errs


def cron_job_update(new: Object, old: Object) -> Errors:
    """``ValidateCronJobUpdate``: the spec, a ``TZ=`` schedule kept only if the old one
    had it; the Job template's own update rules are not checked (upstream neither)."""
    old_schedule = as_dict(old.get("spec")).get("schedule")
    allow_tz = isinstance(old_schedule, str) and "TZ" in old_schedule
    return _cron_job_spec(new, allow_tz)
