"""scheduler-plugins' ElasticQuota (``scheduling.x-k8s.io/v1alpha1``), as quota scheduling
reads it.

An ElasticQuota gives its namespace a guaranteed ``min`` it may lend, and a ``max`` it may
borrow up to. The CapacityScheduling plugin reads ``min`` and ``max``; the ElasticQuota
controller writes ``status.used``. Semantics of scheduler-plugins v0.34.7
(``pkg/capacityscheduling/elasticquota.go``): one quota per namespace; an absent ``min``
guarantees nothing (0 of every resource); an absent ``max`` limits nothing. Within a
``max`` or ``min`` that is set, an extended resource it does not name is unlimited (for
``max``) or not guaranteed (for ``min``), while cpu, memory and ephemeral-storage it does
not name are 0 — upstream compares those three field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.objects._decode import as_map, get_map, get_str
from kubesched.objects.errors import ObjectError
from kubesched.objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource

KIND = "ElasticQuota"

#: The bound an absent ``max`` stands for (upstream ``UpperBoundOfMax``, MaxInt64).
UPPER_BOUND_OF_MAX = 2**63 - 1
#: The bound an absent ``min`` stands for (upstream ``LowerBoundOfMin``).
LOWER_BOUND_OF_MIN = 0

_BOUNDED = (CPU, MEMORY, EPHEMERAL_STORAGE)
_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    """An ElasticQuota: ``spec.min``, ``spec.max`` and ``status.used``.

    Amounts are in the scheduler's integer units (cpu in millicores); treat them as
    read-only. ``min`` / ``max`` are None when the spec omits them; :meth:`min_of` and
    :meth:`max_of` give the bound upstream compares against either way.
    """

    namespace: str
    name: str
    uid: str = ""
    creation_timestamp: str = ""
    min: Resource | None = None
    max: Resource | None = None
    #: ``status.used``, as the controller last wrote it (empty before).
    used: Resource = field(default_factory=Resource)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    def effective_min(self) -> Resource:
        """``min`` as upstream's ``newElasticQuotaInfo`` fills it (0s when absent)."""
        return self.min.copy() if self.min is not None else Resource()

    def effective_max(self) -> Resource:
        """``max`` as upstream's ``newElasticQuotaInfo`` fills it: when absent, cpu,
        memory and ephemeral-storage at :data:`UPPER_BOUND_OF_MAX` (pods at 0, as
        upstream's bound list leaves them; pods count no request there)."""
        if self.max is not None:
            return self.max.copy()
        out = Resource()
        for name in _BOUNDED:
            out.set(name, UPPER_BOUND_OF_MAX)
        return out

    def min_of(self, name: str) -> int:
        """The guaranteed amount of resource ``name`` (cpu in millicores)."""
        return _bound(self.effective_min(), name, LOWER_BOUND_OF_MIN)

    def max_of(self, name: str) -> int:
        """The most of resource ``name`` the namespace may use (cpu in millicores);
        :data:`UPPER_BOUND_OF_MAX` when unlimited."""
        return _bound(self.effective_max(), name, UPPER_BOUND_OF_MAX)

    @classmethod
    def from_dict(cls, raw: object) -> ElasticQuota:
        """Decode an ElasticQuota. Raises ObjectError naming the quota and the field."""
        obj = as_map(raw, "")
        meta = get_map(obj, "metadata", "")
        name = get_str(meta, "name", "metadata")
        namespace = get_str(meta, "namespace", "metadata") or "default"
        try:
            if not name:
                raise ObjectError("metadata.name", "Required value: name is required")
            spec = get_map(obj, "spec", "")
            status = get_map(obj, "status", "")
            return cls(
                namespace=namespace,
                name=name,
                uid=get_str(meta, "uid", "metadata"),
                creation_timestamp=get_str(meta, "creationTimestamp", "metadata"),
                min=_optional_list(spec, "min"),
                max=_optional_list(spec, "max"),
                used=Resource.from_list(get_map(status, "used", "status"), "status.used"),
            )
        except ObjectError as err:
            raise err.located(f"ElasticQuota {namespace}/{name}") from None


def _optional_list(spec: object, key: str) -> Resource | None:
    raw = as_map(spec, "spec").get(key)
    if raw is None:
        return None
    return Resource.from_list(as_map(raw, f"spec.{key}"), f"spec.{key}")


def _bound(amounts: Resource, name: str, default: int) -> int:
    # Upstream's cmp2 compares the native fields as they are (an unnamed one is 0) and
    # looks extended resources up by name, falling back to the bound.
    if name in _NATIVE:
        return amounts.get(name)
    return amounts.scalar.get(name, default)
