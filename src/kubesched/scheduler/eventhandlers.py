"""Informer events into the cache and the queue, as upstream's
``pkg/scheduler/eventhandler.go`` (``addAllEventHandlers``).

Assigned pods go to the cache, and their arrival, change or departure is a cluster event
that may help the unschedulable pods. Unassigned pods whose schedulerName is one of our
profiles go to the queue; pods of other schedulers are ignored (until they are bound:
then they occupy their node like any other). Node events update the cache and move the
pods they may help; so do the storage objects' events (PersistentVolumes, claims,
StorageClasses, the CSI objects), which only move pods. Handlers are synchronous: they run
in the informers' tasks, between scheduling cycles, never inside one.
"""

from __future__ import annotations

import logging
from typing import Any

from kubesched.framework.interface import ActionType, ClusterEvent, EventResource
from kubesched.framework.waiting_pods import WaitingPodsMap, waiting_pod_key
from kubesched.kube import Informer
from kubesched.kube.dralisters import DRAListers
from kubesched.kube.schedulinglisters import SchedulingListers
from kubesched.kube.storagelisters import StorageListers
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import Cache
from kubesched.scheduler.backend.queue import SchedulingQueue, node_update_events
from kubesched.scheduler.backend.queue.events import NODE_ADD

__all__ = ["EventHandlers"]

log = logging.getLogger(__name__)


class EventHandlers:
    """The callbacks that feed ``cache`` and ``queue``; :meth:`register` wires them."""

    def __init__(
        self, cache: Cache, queue: SchedulingQueue, waiting_pods: WaitingPodsMap | None = None
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.waiting_pods = waiting_pods

    def register(self, pods: Informer[Pod], nodes: Informer[Node]) -> None:
        """Add the handlers to the pod and node informers (before they start)."""
        pods.add_handler(self.on_pod_add, self.on_pod_update, self.on_pod_delete)
        nodes.add_handler(self.on_node_add, self.on_node_update, self.on_node_delete)

    def register_storage(self, listers: StorageListers) -> None:
        """Add the queueing handlers to the storage informers (before they start), as
        upstream's addAllEventHandlers does for the storage kinds plugins register."""
        pairs: list[tuple[Informer[Any], EventResource]] = [
            (listers.pv_informer, EventResource.PERSISTENT_VOLUME),
            (listers.pvc_informer, EventResource.PERSISTENT_VOLUME_CLAIM),
            (listers.storage_class_informer, EventResource.STORAGE_CLASS),
            (listers.csi_node_informer, EventResource.CSI_NODE),
            (listers.csi_driver_informer, EventResource.CSI_DRIVER),
            (listers.capacity_informer, EventResource.CSI_STORAGE_CAPACITY),
            (listers.attachment_informer, EventResource.VOLUME_ATTACHMENT),
        ]
        for informer, resource in pairs:
            informer.add_handler(*self._moving_handlers(resource))

    def register_dra(self, listers: DRAListers) -> None:
        """Add the queueing handlers to the ResourceClaim, ResourceSlice and DeviceClass
        informers (before they start): their changes may make pods schedulable that
        DynamicResources rejected."""
        pairs: list[tuple[Informer[Any], EventResource]] = [
            (listers.claim_informer, EventResource.RESOURCE_CLAIM),
            (listers.slice_informer, EventResource.RESOURCE_SLICE),
            (listers.device_class_informer, EventResource.DEVICE_CLASS),
        ]
        for informer, resource in pairs:
            informer.add_handler(*self._moving_handlers(resource))

    def register_scheduling(self, listers: SchedulingListers) -> None:
        """Add the queueing handlers to the PodGroup and ElasticQuota informers (before
        they start): a group or quota appearing or changing may let its pods through the
        gang and quota plugins."""
        pairs: list[tuple[Informer[Any], EventResource]] = [
            (listers.pod_group_informer, EventResource.POD_GROUP),
            (listers.elastic_quota_informer, EventResource.ELASTIC_QUOTA),
        ]
        for informer, resource in pairs:
            informer.add_handler(*self._moving_handlers(resource))

    def _moving_handlers(self, resource: EventResource) -> tuple[Any, Any, Any]:
        add = ClusterEvent(resource, ActionType.ADD)
        update = ClusterEvent(resource, ActionType.UPDATE)
        delete = ClusterEvent(resource, ActionType.DELETE)
        move = self.queue.move_all_to_active_or_backoff

        def on_add(obj: object) -> None:
            move(add, None, obj)

        def on_update(old: object, new: object) -> None:
            move(update, old, new)

        def on_delete(obj: object) -> None:
            move(delete, obj, None)

        return on_add, on_update, on_delete

    def responsible(self, pod: Pod) -> bool:
        """Whether one of our profiles schedules ``pod``."""
        return pod.scheduler_name in self.queue.frameworks

    # --- pods -------------------------------------------------------------------------

    def on_pod_add(self, pod: Pod) -> None:
        """A pod appeared: to the cache if assigned, to the queue if pending and ours."""
        if pod.is_assigned:
            if pod.is_terminal:
                return
            self.cache.add_pod(pod)
            self.queue.assigned_pod_added(pod)
        elif self.responsible(pod) and not pod.is_terminal:
            self.queue.add(pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        """A pod changed: bound (leaves the queue, enters the cache), changed while
        assigned, turned terminal (frees its node), or changed while pending."""
        if new.is_assigned:
            if not old.is_assigned:
                # Bound, by us (confirms the assumed pod) or by someone else.
                self.queue.delete(new)
                if not new.is_terminal:
                    self.cache.add_pod(new)
                    self.queue.assigned_pod_added(new)
                return
            if new.is_terminal:
                if self.cache.remove_pod(old):
                    self.queue.assigned_pod_deleted(old)
                return
            self.cache.update_pod(old, new)
            self.queue.assigned_pod_updated(old, new)
        elif self.responsible(new) and not new.is_terminal:
            self.queue.update(old, new)
        else:
            self.queue.delete(new)

    def on_pod_delete(self, pod: Pod) -> None:
        """A pod was deleted: it frees its node, or leaves the queue."""
        if pod.is_assigned:
            if self.cache.remove_pod(pod):
                self.queue.assigned_pod_deleted(pod)
        else:
            self.queue.delete(pod)
            # A pod held at Permit is assumed, not bound: rejecting it frees its place
            # (its binding task forgets it), as upstream's RejectWaitingPod.
            waiting = None
            if self.waiting_pods is not None:
                waiting = self.waiting_pods.get(waiting_pod_key(pod))
            if waiting is not None:
                waiting.reject("", "removed")
                self.queue.assigned_pod_deleted(pod)

    # --- nodes ------------------------------------------------------------------------

    def on_node_add(self, node: Node) -> None:
        """A node appeared: pods rejected for lack of a node like it may fit now."""
        self.cache.add_node(node)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        """A node changed; only what scheduling reads (allocatable, labels, taints,
        unschedulable) moves pods."""
        self.cache.update_node(old, new)
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def on_node_delete(self, node: Node) -> None:
        """A node went away; no pending pod can fit better for that."""
        self.cache.remove_node(node)
