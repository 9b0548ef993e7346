"""The simulated CSI drivers and the StorageClasses installed for them.

* :data:`LOCAL_DRIVER` (``local.csi.kubesched.io``): node-local volumes, like kind's
  ``rancher.io/local-path`` or csi-driver-host-path. A volume lives on one node: node
  affinity on ``kubernetes.io/hostname``. Nothing to attach.
* :data:`ZONAL_DRIVER` (``zonal.csi.kubesched.io``): network disks of a zone, like a
  cloud's block storage. A volume is reachable from every node of its zone (node affinity
  on ``topology.kubernetes.io/zone``) and must be attached to a node before a pod there
  uses it (``attachRequired``).

Each node reports, per driver, how many of its volumes it may use at once
(``allocatable.count``: the node's attach limit, :func:`kubesched.objects.nodes.node_attach_limit`).

Classes: :data:`STANDARD_CLASS` (``standard``, the default, WaitForFirstConsumer, local
volumes — kind's default class) and :data:`ZONAL_CLASS` (``zonal``, WaitForFirstConsumer,
zonal volumes), both with reclaim policy Delete and volume expansion allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched.kube.resources import RawObject
from kubesched.objects.nodes import HOSTNAME_LABEL, ZONE_LABEL, node_attach_limit
from kubesched.objects.storage.storageclass import ANN_DEFAULT_CLASS

__all__ = [
    "DRIVERS",
    "LOCAL_DRIVER",
    "STANDARD_CLASS",
    "ZONAL_CLASS",
    "ZONAL_DRIVER",
    "DriverSpec",
    "csi_driver_object",
    "csi_node_drivers",
    "storage_class_objects",
]

LOCAL_DRIVER = "local.csi.kubesched.io"
ZONAL_DRIVER = "zonal.csi.kubesched.io"
STANDARD_CLASS = "standard"
ZONAL_CLASS = "zonal"


@dataclass(frozen=True)
class DriverSpec:
    """One simulated driver: its name, the node label its volumes' topology is on, and
    whether its volumes are attached to a node before use."""

    name: str
    topology_key: str
    attach_required: bool


DRIVERS: Mapping[str, DriverSpec] = {
    LOCAL_DRIVER: DriverSpec(LOCAL_DRIVER, HOSTNAME_LABEL, attach_required=False),
    ZONAL_DRIVER: DriverSpec(ZONAL_DRIVER, ZONE_LABEL, attach_required=True),
}


def csi_driver_object(driver: DriverSpec) -> RawObject:
    """The storage.k8s.io/v1 CSIDriver a driver's deployment installs."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": driver.name, "labels": {"app.kubernetes.io/part-of": "kubesched"}},
        "spec": {
            "attachRequired": driver.attach_required,
            "podInfoOnMount": False,
            "requiresRepublish": False,
            "storageCapacity": False,
            "fsGroupPolicy": "File",
            "volumeLifecycleModes": ["Persistent"],
        },
    }


def storage_class_objects() -> list[RawObject]:
    """The classes installed in the embedded cluster: ``standard`` (default) and
    ``zonal``."""

    def storage_class(name: str, driver: str, default: bool) -> RawObject:
        meta: dict[str, Any] = {"name": name}
        if default:
            meta["annotations"] = {ANN_DEFAULT_CLASS: "true"}
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta,
            "provisioner": driver,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }

    return [
        storage_class(STANDARD_CLASS, LOCAL_DRIVER, True),
        storage_class(ZONAL_CLASS, ZONAL_DRIVER, False),
    ]


def csi_node_drivers(node: Mapping[str, Any]) -> list[RawObject]:
    """The ``spec.drivers`` of a simulated node's CSINode: every driver, its node ID (the
    node's name), its topology key, and the node's attach limit as ``allocatable.count``.
    Raises :class:`~kubesched.objects.nodes.NodeTemplateError` for a bad limit."""
    name = str((node.get("metadata") or {}).get("name", ""))
    limit = node_attach_limit(dict(node))
    return [
        {
            "name": driver.name,
            "nodeID": name,
            "topologyKeys": [driver.topology_key],
            "allocatable": {"count": limit},
        }
        for driver in DRIVERS.values()
    ]
