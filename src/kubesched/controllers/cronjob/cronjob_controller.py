"""The CronJob controller (``pkg/controller/cronjob/cronjob_controllerv2.go``, release-1.34).

Each CronJob is a key in a work queue that is requeued for just after its next schedule
time. A sync lists the Jobs the CronJob controls, deletes the finished ones beyond
``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit`` (oldest start first), drops
finished and vanished Jobs from ``status.active`` (recording ``lastSuccessfulTime``), and
then — unless the CronJob is being deleted, has an unknown time zone, is suspended or has
a schedule that cannot run — starts the most recent unmet schedule time:

- too late for ``startingDeadlineSeconds``: a ``MissSchedule`` warning, nothing started;
  more than 100 missed times: a ``TooManyMissedTimes`` warning, the latest one still runs;
- already started (its Job in ``status.active`` or it is ``lastScheduleTime``): nothing;
- ``Forbid`` with an active Job: nothing (``JobAlreadyActive``); ``Replace``: the active
  Jobs are deleted (background propagation) first; ``Allow``: run beside them;
- the Job is ``<cronjob>-<scheduled time in minutes>``, controlled by the CronJob, with
  the ``batch.kubernetes.io/cronjob-scheduled-timestamp`` annotation; an existing Job of
  that name that the CronJob controls is taken as created (a crash before the status write).

Then ``status.active`` gains the Job and ``lastScheduleTime`` the time, in one status
update per sync. The clock is injectable (``clock``), so tests move time instead of
waiting for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.controllers.cronjob import utils
from kubesched.controllers.cronjob.utils import RawObject, meta
from kubesched.controllers.job import JOBS
from kubesched.kube import AlreadyExists, Client, Informer, KubeError, NotFound, Resource
from kubesched.kube.record import EventRecorder
from kubesched.kube.workqueue import WorkQueue, default_controller_rate_limiter
from kubesched.objects.cron import ScheduleError, time_zone
from kubesched.objects.podtemplate import controller_of

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

log = logging.getLogger(__name__)

#: The controller's name (``names.CronJobController``).
NAME = "cronjob-controller"
#: The event source, as kube-controller-manager's.
COMPONENT = "cronjob-controller"
#: ``--concurrent-cron-job-syncs``.
DEFAULT_WORKERS = 5


def _as_is(raw: RawObject) -> RawObject:
    return raw


CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob", True, _as_is)


def _key(obj: RawObject) -> str:
    m = meta(obj)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def _with_kind(cron_job: RawObject) -> RawObject:
    if cron_job.get("kind") and cron_job.get("apiVersion"):
        return cron_job
    return {**cron_job, "kind": "CronJob", "apiVersion": "batch/v1"}


class _SyncError(Exception):
    """A sync that must be retried (with the queue's backoff)."""


@dataclass
class _SyncState:
    """What one sync has changed so far (``updateStatus``)."""

    changed: bool = False


class CronJobController:
    """Runs CronJobs' Jobs on schedule until cancelled: ``await CronJobController(c).run()``.

    **cron_jobs** / **jobs**: informers to share (default: the controller's own).
    **clock**: the time schedules are compared with (default: now, UTC).
    """

    def __init__(
        self,
        client: Client,
        cron_jobs: Informer[RawObject] | None = None,
        jobs: Informer[RawObject] | None = None,
        workers: int = DEFAULT_WORKERS,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.client = client
        self._owns_informers = cron_jobs is None and jobs is None
        self.cron_jobs = cron_jobs if cron_jobs is not None else Informer(client, CRONJOBS)
        self.jobs = jobs if jobs is not None else Informer(client, JOBS)
        self.workers = workers
        self.clock = clock or (lambda: datetime.now(UTC))
        self.queue: WorkQueue[str] = WorkQueue("cronjob", default_controller_rate_limiter())
        self.recorder = EventRecorder(client, COMPONENT)
        self.jobs.add_handler(self._job_added, self._job_updated, self._job_deleted)
        self.cron_jobs.add_handler(
            lambda cj: self.queue.add(_key(cj)),
            self._cron_job_updated,
            lambda cj: self.queue.add(_key(cj)),
        )

    # --- running --------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the caches, then sync until cancelled."""
        tasks: list[asyncio.Task[None]] = []
        try:
            if self._owns_informers:
                self.cron_jobs.start()
                self.jobs.start()
            await self.cron_jobs.wait_for_sync()
            await self.jobs.wait_for_sync()
            for i in range(self.workers):
                tasks.append(asyncio.create_task(self._worker(), name=f"cronjob worker {i}"))
            await asyncio.Event().wait()
        finally:
            self.queue.shut_down()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if self._owns_informers:
                await self.cron_jobs.stop()
                await self.jobs.stop()
            await self.recorder.flush()

    async def _worker(self) -> None:
        while True:
            key = await self.queue.get()
            if key is None:
                return
            try:
                requeue_after = await self.sync(key)
            except (KubeError, _SyncError) as exc:
                log.info("syncing cronjob %s: %s; retrying", key, exc)
                self.queue.add_rate_limited(key)
            except Exception:
                log.exception("syncing cronjob %s failed", key)
                self.queue.add_rate_limited(key)
            else:
                if requeue_after is not None:
                    self.queue.forget(key)
                    self.queue.add_after(key, max(requeue_after, 0.0))
            finally:
                self.queue.done(key)

    # --- event handlers -------------------------------------------------------------

    def _resolve(self, namespace: str, ref: RawObject | None) -> RawObject | None:
        """The CronJob a controller reference names, if cached with that uid."""
        if ref is None or ref.get("kind") != "CronJob":
            return None
        cron_job = self.cron_jobs.get(f"{namespace}/{ref.get('name', '')}")
        if cron_job is None or meta(cron_job).get("uid") != ref.get("uid"):
            return None
        return cron_job

    def _enqueue_owner(self, job: RawObject) -> None:
        owner = self._resolve(str(meta(job).get("namespace", "")), controller_of(job))
        if owner is not None:
            self.queue.add(_key(owner))

    def _job_added(self, job: RawObject) -> None:
        self._enqueue_owner(job)

    def _job_updated(self, old: RawObject, job: RawObject) -> None:
        if meta(old).get("resourceVersion") == meta(job).get("resourceVersion"):
            return
        if controller_of(old) != controller_of(job):
            self._enqueue_owner(old)
        self._enqueue_owner(job)

    def _job_deleted(self, job: RawObject) -> None:
        self._enqueue_owner(job)

    def _cron_job_updated(self, old: RawObject, cron_job: RawObject) -> None:
        # A new schedule or zone: look again when it is next due; anything else: now.
        old_spec, spec = old.get("spec") or {}, cron_job.get("spec") or {}
        if (old_spec.get("schedule"), old_spec.get("timeZone")) == (
            spec.get("schedule"),
            spec.get("timeZone"),
        ):
            self.queue.add(_key(cron_job))
            return
        try:
            schedule = utils.cron_schedule(cron_job)
        except ScheduleError:
            self.recorder.event(
                _with_kind(cron_job),
                "Warning",
                "UnParseableCronJobSchedule",
                f"unparseable schedule for cronjob: {spec.get('schedule')}",
            )
            return
        delay = utils.next_schedule_delay(cron_job, self.clock(), schedule)
        self.queue.add_after(_key(cron_job), max(delay, 0.0))

    # --- sync -----------------------------------------------------------------------

    def _controlled_jobs(self, cron_job: RawObject) -> list[RawObject]:
        """``getJobsToBeReconciled``: the namespace's Jobs whose controller has its name."""
        namespace, name = meta(cron_job).get("namespace"), meta(cron_job).get("name")
        found = []
        for job in self.jobs.list():
            ref = controller_of(job)
            if meta(job).get("namespace") == namespace and ref and ref.get("name") == name:
                found.append(job)
        return found

    async def sync(self, key: str) -> float | None:
        """Sync one CronJob; the seconds until it is due again (None: not requeued)."""
        cached = self.cron_jobs.get(key)
        if cached is None:
            return None
        jobs = self._controlled_jobs(cached)
        cron_job = _with_kind(copy.deepcopy(cached))
        changed = await self._cleanup_finished_jobs(cron_job, jobs)
        requeue_after, synced, error = await self._sync_cron_job(cron_job, jobs)
        if changed or synced:
            try:
                await self.client.update(CRONJOBS, cron_job, subresource="status")
            except NotFound:
                return None
        if requeue_after is not None:
            return requeue_after
        if error is not None:
            raise error
        return None

    async def _sync_cron_job(
        self, cron_job: RawObject, jobs: list[RawObject]
    ) -> tuple[float | None, bool, Exception | None]:
        """``syncCronJob``: (requeue delay, whether the status changed, error)."""
        state = _SyncState()
        try:
            requeue = await self._sync_cron_job_inner(cron_job, jobs, state)
        except (KubeError, _SyncError) as exc:
            return None, state.changed, exc
        return requeue, state.changed, None

    async def _sync_cron_job_inner(
        self, cron_job: RawObject, jobs: list[RawObject], state: _SyncState
    ) -> float | None:
        now = self.clock()
        namespace = str(meta(cron_job).get("namespace", ""))
        children = set()
        for job in jobs:
            job_uid = str(meta(job).get("uid", ""))
            children.add(job_uid)
            found = utils.in_active_list(cron_job, job_uid)
            finished = utils.finished_status(job)
            if not found and finished is None:
                fresh = await self.client.get(CRONJOBS, str(meta(cron_job).get("name")), namespace)
                if utils.in_active_list(fresh, job_uid):
                    cron_job.clear()
                    cron_job.update(_with_kind(fresh))
                    continue
                self._event(
                    cron_job,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: "
                    f"{meta(job).get('name')}",
                )
            elif found and finished is not None:
                utils.delete_from_active_list(cron_job, job_uid)
                self._event(
                    cron_job,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {meta(job).get('name')}, status: {finished}",
                )
                state.changed = True
            elif finished == "Complete" and self._note_success(cron_job, job):
                state.changed = True
        for ref in utils.active(cron_job):
            if ref.get("uid") in children:
                continue
            # Ask the server: the job informer may lag behind the status.
            try:
                await self.client.get(JOBS, str(ref.get("name", "")), str(ref.get("namespace")))
            except NotFound:
                self._event(
                    cron_job, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}"
                )
                utils.delete_from_active_list(cron_job, str(ref.get("uid", "")))
                state.changed = True
        if meta(cron_job).get("deletionTimestamp"):
            return None
        spec = cron_job.get("spec") or {}
        zone = spec.get("timeZone")
        if isinstance(zone, str):
            try:
                time_zone(zone)
            except ScheduleError as exc:
                self._event(
                    cron_job, "Warning", "UnknownTimeZone", f'invalid timeZone: "{zone}": {exc}'
                )
                return None
        if spec.get("suspend") is True:
            return None
        schedule_text = str(spec.get("schedule") or "")
        if "TZ" in schedule_text:
            self._event(
                cron_job,
                "Warning",
                "UnsupportedSchedule",
                f'CRON_TZ or TZ used in schedule "{schedule_text}" is not officially supported, '
                "see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for "
                "more details",
            )
        try:
            schedule = utils.cron_schedule(cron_job)
        except ScheduleError as exc:
            self._event(
                cron_job,
                "Warning",
                "UnparseableSchedule",
                f'unparseable schedule: "{schedule_text}" : {exc}',
            )
            return None
        try:
            scheduled, missed = utils.next_schedule_time(cron_job, now, schedule)
        except utils.InvalidSchedule as exc:
            self._event(
                cron_job, "Warning", "InvalidSchedule", f"invalid schedule: {schedule_text} : {exc}"
            )
            return None
        if scheduled is not None and missed is utils.Missed.MANY:
            self._event(
                cron_job,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                "check clock skew",
            )
        requeue = utils.next_schedule_delay(cron_job, now, schedule)
        if scheduled is None:
            return requeue
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and (now - scheduled).total_seconds() > deadline:
            self._event(
                cron_job,
                "Warning",
                "MissSchedule",
                "Missed scheduled time to start a job: "
                + scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000"),
            )
            return requeue
        name = utils.job_name(cron_job, scheduled)
        last = utils.parse_time((cron_job.get("status") or {}).get("lastScheduleTime"))
        if utils.in_active_list_by_name(cron_job, namespace, name) or last == scheduled:
            return requeue
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and utils.active(cron_job):
            self._event(
                cron_job,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is "
                "Forbid",
            )
            return requeue
        if policy == "Replace":
            for ref in utils.active(cron_job):
                try:
                    job = await self.client.get(
                        JOBS, str(ref.get("name", "")), str(ref.get("namespace"))
                    )
                except KubeError as exc:
                    self._event(cron_job, "Warning", "FailedGet", f"Get job: {exc}")
                    raise
                if not await self._delete_job(cron_job, job):
                    raise _SyncError(f"could not replace job {namespace}/{meta(job).get('name')}")
                state.changed = True
        wanted = utils.job_from_template(cron_job, scheduled)
        try:
            created = await self.client.create(JOBS, wanted, namespace)
        except AlreadyExists:
            created = await self.client.get(JOBS, name, namespace)
            owner = controller_of(created)
            if owner is None or owner.get("uid") != meta(cron_job).get("uid"):
                return None  # someone else's Job
            if utils.in_active_list(cron_job, str(meta(created).get("uid", ""))):
                return None
        except KubeError as exc:
            self._event(cron_job, "Warning", "FailedCreate", f"Error creating job: {exc}")
            raise
        else:
            self._event(cron_job, "Normal", "SuccessfulCreate", f"Created job {name}")
        status = cron_job.setdefault("status", {})
        status["active"] = [*utils.active(cron_job), utils.object_reference(created)]
        status["lastScheduleTime"] = utils.format_time(scheduled)
        state.changed = True
        return requeue

    @staticmethod
    def _note_success(cron_job: RawObject, job: RawObject) -> bool:
        # A Job need not be active to count: its completion time moves lastSuccessfulTime.
        status = cron_job.setdefault("status", {})
        completed = utils.parse_time((job.get("status") or {}).get("completionTime"))
        last = utils.parse_time(status.get("lastSuccessfulTime"))
        if completed is not None and (last is None or completed > last):
            status["lastSuccessfulTime"] = utils.format_time(completed)
            return True
        return False

    async def _cleanup_finished_jobs(self, cron_job: RawObject, jobs: list[RawObject]) -> bool:
        """``cleanupFinishedJobs``: keep the newest ``successfulJobsHistoryLimit``
        complete and ``failedJobsHistoryLimit`` failed Jobs."""
        spec = cron_job.get("spec") or {}
        changed = False
        for kind, limit_key in (
            ("Complete", "successfulJobsHistoryLimit"),
            ("Failed", "failedJobsHistoryLimit"),
        ):
            limit = spec.get(limit_key)
            if not isinstance(limit, int):
                continue
            done = [j for j in jobs if utils.finished_status(j) == kind]
            excess = len(done) - limit
            for job in utils.by_start_time(done)[: max(excess, 0)]:
                if await self._delete_job(cron_job, job):
                    changed = True
        return changed

    async def _delete_job(self, cron_job: RawObject, job: RawObject) -> bool:
        """``deleteJob``: delete it with its pods (background) and drop its reference."""
        m = meta(job)
        path = JOBS.path(str(m.get("namespace", "")), str(m.get("name", "")))
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        try:
            await self.client.request("DELETE", path, body=body)
        except NotFound:
            pass
        except KubeError as exc:
            self._event(cron_job, "Warning", "FailedDelete", f"Deleted job: {exc}")
            return False
        utils.delete_from_active_list(cron_job, str(m.get("uid", "")))
        self._event(cron_job, "Normal", "SuccessfulDelete", f"Deleted job {m.get('name')}")
        return True

    def _event(self, cron_job: RawObject, kind: str, reason: str, message: str) -> None:
        self.recorder.event(_with_kind(cron_job), kind, reason, message)


def start_cronjob_controller(ctx: ControllerContext) -> CronJobController:
    """The CronJob controller's init function for the controller manager."""
    return CronJobController(
        ctx.client(NAME),
        ctx.informers.informer(CRONJOBS),
        ctx.informers.informer(JOBS),
    )


__all__: list[str] = [
    "CRONJOBS",
    "NAME",
    "CronJobController",
    "start_cronjob_controller",
]
