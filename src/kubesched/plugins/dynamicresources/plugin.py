"""DynamicResources: allocates the devices of a pod's ResourceClaims (upstream
``pkg/scheduler/framework/plugins/dynamicresources``, release 1.34, structured parameters).

- **PreEnqueue** keeps a pod out of the active queue while one of its claims is not
  created yet, is being deleted, or (made from a template) is not owned by the pod.
- **PreFilter** reads the claims (Skip for a pod without any), checks that allocated ones
  can be reserved for the pod and that the classes of unallocated ones exist, and prepares
  the allocator with the devices other claims hold (allocations in flight included).
- **Filter** checks allocated claims' node selectors and searches an allocation of the
  unallocated claims on the node (:mod:`.allocator`), keeping it for Reserve.
- **PostFilter** deallocates one allocated claim that no other pod uses and that kept the
  pod off every node, so the next attempt may allocate it elsewhere.
- **Reserve** takes the node's allocation as in flight, so that no other pod gets its
  devices; **Unreserve** gives them back and removes the pod from ``reservedFor``.
- **PreBind** writes the finalizer, ``status.allocation`` and the pod in
  ``status.reservedFor`` (retrying on conflicts), through the handle's blocking client.

No Score, as in 1.34. Features that are alpha and off in 1.34 are refused by name (see
:mod:`.allocator`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.framework.apiclient import RESOURCE_CLAIMS, APIError, Conflict, retry_on_conflict
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPreFlightPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.podclaims import ClaimNameError, resolve_claim_name
from kubesched.objects.dra.slices import Pool, SliceIndex
from kubesched.objects.pod import Pod
from kubesched.objects.selectors import NodeSelector
from kubesched.plugins import names
from kubesched.plugins.dynamicresources.allocator import (
    Allocation,
    AllocationError,
    AllocationTimeout,
    Allocator,
    Unsatisfied,
    unsupported_request_fields,
)
from kubesched.plugins.dynamicresources.args import DynamicResourcesArgs
from kubesched.plugins.dynamicresources.dra_manager import DRAManager, manager_for

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_CLAIM_IN_USE",
    "ERR_NOT_AVAILABLE_ON_NODE",
    "ERR_TIMED_OUT",
    "FINALIZER",
    "NAME",
    "DynamicResources",
    "new",
]

if TYPE_CHECKING:
    from kubesched.framework.columns import NodeTable

NAME = names.DYNAMIC_RESOURCES
_STATE_KEY = NAME

#: ``resourceapi.Finalizer``: kept on a claim while it is allocated.
FINALIZER = "resource.kubernetes.io/delete-protection"

ERR_CLAIM_IN_USE = "resourceclaim in use"
ERR_NOT_AVAILABLE_ON_NODE = "resourceclaim not available on the node"
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_TIMED_OUT = "timed out trying to allocate devices"


@runtime_checkable
class SubmittingClient(Protocol):
    """A client that can run blocking API calls without the caller waiting (the live
    scheduler's, whose scheduling cycle must not block)."""

    def submit(self, what: str, call: Any) -> None: ...


@dataclass(eq=False)
class _State:
    """What PreFilter found, shared (not copied) with preemption's clones: Filter only
    adds to it under the lock, as upstream's ``stateData``."""

    #: The pod's claims, in ``spec.resourceClaims`` order.
    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    #: Indexes into ``claims`` of those the allocator allocates.
    to_allocate: list[int] = field(default_factory=list)
    #: Per claim: the nodes an allocated claim is available on (None: any).
    available_on: list[NodeSelector | None] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[Allocation]] = field(default_factory=dict)
    #: Per node: why no allocation was found (``explain``).
    unsatisfied: dict[str, Unsatisfied] = field(default_factory=dict)
    #: Set by Reserve, written by PreBind: claim index → allocation.
    allocations: dict[int, Allocation] = field(default_factory=dict)
    #: What the claims to allocate ask for, without their names: pods whose claims were
    #: made from one template share it, and so share one node's allocation.
    signature: Any = None
    #: The devices other claims hold, by (driver, pool).
    in_use: Mapping[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clone(self) -> _State:
        return self


def pod_claims_error(pod: Pod, manager: DRAManager) -> tuple[list[ResourceClaim], str | None]:
    """The pod's claims (upstream's ``foreachPodResourceClaim``), or the first reason why
    the pod cannot be scheduled yet."""
    claims: list[ResourceClaim] = []
    for entry in pod.resource_claims:
        try:
            resolved = resolve_claim_name(
                pod.namespace, pod.name, entry, pod.resource_claim_statuses
            )
        except ClaimNameError as err:
            return claims, err.message
        if resolved.name is None:
            continue  # the controller decided no claim is needed
        claim = manager.claim(pod.namespace, resolved.name)
        if claim is None:
            return claims, f'resourceclaim.resource.k8s.io "{resolved.name}" not found'
        if claim.deleting:
            return claims, f'resourceclaim "{claim.name}" is being deleted'
        if resolved.must_check_owner and not claim.is_controlled_by(pod.uid):
            return claims, (
                f"ResourceClaim {claim.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)"
            )
        claims.append(claim)
    return claims, None


class DynamicResources:
    """The DynamicResources plugin."""

    name = NAME

    def __init__(self, args: DynamicResourcesArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.manager = manager_for(handle.cluster)
        self._slices_version: int | None = None
        self._slice_index = SliceIndex(())
        #: node name → (its labels, its pools, their ids) for the current slices.
        self._pools: dict[str, tuple[Mapping[str, str], list[Pool], tuple[Any, ...]]] = {}
        #: (claims' signature, node) → (pools, devices in use, allocations, why not).
        self._results: dict[
            tuple[Any, str],
            tuple[list[Pool], tuple[Any, ...], list[Allocation] | None, Unsatisfied | None],
        ] = {}

    # --- queueing ------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events that may make a pod this plugin rejected schedulable."""
        return (
            # A device may be reachable only from nodes with some labels.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            # Allocation is tracked in claims: a claim created, allocated elsewhere,
            # deallocated, released, may help.
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_claim_change,
            ),
            # The resource-claim controller recording a generated claim's name in the
            # pod's status lets a pod waiting for it in.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            # A class the pod needs may have been created or changed.
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            # New or republished devices, for a pod whose claims are all there.
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_resource_slice_change,
            ),
        )

    def is_schedulable_after_claim_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when a claim the pod uses was created or its status changed, or when any
        claim was deallocated (its devices are free)."""
        if not isinstance(new, ResourceClaim):
            return QueueingHint.QUEUE
        claims, reason = pod_claims_error(pod, self.manager)
        if reason is not None:
            return QueueingHint.QUEUE_SKIP
        original = old if isinstance(old, ResourceClaim) else None
        if original is not None and original.allocated and not new.allocated:
            return QueueingHint.QUEUE
        if not any(c.uid == new.uid for c in claims):
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        if _status(original) == _status(new):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_resource_slice_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """Queue when the pod's claims all exist (new devices cannot help a pod still
        waiting for its claims)."""
        _, reason = pod_claims_error(pod, self.manager)
        return QueueingHint.QUEUE_SKIP if reason is not None else QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when the pod itself changed so that all its claims can be found."""
        if not isinstance(new, Pod) or new.uid != pod.uid:
            return QueueingHint.QUEUE_SKIP
        _, reason = pod_claims_error(new, self.manager)
        return QueueingHint.QUEUE_SKIP if reason is not None else QueueingHint.QUEUE

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Reject a pod whose claims are not all there (or not the pod's)."""
        if not pod.resource_claims:
            return None
        _, reason = pod_claims_error(pod, self.manager)
        return None if reason is None else Status.unresolvable(reason)

    # --- PreFilter -----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Read the claims, check what can be checked once, prepare the allocator."""
        s = _State()
        state.write(_STATE_KEY, s)
        if not pod.resource_claims:
            return None, Status.skip()
        claims, reason = pod_claims_error(pod, self.manager)
        if reason is not None:
            return None, Status.unresolvable(reason)
        if not claims:
            return None, Status.skip()
        s.available_on = [None] * len(claims)
        for index, claim in enumerate(claims):
            if claim.allocated:
                if not claim.can_be_reserved and not claim.is_reserved_for(pod.uid):
                    return None, Status.unresolvable(ERR_CLAIM_IN_USE)
                s.available_on[index] = claim.allocation_node_selector
                continue
            s.to_allocate.append(index)
            # Another pod's allocation of this shared claim is in flight: wait for it.
            if self.manager.has_pending_allocation(claim.uid):
                return None, Status.unresolvable(
                    f"resource claim {claim.key} is in the process of being allocated"
                )
            unsupported = unsupported_request_fields(claim)
            if unsupported is not None:
                return None, Status.unresolvable(unsupported)
            for request in claim.requests:
                for sub in request.alternatives:
                    name = (
                        request.name
                        if request.exactly is not None
                        else (f"{request.name}/{sub.name}")
                    )
                    status = self._validate_device_class(sub.device_class_name, name)
                    if status is not None:
                        return None, status
        s.claims = claims
        if s.to_allocate:
            timeout = self.args.filter_timeout or None
            allocated = self.manager.allocated_devices()
            to_allocate = [claims[i] for i in s.to_allocate]
            s.allocator = Allocator(
                to_allocate,
                allocated,
                self.handle.cluster.device_class,
                self._pools_for,
                timeout=timeout,
            )
            s.in_use = allocated.by_pool
            s.signature = _signature(to_allocate, self.handle.cluster.dra_version())
        return None, None

    def _validate_device_class(self, class_name: str, request_name: str) -> Status | None:
        if not class_name:
            return Status.error(f"request {request_name}: unsupported request type")
        if self.handle.cluster.device_class(class_name) is None:
            return Status.unresolvable(
                f"request {request_name}: device class {class_name} does not exist"
            )
        return None

    def _refresh_slices(self) -> None:
        """Index the slices again (and forget the pools kept) if one changed."""
        version = self.handle.cluster.dra_version()
        if version != self._slices_version:
            self._slice_index = SliceIndex(self.handle.cluster.resource_slices())
            self._pools = {}
            self._slices_version = version

    def _pools_for(self, node_name: str, labels: Mapping[str, str]) -> list[Pool]:
        """The node's pools, kept until a slice or class changes."""
        self._refresh_slices()
        cached = self._pools.get(node_name)
        if cached is not None and cached[0] == labels:
            return cached[1]
        pools = self._slice_index.pools(node_name, labels)
        self._pools[node_name] = (labels, pools, tuple(p.id for p in pools))
        return pools

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # --- Filter --------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Whether the pod's claims are (or can be) allocated for the node."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None:
            return Status.error(f"reading {_STATE_KEY!r} from cycle state: PreFilter did not run")
        if not s.claims:
            return None
        node = node_info.node
        unavailable = [
            i
            for i, selector in enumerate(s.available_on)
            if selector is not None and not selector.matches(node.name, node.labels)
        ]
        allocations: list[Allocation] | None = None
        if s.allocator is not None:
            try:
                allocations, why = self._allocate(s, node.name, node.labels)
            except AllocationTimeout:
                return Status.unresolvable(ERR_TIMED_OUT)
            except AllocationError as err:
                return Status.error(str(err))
            if allocations is None:
                if why is not None:
                    with s.lock:
                        s.unsatisfied[node.name] = why
                return Status.unresolvable(ERR_CANNOT_ALLOCATE)
        with s.lock:
            if unavailable:
                s.unavailable.update(unavailable)
                return Status.unresolvable(ERR_NOT_AVAILABLE_ON_NODE)
            if allocations is not None:
                s.node_allocations[node.name] = allocations
        return None

    def _allocate(
        self, s: _State, node_name: str, labels: Mapping[str, str]
    ) -> tuple[list[Allocation] | None, Unsatisfied | None]:
        """The node's allocation, searched once per kind of claims and state of the
        node: the search depends only on what the claims ask for (their signature),
        the node's pools and which of their devices are in use; claims made from one
        template ask for the same, so the next pod's Filter reuses the result."""
        assert s.allocator is not None
        pools = self._pools_for(node_name, labels)
        in_use = tuple(map(s.in_use.get, self._pools[node_name][2]))
        key = (s.signature, node_name)
        hit = self._results.get(key)
        if hit is not None and hit[0] is pools and hit[1] == in_use:
            allocations, why = hit[2], hit[3]
        else:
            allocations, why = s.allocator.allocate(node_name, labels)
            if len(self._results) >= _RESULTS_KEPT:
                self._results.clear()
            self._results[key] = (pools, in_use, allocations, why)
        return allocations, why

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` (one call instead of one per node). The
        common case — claims to allocate, none allocated already — looks each node's
        search result up without the per-node call."""
        s: _State | None = state.get(_STATE_KEY)
        if s is not None and not s.claims:
            return None
        infos = self.handle.snapshot.list()
        codes = np.zeros(len(rows), dtype=np.int16)
        seen: dict[Status, int] = {}
        if s is None or s.allocator is None or any(a is not None for a in s.available_on):
            for i, row in enumerate(rows.tolist()):
                status = self.filter(state, pod, infos[row])
                if status is not None:
                    codes[i] = seen.setdefault(status, len(seen) + 1)
            return NodeVerdicts(codes, tuple(seen)) if seen else None
        self._refresh_slices()
        pools_kept, results, in_use = self._pools, self._results, s.in_use
        signature = s.signature
        cannot = Status.unresolvable(ERR_CANNOT_ALLOCATE)
        for i, row in enumerate(rows.tolist()):
            node = infos[row].node
            name = node.name
            kept = pools_kept.get(name)
            hit = results.get((signature, name))
            if kept is not None and hit is not None and kept[0] == node.labels:
                pools = kept[1]
                if hit[0] is pools and hit[1] == tuple(map(in_use.get, kept[2])):
                    allocations, why = hit[2], hit[3]
                    if allocations is None:
                        codes[i] = seen.setdefault(cannot, len(seen) + 1)
                        if why is not None:
                            s.unsatisfied[name] = why
                    else:
                        s.node_allocations[name] = allocations
                    continue
            status = self.filter(state, pod, infos[row])
            if status is not None:
                codes[i] = seen.setdefault(status, len(seen) + 1)
        return NodeVerdicts(codes, tuple(seen)) if seen else None

    def explain_detail(self, state: CycleState, node_name: str) -> str | None:
        """For ``explain``: which request the node could not satisfy and why."""
        why = self.unsatisfied(state, node_name)
        return None if why is None else str(why)

    def unsatisfied(self, state: CycleState, node_name: str) -> Unsatisfied | None:
        """Why the last Filter of ``node_name`` found no allocation (for ``explain``)."""
        s: _State | None = state.get(_STATE_KEY)
        why = None if s is None else s.unsatisfied.get(node_name)
        if why is None or s is None or s.allocator is None:
            return why
        # Kept from another pod's search with claims of the same kind: name this one's.
        claim = s.allocator.claims[why.claim_index]
        return why if why.claim == claim.key else dataclasses.replace(why, claim=claim.key)

    # --- PostFilter ----------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Deallocate one claim that kept the pod off every node, when no other pod holds
        it (upstream's rule); the pod stays unschedulable for this attempt."""
        if not pod.resource_claims:
            return None, Status(Code.UNSCHEDULABLE)
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            holders = claim.reserved_for
            if not holders or (len(holders) == 1 and holders[0].uid == pod.uid):
                self._deallocate(claim)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    def _deallocate(self, claim: ResourceClaim) -> None:
        client = self.handle.client

        def call() -> None:
            current = client.get(RESOURCE_CLAIMS, claim.name, claim.namespace)
            if current.get("metadata", {}).get("uid") != claim.uid:
                return
            status = current.setdefault("status", {})
            status.pop("reservedFor", None)
            status.pop("allocation", None)
            client.update_status(RESOURCE_CLAIMS, current)

        self._run(f"deallocating ResourceClaim {claim.key}", call)

    def _run(self, what: str, call: Any) -> None:
        """Run a write the scheduling cycle need not wait for: in the live scheduler off
        its event loop, elsewhere at once. A failure is left for the next attempt."""
        client = self.handle.client
        if isinstance(client, SubmittingClient):
            client.submit(what, call)
            return
        # On failure we get here again when the pod is retried.
        with contextlib.suppress(APIError):
            call()

    # --- Reserve / Unreserve -------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Take the node's allocation as in flight, so no other pod gets its devices."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.claims or not s.to_allocate or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return Status.error("claim allocation not found for node")
        if len(allocations) != len(s.to_allocate):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, "
                f"{len(s.to_allocate)} claims to allocate"
            )
        for index, allocation in zip(s.to_allocate, allocations, strict=True):
            s.allocations[index] = allocation
            self.manager.signal_pending_allocation(s.claims[index], allocation)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Give back allocations in flight; drop the pod from ``reservedFor``."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.claims:
            return
        for claim in s.claims:
            if self.manager.remove_pending_allocation(claim.uid):
                self.manager.restore(claim)
        for claim in s.claims:
            current = self.manager.claim(claim.namespace, claim.name) or claim
            if current.allocated and current.is_reserved_for(pod.uid):
                self._unreserve_claim(current, pod)

    def _unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        client = self.handle.client

        def call() -> None:
            def attempt() -> None:
                current = client.get(RESOURCE_CLAIMS, claim.name, claim.namespace)
                if current.get("metadata", {}).get("uid") != claim.uid:
                    return
                status = current.get("status") or {}
                reserved = status.get("reservedFor") or []
                kept = [r for r in reserved if r.get("uid") != pod.uid]
                if len(kept) == len(reserved):
                    return
                status["reservedFor"] = kept
                current["status"] = status
                client.update_status(RESOURCE_CLAIMS, current)

            retry_on_conflict(attempt)

        self._run(f"unreserving ResourceClaim {claim.key} for pod {pod.key}", call)

    # --- PreBind -------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip pods without claims, and pods whose claims are all reserved for them."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.claims:
            return Status.skip()
        if all(c.is_reserved_for(pod.uid) for c in s.claims):
            return Status.skip()
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write each claim's allocation (from Reserve) and the pod's reservation."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if claim.is_reserved_for(pod.uid):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod)
            except (APIError, _BindError) as err:
                return Status.error(str(err))
        return None

    def _bind_claim(self, s: _State, index: int, pod: Pod) -> ResourceClaim:
        claim = s.claims[index]
        allocation = s.allocations.get(index)
        client = self.handle.client
        fresh = [False]

        def attempt() -> dict[str, Any]:
            if fresh[0]:
                try:
                    current = client.get(RESOURCE_CLAIMS, claim.name, claim.namespace)
                except APIError as err:
                    raise _BindError(
                        f"get updated claim {claim.key} after conflict: {err}"
                    ) from err
            else:
                fresh[0] = True
                current = client.get(RESOURCE_CLAIMS, claim.name, claim.namespace)
            meta = current.setdefault("metadata", {})
            if meta.get("uid") != claim.uid:
                raise _BindError(f"claim {claim.key} got deleted in the meantime")
            if meta.get("deletionTimestamp"):
                raise _BindError(f"claim {claim.key} got deleted in the meantime")
            status = current.setdefault("status", {})
            if allocation is not None:
                if status.get("allocation") is not None:
                    raise _BindError(f"claim {claim.key} got allocated elsewhere in the meantime")
                finalizers = meta.setdefault("finalizers", [])
                if FINALIZER not in finalizers:
                    finalizers.append(FINALIZER)
                    try:
                        current = client.update(RESOURCE_CLAIMS, current)
                    except Conflict:
                        raise
                    except APIError as err:
                        raise _BindError(f"add finalizer to claim {claim.key}: {err}") from err
                    status = current.setdefault("status", {})
                status["allocation"] = allocation.to_dict()
            reserved = status.setdefault("reservedFor", [])
            reserved.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
            try:
                return client.update_status(RESOURCE_CLAIMS, current)
            except Conflict:
                raise
            except APIError as err:
                what = "add allocation and reservation to" if allocation else "add reservation to"
                raise _BindError(f"{what} claim {claim.key}: {err}") from err

        try:
            stored = retry_on_conflict(attempt)
            written = ResourceClaim.from_dict(stored)
            if allocation is not None:
                self.manager.assume(written)
            return written
        finally:
            if allocation is not None:
                self.manager.remove_pending_allocation(claim.uid)


class _BindError(Exception):
    """A PreBind failure that is not worth retrying here (upstream's wrapped errors)."""


#: How many (claims, node) search results Filter keeps.
_RESULTS_KEPT = 100_000


def _signature(claims: Sequence[ResourceClaim], classes_version: int) -> Any:
    """What a search depends on in ``claims``: requests, constraints and configuration
    (not names), and the version of the classes and slices."""
    return (
        classes_version,
        tuple(
            (c.requests, c.constraints, json.dumps(c.config, sort_keys=True, default=str))
            for c in claims
        ),
    )


def _status(claim: ResourceClaim) -> tuple[object, ...]:
    return (claim.allocated, claim.results, claim.allocation_node_selector, claim.reserved_for)


_checks: tuple[
    type[PreEnqueuePlugin],
    type[PreFilterPlugin],
    type[FilterPlugin],
    type[PostFilterPlugin],
    type[ReservePlugin],
    type[PreBindPreFlightPlugin],
    type[EnqueueExtensions],
    type[VectorFilterPlugin],
] = (DynamicResources,) * 8


def new(args: Mapping[str, Any] | None, handle: Handle) -> DynamicResources:
    """Build the plugin from ``pluginConfig`` args; raises ArgsError listing every problem."""
    decoded, errors = DynamicResourcesArgs.from_mapping(args)
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return DynamicResources(decoded, handle)
