"""The Job controller (``pkg/controller/job/job_controller.go``, release-1.34).

It runs pods for each Job until enough succeed (NonIndexed: ``completions`` of them;
Indexed: one per completion index, each pod told its index by the
``batch.kubernetes.io/job-completion-index`` annotation, label and
``JOB_COMPLETION_INDEX``), at most ``parallelism`` at once, replacing failed pods after
an exponential backoff until ``backoffLimit`` failures (restarts, for OnFailure pods) or
``activeDeadlineSeconds`` fail the Job. ``suspend`` deletes the active pods and holds.

Counting survives restarts and pod deletion through the ``batch.kubernetes.io/job-tracking``
finalizer: a finished pod keeps it until its uid is recorded in
``status.uncountedTerminatedPods``; then the finalizer is removed and the uid moves into
``status.succeeded`` / ``failed`` (Indexed Jobs record ``status.completedIndexes``).
Terminal conditions follow 1.34: SuccessCriteriaMet or FailureTarget first, Complete or
Failed once no pod is terminating or uncounted.

A ``podFailurePolicy`` (:mod:`.pod_failure_policy`) decides what each failed pod means:
fail the Job (reason ``PodFailurePolicy``), fail the pod's index, ignore the failure (not
counted towards ``backoffLimit``) or count it. With a policy, as with
``podReplacementPolicy: Failed``, a terminating pod is replaced only once it has failed.
Indexed Jobs may have ``backoffLimitPerIndex`` and ``maxFailedIndexes``
(:mod:`.backoff_limit_per_index`). Success policies are not implemented.

This module has the controller: informers, event handlers, workers, adoption and the
sync's order of steps. What a sync concludes from the pods is :mod:`.sync_context`'s;
creating and deleting pods :mod:`.pod_management`'s; counting them and writing the
status :mod:`.status_tracking`'s.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion
from kubesched.controllers.controller_utils import (
    ControllerExpectations,
    PodControl,
    owners_selecting,
    resolve_controller_ref,
    run_workers,
)
from kubesched.controllers.job import conditions as cond
from kubesched.controllers.job.backoff_utils import (
    DEFAULT_POD_FAILURE_BACKOFF,
    MAX_POD_FAILURE_BACKOFF,
    BackoffRecord,
    next_record,
)
from kubesched.controllers.job.indexed_job_utils import is_indexed
from kubesched.controllers.job.pod_management import JobPodManager, remove_tracking_finalizer
from kubesched.controllers.job.pods import (
    JOB_TRACKING_FINALIZER,
    RawObject,
    controller_ref,
    format_time,
    has_tracking_finalizer,
    is_deleting,
    meta,
    parse_time,
    uid,
)
from kubesched.controllers.job.status_tracking import JobStatusTracker
from kubesched.controllers.job.sync_context import (
    JOBS,
    JobSyncError,
    count_finished,
    deadline_left,
    is_complete,
    judge_finished,
    judge_indexes,
    new_finished_pods,
    new_sync_context,
    suspended,
    with_kind,
)
from kubesched.controllers.job.tracking_utils import (
    FinalizerExpectations,
    as_int,
    managed_elsewhere,
)
from kubesched.controllers.ownerindex import OwnerIndex, object_key, shared_index
from kubesched.kube import Client, Informer, KubeError
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS
from kubesched.kube.workqueue import ItemExponentialFailureRateLimiter, WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import LabelSelector

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["JOBS", "NAME", "JobController", "start_job_controller"]

log = logging.getLogger(__name__)

#: The controller's name (``names.JobController``).
NAME = "job-controller"
#: The event source, as kube-controller-manager's.
COMPONENT = "job-controller"
#: ``syncJobBatchPeriod``: pod events wait this long, so a burst is one sync.
SYNC_JOB_BATCH_PERIOD = 1.0
#: ``--concurrent-job-syncs``.
DEFAULT_WORKERS = 5
#: ``DefaultJobApiBackOff`` / ``MaxJobApiBackOff``: retries of a failed sync.
API_BACKOFF = 1.0
MAX_API_BACKOFF = 60.0


class JobController:
    """Syncs Jobs and their pods until cancelled: ``await JobController(client).run()``.

    **jobs** / **pods**: informers to share (default: the controller's own).
    **workers**: concurrent syncs. **batch_period**: seconds pod events are batched.
    **pod_failure_backoff** / **max_pod_failure_backoff**: the delay before replacing
    failed pods (10 s doubling to 10 min upstream; tests shorten it). **clock**: the
    time Job timestamps and deadlines are computed from.
    """

    def __init__(
        self,
        client: Client,
        jobs: Informer[RawObject] | None = None,
        pods: Informer[RawObject] | None = None,
        pod_index: OwnerIndex | None = None,
        workers: int = DEFAULT_WORKERS,
        batch_period: float = SYNC_JOB_BATCH_PERIOD,
        pod_failure_backoff: float = DEFAULT_POD_FAILURE_BACKOFF,
        max_pod_failure_backoff: float = MAX_POD_FAILURE_BACKOFF,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.client = client
        self._owns_informers = jobs is None and pods is None
        self.jobs = jobs if jobs is not None else Informer(client, JOBS)
        self.pods = pods if pods is not None else Informer(client, PODS.raw)
        self.workers = workers
        self.batch_period = batch_period
        self.pod_failure_backoff = pod_failure_backoff
        self.max_pod_failure_backoff = max_pod_failure_backoff
        self.clock = clock or (lambda: datetime.now(UTC))
        self.queue: WorkQueue[str] = WorkQueue(
            "job", ItemExponentialFailureRateLimiter(API_BACKOFF, MAX_API_BACKOFF)
        )
        self.orphan_queue: WorkQueue[str] = WorkQueue(
            "job_orphan_pod", ItemExponentialFailureRateLimiter(API_BACKOFF, MAX_API_BACKOFF)
        )
        self.recorder = EventRecorder(client, COMPONENT)
        self.pod_control = PodControl(client, self.recorder)
        self.expectations = ControllerExpectations()
        self.finalizer_expectations = FinalizerExpectations()
        self._backoff: dict[str, BackoffRecord] = {}
        self.pod_manager = JobPodManager(
            client,
            self.pod_control,
            self.expectations,
            self.queue,
            self.clock,
            pod_failure_backoff,
            max_pod_failure_backoff,
            batch_period,
        )
        self.status_tracker = JobStatusTracker(
            client, self.finalizer_expectations, self._backoff, self.recorder, self.clock
        )
        if pod_index is None:
            pod_index = shared_index(self.pods)
        #: Pods by the uid of their controller (``AddPodControllerUIDIndexer``), and orphans.
        self.pod_index = pod_index
        self.jobs.add_handler(self._job_added, self._job_updated, self._job_deleted)
        self.pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted_final)

    # --- running --------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the caches, then sync until cancelled."""
        try:
            if self._owns_informers:
                self.jobs.start()
                self.pods.start()
            await self.jobs.wait_for_sync()
            await self.pods.wait_for_sync()
            # Upstream has one orphan worker; a cascade of a big Job releases its pods
            # one patch at a time there, so ours run as many as the sync workers.
            await asyncio.gather(
                run_workers(
                    self.queue, self.sync, COMPONENT, self.workers, (KubeError, JobSyncError)
                ),
                run_workers(
                    self.orphan_queue, self.sync_orphan_pod, f"{COMPONENT} orphans", self.workers
                ),
            )
        finally:
            if self._owns_informers:
                await self.jobs.stop()
                await self.pods.stop()
            await self.recorder.flush()

    # --- event handlers: objects to keys, nothing else -------------------------------

    def _resolve(self, namespace: str, ref: RawObject | None) -> RawObject | None:
        """The Job a controller reference names, if it is in the cache with that uid."""
        return resolve_controller_ref(self.jobs, namespace, ref, "Job")

    def _enqueue_batched(self, job: RawObject) -> None:
        self.queue.add_after(object_key(job), self.batch_period)

    def _pod_added(self, pod: RawObject) -> None:
        if is_deleting(pod):
            # A pod already being deleted is no creation to observe (a restart).
            self._pod_deleted(pod, final=False)
            return
        ref = controller_ref(pod)
        if ref is not None:
            job = self._resolve(str(meta(pod).get("namespace", "")), ref)
            if job is None:
                return
            self.expectations.creation_observed(object_key(job))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self.orphan_queue.add(object_key(pod))
        # A Job whose selector matches may adopt it.
        for job in self._jobs_selecting(pod):
            self._enqueue_batched(job)

    def _jobs_selecting(self, pod: RawObject) -> list[RawObject]:
        """The Jobs of the pod's namespace whose selector matches it (``GetPodJobs``)."""
        return owners_selecting(self.jobs, pod)

    def _pod_updated(self, old: RawObject, pod: RawObject) -> None:
        if meta(old).get("resourceVersion") == meta(pod).get("resourceVersion"):
            return
        if is_deleting(pod):
            # Replacements need not wait for the kubelet to remove the pod.
            self._pod_deleted(pod, final=False)
            return
        finalizer_removed = not has_tracking_finalizer(pod)
        namespace = str(meta(pod).get("namespace", ""))
        ref, old_ref = controller_ref(pod), controller_ref(old)
        if old_ref is not None and old_ref != ref:
            job = self._resolve(namespace, old_ref)
            if job is not None:
                if finalizer_removed:
                    self.finalizer_expectations.removal_observed(object_key(job), uid(pod))
                self._enqueue_batched(job)
        if ref is not None:
            job = self._resolve(namespace, ref)
            if job is None:
                return
            if finalizer_removed:
                self.finalizer_expectations.removal_observed(object_key(job), uid(pod))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self.orphan_queue.add(object_key(pod))
        if meta(old).get("labels") != meta(pod).get("labels") or old_ref != ref:
            for job in self._jobs_selecting(pod):
                self._enqueue_batched(job)

    def _pod_deleted_final(self, pod: RawObject) -> None:
        self._pod_deleted(pod, final=True)

    def _pod_deleted(self, pod: RawObject, final: bool) -> None:
        ref = controller_ref(pod)
        has_finalizer = has_tracking_finalizer(pod)
        if ref is None:
            # The garbage collector may have removed the reference: clean the finalizer.
            if has_finalizer:
                self.orphan_queue.add(object_key(pod))
            return
        job = self._resolve(str(meta(pod).get("namespace", "")), ref)
        if job is None or cond.is_finished(job):
            if has_finalizer:
                self.orphan_queue.add(object_key(pod))
            return
        key = object_key(job)
        self.expectations.deletion_observed(key)
        if final or not has_finalizer:
            self.finalizer_expectations.removal_observed(key, uid(pod))
        self._enqueue_batched(job)

    def _job_added(self, job: RawObject) -> None:
        self.queue.add(object_key(job))

    def _job_updated(self, old: RawObject, job: RawObject) -> None:
        key = object_key(job)
        if meta(old).get("generation") == meta(job).get("generation"):
            self._enqueue_batched(job)
        else:
            self.queue.add(key)  # the spec changed: act now
        if cond.is_finished(job):
            self._cleanup_pod_finalizers(job)  # a backup: it should have none left
        start = parse_time((job.get("status") or {}).get("startTime"))
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        old_deadline = (old.get("spec") or {}).get("activeDeadlineSeconds")
        if start is not None and isinstance(deadline, int) and deadline != old_deadline:
            passed = (self.clock() - start).total_seconds()
            self.queue.add_after(key, deadline - passed)

    def _job_deleted(self, job: RawObject) -> None:
        self.queue.add(object_key(job))
        self._cleanup_pod_finalizers(job)

    def _cleanup_pod_finalizers(self, job: RawObject) -> None:
        for pod in self.pod_index.owned_by(uid(job)):
            if has_tracking_finalizer(pod):
                self.orphan_queue.add(object_key(pod))

    # --- orphan pods ----------------------------------------------------------------

    async def sync_orphan_pod(self, key: str) -> None:
        """Remove the tracking finalizer of a pod no unfinished Job of ours controls."""
        pod = self.pods.get(key)
        if pod is None:
            return
        ref = controller_ref(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return  # someone else's pod
            job = self._resolve(str(meta(pod).get("namespace", "")), ref)
            if job is not None and managed_elsewhere(job):
                return
            if job is not None and not cond.is_finished(job):
                return  # adopted: its Job counts it
        await remove_tracking_finalizer(self.client, pod)

    # --- sync -----------------------------------------------------------------------

    async def _pods_for_job(self, job: RawObject) -> list[RawObject]:
        """The pods the Job controls: its own, less those its selector no longer
        matches (released), plus matching orphans (adopted, with the tracking
        finalizer) (``getPodsForJob``)."""
        m = meta(job)
        namespace, name = str(m.get("namespace") or ""), str(m.get("name") or "")
        try:
            selector = LabelSelector.from_dict((job.get("spec") or {}).get("selector") or {})
        except ObjectError as exc:
            raise JobSyncError(f"job {namespace}/{name}: invalid selector: {exc}") from exc
        job_uid = uid(job)
        candidates = self.pod_index.owned_by(job_uid) + self.pod_index.orphans(namespace)

        async def fetch() -> RawObject:
            fresh: RawObject = await self.client.get(JOBS, name, namespace)
            return fresh

        manager = ControllerRefManager(
            job,
            "batch/v1",
            "Job",
            selector,
            self.pod_control.patch_pod,
            recheck_deletion(fetch, job_uid, f"Job {namespace}/{name}"),
            finalizers=(JOB_TRACKING_FINALIZER,),
        )
        pods = await manager.claim(candidates)
        claimed = []
        for pod in pods:
            adopted = all(
                ref.get("uid") != job_uid for ref in meta(pod).get("ownerReferences") or []
            )
            if adopted and not has_tracking_finalizer(pod):
                # Count the adopted pod as the patch made it.
                pod = copy.deepcopy(pod)
                pod["metadata"]["finalizers"] = [
                    *(pod["metadata"].get("finalizers") or []),
                    JOB_TRACKING_FINALIZER,
                ]
            claimed.append(pod)
        return claimed

    async def sync(self, key: str) -> None:
        """Bring one Job's pods and status in line with its spec (``syncJob``)."""
        shared = self.jobs.get(key)
        if shared is None:
            self.expectations.delete_expectations(key)
            self.finalizer_expectations.delete_expectations(key)
            self._backoff.pop(key, None)
            return
        if managed_elsewhere(shared):
            return
        if cond.is_finished(shared):
            self._backoff.pop(key, None)
            return
        if (shared.get("spec") or {}).get("completionMode") not in (None, "NonIndexed", "Indexed"):
            self._event(
                shared,
                "Warning",
                "UnknownCompletionMode",
                "Skipped Job sync because completion mode is unknown",
            )
            return
        job = copy.deepcopy(shared)
        now = self.clock()
        # Expectations first: a pod created after the listing must not sneak in.
        satisfied = self.expectations.satisfied_expectations(key)
        pods = await self._pods_for_job(job)
        ctx = new_sync_context(job, pods, self.finalizer_expectations.expected(key))
        status = job["status"]
        active = len(ctx.active_pods)
        new_succeeded, new_failed = new_finished_pods(ctx)
        count_finished(ctx, new_succeeded, new_failed)
        if not status.get("startTime") and not suspended(job):
            status["startTime"] = format_time(now)
        ctx.backoff = next_record(
            self._backoff.get(key, BackoffRecord()), new_succeeded, new_failed
        )
        judge_finished(ctx, now)
        if ctx.finished is None:
            left = deadline_left(job, now)
            if left is not None:
                self.queue.add_after(key, left)
        if is_indexed(job):
            judge_indexes(ctx)

        suspend_changed = False
        failure: Exception | None = None
        if ctx.finished is not None:
            # Finished (or about to be): no pod may keep running.
            deleted_ready, deleted, failure = await self.pod_manager.delete_active_pods(
                job, ctx.active_pods
            )
            if deleted != active or not satisfied:
                # Pods may still be running, or not yet in the cache: not finished yet.
                ctx.finished = None
            active -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
        else:
            manage_called = False
            if satisfied and not meta(job).get("deletionTimestamp"):
                active, failure = await self.pod_manager.manage(ctx)
                manage_called = True
            if is_complete(ctx, active):
                ctx.finished = cond.Condition(
                    cond.SUCCESS_CRITERIA_MET,
                    cond.REASON_COMPLETIONS_REACHED,
                    cond.MESSAGE_COMPLETIONS_REACHED,
                )
            elif manage_called:
                suspend_changed = self._ensure_suspended_condition(job, format_time(now))

        old = shared.get("status") or {}
        needs_update = (
            suspend_changed
            or active != as_int(old.get("active"), 0)
            or ctx.ready != old.get("ready")
            or ctx.terminating != old.get("terminating")
        )
        status["active"] = active
        status["ready"] = ctx.ready
        status["terminating"] = ctx.terminating
        await self.status_tracker.track(key, ctx, needs_update)
        if failure is not None:
            raise JobSyncError(str(failure)) from failure

    def _ensure_suspended_condition(self, job: RawObject, stamp: str) -> bool:
        """Suspended True while ``suspend`` holds, False once resumed (with its event);
        returns whether the condition changed."""
        conds = job["status"]["conditions"]
        if suspended(job):
            wanted = cond.Condition(cond.SUSPENDED, "JobSuspended", "Job suspended")
            if not cond.ensure(conds, wanted, stamp):
                return False
            self._event(job, "Normal", "Suspended", "Job suspended")
            return True
        wanted = cond.Condition(cond.SUSPENDED, "JobResumed", "Job resumed", status="False")
        if not cond.ensure(conds, wanted, stamp):
            return False
        self._event(job, "Normal", "Resumed", "Job resumed")
        # activeDeadlineSeconds counts continuous activity: restart it.
        job["status"]["startTime"] = stamp
        return True

    def _event(self, job: RawObject, kind: str, reason: str, message: str) -> None:
        self.recorder.event(with_kind(job), kind, reason, message)


def start_job_controller(ctx: ControllerContext) -> JobController:
    """The Job controller's init function for the controller manager."""
    opts = ctx.options
    return JobController(
        ctx.client(NAME),
        ctx.informers.informer(JOBS),
        ctx.informers.informer(PODS),
        batch_period=opts.job_sync_batch_period,
        pod_failure_backoff=opts.job_pod_failure_backoff,
        max_pod_failure_backoff=opts.job_max_pod_failure_backoff,
    )
