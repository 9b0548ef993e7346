"""What the workload controllers share, after upstream's ``pkg/controller/controller_utils.go``.

* :class:`ControllerExpectations`: what a controller is still waiting to see after it
  created or deleted pods. Until its informer has shown them (or five minutes passed),
  ``sync`` creates and deletes nothing more, so a slow watch never makes it create twice.
* :class:`UIDTrackingControllerExpectations`: deletions expected by pod key, so that the
  ``deletionTimestamp`` update and the final delete of one pod count once.
* :func:`process_queue` and :func:`run_workers`: a controller's workers.
* :func:`slow_start_batch`: calls in batches of 1, 2, 4, ..., stopping after a batch with
  a failure (a quota error costs one doomed request, not 500).
* :class:`PodControl`: creating pods from a template and deleting them, with upstream's
  events (``SuccessfulCreate``, ``FailedCreate``, ``SuccessfulDelete``, ``FailedDelete``).
* :func:`update_status`: a status write with upstream's one retry after a conflict.
* :func:`resolve_controller_ref` and :func:`owners_selecting`: what the informer handlers
  of every workload controller ask of its owners' cache; :class:`ChildEventHandlers`: the
  pod handlers of the ReplicaSet, DaemonSet and StatefulSet controllers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kubesched.controllers.ownerindex import object_key
from kubesched.kube import Client, Conflict, Informer, KubeError, NotFound, Resource, Timeout
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.activepods import is_pod_ready
from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import controller_of, pod_from_template
from kubesched.objects.selectors import LabelSelector

__all__ = [
    "BURST_REPLICAS",
    "EXPECTATIONS_TIMEOUT",
    "FAILED_CREATE_POD_REASON",
    "FAILED_DELETE_POD_REASON",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "SUCCESSFUL_CREATE_POD_REASON",
    "SUCCESSFUL_DELETE_POD_REASON",
    "ChildEventHandlers",
    "ControllerExpectations",
    "PodControl",
    "UIDTrackingControllerExpectations",
    "WrittenVersions",
    "owners_selecting",
    "pod_key",
    "process_queue",
    "resolve_controller_ref",
    "run_workers",
    "slow_start_batch",
    "update_status",
]

log = logging.getLogger(__name__)

K = TypeVar("K")


async def process_queue(
    queue: WorkQueue[K],
    sync: Callable[[K], Awaitable[object]],
    component: str,
    expected: tuple[type[Exception], ...] = (KubeError, ObjectError),
) -> None:
    """One worker of ``queue``, as client-go's ``processNextWorkItem`` loop: sync each key
    it hands out; on success forget the key's backoff, on failure add it back rate
    limited. A failure of the ``expected`` kinds (the server refused, an object that does
    not decode) is logged in a line, anything else (a bug) with its traceback. Returns
    once the queue is shut down."""
    while (key := await queue.get()) is not None:
        try:
            await sync(key)
            queue.forget(key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is retried with backoff
            if isinstance(exc, expected):
                log.info("%s: sync %s failed: %s", component, key, exc)
            else:
                log.exception("%s: sync %s failed", component, key)
            queue.add_rate_limited(key)
        finally:
            queue.done(key)


async def run_workers(
    queue: WorkQueue[K],
    sync: Callable[[K], Awaitable[object]],
    component: str,
    count: int,
    expected: tuple[type[Exception], ...] = (KubeError, ObjectError),
) -> None:
    """Run ``count`` :func:`process_queue` workers of ``queue`` until cancelled (a
    controller's ``Run``: ``go wait.UntilWithContext(ctx, worker, time.Second)`` per
    worker); on the way out shut the queue down and wait for every worker to stop."""
    workers = [
        asyncio.create_task(
            process_queue(queue, sync, component, expected), name=f"{component} worker {i}"
        )
        for i in range(count)
    ]
    try:
        await asyncio.gather(*workers)
    finally:
        queue.shut_down()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


#: ``ExpectationsTimeout``: expectations older than this are ignored (a lost watch event
#: must not stall a controller forever).
EXPECTATIONS_TIMEOUT = 300.0
#: ``SlowStartInitialBatchSize``.
SLOW_START_INITIAL_BATCH_SIZE = 1
#: ``BurstReplicas``: pods a ReplicaSet creates or deletes in one sync at most.
BURST_REPLICAS = 500

SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreate"
FAILED_CREATE_POD_REASON = "FailedCreate"
SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDelete"
FAILED_DELETE_POD_REASON = "FailedDelete"

Clock = Callable[[], float]


def pod_key(pod: Mapping[str, Any]) -> str:
    """``PodKey``: ``namespace/name``."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


@dataclass
class _Expectation:
    add: int
    delete: int
    stamp: float

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Creations and deletions each controller key still expects to observe.

    **clock**: monotonic seconds (injectable for tests); **timeout**: after it, unmet
    expectations no longer hold a sync back.
    """

    def __init__(self, clock: Clock = time.monotonic, timeout: float = EXPECTATIONS_TIMEOUT):
        self._clock = clock
        self.timeout = timeout
        self._records: dict[str, _Expectation] = {}

    def get(self, key: str) -> tuple[int, int] | None:
        """(creations, deletions) still expected for ``key``, if it has a record."""
        record = self._records.get(key)
        return None if record is None else (record.add, record.delete)

    def satisfied_expectations(self, key: str) -> bool:
        """``SatisfiedExpectations``: whether ``key`` may create or delete: no record
        (a new controller, or one never told to expect), all observed, or expired."""
        record = self._records.get(key)
        if record is None:
            return True
        if record.fulfilled():
            return True
        return self._clock() - record.stamp > self.timeout

    def set_expectations(self, key: str, add: int, delete: int) -> None:
        """Expect ``add`` creations and ``delete`` deletions (replacing any record)."""
        self._records[key] = _Expectation(add, delete, self._clock())

    def expect_creations(self, key: str, adds: int) -> None:
        """``ExpectCreations``."""
        self.set_expectations(key, adds, 0)

    def expect_deletions(self, key: str, dels: int) -> None:
        """``ExpectDeletions``."""
        self.set_expectations(key, 0, dels)

    def raise_expectations(self, key: str, add: int, delete: int) -> None:
        """``RaiseExpectations``: add to an existing record (nothing without one)."""
        record = self._records.get(key)
        if record is not None:
            record.add += add
            record.delete += delete

    def lower_expectations(self, key: str, add: int, delete: int) -> None:
        """``LowerExpectations``: observed (or never to be observed) changes."""
        record = self._records.get(key)
        if record is not None:
            record.add -= add
            record.delete -= delete

    def creation_observed(self, key: str) -> None:
        """``CreationObserved``: one expected pod was seen, or its create failed."""
        self.lower_expectations(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        """``DeletionObserved``."""
        self.lower_expectations(key, 0, 1)

    def delete_expectations(self, key: str) -> None:
        """``DeleteExpectations``: the controller is gone."""
        self._records.pop(key, None)


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Deletions expected by pod key: a pod's deletion counts once, whether seen as
    its ``deletionTimestamp`` or as its removal (``UIDTrackingControllerExpectations``)."""

    def __init__(self, clock: Clock = time.monotonic, timeout: float = EXPECTATIONS_TIMEOUT):
        super().__init__(clock, timeout)
        self._pods: dict[str, set[str]] = {}

    def expect_pod_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        """``ExpectDeletions(key, podKeys)``."""
        keys = set(pod_keys)
        self._pods[key] = keys
        self.expect_deletions(key, len(keys))

    def pod_deletion_observed(self, key: str, pod: str) -> None:
        """``DeletionObserved(key, podKey)``: counts only a pod we expected, once."""
        keys = self._pods.get(key)
        if keys is not None and pod in keys:
            keys.discard(pod)
            self.deletion_observed(key)

    def delete_expectations(self, key: str) -> None:
        super().delete_expectations(key)
        self._pods.pop(key, None)


class WrittenVersions:
    """The resourceVersion each controller key last wrote, to tell a cache that has not
    yet seen our own write: syncing from it would only earn a 409 Conflict, and the
    informer's event for the write enqueues the key again anyway. resourceVersions are
    opaque; they are compared only when both are integers (as every known server's are).
    """

    def __init__(self) -> None:
        self._versions: dict[str, int] = {}

    def record(self, key: str, obj: Mapping[str, Any]) -> None:
        """``obj`` is what the server answered to our write of ``key``."""
        text = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if text.isdigit():
            self._versions[key] = int(text)

    def stale(self, key: str, cached: Mapping[str, Any]) -> bool:
        """Whether ``cached`` is older than our last write of ``key``."""
        written = self._versions.get(key)
        text = str((cached.get("metadata") or {}).get("resourceVersion") or "")
        if written is None or not text.isdigit():
            return False
        if int(text) >= written:
            del self._versions[key]
            return False
        return True

    def forget(self, key: str) -> None:
        self._versions.pop(key, None)


async def update_status(
    client: Client,
    resource: Resource[Any],
    obj: RawObject,
    new_status: Callable[[RawObject], RawObject | None],
    written: WrittenVersions | None = None,
) -> RawObject | None:
    """Write ``new_status(obj)`` through ``/status`` with ``obj``'s resourceVersion, as
    the ReplicaSet, DaemonSet and StatefulSet controllers write theirs: after a 409
    Conflict, read the object again and write ``new_status`` of the fresh copy, once
    (``statusUpdateRetries``); a second conflict is raised, and so is NotFound.

    ``new_status`` answers None when the status would not change: nothing is written.
    Returns the object as the server answered (recorded in ``written`` under its key),
    or None when nothing was written.
    """
    meta = obj.get("metadata") or {}
    body = obj
    for attempt in range(2):
        status = new_status(body)
        if status is None:
            return None
        # List items carry no kind; the server wants one in a PUT body.
        payload = {"apiVersion": resource.group_version, "kind": resource.kind, **body}
        payload["status"] = status
        try:
            updated: RawObject = await client.update(resource, payload, subresource="status")
        except Conflict:
            if attempt:
                raise
            body = await client.get(resource, str(meta.get("name", "")), meta.get("namespace"))
            continue
        if written is not None:
            written.record(object_key(obj), updated)
        return updated
    raise AssertionError("unreachable")


def resolve_controller_ref(
    owners: Informer[RawObject], namespace: str, ref: Mapping[str, Any] | None, kind: str
) -> RawObject | None:
    """The owner of kind ``kind`` a controller reference names, if the cache holds it
    with the reference's uid (``resolveControllerRef``)."""
    if ref is None or ref.get("kind") != kind:
        return None
    owner = owners.get(f"{namespace}/{ref.get('name', '')}")
    if owner is None or (owner.get("metadata") or {}).get("uid") != ref.get("uid"):
        return None
    return owner


def _spec_selector(owner: RawObject) -> LabelSelector:
    return LabelSelector.from_dict((owner.get("spec") or {}).get("selector") or {})


def owners_selecting(
    owners: Informer[RawObject],
    obj: RawObject,
    selector_of: Callable[[RawObject], LabelSelector] = _spec_selector,
    skip_empty: bool = True,
) -> list[RawObject]:
    """The owners in ``obj``'s namespace whose selector matches its labels, those who
    may adopt it (``GetPodReplicaSets``, ``GetPodDaemonSets``, ``GetPodJobs``...). An
    owner with an invalid selector matches nothing; so does an empty one unless
    ``skip_empty`` is False (a ReplicationController's map selector, as upstream's
    ``GetPodControllers``)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    labels = meta.get("labels") or {}
    found = []
    for owner in owners.list():
        if (owner.get("metadata") or {}).get("namespace") != namespace:
            continue
        try:
            selector = selector_of(owner)
        except ObjectError:
            continue
        if skip_empty and selector.is_empty():
            continue
        if selector.matches(labels):
            found.append(owner)
    return found


class ChildEventHandlers:
    """The informer handlers of a controller's pods, as upstream's ``addPod`` /
    ``updatePod`` / ``deletePod`` (ReplicaSet, DaemonSet, StatefulSet): each event turns
    into the keys of the owners to sync, nothing more — they run in the informer's task.

    * **added**: the owner the pod's controller reference names, its creation observed
      in **expectations** (when the controller keeps them); for an orphan, every owner
      whose selector matches it (one may adopt it). A pod already being deleted (seen
      after a restart) counts as deleted, not created.
    * **updated**: the old owner too when the reference changed; the owner after
      **batch_period** (a status change of a pod only changes its owner's status), and
      again ``minReadySeconds`` (plus a second against clock skew) after the pod became
      ready; for an orphan whose labels or reference changed, the owners that may adopt
      it. A pod that started terminating counts as deleted at once so that its owner
      replaces it without waiting for the grace period (``deleting_is_deleted``); else
      (the StatefulSet controller, which waits for it to go) its owner syncs at once.
    * **deleted**: the owner, the pod's deletion observed.

    **owners** / **kind**: the owners' informer and kind; **selector_of** /
    **skip_empty**: as :func:`owners_selecting` reads their selectors.
    """

    def __init__(
        self,
        owners: Informer[RawObject],
        kind: str,
        queue: WorkQueue[str],
        *,
        expectations: UIDTrackingControllerExpectations | None = None,
        batch_period: float = 0.0,
        deleting_is_deleted: bool = True,
        selector_of: Callable[[RawObject], LabelSelector] | None = None,
        skip_empty: bool = True,
    ) -> None:
        self.owners = owners
        self.kind = kind
        self.queue = queue
        self.expectations = expectations
        self.batch_period = batch_period
        self.deleting_is_deleted = deleting_is_deleted
        self.selector_of = selector_of or _spec_selector
        self.skip_empty = skip_empty

    def resolve(self, pod: RawObject, ref: Mapping[str, Any] | None) -> RawObject | None:
        """The owner ``ref`` names in the pod's namespace (``resolveControllerRef``)."""
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        return resolve_controller_ref(self.owners, namespace, ref, self.kind)

    def adopters(self, pod: RawObject) -> list[RawObject]:
        """The owners whose selector matches the orphan ``pod``."""
        return owners_selecting(self.owners, pod, self.selector_of, self.skip_empty)

    def add(self, pod: RawObject) -> None:
        """The informer's add handler."""
        if self.deleting_is_deleted and (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.delete(pod)
            return
        ref = controller_of(pod)
        if ref is not None:
            owner = self.resolve(pod, ref)
            if owner is not None:
                key = object_key(owner)
                if self.expectations is not None:
                    self.expectations.creation_observed(key)
                self.queue.add(key)
            return
        for owner in self.adopters(pod):
            self.queue.add(object_key(owner))

    def update(self, old: RawObject, new: RawObject) -> None:
        """The informer's update handler."""
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("resourceVersion") == new_meta.get("resourceVersion"):
            return  # a relist's unchanged copy
        labels_changed = old_meta.get("labels") != new_meta.get("labels")
        if self.deleting_is_deleted and new_meta.get("deletionTimestamp"):
            self.delete(new)
            if labels_changed:
                self.delete(old)
            return
        old_ref, new_ref = controller_of(old), controller_of(new)
        if old_ref != new_ref and old_ref is not None:
            previous = self.resolve(new, old_ref)
            if previous is not None:
                self.queue.add(object_key(previous))
        if new_ref is not None:
            owner = self.resolve(new, new_ref)
            if owner is None:
                return
            key = object_key(owner)
            if new_meta.get("deletionTimestamp") and not old_meta.get("deletionTimestamp"):
                self.queue.add(key)
            else:
                self.queue.add_after(key, self.batch_period)
            min_ready = int((owner.get("spec") or {}).get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(new):
                self.queue.add_after(key, min_ready + 1.0)
            return
        if labels_changed or old_ref != new_ref:
            for owner in self.adopters(new):
                self.queue.add(object_key(owner))

    def delete(self, pod: RawObject) -> None:
        """The informer's delete handler."""
        owner = self.resolve(pod, controller_of(pod))
        if owner is None:
            return
        key = object_key(owner)
        if self.expectations is not None:
            self.expectations.pod_deletion_observed(key, pod_key(pod))
        self.queue.add(key)


async def slow_start_batch(
    count: int, initial_batch_size: int, call: Callable[[], Awaitable[None]]
) -> tuple[int, BaseException | None]:
    """``slowStartBatch``: run ``call`` ``count`` times in batches of
    ``initial_batch_size``, then double, each batch concurrently; after a batch with a
    failure, stop. Returns how many calls succeeded and the first failure."""
    remaining = count
    successes = 0
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        results = await asyncio.gather(*(call() for _ in range(batch)), return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        for failure in failures:
            if isinstance(failure, asyncio.CancelledError):
                raise failure
        successes += batch - len(failures)
        if failures:
            return successes, failures[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


class PodControl:
    """Creates and deletes an owner's pods (``RealPodControl``), recording its events."""

    def __init__(self, client: Client, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    def _warn(self, owner: RawObject, reason: str, message: str) -> None:
        self.recorder.event(owner, "Warning", reason, message)

    async def create_pods(
        self,
        namespace: str,
        template: Mapping[str, Any],
        owner: RawObject,
        owner_ref: Mapping[str, Any],
        generate_name: str = "",
    ) -> RawObject:
        """Create one pod from ``template`` for ``owner`` (``CreatePods``; with
        ``generate_name``, ``CreatePodsWithGenerateName``); returns it.

        A template the pod cannot be made from raises :class:`ObjectError` (and records
        ``FailedCreate``); see :meth:`create_pod` for the rest.
        """
        pod = self.pod_for(template, owner, owner_ref)
        if generate_name:
            pod["metadata"]["generateName"] = generate_name
        return await self.create_pod(namespace, pod, owner)

    def pod_for(
        self, template: Mapping[str, Any], owner: RawObject, owner_ref: Mapping[str, Any]
    ) -> RawObject:
        """The pod :meth:`create_pod` would send for ``owner``'s ``template``: build it
        once and send it as often as replicas are missing (the server names each)."""
        try:
            return pod_from_template(template, owner, owner_ref)
        except ObjectError as exc:
            self._warn(owner, FAILED_CREATE_POD_REASON, f"Error creating: {exc}")
            raise

    async def create_pod(self, namespace: str, pod: RawObject, owner: RawObject) -> RawObject:
        """POST ``pod`` (left unchanged) for ``owner``; returns the created pod. A
        refused create raises the :class:`~kubesched.kube.KubeError` and records a
        ``FailedCreate`` event, except for timeouts, as upstream."""
        try:
            created: RawObject = await self.client.create(PODS.raw, pod, namespace)
        except KubeError as exc:
            if not isinstance(exc, Timeout):
                self._warn(owner, FAILED_CREATE_POD_REASON, f"Error creating: {exc}")
            raise
        name = (created.get("metadata") or {}).get("name", "")
        self.recorder.event(owner, "Normal", SUCCESSFUL_CREATE_POD_REASON, f"Created pod: {name}")
        return created

    async def delete_pod(self, namespace: str, name: str, owner: RawObject, uid: str = "") -> None:
        """Delete a pod of ``owner`` (``DeletePod``). NotFound is raised without an
        event; other failures record ``FailedDelete``."""
        try:
            await self.client.delete(PODS.raw, name, namespace, uid=uid)
        except NotFound:
            raise
        except KubeError as exc:
            self._warn(owner, FAILED_DELETE_POD_REASON, f"Error deleting: {exc}")
            raise
        self.recorder.event(owner, "Normal", SUCCESSFUL_DELETE_POD_REASON, f"Deleted pod: {name}")

    async def patch_pod(self, namespace: str, name: str, patch: object) -> RawObject:
        """A strategic merge patch of a pod (adoption and release)."""
        patched: RawObject = await self.client.patch(
            PODS.raw, name, patch, namespace, patch_type="strategic"
        )
        return patched
