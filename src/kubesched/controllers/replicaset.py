"""The ReplicaSet and ReplicationController controllers, after upstream's
``pkg/controller/replicaset`` (``replica_set.go``, ``replica_set_utils.go``); the
ReplicationController runs the same logic, as upstream's ``pkg/controller/replication``
does through a conversion.

Informer handlers only turn a change into the owner's key; a worker syncs a key by
reading the owner and its pods from the caches: it claims pods (adopting orphans its
selector matches, releasing those it no longer matches), and if its expectations are met
creates or deletes pods to reach ``spec.replicas`` (at most :data:`BURST_REPLICAS` a
sync, creations in slow-start batches, deletions ranked by
:func:`~kubesched.objects.activepods.pods_to_delete`), then writes ``status``
(replicas, fullyLabeledReplicas, readyReplicas, availableReplicas after
``minReadySeconds``, observedGeneration, the ReplicaFailure condition) when it changed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion
from kubesched.controllers.controller_utils import (
    BURST_REPLICAS,
    SLOW_START_INITIAL_BATCH_SIZE,
    ChildEventHandlers,
    PodControl,
    UIDTrackingControllerExpectations,
    WrittenVersions,
    pod_key,
    run_workers,
    slow_start_batch,
    update_status,
)
from kubesched.controllers.ownerindex import OwnerIndex, object_key, shared_index
from kubesched.kube import Client, Conflict, Informer, KubeError, NotFound
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import (
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    RawObject,
    Resource,
)
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.activepods import (
    is_pod_active,
    is_pod_available,
    pod_ready_condition,
)
from kubesched.objects.activepods import pods_to_delete as rank_pods_to_delete
from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import controller_of, controller_ref
from kubesched.objects.selectors import LabelSelector, selector_from_set

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = [
    "NAME",
    "RC_NAME",
    "REPLICATION_CONTROLLER_KIND",
    "REPLICA_SET_KIND",
    "ReplicaSetController",
    "ReplicaSetKind",
    "calculate_status",
    "start_replicaset_controller",
    "start_replication_controller",
]

log = logging.getLogger(__name__)

#: ``ReplicaSetReplicaFailure`` (the same type name for ReplicationControllers).
REPLICA_FAILURE = "ReplicaFailure"
#: Workers (``--concurrent-replicaset-syncs`` default).
DEFAULT_WORKERS = 5
#: Seconds an owner waits before a sync for an update of one of its pods, so that the
#: updates of many pods (scheduled, Running, Ready) make one sync. Deviation: upstream
#: syncs a ReplicaSet for every such update (Go recounts 5,000 pods in well under a
#: millisecond; Python takes tens), and only the Job controller batches
#: (``syncJobBatchPeriod``, 1 s). Creations and deletions are never delayed.
POD_UPDATE_BATCH_PERIOD = 0.1


@dataclass(frozen=True)
class ReplicaSetKind:
    """What differs between a ReplicaSet and a ReplicationController."""

    resource: Resource[RawObject]
    api_version: str
    kind: str
    component: str
    #: ``spec.selector`` is a LabelSelector (ReplicaSet) or a plain label map (RC).
    map_selector: bool

    def selector(self, obj: RawObject) -> LabelSelector:
        """The owner's pod selector; raises :class:`ObjectError` if unusable. A missing
        selector matches nothing (an empty LabelSelector is everything)."""
        raw = (obj.get("spec") or {}).get("selector")
        if self.map_selector:
            if not isinstance(raw, dict) or not raw:
                raise ObjectError("spec.selector", "Required value")
            return selector_from_set({str(k): str(v) for k, v in raw.items()})
        if raw is None:
            raise ObjectError("spec.selector", "Required value")
        return LabelSelector.from_dict(raw)


REPLICA_SET_KIND = ReplicaSetKind(
    REPLICA_SETS.raw, "apps/v1", "ReplicaSet", "replicaset-controller", False
)
REPLICATION_CONTROLLER_KIND = ReplicaSetKind(
    REPLICATION_CONTROLLERS.raw, "v1", "ReplicationController", "replication-controller", True
)


def _replicas(obj: RawObject) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return int(value) if isinstance(value, int) else 1


def _now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calculate_status(
    owner: RawObject, pods: list[RawObject], manage_error: BaseException | None, now: float
) -> dict[str, Any]:
    """``calculateStatus``: the status a sync writes for ``owner`` with its claimed
    active ``pods`` (observedGeneration is set by the writer)."""
    spec = owner.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    fully_labeled = ready = available = 0
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if all(labels.get(k) == v for k, v in template_labels.items()):
            fully_labeled += 1
        condition = pod_ready_condition(pod)
        if condition is not None and condition.get("status") == "True":
            ready += 1
            if min_ready == 0 or is_pod_available(pod, min_ready, now):
                available += 1
    status = copy.deepcopy(owner.get("status") or {})
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        diff = len(pods) - _replicas(owner)
        reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
        conditions.append(
            {
                "type": REPLICA_FAILURE,
                "status": "True",
                "lastTransitionTime": _now_rfc3339(),
                "reason": reason,
                "message": str(manage_error),
            }
        )
    elif manage_error is None and failure is not None:
        conditions = [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    status["replicas"] = len(pods)
    for name, value in (
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ):
        if value:
            status[name] = value
        else:
            status.pop(name, None)
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    return status


_COUNTED = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")


def _status_unchanged(owner: RawObject, new: dict[str, Any]) -> bool:
    old = owner.get("status") or {}
    generation = (owner.get("metadata") or {}).get("generation") or 0
    return (
        all(int(old.get(k) or 0) == int(new.get(k) or 0) for k in _COUNTED)
        and int(old.get("observedGeneration") or 0) == generation
        and (old.get("conditions") or []) == (new.get("conditions") or [])
    )


class ReplicaSetController:
    """Keeps each ReplicaSet's (or, with :data:`REPLICATION_CONTROLLER_KIND`, each
    ReplicationController's) pods at ``spec.replicas``.

    **owners** and **pods**: informers of plain dicts (shareable with other
    controllers; add this controller before starting them). **pod_index**: an
    :class:`OwnerIndex` of ``pods`` already attached (one is made otherwise).
    **burst_replicas**: pods created or deleted per sync at most. **clock**: wall-clock
    seconds, for availability (``minReadySeconds``). **pod_update_batch_period**: see
    :data:`POD_UPDATE_BATCH_PERIOD`.
    """

    def __init__(
        self,
        client: Client,
        owners: Informer[RawObject],
        pods: Informer[RawObject],
        kind: ReplicaSetKind = REPLICA_SET_KIND,
        *,
        pod_index: OwnerIndex | None = None,
        burst_replicas: int = BURST_REPLICAS,
        workers: int = DEFAULT_WORKERS,
        pod_update_batch_period: float = POD_UPDATE_BATCH_PERIOD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.owners = owners
        self.pods = pods
        self.kind = kind
        self.burst_replicas = burst_replicas
        self.workers = workers
        self.pod_update_batch_period = pod_update_batch_period
        self.clock = clock
        if pod_index is None:
            pod_index = OwnerIndex()
            pod_index.attach(pods)
        self.pod_index = pod_index
        self.recorder = EventRecorder(client, kind.component)
        self.pod_control = PodControl(client, self.recorder)
        self.expectations = UIDTrackingControllerExpectations()
        self.written = WrittenVersions()
        self.queue: WorkQueue[str] = WorkQueue(kind.component)
        self._tasks: list[asyncio.Task[None]] = []
        owners.add_handler(self._add_owner, self._update_owner, self._delete_owner)
        self.pod_events = ChildEventHandlers(
            owners,
            kind.kind,
            self.queue,
            expectations=self.expectations,
            batch_period=pod_update_batch_period,
            selector_of=kind.selector,
            # A ReplicationController's map selector: empty matches all, as upstream.
            skip_empty=kind.kind != "ReplicationController",
        )
        pods.add_handler(self.pod_events.add, self.pod_events.update, self.pod_events.delete)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the informers' first lists, then sync until cancelled."""
        await self.owners.has_synced.wait()
        await self.pods.has_synced.wait()
        try:
            await run_workers(self.queue, self.sync, self.kind.component, self.workers)
        finally:
            await self.recorder.flush()

    # --- event handlers: turn changes into keys ---------------------------------------

    def _enqueue(self, owner: RawObject) -> None:
        self.queue.add(object_key(owner))

    def _add_owner(self, owner: RawObject) -> None:
        self._enqueue(owner)

    def _update_owner(self, old: RawObject, new: RawObject) -> None:
        if (old.get("metadata") or {}).get("uid") != (new.get("metadata") or {}).get("uid"):
            self._delete_owner(old)
        self._enqueue(new)

    def _delete_owner(self, owner: RawObject) -> None:
        key = object_key(owner)
        self.expectations.delete_expectations(key)
        self.queue.add(key)

    def _owners_in(self, namespace: str) -> list[RawObject]:
        return [
            o for o in self.owners.list() if (o.get("metadata") or {}).get("namespace") == namespace
        ]

    # --- sync -------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        """``syncReplicaSet``: converge one owner's pods and status (level-triggered)."""
        owner = self.owners.get(key)
        if owner is None:
            self.expectations.delete_expectations(key)
            self.written.forget(key)
            return
        if self.written.stale(key, owner):
            return  # our own status write is on its way to the cache
        needs_sync = self.expectations.satisfied_expectations(key)
        try:
            selector = self.kind.selector(owner)
        except ObjectError as exc:
            log.warning("%s %s: invalid selector: %s", self.kind.kind, key, exc)
            return
        meta = owner["metadata"]
        uid = str(meta.get("uid") or "")
        namespace = str(meta.get("namespace") or "")
        candidates = self.pod_index.owned_by(uid) + self.pod_index.orphans(namespace)
        active = [pod for pod in candidates if is_pod_active(pod)]
        pods = await self._claim_pods(owner, selector, active)
        manage_error: BaseException | None = None
        if needs_sync and not meta.get("deletionTimestamp"):
            try:
                await self._manage_replicas(pods, owner, key)
            except (KubeError, ObjectError) as exc:
                manage_error = exc
        status = calculate_status(owner, pods, manage_error, self.clock())
        updated = await self._update_status(owner, status)
        spec = updated.get("spec") or {}
        new_status = updated.get("status") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        replicas = _replicas(updated)
        if (
            manage_error is None
            and min_ready > 0
            and int(new_status.get("readyReplicas") or 0) == replicas
            and int(new_status.get("availableReplicas") or 0) != replicas
        ):
            self.queue.add_after(key, float(min_ready))
        if manage_error is not None:
            raise manage_error

    async def _claim_pods(
        self, owner: RawObject, selector: LabelSelector, pods: list[RawObject]
    ) -> list[RawObject]:
        meta = owner["metadata"]
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        what = f"{self.kind.kind} {namespace}/{name}"

        async def fetch() -> RawObject:
            fresh: RawObject = await self.client.get(self.kind.resource, name, namespace)
            return fresh

        manager = ControllerRefManager(
            owner,
            self.kind.api_version,
            self.kind.kind,
            selector,
            self.pod_control.patch_pod,
            recheck_deletion(fetch, str(meta.get("uid") or ""), what),
        )
        return await manager.claim(pods)

    async def _manage_replicas(self, pods: list[RawObject], owner: RawObject, key: str) -> None:
        """``manageReplicas``: create or delete pods towards ``spec.replicas``."""
        diff = len(pods) - _replicas(owner)
        namespace = str(owner["metadata"].get("namespace") or "")
        typed = {"apiVersion": self.kind.api_version, "kind": self.kind.kind, **owner}
        if diff < 0:
            count = min(-diff, self.burst_replicas)
            # Expect before creating: the watch may show a new pod before the create
            # call returns.
            self.expectations.expect_creations(key, count)
            template = (owner.get("spec") or {}).get("template") or {}
            ref = controller_ref(owner, self.kind.api_version, self.kind.kind)
            try:
                pod = self.pod_control.pod_for(template, typed, ref)
            except ObjectError:
                self.expectations.lower_expectations(key, count, 0)
                raise

            async def create() -> None:
                await self.pod_control.create_pod(namespace, pod, typed)

            created, error = await slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, create)
            # Pods never created will never be observed.
            for _ in range(count - created):
                self.expectations.creation_observed(key)
            if error is not None:
                raise error
        elif diff > 0:
            count = min(diff, self.burst_replicas)
            related = self._indirectly_related_pods(owner)
            victims = rank_pods_to_delete(pods, related, count, self.clock())
            self.expectations.expect_pod_deletions(key, [pod_key(p) for p in victims])

            async def delete(pod: Mapping[str, Any]) -> None:
                pmeta = pod["metadata"]
                try:
                    await self.pod_control.delete_pod(
                        namespace, pmeta["name"], typed, uid=str(pmeta.get("uid") or "")
                    )
                except KubeError as exc:
                    # Never to be observed: lower the expectation.
                    self.expectations.pod_deletion_observed(key, pod_key(pod))
                    if not isinstance(exc, NotFound | Conflict):
                        raise

            results = await asyncio.gather(*(delete(p) for p in victims), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    raise result

    def _indirectly_related_pods(self, owner: RawObject) -> list[RawObject]:
        """``getIndirectlyRelatedPods``: the pods of every owner with the same
        controller (a Deployment's ReplicaSets); just this owner's when it has none."""
        meta = owner.get("metadata") or {}
        parent = controller_of(owner)
        siblings = [owner]
        if parent is not None:
            siblings = []
            for other in self._owners_in(meta.get("namespace") or ""):
                ref = controller_of(other)
                if ref is not None and ref.get("uid") == parent.get("uid"):
                    siblings.append(other)
        seen: set[str] = set()
        related: list[RawObject] = []
        for sibling in siblings:
            try:
                selector = self.kind.selector(sibling)
            except ObjectError:
                continue
            smeta = sibling.get("metadata") or {}
            candidates = self.pod_index.owned_by(str(smeta.get("uid") or ""))
            candidates += self.pod_index.orphans(smeta.get("namespace") or "")
            for pod in candidates:
                uid = (pod.get("metadata") or {}).get("uid") or ""
                if uid in seen:
                    continue
                if selector.matches((pod.get("metadata") or {}).get("labels") or {}):
                    seen.add(uid)
                    related.append(pod)
        return related

    async def _update_status(self, owner: RawObject, status: dict[str, Any]) -> RawObject:
        """``updateReplicaSetStatus``: write ``status`` if it changed (one retry on a
        conflict, with a fresh read); returns the owner as the server has it."""
        if _status_unchanged(owner, status):
            return owner

        def new_status(body: RawObject) -> RawObject:
            generation = (body.get("metadata") or {}).get("generation") or 0
            return {**status, "observedGeneration": generation}

        updated = await update_status(
            self.client, self.kind.resource, owner, new_status, self.written
        )
        assert updated is not None  # new_status always has something to write
        return updated


#: The controllers' names (kube-controller-manager's ``names.go``).
NAME = "replicaset-controller"
RC_NAME = "replicationcontroller-controller"


def start_replicaset_controller(ctx: ControllerContext) -> ReplicaSetController:
    """The ReplicaSet controller's init function for the controller manager."""
    pods = ctx.informers.informer(PODS)
    return ReplicaSetController(
        ctx.client(NAME),
        ctx.informers.informer(REPLICA_SETS),
        pods,
        REPLICA_SET_KIND,
        pod_index=shared_index(pods),
    )


def start_replication_controller(ctx: ControllerContext) -> ReplicaSetController:
    """The ReplicationController controller's init function for the controller manager."""
    pods = ctx.informers.informer(PODS)
    return ReplicaSetController(
        ctx.client(RC_NAME),
        ctx.informers.informer(REPLICATION_CONTROLLERS),
        pods,
        REPLICATION_CONTROLLER_KIND,
        pod_index=shared_index(pods),
    )
