"""What the DynamicResources plugin knows beyond the informers: allocations in flight and
claims it wrote but the informers have not shown yet.

Upstream keeps both in the scheduler's shared DRA manager (``dra_manager.go``): the
``inFlightAllocations`` map, filled in Reserve and emptied when PreBind's write is done or
Unreserve undoes it, and the claims' assume cache, which holds a claim as PreBind wrote it
until the informer delivers that version. Without them a device could be given twice: the
next pod's PreFilter would run before the informer reports the first pod's allocation,
and see the device free. Allocated devices therefore count the informers' claims, the
assumed ones in their place, and the allocations in flight.

One manager serves every profile of a scheduler (all read the same cluster lister); the
plugin's Reserve and Unreserve run on the scheduling thread and PreBind in worker
threads, so everything here is under one lock.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Sequence

from kubesched.framework.handle import ClusterLister
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.plugins.dynamicresources.allocator import Allocation, DeviceID

__all__ = ["DRAManager", "manager_for", "with_allocation"]


def _newer_or_same(informer: ResourceClaim, assumed: ResourceClaim) -> bool:
    """Whether the informer's copy has caught up with what PreBind wrote (the assume
    cache drops its object once the informer's resourceVersion is not older)."""
    if informer.uid != assumed.uid:
        return True  # deleted and made again: the assumed object is gone
    a, b = informer.resource_version, assumed.resource_version
    if a.isdigit() and b.isdigit():
        return int(a) >= int(b)
    return a == b


class DRAManager:
    """Allocations in flight and assumed claims, over a cluster lister."""

    def __init__(self, cluster: ClusterLister) -> None:
        self.cluster = cluster
        self._lock = threading.Lock()
        #: claim uid → (claim as Reserve saw it, its allocation): between Reserve and
        #: the end of PreBind's write (or Unreserve).
        self._in_flight: dict[str, tuple[ResourceClaim, Allocation]] = {}
        #: claim key → the claim as PreBind wrote it, until the informer has it.
        self._assumed: dict[str, ResourceClaim] = {}
        #: claim key → (claim object seen, its devices), so that each PreFilter does not
        #: recompute every claim's devices.
        self._devices: dict[str, tuple[ResourceClaim, frozenset[DeviceID]]] = {}

    # --- claims ---------------------------------------------------------------------

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim as the scheduler knows it: the informer's, or the one PreBind wrote
        if the informer has not caught up."""
        key = f"{namespace}/{name}"
        informer = self.cluster.resource_claim(namespace, name)
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is None:
                return informer
            if informer is None or _newer_or_same(informer, assumed):
                del self._assumed[key]
                return informer
            return assumed

    def assume(self, claim: ResourceClaim) -> None:
        """Record the claim as written by PreBind."""
        with self._lock:
            self._assumed[claim.key] = claim

    def restore(self, claim: ResourceClaim) -> None:
        """Forget an assumed version of ``claim`` (Unreserve: the write is undone)."""
        with self._lock:
            self._assumed.pop(claim.key, None)

    # --- in flight --------------------------------------------------------------------

    def has_pending_allocation(self, uid: str) -> bool:
        """Whether the claim's allocation is in flight (Reserve done, PreBind not)."""
        with self._lock:
            return uid in self._in_flight

    def signal_pending_allocation(self, claim: ResourceClaim, allocation: Allocation) -> None:
        """Reserve: the claim will get ``allocation``; its devices are taken now."""
        with self._lock:
            self._in_flight[claim.uid] = (claim, allocation)

    def remove_pending_allocation(self, uid: str) -> bool:
        """The allocation is written or abandoned; whether one was in flight."""
        with self._lock:
            return self._in_flight.pop(uid, None) is not None

    # --- devices --------------------------------------------------------------------

    def allocated_devices(self) -> set[DeviceID]:
        """Every device allocated to some claim, in flight included; admin access does
        not take a device from others."""
        claims: Sequence[ResourceClaim] = self.cluster.resource_claims()
        out: set[DeviceID] = set()
        seen: set[str] = set()
        with self._lock:
            cache = self._devices
            for claim in claims:
                key = claim.key
                seen.add(key)
                assumed = self._assumed.get(key)
                current = claim
                if assumed is not None and not _newer_or_same(claim, assumed):
                    current = assumed
                cached = cache.get(key)
                if cached is None or cached[0] is not current:
                    ids = frozenset(
                        r.id for r in current.results if current.allocated and not r.admin_access
                    )
                    cache[key] = (current, ids)
                    out.update(ids)
                else:
                    out.update(cached[1])
            for key in [k for k in cache if k not in seen]:
                del cache[key]
            for _, allocation in self._in_flight.values():
                out.update(r.id for r in allocation.results if not r.admin_access)
        return out


def with_allocation(claim: ResourceClaim, allocation: Allocation) -> ResourceClaim:
    """``claim`` as it reads with ``allocation`` written."""
    return dataclasses.replace(
        claim,
        allocated=True,
        results=allocation.results,
        allocation_node_selector=allocation.typed_node_selector(),
    )


_MANAGERS: weakref.WeakKeyDictionary[object, DRAManager] = weakref.WeakKeyDictionary()
_MANAGERS_LOCK = threading.Lock()


def manager_for(cluster: ClusterLister) -> DRAManager:
    """The manager shared by every plugin instance reading ``cluster`` (every profile of
    one scheduler or simulation)."""
    with _MANAGERS_LOCK:
        try:
            manager = _MANAGERS.get(cluster)
        except TypeError:  # not weakly referenceable: one manager per caller
            return DRAManager(cluster)
        if manager is None:
            manager = DRAManager(cluster)
            _MANAGERS[cluster] = manager
        return manager
