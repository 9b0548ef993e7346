"""A simulated DRA driver: publishes ResourceSlices of GPUs for simulated nodes, as a
DRA driver's kubelet plugin publishes its node's devices.

The devices are shaped like those of the public DRA example driver
(``kubernetes-sigs/dra-example-driver``), driver ``gpu.example.com``: one pool per node
(named after the node), one ResourceSlice ``<node>-gpu.example.com`` with ``nodeName``
set, and devices ``gpu-0`` ... ``gpu-<n-1>`` with the attributes ``index`` (int),
``uuid`` (string, stable per node and index), ``model`` (``LATEST-GPU-MODEL``, or the
node's :data:`GPU_MODEL_ANNOTATION`) and ``driverVersion`` (version ``1.0.0``) and the
capacity ``memory`` (``80Gi``).

A simulated node (:func:`~kubesched.objects.nodes.is_simulated`) gets GPUs when its
annotation :data:`GPUS_ANNOTATION` says how many (``--node-template`` may carry it); a
node without it, or one a real kubelet runs, gets none. The example driver has one model;
a cluster with two kinds of GPU node (for a selector on the model to choose between)
names the other one in :data:`GPU_MODEL_ANNOTATION`. When some node has GPUs, the
DeviceClass ``gpu.example.com`` (``device.driver == 'gpu.example.com'``) is created if
missing, as the example driver's chart installs it. A slice follows its node: it is made
or corrected when the node appears or changes and deleted when the node goes (it also
has the Node as owner, so the garbage collector deletes it too). Slices of other
drivers, or written by any other client, are left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING, Any

from kubesched.kube import AlreadyExists, Client, Conflict, KubeError, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.resources import DEVICE_CLASSES, NODES, RESOURCE_SLICES, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.nodes import is_simulated

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = [
    "DRIVER",
    "GPUS_ANNOTATION",
    "GPU_MODEL_ANNOTATION",
    "MODEL",
    "NAME",
    "SimulatedDRADriver",
    "gpu_slice",
    "start",
]

log = logging.getLogger(__name__)

NAME = "dra-driver-simulator"
DRIVER = "gpu.example.com"
#: How many GPUs a simulated node has (``"8"``).
GPUS_ANNOTATION = "kubesched.io/dra-gpus"
#: The ``model`` attribute of a simulated node's GPUs (default :data:`MODEL`).
GPU_MODEL_ANNOTATION = "kubesched.io/dra-gpu-model"
#: The label on the slices this driver publishes: it changes and deletes only those.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MODEL = "LATEST-GPU-MODEL"
DRIVER_VERSION = "1.0.0"
MEMORY = "80Gi"
#: The namespace of the GPUs' stable UUIDs (uuid5 of node name and index).
_UUID_NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


def gpu_count(node: RawObject) -> int:
    """The GPUs a node has by :data:`GPUS_ANNOTATION` (0 if absent or not a number)."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    try:
        return max(int(annotations.get(GPUS_ANNOTATION) or 0), 0)
    except ValueError:
        return 0


def gpu_model(node: RawObject) -> str:
    """The model of the node's GPUs: :data:`GPU_MODEL_ANNOTATION`, else :data:`MODEL`."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(GPU_MODEL_ANNOTATION) or MODEL)


def slice_name(node_name: str) -> str:
    return f"{node_name}-{DRIVER}"


def gpu_slice(node: RawObject, count: int, generation: int = 0) -> RawObject:
    """The ResourceSlice of ``count`` example GPUs on ``node``."""
    meta = node["metadata"]
    node_name = str(meta["name"])
    devices = []
    model = gpu_model(node)
    for index in range(count):
        gpu_uuid = uuid.uuid5(_UUID_NAMESPACE, f"{node_name}/{index}")
        devices.append(
            {
                "name": f"gpu-{index}",
                "attributes": {
                    "index": {"int": index},
                    "uuid": {"string": f"gpu-{gpu_uuid}"},
                    "model": {"string": model},
                    "driverVersion": {"version": DRIVER_VERSION},
                },
                "capacity": {"memory": {"value": MEMORY}},
            }
        )
    owner = {"apiVersion": "v1", "kind": "Node", "name": node_name, "controller": True}
    if meta.get("uid"):
        owner["uid"] = meta["uid"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": slice_name(node_name),
            "labels": {MANAGED_BY_LABEL: NAME},
            "ownerReferences": [owner],
        },
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def device_class() -> RawObject:
    """The example driver's DeviceClass."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
    }


class SimulatedDRADriver:
    """Keeps one ResourceSlice of GPUs per simulated node that has some."""

    def __init__(
        self,
        client: Client,
        nodes: Informer[RawObject],
        slices: Informer[RawObject],
        classes: Informer[RawObject],
    ) -> None:
        self.client = client
        self.node_informer = nodes
        self.slice_informer = slices
        self.class_informer = classes
        self._queue: WorkQueue[str] = WorkQueue("dra_driver")
        nodes.add_handler(self._on_node, lambda _, new: self._on_node(new), self._on_node)
        slices.add_handler(self._on_slice, lambda _, new: self._on_slice(new), self._on_slice)

    def _on_node(self, node: RawObject) -> None:
        self._queue.add(str(node["metadata"]["name"]))

    def _on_slice(self, s: RawObject) -> None:
        spec = s.get("spec") or {}
        if spec.get("driver") == DRIVER and spec.get("nodeName"):
            self._queue.add(str(spec["nodeName"]))

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        for node in self.node_informer.list():
            self._on_node(node)
        task = asyncio.create_task(self._work())
        try:
            await task
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            if key is None:
                return
            try:
                await self.sync_node(key)
                self._queue.forget(key)
            except asyncio.CancelledError:
                raise
            except KubeError as exc:
                log.info("dra driver: node %s: %s", key, exc)
                self._queue.add_rate_limited(key)
            except Exception:
                log.exception("dra driver: syncing node %s failed", key)
                self._queue.add_rate_limited(key)
            finally:
                self._queue.done(key)

    async def sync_node(self, node_name: str) -> None:
        """Make the node's slice what its GPUs say (or delete it)."""
        node = self.node_informer.get(node_name)
        current = self.slice_informer.get(slice_name(node_name))
        if current is not None and _labels(current).get(MANAGED_BY_LABEL) != NAME:
            return  # published by someone else (a real driver): not ours to change
        count = gpu_count(node) if node is not None and is_simulated(node) else 0
        if count == 0:
            if current is not None:
                with contextlib.suppress(NotFound, Conflict):
                    await self.client.delete(
                        RESOURCE_SLICES,
                        slice_name(node_name),
                        uid=str(current["metadata"].get("uid", "")),
                    )
            return
        assert node is not None
        if self.class_informer.get(DRIVER) is None:
            with contextlib.suppress(AlreadyExists):
                await self.client.create(DEVICE_CLASSES.raw, device_class())
        if current is None:
            with contextlib.suppress(AlreadyExists):
                await self.client.create(RESOURCE_SLICES.raw, gpu_slice(node, count))
            return
        pool = (current.get("spec") or {}).get("pool") or {}
        generation = int(pool.get("generation") or 0)
        wanted = gpu_slice(node, count, generation)
        if current.get("spec") == wanted["spec"]:
            return
        # Republishing bumps the pool's generation, as a driver does.
        body: dict[str, Any] = gpu_slice(node, count, generation + 1)
        body["metadata"] = {**current["metadata"], **body["metadata"]}
        await self.client.update(RESOURCE_SLICES.raw, body)


def _labels(obj: RawObject) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def start(ctx: ControllerContext) -> SimulatedDRADriver:
    """The simulated driver's init function for the controller manager."""
    return SimulatedDRADriver(
        ctx.client(NAME),
        ctx.informers.informer(NODES),
        ctx.informers.informer(RESOURCE_SLICES),
        ctx.informers.informer(DEVICE_CLASSES),
    )
