"""The pod garbage collector, as ``pkg/controller/podgc/gc_controller.go`` runs it.

Every ``interval`` seconds (upstream's ``gcCheckPeriod``, 20 s) it looks at every pod in
the cache, as upstream's ``gc`` does:

* **terminated pods** (phase Succeeded or Failed) beyond ``terminated_threshold``
  (``--terminated-pod-gc-threshold``, 12,500) are deleted, evicted ones first, then the
  oldest (``gcTerminated``);
* **orphaned pods**: the nodes that pods are bound to but the cache lacks are put in
  quarantine; one still missing ``quarantine`` seconds later is read once from the server
  (a node that only the cache missed is not a deleted one), and if it is gone each pod
  bound to it is marked Failed with the condition DisruptionTarget (reason
  DeletionByPodGC, message ``PodGC: node no longer exists``) unless already terminal,
  then deleted with grace period 0 (``gcOrphaned``);
* **unscheduled terminating pods** (a deletionTimestamp and no node) are marked Failed
  and deleted with grace period 0 (``gcUnscheduledTerminating``).

Differences from upstream: the quarantine defaults to 0.1 s, not 40 s, and a node's
deletion starts one at once rather than at the next pass, so that a deleted simulated
node's pods go promptly; deletes carry the pod's UID as a precondition; pods on
out-of-service nodes (``gcTerminating``) are not handled (nothing here taints nodes so).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kubesched.controllers import podstatus
from kubesched.kube import Client, Conflict, KubeError, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.resources import NODES, PODS, RawObject

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "PodGCController", "start"]

log = logging.getLogger(__name__)

NAME = "pod-garbage-collector-controller"
_TERMINAL = ("Succeeded", "Failed")


def _key(pod: RawObject) -> tuple[bool, str, str, str]:
    # byEvictionAndCreationTimestamp: evicted first, then the oldest, names break ties.
    meta, status = pod["metadata"], pod.get("status") or {}
    evicted = status.get("phase") == "Failed" and status.get("reason") == "Evicted"
    return (
        not evicted,
        str(meta.get("creationTimestamp", "")),
        meta.get("namespace", ""),
        meta["name"],
    )


class PodGCController:
    """Collects terminated, orphaned and unscheduled terminating pods; built by
    :func:`start`."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        nodes: Informer[RawObject],
        interval: float = 20.0,
        quarantine: float = 40.0,
        terminated_threshold: int = 12500,
    ) -> None:
        self.client = client
        self.pod_informer = pods
        self.node_informer = nodes
        self.interval = interval
        self.quarantine = quarantine
        self.terminated_threshold = terminated_threshold
        #: Node name -> when the pass first found it missing.
        self._missing: dict[str, float] = {}
        self._wake = asyncio.Event()
        nodes.add_handler(on_delete=self._on_node_delete)

    def _on_node_delete(self, node: RawObject) -> None:
        name = str(node["metadata"]["name"])
        self._missing.setdefault(name, time.monotonic())
        asyncio.get_running_loop().call_later(self.quarantine, self._wake.set)

    async def run(self) -> None:
        """Collect every ``interval`` seconds (and when a quarantine ends) until cancelled."""
        while True:
            self._wake.clear()
            try:
                await self.gc()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug: log it, keep collecting
                log.exception("podgc: a pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)

    async def gc(self) -> None:
        """One pass over every pod in the cache (see the module docstring)."""
        pods = self.pod_informer.list()
        if self.terminated_threshold > 0:
            await self._gc_terminated(pods)
        await self._gc_orphaned(pods)
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp") and not pod["spec"].get("nodeName"):
                await self._mark_failed_and_delete(pod, None)

    async def _gc_terminated(self, pods: list[RawObject]) -> None:
        terminated = [p for p in pods if (p.get("status") or {}).get("phase") in _TERMINAL]
        excess = len(terminated) - self.terminated_threshold
        if excess <= 0:
            return
        log.info("podgc: deleting %d terminated pods", excess)
        for pod in sorted(terminated, key=_key)[:excess]:
            await self._mark_failed_and_delete(pod, None)

    async def _gc_orphaned(self, pods: list[RawObject]) -> None:
        now = time.monotonic()
        bound = {str(p["spec"].get("nodeName") or "") for p in pods} - {""}
        for name in bound:
            if self.node_informer.get(name) is None and name not in self._missing:
                self._missing[name] = now
                asyncio.get_running_loop().call_later(self.quarantine, self._wake.set)
        deleted: set[str] = set()
        for name, since in list(self._missing.items()):
            if self.node_informer.get(name) is not None or name not in bound:
                del self._missing[name]  # back, or nothing bound to it any more
            elif now - since >= self.quarantine:
                try:
                    await self.client.get(NODES.raw, name)
                    del self._missing[name]  # only our cache missed it
                except NotFound:
                    deleted.add(name)
                except KubeError as exc:
                    log.warning("podgc: reading node %s: %s", name, exc)
        for pod in pods:
            if pod["spec"].get("nodeName") in deleted:
                await self._mark_failed_and_delete(pod, podstatus.failed_by_pod_gc)

    async def _mark_failed_and_delete(
        self, pod: RawObject, failed: Callable[[RawObject], RawObject] | None
    ) -> None:
        meta = pod["metadata"]
        name, namespace, uid = meta["name"], meta.get("namespace"), str(meta.get("uid", ""))
        try:
            for _ in range(3):
                if (pod.get("status") or {}).get("phase") in _TERMINAL:
                    break
                status = failed(pod) if failed is not None else _failed(pod)
                patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
                try:
                    await self.client.patch(PODS.raw, name, patch, namespace, "merge", "status")
                    break
                except Conflict:
                    pod = await self.client.get(PODS.raw, name, namespace)
                    if str(pod["metadata"].get("uid", "")) != uid:
                        return  # another pod of that name now
                    meta = pod["metadata"]
            await self.client.delete(PODS, name, namespace, 0, uid=uid)
        except (NotFound, Conflict):
            return  # gone, or the name is another pod's now
        except KubeError as exc:
            log.warning("podgc: deleting pod %s/%s: %s", namespace, name, exc)


def _failed(pod: RawObject) -> RawObject:
    status = dict(pod.get("status") or {})
    status["phase"] = "Failed"
    return status


def start(ctx: ControllerContext) -> PodGCController:
    """The pod garbage collector's init function for the controller manager."""
    opts = ctx.options
    return PodGCController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(NODES),
        interval=opts.pod_gc_interval,
        quarantine=opts.gc_delay,
        terminated_threshold=opts.terminated_pod_gc_threshold,
    )
