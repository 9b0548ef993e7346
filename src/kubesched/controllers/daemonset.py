"""The DaemonSet controller (``daemonset-controller``), after upstream's
``pkg/controller/daemon`` (``daemon_controller.go``, ``update.go``,
``util/daemonset_util.go``).

A worker syncs one DaemonSet at a time: it claims the set's pods, finds or makes the
ControllerRevision of its template (renumbering an old one the template went back to),
then for every node decides (:func:`~kubesched.objects.daemonset.node_should_run_daemon_pod`:
nodeSelector, required node affinity, taints against the template's and the daemon
tolerations) whether it wants a pod there: it makes the missing pods — each pinned to its
node by the ``matchFields metadata.name`` node affinity upstream injects, so the scheduler
places it — and deletes the pods of nodes that must not run one, failed pods, and extra
pods. With ``RollingUpdate`` it replaces old pods within ``maxUnavailable`` (deleting
first) or ``maxSurge`` (making the new pod first). Then it deletes revisions beyond
``revisionHistoryLimit`` that no pod uses and writes ``status``.

Revisions live on the server when it serves ControllerRevisions, in memory otherwise
(see :mod:`kubesched.controllers.history`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

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
from kubesched.controllers.history import (
    LocalRevisions,
    RevisionHistory,
    RevisionStore,
    new_revision,
    next_revision,
    revision_number,
    served_history,
    sort_revisions,
)
from kubesched.controllers.manager import ControllerContext
from kubesched.controllers.ownerindex import OwnerIndex, object_key
from kubesched.controllers.statefulset import revision_patch
from kubesched.kube import Client, Conflict, Informer, KubeError, NotFound
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import NODES, PODS, RawObject, Resource
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.activepods import is_pod_available, is_pod_ready
from kubesched.objects.daemonset import (
    TEMPLATE_GENERATION_LABEL,
    UNIQUE_LABEL_KEY,
    daemon_pod,
    daemon_pod_template,
    node_should_run_daemon_pod,
    revision_hash,
    template_generation,
)
from kubesched.objects.deployment import scaled_value
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.podtemplate import controller_of, controller_ref
from kubesched.objects.selectors import LabelSelector

__all__ = ["DAEMON_SETS", "NAME", "DaemonSetController", "start"]

log = logging.getLogger(__name__)

NAME = "daemonset-controller"
API_VERSION = "apps/v1"
KIND = "DaemonSet"
#: ``--concurrent-daemonset-syncs`` default.
DEFAULT_WORKERS = 2
#: Seconds a DaemonSet waits for a status change of one of its pods, so that a pod's
#: several updates make one sync. Deviation: upstream syncs on each.
POD_UPDATE_BATCH_PERIOD = 0.05

#: apps/v1 DaemonSets, as plain dicts.
DAEMON_SETS: Resource[RawObject] = Resource(
    "apps", "v1", "daemonsets", "DaemonSet", True, lambda raw: raw
)


#: Status counts the API omits when zero (``omitempty``).
_OMITTED_WHEN_ZERO = (
    "numberReady",
    "updatedNumberScheduled",
    "numberAvailable",
    "numberUnavailable",
)


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def _is_terminating(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def target_node_name(pod: Mapping[str, Any]) -> str:
    """``GetTargetNodeName``: the pod's node, or before it is bound the node its
    ``matchFields metadata.name`` affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field in (term or {}).get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("operator") == "In":
                values = field.get("values") or []
                if len(values) == 1:
                    return str(values[0])
    return ""


def _by_age(pods: list[RawObject]) -> list[RawObject]:
    """``podByCreationTimestampAndPhase``: oldest first, Running before the rest."""

    def key(pod: RawObject) -> tuple[str, int, str]:
        meta = pod.get("metadata") or {}
        return (
            str(meta.get("creationTimestamp") or ""),
            0 if _phase(pod) == "Running" else 1,
            str(meta.get("name") or ""),
        )

    return sorted(pods, key=key)


def is_pod_updated(pod: Mapping[str, Any], hash_: str, generation: int | None) -> bool:
    """``IsPodUpdated``: the pod carries the current revision's hash, or the current
    template generation."""
    labels = _labels(pod)
    if generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation):
        return True
    return bool(hash_) and labels.get(UNIQUE_LABEL_KEY) == hash_


def _rolling(ds: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}


def _strategy_type(ds: Mapping[str, Any]) -> str:
    return str(((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate")


def allows_surge(ds: Mapping[str, Any]) -> bool:
    """``AllowsSurge``: a RollingUpdate with a non-zero ``maxSurge``."""
    if _strategy_type(ds) != "RollingUpdate":
        return False
    surge = _rolling(ds).get("maxSurge")
    return surge not in (None, 0, "0", "0%")


def surge_and_unavailable(ds: Mapping[str, Any], desired: int) -> tuple[int, int]:
    """``updatedDesiredNodeCounts``' limits: (maxSurge, maxUnavailable), percentages of
    ``desired`` rounded up; never both 0, so an update always moves."""
    rolling = _rolling(ds)
    path = "spec.updateStrategy.rollingUpdate"
    surge = scaled_value(rolling.get("maxSurge", 0), desired, True, f"{path}.maxSurge")
    unavailable = scaled_value(
        rolling.get("maxUnavailable", 1), desired, True, f"{path}.maxUnavailable"
    )
    if desired > 0 and surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def find_updated_pods_on_node(
    pods: list[RawObject], hash_: str, generation: int | None
) -> tuple[RawObject | None, RawObject | None, bool]:
    """``findUpdatedPodsOnNode``: (new pod, old pod, ok); not ok when the node has two
    of either."""
    new = old = None
    for pod in pods:
        if _is_terminating(pod):
            continue
        if is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


class FailedPodsBackoff:
    """``failedPodsBackoff`` (``flowcontrol.Backoff``): per DaemonSet and node, the time
    to wait before deleting another failed pod — 1 s, doubling to 15 min, forgotten after
    twice that without a failure."""

    def __init__(self, initial: float = 1.0, maximum: float = 900.0) -> None:
        self.initial = initial
        self.maximum = maximum
        #: (DaemonSet uid, node) -> (delay, when it was last raised)
        self._entries: dict[tuple[str, str], tuple[float, float]] = {}

    @staticmethod
    def _key(ds: Mapping[str, Any], node: str) -> tuple[str, str]:
        return str((ds.get("metadata") or {}).get("uid") or ""), node

    def in_backoff(self, ds: Mapping[str, Any], node: str, now: float) -> float | None:
        """``IsInBackOffSinceUpdate``: the current delay if it has not passed yet."""
        entry = self._entries.get(self._key(ds, node))
        if entry is None or now - entry[1] >= entry[0]:
            return None
        return entry[0]

    def next(self, ds: Mapping[str, Any], node: str, now: float) -> None:
        """``Next``: start or double the delay."""
        key = self._key(ds, node)
        entry = self._entries.get(key)
        if entry is None or now - entry[1] > 2 * self.maximum:
            self._entries[key] = (self.initial, now)
        else:
            self._entries[key] = (min(entry[0] * 2, self.maximum), now)


class DaemonSetController:
    """Keeps one pod of each DaemonSet on every node that should run it.

    **daemon_sets**, **pods**, **nodes**: informers of plain dicts. **revisions**: as
    for :class:`~kubesched.controllers.statefulset.StatefulSetController` (by default,
    asked of discovery when it runs). **clock**: wall-clock seconds, for
    ``minReadySeconds``.
    """

    def __init__(
        self,
        client: Client,
        daemon_sets: Informer[RawObject],
        pods: Informer[RawObject],
        nodes: Informer[RawObject],
        *,
        revisions: RevisionStore | None = None,
        pod_index: OwnerIndex | None = None,
        workers: int = DEFAULT_WORKERS,
        burst_replicas: int = BURST_REPLICAS,
        pod_update_batch_period: float = POD_UPDATE_BATCH_PERIOD,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.daemon_sets = daemon_sets
        self.pods = pods
        self.nodes = nodes
        self.history = RevisionHistory(revisions if revisions is not None else LocalRevisions())
        self._discover = revisions is None
        self.workers = workers
        self.burst_replicas = burst_replicas
        self.pod_update_batch_period = pod_update_batch_period
        self.clock = clock
        if pod_index is None:
            pod_index = OwnerIndex()
            pod_index.attach(pods)
        self.pod_index = pod_index
        self.recorder = EventRecorder(client, NAME)
        self.pod_control = PodControl(client, self.recorder)
        self.expectations = UIDTrackingControllerExpectations()
        self.written = WrittenVersions()
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        self._nodes: dict[str, tuple[str, Node]] = {}
        self.failed_pods_backoff = FailedPodsBackoff()
        daemon_sets.add_handler(self._add_ds, lambda _o, new: self._add_ds(new), self._delete_ds)
        self.pod_events = ChildEventHandlers(
            daemon_sets,
            KIND,
            self.queue,
            expectations=self.expectations,
            batch_period=pod_update_batch_period,
        )
        pods.add_handler(self.pod_events.add, self.pod_events.update, self.pod_events.delete)
        nodes.add_handler(self._node_changed, self._update_node, self._node_changed)

    # --- running ----------------------------------------------------------------------

    async def run(self) -> None:
        """Wait for the informers' first lists, then sync until cancelled."""
        for informer in (self.daemon_sets, self.pods, self.nodes):
            await informer.has_synced.wait()
        own_informer: Informer[RawObject] | None = None
        if self._discover:
            found = await served_history(self.client, NAME)
            if found is not None:
                self.history, own_informer = found
        try:
            await run_workers(self.queue, self.sync, NAME, self.workers)
        finally:
            if own_informer is not None:
                await own_informer.stop()
            await self.recorder.flush()

    # --- event handlers ---------------------------------------------------------------

    def _add_ds(self, ds: RawObject) -> None:
        self.queue.add(object_key(ds))

    def _delete_ds(self, ds: RawObject) -> None:
        key = object_key(ds)
        self.expectations.delete_expectations(key)
        self.queue.add(key)

    def _enqueue_all(self) -> None:
        for ds in self.daemon_sets.list():
            self.queue.add(object_key(ds))

    def _node_changed(self, _node: RawObject) -> None:
        self._enqueue_all()

    def _update_node(self, old: RawObject, new: RawObject) -> None:
        # shouldIgnoreNodeUpdate: only labels, taints and the spec change where daemon
        # pods go (status heartbeats do not).
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("labels") != new_meta.get("labels") or old.get("spec") != new.get("spec"):
            self._enqueue_all()

    # --- sync -------------------------------------------------------------------------

    def _node_list(self) -> list[Node]:
        """Every node, decoded once per resourceVersion."""
        nodes = []
        seen = set()
        for raw in self.nodes.list():
            meta = raw.get("metadata") or {}
            name = str(meta.get("name") or "")
            version = str(meta.get("resourceVersion") or "")
            cached = self._nodes.get(name)
            if cached is None or cached[0] != version:
                cached = (version, Node.from_dict(raw))
                self._nodes[name] = cached
            nodes.append(cached[1])
            seen.add(name)
        for gone in set(self._nodes) - seen:
            del self._nodes[gone]
        return nodes

    async def sync(self, key: str) -> None:
        """``syncDaemonSet``: converge one DaemonSet's pods, history and status."""
        ds = self.daemon_sets.get(key)
        if ds is None:
            self.expectations.delete_expectations(key)
            self.written.forget(key)
            return
        if self.written.stale(key, ds):
            return
        try:
            selector = LabelSelector.from_dict((ds.get("spec") or {}).get("selector") or {})
        except ObjectError as exc:
            log.warning("%s: DaemonSet %s: invalid selector: %s", NAME, key, exc)
            return
        if selector.is_empty():
            message = "This daemon set is selecting all pods. A non-empty selector is required."
            self.recorder.event(ds, "Warning", "SelectingAll", message)
            return
        if (ds.get("metadata") or {}).get("deletionTimestamp"):
            return
        nodes = self._node_list()
        pods = await self._claim_pods(ds, selector)
        current, old = await self._construct_history(ds, selector)
        hash_ = _labels(current).get(UNIQUE_LABEL_KEY) or ""
        by_node = self._pods_by_node(pods)
        if not self.expectations.satisfied_expectations(key):
            await self._update_status(key, ds, nodes, by_node, hash_, False)
            return
        await self._manage(ds, nodes, by_node, hash_)
        if self.expectations.satisfied_expectations(key) and _strategy_type(ds) == "RollingUpdate":
            await self._rolling_update(ds, nodes, by_node, hash_)
        await self._cleanup_history(ds, pods, old)
        await self._update_status(key, ds, nodes, by_node, hash_, True)

    async def _claim_pods(self, ds: RawObject, selector: LabelSelector) -> list[RawObject]:
        meta = ds["metadata"]
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        uid = str(meta.get("uid") or "")

        async def fetch() -> RawObject:
            fresh: RawObject = await self.client.get(DAEMON_SETS, name, namespace)
            return fresh

        manager = ControllerRefManager(
            ds,
            API_VERSION,
            KIND,
            selector,
            self.pod_control.patch_pod,
            recheck_deletion(fetch, uid, f"{KIND} {namespace}/{name}"),
        )
        return await manager.claim(self.pod_index.owned_by(uid) + self.pod_index.orphans(namespace))

    @staticmethod
    def _pods_by_node(pods: list[RawObject]) -> dict[str, list[RawObject]]:
        """``getNodesToDaemonPods``: the set's pods by the node they are (or will be) on."""
        by_node: dict[str, list[RawObject]] = {}
        for pod in pods:
            node = target_node_name(pod)
            if node:
                by_node.setdefault(node, []).append(pod)
        return by_node

    # --- history (update.go) ----------------------------------------------------------

    async def _construct_history(
        self, ds: RawObject, selector: LabelSelector
    ) -> tuple[RawObject, list[RawObject]]:
        """``constructHistory``: (the current revision, made or renumbered if needed;
        the old ones)."""
        meta = ds["metadata"]
        namespace, uid = str(meta.get("namespace") or ""), str(meta.get("uid") or "")
        for orphan in self.history.store.list(namespace):
            if controller_of(orphan) is None and selector.matches(_labels(orphan)):
                ref = controller_ref(ds, API_VERSION, KIND)
                body = {
                    "metadata": {"ownerReferences": [ref], "uid": orphan["metadata"].get("uid")}
                }
                try:
                    await self.history.store.patch(namespace, orphan["metadata"]["name"], body)
                except NotFound:
                    continue
        histories = self.history.owned_by(namespace, uid)
        data = revision_patch(ds)
        current = [h for h in histories if h.get("data") == data]
        old = [h for h in histories if h.get("data") != data]
        number = next_revision(old)
        if not current:
            return await self._snapshot(ds, data, number), old
        # dedupCurHistories: keep the newest equal revision, delete the others.
        current = sort_revisions(current)
        keep = current[-1]
        for duplicate in current[:-1]:
            await self.history.store.delete(duplicate)
        if revision_number(keep) < number:
            keep = await self.history.store.update_revision(keep, number)
        return keep, old

    async def _snapshot(self, ds: RawObject, data: dict[str, Any], number: int) -> RawObject:
        """``snapshot``: create the revision of the current template (bumping
        ``collisionCount`` when its name is taken by other data)."""
        hash_ = revision_hash(ds)
        template = (ds.get("spec") or {}).get("template") or {}
        labels = {**_labels(template), UNIQUE_LABEL_KEY: hash_}
        annotations = (ds.get("metadata") or {}).get("annotations") or {}
        revision = new_revision(
            ds, controller_ref(ds, API_VERSION, KIND), labels, data, number, hash_, annotations
        )
        collisions = int((ds.get("status") or {}).get("collisionCount") or 0)
        created, collided = await self.history.create(revision, collisions)
        if not collided:
            return created
        # Another template holds the name: count the collision so the next hash differs.
        status = {**(ds.get("status") or {}), "collisionCount": collisions + 1}
        body = {"apiVersion": API_VERSION, "kind": KIND, **ds, "status": status}
        await self.client.update(DAEMON_SETS, body, subresource="status")
        name = revision["metadata"]["name"]
        raise Conflict(409, {"reason": "Conflict", "message": f"hash collision on {name}"})

    async def _cleanup_history(
        self, ds: RawObject, pods: list[RawObject], old: list[RawObject]
    ) -> None:
        """``cleanupHistory``: delete the oldest revisions no pod uses beyond
        ``revisionHistoryLimit``."""
        limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
        limit = limit if isinstance(limit, int) else 10
        to_kill = len(old) - limit
        if to_kill <= 0:
            return
        live = {_labels(p).get(UNIQUE_LABEL_KEY) for p in pods}
        for revision in sort_revisions(old):
            if to_kill <= 0:
                break
            if _labels(revision).get(UNIQUE_LABEL_KEY) in live:
                continue
            await self.history.store.delete(revision)
            to_kill -= 1

    # --- manage (daemon_controller.go) ------------------------------------------------

    def _pods_should_be_on_node(
        self,
        node: Node,
        by_node: dict[str, list[RawObject]],
        ds: RawObject,
        hash_: str,
    ) -> tuple[bool, list[RawObject]]:
        """``podsShouldBeOnNode``: (whether the node needs a pod, pods to delete)."""
        should_run, should_continue = node_should_run_daemon_pod(node, ds)
        pods = by_node.get(node.name)
        to_delete: list[RawObject] = []
        if should_run and not pods:
            return True, []
        if should_continue:
            running = []
            for pod in pods or ():
                if _is_terminating(pod):
                    continue
                if _phase(pod) == "Failed":
                    # Often a kubelet refusing the pod: back off per node, not hot-loop.
                    delay = self.failed_pods_backoff.in_backoff(ds, node.name, self.clock())
                    if delay is not None:
                        self.queue.add_after(object_key(ds), delay)
                        continue
                    self.failed_pods_backoff.next(ds, node.name, self.clock())
                    pmeta = pod.get("metadata") or {}
                    self.recorder.event(
                        ds,
                        "Warning",
                        "FailedDaemonPod",
                        f"Found failed daemon pod {pmeta.get('namespace')}/{pmeta.get('name')} "
                        f"on node {node.name}, will try to kill it",
                    )
                    to_delete.append(pod)
                elif _phase(pod) == "Succeeded":
                    to_delete.append(pod)
                else:
                    running.append(pod)
            if not allows_surge(ds):
                running = _by_age(running)
                return False, to_delete + running[1:]
            if len(running) <= 1:
                return not running and should_run, to_delete
            oldest_new = oldest_old = None
            for pod in _by_age(running):
                if _labels(pod).get(UNIQUE_LABEL_KEY) == hash_:
                    if oldest_new is None:
                        oldest_new = pod
                        continue
                elif oldest_old is None:
                    oldest_old = pod
                    continue
                to_delete.append(pod)
            if oldest_new is not None and oldest_old is not None:
                min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
                if not is_pod_ready(oldest_old) or is_pod_available(
                    oldest_new, min_ready, self.clock()
                ):
                    to_delete.append(oldest_old)
            return False, to_delete
        if pods:
            return False, [p for p in pods if not _is_terminating(p)]
        return False, []

    async def _manage(
        self, ds: RawObject, nodes: list[Node], by_node: dict[str, list[RawObject]], hash_: str
    ) -> None:
        """``manage``: make the missing daemon pods, delete the unwanted ones."""
        needing: list[str] = []
        to_delete: list[RawObject] = []
        names = set()
        for node in nodes:
            names.add(node.name)
            need, delete = self._pods_should_be_on_node(node, by_node, ds, hash_)
            if need:
                needing.append(node.name)
            to_delete += delete
        # Pods pinned to nodes that are gone.
        for node_name, pods in by_node.items():
            if node_name not in names:
                to_delete += [p for p in pods if not _is_terminating(p)]
        await self._sync_nodes(ds, to_delete, needing, hash_)

    async def _sync_nodes(
        self, ds: RawObject, to_delete: list[RawObject], needing: list[str], hash_: str
    ) -> None:
        """``syncNodes``: create pods for ``needing`` and delete ``to_delete``, at most
        ``burst_replicas`` of each a sync."""
        key = object_key(ds)
        needing = needing[: self.burst_replicas]
        to_delete = to_delete[: self.burst_replicas]
        namespace = str((ds.get("metadata") or {}).get("namespace") or "default")
        typed = {"apiVersion": API_VERSION, "kind": KIND, **ds}
        self.expectations.expect_creations(key, len(needing))
        self.expectations.expect_pod_deletions(key, [pod_key(p) for p in to_delete])
        errors: list[BaseException] = []
        if needing:
            template = daemon_pod_template(ds, hash_)
            queue = list(needing)

            async def create() -> None:
                node = queue.pop(0)
                await self.pod_control.create_pod(namespace, daemon_pod(ds, node, template), typed)

            created, error = await slow_start_batch(
                len(needing), SLOW_START_INITIAL_BATCH_SIZE, create
            )
            # Pods never created will never be observed.
            for _ in range(len(needing) - created):
                self.expectations.creation_observed(key)
            if error is not None:
                errors.append(error)

        async def delete(pod: RawObject) -> None:
            pmeta = pod["metadata"]
            try:
                await self.pod_control.delete_pod(
                    namespace, pmeta["name"], typed, uid=str(pmeta.get("uid") or "")
                )
            except KubeError as exc:
                self.expectations.pod_deletion_observed(key, pod_key(pod))
                if not isinstance(exc, NotFound):
                    raise

        results = await asyncio.gather(*(delete(p) for p in to_delete), return_exceptions=True)
        errors += [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]

    # --- rolling update (update.go) ---------------------------------------------------

    async def _rolling_update(
        self, ds: RawObject, nodes: list[Node], by_node: dict[str, list[RawObject]], hash_: str
    ) -> None:
        """``rollingUpdate``: replace old pods within maxUnavailable (delete first; the
        manage step makes the new one) or maxSurge (make the new pod first)."""
        # The pods as they are now: manage may have deleted some.
        pods = self.pod_index.owned_by(str(ds["metadata"].get("uid") or ""))
        by_node = self._pods_by_node([p for p in pods if not _is_terminating(p)])
        wanted = {n.name: n for n in nodes if node_should_run_daemon_pod(n, ds)[0]}
        surge, max_unavailable = surge_and_unavailable(ds, len(wanted))
        generation = template_generation(ds)
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock()
        if surge == 0:
            unavailable = 0
            allowed: list[RawObject] = []
            candidates: list[RawObject] = []
            for node_name in sorted(by_node):
                new, old, ok = find_updated_pods_on_node(by_node[node_name], hash_, generation)
                if not ok or (new is None) == (old is None):
                    unavailable += 1
                elif new is not None:
                    if not is_pod_available(new, min_ready, now):
                        unavailable += 1
                elif old is not None:
                    if not is_pod_available(old, min_ready, now):
                        allowed.append(old)
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            remaining = min(max(max_unavailable - unavailable, 0), len(candidates))
            await self._sync_nodes(ds, allowed + candidates[:remaining], [], hash_)
            return
        old_to_delete: list[RawObject] = []
        candidate_nodes: list[str] = []
        allowed_nodes: list[str] = []
        surged = 0
        for node_name in sorted(by_node):
            new, old, ok = find_updated_pods_on_node(by_node[node_name], hash_, generation)
            if not ok:
                surged += 1
                continue
            if node_name not in wanted:
                continue
            if old is None:
                continue
            if new is None:
                if not is_pod_available(old, min_ready, now):
                    allowed_nodes.append(node_name)
                elif surged < surge:
                    candidate_nodes.append(node_name)
                continue
            if not is_pod_available(new, min_ready, now):
                surged += 1
                continue
            old_to_delete.append(old)
        remaining = min(max(surge - surged, 0), len(candidate_nodes))
        await self._sync_nodes(
            ds, old_to_delete, allowed_nodes + candidate_nodes[:remaining], hash_
        )

    # --- status -----------------------------------------------------------------------

    async def _update_status(
        self,
        key: str,
        ds: RawObject,
        nodes: list[Node],
        by_node: dict[str, list[RawObject]],
        hash_: str,
        observed: bool,
    ) -> None:
        """``updateDaemonSetStatus``: count what the nodes run and write it if changed."""
        desired = current = misscheduled = ready = available = updated = 0
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        now = self.clock()
        generation = template_generation(ds)
        for node in nodes:
            should_run, _ = node_should_run_daemon_pod(node, ds)
            pods = by_node.get(node.name) or []
            if not should_run:
                if pods:
                    misscheduled += 1
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = _by_age(pods)[0]
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, now):
                    available += 1
            if is_pod_updated(pod, hash_, generation):
                updated += 1
        counts = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        if min_ready > 0 and ready != available:
            self.queue.add_after(key, float(min_ready))

        def new_status(body: RawObject) -> RawObject | None:
            old = copy.deepcopy(body.get("status") or {})
            new = {**old, **counts}
            for name in _OMITTED_WHEN_ZERO:
                if not new[name]:
                    new.pop(name)
            if observed:
                new["observedGeneration"] = (body.get("metadata") or {}).get("generation") or 0
            return None if new == old else new

        with contextlib.suppress(NotFound):
            await update_status(self.client, DAEMON_SETS, ds, new_status, self.written)


def start(ctx: ControllerContext) -> DaemonSetController:
    """The DaemonSet controller's init function for the controller manager."""
    return DaemonSetController(
        ctx.client(NAME),
        ctx.informers.informer(DAEMON_SETS),
        ctx.informers.informer(PODS),
        ctx.informers.informer(NODES),
    )
