"""The ElasticQuota controller: scheduler-plugins' ElasticQuota ``status.used``, as its
v0.34.7 controller keeps it (``pkg/controllers/elasticquota_controller.go``), a client
of the API server like the rest of ``controllers``.

Any change of a pod or of an ElasticQuota queues its namespace. Syncing a namespace takes
its ElasticQuota (scheduler-plugins supports one per namespace; with several, the first
by name, where upstream takes the first its cache lists), computes ``used`` from the
namespace's pods (:func:`kubesched.objects.elasticquotastatus.compute_used`: the Running
pods' requests, every resource of min and max listed) and writes it through ``/status``
when it changed as quantities, with a ``Synced`` event as upstream records.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers, update_status
from kubesched.kube import Client, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import ELASTIC_QUOTAS, PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.elasticquotastatus import compute_used, same_resource_list

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["COMPONENT", "NAME", "ElasticQuotaController", "start"]

log = logging.getLogger(__name__)

NAME = "elasticquota-controller"
#: The event source upstream's recorder uses.
COMPONENT = "ElasticQuotaController"
WORKERS = 1
SYNCED_REASON = "Synced"


def _namespace(obj: RawObject) -> str:
    return str(obj["metadata"].get("namespace") or "")


def _key(obj: RawObject) -> str:
    return f"{_namespace(obj)}/{obj['metadata']['name']}"


class ElasticQuotaController:
    """Keeps every ElasticQuota's ``status.used``; built by :func:`start`."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        quotas: Informer[RawObject],
        workers: int = WORKERS,
    ) -> None:
        self.client = client
        self.pod_informer = pods
        self.quota_informer = quotas
        self.workers = max(workers, 1)
        self.recorder = EventRecorder(client, COMPONENT)
        self.queue: WorkQueue[str] = WorkQueue("elasticquota")
        #: namespace -> the keys of its pods; namespace -> the names of its quotas.
        self._pods: dict[str, set[str]] = {}
        self._quotas: dict[str, set[str]] = {}
        pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_pod_delete)
        quotas.add_handler(
            self._on_quota, lambda _, new: self._on_quota(new), self._on_quota_delete
        )

    # --- handlers: objects into namespaces ---------------------------------------------

    def _on_pod(self, pod: RawObject) -> None:
        ns = _namespace(pod)
        self._pods.setdefault(ns, set()).add(_key(pod))
        if ns in self._quotas:
            self.queue.add(ns)

    def _on_pod_delete(self, pod: RawObject) -> None:
        ns = _namespace(pod)
        keys = self._pods.get(ns)
        if keys is not None:
            keys.discard(_key(pod))
            if not keys:
                del self._pods[ns]
        if ns in self._quotas:
            self.queue.add(ns)

    def _on_quota(self, quota: RawObject) -> None:
        ns = _namespace(quota)
        self._quotas.setdefault(ns, set()).add(str(quota["metadata"]["name"]))
        self.queue.add(ns)

    def _on_quota_delete(self, quota: RawObject) -> None:
        ns = _namespace(quota)
        names = self._quotas.get(ns)
        if names is not None:
            names.discard(str(quota["metadata"]["name"]))
            if not names:
                del self._quotas[ns]

    # --- running -----------------------------------------------------------------------

    async def run(self) -> None:
        """Sync queued namespaces until cancelled (after the informers synced)."""
        try:
            await run_workers(self.queue, self.sync, NAME, self.workers)
        finally:
            await self.recorder.flush()

    async def sync(self, namespace: str) -> None:
        """Write ``status.used`` of the ElasticQuota of ``namespace`` if it changed."""
        names = sorted(self._quotas.get(namespace, ()))
        quota = self.quota_informer.get(f"{namespace}/{names[0]}") if names else None
        if quota is None:
            return
        found = (self.pod_informer.get(k) for k in self._pods.get(namespace, ()))
        pods = [p for p in found if p is not None]

        def new_status(current: RawObject) -> RawObject | None:
            status = dict(current.get("status") or {})
            used = compute_used(current, pods)
            if same_resource_list(used, status.get("used")):
                return None
            status["used"] = used
            return status

        try:
            written = await update_status(self.client, ELASTIC_QUOTAS.raw, quota, new_status)
        except NotFound:
            return  # deleted meanwhile
        if written is not None:
            self.recorder.event(
                written,
                "Normal",
                SYNCED_REASON,
                f"Elastic Quota {_key(written)} synced successfully",
            )


def start(ctx: ControllerContext) -> ElasticQuotaController:
    """The ElasticQuota controller's init function for the controller manager."""
    return ElasticQuotaController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(ELASTIC_QUOTAS),
    )
