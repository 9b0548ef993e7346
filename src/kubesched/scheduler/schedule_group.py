"""The live scheduler's group cycle: a gang's quorum placed together or not at all.

``schedule_next`` is what the scheduling loop runs for a popped pod. A member of a gang
(its profile has a PodGroupPlugin) whose group has fewer than ``min_member`` members
with a node does not get an ordinary cycle: its pending siblings leave the queue with
it (``SchedulingQueue.pop_group``) and ``framework.groupcycle.schedule_group`` places a
quorum against the cache's snapshot, assuming each member in the cache as it goes. On
success every placed member starts its binding cycle, as ``schedule_one`` would start
it; members passed over are reported as ordinary failures, members not needed go back
to activeQ. On failure nothing stays assumed or reserved and every member is requeued
with the group's one reason (a FailedScheduling event and PodScheduled=False each),
backing off the group's ``backoff_seconds`` when set. When a dry run of preemption
placed the whole quorum (``framework/grouppreemption.py``), its evictions are written
here and the members are requeued nominated to their nodes.

Profiles with extenders schedule gang members one by one: the group cycle is
synchronous and the extenders' verbs are not.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from kubesched.framework.groupcycle import schedule_group, sort_members
from kubesched.framework.interface import Code, PodGroupInfo, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.scheduler.schedule_one import (
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    binding_cycle,
    handle_failure,
    schedule_one,
)

if TYPE_CHECKING:
    from kubesched.scheduler.scheduler import Scheduler

__all__ = ["schedule_group_cycle", "schedule_next"]

log = logging.getLogger(__name__)


async def schedule_next(sched: Scheduler, info: QueuedPodInfo) -> None:
    """Schedule the popped ``info``: with its group when it is a gang member whose
    quorum is not placed yet, else in an ordinary cycle."""
    pod = info.pod
    fwk = sched.frameworks.get(pod.scheduler_name)
    if sched.queue.gangs and fwk is not None and fwk.extenders is None:
        group = fwk.pod_group(pod)
        if group is not None and sched.queue.groups.placed(group.key) < group.min_member:
            await schedule_group_cycle(sched, fwk, info, group)
            return
    await schedule_one(sched, info)


def _schedulable(sched: Scheduler, pod: Pod) -> bool:
    """Not being deleted and not assumed or bound already (upstream skipPodSchedule)."""
    return not pod.deleting and sched.cache.get_pod(pod) is None


async def schedule_group_cycle(
    sched: Scheduler, fwk: Framework, info: QueuedPodInfo, group: PodGroupInfo
) -> None:
    """One group cycle for ``info``'s group (see the module docstring)."""
    start = time.perf_counter()
    queue = sched.queue
    members: list[QueuedPodInfo] = []
    for member in [info, *queue.pop_group(group.key, info.pod)]:
        if _schedulable(sched, member.pod):
            members.append(member)
        else:
            queue.done(member.pod)
    if not members:
        return
    ordered = sort_members(fwk, members)
    by_key = {m.pod.key: m for m in ordered}
    fwk.set_snapshot(sched.cache.snapshot())

    def assume(pod: Pod) -> None:
        sched.cache.assume_pod(pod)
        sched.nominator.delete_nominated_pod(pod)

    def forget(pod: Pod) -> None:
        sched.cache.forget_pod(pod)

    writer = sched.cluster_client
    try:
        # A dry run's evictions are writes, sent once the cycle's computation is done.
        with writer.collect() as pending_writes:
            outcome = schedule_group(
                fwk,
                sched.algorithms[fwk.profile_name],
                group,
                [m.pod for m in ordered],
                queue.groups.placed(group.key),
                assume,
                forget,
                record_plugin_metrics=sched.sample_plugin_metrics(),
            )
    except Exception as err:  # a plugin bug must not stop the scheduler
        log.exception("scheduling pod group %s failed", group.key)
        status = Status.error(f"pod group {group.key}: {type(err).__name__}: {err}")
        for member in ordered:
            await handle_failure(sched, member, status, REASON_SCHEDULER_ERROR, started=start)
        return
    failed_writes = await writer.flush(pending_writes)
    sched.metrics.scheduling_algorithm_duration.observe(time.perf_counter() - start)
    if outcome.preempted:
        sched.metrics.preemption_attempts.inc()
        sched.metrics.preemption_victims.observe(outcome.victim_count())
    nominations = outcome.nominations
    if failed_writes:
        # A victim not deleted: no member may keep a place that is not free.
        log.warning("preemption for pod group %s failed: %s", group.key, "; ".join(failed_writes))
        nominations = {}
    if outcome.status is not None:
        failure = outcome.status
        rejected = failure.code is not Code.ERROR
        plugins = outcome.unschedulable_plugins()
        pending = outcome.pending_plugins()
        # With no member rejected by a plugin (too few members could be tried: others
        # held back by a PreEnqueue plugin), the group retries after a backoff.
        until = queue.clock() + group.backoff_seconds if group.backoff_seconds > 0 else 0.0
        for member in ordered:
            member.unschedulable_plugins = plugins if rejected else frozenset()
            member.pending_plugins = pending if rejected else frozenset()
            member.backoff_until = until
            reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
            nominated = nominations.get(member.pod.key)
            await handle_failure(
                sched, member, failure, reason, nominated, keep=True, started=start
            )
        return
    for placed in outcome.placed:
        member = by_key[placed.pod.key]
        member.backoff_until = 0.0
        sched.spawn(
            binding_cycle(sched, fwk, placed.state, member, placed.assumed, start),
            f"bind {placed.pod.key}",
        )
    for failed in outcome.failed:
        # Passed over while the quorum was placed without it: an ordinary failure.
        member = by_key[failed.pod.key]
        member.unschedulable_plugins = failed.unschedulable_plugins
        member.pending_plugins = failed.pending_plugins
        status = failed.status
        reason = REASON_UNSCHEDULABLE if status.is_rejected() else REASON_SCHEDULER_ERROR
        await handle_failure(sched, member, status, reason, keep=True, started=start)
    for pod in outcome.untried:
        queue.return_to_active(by_key[pod.key])
