"""The Job controller's pod management (``manageJob``, ``deleteJobPods``,
``deleteActivePods`` of ``job_controller.go``): create pods towards ``parallelism``
after the failure backoff — Job-wide, or per index with ``backoffLimitPerIndex`` — in
slow-start batches, delete surplus or suspended pods (releasing their tracking finalizer:
they are not counted), and stop the pods of a Job that is finishing (keeping it: the
status tracking counts them first).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime

from kubesched.controllers.controller_utils import (
    ControllerExpectations,
    PodControl,
    slow_start_batch,
)
from kubesched.controllers.job.backoff_limit_per_index import (
    has_backoff_limit_per_index,
    remaining_time_per_index,
    with_index_failure_counts,
)
from kubesched.controllers.job.indexed_job_utils import (
    completion_index,
    first_pending_indexes,
    is_indexed,
)
from kubesched.controllers.job.pods import (
    JOB_TRACKING_FINALIZER,
    RawObject,
    has_tracking_finalizer,
    is_ready,
    is_terminating,
    meta,
    uid,
)
from kubesched.controllers.job.sync_context import SyncContext, suspended, with_kind
from kubesched.controllers.job.tracking_utils import (
    active_pods_for_removal,
    as_int,
    only_replace_failed_pods,
)
from kubesched.controllers.ownerindex import object_key
from kubesched.kube import Client, KubeError, NotFound
from kubesched.kube.resources import PODS
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.podtemplate import controller_ref as new_controller_ref
from kubesched.objects.workloadpods import (
    indexed_job_generate_name,
    indexed_job_pod_template,
    job_pod_template,
)

#: ``MaxPodCreateDeletePerSync``.
MAX_POD_CREATE_DELETE_PER_SYNC = 500


async def remove_tracking_finalizer(client: Client, pod: RawObject) -> None:
    """Remove the Job tracking finalizer from ``pod`` (gone already: nothing to do)."""
    if not has_tracking_finalizer(pod):
        return
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}
    m = meta(pod)
    with contextlib.suppress(NotFound):  # gone: nothing holds it any more
        await client.patch(
            PODS.raw, str(m.get("name")), patch, str(m.get("namespace")), "strategic"
        )


class JobPodManager:
    """Creates and deletes the pods of the Jobs one controller syncs.

    **queue**: the controller's work queue, where a Job waiting out a backoff is put
    back. **clock**, **pod_failure_backoff**, **max_pod_failure_backoff**,
    **batch_period**: as the controller's.
    """

    def __init__(
        self,
        client: Client,
        pod_control: PodControl,
        expectations: ControllerExpectations,
        queue: WorkQueue[str],
        clock: Callable[[], datetime],
        pod_failure_backoff: float,
        max_pod_failure_backoff: float,
        batch_period: float,
    ) -> None:
        self.client = client
        self.pod_control = pod_control
        self.expectations = expectations
        self.queue = queue
        self.clock = clock
        self.pod_failure_backoff = pod_failure_backoff
        self.max_pod_failure_backoff = max_pod_failure_backoff
        self.batch_period = batch_period

    async def manage(self, ctx: SyncContext) -> tuple[int, Exception | None]:
        """Create or delete pods towards ``parallelism`` (``manageJob``); returns the
        active count and the first failure."""
        job = ctx.job
        key = object_key(job)
        spec = job.get("spec") or {}
        active = len(ctx.active_pods)
        parallelism = as_int(spec.get("parallelism"), 1)
        if suspended(job):
            doomed = active_pods_for_removal(job, ctx.active_pods, active)
            self.expectations.expect_deletions(key, len(doomed))
            removed_ready, removed, failure = await self._delete_job_pods(job, key, doomed)
            ctx.terminating += removed
            ctx.ready -= removed_ready
            return active - removed, failure

        completions = ctx.completions
        if completions is None:
            want = active if ctx.succeeded > 0 else parallelism
        else:
            want = max(min(completions - ctx.succeeded, parallelism), 0)
        doomed = active_pods_for_removal(job, ctx.active_pods, max(active - want, 0))
        doomed = doomed[:MAX_POD_CREATE_DELETE_PER_SYNC]
        if doomed:
            # Deletions and creations never share a sync; deletions go first.
            self.expectations.expect_deletions(key, len(doomed))
            removed_ready, removed, failure = await self._delete_job_pods(job, key, doomed)
            ctx.terminating += removed
            ctx.ready -= removed_ready
            return active - removed, failure

        waiting = ctx.terminating if only_replace_failed_pods(job) else 0
        diff = want - waiting - active
        if diff <= 0:
            return active, None
        per_index = has_backoff_limit_per_index(job)
        if not per_index:
            # With backoffLimitPerIndex each index waits its own backoff instead.
            remaining = ctx.backoff.remaining(
                self.clock(), self.pod_failure_backoff, self.max_pod_failure_backoff
            )
            if remaining > 0:
                # Upstream reports 0 active here; the count we know is the truer one.
                self.queue.add_after(key, max(remaining, self.batch_period))
                return active, None
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int] = []
        if is_indexed(job):
            held = {completion_index(p) for p in ctx.active_pods}
            if only_replace_failed_pods(job):
                held |= {completion_index(p) for p in ctx.pods if is_terminating(p)}
            excluded = ctx.succeeded_indexes | held | (ctx.failed_indexes or set())
            indexes = first_pending_indexes(diff, completions or 0, excluded)
            if per_index:
                indexes, remaining = self._indexes_past_backoff(indexes, ctx.delayed_deletion)
                if remaining > 0:
                    self.queue.add_after(key, max(remaining, self.batch_period))
                    return active, None
            diff = len(indexes)
        if diff <= 0:
            return active, None
        created, failure = await self._create_pods(job, key, diff, indexes, ctx.delayed_deletion)
        return active + created, failure

    def _indexes_past_backoff(
        self, indexes: list[int], last_failed: dict[int, RawObject]
    ) -> tuple[list[int], float]:
        """The indexes whose backoff is over; if none, the shortest wait
        (``getPodCreationInfoForIndependentIndexes``)."""
        now = self.clock()
        ready: list[int] = []
        shortest: float | None = None
        for index in indexes:
            remaining = remaining_time_per_index(
                now,
                self.pod_failure_backoff,
                self.max_pod_failure_backoff,
                last_failed.get(index),
            )
            if remaining <= 0:
                ready.append(index)
            elif shortest is None or remaining < shortest:
                shortest = remaining
        if ready:
            return ready, 0.0
        return ready, shortest or 0.0

    async def _create_pods(
        self,
        job: RawObject,
        key: str,
        count: int,
        indexes: list[int],
        replaced: dict[int, RawObject],
    ) -> tuple[int, Exception | None]:
        """Create ``count`` pods (one per index of ``indexes`` for an Indexed Job, each
        given its index's failure count from the failed pod it ``replaced``) in
        slow-start batches; pods never attempted are no longer expected."""
        self.expectations.expect_creations(key, count)
        # The very templates the policy lab expands a Job's manifest with.
        template = job_pod_template(job)
        owner_ref = new_controller_ref(job, "batch/v1", "Job")
        namespace = str(meta(job).get("namespace", ""))
        owner = with_kind(job)
        pending = list(indexes)
        attempted = 0

        async def create() -> None:
            nonlocal attempted
            attempted += 1
            try:
                if pending:
                    index = pending.pop(0)
                    name = str(meta(job).get("name", ""))
                    indexed = indexed_job_pod_template(template, name, index)
                    if has_backoff_limit_per_index(job):
                        with_index_failure_counts(indexed, job, replaced.get(index))
                    await self.pod_control.create_pods(
                        namespace,
                        indexed,
                        owner,
                        owner_ref,
                        generate_name=indexed_job_generate_name(name, index),
                    )
                else:
                    await self.pod_control.create_pods(namespace, template, owner, owner_ref)
            except Exception:
                # The informer will never see this pod: stop waiting for it.
                self.expectations.creation_observed(key)
                raise

        created, failure = await slow_start_batch(count, 1, create)
        for _ in range(count - attempted):
            self.expectations.creation_observed(key)
        if failure is not None and not isinstance(failure, Exception):
            raise failure
        return created, failure

    async def delete_active_pods(
        self, job: RawObject, pods: list[RawObject]
    ) -> tuple[int, int, Exception | None]:
        """Delete the active pods of a finishing Job, keeping their finalizers (they are
        counted, then released, by the status tracking) (``deleteActivePods``); returns
        the ready and all pods deleted, and the first failure."""
        results = await asyncio.gather(
            *(self._delete_pod(job, pod) for pod in pods), return_exceptions=True
        )
        return _tally(pods, results)

    async def _delete_job_pods(
        self, job: RawObject, key: str, pods: list[RawObject]
    ) -> tuple[int, int, Exception | None]:
        """Delete surplus pods, releasing their finalizer first: they are not counted
        (``deleteJobPods``)."""

        async def one(pod: RawObject) -> None:
            try:
                await remove_tracking_finalizer(self.client, pod)
                await self._delete_pod(job, pod)
            except KubeError:
                self.expectations.deletion_observed(key)
                raise

        results = await asyncio.gather(*(one(p) for p in pods), return_exceptions=True)
        return _tally(pods, results)

    async def _delete_pod(self, job: RawObject, pod: RawObject) -> None:
        m = meta(pod)
        with contextlib.suppress(NotFound):
            await self.pod_control.delete_pod(
                str(m.get("namespace")), str(m.get("name")), with_kind(job), uid(pod)
            )


def _tally(
    pods: list[RawObject], results: list[BaseException | None]
) -> tuple[int, int, Exception | None]:
    """The ready pods and all pods whose deletion succeeded, and the first failure."""
    ready = deleted = 0
    failure: Exception | None = None
    for pod, result in zip(pods, results, strict=True):
        if isinstance(result, Exception):
            failure = failure or result
            continue
        deleted += 1
        ready += is_ready(pod)
    return ready, deleted, failure
