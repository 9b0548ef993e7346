"""CronJob schedules: what ``cron.ParseStandard`` (robfig/cron v3, which kube-apiserver
and the CronJob controller use) accepts, evaluated with the ``croniter`` library.

A schedule is five fields (minute, hour, day of month, month, day of week) or one of the
descriptors ``@yearly`` / ``@annually``, ``@monthly``, ``@weekly``, ``@daily`` /
``@midnight``, ``@hourly``, optionally after a ``TZ=<zone>`` or ``CRON_TZ=<zone>`` prefix.
When both day fields are restricted, a time matching either runs (cron's rule). Schedule
times are computed in the schedule's time zone (the CronJob's ``timeZone``, else the
prefix's, else UTC — the controller manager's local time upstream, UTC in a container).

Differences from robfig/cron, chosen by using a maintained library rather than writing a
parser: ``@every <duration>`` is refused; croniter's extensions (``L``, ``#``, ``7`` for
Sunday) are accepted; error messages are croniter's, not Go's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from croniter.croniter import CroniterError

__all__ = ["Schedule", "ScheduleError", "parse_schedule", "time_zone"]

_DESCRIPTORS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be used; the message says why."""


def time_zone(name: str) -> tzinfo:
    """The IANA zone ``name`` (``time.LoadLocation``); "UTC" and "" are UTC."""
    if name in ("", "UTC"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {name}") from None


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: its cron expression and the zone of its own ``TZ=`` prefix."""

    expression: str
    zone: tzinfo | None

    def next_after(self, moment: datetime, zone: tzinfo | None = None) -> datetime | None:
        """The first schedule time strictly after ``moment`` (aware, any zone), in UTC,
        reckoned in ``zone`` (else the prefix's zone, else UTC); None if there is none
        (a day that never comes, such as February 30)."""
        where = zone or self.zone or UTC
        try:
            found = croniter(self.expression, moment.astimezone(where)).get_next(datetime)
        except CroniterError:
            return None
        return found.astimezone(UTC) if isinstance(found, datetime) else None


def parse_schedule(schedule: str) -> Schedule:
    """Parse ``schedule`` as ``cron.ParseStandard`` would; :class:`ScheduleError` if it
    cannot be."""
    text = schedule.strip()
    zone: tzinfo | None = None
    if text.startswith(("TZ=", "CRON_TZ=")):
        prefix, _, text = text.partition(" ")
        zone = time_zone(prefix.split("=", 1)[1])
        text = text.strip()
    if not text:
        raise ScheduleError("empty spec string")
    if text.startswith("@"):
        if text not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {text}")
        expression = text
    else:
        fields = text.split()
        if len(fields) != 5:
            raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{text}]")
        expression = " ".join(fields)
        if not croniter.is_valid(expression):
            try:
                croniter(expression)
            except CroniterError as exc:
                raise ScheduleError(str(exc)) from None
            raise ScheduleError(f"invalid schedule: {text}")
    return Schedule(expression, zone)
