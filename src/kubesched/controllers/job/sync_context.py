"""What one sync of one Job works with (``syncJobCtx``) and what ``syncJob`` concludes
from the Job and its pods alone, before anything is written: the pods finished since the
last count, the counters, the indexes, and whether the Job has met its success criteria
or must fail (reasons and messages worded as upstream's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubesched.controllers.job import conditions as cond
from kubesched.controllers.job.backoff_limit_per_index import (
    failed_indexes,
    has_backoff_limit_per_index,
    pods_with_delayed_deletion,
)
from kubesched.controllers.job.backoff_utils import BackoffRecord
from kubesched.controllers.job.indexed_job_utils import (
    UNKNOWN_INDEX,
    completion_index,
    is_indexed,
    parse_indexes,
)
from kubesched.controllers.job.pod_failure_policy import (
    fail_job_message,
    match_pod_failure_policy,
    policy_of,
)
from kubesched.controllers.job.pods import (
    RawObject,
    has_tracking_finalizer,
    is_active,
    is_ready,
    is_terminating,
    parse_time,
    phase,
    uid,
)
from kubesched.controllers.job.tracking_utils import (
    as_int,
    is_pod_failed,
    past_backoff_limit_on_failure,
)
from kubesched.kube import Resource


def _as_is(raw: RawObject) -> RawObject:
    return raw


#: batch/v1 Jobs, read and written as plain dicts.
JOBS = Resource("batch", "v1", "jobs", "Job", True, _as_is)


class JobSyncError(Exception):
    """Some writes of a sync failed; it is retried with backoff."""


def with_kind(job: RawObject) -> RawObject:
    """The Job with its kind and apiVersion, which events name (list items lack them)."""
    if job.get("kind") and job.get("apiVersion"):
        return job
    return {**job, "kind": "Job", "apiVersion": "batch/v1"}


def suspended(job: RawObject) -> bool:
    """``spec.suspend``."""
    return bool((job.get("spec") or {}).get("suspend"))


@dataclass
class SyncContext:
    """What one sync of one Job computes (``syncJobCtx``)."""

    job: RawObject
    pods: list[RawObject]
    active_pods: list[RawObject]
    ready: int
    terminating: int
    uncounted_succeeded: set[str]
    uncounted_failed: set[str]
    expected_rm_finalizers: set[str]
    succeeded: int = 0
    failed: int = 0
    finished: cond.Condition | None = None
    prev_succeeded_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    #: With backoffLimitPerIndex: the failed indexes, and per index the failed pod kept
    #: until its replacement carries its failure count.
    failed_indexes: set[int] | None = None
    delayed_deletion: dict[int, RawObject] = field(default_factory=dict)
    backoff: BackoffRecord = field(default_factory=BackoffRecord)

    @property
    def completions(self) -> int | None:
        """``spec.completions`` (None: any success completes the Job)."""
        value = (self.job.get("spec") or {}).get("completions")
        return value if isinstance(value, int) else None


def new_sync_context(
    job: RawObject, pods: list[RawObject], expected_rm_finalizers: set[str]
) -> SyncContext:
    """The context of a sync of ``job`` (a copy, its status prepared) and its pods."""
    status = job.setdefault("status", {})
    uncounted = status.get("uncountedTerminatedPods")
    if not isinstance(uncounted, dict):
        uncounted = {}
    status["uncountedTerminatedPods"] = uncounted
    active_pods = [p for p in pods if is_active(p)]
    return SyncContext(
        job=job,
        pods=pods,
        active_pods=active_pods,
        ready=sum(1 for p in active_pods if is_ready(p)),
        terminating=sum(1 for p in pods if is_terminating(p)),
        uncounted_succeeded={str(u) for u in uncounted.get("succeeded") or []},
        uncounted_failed={str(u) for u in uncounted.get("failed") or []},
        expected_rm_finalizers=expected_rm_finalizers,
    )


def new_finished_pods(ctx: SyncContext) -> tuple[list[RawObject], list[RawObject]]:
    """Finished pods not yet counted: they still carry the finalizer and are not in
    ``uncountedTerminatedPods`` (``getNewFinishedPods``)."""
    succeeded, failed = [], []
    indexed = is_indexed(ctx.job)
    completions = ctx.completions or 0
    for pod in ctx.pods:
        pod_uid = uid(pod)
        if not has_tracking_finalizer(pod) or pod_uid in ctx.expected_rm_finalizers:
            continue
        if indexed and not UNKNOWN_INDEX < completion_index(pod) < completions:
            continue
        if phase(pod) == "Succeeded" and pod_uid not in ctx.uncounted_succeeded:
            succeeded.append(pod)
        elif is_pod_failed(pod, ctx.job) and pod_uid not in ctx.uncounted_failed:
            failed.append(pod)
    return succeeded, failed


def count_finished(
    ctx: SyncContext, new_succeeded: list[RawObject], new_failed: list[RawObject]
) -> None:
    """Set the context's succeeded and failed counts: the status's, the uncounted and
    the new ones; a failure the pod failure policy ignores does not count."""
    status = ctx.job["status"]
    ctx.succeeded = (
        as_int(status.get("succeeded"), 0) + len(new_succeeded) + len(ctx.uncounted_succeeded)
    )
    policy = policy_of(ctx.job)
    counted = sum(1 for p in new_failed if match_pod_failure_policy(policy, p).count_failed)
    ctx.failed = as_int(status.get("failed"), 0) + counted + len(ctx.uncounted_failed)


def past_active_deadline(job: RawObject, now: datetime) -> bool:
    """Whether ``activeDeadlineSeconds`` has passed since ``startTime`` (never while
    suspended) (``pastActiveDeadline``)."""
    deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
    start = parse_time((job.get("status") or {}).get("startTime"))
    if not isinstance(deadline, int) or start is None or suspended(job):
        return False
    return (now - start).total_seconds() >= deadline


def deadline_left(job: RawObject, now: datetime) -> float | None:
    """Seconds until ``activeDeadlineSeconds`` passes, or None without one (or while
    suspended)."""
    spec = job.get("spec") or {}
    deadline = spec.get("activeDeadlineSeconds")
    if not isinstance(deadline, int) or suspended(job):
        return None
    start = parse_time((job.get("status") or {}).get("startTime")) or now
    return deadline - (now - start).total_seconds()


def judge_finished(ctx: SyncContext, now: datetime) -> None:
    """Set ``ctx.finished`` from what the Job and its pods say: a condition recorded in
    an earlier sync, a FailJob rule, the backoff limit or the deadline."""
    job, pods = ctx.job, ctx.pods
    conds: list[dict[str, Any]] = job["status"].setdefault("conditions", []) or []
    job["status"]["conditions"] = conds
    met = cond.find(conds, cond.SUCCESS_CRITERIA_MET)
    target = cond.find(conds, cond.FAILURE_TARGET)
    if met is not None and met.get("status") == "True":
        ctx.finished = cond.Condition(
            cond.SUCCESS_CRITERIA_MET, met.get("reason", ""), met.get("message", "")
        )
    elif target is not None and target.get("status") == "True":
        ctx.finished = cond.Condition(
            cond.FAILED, target.get("reason", ""), target.get("message", "")
        )
    else:
        failed_pods = [p for p in pods if is_pod_failed(p, job)]
        message = fail_job_message(policy_of(job), failed_pods)
        if message is not None:
            # FailureTarget first records why, before any finalizer is removed.
            ctx.finished = cond.Condition(
                cond.FAILURE_TARGET, cond.REASON_POD_FAILURE_POLICY, message
            )
    if ctx.finished is None:
        backoff_limit = as_int((job.get("spec") or {}).get("backoffLimit"), 6)
        if ctx.failed > backoff_limit or past_backoff_limit_on_failure(job, pods):
            ctx.finished = cond.Condition(
                cond.FAILURE_TARGET,
                cond.REASON_BACKOFF_LIMIT_EXCEEDED,
                cond.MESSAGE_BACKOFF_LIMIT_EXCEEDED,
            )
        elif past_active_deadline(job, now):
            ctx.finished = cond.Condition(
                cond.FAILURE_TARGET, cond.REASON_DEADLINE_EXCEEDED, cond.MESSAGE_DEADLINE_EXCEEDED
            )


def judge_indexes(ctx: SyncContext) -> None:
    """Indexed Jobs: the succeeded indexes (which are the succeeded count); with
    backoffLimitPerIndex the failed indexes, whether they fail the Job, and the failed
    pods whose removal waits for their replacement."""
    job = ctx.job
    completions = ctx.completions or 0
    ctx.prev_succeeded_indexes = parse_indexes(job["status"].get("completedIndexes"), completions)
    ctx.succeeded_indexes = ctx.prev_succeeded_indexes | {
        completion_index(p)
        for p in ctx.pods
        if phase(p) == "Succeeded"
        and has_tracking_finalizer(p)
        and UNKNOWN_INDEX < completion_index(p) < completions
    }
    ctx.succeeded = len(ctx.succeeded_indexes)
    if not has_backoff_limit_per_index(job):
        return
    ctx.failed_indexes = failed_indexes(job, ctx.pods)
    if ctx.finished is None:
        most = (job.get("spec") or {}).get("maxFailedIndexes")
        failed = len(ctx.failed_indexes)
        if isinstance(most, int) and failed > most:
            ctx.finished = cond.Condition(
                cond.FAILURE_TARGET,
                cond.REASON_MAX_FAILED_INDEXES_EXCEEDED,
                cond.MESSAGE_MAX_FAILED_INDEXES_EXCEEDED,
            )
        elif failed > 0 and failed + len(ctx.succeeded_indexes) >= completions:
            ctx.finished = cond.Condition(
                cond.FAILURE_TARGET, cond.REASON_FAILED_INDEXES, cond.MESSAGE_FAILED_INDEXES
            )
    ctx.delayed_deletion = pods_with_delayed_deletion(
        job,
        ctx.pods,
        {completion_index(p) for p in ctx.active_pods},
        ctx.succeeded_indexes | ctx.failed_indexes,
        ctx.expected_rm_finalizers,
    )


def is_complete(ctx: SyncContext, active: int) -> bool:
    """Enough pods succeeded and none runs (any success, without ``completions``)."""
    if ctx.completions is None:
        return ctx.succeeded > 0 and active == 0
    return ctx.succeeded >= ctx.completions and active == 0
