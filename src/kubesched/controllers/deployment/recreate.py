"""The Recreate strategy, after upstream's ``deployment/recreate.go``: scale every old
ReplicaSet to zero, wait until none of their pods is left running, then create or scale
the new ReplicaSet to ``spec.replicas``.
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

__all__ = ["old_pods_running", "rollout_recreate"]


async def rollout_recreate(
    dc: DeploymentController,
    d: RawObject,
    rs_list: list[RawObject],
    pod_map: dict[str, list[RawObject]],
) -> None:
    """``rolloutRecreate``."""
    new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    all_rss: list[RawObject | None] = [*old, new_rs]
    scaled_down = False
    for rs in active(list(old)):
        scaled, _ = await scale_replica_set_and_record_event(dc, rs, 0, d)
        scaled_down = scaled_down or scaled
    if scaled_down:
        await progress.sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if old_pods_running(new_rs, old, pod_map):
        await progress.sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if new_rs is None:
        new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, True)
        all_rss = [*old, new_rs]
    assert new_rs is not None
    await scale_replica_set_and_record_event(dc, new_rs, du.spec_replicas(d), d)
    if du.deployment_complete(d, d.get("status") or {}):
        await cleanup_deployment(dc, old, d)
    await progress.sync_rollout_status(dc, all_rss, new_rs, d)


def old_pods_running(
    new_rs: RawObject | None, old_rss: list[RawObject], pod_map: dict[str, list[RawObject]]
) -> bool:
    """``oldPodsRunning``: an old ReplicaSet still counts pods, or an old pod is not
    finished (Unknown counts as running: it may be)."""
    if du.status_sum(old_rss, "replicas") > 0:
        return True
    new_uid = ((new_rs or {}).get("metadata") or {}).get("uid")
    for uid, pods in pod_map.items():
        if new_rs is not None and uid == new_uid:
            continue
        for pod in pods:
            if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                return True
    return False
