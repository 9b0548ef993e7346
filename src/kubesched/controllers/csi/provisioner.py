"""The simulated drivers' provisioner (``csi-provisioner``), after kubernetes-csi's
external-provisioner (``sig-storage-lib-external-provisioner``'s ProvisionController).

**Provisioning.** A claim is provisioned once the PV controller has handed it to one of
the simulated drivers (``volume.kubernetes.io/storage-provisioner``), it names no volume
yet, and, for a WaitForFirstConsumer class, the scheduler has chosen its node
(``volume.kubernetes.io/selected-node``). The volume is ``pvc-<claim uid>`` (so a retry
finds it), already pointing at the claim (the PV controller then binds the claim to it):
the requested capacity, the claim's access modes and volume mode, the class's reclaim
policy and mount options, a ``csi`` source of the driver, the annotation
``pv.kubernetes.io/provisioned-by`` and, with reclaim policy Delete, the finalizer
``external-provisioner.volume.kubernetes.io/finalizer``. Its node affinity is the
driver's topology (:mod:`~kubesched.controllers.csi.drivers`) taken from the selected
node's labels; without a selected node (an Immediate class) from one of the nodes whose
CSINode lists the driver, picked by the claim's uid (and the class's
``allowedTopologies``, which a selected node must satisfy too). A selected node that is
gone or cannot host the volume fails the provisioning (``ProvisioningFailed``) and gives
the claim back to the scheduler (the annotation is removed).

**Deletion.** A volume it provisioned that is Released with reclaim policy Delete is
deleted; once a volume with its finalizer is being deleted and no longer Bound, the
finalizer goes (the storage is freed).

Events as external-provisioner's: ``Provisioning``, ``ProvisioningSucceeded``,
``ProvisioningFailed``, from the driver's name.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import TYPE_CHECKING, Any

from kubesched.controllers.controller_utils import process_queue
from kubesched.controllers.csi.drivers import DRIVERS, DriverSpec
from kubesched.controllers.volume.binderutil import annotations_of, claim_key, claim_reference
from kubesched.controllers.volume.resources import (
    CSI_NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from kubesched.kube import AlreadyExists, Client, Informer, KubeError, NotFound
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import NODES, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.errors import ObjectError
from kubesched.objects.storage.persistentvolume import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
)
from kubesched.objects.storage.storageclass import StorageClass

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["FINALIZER", "NAME", "CSIProvisioner", "start"]

log = logging.getLogger(__name__)

NAME = "csi-provisioner"
#: external-provisioner's finalizer on the volumes it must delete (HonorPVReclaimPolicy).
FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer"
PROVISIONING = "Provisioning"
PROVISIONING_SUCCEEDED = "ProvisioningSucceeded"
PROVISIONING_FAILED = "ProvisioningFailed"


class _Failed(Exception):
    """Provisioning cannot succeed on the selected node: give the claim back."""


def _volume_name(claim: RawObject) -> str:
    return f"pvc-{(claim.get('metadata') or {}).get('uid', '')}"


class CSIProvisioner:
    """Provisions and deletes the volumes of the simulated drivers."""

    def __init__(
        self,
        client: Client,
        claims: Informer[RawObject],
        volumes: Informer[RawObject],
        classes: Informer[RawObject],
        nodes: Informer[RawObject],
        csi_nodes: Informer[RawObject],
    ) -> None:
        self.client = client
        self.claims = claims
        self.volumes = volumes
        self.classes = classes
        self.nodes = nodes
        self.csi_nodes = csi_nodes
        self.recorders = {name: EventRecorder(client, name) for name in DRIVERS}
        self.claim_queue: WorkQueue[str] = WorkQueue(f"{NAME}-claims")
        self.volume_queue: WorkQueue[str] = WorkQueue(f"{NAME}-volumes")
        claims.add_handler(self._claim, lambda _, new: self._claim(new))
        volumes.add_handler(self._volume, lambda _, new: self._volume(new))

    def _claim(self, claim: RawObject) -> None:
        if self._driver_of_claim(claim) is not None:
            self.claim_queue.add(claim_key(claim))

    def _volume(self, volume: RawObject) -> None:
        if annotations_of(volume).get(ANN_DYNAMICALLY_PROVISIONED) in DRIVERS:
            self.volume_queue.add(str(volume["metadata"]["name"]))

    @staticmethod
    def _driver_of_claim(claim: RawObject) -> DriverSpec | None:
        found = annotations_of(claim)
        name = found.get(ANN_STORAGE_PROVISIONER) or found.get(ANN_BETA_STORAGE_PROVISIONER)
        return DRIVERS.get(name or "")

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        for informer in (self.claims, self.volumes, self.classes, self.nodes, self.csi_nodes):
            await informer.has_synced.wait()
        tasks = [
            asyncio.create_task(
                process_queue(
                    self.claim_queue, self.sync_claim, NAME, (KubeError, ObjectError, _Failed)
                )
            ),
            asyncio.create_task(process_queue(self.volume_queue, self.sync_volume, NAME)),
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            self.claim_queue.shut_down()
            self.volume_queue.shut_down()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for recorder in self.recorders.values():
                await recorder.flush()

    # --- provisioning -----------------------------------------------------------------

    async def sync_claim(self, key: str) -> None:
        """Provision the claim ``namespace/name`` if it should be (``shouldProvision``)."""
        claim = self.claims.get(key)
        if claim is None:
            return
        driver = self._driver_of_claim(claim)
        meta = claim.get("metadata") or {}
        if driver is None or (claim.get("spec") or {}).get("volumeName"):
            return
        if meta.get("deletionTimestamp"):
            return
        if self.volumes.get(_volume_name(claim)) is not None:
            return  # provisioned already; the PV controller binds the claim
        class_name = str((claim.get("spec") or {}).get("storageClassName") or "")
        raw_class = self.classes.get(class_name)
        if raw_class is None or raw_class.get("provisioner") != driver.name:
            return
        cls = StorageClass.from_dict(raw_class)
        selected = annotations_of(claim).get(ANN_SELECTED_NODE, "")
        if cls.waits_for_first_consumer and not selected:
            return
        recorder = self.recorders[driver.name]
        recorder.event(
            claim,
            "Normal",
            PROVISIONING,
            f'External provisioner is provisioning volume for claim "{key}"',
        )
        try:
            affinity = self._topology(driver, cls, claim, selected)
        except _Failed as exc:
            recorder.event(
                claim,
                "Warning",
                PROVISIONING_FAILED,
                f"failed to provision volume with StorageClass {class_name!r}: {exc}",
            )
            if selected:
                await self._reschedule(claim)  # its update brings the claim back
                return
            raise  # retried with the queue's backoff (nodes may register the driver)
        volume = self._volume_for(driver, cls, raw_class, claim, affinity)
        try:
            await self.client.create(PERSISTENT_VOLUMES, volume)
        except AlreadyExists:
            return
        recorder.event(
            claim,
            "Normal",
            PROVISIONING_SUCCEEDED,
            f"Successfully provisioned volume {volume['metadata']['name']}",
        )

    def _topology(
        self, driver: DriverSpec, cls: StorageClass, claim: RawObject, selected: str
    ) -> str:
        """The value of the driver's topology label the volume is placed in."""
        key = driver.topology_key
        if selected:
            node = self.nodes.get(selected)
            if node is None:
                raise _Failed(f'node "{selected}" not found')
            labels = (node.get("metadata") or {}).get("labels") or {}
            value = labels.get(key)
            if not value:
                raise _Failed(f'node "{selected}" has no label {key}')
            if cls.allowed_topologies and not any(
                term.matches(labels) for term in cls.allowed_topologies
            ):
                raise _Failed(f'node "{selected}" is not in the class\'s allowedTopologies')
            return str(value)
        candidates = set()
        for csi_node in self.csi_nodes.list():
            drivers = (csi_node.get("spec") or {}).get("drivers") or ()
            if not any(d.get("name") == driver.name for d in drivers if isinstance(d, dict)):
                continue
            node = self.nodes.get(str(csi_node["metadata"]["name"]))
            labels = ((node or {}).get("metadata") or {}).get("labels") or {}
            if cls.allowed_topologies and not any(
                term.matches(labels) for term in cls.allowed_topologies
            ):
                continue
            if labels.get(key):
                candidates.add(str(labels[key]))
        if not candidates:
            raise _Failed(f"no node has driver {driver.name} with a {key} label")
        ordered = sorted(candidates)
        uid = str((claim.get("metadata") or {}).get("uid", ""))
        return ordered[int(hashlib.sha256(uid.encode()).hexdigest(), 16) % len(ordered)]

    @staticmethod
    def _volume_for(
        driver: DriverSpec,
        cls: StorageClass,
        raw_class: RawObject,
        claim: RawObject,
        topology_value: str,
    ) -> RawObject:
        spec = claim.get("spec") or {}
        requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
        name = _volume_name(claim)
        mode = spec.get("volumeMode") or "Filesystem"
        source: dict[str, Any] = {"driver": driver.name, "volumeHandle": name}
        if mode == "Filesystem":
            source["fsType"] = cls.parameters.get("csi.storage.k8s.io/fstype", "ext4")
        meta: dict[str, Any] = {
            "name": name,
            "annotations": {ANN_DYNAMICALLY_PROVISIONED: driver.name},
        }
        if cls.reclaim_policy == "Delete":
            meta["finalizers"] = [FINALIZER]
        volume: RawObject = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": meta,
            "spec": {
                "capacity": {"storage": requested},
                "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                "persistentVolumeReclaimPolicy": cls.reclaim_policy,
                "storageClassName": cls.name,
                "volumeMode": mode,
                "claimRef": claim_reference(claim),
                "csi": source,
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": driver.topology_key,
                                        "operator": "In",
                                        "values": [topology_value],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }
        options = raw_class.get("mountOptions")
        if options:
            volume["spec"]["mountOptions"] = list(options)
        return volume

    async def _reschedule(self, claim: RawObject) -> None:
        """Remove ``volume.kubernetes.io/selected-node``: the scheduler chooses again."""
        meta = claim["metadata"]
        found = {k: v for k, v in annotations_of(claim).items() if k != ANN_SELECTED_NODE}
        body = {
            **claim,
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {**meta, "annotations": found},
        }
        try:
            await self.client.update(PERSISTENT_VOLUME_CLAIMS, body)
        except NotFound:
            return

    # --- deletion ---------------------------------------------------------------------

    async def sync_volume(self, name: str) -> None:
        """Delete a Released volume of reclaim policy Delete; drop the finalizer of one
        being deleted that is no longer Bound."""
        volume = self.volumes.get(name)
        if volume is None:
            return
        meta = volume.get("metadata") or {}
        spec = volume.get("spec") or {}
        phase = (volume.get("status") or {}).get("phase")
        if meta.get("deletionTimestamp"):
            if FINALIZER in (meta.get("finalizers") or ()) and phase != "Bound":
                finalizers = [f for f in meta.get("finalizers") or () if f != FINALIZER]
                body = {
                    **volume,
                    "apiVersion": "v1",
                    "kind": "PersistentVolume",
                    "metadata": {**meta, "finalizers": finalizers},
                }
                try:
                    await self.client.update(PERSISTENT_VOLUMES, body)
                except NotFound:
                    return
            return
        if phase == "Released" and spec.get("persistentVolumeReclaimPolicy") == "Delete":
            try:
                await self.client.delete(PERSISTENT_VOLUMES, name, uid=str(meta.get("uid", "")))
            except NotFound:
                return
            log.info("%s: deleted released volume %s", NAME, name)


def start(ctx: ControllerContext) -> CSIProvisioner:
    """The provisioner's init function for the controller manager."""
    return CSIProvisioner(
        ctx.client(NAME),
        ctx.informers.informer(PERSISTENT_VOLUME_CLAIMS),
        ctx.informers.informer(PERSISTENT_VOLUMES),
        ctx.informers.informer(STORAGE_CLASSES),
        ctx.informers.informer(NODES),
        ctx.informers.informer(CSI_NODES),
    )
