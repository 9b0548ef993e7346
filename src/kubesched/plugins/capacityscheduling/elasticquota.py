"""Quota accounting: what each ElasticQuota's namespace uses, against its ``min`` and ``max``.

Mirrors scheduler-plugins v0.34.7's ``pkg/capacityscheduling/elasticquota.go``. An
:class:`ElasticQuotaInfo` holds one namespace's bounds and the pods it counts;
:class:`ElasticQuotaInfos` holds every quota, for the rules that look at all of them
(borrowing is allowed while the sum of every quota's use stays within the sum of their
``min``).

The comparisons are upstream's ``cmp2``, field by field: cpu, memory, ephemeral-storage
and pods always; an extended resource only when the left-hand side names it, against
the bound when the quota does not (0 for ``min``, unlimited for ``max``). So a ``max`` or
``min`` that is set but omits cpu or memory bounds it at 0, as upstream does. Each check
returns the names of the resources over the bound (empty when within), so that messages
can say which resource and by how much.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Protocol

from kubesched.objects.pod import Pod
from kubesched.objects.quantity import Quantity
from kubesched.objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource

__all__ = [
    "LOWER_BOUND_OF_MIN",
    "UPPER_BOUND_OF_MAX",
    "ElasticQuotaInfo",
    "ElasticQuotaInfos",
    "QuotaSpec",
    "format_amount",
]

#: What an absent ``max`` allows of cpu, memory and ephemeral-storage (upstream
#: ``UpperBoundOfMax``, MaxInt64), and of an extended resource a ``max`` does not name.
UPPER_BOUND_OF_MAX: Final = 2**63 - 1
#: What an absent ``min`` guarantees, and a ``min`` of an extended resource it does not
#: name (upstream ``LowerBoundOfMin``).
LOWER_BOUND_OF_MIN: Final = 0

_NATIVE: Final = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)
_BOUNDED: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)
_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class QuotaSpec(Protocol):
    """What accounting reads of an ElasticQuota: its place and its bounds (None when the
    spec omits them)."""

    @property
    def namespace(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def min(self) -> Resource | None: ...

    @property
    def max(self) -> Resource | None: ...


def _bounds(amounts: Resource | None, bound: int) -> Resource:
    """Upstream ``newElasticQuotaInfo``: an absent list becomes cpu, memory and
    ephemeral-storage at ``bound`` (pods stays 0: upstream's bound list omits it)."""
    if amounts is not None:
        return amounts.copy()
    out = Resource()
    for name in _BOUNDED:
        out.set(name, bound)
    return out


def exceeded(x1: Resource, x2: Resource, y: Resource, bound: int) -> list[str]:
    """The resources where ``x1 + x2 > y`` (upstream ``cmp2``): the native ones always,
    the extended ones ``x1`` names, looked up in ``y`` with ``bound`` as the default."""
    over = [name for name in _NATIVE if x1.get(name) + x2.get(name) > y.get(name)]
    for name, value in x1.scalar.items():
        if value + x2.scalar.get(name, 0) > y.scalar.get(name, bound):
            over.append(name)
    return over


def format_amount(name: str, value: int) -> str:
    """An amount as a quantity string: cpu from millicores (``500m``, ``2``), memory and
    ephemeral-storage in the largest binary unit that divides them (``40Gi``, else
    bytes), "unlimited" at the bound."""
    if value >= UPPER_BOUND_OF_MAX:
        return "unlimited"
    if name == CPU:
        return str(Quantity(Fraction(value, 1000)))
    if name in (MEMORY, EPHEMERAL_STORAGE) and value:
        for exponent in range(6, 0, -1):
            if value % 1024**exponent == 0:
                return f"{value // 1024**exponent}{_BINARY_SUFFIXES[exponent]}"
    return str(value)


@dataclass(slots=True)
class ElasticQuotaInfo:
    """One namespace's quota: bounds, use, and the keys of the pods the use counts.

    ``min`` and ``max`` are the bounds as upstream fills them (see :func:`_bounds`);
    ``used`` is the sum of the requests of the pods counted. The pods counted are the
    keys of ``base`` (shared, never changed through this object: a cycle's accounts
    share the pods of the last refresh) plus ``added``, less ``removed``; preemption's
    dry runs change only the latter two, on their clones.
    """

    namespace: str
    name: str
    min: Resource
    max: Resource
    used: Resource = field(default_factory=Resource)
    base: Mapping[str, object] = field(default_factory=dict)
    added: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, quota: QuotaSpec) -> ElasticQuotaInfo:
        """A new, empty account for ``quota``."""
        return cls(
            quota.namespace,
            quota.name,
            _bounds(quota.min, LOWER_BOUND_OF_MIN),
            _bounds(quota.max, UPPER_BOUND_OF_MAX),
        )

    @property
    def key(self) -> str:
        """``namespace/name`` of the ElasticQuota."""
        return f"{self.namespace}/{self.name}"

    def clone(self) -> ElasticQuotaInfo:
        """An independent copy (bounds and ``base`` are never changed in place, so they
        are shared)."""
        return ElasticQuotaInfo(
            self.namespace,
            self.name,
            self.min,
            self.max,
            self.used.copy(),
            self.base,
            set(self.added),
            set(self.removed),
        )

    def counts(self, key: str) -> bool:
        """Whether the pod with ``key`` is counted."""
        if key in self.added:
            return True
        return key in self.base and key not in self.removed

    def add_pod(self, pod: Pod) -> bool:
        """Count ``pod``'s requests unless it is counted already; whether it was added."""
        key = pod.key
        if self.counts(key):
            return False
        if key in self.removed:
            self.removed.discard(key)
        else:
            self.added.add(key)
        self.used.add(pod.requests)
        return True

    def remove_pod(self, pod: Pod) -> bool:
        """Stop counting ``pod``; whether it was counted."""
        key = pod.key
        if not self.counts(key):
            return False
        if key in self.added:
            self.added.discard(key)
        else:
            self.removed.add(key)
        self.used.sub(pod.requests)
        return True

    def over_max_with(self, request: Resource) -> list[str]:
        """The resources where ``used + request`` goes over ``max``."""
        return exceeded(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def over_min_with(self, request: Resource) -> list[str]:
        """The resources where ``used + request`` goes over ``min``."""
        return exceeded(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def over_min(self) -> bool:
        """Whether the namespace uses more than its ``min`` of some resource, i.e. it
        borrows from the others."""
        return bool(exceeded(self.used, Resource(), self.min, LOWER_BOUND_OF_MIN))

    def describe_over_max(
        self, names: Iterable[str], request: Resource, nominated: Resource
    ) -> str:
        """``ElasticQuota ns/name nvidia.com/gpu: used 5, request 1, max 5`` for each of
        ``names``; ``nominated`` (requests of pods nominated before this one) is shown
        when not zero."""
        parts = [
            _numbers(n, ("used", self.used), request, nominated, ("max", self.max)) for n in names
        ]
        return f"ElasticQuota {self.key} " + "; ".join(parts)


class ElasticQuotaInfos:
    """Every namespace's quota, by namespace (one ElasticQuota per namespace)."""

    __slots__ = ("_by_namespace",)

    def __init__(self, infos: Mapping[str, ElasticQuotaInfo] | None = None) -> None:
        self._by_namespace: dict[str, ElasticQuotaInfo] = dict(infos or {})

    def get(self, namespace: str) -> ElasticQuotaInfo | None:
        return self._by_namespace.get(namespace)

    def __contains__(self, namespace: object) -> bool:
        return namespace in self._by_namespace

    def __iter__(self) -> Iterator[ElasticQuotaInfo]:
        return iter(self._by_namespace.values())

    def __len__(self) -> int:
        return len(self._by_namespace)

    def namespaces(self) -> frozenset[str]:
        return frozenset(self._by_namespace)

    def clone(self) -> ElasticQuotaInfos:
        """An independent copy, for preemption's dry runs."""
        return ElasticQuotaInfos({ns: info.clone() for ns, info in self._by_namespace.items()})

    def total_used(self) -> Resource:
        total = Resource()
        for info in self._by_namespace.values():
            total.add(info.used)
        return total

    def total_min(self) -> Resource:
        total = Resource()
        for info in self._by_namespace.values():
            total.add(info.min)
        return total

    def aggregated_over_min_with(self, request: Resource) -> list[str]:
        """The resources where every quota's use plus ``request`` goes over the sum of
        every quota's ``min`` (upstream ``aggregatedUsedOverMinWith``): borrowing beyond
        what the others leave unused."""
        used = self.total_used()
        used.add(request)
        return exceeded(used, Resource(), self.total_min(), LOWER_BOUND_OF_MIN)

    def describe_over_min(
        self, names: Iterable[str], request: Resource, nominated: Resource
    ) -> str:
        """``nvidia.com/gpu: total used 5, request 1, sum of min 5`` for each of ``names``."""
        used, mins = self.total_used(), self.total_min()
        return "; ".join(
            _numbers(n, ("total used", used), request, nominated, ("sum of min", mins))
            for n in names
        )


def _numbers(
    name: str,
    used: tuple[str, Resource],
    request: Resource,
    nominated: Resource,
    bound: tuple[str, Resource],
) -> str:
    parts = [
        f"{used[0]} {format_amount(name, used[1].get(name))}",
        f"request {format_amount(name, request.get(name))}",
    ]
    if nominated.get(name):
        parts.append(f"nominated {format_amount(name, nominated.get(name))}")
    limit = bound[1].get(name) if name in _NATIVE else bound[1].scalar.get(name, 0)
    parts.append(f"{bound[0]} {format_amount(name, limit)}")
    return f"{name}: " + ", ".join(parts)
