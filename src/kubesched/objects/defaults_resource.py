"""Defaulting of resource.k8s.io/v1 kinds (``pkg/apis/resource/v1/defaults.go``).

An ``exactly`` request and each ``firstAvailable`` subrequest get ``allocationMode:
ExactCount`` and, in that mode, ``count: 1``; a device toleration gets ``operator:
Equal``. Values of the wrong JSON type are left alone for validation to report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Object = dict[str, Any]


def _request(req: Any) -> None:
    # SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest.
    if not isinstance(req, dict):
        return
    if not req.get("allocationMode"):
        req["allocationMode"] = "ExactCount"
    if req["allocationMode"] == "ExactCount" and not req.get("count"):
        req["count"] = 1
    for toleration in req.get("tolerations") or []:
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def _device_claim(spec: Any) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(requests, list):
        return
    for req in requests:
        if not isinstance(req, dict):
            continue
        _request(req.get("exactly"))
        for sub in req.get("firstAvailable") or []:
            _request(sub)


def default_resource_claim(obj: Object) -> None:
    """Defaults of a ResourceClaim's ``spec.devices.requests``."""
    _device_claim(obj.get("spec"))


def default_resource_claim_template(obj: Object) -> None:
    """Defaults of a ResourceClaimTemplate's claim spec."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _device_claim(spec.get("spec"))


#: Kind → its defaulter.
RESOURCE_DEFAULTERS: dict[str, Callable[[Object], None]] = {
    "ResourceClaim": default_resource_claim,
    "ResourceClaimTemplate": default_resource_claim_template,
}
