"""One scheduling cycle and its binding cycle, as upstream's
``pkg/scheduler/schedule_one.go``.

The scheduling cycle is serial: it takes the cache's snapshot, runs the profile's
SchedulingAlgorithm, assumes the pod on the chosen node, runs Reserve and Permit, and
hands the pod to a binding task (PreBind, Bind, PostBind) that runs concurrently with
the next cycles. The cycle's computation is synchronous code in the event loop; it only
awaits where preemption's writes must land before the pod is requeued (victim
deletions). A FitError runs PostFilter (preemption) and reports the failure; any
failure requeues the pod through ``add_unschedulable_if_not_present`` and tells the
user: a ``FailedScheduling`` event and the pod's PodScheduled=False condition.

Deviation: Permit's Wait is not supported yet (no waiting-pods map in the framework);
a pod a Permit plugin holds is treated as rejected by that plugin.
"""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingError
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import CacheError

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

__all__ = [
    "REASON_SCHEDULER_ERROR",
    "REASON_UNSCHEDULABLE",
    "binding_cycle",
    "handle_failure",
    "schedule_one",
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
    fwk.set_snapshot(sched.cache.snapshot())
    state = CycleState()
    try:
        result = sched.algorithms[pod.scheduler_name].schedule_pod(state, pod)
    except FitError as fit:
        await _handle_fit_error(sched, fwk, state, info, fit)
        return
    except SchedulingError as err:
        await handle_failure(sched, info, err.status, REASON_SCHEDULER_ERROR)
        return
    except Exception as err:  # a plugin bug must not stop the scheduler
        log.exception("scheduling pod %s failed", pod.key)
        await handle_failure(sched, info, Status.error(str(err)), REASON_SCHEDULER_ERROR)
        return

    host = result.suggested_host
    assumed = pod.evolve(node_name=host)
    try:
        sched.cache.assume_pod(assumed)
    except CacheError as err:
        await handle_failure(sched, info, Status.error(str(err)), REASON_SCHEDULER_ERROR)
        return
    sched.nominator.delete_nominated_pod(pod)
    failure = fwk.run_reserve_plugins_reserve(state, assumed, host)
    if failure is None:
        failure, _ = fwk.run_permit_plugins(state, assumed, host)
        if failure is not None and failure.code is Code.WAIT:
            failure = Status(Code.UNSCHEDULABLE, ("Permit plugins asked to wait; not supported",))
    if failure is not None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        _forget(sched, assumed)
        reason = REASON_UNSCHEDULABLE if failure.is_rejected() else REASON_SCHEDULER_ERROR
        await handle_failure(sched, info, failure, reason)
        return
    sched.spawn(binding_cycle(sched, fwk, state, info, assumed), f"bind {pod.key}")


async def binding_cycle(
    sched: Scheduler, fwk: Framework, state: CycleState, info: QueuedPodInfo, assumed: Pod
) -> None:
    """PreBind, Bind, PostBind for an assumed pod; on failure Unreserve, forget, requeue."""
    host = assumed.node_name
    writer = sched.cluster_client
    try:
        with writer.collect() as pending:
            status = fwk.run_pre_bind_plugins(state, assumed, host)
        failed = await writer.flush(pending)
        if status is None and not failed:
            with writer.collect() as pending:
                status = fwk.run_bind_plugins(state, assumed, host)
            failed = await writer.flush(pending)
        if status is None and failed:
            status = Status.error("; ".join(failed))
    except Exception as err:  # a plugin bug is a binding failure, not a crash
        log.exception("binding pod %s failed", assumed.key)
        status = Status.error(str(err) or type(err).__name__)
    if status is not None:
        fwk.run_reserve_plugins_unreserve(state, assumed, host)
        _forget(sched, assumed)
        message = f"Binding rejected: {status.message}"
        await handle_failure(
            sched, info, Status(status.code, (message,), status.plugin), REASON_SCHEDULER_ERROR
        )
        return
    sched.cache.finish_binding(assumed)
    fwk.run_post_bind_plugins(state, assumed, host)
    sched.queue.done(info.pod)
    sched.bound += 1
    sched.record_event(
        assumed,
        "Normal",
        "Scheduled",
        "Binding",
        f"Successfully assigned {assumed.namespace}/{assumed.name} to {host}",
    )


async def _handle_fit_error(
    sched: Scheduler, fwk: Framework, state: CycleState, info: QueuedPodInfo, fit: FitError
) -> None:
    """Preempt if a PostFilter plugin can; then report the pod unschedulable."""
    pod = info.pod
    nominated: str | None = None
    if fwk.has_post_filter_plugins():
        writer = sched.cluster_client
        with writer.collect() as pending:
            result, status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
        # Await the deletions: the victims must be on their way out before the pod is
        # requeued, and a failed deletion must not leave a nomination behind.
        failed = await writer.flush(pending)
        fit.diagnosis.post_filter_msg = status.message if status is not None else ""
        if failed:
            log.warning("preemption for pod %s failed: %s", pod.key, "; ".join(failed))
        elif result is not None:
            nominated = result.nominated_node_name
    info.unschedulable_plugins = frozenset(fit.diagnosis.unschedulable_plugins)
    info.pending_plugins = frozenset(fit.diagnosis.pending_plugins)
    failure = Status(Code.UNSCHEDULABLE, (str(fit),))
    await handle_failure(sched, info, failure, REASON_UNSCHEDULABLE, nominated, keep=True)


async def handle_failure(
    sched: Scheduler,
    info: QueuedPodInfo,
    status: Status,
    reason: str,
    nominated: str | None = None,
    *,
    keep: bool = False,
) -> None:
    """Requeue the pod, then write the FailedScheduling event and PodScheduled=False
    (with ``status.nominatedNodeName`` when preemption changed it), as upstream's
    ``handleSchedulingFailure``. ``keep``: ``info``'s rejecting plugins are already set."""
    pod = info.pod
    if not keep:
        plugin = status.plugin if status.is_rejected() else ""
        info.unschedulable_plugins = frozenset({plugin} - {""})
        info.pending_plugins = frozenset()
    message = status.message
    try:
        sched.queue.add_unschedulable_if_not_present(info, nominated)
    except ValueError as err:
        log.warning("requeueing pod %s: %s", pod.key, err)
    sched.record_event(pod, "Warning", "FailedScheduling", "Scheduling", message)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body: dict[str, object] = {
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": reason,
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": now,
            }
        ]
    }
    if nominated is not None and nominated != pod.nominated_node_name:
        body["nominatedNodeName"] = nominated or None
    sched.spawn(
        sched.client.patch_pod_status(pod.namespace, pod.name, {"status": body}),
        f"status {pod.key}",
    )


def _forget(sched: Scheduler, assumed: Pod) -> None:
    # The pod may already be gone from the cache (deleted meanwhile): nothing to undo.
    with contextlib.suppress(CacheError):
        sched.cache.forget_pod(assumed)
