"""Resource amounts as the scheduler counts them.

kube-scheduler converts every quantity once into integers: cpu in millicores, memory,
ephemeral storage and extended resources in units (both rounded up, as
``Quantity.MilliValue`` / ``Value`` do), pods as a count. Doing the same here keeps
comparisons exact and cheap, and lets node state live in integer arrays later.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubesched.objects._decode import join
from kubesched.objects.errors import ObjectError
from kubesched.objects.quantity import QuantityError, parse_quantity_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: What scoring assumes a container asks for when it sets no request (upstream
#: ``DefaultMilliCPURequest`` / ``DefaultMemoryRequest``), so that pods without requests
#: still spread instead of piling onto one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NATIVE_PREFIX = "kubernetes.io/"


def is_prefixed_native_resource(name: str) -> bool:
    """Native resources in the kubernetes.io domain (``kubernetes.io/x``, ``a.kubernetes.io/x``)."""
    return _NATIVE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """Extended resources (``nvidia.com/gpu``): domain-qualified, outside kubernetes.io."""
    native = "/" not in name or is_prefixed_native_resource(name)
    return not native and not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """Resources kept in ``Resource.scalar``: extended, hugepages, prefixed native and
    attachable volumes (upstream ``IsScalarResourceName``)."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or is_prefixed_native_resource(name)
        or name.startswith("attachable-volumes-")
    )


@dataclass(slots=True)
class Resource:
    """An amount of each resource, mutable so that NodeInfo can accumulate into it."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, resources: Mapping[str, object], path: str = "") -> Resource:
        """Decode a ResourceList (``{"cpu": "500m", "memory": "1Gi"}``)."""
        out = cls()
        for name, raw in resources.items():
            try:
                quantity = parse_quantity_value(raw)
            except QuantityError as err:
                raise ObjectError(join(path, name), err.message) from None
            out.set(name, quantity.milli_value() if name == CPU else quantity.int_value())
        return out

    def get(self, name: str) -> int:
        """The amount of ``name`` (cpu in millicores)."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def set(self, name: str, value: int) -> None:
        """Set the amount of ``name``; native resources the scheduler ignores are dropped."""
        if name == CPU:
            self.milli_cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = value
        elif name == PODS:
            self.allowed_pod_number = value
        elif is_scalar_resource_name(name):
            self.scalar[name] = value

    def names(self) -> Iterable[str]:
        """The resources this amount sets, native ones first."""
        if self.milli_cpu:
            yield CPU
        if self.memory:
            yield MEMORY
        if self.ephemeral_storage:
            yield EPHEMERAL_STORAGE
        if self.allowed_pod_number:
            yield PODS
        yield from self.scalar

    def add(self, other: Resource) -> None:
        """Add ``other`` into this amount."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + value

    def sub(self, other: Resource) -> None:
        """Subtract ``other`` from this amount."""
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) - value

    def set_max(self, other: Resource) -> None:
        """Raise each amount to at least ``other``'s (init containers run one at a time)."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        self.allowed_pod_number = max(self.allowed_pod_number, other.allowed_pod_number)
        for name, value in other.scalar.items():
            self.scalar[name] = max(self.scalar.get(name, 0), value)

    def copy(self) -> Resource:
        """An independent copy."""
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar),
        )

    def to_dict(self) -> dict[str, int]:
        """The non-zero amounts by resource name (cpu in millicores)."""
        return {name: self.get(name) for name in self.names() if self.get(name)}
