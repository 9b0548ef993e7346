"""What the PV controller and a provisioner would do, in a simulation.

A simulation has no API server and no controllers: the storage objects of the cluster
file live in the simulator's in-memory store (:class:`~kubesched.framework.apiclient.
MemoryAPIClient`), which the scheduler's VolumeBinding reads through the cluster lister
and writes from PreBind. :class:`SimulatedVolumes` keeps the lister equal to the store
and, after every write, does at once what the controllers would do soon after:

- binds claims the PV controller binds without the scheduler (upstream's
  ``syncUnboundClaim``): Immediate claims to their best matching volume (or to a volume
  provisioned for them), pre-bound claims and volumes to each other, and the volumes
  the scheduler's PreBind pointed at a claim (``claimRef``);
- provisions a WaitForFirstConsumer claim once the scheduler has chosen its node
  (``volume.kubernetes.io/selected-node``): a volume ``pvc-<claim uid>`` of the claim's
  size, modes and class, whose node affinity is the node's topology for the class's
  provisioner — the topology keys the node's CSINode lists for the driver, else the keys
  of the class's ``allowedTopologies`` — then binds it.

So each pod of a simulation sees the volumes of the pods before it: bound claims, their
zones, the volumes counted against a node's attach limit, a ReadWriteOncePod claim in use.

DEVIATIONS: a provisioner that is neither a CSI driver listed by the node's CSINode nor
restricted by ``allowedTopologies`` gets volumes without node affinity (reachable from
every node); provisioning never fails for lack of capacity; reclaim, expansion and
attach/detach are not simulated.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.framework.apiclient import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    APIResource,
    MemoryAPIClient,
    RawObject,
)
from kubesched.framework.handle import StaticClusterLister
from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
    find_best_match_for_claim,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
)

__all__ = ["STORAGE_RESOURCES", "SimulatedVolumes"]

STORAGE_CLASSES = APIResource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False)
CSI_NODES = APIResource("storage.k8s.io", "v1", "csinodes", "CSINode", False)
CSI_DRIVERS = APIResource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False)
CSI_STORAGE_CAPACITIES = APIResource(
    "storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True
)
VOLUME_ATTACHMENTS = APIResource(
    "storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False
)

#: The kinds the store holds, with their typed views.
STORAGE_RESOURCES: Mapping[str, tuple[APIResource, Callable[[object], Any]]] = {
    "PersistentVolume": (PERSISTENT_VOLUMES, PersistentVolume.from_dict),
    "PersistentVolumeClaim": (PERSISTENT_VOLUME_CLAIMS, PersistentVolumeClaim.from_dict),
    "StorageClass": (STORAGE_CLASSES, StorageClass.from_dict),
    "CSINode": (CSI_NODES, CSINode.from_dict),
    "CSIDriver": (CSI_DRIVERS, CSIDriver.from_dict),
    "CSIStorageCapacity": (CSI_STORAGE_CAPACITIES, CSIStorageCapacity.from_dict),
    "VolumeAttachment": (VOLUME_ATTACHMENTS, VolumeAttachment.from_dict),
}
_DECODERS = {resource: decode for resource, decode in STORAGE_RESOURCES.values()}

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
#: Namespace for the uids the store gives objects that have none (reproducible runs).
_UID_NAMESPACE = uuid.UUID("6f1d4c1e-2b4a-4b59-9d4e-1c1f0a9e7d21")


class SimulatedVolumes:
    """The storage objects of a simulation and the controllers acting on them.

    **store**: the simulator's API store; **lister**: the cluster lister the plugins read
    (kept equal to the store); **node_labels**: a node's labels by name (None if none).
    """

    def __init__(
        self,
        store: MemoryAPIClient,
        lister: StaticClusterLister,
        node_labels: Callable[[str], Mapping[str, str] | None],
    ) -> None:
        self.store = store
        self.lister = lister
        self._node_labels = node_labels
        self._settling = False
        #: Claims to look at again (``namespace/name``); all of them when ``_all``.
        self._pending: set[str] = set()
        self._all = False
        #: The volume whose claimRef names each claim (pre-bound, or by PreBind).
        self._claimed_by: dict[str, str] = {}
        store.on_change(self._changed)

    # --- loading ----------------------------------------------------------------------

    def load(self, objects: Iterable[RawObject]) -> None:
        """Put the cluster file's storage objects in the store (uids given where
        missing), then let the controllers act."""
        self._settling = True  # one pass at the end, not one per object
        try:
            for given in objects:
                raw = copy.deepcopy(given)
                kind = str(raw.get("kind", ""))
                if kind not in STORAGE_RESOURCES:
                    raise ValueError(f"not a storage object: kind {kind!r}")
                resource, _ = STORAGE_RESOURCES[kind]
                meta = raw.setdefault("metadata", {})
                if not meta.get("uid"):
                    key = f"{kind}/{meta.get('namespace', '')}/{meta.get('name', '')}"
                    meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, key))
                self.store.add(resource, raw)
        finally:
            self._settling = False
        self._all = True
        self.settle()

    # --- keeping the lister equal to the store -------------------------------------------

    def _changed(self, resource: APIResource, old: RawObject | None, new: RawObject | None) -> None:
        decode = _DECODERS.get(resource)
        if decode is None:
            return
        before = decode(old) if old is not None else None
        after = decode(new) if new is not None else None
        if after is not None:
            self.lister.put(after)
        elif before is not None:
            self.lister.delete(before)
        if resource == PERSISTENT_VOLUME_CLAIMS:
            changed = after if after is not None else before
            if changed is not None:
                self._pending.add(changed.key)
        elif resource == PERSISTENT_VOLUMES:
            for volume in (before, after):
                ref = volume.claim_ref if volume is not None else None
                if ref is not None:
                    self._pending.add(ref.key)
                    self._claimed_by.pop(ref.key, None)
            if after is not None and after.claim_ref is not None:
                self._claimed_by[after.claim_ref.key] = after.name
        else:
            return
        self.settle()

    # --- the controllers --------------------------------------------------------------

    def settle(self) -> None:
        """Sync the claims that changed (or whose volume did) until nothing changes; the
        writes made meanwhile come back through :meth:`_changed` and join the run."""
        if self._settling:
            return
        self._settling = True
        try:
            while self._all or self._pending:
                if self._all:
                    self._all = False
                    keys = [c.key for c in self.lister.persistent_volume_claims()]
                else:
                    keys = list(self._pending)
                self._pending.clear()
                for key in keys:
                    namespace, _, name = key.partition("/")
                    claim = self.lister.persistent_volume_claim(namespace, name)
                    if claim is not None and not claim.deleting and not claim.is_fully_bound:
                        self._sync_claim(claim)
        finally:
            self._settling = False

    def _sync_claim(self, claim: PersistentVolumeClaim) -> None:
        """Upstream's syncUnboundClaim, at once."""
        if claim.volume_name:
            # Pre-bound by the user: bind when the volume exists and is free for it.
            volume = self.lister.persistent_volume(claim.volume_name)
            if volume is not None and (
                volume.claim_ref is None or is_volume_bound_to_claim(volume, claim)
            ):
                self._bind(volume, claim)
            return
        # A volume pointing at the claim (pre-bound, or the scheduler's choice) wins.
        name = self._claimed_by.get(claim.key)
        volume = self.lister.persistent_volume(name) if name else None
        if volume is not None and is_volume_bound_to_claim(volume, claim):
            self._bind(volume, claim)
            return
        delay = is_delay_binding_mode(claim, self.lister.storage_class)
        selected = claim.selected_node
        if delay and not selected:
            return  # waits for the scheduler (WaitForFirstConsumer)
        if not delay:
            found = find_best_match_for_claim(claim, self.lister.persistent_volumes())
            if found is not None:
                self._bind(found, claim)
                return
        cls = self.lister.storage_class(claim.storage_class_name)
        if cls is None or not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
            return  # stays Pending: no volume and no provisioner
        provisioned = self._provision(claim, cls, selected)
        if provisioned is not None:
            self._bind(provisioned, claim)

    def _provision(
        self, claim: PersistentVolumeClaim, cls: StorageClass, selected: str
    ) -> PersistentVolume | None:
        """Create the claim's volume, placed by the node's topology (``selected``), or
        by the class's allowed topologies for an Immediate claim."""
        affinity = self._topology(cls, selected)
        if affinity is None:
            return None  # the selected node is gone: it stays with the scheduler
        name = f"pvc-{claim.uid}" if claim.uid else f"pvc-{claim.namespace}-{claim.name}"
        spec: RawObject = {
            "capacity": {"storage": str(claim.request)},
            "accessModes": list(claim.access_modes),
            "volumeMode": claim.volume_mode,
            "storageClassName": cls.name,
            "persistentVolumeReclaimPolicy": cls.reclaim_policy,
            "csi": {"driver": cls.provisioner, "volumeHandle": name},
            "claimRef": _claim_reference(claim),
        }
        if affinity:
            spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": key, "operator": "In", "values": [value]}
                                for key, value in affinity.items()
                            ]
                        }
                    ]
                }
            }
        raw: RawObject = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": name,
                "uid": str(uuid.uuid5(_UID_NAMESPACE, f"PersistentVolume//{name}")),
                "annotations": {ANN_PROVISIONED_BY: cls.provisioner},
            },
            "spec": spec,
            "status": {"phase": "Pending"},
        }
        return PersistentVolume.from_dict(self.store.create(PERSISTENT_VOLUMES, raw))

    def _topology(self, cls: StorageClass, selected: str) -> dict[str, str] | None:
        """The topology labels the new volume requires: the selected node's values of
        the driver's topology keys (its CSINode) or of the class's allowed topologies;
        None if the selected node is unknown."""
        if selected:
            labels = self._node_labels(selected)
            if labels is None:
                return None
            keys: list[str] = []
            csi_node = self.lister.csi_node(selected)
            driver = csi_node.driver(cls.provisioner) if csi_node is not None else None
            if driver is not None and driver.topology_keys:
                keys = list(driver.topology_keys)
            else:
                for term in cls.allowed_topologies:
                    keys.extend(k for k, _ in term.match_label_expressions if k not in keys)
            return {key: labels[key] for key in keys if key in labels}
        # Immediate: the class's first allowed topology, if it restricts one.
        if cls.allowed_topologies:
            term = cls.allowed_topologies[0]
            return {key: values[0] for key, values in term.match_label_expressions if values}
        return {}

    def _bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """The PV controller's bind: the volume's claimRef and phase, then the claim's
        volumeName, annotations and phase."""
        by_controller = not is_volume_bound_to_claim(volume, claim)
        raw_pv = self.store.get(PERSISTENT_VOLUMES, volume.name)
        meta = raw_pv.setdefault("metadata", {})
        if by_controller:
            meta.setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
        raw_pv.setdefault("spec", {})["claimRef"] = _claim_reference(claim)
        status = {**(raw_pv.get("status") or {}), "phase": "Bound"}
        raw_pv = self.store.update(PERSISTENT_VOLUMES, raw_pv)
        self.store.update_status(PERSISTENT_VOLUMES, {**raw_pv, "status": status})
        raw_pvc = self.store.get(PERSISTENT_VOLUME_CLAIMS, claim.name, claim.namespace)
        annotations = raw_pvc.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANN_BIND_COMPLETED] = "yes"
        if by_controller:
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        raw_pvc.setdefault("spec", {})["volumeName"] = volume.name
        status = {
            **(raw_pvc.get("status") or {}),
            "phase": "Bound",
            "accessModes": list(volume.access_modes),
            "capacity": {"storage": str(volume.capacity)},
        }
        raw_pvc = self.store.update(PERSISTENT_VOLUME_CLAIMS, raw_pvc)
        self.store.update_status(PERSISTENT_VOLUME_CLAIMS, {**raw_pvc, "status": status})


def _claim_reference(claim: PersistentVolumeClaim) -> RawObject:
    ref: RawObject = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": claim.namespace,
        "name": claim.name,
    }
    if claim.uid:
        ref["uid"] = claim.uid
    return ref
