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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kubesched.framework.handle import ClusterLister
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.plugins.dynamicresources.allocator import Allocation, DeviceID

__all__ = ["AllocatedDevices", "DRAManager", "manager_for", "with_allocation"]


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
        #: Changes with every allocation in flight or assumed claim, so that the devices
        #: in use are recomputed only when something changed.
        self._local = 0
        #: (driver, pool) → device → how many claims hold it (two only by mistake).
        self._holders: dict[tuple[str, str], dict[str, int]] = {}
        self._pool_sets: dict[tuple[str, str], frozenset[str]] = {}
        self._dirty: set[tuple[str, str]] = set()
        #: ``id()`` of every claim object in ``_devices``.
        self._known: set[int] = set()
        self._allocated: AllocatedDevices | None = None
        self._allocated_at: tuple[int, int] = (-1, -1)

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
                self._local += 1
                return informer
            return assumed

    def assume(self, claim: ResourceClaim) -> None:
        """Record the claim as written by PreBind."""
        with self._lock:
            self._assumed[claim.key] = claim
            self._local += 1

    def restore(self, claim: ResourceClaim) -> None:
        """Forget an assumed version of ``claim`` (Unreserve: the write is undone)."""
        with self._lock:
            if self._assumed.pop(claim.key, None) is not None:
                self._local += 1

    # --- in flight --------------------------------------------------------------------

    def has_pending_allocation(self, uid: str) -> bool:
        """Whether the claim's allocation is in flight (Reserve done, PreBind not)."""
        with self._lock:
            return uid in self._in_flight

    def signal_pending_allocation(self, claim: ResourceClaim, allocation: Allocation) -> None:
        """Reserve: the claim will get ``allocation``; its devices are taken now."""
        with self._lock:
            self._in_flight[claim.uid] = (claim, allocation)
            self._local += 1

    def remove_pending_allocation(self, uid: str) -> bool:
        """The allocation is written or abandoned; whether one was in flight."""
        with self._lock:
            removed = self._in_flight.pop(uid, None) is not None
            if removed:
                self._local += 1
            return removed

    # --- devices --------------------------------------------------------------------

    def allocated_devices(self) -> AllocatedDevices:
        """Every device allocated to some claim, in flight included; admin access does
        not take a device from others. Kept up to date claim by claim: only claims
        whose object changed since the last call are looked at again."""
        version = self.cluster.resource_claims_version()
        with self._lock:
            if self._allocated is not None and self._allocated_at == (version, self._local):
                return self._allocated
        claims: Sequence[ResourceClaim] = self.cluster.resource_claims()
        with self._lock:
            local = self._local
            cache = self._devices
            known = self._known
            assumed_claims = self._assumed
            for claim in claims:
                # The common case, a claim object seen before: one set lookup (the cache
                # keeps the objects alive, so their ids are not reused).
                if id(claim) in known:
                    continue
                key = claim.key
                current = claim
                assumed = assumed_claims.get(key)
                if assumed is not None:
                    if _newer_or_same(claim, assumed):
                        del assumed_claims[key]  # the informer caught up
                    else:
                        current = assumed
                self._account(key, current)
            # Claims PreBind wrote that the informer has not shown yet count as written.
            for key, assumed in list(assumed_claims.items()):
                cached = cache.get(key)
                if cached is None:
                    del assumed_claims[key]  # the claim is gone
                    continue
                if cached[0] is assumed:
                    continue
                if _newer_or_same(cached[0], assumed):
                    del assumed_claims[key]
                else:
                    self._account(key, assumed)
            if len(cache) != len(claims):
                listed = {c.key for c in claims}
                for key in [k for k in cache if k not in listed]:
                    gone = cache.pop(key)
                    known.discard(id(gone[0]))
                    self._count(gone[1], -1)
            for pool in self._dirty:
                devices = self._holders.get(pool)
                if devices:
                    self._pool_sets[pool] = frozenset(devices)
                else:
                    self._pool_sets.pop(pool, None)
            self._dirty.clear()
            by_pool = dict(self._pool_sets)
            for _, allocation in self._in_flight.values():
                for r in allocation.results:
                    if not r.admin_access:
                        pool = (r.driver, r.pool)
                        by_pool[pool] = by_pool.get(pool, frozenset()) | {r.device}
            result = AllocatedDevices(by_pool)
            self._allocated, self._allocated_at = result, (version, local)
            return result

    def _account(self, key: str, claim: ResourceClaim) -> None:
        """Count ``claim``'s devices in place of what was counted for ``key``."""
        cached = self._devices.get(key)
        if cached is not None:
            if cached[0] is claim:
                return
            self._known.discard(id(cached[0]))
            self._count(cached[1], -1)
        ids = frozenset(r.id for r in claim.results if claim.allocated and not r.admin_access)
        self._devices[key] = (claim, ids)
        self._known.add(id(claim))
        self._count(ids, 1)

    def _count(self, ids: frozenset[DeviceID], delta: int) -> None:
        for driver, pool, device in ids:
            key = (driver, pool)
            holders = self._holders.setdefault(key, {})
            count = holders.get(device, 0) + delta
            if count > 0:
                holders[device] = count
            else:
                holders.pop(device, None)
            self._dirty.add(key)


@dataclass(frozen=True, slots=True)
class AllocatedDevices:
    """The devices other claims hold, by (driver, pool); ``(driver, pool, device) in``
    it says whether one is taken."""

    by_pool: Mapping[tuple[str, str], frozenset[str]]

    def __contains__(self, device_id: object) -> bool:
        if not isinstance(device_id, tuple) or len(device_id) != 3:
            return False
        return device_id[2] in self.by_pool.get((device_id[0], device_id[1]), ())


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
