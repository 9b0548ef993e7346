"""Typed views of resource.k8s.io/v1 ResourceClaim and ResourceClaimTemplate.

A claim asks for devices in ``spec.devices``: named requests, each either ``exactly``
one kind of device (a DeviceClass, CEL selectors, ExactCount with a count or All) or a
``firstAvailable`` list of such subrequests tried in order; ``constraints`` that
requests must agree on an attribute (``matchAttribute``); opaque ``config`` for drivers.
``status`` says what was allocated and which consumers (pods) hold it.

Objects are read as stored, i.e. after the API server's defaulting (allocationMode
ExactCount with count 1); a claim written by hand reads the same way because the
defaults are applied here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.objects._decode import (
    Raw,
    as_map,
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    get_str_list,
    join,
    nested,
)
from kubesched.objects.dra.slices import decode_selectors
from kubesched.objects.errors import ObjectError
from kubesched.objects.selectors import NodeSelector

API_VERSION = "resource.k8s.io/v1"
GROUP = "resource.k8s.io"

ALLOCATION_MODE_EXACT_COUNT = "ExactCount"
ALLOCATION_MODE_ALL = "All"
#: ``ResourceClaimReservedForMaxSize``: the most consumers a claim may have.
RESERVED_FOR_MAX_SIZE = 256


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """One way to satisfy a request: a DeviceClass, selectors, a mode and a count.

    Used for ``exactly`` (``name`` is then the request's own name) and for each entry of
    ``firstAvailable`` (``name`` is the subrequest's; the allocation result names it
    ``<request>/<subrequest>``).
    """

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    #: Fields of features that are alpha and off in 1.34 (tolerations, capacity).
    alpha_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A named request: ``exactly`` one kind, or the first available of a list."""

    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()

    @property
    def alternatives(self) -> tuple[DeviceSubRequest, ...]:
        """The ways to satisfy the request, in order of preference."""
        return (self.exactly,) if self.exactly is not None else self.first_available


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """``constraints[i]``: the requests (all if empty) whose devices must have the same
    value of ``match_attribute`` (a fully qualified attribute name)."""

    requests: tuple[str, ...] = ()
    match_attribute: str = ""
    #: ``distinctAttribute`` (alpha, off in 1.34).
    distinct_attribute: str = ""


@dataclass(frozen=True, slots=True)
class DeviceResult:
    """One allocated device: ``status.allocation.devices.results[i]``."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False

    @property
    def id(self) -> tuple[str, str, str]:
        """(driver, pool, device)."""
        return (self.driver, self.pool, self.device)


@dataclass(frozen=True, slots=True)
class ConsumerReference:
    """``status.reservedFor[i]``: who may use the claim (a pod, usually)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    """A ResourceClaim, as allocation reads it."""

    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    deleting: bool = False
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: Controller owner reference's (kind, name, uid), or None.
    controller: tuple[str, str, str] | None = None
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    #: ``spec.devices.config`` entries as written.
    config: tuple[Mapping[str, Any], ...] = ()
    #: Whether ``status.allocation`` is set.
    allocated: bool = False
    results: tuple[DeviceResult, ...] = ()
    #: ``status.allocation.nodeSelector``: the nodes that can reach the allocated
    #: devices (None: unset, every node).
    allocation_node_selector: NodeSelector | None = None
    reserved_for: tuple[ConsumerReference, ...] = ()
    finalizers: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """``namespace/name``, as ``klog.KObj`` prints it."""
        return f"{self.namespace}/{self.name}"

    def is_reserved_for(self, uid: str) -> bool:
        """Whether a consumer with ``uid`` is in ``status.reservedFor``."""
        return any(r.uid == uid for r in self.reserved_for)

    @property
    def can_be_reserved(self) -> bool:
        """Whether one more consumer fits in ``reservedFor`` (upstream's CanBeReserved)."""
        return len(self.reserved_for) < RESERVED_FOR_MAX_SIZE

    def is_controlled_by(self, uid: str) -> bool:
        """``metav1.IsControlledBy``: the controller owner reference has ``uid``."""
        return self.controller is not None and self.controller[2] == uid

    @classmethod
    def from_dict(cls, raw: object) -> ResourceClaim:
        """Decode a resource.k8s.io/v1 ResourceClaim; ObjectError names the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            return _decode_claim(obj, meta, namespace, name)
        except ObjectError as err:
            raise err.located(
                f"ResourceClaim {namespace}/{name}" if name else "ResourceClaim"
            ) from None


def _controller(meta: Raw) -> tuple[str, str, str] | None:
    for i, ref in enumerate(get_list(meta, "ownerReferences", "metadata")):
        ref_map = as_map(ref, join("metadata.ownerReferences", i))
        if ref_map.get("controller") is True:
            return (
                str(ref_map.get("kind", "")),
                str(ref_map.get("name", "")),
                str(ref_map.get("uid", "")),
            )
    return None


def _alpha(raw: Raw, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(n for n in names if raw.get(n) not in (None, [], {}))


def decode_subrequest(raw: Raw, path: str, name: str) -> DeviceSubRequest:
    """An ``ExactDeviceRequest`` or ``DeviceSubRequest``, with v1's defaults: mode
    ExactCount, count 1 for ExactCount."""
    mode = get_str(raw, "allocationMode", path) or ALLOCATION_MODE_EXACT_COUNT
    count = get_int(raw, "count", path, 0) or 0
    if mode == ALLOCATION_MODE_EXACT_COUNT and count == 0:
        count = 1
    return DeviceSubRequest(
        name=name,
        device_class_name=get_str(raw, "deviceClassName", path),
        selectors=decode_selectors(get_list(raw, "selectors", path), join(path, "selectors")),
        allocation_mode=mode,
        count=count,
        admin_access=get_bool(raw, "adminAccess", path),
        alpha_fields=_alpha(raw, ("tolerations", "capacity")),
    )


def decode_device_claim(
    spec: Raw, path: str
) -> tuple[tuple[DeviceRequest, ...], tuple[DeviceConstraint, ...], tuple[Mapping[str, Any], ...]]:
    """``spec.devices`` of a claim (or of a template's claim spec)."""
    devices = get_map(spec, "devices", path)
    dev_path = join(path, "devices")
    requests = []
    for i, r in enumerate(get_list(devices, "requests", dev_path)):
        req_path = join(join(dev_path, "requests"), i)
        req = as_map(r, req_path)
        name = get_str(req, "name", req_path)
        exactly_raw = req.get("exactly")
        exactly = (
            decode_subrequest(
                as_map(exactly_raw, join(req_path, "exactly")), join(req_path, "exactly"), name
            )
            if exactly_raw is not None
            else None
        )
        first = tuple(
            decode_subrequest(
                as_map(s, join(join(req_path, "firstAvailable"), j)),
                join(join(req_path, "firstAvailable"), j),
                get_str(as_map(s, ""), "name", join(join(req_path, "firstAvailable"), j)),
            )
            for j, s in enumerate(get_list(req, "firstAvailable", req_path))
        )
        requests.append(DeviceRequest(name=name, exactly=exactly, first_available=first))
    constraints = []
    for i, c in enumerate(get_list(devices, "constraints", dev_path)):
        c_path = join(join(dev_path, "constraints"), i)
        cons = as_map(c, c_path)
        constraints.append(
            DeviceConstraint(
                requests=get_str_list(cons, "requests", c_path),
                match_attribute=get_str(cons, "matchAttribute", c_path),
                distinct_attribute=get_str(cons, "distinctAttribute", c_path),
            )
        )
    config = tuple(
        as_map(c, join(join(dev_path, "config"), i))
        for i, c in enumerate(get_list(devices, "config", dev_path))
    )
    return tuple(requests), tuple(constraints), config


def _decode_claim(obj: Raw, meta: Raw, namespace: str, name: str) -> ResourceClaim:
    spec = get_map(obj, "spec", "")
    requests, constraints, config = decode_device_claim(spec, "spec")
    status = get_map(obj, "status", "")
    allocation_raw = status.get("allocation")
    allocation = as_map(allocation_raw, "status.allocation")
    results = []
    res_path = "status.allocation.devices.results"
    for i, r in enumerate(
        get_list(
            get_map(allocation, "devices", "status.allocation"),
            "results",
            "status.allocation.devices",
        )
    ):
        p = join(res_path, i)
        res = as_map(r, p)
        results.append(
            DeviceResult(
                request=get_str(res, "request", p),
                driver=get_str(res, "driver", p),
                pool=get_str(res, "pool", p),
                device=get_str(res, "device", p),
                admin_access=get_bool(res, "adminAccess", p),
            )
        )
    reserved = []
    for i, r in enumerate(get_list(status, "reservedFor", "status")):
        p = join("status.reservedFor", i)
        ref = as_map(r, p)
        reserved.append(
            ConsumerReference(
                resource=get_str(ref, "resource", p),
                name=get_str(ref, "name", p),
                uid=get_str(ref, "uid", p),
                api_group=get_str(ref, "apiGroup", p),
            )
        )
    node_selector = allocation.get("nodeSelector")
    return ResourceClaim(
        namespace=namespace,
        name=name,
        uid=get_str(meta, "uid", "metadata"),
        resource_version=get_str(meta, "resourceVersion", "metadata"),
        deleting=meta.get("deletionTimestamp") is not None,
        annotations={str(k): str(v) for k, v in get_map(meta, "annotations", "metadata").items()},
        controller=_controller(meta),
        requests=requests,
        constraints=constraints,
        config=config,
        allocated=allocation_raw is not None,
        results=tuple(results),
        allocation_node_selector=None
        if node_selector is None
        else nested("status.allocation.nodeSelector", NodeSelector.from_dict, node_selector),
        reserved_for=tuple(reserved),
        finalizers=get_str_list(meta, "finalizers", "metadata"),
    )


def allocated_devices(claims: Iterable[ResourceClaim]) -> set[tuple[str, str, str]]:
    """The (driver, pool, device) of every device allocated to one of ``claims``, except
    those allocated with admin access (which do not take the device from others)."""
    return {r.id for c in claims if c.allocated for r in c.results if not r.admin_access}


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    """A ResourceClaimTemplate: the metadata and spec of the claims made from it."""

    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: ``spec.spec`` as written: copied into each claim made from the template.
    claim_spec: Mapping[str, Any] = field(default_factory=dict)
    requests: tuple[DeviceRequest, ...] = ()

    @classmethod
    def from_dict(cls, raw: object) -> ResourceClaimTemplate:
        """Decode a resource.k8s.io/v1 ResourceClaimTemplate."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            spec = get_map(obj, "spec", "")
            tmeta = get_map(spec, "metadata", "spec")
            claim_spec = get_map(spec, "spec", "spec")
            requests, _, _ = decode_device_claim(claim_spec, "spec.spec")
            return ResourceClaimTemplate(
                namespace=namespace,
                name=name,
                labels={
                    str(k): str(v) for k, v in get_map(tmeta, "labels", "spec.metadata").items()
                },
                annotations={
                    str(k): str(v)
                    for k, v in get_map(tmeta, "annotations", "spec.metadata").items()
                },
                claim_spec=claim_spec,
                requests=requests,
            )
        except ObjectError as err:
            raise err.located(f"ResourceClaimTemplate {namespace}/{name}") from None
