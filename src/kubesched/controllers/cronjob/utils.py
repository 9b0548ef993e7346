"""The CronJob controller's pure rules (``pkg/controller/cronjob/utils.go``, release-1.34):
which schedule time is due, when to look again, the Job a schedule time makes, and the
bookkeeping of ``status.active``.

Times are aware datetimes in UTC. A schedule is read as ``formatSchedule`` reads it: a
``TZ=`` / ``CRON_TZ=`` prefix in the schedule wins, else ``spec.timeZone``, else UTC (the
controller manager's local zone upstream; UTC here, as in a container).
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from kubesched.objects.cron import Schedule, ScheduleError, parse_schedule, time_zone
from kubesched.objects.podtemplate import controller_ref

RawObject = dict[str, Any]

#: ``batchv1.CronJobScheduledTimestampAnnotation``: the schedule time a Job was made for,
#: RFC 3339 in the CronJob's time zone.
SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: ``nextScheduleDelta``: a requeue lands this long after the schedule time (clock skew).
NEXT_SCHEDULE_DELTA = timedelta(milliseconds=100)
#: More missed start times than this are "too many" (an event, not a list of them).
TOO_MANY_MISSED = 100


class Missed(enum.Enum):
    """``missedSchedulesType``."""

    NONE = "none"
    FEW = "few"
    MANY = "many"


class InvalidSchedule(ValueError):
    """A schedule that parses but cannot be run (February 30th)."""


@dataclass(frozen=True)
class CronSchedule:
    """A CronJob's parsed schedule with the zone it is reckoned in."""

    schedule: Schedule
    zone: tzinfo | None

    def next(self, moment: datetime) -> datetime | None:
        """``Schedule.Next``: the first time strictly after ``moment`` (None if none)."""
        return self.schedule.next_after(moment, self.zone)


def meta(obj: RawObject) -> dict[str, Any]:
    """The object's metadata (empty if missing)."""
    found = obj.get("metadata")
    return found if isinstance(found, dict) else {}


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime (None if absent or unreadable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC, to the second (``metav1.Time``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cron_schedule(cron_job: RawObject) -> CronSchedule:
    """``cron.ParseStandard(formatSchedule(cj))``; :class:`ScheduleError` if it does not
    parse. An unknown ``timeZone`` is ignored here (the caller refuses it first)."""
    spec = cron_job.get("spec") or {}
    text = str(spec.get("schedule") or "")
    parsed = parse_schedule(text)
    if "TZ" in text:
        return CronSchedule(parsed, parsed.zone)
    zone_name = spec.get("timeZone")
    if isinstance(zone_name, str):
        try:
            return CronSchedule(parsed, time_zone(zone_name))
        except ScheduleError:
            pass
    return CronSchedule(parsed, None)


def _earliest(cron_job: RawObject, now: datetime, include_deadline: bool) -> datetime:
    status = cron_job.get("status") or {}
    earliest = parse_time(status.get("lastScheduleTime")) or parse_time(
        meta(cron_job).get("creationTimestamp")
    )
    if earliest is None:
        earliest = now
    deadline = (cron_job.get("spec") or {}).get("startingDeadlineSeconds")
    if include_deadline and isinstance(deadline, int) and not isinstance(deadline, bool):
        # The controller schedules nothing older than the deadline allows.
        earliest = max(earliest, now - timedelta(seconds=deadline))
    return earliest


def most_recent_schedule_time(
    cron_job: RawObject, now: datetime, schedule: CronSchedule, include_deadline: bool
) -> tuple[datetime, datetime | None, Missed]:
    """``mostRecentScheduleTime``: the time counted from (the last schedule time, or the
    creation), the most recent schedule time not after ``now`` (None if none is due), and
    whether none, a few or too many (over 100) were missed. :class:`InvalidSchedule` when
    two schedule times are less than a second apart (a schedule that never comes)."""
    earliest = _earliest(cron_job, now, include_deadline)
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return earliest, None, Missed.NONE
    if t1 is not None and t2 is not None and now < t2:
        return earliest, t1, Missed.NONE
    if t1 is None or t2 is None or round((t2 - t1).total_seconds()) < 1:
        raise InvalidSchedule("time difference between two schedules is less than 1 second")
    between = round((t2 - t1).total_seconds())
    missed = int((now - t1).total_seconds()) // between + 1
    # Start a period before the estimate and let the schedule find the exact times.
    moment: datetime | None = t1 + timedelta(seconds=(missed - 2) * between)
    most_recent: datetime | None = None
    while True:
        moment = schedule.next(moment) if moment is not None else None
        if moment is None or moment > now:
            break
        most_recent = moment
    kind = Missed.MANY if missed > TOO_MANY_MISSED else Missed.FEW
    return earliest, most_recent, kind


def next_schedule_time(
    cron_job: RawObject, now: datetime, schedule: CronSchedule
) -> tuple[datetime | None, Missed]:
    """``nextScheduleTime``: the unmet schedule time to run now (None if none), within
    ``startingDeadlineSeconds``; the caller warns ``TooManyMissedTimes`` on MANY."""
    _, most_recent, missed = most_recent_schedule_time(cron_job, now, schedule, True)
    if most_recent is None or most_recent > now:
        return None, missed
    return most_recent, missed


def next_schedule_delay(cron_job: RawObject, now: datetime, schedule: CronSchedule) -> float:
    """``nextScheduleTimeDuration``: seconds until the sync after the next schedule time
    (plus :data:`NEXT_SCHEDULE_DELTA`)."""
    try:
        earliest, most_recent, missed = most_recent_schedule_time(cron_job, now, schedule, False)
    except InvalidSchedule:
        most_recent = now
    else:
        if most_recent is None:
            most_recent = earliest if missed is Missed.NONE else now
    upcoming = schedule.next(most_recent)
    if upcoming is None:
        return 0.0
    return (upcoming + NEXT_SCHEDULE_DELTA - now).total_seconds()


def job_name(cron_job: RawObject, scheduled: datetime) -> str:
    """``getJobName``: ``<cronjob>-<scheduled time in minutes since the epoch>``."""
    return f"{meta(cron_job).get('name', '')}-{int(scheduled.timestamp()) // 60}"


def scheduled_timestamp(cron_job: RawObject, scheduled: datetime) -> str:
    """The schedule time in the CronJob's ``timeZone`` (UTC without one), RFC 3339."""
    zone_name = (cron_job.get("spec") or {}).get("timeZone")
    zone = time_zone(zone_name) if isinstance(zone_name, str) else UTC
    text = scheduled.astimezone(zone).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def job_from_template(cron_job: RawObject, scheduled: datetime) -> RawObject:
    """``getJobFromTemplate2``: the Job for ``scheduled`` — the template's labels and
    annotations, the scheduled-timestamp annotation, a name fixed by the time (so a
    retry cannot make it twice), the CronJob as controller, the template's spec."""
    template = (cron_job.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled_timestamp(cron_job, scheduled)
    job_meta: dict[str, Any] = {
        "name": job_name(cron_job, scheduled),
        "namespace": meta(cron_job).get("namespace", ""),
        "annotations": annotations,
        "ownerReferences": [controller_ref(cron_job, "batch/v1", "CronJob")],
    }
    labels = tmeta.get("labels")
    if labels:
        job_meta["labels"] = dict(labels)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def object_reference(job: RawObject) -> RawObject:
    """``ref.GetReference`` of a Job, as ``status.active`` lists it."""
    m = meta(job)
    return {
        "kind": "Job",
        "namespace": m.get("namespace", ""),
        "name": m.get("name", ""),
        "uid": m.get("uid", ""),
        "apiVersion": "batch/v1",
        "resourceVersion": m.get("resourceVersion", ""),
    }


def active(cron_job: RawObject) -> list[RawObject]:
    """``status.active`` (empty if unset)."""
    found = (cron_job.get("status") or {}).get("active")
    return [ref for ref in found if isinstance(ref, dict)] if isinstance(found, list) else []


def in_active_list(cron_job: RawObject, uid: str) -> bool:
    """``inActiveList``: a reference to the Job of ``uid``."""
    return any(ref.get("uid") == uid for ref in active(cron_job))


def in_active_list_by_name(cron_job: RawObject, namespace: str, name: str) -> bool:
    """``inActiveListByName``."""
    return any(
        ref.get("name") == name and ref.get("namespace") == namespace for ref in active(cron_job)
    )


def delete_from_active_list(cron_job: RawObject, uid: str) -> None:
    """``deleteFromActiveList``."""
    status = cron_job.setdefault("status", {})
    status["active"] = [ref for ref in active(cron_job) if ref.get("uid") != uid]
    if not status["active"]:
        del status["active"]


def finished_status(job: RawObject) -> str | None:
    """``getFinishedStatus``: "Complete" or "Failed" when that condition is True."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if (
            isinstance(condition, dict)
            and condition.get("type") in ("Complete", "Failed")
            and condition.get("status") == "True"
        ):
            return str(condition["type"])
    return None


def by_start_time(jobs: Iterable[RawObject]) -> list[RawObject]:
    """``byJobStartTime``: started Jobs first, oldest first, names breaking ties."""

    def key(job: RawObject) -> tuple[int, datetime, str]:
        started = parse_time((job.get("status") or {}).get("startTime"))
        never = datetime.max.replace(tzinfo=UTC)
        return (0 if started else 1, started or never, str(meta(job).get("name", "")))

    return sorted(jobs, key=key)
