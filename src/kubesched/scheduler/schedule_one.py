"""One scheduling cycle and its binding cycle, as upstream's
``pkg/scheduler/schedule_one.go``. (A gang's quorum gets one cycle for all its members
instead: ``schedule_group.py``, which reuses the binding cycle and failure handling here.)

The scheduling cycle is serial: it takes the cache's snapshot, runs the profile's
SchedulingAlgorithm, assumes the pod on the chosen node, runs Reserve and Permit, and
hands the pod to a binding task (PreBind, Bind, PostBind) that runs concurrently with
the next cycles. The cycle's computation is synchronous code in the event loop; it only
awaits where preemption's writes must land before the pod is requeued (victim
deletions). A FitError runs PostFilter (preemption) and reports the failure; any
failure requeues the pod through ``add_unschedulable_if_not_present`` and tells the
user: a ``FailedScheduling`` event and the pod's PodScheduled=False condition.

Metrics (``scheduler/metrics.py``): every attempt counts in
``scheduler_schedule_attempts_total`` / ``scheduler_scheduling_attempt_duration_seconds``
(``scheduled`` after Bind, timed from the cycle's start as upstream; ``unschedulable``
for rejections; ``error`` otherwise); a bound pod adds its SLI duration and attempts.
The framework times its own extension points and, in the cycles sampled here (10%, as
upstream's ``pluginMetricsSamplePercent``), each plugin; PostFilter, PreBind and Bind
are timed here instead, because their API writes are awaited here.

PreBind may do I/O (``framework/apiclient.py``): after PreBindPreFlight, unless every
PreBind plugin skipped the pod, the PreBind plugins run in a worker thread
(``Scheduler.pre_bind_executor``) and their API calls block that thread only.

With extenders (``Scheduler.extenders``) the algorithm awaits their filter and
prioritize verbs, preemption their preempt verbs, and an interested binder binds instead
of the Bind plugins (upstream ``extendersBinding``).

Permit's Wait: the pod stays assumed and its binding task first awaits the framework's
waiting pod (``wait_on_permit``) — allowed by every waiting plugin, rejected, or timed
out — so later cycles run meanwhile. A rejection (at Reserve, Permit or while waiting)
is reported as upstream's one-node FitError (``0/1 nodes are available: 1 ...``); after
a rejection while waiting, the freed place moves other pods as an assigned pod's
deletion does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingError
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import CacheError
from kubesched.scheduler.backend.queue.events import ASSIGNED_POD_DELETE
from kubesched.scheduler.metrics import (
    ERROR,
    SCHEDULED,
    UNSCHEDULABLE,
    SchedulerMetrics,
    attempts_label,
)

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

__all__ = [
    "REASON_SCHEDULER_ERROR",
    "REASON_UNSCHEDULABLE",
    "binding_cycle",
    "handle_failure",
    "schedule_one",
    "update_condition",
    "wait_on_permit",
]

log = logging.getLogger(__name__)

#: PodScheduled condition reasons (``v1.PodReasonUnschedulable``, ``SchedulerError``).
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"


async def schedule_one(sched: Scheduler, info: QueuedPodInfo) -> None:
    """Run one scheduling cycle for the popped ``info``; start its binding task."""
    pod = info.pod
    fwk = sched.frameworks.get(pod.scheduler_name)
    if fwk is None or pod.deleting or sched.cache.get_pod(pod) is not None:
        # Not ours, being deleted, or already assumed/bound (upstream skipPodSchedule).
        sched.queue.done(pod)
        return
    start = time.perf_counter()
    fwk.set_snapshot(sched.cache.snapshot())
    state = CycleState()
    state.record_plugin_metrics = sched.sample_plugin_metrics()
    try:
        result = await sched.algorithms[pod.scheduler_name].schedule(state, pod)
    except FitError as fit:
        await _handle_fit_error(sched, fwk, state, info, fit, start)
        return
    except SchedulingError as err:
        await handle_failure(sched, info, err.status, REASON_SCHEDULER_ERROR, started=start)
        return
    except Exception as err:  # a plugin bug must not stop the scheduler
        log.exception("scheduling pod %s failed", pod.key)
        status = Status.error(str(err))
        await handle_failure(sched, info, status, REASON_SCHEDULER_ERROR, started=start)
        return
    sched.metrics.scheduling_algorithm_duration.observe(time.perf_counter() - start)

    host = result.suggested_host
    assumed = pod.evolve(node_name=host)
    try:
        sched.cache.assume_pod(assumed)
    except CacheError as err:
        status = Status.error(str(err))
        await handle_failure(sched, info, status, REASON_SCHEDULER_ERROR, started=start)
        return
    sched.nominator.delete_nominated_pod(pod)
    failure = fwk.run_reserve_plugins_reserve(state, assumed, host)
    if failure is None:
        failure = fwk.run_permit_plugins(state, assumed, host)
        if failure is not None and failure.code is Code.WAIT:
            failure = None  # the binding cycle waits on permit; this cycle goes on
    if failure is not None:
        await _fail_on_node(sched, fwk, state, info, assumed, failure, start)
        return
    sched.spawn(binding_cycle(sched, fwk, state, info, assumed, start), f"bind {pod.key}")


async def _fail_on_node(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    info: QueuedPodInfo,
    assumed: Pod,
    failure: Status,
    started: float | None,
) -> bool:
    """Unreserve and forget ``assumed``, then report ``failure`` on its node: a rejection
    (Reserve, Permit, a waiting pod rejected or timed out) as upstream's one-node
    FitError, anything else as a scheduler error. True for a rejection."""
    _unreserve(sched, fwk, state, assumed)
    _forget(sched, assumed)
    if not failure.is_rejected():
        await handle_failure(sched, info, failure, REASON_SCHEDULER_ERROR, started=started)
        return False
    info.unschedulable_plugins = frozenset({failure.plugin} - {""})
    info.pending_plugins = frozenset()
    message = str(FitError.on_node(info.pod, assumed.node_name, failure))
    await handle_failure(
        sched,
        info,
        Status(failure.code, (message,), failure.plugin),
        REASON_UNSCHEDULABLE,
        keep=True,
        started=started,
    )
    return True


async def wait_on_permit(
    fwk: Framework, assumed: Pod, metrics: SchedulerMetrics | None = None
) -> Status | None:
    """Upstream's ``WaitOnPermit``: if a Permit plugin holds ``assumed``, wait (without
    blocking the event loop) until it is allowed, rejected or timed out; the wait is
    observed in ``scheduler_permit_wait_duration_seconds`` by its result."""
    waiting = fwk.waiting_pod_for(assumed)
    if waiting is None:
        return None
    start = time.perf_counter()
    if not waiting.decided:
        decided: asyncio.Future[Status] = asyncio.get_running_loop().create_future()

        def deliver(status: Status) -> None:
            if not decided.done():
                decided.set_result(status)

        waiting.when_decided(deliver)
        try:
            await decided
        except asyncio.CancelledError:
            # Shutting down or leadership lost: the pod must not stay held.
            waiting.reject("", "scheduler stopped")
            fwk.wait_on_permit(waiting)
            raise
    if metrics is not None and waiting.decision is not None:
        result = str(waiting.decision.code)
        metrics.permit_wait_duration.observe(time.perf_counter() - start, result)
    return fwk.wait_on_permit(waiting)


async def binding_cycle(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    info: QueuedPodInfo,
    assumed: Pod,
    started: float | None = None,
) -> None:
    """PreBind, Bind, PostBind for an assumed pod; on failure Unreserve, forget, requeue.
    ``started``: the scheduling cycle's ``perf_counter`` start, for the attempt metrics."""
    host = assumed.node_name
    writer = sched.cluster_client
    profile = fwk.profile_name
    permit = await wait_on_permit(fwk, assumed, sched.metrics)
    if permit is not None:
        if await _fail_on_node(sched, fwk, state, info, assumed, permit, started):
            # Forgetting the assumed pod freed its place, as a deleted pod would: other
            # pods may fit now (the pod itself was just rejected; it is left alone).
            sched.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed, None, lambda p: p.key != assumed.key
            )
        else:
            sched.queue.assigned_pod_deleted(assumed)
        return
    try:
        t0 = time.perf_counter()
        status = await _pre_bind(sched, fwk, state, assumed, host)
        failed: list[str] = []
        sched.metrics.extension_point("PreBind", status, profile, time.perf_counter() - t0)
        bound = False
        if status is None and not failed and sched.extenders is not None:
            # Upstream's extendersBinding: an interested binder binds instead of the
            # Bind plugins; its failure is the binding's failure.
            try:
                bound = await sched.extenders.bind(assumed, host)
            except Exception as err:
                bound, status = True, Status.error(str(err) or type(err).__name__)
        if status is None and not failed and not bound:
            t0 = time.perf_counter()
            with writer.collect() as pending:
                status = fwk.run_bind_plugins(state, assumed, host)
            failed = await writer.flush(pending)
            bind = status if status is not None or not failed else Status.error("write failed")
            sched.metrics.extension_point("Bind", bind, profile, time.perf_counter() - t0)
        if status is None and failed:
            status = Status.error("; ".join(failed))
    except Exception as err:  # a plugin bug is a binding failure, not a crash
        log.exception("binding pod %s failed", assumed.key)
        status = Status.error(str(err) or type(err).__name__)
    if status is not None:
        # Upstream's handleBindingCycleError (a 409 or 404 from the bind among them).
        _unreserve(sched, fwk, state, assumed)
        forgotten = _forget(sched, assumed)
        # Forgetting the assumed pod frees its place, as an assigned pod's deletion.
        # After a rejection the pod itself is left out (it stays unschedulable); after an
        # error it is included: recorded in flight, the event sends it to backoffQ.
        if forgotten and not status.is_rejected():
            sched.queue.assigned_pod_deleted(assumed)
        message = f"Binding rejected: {status.message}"
        await handle_failure(
            sched,
            info,
            Status(status.code, (message,), status.plugin),
            REASON_SCHEDULER_ERROR,
            started=started,
        )
        if forgotten and status.is_rejected():
            sched.queue.move_all_to_active_or_backoff(
                ASSIGNED_POD_DELETE, assumed, None, lambda p: p.key != assumed.key
            )
        return
    sched.cache.finish_binding(assumed)
    fwk.run_post_bind_plugins(state, assumed, host)
    sched.queue.done(info.pod)
    sched.bound += 1
    _record_scheduled(sched, info, profile, started)
    sched.record_event(
        assumed,
        "Normal",
        "Scheduled",
        "Binding",
        f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
    )


async def _pre_bind(
    sched: Scheduler, fwk: Framework, state: CycleState, assumed: Pod, host: str
) -> Status | None:
    """PreBindPreFlight on the loop; then, unless every PreBind plugin skipped, PreBind in
    a worker thread, where plugins make blocking API calls and wait (the loop goes on
    scheduling and binding other pods meanwhile)."""
    status = fwk.run_pre_bind_pre_flights(state, assumed, host)
    if status is not None:
        return None if status.code is Code.SKIP else status
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        sched.pre_bind_executor, fwk.run_pre_bind_plugins, state, assumed, host
    )


async def _handle_fit_error(
    sched: Scheduler,
    fwk: Framework,
    state: CycleState,
    info: QueuedPodInfo,
    fit: FitError,
    started: float | None = None,
) -> None:
    """Preempt if a PostFilter plugin can; then report the pod unschedulable."""
    pod = info.pod
    nominated: str | None = None
    if fwk.has_post_filter_plugins():
        writer = sched.cluster_client
        sched.metrics.preemption_attempts.inc()
        t0 = time.perf_counter()
        with writer.collect() as pending:
            if fwk.extenders is None:
                result, status = fwk.run_post_filter_plugins(
                    state, pod, fit.diagnosis.node_to_status
                )
            else:  # preemption may await the extenders' preempt verbs
                result, status = await fwk.run_post_filter_plugins_async(
                    state, pod, fit.diagnosis.node_to_status
                )
        # Await the deletions: the victims must be on their way out before the pod is
        # requeued, and a failed deletion must not leave a nomination behind.
        failed = await writer.flush(pending)
        sched.metrics.extension_point(
            "PostFilter", status, fwk.profile_name, time.perf_counter() - t0
        )
        fit.diagnosis.post_filter_msg = status.message if status is not None else ""
        if failed:
            log.warning("preemption for pod %s failed: %s", pod.key, "; ".join(failed))
        elif result is not None:
            nominated = result.nominated_node_name
            if result.victims:
                sched.metrics.preemption_victims.observe(len(result.victims))
    info.unschedulable_plugins = frozenset(fit.diagnosis.unschedulable_plugins)
    info.pending_plugins = frozenset(fit.diagnosis.pending_plugins)
    failure = Status(Code.UNSCHEDULABLE, (str(fit),))
    await handle_failure(
        sched, info, failure, REASON_UNSCHEDULABLE, nominated, keep=True, started=started
    )


async def handle_failure(
    sched: Scheduler,
    info: QueuedPodInfo,
    status: Status,
    reason: str,
    nominated: str | None = None,
    *,
    keep: bool = False,
    started: float | None = None,
) -> None:
    """Requeue the pod, then write the FailedScheduling event and PodScheduled=False
    (with ``status.nominatedNodeName`` when preemption changed it), as upstream's
    ``handleSchedulingFailure``. ``keep``: ``info``'s rejecting plugins are already set.
    ``started``: the cycle's ``perf_counter`` start; given, the attempt is counted
    (``unschedulable`` when rejected, else ``error``)."""
    pod = info.pod
    if started is not None:
        result = UNSCHEDULABLE if status.is_rejected() else ERROR
        sched.metrics.attempt(result, pod.scheduler_name, time.perf_counter() - started)
    if not keep:
        plugin = status.plugin if status.is_rejected() else ""
        info.unschedulable_plugins = frozenset({plugin} - {""})
        info.pending_plugins = frozenset()
    message = status.message
    # As upstream: a pod the informer shows gone, or bound (by another scheduler, or by
    # a bind that failed on our side only), is not requeued.
    cached = sched.pod_informer.get(pod.key)
    if cached is None or cached.uid != pod.uid or cached.node_name:
        log.info(
            "pod %s %s: not requeued",
            pod.key,
            f"is bound to {cached.node_name}"
            if cached is not None and cached.node_name
            else "is gone",
        )
        sched.queue.done(pod)
    else:
        try:
            sched.queue.add_unschedulable_if_not_present(info, nominated)
        except ValueError as err:
            log.warning("requeueing pod %s: %s", pod.key, err)
    sched.record_event(pod, "Warning", "FailedScheduling", "Scheduling", message)
    update_condition(sched, pod, reason, message, nominated)


def update_condition(
    sched: Scheduler, pod: Pod, reason: str, message: str, nominated: str | None = None
) -> None:
    """Write PodScheduled=False with ``reason`` and ``message`` (and the nomination)
    unless the pod already says so, as upstream's ``updatePod``."""
    body: dict[str, object] = {}
    current = pod.scheduled_condition
    # As upstream's updatePod: write the condition only when it changes, and keep its
    # lastTransitionTime (left out of the strategic patch) while its status stays False.
    if current != ("False", reason, message):
        condition: dict[str, object] = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
        }
        if current is None or current[0] != "False":
            condition["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body["conditions"] = [condition]
    if nominated is not None and nominated != pod.nominated_node_name:
        body["nominatedNodeName"] = nominated or None
    if body:
        # One patch per pod waits at a time; a newer one merges into it.
        sched.status_writer.patch(pod.namespace, pod.name, body)


def _record_scheduled(
    sched: Scheduler, info: QueuedPodInfo, profile: str, started: float | None
) -> None:
    """Upstream's metrics of a bound pod: the attempt, its SLI latency and attempts."""
    metrics = sched.metrics
    if started is not None:
        metrics.attempt(SCHEDULED, profile, time.perf_counter() - started)
    metrics.pod_scheduling_attempts.observe(info.attempts)
    if info.initial_attempt_timestamp is not None:
        since = max(0.0, sched.queue.clock() - info.initial_attempt_timestamp)
        metrics.pod_scheduling_sli_duration.observe(since, attempts_label(info.attempts))


def _unreserve(sched: Scheduler, fwk: Framework, state: CycleState, assumed: Pod) -> None:
    fwk.run_reserve_plugins_unreserve(state, assumed, assumed.node_name)


def _forget(sched: Scheduler, assumed: Pod) -> bool:
    """Forget ``assumed`` in the cache; False if it was gone already (deleted meanwhile:
    nothing to undo)."""
    try:
        sched.cache.forget_pod(assumed)
    except CacheError:
        return False
    return True
