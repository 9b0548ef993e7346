"""The PodGroup controller: scheduler-plugins' PodGroup status (phase, running, succeeded,
failed, occupiedBy), as its v0.34.7 controller keeps it (``pkg/controllers/
podgroup_controller.go``), a client of the API server like the rest of ``controllers``.

A PodGroup added or changed queues its key; so does any change of a pod labelled
``scheduling.x-k8s.io/pod-group`` (the old and the new group when the label changed).
Syncing a key reads the group and its members from the caches and writes the status
:func:`kubesched.objects.podgroupstatus.compute_status` gives, through ``/status``, when it
changed. One sync is one upstream reconcile, one step of the phase; the write's own watch
event queues the group again for the next step.

Deviation: upstream lists member pods by label in every namespace (a pod of another
namespace with the same group name counts); members here are the group's namespace's
only, as the label means and as the Coscheduling plugin reads them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers, update_status
from kubesched.kube import Client, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import POD_GROUPS, PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.objects.podgroupstatus import FINAL_PHASES, compute_status, schedule_timed_out

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["COMPONENT", "NAME", "PodGroupController", "start"]

log = logging.getLogger(__name__)

NAME = "podgroup-controller"
#: The event source upstream's recorder uses.
COMPONENT = "PodGroupController"
#: Upstream runs one reconcile worker unless told otherwise.
WORKERS = 1
TIMEOUT_REASON = "Timeout"
TIMEOUT_MESSAGE = "schedule time longer than 48 hours"


def _key(obj: RawObject) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace') or ''}/{meta['name']}"


def _group_of(pod: RawObject) -> str | None:
    meta = pod.get("metadata") or {}
    name = (meta.get("labels") or {}).get(POD_GROUP_LABEL)
    return f"{meta.get('namespace') or ''}/{name}" if name else None


class PodGroupController:
    """Keeps every PodGroup's status; built by :func:`start`."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        pod_groups: Informer[RawObject],
        workers: int = WORKERS,
    ) -> None:
        self.client = client
        self.pod_informer = pods
        self.pod_group_informer = pod_groups
        self.workers = max(workers, 1)
        self.recorder = EventRecorder(client, COMPONENT)
        self.queue: WorkQueue[str] = WorkQueue("podgroup")
        #: group key -> the keys of the pods labelled with it (the label index).
        self._members: dict[str, set[str]] = {}
        pods.add_handler(self._on_pod_add, self._on_pod_update, self._on_pod_delete)
        pod_groups.add_handler(self._on_group, lambda _, new: self._on_group(new))

    # --- handlers: objects into keys ---------------------------------------------------

    def _on_group(self, group: RawObject) -> None:
        self.queue.add(_key(group))

    def _on_pod_add(self, pod: RawObject) -> None:
        group = _group_of(pod)
        if group is not None:
            self._members.setdefault(group, set()).add(_key(pod))
            self.queue.add(group)

    def _on_pod_update(self, old: RawObject, new: RawObject) -> None:
        before, after = _group_of(old), _group_of(new)
        if before is not None and before != after:
            self._forget(before, _key(old))
        self._on_pod_add(new)

    def _on_pod_delete(self, pod: RawObject) -> None:
        group = _group_of(pod)
        if group is not None:
            self._forget(group, _key(pod))

    def _forget(self, group: str, pod_key: str) -> None:
        members = self._members.get(group)
        if members is not None:
            members.discard(pod_key)
            if not members:
                del self._members[group]
        self.queue.add(group)

    # --- running -----------------------------------------------------------------------

    async def run(self) -> None:
        """Sync queued groups until cancelled (after the informers synced)."""
        try:
            await run_workers(self.queue, self.sync, NAME, self.workers)
        finally:
            await self.recorder.flush()

    def members(self, group_key: str) -> list[RawObject]:
        """The cached pods labelled with the group ``namespace/name``, by name."""
        found = (self.pod_informer.get(k) for k in self._members.get(group_key, ()))
        pods = [p for p in found if p is not None]
        pods.sort(key=lambda p: str(p["metadata"]["name"]))
        return pods

    async def sync(self, key: str) -> None:
        """Bring the status of PodGroup ``key`` one reconcile further."""
        group = self.pod_group_informer.get(key)
        if group is None:
            return
        phase = (group.get("status") or {}).get("phase")
        if phase in FINAL_PHASES:
            return
        if schedule_timed_out(group):
            self.recorder.event(group, "Warning", TIMEOUT_REASON, TIMEOUT_MESSAGE)
            return
        pods = self.members(key)

        def new_status(current: RawObject) -> RawObject | None:
            status = compute_status(current, pods)
            return None if status == (current.get("status") or {}) else status

        try:
            await update_status(self.client, POD_GROUPS.raw, group, new_status)
        except NotFound:
            return  # deleted meanwhile


def start(ctx: ControllerContext) -> PodGroupController:
    """The PodGroup controller's init function for the controller manager."""
    return PodGroupController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(POD_GROUPS),
    )
