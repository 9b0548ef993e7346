"""The simulated drivers' registration (``csi-node-registrar``): what the kubelet's plugin
watcher and the drivers' node-driver-registrar sidecars do on every node, and what the
drivers' deployment installs once.

* Every simulated node (:func:`~kubesched.objects.nodes.is_simulated`) has a CSINode of its
  name, owned by the Node (so it goes with it), listing both simulated drivers with the
  node's attach limit (:func:`~kubesched.controllers.csi.drivers.csi_node_drivers`). A
  CSINode that differs is rewritten; nodes that are not simulated are left alone.
* When it starts, it creates the drivers' CSIDriver objects and, unless told not to, the
  StorageClasses ``standard`` and ``zonal``
  (:func:`~kubesched.controllers.csi.drivers.storage_class_objects`), as kind's install
  creates ``standard``: objects that exist are kept as they are, and ``standard`` is
  made the default only when no class is the default yet.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from kubesched.controllers.controller_utils import run_workers
from kubesched.controllers.csi.drivers import (
    DRIVERS,
    csi_driver_object,
    csi_node_drivers,
    storage_class_objects,
)
from kubesched.controllers.volume.binderutil import default_class
from kubesched.controllers.volume.resources import CSI_DRIVERS, CSI_NODES, STORAGE_CLASSES
from kubesched.kube import AlreadyExists, Client, Informer, NotFound
from kubesched.kube.resources import NODES, RawObject, Resource
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.nodes import NodeTemplateError, is_simulated

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["NAME", "CSINodeRegistrar", "start"]

log = logging.getLogger(__name__)

NAME = "csi-node-registrar"


class CSINodeRegistrar:
    """Keeps the simulated nodes' CSINodes; installs the drivers and classes."""

    def __init__(
        self,
        client: Client,
        nodes: Informer[RawObject],
        csi_nodes: Informer[RawObject],
        install_storage_classes: bool = True,
    ) -> None:
        self.client = client
        self.nodes = nodes
        self.csi_nodes = csi_nodes
        self.install_storage_classes = install_storage_classes
        self.queue: WorkQueue[str] = WorkQueue(NAME)
        nodes.add_handler(self._enqueue, lambda _, new: self._enqueue(new))
        csi_nodes.add_handler(on_update=lambda _, new: self._enqueue(new), on_delete=self._enqueue)

    def _enqueue(self, obj: RawObject) -> None:
        self.queue.add(str(obj["metadata"]["name"]))

    async def run(self) -> None:
        """Install, then keep CSINodes until cancelled (after the informers synced)."""
        await self.nodes.has_synced.wait()
        await self.csi_nodes.has_synced.wait()
        await self.install()
        await run_workers(self.queue, self.sync, NAME, 1)

    async def install(self) -> None:
        """Create the CSIDriver objects and (if enabled) the StorageClasses missing."""
        for driver in DRIVERS.values():
            await _create_missing(self.client, CSI_DRIVERS, csi_driver_object(driver))
        if not self.install_storage_classes:
            return
        existing = await self.client.list_all(STORAGE_CLASSES)
        has_default = default_class(existing.items) is not None
        for cls in storage_class_objects():
            if has_default:
                (cls["metadata"].get("annotations") or {}).clear()
            await _create_missing(self.client, STORAGE_CLASSES, cls)

    async def sync(self, name: str) -> None:
        """Create or correct the CSINode of simulated node ``name``."""
        node = self.nodes.get(name)
        if node is None or not is_simulated(node):
            return
        try:
            drivers = csi_node_drivers(node)
        except NodeTemplateError as exc:
            log.warning("%s: node %s: %s", NAME, name, exc)
            return
        meta = node["metadata"]
        owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": meta.get("uid", "")}
        current = self.csi_nodes.get(name)
        if current is None:
            body = {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "CSINode",
                "metadata": {"name": name, "ownerReferences": [owner]},
                "spec": {"drivers": drivers},
            }
            # AlreadyExists: the cache is behind; its event requeues the node.
            with contextlib.suppress(AlreadyExists):
                await self.client.create(CSI_NODES, body)
            return
        if (current.get("metadata") or {}).get("deletionTimestamp"):
            return
        if (current.get("spec") or {}).get("drivers") == drivers:
            return
        updated = {**current, "spec": {**(current.get("spec") or {}), "drivers": drivers}}
        try:
            await self.client.update(CSI_NODES, updated)
        except NotFound:
            self.queue.add(name)


async def _create_missing(client: Client, resource: Resource[RawObject], body: RawObject) -> None:
    try:
        await client.create(resource, body)
    except AlreadyExists:
        return
    log.info("%s: created %s %s", NAME, resource, body["metadata"]["name"])


def start(ctx: ControllerContext) -> CSINodeRegistrar:
    """The registrar's init function for the controller manager."""
    return CSINodeRegistrar(
        ctx.client(NAME),
        ctx.informers.informer(NODES),
        ctx.informers.informer(CSI_NODES),
        install_storage_classes=ctx.options.install_storage_classes,
    )
