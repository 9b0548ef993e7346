"""The storage.k8s.io/v1 kinds as ``pkg/apis/storage/validation`` checks them.

- StorageClass: a provisioner (a qualified name), at most 512 parameters of at most
  256 KiB with no empty key, reclaim policy Delete or Retain, a binding mode, allowed
  topologies without duplicates; on update the provisioner, parameters, reclaim policy
  and binding mode are fixed.
- CSINode: each driver named as a CSI driver, once, with a node ID of at most 256
  characters, a non-negative allocatable count and qualified topology keys; on update a
  driver already there keeps everything but its allocatable count
  (MutableCSINodeAllocatableCount is on in 1.34).
- CSIDriver: the defaulted booleans set, a known fsGroupPolicy and lifecycle modes, token
  requests with distinct audiences and sane expirations; attachRequired and the lifecycle
  modes are immutable (under upstream's path ``spec.attachedRequired``).
- CSIStorageCapacity: a node topology selector, a class name, a non-negative capacity;
  topology and class immutable.
- VolumeAttachment: an attacher (a CSI driver name in v1), exactly one source (an inline
  volume checked as one), a node name, bounded status metadata and errors; the spec is
  immutable.
- VolumeAttributesClass: a driver name and at least one parameter, both immutable.

Where upstream's message shows a Go struct with ``%#v``, ours shows its JSON.
"""

from __future__ import annotations

import json
from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    immutable,
    invalid,
    is_int,
    label_selector,
    name_is_dns_subdomain,
    nonnegative_int,
    not_supported,
    qualified_name,
    quantity,
    required,
    too_long,
)
from kubesched.objects.validation.persistentvolume import (
    class_name,
    csi_driver_name,
    volume_spec,
)

_MAX_PARAMETERS = 512
_MAX_PARAMETER_BYTES = 256 * 1024
_MAX_ATTACHED_METADATA_BYTES = 256 * 1024
_MAX_VOLUME_ERROR_MESSAGE = 1024
#: ``csiNodeIDLongerMaxLength``: the CSINode strategy allows long node IDs.
_MAX_NODE_ID = 256
_RECLAIM_POLICIES = ("Delete", "Retain")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
_LIFECYCLE_MODES = ("Persistent", "Ephemeral")
_MAX_INT32 = 2**31 - 1


def _json(value: Any) -> GoValue:
    # A struct's bad value (Go prints it with %#v): its JSON instead.
    return GoValue(json.dumps(value, sort_keys=True, separators=(",", ":")))


def _provisioner(name: str, path: str) -> Errors:
    # validateProvisioner: required, a qualified name once lowered.
    if not name:
        return [required(path)]
    return qualified_name(name.lower(), path)


def _parameters(params: Any, path: str, allow_empty: bool) -> Errors:
    # validateParameters.
    values = as_dict(params)
    if len(values) > _MAX_PARAMETERS:
        return [too_long(path, _MAX_PARAMETERS)]
    errs: Errors = []
    total = 0
    for key in sorted(values):
        if not key:
            errs.append(invalid(path, key, "field can not be empty."))
        total += len(key.encode()) + len(str(values[key] or "").encode())
    if total > _MAX_PARAMETER_BYTES:
        errs.append(too_long(path, _MAX_PARAMETER_BYTES))
    if not allow_empty and not values:
        errs.append(required(path, "must contain at least one key/value pair"))
    return errs


def _topology_term(term: dict[str, Any], path: str) -> tuple[dict[str, frozenset[str]], Errors]:
    # ValidateTopologySelectorTerm.
    errs: Errors = []
    found: dict[str, frozenset[str]] = {}
    for i, req in enumerate(as_list(term.get("matchLabelExpressions"))):
        at = f"{path}.matchLabelExpressions[{i}]"
        req = as_dict(req)
        values = [str(v) for v in as_list(req.get("values"))]
        if not values:
            errs.append(required(f"{at}.values"))
        seen: set[str] = set()
        for j, value in enumerate(values):
            if value in seen:
                errs.append(duplicate(f"{at}.values[{j}]", value))
            seen.add(value)
        key = str(req.get("key") or "")
        errs.extend(qualified_name(key, f"{at}.key"))
        if key in found:
            errs.append(duplicate(f"{at}.key", key))
        found[key] = frozenset(seen)
    return found, errs


def _allowed_topologies(topologies: Any) -> Errors:
    errs: Errors = []
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(as_list(topologies)):
        at = f"allowedTopologies[{i}]"
        found, term_errs = _topology_term(as_dict(term), at)
        errs.extend(term_errs)
        if found in seen:
            errs.append(duplicate(f"{at}.matchLabelExpressions", ""))
        seen.append(found)
    return errs


def storage_class(obj: Object) -> Errors:
    """``ValidateStorageClass`` after the metadata."""
    errs = _provisioner(str(obj.get("provisioner") or ""), "provisioner")
    errs.extend(_parameters(obj.get("parameters"), "parameters", True))
    policy = obj.get("reclaimPolicy")
    if policy and policy not in _RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, _RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in _BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, _BINDING_MODES))
    errs.extend(_allowed_topologies(obj.get("allowedTopologies")))
    return errs


def storage_class_update(new: Object, old: Object) -> Errors:
    """``ValidateStorageClass`` and ``ValidateStorageClassUpdate``."""
    errs = storage_class(new)
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if new.get(key) != old.get(key):
            errs.append(forbidden(key, f"updates to {key} are forbidden."))
    errs.extend(
        immutable("volumeBindingMode", new.get("volumeBindingMode"), old.get("volumeBindingMode"))
    )
    return errs


# -- CSINode --------------------------------------------------------------------------------


def _csi_node_driver(driver: dict[str, Any], names: set[str], path: str) -> Errors:
    name = str(driver.get("name") or "")
    errs = csi_driver_name(name, f"{path}.name")
    node_id = str(driver.get("nodeID") or "")
    if not node_id:
        errs.append(required(f"{path}.nodeID"))
    if len(node_id) > _MAX_NODE_ID:
        errs.append(
            invalid(f"{path}.nodeID", node_id, f"must be {_MAX_NODE_ID} characters or less")
        )
    count = as_dict(driver.get("allocatable")).get("count")
    errs.extend(nonnegative_int(count, f"{path}.allocatable.count"))
    if name in names:
        errs.append(duplicate(f"{path}.name", name))
    names.add(name)
    keys: set[str] = set()
    for key in as_list(driver.get("topologyKeys")):
        text = str(key)
        if not text:
            errs.append(required(path))
        if text in keys:
            errs.append(duplicate(path, text))
        keys.add(text)
        errs.extend(qualified_name(text, path))
    return errs


def csi_node(obj: Object) -> Errors:
    """``ValidateCSINode`` after the metadata."""
    errs: Errors = []
    names: set[str] = set()
    for i, driver in enumerate(as_list(as_dict(obj.get("spec")).get("drivers"))):
        errs.extend(_csi_node_driver(as_dict(driver), names, f"spec.drivers[{i}]"))
    return errs


def _without_allocatable(driver: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in driver.items() if k != "allocatable"}


def csi_node_update(new: Object, old: Object) -> Errors:
    """``ValidateCSINodeUpdate``: a driver that stays keeps its fields but allocatable."""
    errs = csi_node(new)
    drivers = [as_dict(d) for d in as_list(as_dict(new.get("spec")).get("drivers"))]
    for old_driver in as_list(as_dict(old.get("spec")).get("drivers")):
        before = _without_allocatable(as_dict(old_driver))
        for driver in drivers:
            if driver.get("name") == before.get("name"):
                after = _without_allocatable(driver)
                if after != before:
                    errs.append(invalid("spec.drivers", _json(after), "field is immutable"))
    return errs


# -- CSIDriver ------------------------------------------------------------------------------


def _token_requests(requests: Any) -> Errors:
    errs: Errors = []
    audiences: set[str] = set()
    for i, request in enumerate(as_list(requests)):
        at = f"spec.tokenRequests[{i}]"
        request = as_dict(request)
        audience = str(request.get("audience") or "")
        if audience in audiences:
            errs.append(duplicate(f"{at}.audience", audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if not is_int(seconds):
            continue
        if seconds < 600:
            errs.append(
                invalid(
                    f"{at}.expirationSeconds",
                    seconds,
                    "may not specify a duration less than 10 minutes",
                )
            )
        if seconds > 1 << 32:
            errs.append(
                invalid(
                    f"{at}.expirationSeconds",
                    seconds,
                    "may not specify a duration larger than 2^32 seconds",
                )
            )
    return errs


def _csi_driver_spec(spec: dict[str, Any]) -> Errors:
    errs: Errors = []
    # Upstream reports attachRequired under "attachedRequired".
    for key, at in (
        ("attachRequired", "attachedRequired"),
        ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity"),
    ):
        if spec.get(key) is None:
            errs.append(required(f"spec.{at}"))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, _FS_GROUP_POLICIES))
    errs.extend(_token_requests(spec.get("tokenRequests")))
    for mode in as_list(spec.get("volumeLifecycleModes")):
        if mode not in _LIFECYCLE_MODES:
            errs.append(not_supported("spec.volumeLifecycleModes", mode, _LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        errs.append(required("spec.seLinuxMount"))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if is_int(period) and period < 10:
        errs.append(
            invalid(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                period,
                "must be greater than or equal to 10 seconds",
            )
        )
    return errs


def csi_driver(obj: Object) -> Errors:
    """``ValidateCSIDriver`` after the metadata."""
    return _csi_driver_spec(as_dict(obj.get("spec")))


def csi_driver_update(new: Object, old: Object) -> Errors:
    """``ValidateCSIDriverUpdate``: the spec, with attachRequired and the lifecycle modes
    immutable."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    errs = _csi_driver_spec(spec)
    errs.extend(
        immutable(
            "spec.attachedRequired", spec.get("attachRequired"), old_spec.get("attachRequired")
        )
    )
    modes, old_modes = spec.get("volumeLifecycleModes"), old_spec.get("volumeLifecycleModes")
    if modes != old_modes:
        errs.append(invalid("spec.volumeLifecycleModes", _json(modes), "field is immutable"))
    return errs


# -- CSIStorageCapacity ---------------------------------------------------------------------


def csi_storage_capacity(obj: Object) -> Errors:
    """``ValidateCSIStorageCapacity`` after the metadata."""
    errs = label_selector(obj.get("nodeTopology"), "nodeTopology")
    errs.extend(class_name(str(obj.get("storageClassName") or ""), "storageClassName"))
    capacity = obj.get("capacity")
    if capacity is not None:
        amount = quantity(capacity)
        if amount.value < 0:
            errs.append(invalid("capacity", str(amount), "must be greater than or equal to 0"))
    return errs


def csi_storage_capacity_update(new: Object, old: Object) -> Errors:
    """``ValidateCSIStorageCapacityUpdate``: topology and class are the capacity's key."""
    errs: Errors = []
    if new.get("nodeTopology") != old.get("nodeTopology"):
        errs.append(invalid("nodeTopology", _json(new.get("nodeTopology")), "field is immutable"))
    if new.get("storageClassName") != old.get("storageClassName"):
        errs.append(
            invalid("storageClassName", new.get("storageClassName") or "", "field is immutable")
        )
    return errs


# -- VolumeAttachment -----------------------------------------------------------------------


def _volume_error(value: Any, path: str) -> Errors:
    error = as_dict(value)
    errs: Errors = []
    if len(str(error.get("message") or "")) > _MAX_VOLUME_ERROR_MESSAGE:
        # Upstream reports the metadata limit for an over-long message.
        errs.append(too_long(f"{path}.message", _MAX_ATTACHED_METADATA_BYTES))
    code = error.get("errorCode")
    if is_int(code) and code < 0:
        errs.append(
            invalid(f"{path}.errorCode", code, f"must be between 0 and {_MAX_INT32}, inclusive")
        )
    return errs


def volume_attachment(obj: Object) -> Errors:
    """``ValidateVolumeAttachment`` after the metadata, and ``ValidateVolumeAttachmentV1``."""
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    attacher = str(spec.get("attacher") or "")
    if not attacher:
        errs.append(required("spec.attacher"))
    source = as_dict(spec.get("source"))
    inline, pv_name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    exactly_one = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    if inline is None and pv_name is None:
        errs.append(required("spec.source", exactly_one))
    elif inline is not None and pv_name is not None:
        errs.append(forbidden("spec.source", exactly_one))
    elif pv_name is not None and not pv_name:
        errs.append(
            required(
                "spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"
            )
        )
    elif isinstance(inline, dict):
        errs.extend(volume_spec(inline, "spec.source.inlineVolumeSpec", inline=True))
    node = str(spec.get("nodeName") or "")
    errs.extend(invalid("spec.nodeName", node, p) for p in name_is_dns_subdomain(node, False))
    status = as_dict(obj.get("status"))
    metadata = as_dict(status.get("attachmentMetadata"))
    size = sum(len(str(k).encode()) + len(str(v or "").encode()) for k, v in metadata.items())
    if size > _MAX_ATTACHED_METADATA_BYTES:
        errs.append(too_long("status.attachmentMetadata", _MAX_ATTACHED_METADATA_BYTES))
    for key in ("attachError", "detachError"):
        if status.get(key) is not None:
            errs.extend(_volume_error(status.get(key), f"status.{key}"))
    # ValidateVolumeAttachmentV1: storage.k8s.io/v1 attachers are CSI drivers.
    errs.extend(csi_driver_name(attacher, "spec.attacher"))
    if isinstance(pv_name, str):
        errs.extend(
            invalid("spec.source.persistentVolumeName", pv_name, p)
            for p in name_is_dns_subdomain(pv_name, False)
        )
    return errs


def volume_attachment_update(new: Object, old: Object) -> Errors:
    """``ValidateVolumeAttachmentUpdate``: the spec is read-only."""
    errs = volume_attachment(new)
    if new.get("spec") != old.get("spec"):
        errs.append(invalid("spec", _json(new.get("spec")), "field is immutable"))
    return errs


# -- VolumeAttributesClass ------------------------------------------------------------------


def volume_attributes_class(obj: Object) -> Errors:
    """``ValidateVolumeAttributesClass`` after the metadata."""
    errs = _provisioner(str(obj.get("driverName") or ""), "driverName")
    errs.extend(_parameters(obj.get("parameters"), "parameters", False))
    return errs


def volume_attributes_class_update(new: Object, old: Object) -> Errors:
    """``ValidateVolumeAttributesClassUpdate``: driver and parameters are fixed."""
    errs: Errors = []
    if new.get("driverName") != old.get("driverName"):
        errs.append(forbidden("driverName", "updates to driverName are forbidden."))
    if new.get("parameters") != old.get("parameters"):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    return errs + volume_attributes_class(new)
