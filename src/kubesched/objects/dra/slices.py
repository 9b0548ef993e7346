"""Typed views of resource.k8s.io/v1 DeviceClass and ResourceSlice, decoded once.

A ResourceSlice publishes some devices of one pool of one driver; a pool may span many
slices, and only the slices of its newest ``pool.generation`` count (a driver that
republishes bumps the generation and the older slices are being replaced). What
allocation needs from the slices — the devices a node can use, per pool, newest
generation only, and whether the pool is complete — is :func:`gather_pools`, as upstream's
``GatherPools`` (``staging/src/k8s.io/dynamic-resource-allocation/structured``) does.

Device attributes keep their qualified names as written (``model`` or
``gpu.example.com/model``); :meth:`Device.attribute` looks one up as CEL and
``matchAttribute`` see it (an unqualified name is in the driver's domain).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import semver

from kubesched.objects._decode import (
    Raw,
    as_map,
    get_bool,
    get_int,
    get_list,
    get_map,
    get_str,
    join,
    nested,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import Quantity, QuantityError, parse_quantity_value
from kubesched.objects.selectors import NodeSelector

#: The value of one device attribute: int, bool, string, or a parsed semantic version.
AttributeValue = int | bool | str | semver.Version


def split_qualified_name(name: str, driver: str) -> tuple[str, str]:
    """``domain/id`` split in two; an unqualified name is in the driver's domain
    (upstream's ``parseQualifiedName``)."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def parse_semver(text: str) -> semver.Version:
    """A version attribute as ``semver.Parse`` (blang/semver/v4) reads it: strict
    ``MAJOR.MINOR.PATCH[-pre][+build]``. Raises ValueError."""
    return semver.Version.parse(text)


@dataclass(frozen=True, slots=True)
class ResourcePool:
    """``spec.pool``: the pool's name, its generation and how many slices it has."""

    name: str
    generation: int = 0
    resource_slice_count: int = 1


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Device:
    """One device of a slice. Compared by identity (a device is the object published in
    one slice), so that caches of CEL results can be keyed by it weakly."""

    name: str
    driver: str
    pool: str
    #: Qualified names as written → value.
    attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    #: Per-device node selection (``perDeviceNodeSelection`` slices).
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    #: Fields of features that are alpha and off in 1.34; the allocator refuses a
    #: device that uses them rather than ignoring what they say.
    alpha_fields: tuple[str, ...] = ()

    @property
    def id(self) -> tuple[str, str, str]:
        """(driver, pool, device): the device's identity in allocations."""
        return (self.driver, self.pool, self.name)

    def attribute(self, qualified: str) -> AttributeValue | None:
        """The attribute ``qualified`` (``domain/id``; an id alone is in the driver's
        domain), whichever way the slice spelled its name; None when absent."""
        domain, ident = split_qualified_name(qualified, self.driver)
        value = self.attributes.get(f"{domain}/{ident}")
        if value is None and domain == self.driver:
            value = self.attributes.get(ident)
        return value

    def matches_node(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        """Whether a device of a ``perDeviceNodeSelection`` slice is usable on the node."""
        if self.all_nodes:
            return True
        if self.node_name:
            return self.node_name == node_name
        if self.node_selector is not None:
            return self.node_selector.matches(node_name, node_labels)
        return False


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    """A ResourceSlice: which devices of which pool, reachable from which nodes."""

    name: str
    driver: str
    pool: ResourcePool
    uid: str = ""
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    #: ``sharedCounters`` sets (partitionable devices, alpha and off in 1.34).
    shared_counters: int = 0

    def matches_node(self, node_name: str, node_labels: Mapping[str, str]) -> bool:
        """Whether the slice's devices may be reachable from the node (for
        ``perDeviceNodeSelection`` each device still decides for itself)."""
        if self.all_nodes or self.per_device_node_selection:
            return True
        if self.node_name:
            return self.node_name == node_name
        if self.node_selector is not None:
            return self.node_selector.matches(node_name, node_labels)
        return False

    @classmethod
    def from_dict(cls, raw: object) -> ResourceSlice:
        """Decode a resource.k8s.io/v1 ResourceSlice; ObjectError names the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            return _decode_slice(obj, meta, name)
        except ObjectError as err:
            raise err.located(f"ResourceSlice {name}" if name else "ResourceSlice") from None


def _node_selector(raw: Raw, path: str) -> NodeSelector | None:
    value = raw.get("nodeSelector")
    return (
        None if value is None else nested(join(path, "nodeSelector"), NodeSelector.from_dict, value)
    )


def _decode_slice(obj: Raw, meta: Raw, name: str) -> ResourceSlice:
    spec = get_map(obj, "spec", "")
    driver = get_str(spec, "driver", "spec")
    pool_raw = get_map(spec, "pool", "spec")
    pool = ResourcePool(
        name=get_str(pool_raw, "name", "spec.pool"),
        generation=get_int(pool_raw, "generation", "spec.pool", 0) or 0,
        resource_slice_count=get_int(pool_raw, "resourceSliceCount", "spec.pool", 1) or 0,
    )
    devices = tuple(
        _decode_device(d, join("spec.devices", i), driver, pool.name)
        for i, d in enumerate(get_list(spec, "devices", "spec"))
    )
    return ResourceSlice(
        name=name,
        uid=get_str(meta, "uid", "metadata"),
        driver=driver,
        pool=pool,
        node_name=get_str(spec, "nodeName", "spec"),
        node_selector=_node_selector(spec, "spec"),
        all_nodes=get_bool(spec, "allNodes", "spec"),
        per_device_node_selection=get_bool(spec, "perDeviceNodeSelection", "spec"),
        devices=devices,
        shared_counters=len(get_list(spec, "sharedCounters", "spec")),
    )


_ALPHA_DEVICE_FIELDS = (
    "consumesCounters",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
)


def decode_attribute(raw: object, path: str) -> AttributeValue:
    """One ``DeviceAttribute`` (exactly one of int, bool, string, version)."""
    attr = as_map(raw, path)
    if "int" in attr and attr["int"] is not None:
        return get_int(attr, "int", path) or 0
    if "bool" in attr and attr["bool"] is not None:
        return get_bool(attr, "bool", path)
    if "string" in attr and attr["string"] is not None:
        return get_str(attr, "string", path)
    if "version" in attr and attr["version"] is not None:
        text = get_str(attr, "version", path)
        try:
            return parse_semver(text)
        except ValueError as err:
            raise ObjectError(join(path, "version"), f"parse semantic version: {err}") from None
    raise ObjectError(path, "unsupported attribute value")


def _decode_device(raw: object, path: str, driver: str, pool: str) -> Device:
    dev = as_map(raw, path)
    attributes = {
        str(k): decode_attribute(v, join(join(path, "attributes"), str(k)))
        for k, v in get_map(dev, "attributes", path).items()
    }
    capacity: dict[str, Quantity] = {}
    for k, v in get_map(dev, "capacity", path).items():
        cap_path = join(join(path, "capacity"), str(k))
        try:
            capacity[str(k)] = parse_quantity_value(as_map(v, cap_path).get("value"))
        except QuantityError as err:
            raise ObjectError(join(cap_path, "value"), err.message) from None
    return Device(
        name=get_str(dev, "name", path),
        driver=driver,
        pool=pool,
        attributes=attributes,
        capacity=capacity,
        node_name=get_str(dev, "nodeName", path),
        node_selector=_node_selector(dev, path),
        all_nodes=get_bool(dev, "allNodes", path),
        alpha_fields=tuple(f for f in _ALPHA_DEVICE_FIELDS if dev.get(f) not in (None, [], False)),
    )


# -- pools -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pool:
    """The devices one node can use from one pool, newest generation only."""

    driver: str
    name: str
    generation: int
    slices: tuple[ResourceSlice, ...]
    devices: tuple[Device, ...]
    #: Fewer slices of the newest generation than ``resourceSliceCount`` says: the
    #: driver is still publishing; upstream allocates nothing from it.
    incomplete: bool = False
    #: Why the pool cannot be used at all (a device name published twice), or "".
    invalid: str = ""

    @property
    def id(self) -> tuple[str, str]:
        """(driver, pool)."""
        return (self.driver, self.name)


def gather_pools(
    slices: Iterable[ResourceSlice], node_name: str, node_labels: Mapping[str, str]
) -> list[Pool]:
    """The pools whose devices the node can reach, as upstream's ``GatherPools``: of the
    slices reaching the node, only those of each pool's newest generation; devices of a
    ``perDeviceNodeSelection`` slice only where they reach the node; a pool is incomplete
    when it has not as many of those slices as ``resourceSliceCount`` says, invalid when
    a device name repeats. Sorted by (driver, pool), so that allocation is deterministic."""
    per_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not s.matches_node(node_name, node_labels):
            continue
        key = (s.driver, s.pool.name)
        kept = per_pool.get(key)
        if kept is None:
            per_pool[key] = [s]
        elif s.pool.generation > kept[0].pool.generation:
            per_pool[key] = [s]  # newer: replaces all older slices
        elif s.pool.generation == kept[0].pool.generation:
            kept.append(s)
    pools = []
    for key in sorted(per_pool):
        current = per_pool[key]
        devices: list[Device] = []
        for s in current:
            if s.per_device_node_selection:
                devices.extend(d for d in s.devices if d.matches_node(node_name, node_labels))
            else:
                devices.extend(s.devices)
        seen: set[str] = set()
        duplicate = ""
        for d in devices:
            if d.name in seen:
                duplicate = d.name
                break
            seen.add(d.name)
        pools.append(
            Pool(
                driver=key[0],
                name=key[1],
                generation=current[0].pool.generation,
                slices=tuple(current),
                devices=tuple(devices),
                incomplete=len(current) != current[0].pool.resource_slice_count,
                invalid=f"duplicate device name {duplicate}" if duplicate else "",
            )
        )
    return pools


class SliceIndex:
    """ResourceSlices indexed for :func:`gather_pools` per node: the slices naming a node
    by ``nodeName`` are found by name; only the others (all nodes, node selectors,
    per-device selection) are looked at for every node. Build one per snapshot of the
    slices; it does not follow later changes."""

    def __init__(self, slices: Iterable[ResourceSlice]) -> None:
        self.by_node: dict[str, list[ResourceSlice]] = {}
        #: Slices that may reach any node (all nodes, a node selector, per device).
        self.shared: list[ResourceSlice] = []
        for s in slices:
            if s.node_name and not s.per_device_node_selection:
                self.by_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)

    def pools(self, node_name: str, node_labels: Mapping[str, str]) -> list[Pool]:
        """:func:`gather_pools` for one node."""
        return gather_pools(
            [*self.by_node.get(node_name, ()), *self.shared], node_name, node_labels
        )


# -- DeviceClass -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceClass:
    """A DeviceClass: the CEL selectors every device of the class must pass, and the
    configuration it hands to drivers."""

    name: str
    selectors: tuple[str, ...] = ()
    #: ``spec.config[*].opaque`` as written (driver, parameters).
    config: tuple[Mapping[str, Any], ...] = ()
    extended_resource_name: str = ""

    @classmethod
    def from_dict(cls, raw: object) -> DeviceClass:
        """Decode a resource.k8s.io/v1 DeviceClass; ObjectError names the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        try:
            spec = get_map(obj, "spec", "")
            return DeviceClass(
                name=name,
                selectors=decode_selectors(get_list(spec, "selectors", "spec"), "spec.selectors"),
                config=tuple(
                    get_map(as_map(c, join("spec.config", i)), "opaque", join("spec.config", i))
                    for i, c in enumerate(get_list(spec, "config", "spec"))
                ),
                extended_resource_name=get_str(spec, "extendedResourceName", "spec"),
            )
        except ObjectError as err:
            raise err.located(f"DeviceClass {name}" if name else "DeviceClass") from None


def decode_selectors(items: Iterable[object], path: str) -> tuple[str, ...]:
    """``[{cel: {expression}}]`` → the expressions, in order."""
    out = []
    for i, item in enumerate(items):
        sel_path = join(path, i)
        cel = get_map(as_map(item, sel_path), "cel", sel_path)
        out.append(get_str(cel, "expression", join(sel_path, "cel")))
    return tuple(out)
