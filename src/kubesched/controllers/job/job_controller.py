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
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion
from kubesched.controllers.controller_utils import (
    ControllerExpectations,
    PodControl,
    process_queue,
    slow_start_batch,
)
from kubesched.controllers.job import conditions as cond
from kubesched.controllers.job.backoff_limit_per_index import (
    failed_indexes,
    has_backoff_limit_per_index,
    pods_with_delayed_deletion,
    remaining_time_per_index,
    with_index_failure_counts,
)
from kubesched.controllers.job.backoff_utils import (
    DEFAULT_POD_FAILURE_BACKOFF,
    MAX_POD_FAILURE_BACKOFF,
    BackoffRecord,
    next_record,
)
from kubesched.controllers.job.indexed_job_utils import (
    COMPLETION_INDEX_ANNOTATION,
    UNKNOWN_INDEX,
    completion_index,
    first_pending_indexes,
    format_indexes,
    is_indexed,
    parse_indexes,
    with_completion_index_env,
)
from kubesched.controllers.job.pod_failure_policy import (
    fail_job_message,
    match_pod_failure_policy,
    policy_of,
)
from kubesched.controllers.job.pods import (
    JOB_TRACKING_FINALIZER,
    RawObject,
    controller_ref,
    format_time,
    has_tracking_finalizer,
    is_active,
    is_deleting,
    is_ready,
    is_terminating,
    meta,
    parse_time,
    phase,
    uid,
)
from kubesched.controllers.job.tracking_utils import (
    FinalizerExpectations,
    active_pods_for_removal,
    as_int,
    clean_uncounted,
    is_pod_failed,
    managed_elsewhere,
    only_replace_failed_pods,
    past_backoff_limit_on_failure,
)
from kubesched.controllers.ownerindex import OwnerIndex, shared_index
from kubesched.kube import Client, Informer, KubeError, NotFound, Resource
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS
from kubesched.kube.workqueue import ItemExponentialFailureRateLimiter, WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import controller_ref as new_controller_ref
from kubesched.objects.selectors import LabelSelector

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

log = logging.getLogger(__name__)

#: The controller's name (``names.JobController``).
NAME = "job-controller"


def _as_is(raw: RawObject) -> RawObject:
    return raw


JOBS = Resource("batch", "v1", "jobs", "Job", True, _as_is)
#: The event source, as kube-controller-manager's.
COMPONENT = "job-controller"
#: ``syncJobBatchPeriod``: pod events wait this long, so a burst is one sync.
SYNC_JOB_BATCH_PERIOD = 1.0
#: ``MaxUncountedPods`` and ``MaxPodCreateDeletePerSync``.
MAX_UNCOUNTED_PODS = 500
MAX_POD_CREATE_DELETE_PER_SYNC = 500
#: ``--concurrent-job-syncs``.
DEFAULT_WORKERS = 5
#: ``DefaultJobApiBackOff`` / ``MaxJobApiBackOff``: retries of a failed sync.
API_BACKOFF = 1.0
MAX_API_BACKOFF = 60.0
#: ``names.MaxGeneratedNameLength``: the server appends 5 random characters.
MAX_GENERATED_NAME_LENGTH = 58


def _with_kind(job: RawObject) -> RawObject:
    """The Job with its kind and apiVersion, which events name (list items lack them)."""
    if job.get("kind") and job.get("apiVersion"):
        return job
    return {**job, "kind": "Job", "apiVersion": "batch/v1"}


def _key(obj: RawObject) -> str:
    m = meta(obj)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def suspended(job: RawObject) -> bool:
    """``spec.suspend``."""
    return bool((job.get("spec") or {}).get("suspend"))


def _indexed_template(template: RawObject, job_name: str, index: int) -> RawObject:
    """The template of the pod of ``index``: its annotation, label and hostname."""
    copied = copy.deepcopy(template)
    tmeta = copied.setdefault("metadata", {})
    tmeta.setdefault("annotations", {})[COMPLETION_INDEX_ANNOTATION] = str(index)
    tmeta.setdefault("labels", {})[COMPLETION_INDEX_ANNOTATION] = str(index)
    copied.setdefault("spec", {})["hostname"] = f"{job_name}-{index}"
    return copied


def indexed_generate_name(job_name: str, index: int) -> str:
    """``<job>-<index>-``, the job name cut so the server can add its suffix."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = job_name[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


@dataclass
class _SyncContext:
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
        value = (self.job.get("spec") or {}).get("completions")
        return value if isinstance(value, int) else None


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
        if pod_index is None:
            pod_index = shared_index(self.pods)
        #: Pods by the uid of their controller (``AddPodControllerUIDIndexer``), and orphans.
        self.pod_index = pod_index
        self.jobs.add_handler(self._job_added, self._job_updated, self._job_deleted)
        self.pods.add_handler(self._pod_added, self._pod_updated, self._pod_deleted_final)

    # --- running --------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the caches, then sync until cancelled."""
        tasks: list[asyncio.Task[None]] = []
        try:
            if self._owns_informers:
                self.jobs.start()
                self.pods.start()
            await self.jobs.wait_for_sync()
            await self.pods.wait_for_sync()
            for i in range(self.workers):
                tasks.append(
                    asyncio.create_task(
                        process_queue(self.queue, self.sync, COMPONENT, (KubeError, _SyncError)),
                        name=f"job worker {i}",
                    )
                )
            # Upstream has one orphan worker; a cascade of a big Job releases its pods
            # one patch at a time there, so ours run as many as the sync workers.
            for i in range(self.workers):
                tasks.append(asyncio.create_task(self._orphan_worker(), name=f"job orphans {i}"))
            await asyncio.Event().wait()
        finally:
            self.queue.shut_down()
            self.orphan_queue.shut_down()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self._owns_informers:
                await self.jobs.stop()
                await self.pods.stop()
            await self.recorder.flush()

    async def _orphan_worker(self) -> None:
        while True:
            key = await self.orphan_queue.get()
            if key is None:
                return
            try:
                await self.sync_orphan_pod(key)
                self.orphan_queue.forget(key)
            except KubeError as exc:
                log.info("removing the tracking finalizer of %s: %s; retrying", key, exc)
                self.orphan_queue.add_rate_limited(key)
            except Exception:
                log.exception("removing the tracking finalizer of %s failed", key)
                self.orphan_queue.add_rate_limited(key)
            finally:
                self.orphan_queue.done(key)

    # --- event handlers: objects to keys, nothing else -------------------------------

    def _resolve(self, namespace: str, ref: RawObject) -> RawObject | None:
        """The Job a controller reference names, if it is in the cache with that uid."""
        if ref.get("kind") != "Job" or str(ref.get("apiVersion", "")).split("/")[0] != "batch":
            return None
        job = self.jobs.get(f"{namespace}/{ref.get('name', '')}")
        if job is None or uid(job) != ref.get("uid"):
            return None
        return job

    def _enqueue_batched(self, job: RawObject) -> None:
        self.queue.add_after(_key(job), self.batch_period)

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
            self.expectations.creation_observed(_key(job))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self.orphan_queue.add(_key(pod))
        # A Job whose selector matches may adopt it.
        for job in self._jobs_selecting(pod):
            self._enqueue_batched(job)

    def _jobs_selecting(self, pod: RawObject) -> list[RawObject]:
        """The Jobs of the pod's namespace whose selector matches it (``GetPodJobs``)."""
        namespace = str(meta(pod).get("namespace", ""))
        labels = meta(pod).get("labels") or {}
        found = []
        for job in self.jobs.list():
            if meta(job).get("namespace") != namespace:
                continue
            try:
                selector = LabelSelector.from_dict((job.get("spec") or {}).get("selector") or {})
            except ObjectError:
                continue
            if not selector.is_empty() and selector.matches(labels):
                found.append(job)
        return found

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
                    self.finalizer_expectations.removal_observed(_key(job), uid(pod))
                self._enqueue_batched(job)
        if ref is not None:
            job = self._resolve(namespace, ref)
            if job is None:
                return
            if finalizer_removed:
                self.finalizer_expectations.removal_observed(_key(job), uid(pod))
            self._enqueue_batched(job)
            return
        if has_tracking_finalizer(pod):
            self.orphan_queue.add(_key(pod))
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
                self.orphan_queue.add(_key(pod))
            return
        job = self._resolve(str(meta(pod).get("namespace", "")), ref)
        if job is None or cond.is_finished(job):
            if has_finalizer:
                self.orphan_queue.add(_key(pod))
            return
        key = _key(job)
        self.expectations.deletion_observed(key)
        if final or not has_finalizer:
            self.finalizer_expectations.removal_observed(key, uid(pod))
        self._enqueue_batched(job)

    def _job_added(self, job: RawObject) -> None:
        self.queue.add(_key(job))

    def _job_updated(self, old: RawObject, job: RawObject) -> None:
        key = _key(job)
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
        self.queue.add(_key(job))
        self._cleanup_pod_finalizers(job)

    def _cleanup_pod_finalizers(self, job: RawObject) -> None:
        for pod in self.pod_index.owned_by(uid(job)):
            if has_tracking_finalizer(pod):
                self.orphan_queue.add(_key(pod))

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
        await self._remove_tracking_finalizer(pod)

    async def _remove_tracking_finalizer(self, pod: RawObject) -> None:
        if not has_tracking_finalizer(pod):
            return
        patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}
        m = meta(pod)
        with contextlib.suppress(NotFound):  # gone: nothing holds it any more
            await self.client.patch(
                PODS.raw, str(m.get("name")), patch, str(m.get("namespace")), "strategic"
            )

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
            raise _SyncError(f"job {namespace}/{name}: invalid selector: {exc}") from exc
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
        spec = shared.get("spec") or {}
        if spec.get("completionMode") not in (None, "NonIndexed", "Indexed"):
            self._event(
                shared,
                "Warning",
                "UnknownCompletionMode",
                "Skipped Job sync because completion mode is unknown",
            )
            return
        job = copy.deepcopy(shared)
        spec = job.setdefault("spec", {})
        status = job.setdefault("status", {})
        uncounted = status.get("uncountedTerminatedPods")
        if not isinstance(uncounted, dict):
            uncounted = {}
        status["uncountedTerminatedPods"] = uncounted
        now = self.clock()
        # Expectations first: a pod created after the listing must not sneak in.
        satisfied = self.expectations.satisfied_expectations(key)
        pods = await self._pods_for_job(job)
        active_pods = [p for p in pods if is_active(p)]
        ctx = _SyncContext(
            job=job,
            pods=pods,
            active_pods=active_pods,
            ready=sum(1 for p in active_pods if is_ready(p)),
            terminating=sum(1 for p in pods if is_terminating(p)),
            uncounted_succeeded={str(u) for u in uncounted.get("succeeded") or []},
            uncounted_failed={str(u) for u in uncounted.get("failed") or []},
            expected_rm_finalizers=self.finalizer_expectations.expected(key),
        )
        active = len(active_pods)
        new_succeeded, new_failed = self._new_finished_pods(ctx)
        ctx.succeeded = (
            as_int(status.get("succeeded"), 0) + len(new_succeeded) + len(ctx.uncounted_succeeded)
        )
        policy = policy_of(job)
        counted_failed = sum(
            1 for p in new_failed if match_pod_failure_policy(policy, p).count_failed
        )
        ctx.failed = as_int(status.get("failed"), 0) + counted_failed + len(ctx.uncounted_failed)
        if not status.get("startTime") and not suspended(job):
            status["startTime"] = format_time(now)
        ctx.backoff = next_record(
            self._backoff.get(key, BackoffRecord()), new_succeeded, new_failed
        )

        backoff_limit = as_int(spec.get("backoffLimit"), 6)
        conds: list[dict[str, Any]] = status.setdefault("conditions", []) or []
        status["conditions"] = conds
        met = cond.find(conds, cond.SUCCESS_CRITERIA_MET)
        if met is not None and met.get("status") == "True":
            ctx.finished = cond.Condition(
                cond.SUCCESS_CRITERIA_MET, met.get("reason", ""), met.get("message", "")
            )
        else:
            target = cond.find(conds, cond.FAILURE_TARGET)
            if target is not None and target.get("status") == "True":
                ctx.finished = cond.Condition(
                    cond.FAILED, target.get("reason", ""), target.get("message", "")
                )
            else:
                message = fail_job_message(policy, [p for p in pods if is_pod_failed(p, job)])
                if message is not None:
                    # FailureTarget first records why, before any finalizer is removed.
                    ctx.finished = cond.Condition(
                        cond.FAILURE_TARGET, cond.REASON_POD_FAILURE_POLICY, message
                    )
        if ctx.finished is None:
            if ctx.failed > backoff_limit or past_backoff_limit_on_failure(job, pods):
                ctx.finished = cond.Condition(
                    cond.FAILURE_TARGET,
                    cond.REASON_BACKOFF_LIMIT_EXCEEDED,
                    cond.MESSAGE_BACKOFF_LIMIT_EXCEEDED,
                )
            elif self._past_active_deadline(job, now):
                ctx.finished = cond.Condition(
                    cond.FAILURE_TARGET,
                    cond.REASON_DEADLINE_EXCEEDED,
                    cond.MESSAGE_DEADLINE_EXCEEDED,
                )
            elif isinstance(spec.get("activeDeadlineSeconds"), int) and not suspended(job):
                start = parse_time(status.get("startTime")) or now
                left = spec["activeDeadlineSeconds"] - (now - start).total_seconds()
                self.queue.add_after(key, left)

        if is_indexed(job):
            completions = ctx.completions or 0
            ctx.prev_succeeded_indexes = parse_indexes(status.get("completedIndexes"), completions)
            ctx.succeeded_indexes = ctx.prev_succeeded_indexes | {
                completion_index(p)
                for p in pods
                if phase(p) == "Succeeded"
                and has_tracking_finalizer(p)
                and UNKNOWN_INDEX < completion_index(p) < completions
            }
            ctx.succeeded = len(ctx.succeeded_indexes)
            if has_backoff_limit_per_index(job):
                self._judge_indexes(ctx, completions)

        suspend_changed = False
        failure: Exception | None = None
        if ctx.finished is not None:
            # Finished (or about to be): no pod may keep running.
            deleted_ready, deleted, failure = await self._delete_active_pods(job, ctx.active_pods)
            if deleted != active or not satisfied:
                # Pods may still be running, or not yet in the cache: not finished yet.
                ctx.finished = None
            active -= deleted
            ctx.terminating += deleted
            ctx.ready -= deleted_ready
        else:
            manage_called = False
            if satisfied and not meta(job).get("deletionTimestamp"):
                active, failure = await self._manage_job(job, ctx)
                manage_called = True
            wanted_completions = ctx.completions
            if wanted_completions is None:
                complete = ctx.succeeded > 0 and active == 0
            else:
                complete = ctx.succeeded >= wanted_completions and active == 0
            if complete:
                ctx.finished = cond.Condition(
                    cond.SUCCESS_CRITERIA_MET,
                    cond.REASON_COMPLETIONS_REACHED,
                    cond.MESSAGE_COMPLETIONS_REACHED,
                )
            elif manage_called:
                stamp = format_time(now)
                if suspended(job):
                    wanted = cond.Condition(cond.SUSPENDED, "JobSuspended", "Job suspended")
                    if cond.ensure(conds, wanted, stamp):
                        suspend_changed = True
                        self._event(job, "Normal", "Suspended", "Job suspended")
                else:
                    wanted = cond.Condition(
                        cond.SUSPENDED, "JobResumed", "Job resumed", status="False"
                    )
                    if cond.ensure(conds, wanted, stamp):
                        suspend_changed = True
                        self._event(job, "Normal", "Resumed", "Job resumed")
                        # activeDeadlineSeconds counts continuous activity: restart it.
                        status["startTime"] = stamp

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
        await self._track_status_and_remove_finalizers(key, ctx, needs_update)
        if failure is not None:
            raise _SyncError(str(failure)) from failure

    def _judge_indexes(self, ctx: _SyncContext, completions: int) -> None:
        """backoffLimitPerIndex: the failed indexes, whether they fail the Job, and the
        failed pods whose removal waits for their replacement."""
        job = ctx.job
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

    def _past_active_deadline(self, job: RawObject, now: datetime) -> bool:
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        start = parse_time((job.get("status") or {}).get("startTime"))
        if not isinstance(deadline, int) or start is None or suspended(job):
            return False
        return (now - start).total_seconds() >= deadline

    def _new_finished_pods(self, ctx: _SyncContext) -> tuple[list[RawObject], list[RawObject]]:
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

    # --- pods -----------------------------------------------------------------------

    async def _manage_job(self, job: RawObject, ctx: _SyncContext) -> tuple[int, Exception | None]:
        """Create or delete pods towards ``parallelism`` (``manageJob``); returns the
        active count and the first failure."""
        key = _key(job)
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
        template = copy.deepcopy((job.get("spec") or {}).get("template") or {})
        if is_indexed(job):
            with_completion_index_env(template)
        tmeta = template.setdefault("metadata", {})
        finalizers = list(tmeta.get("finalizers") or [])
        if JOB_TRACKING_FINALIZER not in finalizers:
            finalizers.append(JOB_TRACKING_FINALIZER)
        tmeta["finalizers"] = finalizers
        owner_ref = new_controller_ref(job, "batch/v1", "Job")
        namespace = str(meta(job).get("namespace", ""))
        owner = _with_kind(job)
        pending = list(indexes)
        attempted = 0

        async def create() -> None:
            nonlocal attempted
            attempted += 1
            try:
                if pending:
                    index = pending.pop(0)
                    name = str(meta(job).get("name", ""))
                    indexed = _indexed_template(template, name, index)
                    if has_backoff_limit_per_index(job):
                        with_index_failure_counts(indexed, job, replaced.get(index))
                    await self.pod_control.create_pods(
                        namespace,
                        indexed,
                        owner,
                        owner_ref,
                        generate_name=indexed_generate_name(name, index),
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

    async def _delete_active_pods(
        self, job: RawObject, pods: list[RawObject]
    ) -> tuple[int, int, Exception | None]:
        """Delete the active pods of a finishing Job, keeping their finalizers (they are
        counted, then released, by the status tracking)."""
        results = await asyncio.gather(
            *(self._delete_pod(job, pod) for pod in pods), return_exceptions=True
        )
        ready = deleted = 0
        failure: Exception | None = None
        for pod, result in zip(pods, results, strict=True):
            if isinstance(result, Exception):
                failure = failure or result
                continue
            deleted += 1
            ready += is_ready(pod)
        return ready, deleted, failure

    async def _delete_job_pods(
        self, job: RawObject, key: str, pods: list[RawObject]
    ) -> tuple[int, int, Exception | None]:
        """Delete surplus pods, releasing their finalizer first: they are not counted
        (``deleteJobPods``)."""

        async def one(pod: RawObject) -> None:
            try:
                await self._remove_tracking_finalizer(pod)
                await self._delete_pod(job, pod)
            except KubeError:
                self.expectations.deletion_observed(key)
                raise

        results = await asyncio.gather(*(one(p) for p in pods), return_exceptions=True)
        ready = deleted = 0
        failure: Exception | None = None
        for pod, result in zip(pods, results, strict=True):
            if isinstance(result, Exception):
                failure = failure or result
                continue
            deleted += 1
            ready += is_ready(pod)
        return ready, deleted, failure

    async def _delete_pod(self, job: RawObject, pod: RawObject) -> None:
        m = meta(pod)
        with contextlib.suppress(NotFound):
            await self.pod_control.delete_pod(
                str(m.get("namespace")), str(m.get("name")), _with_kind(job), uid(pod)
            )

    # --- status ---------------------------------------------------------------------

    async def _track_status_and_remove_finalizers(
        self, key: str, ctx: _SyncContext, needs_flush: bool
    ) -> None:
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
            if not _can_remove_finalizer(ctx, pod, failed):
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
        if indexed:
            ctx.succeeded_indexes = ctx.succeeded_indexes | set(new_indexes)
            text = format_indexes(ctx.succeeded_indexes)
            if text != (status.get("completedIndexes") or ""):
                needs_flush = True
            status["succeeded"] = len(ctx.succeeded_indexes)
            status["completedIndexes"] = text
            failed_text = (
                format_indexes(ctx.failed_indexes) if ctx.failed_indexes is not None else None
            )
            if failed_text != status.get("failedIndexes"):
                needs_flush = True
                status["failedIndexes"] = failed_text
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
            ctx.job = await self._update_status(ctx.job)
            if finished:
                self._backoff.pop(key, None)
                self._record_finished(ctx)

    async def _flush_and_remove_finalizers(
        self,
        key: str,
        ctx: _SyncContext,
        to_release: list[RawObject],
        with_finalizer: set[str],
        needs_flush: bool,
    ) -> bool:
        """Write the uncounted uids, release the pods, count the released ones
        (``flushUncountedAndRemoveFinalizers``). Returns whether a write is pending."""
        if needs_flush:
            ctx.job = await self._update_status(ctx.job)
            self._backoff[key] = ctx.backoff
            needs_flush = False
        failure: Exception | None = None
        if to_release:
            self.finalizer_expectations.expect_removals(key, [uid(p) for p in to_release])
            results = await asyncio.gather(
                *(self._remove_tracking_finalizer(p) for p in to_release),
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
                ctx.job = await self._update_status(ctx.job)
            raise _SyncError(f"removing tracking finalizers: {failure}") from failure
        return needs_flush

    def _enact_finished(self, ctx: _SyncContext, stamp: str) -> bool:
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

    def _record_finished(self, ctx: _SyncContext) -> None:
        finished = ctx.finished
        assert finished is not None
        job = ctx.job
        if finished.type == cond.COMPLETE:
            completions = ctx.completions
            if completions is not None and as_int(job["status"].get("succeeded"), 0) > completions:
                self._event(
                    job,
                    "Warning",
                    "TooManySucceededPods",
                    "Too many succeeded pods running after completion count reached",
                )
            self._event(job, "Normal", "Completed", "Job completed")
        else:
            self._event(job, "Warning", finished.reason, finished.message)

    async def _update_status(self, job: RawObject) -> RawObject:
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

    def _event(self, job: RawObject, kind: str, reason: str, message: str) -> None:
        self.recorder.event(_with_kind(job), kind, reason, message)


def _can_remove_finalizer(ctx: _SyncContext, pod: RawObject, failed: bool) -> bool:
    """Whether the sync may release the pod: it succeeded, the Job is finishing or being
    deleted, or it failed and is not the failed pod its index's replacement waits for
    (``canRemoveFinalizer``)."""
    if meta(ctx.job).get("deletionTimestamp") or ctx.finished or phase(pod) == "Succeeded":
        return True
    if not failed:
        return False  # still running, or terminating without having failed
    kept = ctx.delayed_deletion.get(completion_index(pod))
    return kept is None or uid(kept) != uid(pod)


class _SyncError(Exception):
    """Some writes of a sync failed; it is retried with backoff."""


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
