"""Fields of resource.k8s.io/v1 that belong to feature gates off in 1.34, and what the API
server does with them on a write.

kube-apiserver's strategies drop such a field when it is written (``dropDisabledFields``
in ``pkg/registry/resource/<kind>/strategy.go``), unless the stored object already uses
it. The one dropped here is DeviceClass ``spec.extendedResourceName`` (DRAExtendedResource,
alpha): dropped as 1.34 does, so a pod's request for that extended resource stays an
ordinary extended resource (NodeResourcesFit counts it against node allocatable) and no
device is allocated for it. The embedded API server and the policy lab's files both go
through :func:`drop_disabled_device_class_fields`.

The other alpha fields (partitionable devices, consumable capacity, device taints, binding
conditions) are kept as written, a deviation, so that DynamicResources can refuse a claim
or a device that uses them by name instead of silently treating it as another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DRA_EXTENDED_RESOURCE_FIELD", "drop_disabled_device_class_fields"]

#: The field of DeviceClass that DRAExtendedResource (alpha, off in 1.34) adds.
DRA_EXTENDED_RESOURCE_FIELD = "spec.extendedResourceName"


def drop_disabled_device_class_fields(
    new: dict[str, Any], old: Mapping[str, Any] | None = None
) -> list[str]:
    """``deviceClassStrategy``'s ``dropDisabledFields`` with 1.34's gates: remove
    ``spec.extendedResourceName`` from ``new`` (in place) unless ``old``, the stored
    class of an update, has it already; the paths of the fields removed."""
    spec = new.get("spec")
    if not isinstance(spec, dict) or "extendedResourceName" not in spec:
        return []
    old_spec = (old or {}).get("spec")
    if isinstance(old_spec, Mapping) and old_spec.get("extendedResourceName") is not None:
        return []
    del spec["extendedResourceName"]
    return [DRA_EXTENDED_RESOURCE_FIELD]
