"""Allocation of devices to ResourceClaims with structured parameters, for one node.

Mirrors the stable variant of upstream's allocator
(``staging/src/k8s.io/dynamic-resource-allocation/structured``), the one kube-scheduler
1.34 uses with its alpha features off: the claims of a pod are allocated together, one
request after the other and, within a request, one device after the other. Each candidate
device of the node's pools (newest generation, complete and valid pools only) must be free
(not allocated to another claim, not being allocated in this attempt), pass the
DeviceClass's and the request's CEL selectors and keep the claim's ``matchAttribute``
constraints; when a later device cannot be found, the search backtracks and tries the next
candidate. The first full solution wins (no scoring, as in 1.34). ``firstAvailable``
subrequests are tried in order; ``allocationMode: All`` takes every matching device of the
node, which all must be free.

A problem with a claim or class (a CEL runtime error, a missing class, a constraint that
``All`` cannot keep) raises :class:`AllocationError`; no solution returns None, and
:attr:`Run.unsatisfied` then says which request could not be satisfied and why, for
``explain``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.objects.dra.cel import (
    CelCompileError,
    CelRuntimeError,
    compile_selector,
)
from kubesched.objects.dra.claims import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    DeviceRequest,
    DeviceResult,
    DeviceSubRequest,
    ResourceClaim,
)
from kubesched.objects.dra.slices import AttributeValue, Device, DeviceClass, Pool, ResourceSlice
from kubesched.objects.selectors import IN, NODE_NAME_FIELD, NodeSelector, Requirement

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "Allocation",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "DeviceID",
    "device_id_string",
]

#: ``resourceapi.AllocationResultsMaxSize``: the most devices one claim may get.
ALLOCATION_RESULTS_MAX_SIZE = 32

#: (driver, pool, device).
DeviceID = tuple[str, str, str]

#: Device fields of features that are alpha and off in 1.34 which make a device
#: unusable, as the stable allocator treats them: a device that consumes counters
#: (partitionable devices), has binding conditions or binds to a node (binding
#: conditions), or allows multiple allocations (consumable capacity). Taints are
#: ignored with DRADeviceTaints off, as upstream ignores them.
_UNUSABLE_DEVICE_FIELDS = {
    "consumesCounters": "DRAPartitionableDevices",
    "bindingConditions": "DRADeviceBindingConditions",
    "bindingFailureConditions": "DRADeviceBindingConditions",
    "bindsToNode": "DRADeviceBindingConditions",
    "allowMultipleAllocations": "DRAConsumableCapacity",
}

#: Request fields of alpha features that are off in 1.34.
_ALPHA_REQUEST_FIELDS = {
    "tolerations": "DRADeviceTaints",
    "capacity": "DRAConsumableCapacity",
}


def device_id_string(device_id: DeviceID) -> str:
    """``driver/pool/device``, as upstream's DeviceID prints."""
    return "/".join(device_id)


class AllocationError(Exception):
    """Allocation cannot proceed for a reason in the claim or a class; the message is
    upstream's and becomes the Filter's Error status."""


class AllocationTimeout(AllocationError):
    """The search took longer than the plugin's ``filterTimeout``."""


@dataclass(frozen=True, slots=True)
class Allocation:
    """What one claim gets: ``status.allocation`` (devices, their configuration, and the
    nodes that can reach them)."""

    results: tuple[DeviceResult, ...]
    config: tuple[Mapping[str, Any], ...] = ()
    #: ``v1.NodeSelector`` as written to the claim (None: every node).
    node_selector: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``status.allocation`` object."""
        results = []
        for r in self.results:
            item: dict[str, Any] = {
                "request": r.request,
                "driver": r.driver,
                "pool": r.pool,
                "device": r.device,
            }
            if r.admin_access:
                item["adminAccess"] = True
            results.append(item)
        devices: dict[str, Any] = {"results": results}
        if self.config:
            devices["config"] = [dict(c) for c in self.config]
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector is not None:
            out["nodeSelector"] = self.node_selector
        return out

    def typed_node_selector(self) -> NodeSelector | None:
        """:attr:`node_selector` decoded."""
        return None if self.node_selector is None else NodeSelector.from_dict(self.node_selector)


def unsupported_request_fields(claim: ResourceClaim) -> str | None:
    """Why the claim uses a feature that is alpha and off in 1.34 (a request's
    ``tolerations`` or ``capacity``, a ``distinctAttribute`` constraint), or None."""
    for request in claim.requests:
        for sub in request.alternatives:
            for name in sub.alpha_fields:
                gate = _ALPHA_REQUEST_FIELDS.get(name, "an alpha feature")
                req_name = (
                    request.name if sub.name == request.name else f"{request.name}/{sub.name}"
                )
                return (
                    f"claim {claim.key}, request {req_name}: {name} needs the {gate} feature "
                    "gate, which is alpha and off in Kubernetes 1.34"
                )
    for i, constraint in enumerate(claim.constraints):
        if constraint.distinct_attribute:
            return (
                f"claim {claim.key}, constraint #{i}: distinctAttribute needs the "
                "DRAConsumableCapacity feature gate, which is alpha and off in Kubernetes 1.34"
            )
    return None


@dataclass(slots=True)
class _Candidate:
    device: Device
    slice: ResourceSlice

    @property
    def id(self) -> DeviceID:
        return self.device.id


@dataclass(slots=True)
class _Request:
    """One request, or one subrequest of a ``firstAvailable`` request."""

    claim_index: int
    sub: DeviceSubRequest
    parent: DeviceRequest | None
    device_class: DeviceClass
    num_devices: int
    #: For ``allocationMode: All``: the devices it takes.
    all_devices: list[_Candidate] | None = None

    @property
    def name(self) -> str:
        """``request`` or ``request/subrequest``."""
        if self.parent is None:
            return self.sub.name
        return f"{self.parent.name}/{self.sub.name}"

    @property
    def base_name(self) -> str:
        return self.sub.name if self.parent is None else self.parent.name

    @property
    def sub_name(self) -> str:
        return "" if self.parent is None else self.sub.name


@dataclass(slots=True)
class _MatchAttribute:
    """All devices of the named requests (all requests if none) must have the same
    value of one attribute; the first device sets it. Monotonic, so a failure stops
    the branch."""

    requests: frozenset[str]
    attribute: str
    value: AttributeValue | None = None
    count: int = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device) -> bool:
        if not self._applies(request, sub):
            return True
        value = _lookup_attribute(device, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
            self.count = 1
            return True
        if type(value) is not type(self.value) or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if self._applies(request, sub):
            self.count -= 1


def _lookup_attribute(device: Device, qualified: str) -> AttributeValue | None:
    """The fully qualified attribute; an unqualified one on the device counts when the
    domain is the driver's (upstream's ``lookupAttribute``)."""
    value = device.attributes.get(qualified)
    if value is not None:
        return value
    domain, sep, ident = qualified.partition("/")
    if not sep or domain != device.driver:
        return None
    return device.attributes.get(ident)


@dataclass(slots=True)
class Unsatisfied:
    """Why a node could not satisfy the pod's claims: the request the search got
    stuck on, and how many devices of the node it could have used."""

    claim: str
    request: str
    wanted: int
    #: Devices of the node that pass the class's and the request's selectors.
    matching: int
    #: Of those, the ones allocated to other claims (or in flight).
    in_use: int
    #: The node's pools that cannot be used (incomplete, invalid), with why.
    skipped_pools: tuple[str, ...] = ()
    constraint: bool = False
    #: The index of ``claim`` among the claims allocated together.
    claim_index: int = 0

    def __str__(self) -> str:
        text = (
            f"claim {self.claim}, request {self.request}: wants {self.wanted} device(s), "
            f"{self.matching} on the node match its selectors, {self.in_use} of them in use"
        )
        if self.constraint and self.matching - self.in_use >= self.wanted:
            text += ", the claim's constraints cannot be kept"
        if self.skipped_pools:
            text += f" (pools not used: {', '.join(self.skipped_pools)})"
        return text


class Allocator:
    """Allocates a pod's unallocated claims on one node at a time (``allocate``).
    Built once per scheduling cycle (PreFilter); ``allocated`` are the devices other
    claims hold, including allocations in flight."""

    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        allocated: Container[DeviceID],
        device_class: Callable[[str], DeviceClass | None],
        pools_for: Callable[[str, Mapping[str, str]], list[Pool]],
        timeout: float | None = None,
    ) -> None:
        self.claims = list(claims)
        self.allocated = allocated
        self.device_class = device_class
        self.pools_for = pools_for
        self.timeout = timeout
        #: Calls of the search step, over all nodes (a measure of the work done).
        self.steps = 0

    def allocate(
        self, node_name: str, node_labels: Mapping[str, str]
    ) -> tuple[list[Allocation] | None, Unsatisfied | None]:
        """One allocation per claim (in order), or None with why when the node cannot
        satisfy them. Raises :class:`AllocationError`."""
        run = _Run(self, node_name, node_labels)
        result = run.solve()
        return result, (None if result is not None else run.unsatisfied())


class _Run:
    """One node's search."""

    def __init__(self, owner: Allocator, node_name: str, node_labels: Mapping[str, str]) -> None:
        self.owner = owner
        self.claims = owner.claims
        self.node_name = node_name
        self.node_labels = node_labels
        self.deadline = None if owner.timeout is None else time.monotonic() + owner.timeout
        self.pools = owner.pools_for(node_name, node_labels)
        #: (claim, request, subrequest) → request data.
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.selected_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_admin: dict[DeviceID, set[int]] = {}
        self.results: list[list[tuple[DeviceResult, ResourceSlice, Device]]] = [
            [] for _ in self.claims
        ]
        self.matches: dict[tuple[DeviceID, tuple[int, int, int]], bool] = {}
        #: The furthest point the search reached, for :meth:`unsatisfied`.
        self.furthest: tuple[int, int, int, int] = (0, 0, 0, 0)
        self.constraint_failed: set[tuple[int, int, int]] = set()

    # --- preparation -------------------------------------------------------------

    def _candidates(self) -> Iterator[tuple[Pool, ResourceSlice, Device]]:
        for pool in self.pools:
            for s in pool.slices:
                for d in s.devices:
                    if s.per_device_node_selection and not d.matches_node(
                        self.node_name, self.node_labels
                    ):
                        continue
                    yield pool, s, d

    def _request_data(
        self, key: tuple[int, int, int], sub: DeviceSubRequest, parent: DeviceRequest | None
    ) -> _Request:
        claim = self.claims[key[0]]
        name = sub.name if parent is None else f"{parent.name}/{sub.name}"
        if not sub.device_class_name:
            raise AllocationError(
                f"claim {claim.key}, request {name}: missing device class name "
                "(unsupported request type?)"
            )
        device_class = self.owner.device_class(sub.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {claim.key}, request {name}: could not retrieve device class "
                f'{sub.device_class_name}: deviceclass.resource.k8s.io "{sub.device_class_name}" '
                "not found"
            )
        data = _Request(key[0], sub, parent, device_class, 0)
        if sub.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = sub.count
        elif sub.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                pool_id = f"{pool.driver}/{pool.name}"
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {name}: asks for all devices, but "
                        f"resource pool {pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {name}: asks for all devices, but "
                        f"resource pool {pool_id} is currently invalid"
                    )
            data.all_devices = [
                _Candidate(d, s) for _, s, d in self._candidates() if self._selectable(key, data, d)
            ]
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(
                f"claim {claim.key}, request {name}: unsupported count mode {sub.allocation_mode}"
            )
        return data

    def _prepare(self) -> None:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                if request.exactly is None:
                    fewest = None
                    for si, sub in enumerate(request.first_available):
                        data = self._request_data((ci, ri, si), sub, request)
                        self.requests[(ci, ri, si)] = data
                        fewest = (
                            data.num_devices if fewest is None else min(fewest, data.num_devices)
                        )
                    min_devices += fewest or 0
                else:
                    data = self._request_data((ci, ri, 0), request.exactly, None)
                    self.requests[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} exceeds "
                    f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            constraints = []
            for i, c in enumerate(claim.constraints):
                if not c.match_attribute:
                    raise AllocationError(
                        f"claim {claim.key}, constraint #{i}: empty constraint "
                        "(unsupported constraint type?)"
                    )
                constraints.append(_MatchAttribute(frozenset(c.requests), c.match_attribute))
            self.constraints.append(constraints)

    # --- selection -----------------------------------------------------------------

    def _selectable(self, key: tuple[int, int, int], data: _Request, device: Device) -> bool:
        cache_key = (device.id, key)
        cached = self.matches.get(cache_key)
        if cached is not None:
            return cached
        # Binding conditions (alpha, off): such a device is not selectable upstream.
        if any(
            f in ("bindingConditions", "bindingFailureConditions", "bindsToNode")
            for f in device.alpha_fields
        ):
            self.matches[cache_key] = False
            return False
        ok = self._selectors_match(key, device, data.device_class.selectors, data.device_class)
        if ok:
            ok = self._selectors_match(key, device, data.sub.selectors, None)
        self.matches[cache_key] = ok
        return ok

    def _selectors_match(
        self,
        key: tuple[int, int, int],
        device: Device,
        selectors: Sequence[str],
        device_class: DeviceClass | None,
    ) -> bool:
        for i, expression in enumerate(selectors):
            where = (
                f"class {device_class.name}"
                if device_class is not None
                else f"claim {self.claims[key[0]].key}"
            )
            try:
                if not compile_selector(expression).matches(device):
                    return False
            except CelCompileError as err:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {err}") from None
            except CelRuntimeError as err:
                raise AllocationError(f"{where}: selector #{i}: CEL runtime error: {err}") from None
        return True

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.owner.allocated or bool(self.allocating.get(device_id))

    def _allocating_for_claim(self, device_id: DeviceID, claim_index: int) -> bool:
        return claim_index in self.allocating.get(device_id, ()) or claim_index in (
            self.allocating_admin.get(device_id, ())
        )

    # --- search --------------------------------------------------------------------

    def solve(self) -> list[Allocation] | None:
        self._prepare()
        if not self._allocate_one(0, 0, 0, 0, False):
            return None
        return [self._allocation(ci) for ci in range(len(self.claims))]

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self.owner.steps += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout("timed out trying to allocate devices")
        if ci >= len(self.claims):
            return True
        self.furthest = max(self.furthest, (ci, ri, si, di))
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            return self._allocate_one(ci + 1, 0, 0, 0, False)
        key = (ci, ri, si)
        data = self.requests[key]
        if not in_sub and data.parent is not None:
            # Only one subrequest must be satisfied, the first that can be.
            sub_index = 0
            while (ci, ri, sub_index) in self.requests:
                if self._allocate_one(ci, ri, sub_index, di, True):
                    self.selected_sub[(ci, ri)] = sub_index
                    return True
                sub_index += 1
            return False
        sub = data.sub
        if sub.allocation_mode == ALLOCATION_MODE_ALL and not data.all_devices:
            return False  # All needs at least one device
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        if data.all_devices is not None:
            candidate = data.all_devices[di]
            undo = self._allocate_device(key, data, candidate.device, candidate.slice, must=True)
            if undo is None:
                return False
            if self._allocate_one(ci, ri, si, di + 1, in_sub):
                return True
            undo()
            return False
        for pool, s, device in self._candidates():
            if pool.incomplete or pool.invalid:
                continue
            device_id = device.id
            if sub.admin_access:
                if self._allocating_for_claim(device_id, ci):
                    continue
            elif self._in_use(device_id):
                continue
            if not self._selectable(key, data, device):
                continue
            undo = self._allocate_device(key, data, device, s, must=False)
            if undo is None:
                continue
            if self._allocate_one(ci, ri, si, di + 1, in_sub):
                return True
            undo()
        return False

    def _allocate_device(
        self,
        key: tuple[int, int, int],
        data: _Request,
        device: Device,
        s: ResourceSlice,
        must: bool,
    ) -> Callable[[], None] | None:
        ci = key[0]
        device_id = device.id
        admin = data.sub.admin_access
        if admin and self._allocating_for_claim(device_id, ci):
            return None
        if not admin and self._in_use(device_id):
            return None
        if any(f in _UNUSABLE_DEVICE_FIELDS for f in device.alpha_fields):
            return None
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(data.base_name, data.sub_name, device):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {data.name}: cannot add device "
                        f"{device_id_string(device_id)} because a claim constraint would not "
                        "be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(data.base_name, data.sub_name)
                self.constraint_failed.add(key)
                return None
        tracking = self.allocating_admin if admin else self.allocating
        tracking.setdefault(device_id, set()).add(ci)
        result = DeviceResult(
            request=data.name,
            driver=device.driver,
            pool=device.pool,
            device=device.name,
            admin_access=admin,
        )
        self.results[ci].append((result, s, device))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(data.base_name, data.sub_name)
            holders = tracking[device_id]
            holders.discard(ci)
            if not holders:
                del tracking[device_id]
            self.results[ci].pop()

        return undo

    # --- results -------------------------------------------------------------------

    def _allocation(self, ci: int) -> Allocation:
        claim = self.claims[ci]
        entries = self.results[ci]
        config: list[dict[str, Any]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(claim.requests)):
            si = self.selected_sub.get((ci, ri), 0)
            data = self.requests[(ci, ri, si)]
            name = data.name
            rng = class_ranges.get(data.device_class.name)
            if rng is not None:
                for i in range(*rng):
                    config[i]["requests"].append(name)
                continue
            start = len(config)
            for opaque in data.device_class.config:
                config.append({"source": "FromClass", "requests": [name], "opaque": dict(opaque)})
            class_ranges[data.device_class.name] = (start, len(config))
        for entry in claim.config:
            requests = list(entry.get("requests") or [])
            item = {k: v for k, v in entry.items() if k != "requests"}
            if not requests:
                config.append({"source": "FromClaim", **item})
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **item})
                    continue
                data = self.requests[(ci, ri, self.selected_sub.get((ci, ri), 0))]
                if data.parent is not None and data.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **item})
        for item in config:
            if len(item.get("requests", ())) == len(claim.requests):
                item.pop("requests", None)
        return Allocation(
            results=tuple(r for r, _, _ in entries),
            config=tuple(config),
            node_selector=_node_selector(entries),
        )

    def unsatisfied(self) -> Unsatisfied | None:
        """Why the search failed: the request it got furthest into."""
        ci, ri, si, _ = self.furthest
        if ci >= len(self.claims) or ri >= len(self.claims[ci].requests):
            return None
        key = (ci, ri, si)
        data = self.requests.get(key)
        if data is None:
            return None
        matching = in_use = 0
        for pool, _s, device in self._candidates():
            if pool.incomplete or pool.invalid:
                continue
            if not self._selectable(key, data, device):
                continue
            matching += 1
            if not data.sub.admin_access and device.id in self.owner.allocated:
                in_use += 1
        skipped = tuple(
            f"{p.driver}/{p.name} {'is being updated' if p.incomplete else p.invalid}"
            for p in self.pools
            if p.incomplete or p.invalid
        )
        return Unsatisfied(
            claim_index=ci,
            claim=self.claims[ci].key,
            request=data.name,
            wanted=data.num_devices,
            matching=matching,
            in_use=in_use,
            skipped_pools=skipped,
            constraint=key in self.constraint_failed,
        )


def _requirement(r: Requirement) -> dict[str, Any]:
    out: dict[str, Any] = {"key": r.key, "operator": r.operator}
    if r.values:
        out["values"] = list(r.values)
    return out


def _node_selector(
    entries: Sequence[tuple[DeviceResult, ResourceSlice, Device]],
) -> dict[str, Any] | None:
    """``status.allocation.nodeSelector``: the node of the first node-local device; else
    the requirements of every device's node selector (one term each) together; else
    None (reachable from every node). As upstream's ``createNodeSelector``."""
    fields: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    for _, s, device in entries:
        if s.per_device_node_selection:
            node_name, selector = device.node_name, device.node_selector
        else:
            node_name, selector = s.node_name, s.node_selector
        if node_name:
            return {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": NODE_NAME_FIELD, "operator": IN, "values": [node_name]}
                        ]
                    }
                ]
            }
        if selector is not None and len(selector.terms) == 1:
            only = selector.terms[0]
            for r in only.match_fields:
                if _requirement(r) not in fields:
                    fields.append(_requirement(r))
            for r in only.match_expressions:
                if _requirement(r) not in labels:
                    labels.append(_requirement(r))
        elif selector is not None and len(selector.terms) > 1:
            raise AllocationError(
                f"unsupported ResourceSlice.NodeSelector with {len(selector.terms)} terms"
            )
    if not fields and not labels:
        return None
    term: dict[str, Any] = {}
    if labels:
        term["matchExpressions"] = labels
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}
