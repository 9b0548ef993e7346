"""The CronJob controller's pure rules (controllers.cronjob.utils) with a fixed clock:
which schedule time is due, how many were missed, when to look again, the Job made for a
time, and the bookkeeping of status.active."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kubesched.controllers.cronjob import utils
from kubesched.objects.cron import ScheduleError

T0 = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)  # a Monday, 10:00 UTC


def cron_job(schedule="*/10 * * * *", created=T0, last=None, deadline=None, zone=None, **spec):
    body = {"schedule": schedule, "jobTemplate": {"spec": {"template": {}}}, **spec}
    if deadline is not None:
        body["startingDeadlineSeconds"] = deadline
    if zone is not None:
        body["timeZone"] = zone
    obj = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "hello",
            "namespace": "ns",
            "uid": "cj-uid",
            "creationTimestamp": utils.format_time(created),
        },
        "spec": body,
        "status": {},
    }
    if last is not None:
        obj["status"]["lastScheduleTime"] = utils.format_time(last)
    return obj


def minutes(n):
    return timedelta(minutes=n)


@pytest.mark.parametrize(
    ("cj", "now", "expected", "missed"),
    [
        pytest.param(cron_job(), T0 + minutes(5), None, utils.Missed.NONE, id="not-yet-due"),
        pytest.param(
            cron_job(), T0 + minutes(10), T0 + minutes(10), utils.Missed.NONE, id="due-exactly"
        ),
        pytest.param(
            cron_job(), T0 + minutes(15), T0 + minutes(10), utils.Missed.NONE, id="due-once"
        ),
        pytest.param(
            cron_job(), T0 + minutes(35), T0 + minutes(30), utils.Missed.FEW, id="missed-a-few"
        ),
        pytest.param(
            cron_job(last=T0 + minutes(30)),
            T0 + minutes(35),
            None,
            utils.Missed.NONE,
            id="last-schedule-time-counts-from",
        ),
        pytest.param(
            cron_job(schedule="* * * * *"),
            T0 + minutes(500),
            T0 + minutes(500),
            utils.Missed.MANY,
            id="too-many",
        ),
        pytest.param(
            cron_job(schedule="30 6-16/4 * * 1-5"),
            T0 + timedelta(days=1, hours=5),
            T0 + timedelta(days=1, hours=4, minutes=30),
            utils.Missed.FEW,
            id="irregular-schedule",
        ),
    ],
)
def test_most_recent_schedule_time(cj, now, expected, missed):
    schedule = utils.cron_schedule(cj)
    earliest, most_recent, kind = utils.most_recent_schedule_time(cj, now, schedule, False)
    assert earliest == utils.parse_time(
        cj["status"].get("lastScheduleTime") or cj["metadata"]["creationTimestamp"]
    )
    assert (most_recent, kind) == (expected, missed)


def test_the_starting_deadline_moves_the_earliest_time():
    cj = cron_job(schedule="* * * * *", deadline=120)
    now = T0 + minutes(500)
    schedule = utils.cron_schedule(cj)
    earliest, most_recent, missed = utils.most_recent_schedule_time(cj, now, schedule, True)
    assert earliest == now - timedelta(seconds=120)
    assert (most_recent, missed) == (now, utils.Missed.FEW)
    # Without the deadline (as for the requeue delay) the same CronJob missed too many.
    assert utils.most_recent_schedule_time(cj, now, schedule, False)[2] is utils.Missed.MANY


def test_a_schedule_that_never_comes_is_invalid():
    cj = cron_job(schedule="0 0 30 2 *")
    with pytest.raises(utils.InvalidSchedule, match="less than 1 second"):
        utils.most_recent_schedule_time(cj, T0 + minutes(1), utils.cron_schedule(cj), True)


def test_next_schedule_delay_aims_just_after_the_next_time():
    cj = cron_job()
    delay = utils.next_schedule_delay(cj, T0 + minutes(3), utils.cron_schedule(cj))
    assert delay == pytest.approx(7 * 60 + 0.1)
    # After missed times the next one is counted from now.
    delay = utils.next_schedule_delay(cj, T0 + minutes(33), utils.cron_schedule(cj))
    assert delay == pytest.approx(7 * 60 + 0.1)


def test_time_zone_moves_the_schedule():
    # 09:00 in Riga (UTC+2 in March before the switch) is 07:00 UTC.
    cj = cron_job(schedule="0 9 * * *", zone="Europe/Riga", created=T0)
    schedule = utils.cron_schedule(cj)
    assert schedule.next(T0) == datetime(2026, 3, 3, 7, 0, tzinfo=UTC)
    # A TZ= prefix in the schedule wins over timeZone.
    prefixed = cron_job(schedule="TZ=Asia/Tokyo 0 9 * * *", zone="Europe/Riga")
    assert utils.cron_schedule(prefixed).next(T0) == datetime(2026, 3, 3, 0, 0, tzinfo=UTC)


def test_an_unparseable_schedule_raises():
    with pytest.raises(ScheduleError):
        utils.cron_schedule(cron_job(schedule="every minute"))


def test_job_from_template_names_owns_and_annotates():
    cj = cron_job(zone="Europe/Riga")
    cj["spec"]["jobTemplate"] = {
        "metadata": {"labels": {"app": "hello"}, "annotations": {"note": "x"}},
        "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never"}}},
    }
    scheduled = T0 + minutes(10)
    job = utils.job_from_template(cj, scheduled)
    assert job["metadata"] == {
        "name": f"hello-{int(scheduled.timestamp()) // 60}",
        "namespace": "ns",
        "labels": {"app": "hello"},
        "annotations": {
            "note": "x",
            utils.SCHEDULED_TIMESTAMP_ANNOTATION: "2026-03-02T12:10:00+02:00",
        },
        "ownerReferences": [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": "hello",
                "uid": "cj-uid",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert job["spec"] == cj["spec"]["jobTemplate"]["spec"]
    assert job["spec"] is not cj["spec"]["jobTemplate"]["spec"]
    assert utils.scheduled_timestamp(cron_job(), scheduled) == "2026-03-02T10:10:00Z"


def test_active_list_bookkeeping():
    cj = cron_job()
    job = {"metadata": {"name": "hello-1", "namespace": "ns", "uid": "u1", "resourceVersion": "7"}}
    cj["status"]["active"] = [utils.object_reference(job)]
    assert utils.in_active_list(cj, "u1") and not utils.in_active_list(cj, "u2")
    assert utils.in_active_list_by_name(cj, "ns", "hello-1")
    assert not utils.in_active_list_by_name(cj, "other", "hello-1")
    utils.delete_from_active_list(cj, "u1")
    assert "active" not in cj["status"]


def test_finished_status_and_start_time_order():
    def job(name, start=None, condition=None):
        status = {}
        if start is not None:
            status["startTime"] = utils.format_time(start)
        if condition is not None:
            status["conditions"] = [{"type": condition, "status": "True"}]
        return {"metadata": {"name": name}, "status": status}

    assert utils.finished_status(job("a", condition="Complete")) == "Complete"
    assert utils.finished_status(job("a", condition="Failed")) == "Failed"
    assert utils.finished_status(job("a", condition="Suspended")) is None
    jobs = [job("c"), job("b", T0 + minutes(1)), job("a", T0 + minutes(1)), job("d", T0)]
    assert [j["metadata"]["name"] for j in utils.by_start_time(jobs)] == ["d", "a", "b", "c"]
