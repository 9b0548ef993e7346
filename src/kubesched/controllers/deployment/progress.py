"""Rollout progress, after upstream's ``deployment/progress.go``: the Progressing
condition (NewReplicaSetAvailable, ReplicaSetUpdated, ProgressDeadlineExceeded), the
ReplicaSets' ReplicaFailure carried to the Deployment, and a look again when the
progress deadline would pass (kubernetes#34458)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.controllers.deployment.sync import calculate_status, status_equal, update_status
from kubesched.kube.resources import RawObject
from kubesched.objects import deployment as du

if TYPE_CHECKING:
    from kubesched.controllers.deployment.controller import DeploymentController

__all__ = ["sync_rollout_status"]


def _name(obj: RawObject | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("name") or "")


async def sync_rollout_status(
    dc: DeploymentController,
    all_rss: list[RawObject | None],
    new_rs: RawObject | None,
    d: RawObject,
) -> None:
    """``syncRolloutStatus``."""
    now = dc.clock()
    status = calculate_status(all_rss, new_rs, d, now)
    deadline = du.progress_deadline(d)
    if deadline is None:
        du.remove_condition(status, du.PROGRESSING)
    current = du.condition(d.get("status") or {}, du.PROGRESSING)
    complete = (
        status.get("replicas") == status.get("updatedReplicas")
        and current is not None
        and current.get("reason") == du.NEW_RS_AVAILABLE_REASON
    )
    name = (d.get("metadata") or {}).get("name")
    if deadline is not None and not complete:
        if du.deployment_complete(d, status):
            message = f'Deployment "{name}" has successfully progressed.'
            if new_rs is not None:
                message = f'ReplicaSet "{_name(new_rs)}" has successfully progressed.'
            du.set_condition(
                status,
                du.new_condition(du.PROGRESSING, "True", du.NEW_RS_AVAILABLE_REASON, message, now),
            )
        elif du.deployment_progressing(d, status):
            message = f'Deployment "{name}" is progressing.'
            if new_rs is not None:
                message = f'ReplicaSet "{_name(new_rs)}" is progressing.'
            cond = du.new_condition(du.PROGRESSING, "True", du.RS_UPDATED_REASON, message, now)
            # Progress refreshes lastUpdateTime even with the same reason, which
            # set_condition alone would not.
            if current is not None:
                if current.get("status") == "True":
                    cond["lastTransitionTime"] = current.get("lastTransitionTime")
                du.remove_condition(status, du.PROGRESSING)
            du.set_condition(status, cond)
        elif du.deployment_timed_out(d, status, now):
            message = f'Deployment "{name}" has timed out progressing.'
            if new_rs is not None:
                message = f'ReplicaSet "{_name(new_rs)}" has timed out progressing.'
            du.set_condition(
                status,
                du.new_condition(du.PROGRESSING, "False", du.TIMED_OUT_REASON, message, now),
            )
    failures = _replica_failures(all_rss, new_rs)
    if failures:
        du.set_condition(status, failures[0])
    else:
        du.remove_condition(status, du.REPLICA_FAILURE)
    if status_equal(d.get("status") or {}, status):
        _requeue_stuck_deployment(dc, d, status, now)
        return
    d["status"] = status
    await update_status(dc, d)


def _replica_failures(
    all_rss: list[RawObject | None], new_rs: RawObject | None
) -> list[dict[str, Any]]:
    """``getReplicaFailures``: the new ReplicaSet's first, else any old one's."""

    def of(rs: RawObject | None) -> list[dict[str, Any]]:
        found = []
        for c in ((rs or {}).get("status") or {}).get("conditions") or ():
            if c.get("type") == du.REPLICA_FAILURE:
                found.append(
                    {
                        "type": du.REPLICA_FAILURE,
                        "status": c.get("status"),
                        "lastUpdateTime": c.get("lastTransitionTime"),
                        "lastTransitionTime": c.get("lastTransitionTime"),
                        "reason": c.get("reason", ""),
                        "message": c.get("message", ""),
                    }
                )
        return found

    if new_rs is not None and (failures := of(new_rs)):
        return failures
    return [c for rs in all_rss for c in of(rs)]


def _requeue_stuck_deployment(
    dc: DeploymentController, d: RawObject, status: dict[str, Any], now: float
) -> None:
    """``requeueStuckDeployment``: with no progress now, look again when the deadline
    passes, so ProgressDeadlineExceeded is written on time."""
    deadline = du.progress_deadline(d)
    current = du.condition(d.get("status") or {}, du.PROGRESSING)
    if deadline is None or current is None:
        return
    if du.deployment_complete(d, status) or current.get("reason") == du.TIMED_OUT_REASON:
        return
    from kubesched.objects.activepods import parse_time

    updated = parse_time(current.get("lastUpdateTime"))
    if updated is None:
        return
    after = updated + deadline - now
    if after < 1:
        dc.enqueue_rate_limited(d)
    else:
        dc.enqueue_after(d, after)
