"""The Job controller's status tracking (``trackJobStatusAndRemoveFinalizers`` and
``flushUncountedAndRemoveFinalizers`` of ``job_controller.go``).

Finished pods are first recorded in ``status.uncountedTerminatedPods`` (written before
anything else), then released by removing their tracking finalizer, then moved from the
uncounted lists into ``succeeded`` / ``failed`` — so a pod is counted exactly once, even
across restarts. A failure the pod failure policy ignores is released without being
counted. FailureTarget or SuccessCriteriaMet is written before any pod is released;
Failed or Complete once no pod is uncounted or terminating, with the Job's last event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from kubesched.controllers.job import conditions as cond
from kubesched.controllers.job.backoff_utils import BackoffRecord
from kubesched.controllers.job.indexed_job_utils import (
    UNKNOWN_INDEX,
    completion_index,
    format_indexes,
    is_indexed,
)
from kubesched.controllers.job.pod_failure_policy import match_pod_failure_policy, policy_of
from kubesched.controllers.job.pod_management import remove_tracking_finalizer
from kubesched.controllers.job.pods import (
    RawObject,
    format_time,
    has_tracking_finalizer,
    meta,
    phase,
    uid,
)
from kubesched.controllers.job.sync_context import JOBS, JobSyncError, SyncContext, with_kind
from kubesched.controllers.job.tracking_utils import (
    FinalizerExpectations,
    as_int,
    clean_uncounted,
    is_pod_failed,
)
from kubesched.kube import Client
from kubesched.kube.record import EventRecorder

#: ``MaxUncountedPods``.
MAX_UNCOUNTED_PODS = 500


def can_remove_finalizer(ctx: SyncContext, pod: RawObject, failed: bool) -> bool:
    """Whether the sync may release the pod: it succeeded, the Job is finishing or being
    deleted, or it failed and is not the failed pod its index's replacement waits for
    (``canRemoveFinalizer``)."""
    if meta(ctx.job).get("deletionTimestamp") or ctx.finished or phase(pod) == "Succeeded":
        return True
    if not failed:
        return False  # still running, or terminating without having failed
    kept = ctx.delayed_deletion.get(completion_index(pod))
    return kept is None or uid(kept) != uid(pod)


class JobStatusTracker:
    """Counts the finished pods of the Jobs one controller syncs and writes their status.

    **backoff**: the controller's per-Job failure backoff records, stored once the
    failures they count are written. **recorder**: where the Job's final event goes.
    """

    def __init__(
        self,
        client: Client,
        finalizer_expectations: FinalizerExpectations,
        backoff: dict[str, BackoffRecord],
        recorder: EventRecorder,
        clock: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.finalizer_expectations = finalizer_expectations
        self.backoff = backoff
        self.recorder = recorder
        self.clock = clock

    async def track(self, key: str, ctx: SyncContext, needs_flush: bool) -> None:
        """Record finished pods in ``uncountedTerminatedPods``, remove their finalizers,
        move them into the counters, and add the terminal condition when its time has
        come (``trackJobStatusAndRemoveFinalizers``)."""
        job = ctx.job
        status = job["status"]
        uncounted = status["uncountedTerminatedPods"]
        indexed = is_indexed(job)
        completions = ctx.completions or 0
        policy = policy_of(job)
        pods = sorted(ctx.pods, key=completion_index) if indexed else ctx.pods
        with_finalizer = {
            uid(p)
            for p in pods
            if has_tracking_finalizer(p) and uid(p) not in ctx.expected_rm_finalizers
        }
        if clean_uncounted(status, with_finalizer):
            needs_flush = True
        succeeded_uids = list(uncounted.get("succeeded") or [])
        failed_uids = list(uncounted.get("failed") or [])
        new_indexes: list[int] = []
        to_release: list[RawObject] = []
        reached_max = False
        for pod in pods:
            pod_uid = uid(pod)
            if not has_tracking_finalizer(pod) or pod_uid in ctx.expected_rm_finalizers:
                continue  # counted in an earlier sync
            failed = is_pod_failed(pod, job)
            if not can_remove_finalizer(ctx, pod, failed):
                continue
            to_release.append(pod)
            if phase(pod) == "Succeeded" and pod_uid not in ctx.uncounted_failed:
                if indexed:
                    index = completion_index(pod)
                    if (
                        UNKNOWN_INDEX < index < completions
                        and index not in ctx.prev_succeeded_indexes
                    ):
                        new_indexes.append(index)
                        needs_flush = True
                elif pod_uid not in ctx.uncounted_succeeded:
                    succeeded_uids.append(pod_uid)
                    needs_flush = True
            elif failed or (
                ctx.finished is not None and ctx.finished.type != cond.SUCCESS_CRITERIA_MET
            ):
                # A finishing Job counts every pod that did not succeed as failed.
                index = completion_index(pod)
                valid = not indexed or UNKNOWN_INDEX < index < completions
                # A failure the pod failure policy ignores is released uncounted.
                counted = match_pod_failure_policy(policy, pod).count_failed
                if pod_uid not in ctx.uncounted_failed and valid and counted:
                    failed_uids.append(pod_uid)
                    needs_flush = True
            if len(new_indexes) + len(succeeded_uids) + len(failed_uids) >= MAX_UNCOUNTED_PODS:
                # Keep the status small and let other Jobs sync; the writes requeue us.
                reached_max = True
                break
        uncounted["succeeded"] = succeeded_uids
        uncounted["failed"] = failed_uids
        if indexed and self._record_indexes(ctx, new_indexes):
            needs_flush = True
        stamp = format_time(self.clock())
        conds = status["conditions"]
        if ctx.finished is not None and ctx.finished.type == cond.FAILURE_TARGET:
            # Record why it fails before any pod is released; Failed comes later.
            cond.ensure(conds, ctx.finished, stamp)
            needs_flush = True
            ctx.finished = cond.Condition(cond.FAILED, ctx.finished.reason, ctx.finished.message)
        if ctx.finished is not None and ctx.finished.type == cond.SUCCESS_CRITERIA_MET:
            if cond.find(conds, cond.SUCCESS_CRITERIA_MET) is None:
                cond.ensure(conds, ctx.finished, stamp)
                needs_flush = True
            ctx.finished = cond.Condition(cond.COMPLETE, ctx.finished.reason, ctx.finished.message)

        needs_flush = await self._flush_and_remove_finalizers(
            key, ctx, to_release, with_finalizer, needs_flush
        )
        finished = not reached_max and self._enact_finished(ctx, stamp)
        if finished:
            needs_flush = True
        if needs_flush:
            ctx.job = await self.update_status(ctx.job)
            if finished:
                self.backoff.pop(key, None)
                self._record_finished(ctx)

    def _record_indexes(self, ctx: SyncContext, new_indexes: list[int]) -> bool:
        """Write ``completedIndexes`` (and ``failedIndexes`` with backoffLimitPerIndex)
        into the status; returns whether they changed."""
        status = ctx.job["status"]
        changed = False
        ctx.succeeded_indexes = ctx.succeeded_indexes | set(new_indexes)
        text = format_indexes(ctx.succeeded_indexes)
        if new_indexes or text != (status.get("completedIndexes") or ""):
            changed = True
        status["succeeded"] = len(ctx.succeeded_indexes)
        status["completedIndexes"] = text
        failed_text = format_indexes(ctx.failed_indexes) if ctx.failed_indexes is not None else None
        if failed_text != status.get("failedIndexes"):
            changed = True
            status["failedIndexes"] = failed_text
        return changed

    async def _flush_and_remove_finalizers(
        self,
        key: str,
        ctx: SyncContext,
        to_release: list[RawObject],
        with_finalizer: set[str],
        needs_flush: bool,
    ) -> bool:
        """Write the uncounted uids, release the pods, count the released ones
        (``flushUncountedAndRemoveFinalizers``). Returns whether a write is pending."""
        if needs_flush:
            ctx.job = await self.update_status(ctx.job)
            self.backoff[key] = ctx.backoff
            needs_flush = False
        failure: Exception | None = None
        if to_release:
            self.finalizer_expectations.expect_removals(key, [uid(p) for p in to_release])
            results = await asyncio.gather(
                *(remove_tracking_finalizer(self.client, p) for p in to_release),
                return_exceptions=True,
            )
            for pod, result in zip(to_release, results, strict=True):
                if isinstance(result, Exception):
                    self.finalizer_expectations.removal_observed(key, uid(pod))
                    failure = failure or result
                else:
                    with_finalizer.discard(uid(pod))
        if clean_uncounted(ctx.job["status"], with_finalizer):
            needs_flush = True
        if failure is not None:
            if needs_flush:
                ctx.job = await self.update_status(ctx.job)
            raise JobSyncError(f"removing tracking finalizers: {failure}") from failure
        return needs_flush

    def _enact_finished(self, ctx: SyncContext, stamp: str) -> bool:
        """Add Complete or Failed once no pod is uncounted or terminating."""
        if ctx.finished is None:
            return False
        uncounted = ctx.job["status"]["uncountedTerminatedPods"]
        if uncounted.get("succeeded") or uncounted.get("failed"):
            return False
        if ctx.terminating > 0:
            return False
        conds = ctx.job["status"]["conditions"]
        cond.ensure(conds, ctx.finished, stamp)
        if ctx.finished.type == cond.COMPLETE:
            done = cond.find(conds, cond.COMPLETE)
            ctx.job["status"]["completionTime"] = (done or {}).get("lastTransitionTime", stamp)
        return True

    def _record_finished(self, ctx: SyncContext) -> None:
        finished = ctx.finished
        assert finished is not None
        job = with_kind(ctx.job)
        if finished.type == cond.COMPLETE:
            completions = ctx.completions
            if completions is not None and as_int(job["status"].get("succeeded"), 0) > completions:
                self.recorder.event(
                    job,
                    "Warning",
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                )
            self.recorder.event(job, "Normal", "Completed", "Job completed")
        else:
            self.recorder.event(job, "Warning", finished.reason, finished.message)

    async def update_status(self, job: RawObject) -> RawObject:
        """Write the Job's status (``updateJobStatus``); returns the Job as written."""
        status = job["status"]
        uncounted = status.get("uncountedTerminatedPods") or {}
        # Empty lists are left out on the wire, as the Go types' omitempty does.
        status["uncountedTerminatedPods"] = {k: v for k, v in uncounted.items() if v}
        if not status.get("conditions"):
            status.pop("conditions", None)
        if is_indexed(job) and not status.get("completedIndexes"):
            status.pop("completedIndexes", None)
        if status.get("failedIndexes") is None:
            status.pop("failedIndexes", None)
        updated = await self.client.update(JOBS, job, subresource="status")
        ustatus = updated.setdefault("status", {})
        ustatus.setdefault("uncountedTerminatedPods", {})
        ustatus["conditions"] = ustatus.get("conditions") or []
        return updated
