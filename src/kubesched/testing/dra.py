"""Fluent builders of resource.k8s.io/v1 objects, in the manner of upstream's
``pkg/scheduler/testing/wrappers.go`` (``MakeResourceClaim``, ``MakeResourceSlice``,
``MakeDeviceClass``): the Kubernetes JSON, which tests send to the API server or decode
with :mod:`kubesched.objects.dra`.

    slice_ = make_slice("node-a-gpu", "gpu.example.com").node("node-a").pool("node-a")
    slice_.device("gpu-0", model="LATEST-GPU-MODEL", index=0, memory_capacity="80Gi")
    claim = make_claim("shared", "demo").request("gpu", "gpu.example.com").obj()
"""

from __future__ import annotations

import copy
from typing import Any

API_VERSION = "resource.k8s.io/v1"


def attribute(value: Any) -> dict[str, Any]:
    """A ``DeviceAttribute`` for a Python value (``v1.2.3`` strings become versions when
    given as ``("version", "1.2.3")``)."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "version":
        return {"version": value[1]}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": str(value)}


class DeviceClassWrapper:
    """Builds a DeviceClass."""

    def __init__(self, name: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {},
        }

    def selector(self, expression: str) -> DeviceClassWrapper:
        self.raw["spec"].setdefault("selectors", []).append({"cel": {"expression": expression}})
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)


def make_device_class(name: str) -> DeviceClassWrapper:
    """A DeviceClass named ``name`` with no selectors."""
    return DeviceClassWrapper(name)


class SliceWrapper:
    """Builds a ResourceSlice: one pool (generation 0, one slice) on one node by default."""

    def __init__(self, name: str, driver: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": driver,
                "pool": {"name": name, "generation": 0, "resourceSliceCount": 1},
            },
        }

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.raw["spec"]
        return spec

    def node(self, name: str) -> SliceWrapper:
        self._spec["nodeName"] = name
        return self

    def all_nodes(self) -> SliceWrapper:
        self._spec["allNodes"] = True
        return self

    def node_selector(self, key: str, *values: str) -> SliceWrapper:
        self._spec["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
            ]
        }
        return self

    def pool(self, name: str, generation: int = 0, slices: int = 1) -> SliceWrapper:
        self._spec["pool"] = {
            "name": name,
            "generation": generation,
            "resourceSliceCount": slices,
        }
        return self

    def device(
        self, name: str, capacity: dict[str, str] | None = None, **attributes: Any
    ) -> SliceWrapper:
        """A device with attributes (keyword names; ``attrs`` for qualified ones) and
        capacities (``{"memory": "80Gi"}``)."""
        dev: dict[str, Any] = {"name": name}
        qualified = attributes.pop("attrs", {})
        merged = {**attributes, **qualified}
        if merged:
            dev["attributes"] = {k: attribute(v) for k, v in merged.items()}
        if capacity:
            dev["capacity"] = {k: {"value": v} for k, v in capacity.items()}
        self._spec.setdefault("devices", []).append(dev)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)


def make_slice(name: str, driver: str) -> SliceWrapper:
    """A ResourceSlice of ``driver`` (pool named after the slice; no node yet)."""
    return SliceWrapper(name, driver)


def _request(
    name: str,
    device_class: str,
    selectors: tuple[str, ...],
    mode: str,
    count: int | None,
    admin: bool,
) -> dict[str, Any]:
    req: dict[str, Any] = {"deviceClassName": device_class}
    if selectors:
        req["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if mode:
        req["allocationMode"] = mode
    if count is not None:
        req["count"] = count
    if admin:
        req["adminAccess"] = True
    return req


class ClaimWrapper:
    """Builds a ResourceClaim (or, with :meth:`template`, a ResourceClaimTemplate)."""

    def __init__(self, name: str, namespace: str) -> None:
        self.raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": []}},
        }

    @property
    def _devices(self) -> dict[str, Any]:
        devices: dict[str, Any] = self.raw["spec"]["devices"]
        return devices

    def request(
        self,
        name: str,
        device_class: str,
        *selectors: str,
        mode: str = "",
        count: int | None = None,
        admin: bool = False,
    ) -> ClaimWrapper:
        """An ``exactly`` request."""
        exactly = _request(name, device_class, selectors, mode, count, admin)
        self._devices["requests"].append({"name": name, "exactly": exactly})
        return self

    def first_available(self, name: str, *subs: tuple[str, str]) -> ClaimWrapper:
        """A ``firstAvailable`` request of (subrequest name, device class) pairs."""
        items = [{"name": n, "deviceClassName": c} for n, c in subs]
        self._devices["requests"].append({"name": name, "firstAvailable": items})
        return self

    def match_attribute(self, attribute: str, *requests: str) -> ClaimWrapper:
        constraint: dict[str, Any] = {"matchAttribute": attribute}
        if requests:
            constraint["requests"] = list(requests)
        self._devices.setdefault("constraints", []).append(constraint)
        return self

    def owned_by(self, pod_name: str, pod_uid: str) -> ClaimWrapper:
        self.raw["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod_name,
                "uid": pod_uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        return self

    def annotate(self, key: str, value: str) -> ClaimWrapper:
        self.raw["metadata"].setdefault("annotations", {})[key] = value
        return self

    def allocated(self, *results: tuple[str, str, str, str]) -> ClaimWrapper:
        """``status.allocation`` with (request, driver, pool, device) results."""
        self.raw["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": r, "driver": d, "pool": p, "device": dev}
                        for r, d, p, dev in results
                    ]
                }
            }
        }
        return self

    def uid(self, uid: str) -> ClaimWrapper:
        self.raw["metadata"]["uid"] = uid
        return self

    def deleting(self) -> ClaimWrapper:
        """A ``deletionTimestamp`` (and the finalizer that keeps the claim)."""
        self.raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        self.raw["metadata"].setdefault("finalizers", []).append(
            "resource.kubernetes.io/delete-protection"
        )
        return self

    def finalizer(self, name: str = "resource.kubernetes.io/delete-protection") -> ClaimWrapper:
        self.raw["metadata"].setdefault("finalizers", []).append(name)
        return self

    def allocated_on(self, node_name: str) -> ClaimWrapper:
        """Restrict the allocation (set by :meth:`allocated`) to one node, as an
        allocation of node-local devices is."""
        self.raw["status"]["allocation"]["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
        return self

    def reserved_for(self, pod_name: str, pod_uid: str) -> ClaimWrapper:
        self.raw.setdefault("status", {}).setdefault("reservedFor", []).append(
            {"resource": "pods", "name": pod_name, "uid": pod_uid}
        )
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self.raw)

    def template(self) -> dict[str, Any]:
        """The same spec as a ResourceClaimTemplate."""
        meta = self.raw["metadata"]
        return {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "spec": {"spec": copy.deepcopy(self.raw["spec"])},
        }


def make_claim(name: str, namespace: str = "default") -> ClaimWrapper:
    """A ResourceClaim with no requests yet."""
    return ClaimWrapper(name, namespace)
