"""The RollingUpdate strategy, after upstream's ``deployment/rolling.go``: scale the new
ReplicaSet up within ``maxSurge``, then the old ones down within ``maxUnavailable``
(unhealthy replicas first), one step per sync; each ReplicaSet update wakes the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.controllers.deployment import progress
from kubesched.controllers.deployment.sync import (
    active,
    cleanup_deployment,
    get_all_replica_sets_and_sync_revision,
    scale_replica_set_and_record_event,
)
from kubesched.kube.resources import RawObject
from kubesched.objects import deployment as du

if TYPE_CHECKING:
    from kubesched.controllers.deployment.controller import DeploymentController

__all__ = ["rollout_rolling"]


async def rollout_rolling(dc: DeploymentController, d: RawObject, rs_list: list[RawObject]) -> None:
    """``rolloutRolling``."""
    new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, True)
    assert new_rs is not None  # created when missing
    all_rss: list[RawObject | None] = [*old, new_rs]
    if await _reconcile_new_replica_set(dc, all_rss, new_rs, d):
        await progress.sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if await _reconcile_old_replica_sets(dc, all_rss, active(list(old)), new_rs, d):
        await progress.sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if du.deployment_complete(d, d.get("status") or {}):
        await cleanup_deployment(dc, old, d)
    await progress.sync_rollout_status(dc, all_rss, new_rs, d)


async def _reconcile_new_replica_set(
    dc: DeploymentController, all_rss: list[RawObject | None], new_rs: RawObject, d: RawObject
) -> bool:
    """``reconcileNewReplicaSet``: scale the new ReplicaSet up as far as maxSurge lets."""
    replicas = du.spec_replicas(d)
    if du.spec_replicas(new_rs) == replicas:
        return False
    if du.spec_replicas(new_rs) > replicas:
        scaled, _ = await scale_replica_set_and_record_event(dc, new_rs, replicas, d)
        return scaled
    count = du.new_rs_new_replicas(d, all_rss, new_rs)
    scaled, _ = await scale_replica_set_and_record_event(dc, new_rs, count, d)
    return scaled


async def _reconcile_old_replica_sets(
    dc: DeploymentController,
    all_rss: list[RawObject | None],
    old_rss: list[RawObject],
    new_rs: RawObject,
    d: RawObject,
) -> bool:
    """``reconcileOldReplicaSets``: scale old ReplicaSets down as far as maxUnavailable
    lets, unhealthy replicas first (kubernetes#16737: they would block the rollout)."""
    if du.replica_count(old_rss) == 0:
        return False
    all_pods = du.replica_count(all_rss)
    min_available = du.spec_replicas(d) - du.max_unavailable(d)
    new_unavailable = du.spec_replicas(new_rs) - du.status_count(new_rs, "availableReplicas")
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_rss, cleaned = await _cleanup_unhealthy_replicas(dc, old_rss, d, max_scaled_down)
    scaled_down = await _scale_down_old_replica_sets(dc, [*old_rss, new_rs], old_rss, d)
    return cleaned + scaled_down > 0


async def _cleanup_unhealthy_replicas(
    dc: DeploymentController, old_rss: list[RawObject], d: RawObject, max_cleanup: int
) -> tuple[list[RawObject], int]:
    """``cleanupUnhealthyReplicas``: remove old replicas that are not available."""
    old_rss = sorted(old_rss, key=du.creation_key)
    total = 0
    for i, rs in enumerate(old_rss):
        if total >= max_cleanup:
            break
        replicas = du.spec_replicas(rs)
        available = du.status_count(rs, "availableReplicas")
        if replicas == 0 or replicas == available:
            continue
        count = min(max_cleanup - total, replicas - available)
        _, updated = await scale_replica_set_and_record_event(dc, rs, replicas - count, d)
        total += count
        old_rss[i] = updated
    return old_rss, total


async def _scale_down_old_replica_sets(
    dc: DeploymentController, all_rss: list[RawObject], old_rss: list[RawObject], d: RawObject
) -> int:
    """``scaleDownOldReplicaSetsForRollingUpdate``: as many as stay above minAvailable."""
    min_available = du.spec_replicas(d) - du.max_unavailable(d)
    available = du.status_sum(all_rss, "availableReplicas")
    if available <= min_available:
        return 0
    to_scale_down = available - min_available
    total = 0
    for rs in sorted(old_rss, key=du.creation_key):
        if total >= to_scale_down:
            break
        replicas = du.spec_replicas(rs)
        if replicas == 0:
            continue
        count = min(replicas, to_scale_down - total)
        await scale_replica_set_and_record_event(dc, rs, replicas - count, d)
        total += count
    return total
