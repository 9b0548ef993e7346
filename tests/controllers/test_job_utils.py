"""The Job controller's pure rules, table-driven as upstream's unit tests are
(``indexed_job_utils_test.go``, ``backoff_utils_test.go``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kubesched.controllers.job.backoff_utils import BackoffRecord, next_record
from kubesched.controllers.job.indexed_job_utils import (
    duplicated_index_pods,
    first_pending_indexes,
    format_indexes,
    parse_indexes,
)
from kubesched.controllers.job.tracking_utils import (
    clean_uncounted,
    is_pod_failed,
    past_backoff_limit_on_failure,
)
from kubesched.objects.workloadpods import indexed_job_generate_name

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def stamp(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(
    name="p", phase="Running", index=None, finished=None, deleting=False, restarts=0, node="n1"
):
    meta: dict = {"name": name, "uid": name, "creationTimestamp": stamp(0)}
    if index is not None:
        meta["annotations"] = {"batch.kubernetes.io/job-completion-index": str(index)}
    if deleting:
        meta["deletionTimestamp"] = stamp(100)
    state = {"running": {}}
    if finished is not None:
        state = {"terminated": {"finishedAt": stamp(finished)}}
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "containerStatuses": [{"name": "c", "restartCount": restarts, "state": state}],
        },
    }


@pytest.mark.parametrize(
    ("indexes", "text"),
    [
        ([], ""),
        ([0], "0"),
        ([0, 1, 2], "0-2"),
        ([7, 1, 3, 4, 5], "1,3-5,7"),
        ([4, 4, 5], "4,5"),
        ([2, 3, 9, 10, 11], "2,3,9-11"),
    ],
    ids=[
        "none",
        "one",
        "one-interval",
        "intervals-and-singles",
        "duplicates-collapse",
        "two-in-a-row-are-two-singles",
    ],
)
def test_completed_indexes_are_written_as_intervals(indexes, text):
    assert format_indexes(indexes) == text
    assert parse_indexes(text, 100) == set(indexes)


@pytest.mark.parametrize(
    ("text", "completions", "expected"),
    [
        ("1,3-5,7", 5, {1, 3, 4}),
        ("0-2,x,4", 10, {0, 1, 2, 4}),
        ("", 3, set()),
    ],
    ids=["indexes-past-completions-dropped", "malformed-part-skipped", "empty"],
)
def test_parsing_completed_indexes(text, completions, expected):
    assert parse_indexes(text, completions) == expected


@pytest.mark.parametrize(
    ("count", "completions", "excluded", "expected"),
    [
        (2, 5, set(), [0, 1]),
        (3, 5, {0, 2}, [1, 3, 4]),
        (4, 3, {1}, [0, 2]),
    ],
    ids=["lowest-first", "skips-succeeded-and-active", "no-more-than-completions"],
)
def test_first_pending_indexes(count, completions, excluded, expected):
    assert first_pending_indexes(count, completions, excluded) == expected


def test_repeated_and_invalid_indexes_are_removed_keeping_the_furthest_pod():
    pending = pod("a", phase="Pending", index=1, node="")
    running = pod("b", phase="Running", index=1)
    out_of_range = pod("c", index=9)
    unindexed = pod("d")
    alone = pod("e", index=0)
    remove, keep = duplicated_index_pods([pending, running, out_of_range, unindexed, alone], 3)
    assert sorted(p["metadata"]["name"] for p in remove) == ["a", "c", "d"]
    assert sorted(p["metadata"]["name"] for p in keep) == ["b", "e"]


@pytest.mark.parametrize(
    ("name", "index", "expected"),
    [
        ("job", 3, "job-3-"),
        ("j" * 60, 12, "j" * 54 + "-12-"),
    ],
    ids=["short-name", "long-name-cut-to-58"],
)
def test_indexed_pods_generate_name(name, index, expected):
    assert indexed_job_generate_name(name, index) == expected


@pytest.mark.parametrize(
    ("old", "succeeded", "failed", "expected"),
    [
        (BackoffRecord(), [], [], BackoffRecord()),
        (
            BackoffRecord(),
            [],
            [pod(finished=5), pod(finished=9)],
            BackoffRecord(2, T0 + timedelta(seconds=9)),
        ),
        (BackoffRecord(2, T0), [pod(finished=10)], [], BackoffRecord()),
        (
            BackoffRecord(2, T0),
            [pod(finished=10)],
            [pod(finished=4), pod(finished=12)],
            BackoffRecord(1, T0 + timedelta(seconds=12)),
        ),
    ],
    ids=[
        "nothing-new",
        "failures-add-up",
        "a-success-resets",
        "only-failures-after-the-last-success-count",
    ],
)
def test_backoff_record(old, succeeded, failed, expected):
    assert next_record(old, succeeded, failed) == expected


@pytest.mark.parametrize(
    ("failures", "elapsed", "remaining"),
    [(0, 0, 0.0), (1, 4, 6.0), (2, 4, 16.0), (3, 50, 0.0), (20, 0, 600.0)],
    ids=[
        "no-failure",
        "first-failure-10s",
        "doubles",
        "waited-long-enough",
        "capped-at-10-minutes",
    ],
)
def test_backoff_delay(failures, elapsed, remaining):
    record = BackoffRecord(failures, T0 if failures else None)
    assert record.remaining(T0 + timedelta(seconds=elapsed), 10.0, 600.0) == remaining


@pytest.mark.parametrize(
    ("pod_", "policy", "failed"),
    [
        (pod(phase="Failed"), None, True),
        (pod(phase="Running", deleting=True), None, True),
        (pod(phase="Running", deleting=True), "Failed", False),
        (pod(phase="Succeeded", deleting=True), None, False),
        (pod(phase="Running"), None, False),
    ],
    ids=[
        "failed-phase",
        "deleted-before-finishing",
        "deleted-but-only-failed-pods-count",
        "deleted-after-success",
        "running",
    ],
)
def test_which_pods_count_as_failed(pod_, policy, failed):
    job = {"spec": {"podReplacementPolicy": policy} if policy else {}}
    assert is_pod_failed(pod_, job) is failed


@pytest.mark.parametrize(
    ("limit", "restarts", "exceeded"),
    [(0, 0, False), (0, 1, True), (3, 2, False), (3, 3, True)],
    ids=["limit-0-no-restart", "limit-0-one-restart", "below-limit", "at-limit"],
)
def test_restarts_of_onfailure_pods_count_against_backoff_limit(limit, restarts, exceeded):
    job = {"spec": {"backoffLimit": limit, "template": {"spec": {"restartPolicy": "OnFailure"}}}}
    assert past_backoff_limit_on_failure(job, [pod(restarts=restarts)]) is exceeded


def test_released_pods_move_from_uncounted_into_the_counters():
    status = {
        "succeeded": 2,
        "failed": 1,
        "uncountedTerminatedPods": {"succeeded": ["a", "b"], "failed": ["c"]},
    }
    assert clean_uncounted(status, with_finalizer={"b"})
    assert status["succeeded"] == 3
    assert status["failed"] == 2
    assert status["uncountedTerminatedPods"] == {"succeeded": ["b"], "failed": []}
    assert not clean_uncounted(status, with_finalizer={"b"})
