"""What every Deployment sync shares, after upstream's ``deployment/sync.go``: finding or
creating the new ReplicaSet (named ``<deployment>-<pod-template-hash>``, with the
revision annotations), scaling ReplicaSets (``ScalingReplicaSet`` events), proportional
scaling when ``spec.replicas`` changes mid-rollout, the paused conditions, cleaning up
history beyond ``revisionHistoryLimit``, and the Deployment's status.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from typing import TYPE_CHECKING, Any

from kubesched.kube import AlreadyExists, Conflict, KubeError, NotFound
from kubesched.kube.resources import REPLICA_SETS, RawObject
from kubesched.objects import deployment as du
from kubesched.objects.podtemplate import controller_of, controller_ref

if TYPE_CHECKING:
    from kubesched.controllers.deployment.controller import DeploymentController

__all__ = [
    "calculate_status",
    "check_paused_conditions",
    "cleanup_deployment",
    "get_all_replica_sets_and_sync_revision",
    "is_scaling_event",
    "scale_replica_set_and_record_event",
    "sync",
    "sync_status_only",
    "update_status",
]

log = logging.getLogger(__name__)

SCALING_REPLICA_SET = "ScalingReplicaSet"


def _uid(obj: RawObject | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")


def _name(obj: RawObject) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def active(replica_sets: list[RawObject | None]) -> list[RawObject]:
    """``FilterActiveReplicaSets``: those with replicas."""
    return [rs for rs in replica_sets if rs is not None and du.spec_replicas(rs) > 0]


async def update_status(dc: DeploymentController, d: RawObject) -> RawObject:
    """PUT the Deployment's status; ``d`` takes the answer's resourceVersion, so later
    writes of this sync do not conflict with this one."""
    from kubesched.controllers.deployment.controller import DEPLOYMENTS

    body = {**d, "status": _omit_zero(d.get("status") or {})}
    updated: RawObject = await dc.client.update(DEPLOYMENTS, body, subresource="status")
    d["metadata"]["resourceVersion"] = updated["metadata"].get("resourceVersion")
    dc.written.record(f"{d['metadata'].get('namespace')}/{d['metadata']['name']}", updated)
    return updated


def find_new_replica_set(d: RawObject, rs_list: list[RawObject]) -> RawObject | None:
    """``FindNewReplicaSet``: the oldest ReplicaSet whose template is the Deployment's
    (more than one can exist after upgrades, kubernetes#40415)."""
    template = (d.get("spec") or {}).get("template") or {}
    for rs in sorted(rs_list, key=du.creation_key):
        if du.equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, template):
            return rs
    return None


def find_old_replica_sets(
    d: RawObject, rs_list: list[RawObject]
) -> tuple[list[RawObject], list[RawObject]]:
    """``FindOldReplicaSets``: (old ones with replicas, all old ones)."""
    new_rs = find_new_replica_set(d, rs_list)
    required, everything = [], []
    for rs in rs_list:
        if new_rs is not None and _uid(rs) == _uid(new_rs):
            continue
        everything.append(rs)
        if du.spec_replicas(rs) != 0:
            required.append(rs)
    return required, everything


async def get_all_replica_sets_and_sync_revision(
    dc: DeploymentController, d: RawObject, rs_list: list[RawObject], create: bool
) -> tuple[RawObject | None, list[RawObject]]:
    """``getAllReplicaSetsAndSyncRevision``: the new ReplicaSet (created when ``create``)
    with its revision synced, and all old ones."""
    _, old = find_old_replica_sets(d, rs_list)
    new_rs = await get_new_replica_set(dc, d, rs_list, old, create)
    return new_rs, old


async def get_new_replica_set(
    dc: DeploymentController,
    d: RawObject,
    rs_list: list[RawObject],
    old_rss: list[RawObject],
    create: bool,
) -> RawObject | None:
    """``getNewReplicaSet``."""
    existing = find_new_replica_set(d, rs_list)
    new_revision = str(du.max_revision(old_rss) + 1)
    status = d.setdefault("status", {})
    now = dc.clock()
    if existing is not None:
        rs_copy = copy.deepcopy(existing)
        annotations_updated = du.set_new_rs_annotations(d, rs_copy, new_revision, True)
        min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
        if (
            annotations_updated
            or (rs_copy.get("spec") or {}).get("minReadySeconds", 0) != min_ready
        ):
            rs_copy["spec"]["minReadySeconds"] = min_ready
            rs_copy.setdefault("apiVersion", "apps/v1")
            rs_copy.setdefault("kind", "ReplicaSet")
            updated: RawObject = await dc.client.update(REPLICA_SETS.raw, rs_copy)
            return updated
        needs_update = _set_revision(d, du.annotations_of(rs_copy).get(du.REVISION_ANNOTATION, ""))
        if du.progress_deadline(d) is not None and du.condition(status, du.PROGRESSING) is None:
            message = f'Found new replica set "{_name(rs_copy)}"'
            du.set_condition(
                status,
                du.new_condition(du.PROGRESSING, "True", du.FOUND_NEW_RS_REASON, message, now),
            )
            needs_update = True
        if needs_update:
            await update_status(dc, d)
        return rs_copy
    if not create:
        return None
    return await _create_new_replica_set(dc, d, old_rss, new_revision)


def _set_revision(d: RawObject, revision: str) -> bool:
    """``SetDeploymentRevision``."""
    notes = d["metadata"].setdefault("annotations", {})
    if notes.get(du.REVISION_ANNOTATION) != revision:
        notes[du.REVISION_ANNOTATION] = revision
        return True
    return False


async def _create_new_replica_set(
    dc: DeploymentController, d: RawObject, old_rss: list[RawObject], new_revision: str
) -> RawObject:
    spec = d.get("spec") or {}
    status = d.setdefault("status", {})
    meta = d["metadata"]
    template = copy.deepcopy(spec.get("template") or {})
    collision_count = status.get("collisionCount")
    pod_template_hash = du.compute_hash(template, collision_count)
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {
        **(tmeta.get("labels") or {}),
        du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: pod_template_hash,
    }
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {
        **(selector.get("matchLabels") or {}),
        du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: pod_template_hash,
    }
    new_rs: RawObject = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{meta['name']}-{pod_template_hash}",
            "namespace": meta.get("namespace"),
            "ownerReferences": [controller_ref(d, "apps/v1", "Deployment")],
            "labels": dict(tmeta["labels"]),
        },
        "spec": {
            "replicas": 0,
            "minReadySeconds": spec.get("minReadySeconds") or 0,
            "selector": selector,
            "template": template,
        },
    }
    new_replicas = du.new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
    new_rs["spec"]["replicas"] = new_replicas
    du.set_new_rs_annotations(d, new_rs, new_revision, False)
    now = dc.clock()
    already_exists = False
    try:
        created: RawObject = await dc.client.create(REPLICA_SETS.raw, new_rs)
    except AlreadyExists:
        already_exists = True
        found = dc.replica_sets.get(f"{meta.get('namespace')}/{new_rs['metadata']['name']}")
        if found is None:
            raise
        ref = controller_of(found)
        if (
            ref is not None
            and ref.get("uid") == meta.get("uid")
            and du.equal_ignore_hash(
                spec.get("template") or {}, (found.get("spec") or {}).get("template") or {}
            )
        ):
            created = found
        else:
            # A hash collision: bump collisionCount and try again with the next sync.
            status["collisionCount"] = int(collision_count or 0) + 1
            try:
                await update_status(dc, d)
            except KubeError as exc:
                log.info("Deployment %s: collisionCount not saved: %s", meta.get("name"), exc)
            raise
    except KubeError as exc:
        message = f'Failed to create new replica set "{new_rs["metadata"]["name"]}": {exc}'
        if du.progress_deadline(d) is not None:
            du.set_condition(
                status,
                du.new_condition(du.PROGRESSING, "False", du.FAILED_RS_CREATE_REASON, message, now),
            )
            with contextlib.suppress(KubeError):
                await update_status(dc, d)
        dc.recorder.event(d, "Warning", du.FAILED_RS_CREATE_REASON, message)
        raise
    if not already_exists and new_replicas > 0:
        dc.recorder.event(
            d,
            "Normal",
            SCALING_REPLICA_SET,
            f"Scaled up replica set {_name(created)} from 0 to {new_replicas}",
        )
    needs_update = _set_revision(d, new_revision)
    if not already_exists and du.progress_deadline(d) is not None:
        message = f'Created new replica set "{_name(created)}"'
        du.set_condition(
            status, du.new_condition(du.PROGRESSING, "True", du.NEW_RS_REASON, message, now)
        )
        needs_update = True
    if needs_update:
        await update_status(dc, d)
    return created


# --- scaling ------------------------------------------------------------------------------


async def scale_replica_set_and_record_event(
    dc: DeploymentController, rs: RawObject, new_scale: int, d: RawObject
) -> tuple[bool, RawObject]:
    """``scaleReplicaSetAndRecordEvent``."""
    if du.spec_replicas(rs) == new_scale:
        return False, rs
    operation = "up" if du.spec_replicas(rs) < new_scale else "down"
    return await scale_replica_set(dc, rs, new_scale, d, operation)


async def scale_replica_set(
    dc: DeploymentController, rs: RawObject, new_scale: int, d: RawObject, operation: str
) -> tuple[bool, RawObject]:
    """``scaleReplicaSet``: replicas and the desired/max annotations in one update."""
    size_changed = du.spec_replicas(rs) != new_scale
    replicas = du.spec_replicas(d)
    maximum = replicas + du.max_surge(d)
    if not size_changed and not du.replicas_annotations_need_update(rs, replicas, maximum):
        return False, rs
    old_scale = du.spec_replicas(rs)
    rs_copy = copy.deepcopy(rs)
    rs_copy.setdefault("apiVersion", "apps/v1")
    rs_copy.setdefault("kind", "ReplicaSet")
    rs_copy["spec"]["replicas"] = new_scale
    du.set_replicas_annotations(rs_copy, replicas, maximum)
    updated: RawObject = await dc.client.update(REPLICA_SETS.raw, rs_copy)
    if size_changed:
        dc.recorder.event(
            d,
            "Normal",
            SCALING_REPLICA_SET,
            f"Scaled {operation} replica set {_name(updated)} from {old_scale} to {new_scale}",
        )
    return size_changed, updated


def find_active_or_latest(new_rs: RawObject | None, old_rss: list[RawObject]) -> RawObject | None:
    """``FindActiveOrLatest``: the one active ReplicaSet, or the newest if none is."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=du.creation_key, reverse=True)
    everything = active([*newest_first, new_rs])
    if not everything:
        return new_rs if new_rs is not None else newest_first[0]
    return everything[0] if len(everything) == 1 else None


async def scale(
    dc: DeploymentController, d: RawObject, new_rs: RawObject | None, old_rss: list[RawObject]
) -> None:
    """``scale``: a scaling event, proportionally over the active ReplicaSets when a
    rollout is under way."""
    replicas = du.spec_replicas(d)
    target = find_active_or_latest(new_rs, old_rss)
    if target is not None:
        if du.spec_replicas(target) != replicas:
            await scale_replica_set_and_record_event(dc, target, replicas, d)
        return
    if du.is_saturated(d, new_rs):
        for old in active(list(old_rss)):
            await scale_replica_set_and_record_event(dc, old, 0, d)
        return
    if not du.is_rolling_update(d):
        return
    everything = active([*old_rss, new_rs])
    allowed = replicas + du.max_surge(d) if replicas > 0 else 0
    to_add = allowed - du.replica_count(everything)
    operation = ""
    if to_add > 0:
        # Larger first; equal sizes: newer first when scaling up.
        everything.sort(key=du.creation_key, reverse=True)
        everything.sort(key=du.spec_replicas, reverse=True)
        operation = "up"
    elif to_add < 0:
        # Larger first; equal sizes: older first when scaling down.
        everything.sort(key=du.creation_key)
        everything.sort(key=du.spec_replicas, reverse=True)
        operation = "down"
    added = 0
    sizes: dict[str, int] = {}
    for rs in everything:
        if to_add != 0:
            share = du.proportion(rs, d, to_add, added)
            sizes[_name(rs)] = du.spec_replicas(rs) + share
            added += share
        else:
            sizes[_name(rs)] = du.spec_replicas(rs)
    for i, rs in enumerate(everything):
        if i == 0 and to_add != 0:
            sizes[_name(rs)] = max(sizes[_name(rs)] + to_add - added, 0)
        await scale_replica_set(dc, rs, sizes[_name(rs)], d, operation)


async def is_scaling_event(
    dc: DeploymentController, d: RawObject, rs_list: list[RawObject]
) -> bool:
    """``isScalingEvent``: an active ReplicaSet's desired-replicas annotation differs
    from ``spec.replicas``."""
    new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    for rs in active([*old, new_rs]):
        desired = du.annotations_of(rs).get(du.DESIRED_REPLICAS_ANNOTATION)
        if desired is None:
            continue
        try:
            if int(desired) != du.spec_replicas(d):
                return True
        except ValueError:
            continue
    return False


async def sync(dc: DeploymentController, d: RawObject, rs_list: list[RawObject]) -> None:
    """``sync``: scaling events and paused Deployments."""
    new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    await scale(dc, d, new_rs, old)
    if (d.get("spec") or {}).get("paused"):
        await cleanup_deployment(dc, old, d)
    await sync_deployment_status(dc, [*old, new_rs], new_rs, d)


async def sync_status_only(
    dc: DeploymentController, d: RawObject, rs_list: list[RawObject]
) -> None:
    """``syncStatusOnly``: a Deployment being deleted."""
    new_rs, old = await get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    await sync_deployment_status(dc, [*old, new_rs], new_rs, d)


async def check_paused_conditions(dc: DeploymentController, d: RawObject) -> None:
    """``checkPausedConditions``: Progressing Unknown while paused / when resumed."""
    if du.progress_deadline(d) is None:
        return
    status = d.setdefault("status", {})
    cond = du.condition(status, du.PROGRESSING)
    if cond is not None and cond.get("reason") == du.TIMED_OUT_REASON:
        return
    paused_exists = cond is not None and cond.get("reason") == du.PAUSED_DEPLOY_REASON
    paused = bool((d.get("spec") or {}).get("paused"))
    now = dc.clock()
    if paused and not paused_exists:
        new = du.new_condition(
            du.PROGRESSING, "Unknown", du.PAUSED_DEPLOY_REASON, "Deployment is paused", now
        )
    elif not paused and paused_exists:
        new = du.new_condition(
            du.PROGRESSING, "Unknown", du.RESUMED_DEPLOY_REASON, "Deployment is resumed", now
        )
    else:
        return
    du.set_condition(status, new)
    await update_status(dc, d)


async def cleanup_deployment(
    dc: DeploymentController, old_rss: list[RawObject], d: RawObject
) -> None:
    """``cleanupDeployment``: delete the oldest scaled-down ReplicaSets beyond
    ``revisionHistoryLimit``."""
    limit = du.revision_history_limit(d)
    if limit is None:
        return
    alive = [rs for rs in old_rss if not (rs.get("metadata") or {}).get("deletionTimestamp")]
    diff = len(alive) - limit
    if diff <= 0:
        return
    alive.sort(key=du.by_revision_key)
    for rs in alive[:diff]:
        meta = rs.get("metadata") or {}
        if (
            du.status_count(rs, "replicas") != 0
            or du.spec_replicas(rs) != 0
            or int(meta.get("generation") or 0) > du.status_count(rs, "observedGeneration")
        ):
            continue
        with contextlib.suppress(NotFound, Conflict):
            await dc.client.delete(
                REPLICA_SETS.raw,
                meta["name"],
                meta.get("namespace"),
                uid=str(meta.get("uid") or ""),
            )


# --- status -------------------------------------------------------------------------------


def calculate_status(
    all_rss: list[RawObject | None], new_rs: RawObject | None, d: RawObject, now: float
) -> dict[str, Any]:
    """``calculateStatus``: counts over the ReplicaSets and the Available condition."""
    available = du.status_sum(all_rss, "availableReplicas")
    total = du.replica_count(all_rss)
    old = d.get("status") or {}
    status: dict[str, Any] = {
        "observedGeneration": (d.get("metadata") or {}).get("generation") or 0,
        "replicas": du.status_sum(all_rss, "replicas"),
        "updatedReplicas": du.status_sum([new_rs], "replicas"),
        "readyReplicas": du.status_sum(all_rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(total - available, 0),
    }
    if "collisionCount" in old:
        status["collisionCount"] = old["collisionCount"]
    conditions = [copy.deepcopy(c) for c in old.get("conditions") or ()]
    if conditions:
        status["conditions"] = conditions
    if available >= du.spec_replicas(d) - du.max_unavailable(d):
        cond = du.new_condition(
            du.AVAILABLE,
            "True",
            du.MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    else:
        cond = du.new_condition(
            du.AVAILABLE,
            "False",
            du.MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    du.set_condition(status, cond)
    return status


def _omit_zero(status: dict[str, Any]) -> dict[str, Any]:
    """The status as the API serializes it (zero counters omitted), for comparing."""
    return {k: v for k, v in status.items() if v not in (0, None, [])}


def status_equal(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return _omit_zero(old) == _omit_zero(new)


async def sync_deployment_status(
    dc: DeploymentController,
    all_rss: list[RawObject | None],
    new_rs: RawObject | None,
    d: RawObject,
) -> None:
    """``syncDeploymentStatus``: write the status if it changed."""
    new_status = calculate_status(all_rss, new_rs, d, dc.clock())
    if status_equal(d.get("status") or {}, new_status):
        return
    d["status"] = new_status
    await update_status(dc, d)
