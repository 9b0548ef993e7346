"""The StatefulSet controller (``statefulset-controller``), after upstream's
``pkg/controller/statefulset`` (``stateful_set.go``, ``stateful_set_control.go``,
``stateful_pod_control.go``, ``stateful_set_utils.go``,
``stateful_set_status_updater.go``).

A worker syncs one set at a time: it claims the set's pods (adopting orphans named
``<set>-<ordinal>`` that its selector matches), works out the current and update
ControllerRevisions (creating the update revision when the template changed), then

- makes the pod of every missing ordinal (its PersistentVolumeClaims first), replaces
  failed or succeeded ones, and with ``OrderedReady`` stops at the first pod that is not
  yet Running and Ready (``Parallel`` makes them all at once);
- deletes the pods of ordinals beyond ``replicas``, highest first (one at a time, after
  every other pod is healthy, with ``OrderedReady``);
- with ``RollingUpdate``, deletes the highest-ordinal pod at or above ``partition`` that
  is not of the update revision, once the others are healthy (it comes back at the update
  revision); ``OnDelete`` leaves that to the user;
- writes ``status`` and deletes revisions beyond ``revisionHistoryLimit`` that no pod uses.

Each ``volumeClaimTemplates`` entry becomes a PersistentVolumeClaim of the pod
(:func:`kubesched.objects.statefulset.claims`, which the policy lab uses too), made
before the pod, whose volume of that name claims it (the PV controller and a provisioner
bind it; the kubelet starts the pod once it is bound). A claim that cannot be made (a
server that does not serve claims included) stops the pod's creation with a
``FailedCreate`` event, as upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from kubesched.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion
from kubesched.controllers.controller_utils import (
    ChildEventHandlers,
    WrittenVersions,
    run_workers,
    update_status,
)
from kubesched.controllers.history import (
    LocalRevisions,
    RevisionHistory,
    RevisionStore,
    equal_revision,
    new_revision,
    next_revision,
    served_history,
    sort_revisions,
)
from kubesched.controllers.manager import ControllerContext
from kubesched.controllers.ownerindex import OwnerIndex, object_key
from kubesched.controllers.volume.resources import PERSISTENT_VOLUME_CLAIMS
from kubesched.kube import AlreadyExists, Client, Informer, KubeError, NotFound
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS, STATEFUL_SETS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.activepods import is_pod_available, is_pod_ready
from kubesched.objects.deployment import compute_hash
from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import controller_of, controller_ref
from kubesched.objects.selectors import LabelSelector
from kubesched.objects.statefulset import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    claims,
    pod_name,
    retention_policy,
    stateful_pod,
)

__all__ = [
    "NAME",
    "StatefulSetController",
    "start",
]

log = logging.getLogger(__name__)

NAME = "statefulset-controller"
API_VERSION = "apps/v1"
KIND = "StatefulSet"
#: ``--concurrent-statefulset-syncs`` default.
DEFAULT_WORKERS = 5
#: Seconds a set waits for a status change of one of its pods, so that a pod's several
#: updates (scheduled, Running, Ready) make one sync. Deviation: upstream syncs on each.
POD_UPDATE_BATCH_PERIOD = 0.05

STATEFUL_SETS_RAW = STATEFUL_SETS.raw
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


# --- stateful_set_utils.go ------------------------------------------------------------


def _parent_and_ordinal(pod: RawObject) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: (set name, ordinal) from ``<set>-<ordinal>``, or
    ("", -1)."""
    match = _ORDINAL.match(str((pod.get("metadata") or {}).get("name") or ""))
    if match is None:
        return "", -1
    return match.group(1), int(match.group(2))


def _replicas(sts: RawObject) -> int:
    value = (sts.get("spec") or {}).get("replicas")
    return value if isinstance(value, int) else 1


def _start_ordinal(sts: RawObject) -> int:
    start = ((sts.get("spec") or {}).get("ordinals") or {}).get("start")
    return start if isinstance(start, int) else 0


def _strategy(sts: RawObject) -> dict[str, Any]:
    return (sts.get("spec") or {}).get("updateStrategy") or {"type": "RollingUpdate"}


def _partition(sts: RawObject) -> int | None:
    """The RollingUpdate partition, None when ``rollingUpdate`` is not given."""
    rolling = _strategy(sts).get("rollingUpdate")
    if not isinstance(rolling, dict):
        return None
    value = rolling.get("partition")
    return value if isinstance(value, int) else 0


def _is_parallel(sts: RawObject) -> bool:
    """``allowsBurst``."""
    return (sts.get("spec") or {}).get("podManagementPolicy") == "Parallel"


def _phase(pod: RawObject) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _is_created(pod: RawObject) -> bool:
    return _phase(pod) != ""


def _is_terminating(pod: RawObject) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _is_finished(pod: RawObject) -> bool:
    return _phase(pod) in ("Failed", "Succeeded")


def _running_and_ready(pod: RawObject) -> bool:
    return _phase(pod) == "Running" and is_pod_ready(pod)


def _running_and_available(pod: RawObject, min_ready: int, now: float) -> bool:
    return _phase(pod) == "Running" and is_pod_available(pod, min_ready, now)


def _is_healthy(pod: RawObject) -> bool:
    return _running_and_ready(pod) and _is_created(pod) and not _is_terminating(pod)


def _revision_of(pod: RawObject) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL) or "")


def revision_patch(sts: RawObject) -> dict[str, Any]:
    """``getPatch``: the strategic merge patch that restores the set's template (the
    ``data`` of its ControllerRevision, which ``kubectl rollout undo`` sends back)."""
    template = copy.deepcopy((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def apply_revision(sts: RawObject, revision: RawObject) -> RawObject:
    """``ApplyRevision``: the set with the template its ``revision`` holds."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template"))
    if not isinstance(template, dict):
        return sts
    template.pop("$patch", None)
    return {**sts, "spec": {**(sts.get("spec") or {}), "template": template}}


def _identity_labels(sts: RawObject, ordinal: int) -> dict[str, str]:
    name = pod_name(sts, ordinal)
    return {POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}


# --- the controller -------------------------------------------------------------------


class StatefulSetController:
    """Keeps each StatefulSet's ordinal pods, revisions and status.

    **sets** and **pods**: informers of plain dicts. **revisions**: where the sets'
    ControllerRevisions live; by default, asked of the server's discovery when the
    controller runs: on the server (:class:`ServedRevisions`, with an informer of its own)
    if it serves them, else in memory.
    **clock**: wall-clock seconds, for ``minReadySeconds``.
    """

    def __init__(
        self,
        client: Client,
        sets: Informer[RawObject],
        pods: Informer[RawObject],
        *,
        revisions: RevisionStore | None = None,
        pod_index: OwnerIndex | None = None,
        workers: int = DEFAULT_WORKERS,
        pod_update_batch_period: float = POD_UPDATE_BATCH_PERIOD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.sets = sets
        self.pods = pods
        self.history = RevisionHistory(revisions if revisions is not None else LocalRevisions())
        self._discover = revisions is None
        self.workers = workers
        self.pod_update_batch_period = pod_update_batch_period
        self.clock = clock
        if pod_index is None:
            pod_index = OwnerIndex()
            pod_index.attach(pods)
        self.pod_index = pod_index
        self.recorder = EventRecorder(client, NAME)
        self.written = WrittenVersions()
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        sets.add_handler(self._add_set, self._update_set, self._delete_set)
        # A terminating member keeps its name until it is gone: its set waits for it.
        self.pod_events = ChildEventHandlers(
            sets, KIND, self.queue, batch_period=pod_update_batch_period, deleting_is_deleted=False
        )
        pods.add_handler(self.pod_events.add, self.pod_events.update, self.pod_events.delete)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the informers' first lists, then sync until cancelled."""
        await self.sets.has_synced.wait()
        await self.pods.has_synced.wait()
        own_informer = await self._discover_served()
        try:
            await run_workers(self.queue, self.sync, NAME, self.workers)
        finally:
            if own_informer is not None:
                await own_informer.stop()
            await self.recorder.flush()

    async def _discover_served(self) -> Informer[RawObject] | None:
        """Ask discovery what the server serves (see the class docstring); returns the
        revisions informer started here, if any."""
        if not self._discover:
            return None
        found = await served_history(self.client, NAME)
        if found is None:
            return None
        self.history, informer = found
        return informer

    # --- event handlers ---------------------------------------------------------------

    def _add_set(self, sts: RawObject) -> None:
        self.queue.add(object_key(sts))

    def _update_set(self, old: RawObject, new: RawObject) -> None:
        self.queue.add(object_key(new))

    def _delete_set(self, sts: RawObject) -> None:
        self.queue.add(object_key(sts))

    # --- sync -------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        """``sync``: converge one set's pods, revisions and status (level-triggered)."""
        sts = self.sets.get(key)
        if sts is None:
            self.written.forget(key)
            return
        if self.written.stale(key, sts):
            return  # our own status write is on its way to the cache
        try:
            selector = LabelSelector.from_dict((sts.get("spec") or {}).get("selector") or {})
        except ObjectError as exc:
            self.recorder.event(sts, "Warning", "InvalidSelector", f"Error parsing selector: {exc}")
            return
        pods = await self._claim_pods(sts, selector)
        revisions = await self._claim_revisions(sts, selector)
        await self._update_stateful_set(key, sts, pods, revisions)

    async def _claim_pods(self, sts: RawObject, selector: LabelSelector) -> list[RawObject]:
        """``getPodsForStatefulSet``: the pods the set owns or adopts, named as its
        members."""
        meta = sts["metadata"]
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        uid = str(meta.get("uid") or "")

        async def fetch() -> RawObject:
            fresh: RawObject = await self.client.get(STATEFUL_SETS_RAW, name, namespace)
            return fresh

        async def patch(ns: str, pod: str, body: object) -> RawObject:
            patched: RawObject = await self.client.patch(
                PODS.raw, pod, body, ns, patch_type="strategic"
            )
            return patched

        manager = ControllerRefManager(
            sts,
            API_VERSION,
            KIND,
            selector,
            patch,
            recheck_deletion(fetch, uid, f"{KIND} {namespace}/{name}"),
        )
        candidates = self.pod_index.owned_by(uid) + self.pod_index.orphans(namespace)
        return await manager.claim(candidates, lambda pod: _parent_and_ordinal(pod)[0] == name)

    async def _claim_revisions(self, sts: RawObject, selector: LabelSelector) -> list[RawObject]:
        """``ListRevisions`` + ``adoptOrphanRevisions``: the set's revisions, orphans its
        selector matches adopted."""
        meta = sts["metadata"]
        namespace = str(meta.get("namespace") or "")
        uid = str(meta.get("uid") or "")
        orphans = [
            r
            for r in self.history.store.list(namespace)
            if controller_of(r) is None
            and selector.matches((r.get("metadata") or {}).get("labels") or {})
        ]
        if orphans and not meta.get("deletionTimestamp"):
            ref = controller_ref(sts, API_VERSION, KIND)
            for orphan in orphans:
                ometa = orphan["metadata"]
                body = {"metadata": {"ownerReferences": [ref], "uid": ometa.get("uid")}}
                try:
                    await self.history.store.patch(namespace, ometa["name"], body)
                except NotFound:
                    continue
        owned = self.history.owned_by(namespace, uid)
        names = {r["metadata"]["name"] for r in owned}
        # An adoption the informer has not shown yet: count the orphan as ours.
        return sort_revisions(owned + [r for r in orphans if r["metadata"]["name"] not in names])

    async def _revisions(
        self, sts: RawObject, revisions: list[RawObject]
    ) -> tuple[RawObject, RawObject, int]:
        """``getStatefulSetRevisions``: (current, update, collisionCount)."""
        collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
        meta = sts.get("metadata") or {}
        labels = ((sts.get("spec") or {}).get("template") or {}).get("metadata") or {}
        annotations = meta.get("annotations") or {}
        data = revision_patch(sts)
        ref = controller_ref(sts, API_VERSION, KIND)
        template = (sts.get("spec") or {}).get("template") or {}
        number = next_revision(revisions)
        while True:
            candidate = new_revision(
                sts,
                ref,
                labels.get("labels") or {},
                data,
                number,
                compute_hash(template, collisions or None),
                annotations,
            )
            equal = [r for r in revisions if equal_revision(r, candidate)]
            if equal and equal[-1] is revisions[-1]:
                update = revisions[-1]
                break
            if equal:
                update = await self.history.store.update_revision(equal[-1], number)
                break
            created, collided = await self.history.create(candidate, collisions)
            if not collided:
                update = created
                revisions.append(created)
                break
            collisions += 1
        current_name = (sts.get("status") or {}).get("currentRevision")
        current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
        return current, update, collisions

    async def _update_stateful_set(
        self, key: str, sts: RawObject, pods: list[RawObject], revisions: list[RawObject]
    ) -> None:
        """``UpdateStatefulSet`` / ``updateStatefulSet``."""
        current_rev, update_rev, collisions = await self._revisions(sts, revisions)
        current_name = current_rev["metadata"]["name"]
        update_name = update_rev["metadata"]["name"]
        current_set = apply_revision(sts, current_rev)
        update_set = apply_revision(sts, update_rev)
        now = self.clock()
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        status: dict[str, Any] = {
            "replicas": 0,
            "readyReplicas": 0,
            "currentReplicas": 0,
            "updatedReplicas": 0,
            "availableReplicas": 0,
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": collisions,
        }
        start = _start_ordinal(sts)
        count = _replicas(sts)
        replicas: list[RawObject | None] = [None] * count
        condemned: list[RawObject] = []
        for pod in pods:
            status["replicas"] += 1
            if _running_and_ready(pod):
                status["readyReplicas"] += 1
                if _running_and_available(pod, min_ready, now):
                    status["availableReplicas"] += 1
            if _is_created(pod) and not _is_terminating(pod):
                revision = _revision_of(pod)
                if revision == current_name:
                    status["currentReplicas"] += 1
                if revision == update_name:
                    status["updatedReplicas"] += 1
            _, ordinal = _parent_and_ordinal(pod)
            if start <= ordinal < start + count:
                replicas[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        condemned.sort(key=lambda p: _parent_and_ordinal(p)[1], reverse=True)

        def versioned(ordinal: int) -> RawObject:
            return self._versioned_pod(current_set, update_set, current_name, update_name, ordinal)

        slots: list[RawObject] = [
            pod if pod is not None else versioned(start + i) for i, pod in enumerate(replicas)
        ]
        first_unhealthy = next((p for p in [*slots, *condemned] if not _is_healthy(p)), None)
        try:
            if not (sts.get("metadata") or {}).get("deletionTimestamp"):
                await self._converge(
                    sts,
                    slots,
                    condemned,
                    first_unhealthy,
                    status,
                    current_name,
                    update_name,
                    start,
                    min_ready,
                    now,
                    versioned,
                )
        finally:
            await self._write_status(key, sts, status, min_ready)
        await self._truncate_history(sts, pods, revisions, current_name, update_name)

    def _versioned_pod(
        self,
        current_set: RawObject,
        update_set: RawObject,
        current_name: str,
        update_name: str,
        ordinal: int,
    ) -> RawObject:
        """``newVersionedStatefulSetPod``: ordinals below the partition (or, for a
        RollingUpdate without ``rollingUpdate``, below the current replicas) are made at
        the current revision, the rest at the update revision."""
        start = _start_ordinal(current_set)
        partition = _partition(current_set)
        current_replicas = int((current_set.get("status") or {}).get("currentReplicas") or 0)
        rolling = _strategy(current_set).get("type", "RollingUpdate") == "RollingUpdate"
        if (rolling and partition is None and ordinal < start + current_replicas) or (
            partition is not None and ordinal < start + partition
        ):
            return stateful_pod(current_set, ordinal, current_name)
        return stateful_pod(update_set, ordinal, update_name)

    async def _converge(
        self,
        sts: RawObject,
        slots: list[RawObject],
        condemned: list[RawObject],
        first_unhealthy: RawObject | None,
        status: dict[str, Any],
        current_name: str,
        update_name: str,
        start: int,
        min_ready: int,
        now: float,
        versioned: Callable[[int], RawObject],
    ) -> None:
        monotonic = not _is_parallel(sts)
        key = object_key(sts)

        def count(pod: RawObject, step: int) -> None:
            revision = _revision_of(pod)
            if revision == current_name:
                status["currentReplicas"] += step
            if revision == update_name:
                status["updatedReplicas"] += step

        async def process_replica(i: int) -> bool:
            """``processReplica``: True when an OrderedReady set must stop here."""
            pod = slots[i]
            if _is_finished(pod) and _is_created(pod):
                # A failed or succeeded pod is deleted and made again.
                if not _is_terminating(pod):
                    await self._delete_stateful_pod(sts, pod)
                status["replicas"] -= 1
                count(pod, -1)
                pod = slots[i] = versioned(start + i)
            if not _is_created(pod):
                await self._create_pod(sts, pod)
                status["replicas"] += 1
                count(pod, 1)
                return monotonic
            if _is_terminating(pod):
                return monotonic
            if not _running_and_ready(pod):
                return monotonic
            if not _running_and_available(pod, min_ready, now):
                if monotonic:
                    self.queue.add_after(key, float(min_ready))
                return monotonic
            await self._update_identity(sts, pod, start + i)
            return False

        if monotonic:
            for i in range(len(slots)):
                if await process_replica(i):
                    return
        else:
            results = await asyncio.gather(
                *(process_replica(i) for i in range(len(slots))), return_exceptions=True
            )
            for result in results:
                if isinstance(result, BaseException):
                    raise result

        async def process_condemned(pod: RawObject) -> bool:
            """``processCondemned``: True when an OrderedReady set must stop here."""
            if _is_terminating(pod):
                return monotonic
            if monotonic and pod is not first_unhealthy and not _running_and_ready(pod):
                return True
            if (
                monotonic
                and pod is not first_unhealthy
                and not _running_and_available(pod, min_ready, now)
            ):
                self.queue.add_after(key, float(min_ready))
                return True
            await self._condemn_claims(sts, pod)
            await self._delete_stateful_pod(sts, pod)
            count(pod, -1)
            return monotonic

        if monotonic:
            for pod in condemned:
                if await process_condemned(pod):
                    return
        else:
            results = await asyncio.gather(
                *(process_condemned(p) for p in condemned), return_exceptions=True
            )
            for result in results:
                if isinstance(result, BaseException):
                    raise result

        strategy = _strategy(sts)
        if strategy.get("type") == "OnDelete":
            return
        # RollingUpdate: the highest ordinal at or above the partition that is not of the
        # update revision goes first; an unhealthy pod on the way makes us wait.
        floor = _partition(sts) or 0
        for target in range(len(slots) - 1, floor - 1, -1):
            pod = slots[target]
            if _revision_of(pod) != update_name and not _is_terminating(pod):
                log.info(
                    "%s: terminating %s for update", NAME, (pod.get("metadata") or {}).get("name")
                )
                await self._delete_stateful_pod(sts, pod)
                if _revision_of(pod) == current_name:
                    status["currentReplicas"] -= 1
                return
            if not _is_healthy(pod):
                return

    # --- pod and claim control (stateful_pod_control.go) ------------------------------

    def _event(self, sts: RawObject, verb: str, what: str, error: Exception | None) -> None:
        name = (sts.get("metadata") or {}).get("name")
        if error is None:
            reason = f"Successful{verb.capitalize()}"
            self.recorder.event(
                sts, "Normal", reason, f"{verb} {what} in StatefulSet {name} successful"
            )
        else:
            reason = f"Failed{verb.capitalize()}"
            self.recorder.event(
                sts, "Warning", reason, f"{verb} {what} in StatefulSet {name} failed error: {error}"
            )

    async def _create_pod(self, sts: RawObject, pod: RawObject) -> None:
        """``CreateStatefulPod``: the pod's claims, then the pod."""
        name = pod["metadata"]["name"]
        _, ordinal = _parent_and_ordinal(pod)
        await self._create_claims(sts, ordinal)
        namespace = (sts.get("metadata") or {}).get("namespace") or "default"
        try:
            await self.client.create(PODS.raw, pod, namespace)
        except AlreadyExists:
            raise  # our cache is behind: the pod is there; sync again when it shows
        except KubeError as exc:
            self._event(sts, "create", f"Pod {name}", exc)
            raise
        self._event(sts, "create", f"Pod {name}", None)

    async def _delete_stateful_pod(self, sts: RawObject, pod: RawObject) -> None:
        """``DeleteStatefulPod``."""
        meta = pod["metadata"]
        namespace = (sts.get("metadata") or {}).get("namespace") or "default"
        try:
            await self.client.delete(PODS.raw, meta["name"], namespace, uid=meta.get("uid") or "")
        except NotFound:
            return
        except KubeError as exc:
            self._event(sts, "delete", f"Pod {meta['name']}", exc)
            raise
        self._event(sts, "delete", f"Pod {meta['name']}", None)

    async def _update_identity(self, sts: RawObject, pod: RawObject, ordinal: int) -> None:
        """``UpdateStatefulPod`` for identity: the pod-name and pod-index labels come
        back if someone removed them."""
        labels = (pod.get("metadata") or {}).get("labels") or {}
        wanted = _identity_labels(sts, ordinal)
        missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
        if not missing:
            return
        meta = pod["metadata"]
        try:
            await self.client.patch(
                PODS.raw, meta["name"], {"metadata": {"labels": missing}}, meta.get("namespace")
            )
        except NotFound:
            return
        self._event(sts, "update", f"Pod {meta['name']}", None)

    async def _create_claims(self, sts: RawObject, ordinal: int) -> None:
        """``createPersistentVolumeClaims``: each missing claim of ``ordinal``."""
        for claim in claims(sts, ordinal):
            cmeta = claim["metadata"]
            try:
                await self.client.get(PERSISTENT_VOLUME_CLAIMS, cmeta["name"], cmeta["namespace"])
                continue
            except NotFound:
                pass
            what = f"Claim {cmeta['name']} Pod {pod_name(sts, ordinal)}"
            try:
                await self.client.create(PERSISTENT_VOLUME_CLAIMS, claim, cmeta["namespace"])
            except AlreadyExists:
                continue
            except KubeError as exc:
                self._event(sts, "create", what, exc)
                raise
            self._event(sts, "create", what, None)

    async def _condemn_claims(self, sts: RawObject, pod: RawObject) -> None:
        """With ``whenScaled: Delete``, a scaled-down pod's claims become owned by the
        pod, so the garbage collector deletes them after it
        (``updateClaimOwnerRefForSetAndPod``)."""
        _, when_scaled = retention_policy(sts)
        if when_scaled != "Delete":
            return
        _, ordinal = _parent_and_ordinal(pod)
        ref = controller_ref(pod, "v1", "Pod")
        set_uid = (sts.get("metadata") or {}).get("uid")
        for claim in claims(sts, ordinal):
            cmeta = claim["metadata"]
            try:
                live = await self.client.get(
                    PERSISTENT_VOLUME_CLAIMS, cmeta["name"], cmeta["namespace"]
                )
            except NotFound:
                continue
            refs = (live.get("metadata") or {}).get("ownerReferences") or []
            # The set's and the pod's references go; the pod's comes back as the
            # claim's controller (another controller's claim is left alone).
            if any(
                r.get("controller") is True and r.get("uid") not in (set_uid, ref["uid"])
                for r in refs
            ):
                continue
            kept = [r for r in refs if r.get("uid") not in (set_uid, ref["uid"])]
            wanted = [*kept, ref]
            if wanted == refs:
                continue
            body = {"metadata": {"ownerReferences": wanted}}
            await self.client.patch(
                PERSISTENT_VOLUME_CLAIMS, cmeta["name"], body, cmeta["namespace"]
            )

    # --- status and history -----------------------------------------------------------

    async def _write_status(
        self, key: str, sts: RawObject, status: dict[str, Any], min_ready: int
    ) -> None:
        """``updateStatefulSetStatus``: complete a finished rolling update, then write
        the status if it changed (one retry on a conflict)."""
        if (
            _strategy(sts).get("type", "RollingUpdate") == "RollingUpdate"
            and status["updatedReplicas"] == status["replicas"]
            and status["readyReplicas"] == status["replicas"]
        ):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        if min_ready > 0 and status["availableReplicas"] != status["readyReplicas"]:
            self.queue.add_after(key, float(min_ready))

        def new_status(body: RawObject) -> RawObject | None:
            generation = (body.get("metadata") or {}).get("generation") or 0
            old = body.get("status") or {}
            new = {**old, **status, "observedGeneration": generation}
            if not new["collisionCount"]:
                new.pop("collisionCount")
            return None if new == old else new

        with contextlib.suppress(NotFound):
            await update_status(self.client, STATEFUL_SETS_RAW, sts, new_status, self.written)

    async def _truncate_history(
        self,
        sts: RawObject,
        pods: list[RawObject],
        revisions: list[RawObject],
        current_name: str,
        update_name: str,
    ) -> None:
        """``truncateHistory``: delete the oldest revisions no pod uses beyond
        ``revisionHistoryLimit``."""
        live = {current_name, update_name, *(_revision_of(p) for p in pods)}
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
        limit = limit if isinstance(limit, int) else 10
        for revision in history[: max(len(history) - limit, 0)]:
            await self.history.store.delete(revision)


def start(ctx: ControllerContext) -> StatefulSetController:
    """The StatefulSet controller's init function for the controller manager."""
    return StatefulSetController(
        ctx.client(NAME),
        ctx.informers.informer(STATEFUL_SETS),
        ctx.informers.informer(PODS),
    )
