"""NodeResourcesFit: does the node have room for the pod's requests, and how good a fit is it.

Mirrors upstream's ``noderesources/fit.go`` (release-1.34, default feature gates:
SidecarContainers, PodLevelResources, InPlacePodVerticalScaling and SchedulingQueueHint on,
DRAExtendedResource off).

* PreFilter works out the pod's effective requests once (``Pod.requests``: containers
  summed, init containers as peaks, sidecars, overhead, pod-level requests).
* Filter rejects a node that would exceed its pod count or its allocatable cpu, memory,
  ephemeral storage or any scalar resource the pod asks for, with one reason per missing
  resource. A request larger than the node's whole allocatable makes the rejection
  UnschedulableAndUnresolvable, since evicting pods cannot help.
* PreScore/Score rank nodes with the configured strategy (LeastAllocated by default) over
  the configured resources; see ``resource_allocation``.

``filter_nodes`` and ``score_nodes`` are the same Filter and Score over the node table
(``framework/vector.py``): the per-node methods stay the reference, used by preemption and
for nodes with nominated pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    PreFilterExtensions,
    PreFilterResult,
    QueueingHint,
    ScoreExtensions,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.framework.vector import NodeVerdicts
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    is_extended_resource_name,
)
from kubesched.objects.selectors import qualified_name_errors
from kubesched.plugins.noderesources.least_allocated import (
    least_resource_scorer,
    least_resource_vector_scorer,
)
from kubesched.plugins.noderesources.most_allocated import (
    most_resource_scorer,
    most_resource_vector_scorer,
)
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    UtilizationShapePoint,
    requested_to_capacity_ratio_scorer,
    requested_to_capacity_ratio_vector_scorer,
    validate_function_shape,
)
from kubesched.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    decode_resource_specs,
    nested_errors,
)
from kubesched.plugins.noderesources.vectorized import AllocCache, IntArray, gather_first

NAME = "NodeResourcesFit"

PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

REASON_TOO_MANY_PODS = "Too many pods"
REASON_INSUFFICIENT_CPU = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"


def insufficient_reason(resource_name: str) -> str:
    """The reason for any other resource: ``Insufficient nvidia.com/gpu``."""
    return f"Insufficient {resource_name}"


LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
#: Sorted, as upstream lists them in its "supported values".
SUPPORTED_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

_MAX_RESOURCE_WEIGHT = 100


# --- arguments ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """How Score ranks nodes (upstream ``config.ScoringStrategy``)."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    #: ``requestedToCapacityRatio.shape``; None when ``requestedToCapacityRatio`` is absent.
    shape: tuple[UtilizationShapePoint, ...] | None = None


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """NodeResourcesFit's arguments, after the v1 defaulting (an absent strategy is
    LeastAllocated over cpu and memory, absent resources are cpu and memory, an absent or
    zero weight is 1)."""

    #: Extended resources Filter does not check (e.g. ``example.com/foo``).
    ignored_resources: tuple[str, ...] = ()
    #: Groups of extended resources Filter does not check: ``example.com`` covers
    #: ``example.com/foo`` and ``example.com/bar``.
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

    @classmethod
    def decode(cls, raw: Mapping[str, Any] | None) -> tuple[NodeResourcesFitArgs, list[FieldError]]:
        """The args in ``raw`` (``pluginConfig[].args``), with what could not be decoded."""
        reader = ArgsReader(raw, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"))
        errors = reader.errors
        ignored = _string_list(reader.args.get("ignoredResources"), "ignoredResources", errors)
        groups = _string_list(
            reader.args.get("ignoredResourceGroups"), "ignoredResourceGroups", errors
        )
        strategy = _decode_strategy(reader.args.get("scoringStrategy"), errors)
        return cls(ignored, groups, strategy), errors

    def validate(self) -> list[FieldError]:
        """Every problem, with paths relative to the args (upstream
        ``ValidateNodeResourcesFitArgs``)."""
        errors: list[FieldError] = []
        for i, name in enumerate(self.ignored_resources):
            path = f"ignoredResources[{i}]"
            errors.extend(FieldError.invalid(path, name, m) for m in qualified_name_errors(name))
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                errors.append(
                    FieldError.invalid(path, group, "resource group name can't contain '/'")
                )
            errors.extend(FieldError.invalid(path, group, m) for m in qualified_name_errors(group))
        strategy = self.scoring_strategy
        if strategy.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
            errors.append(
                FieldError.not_supported(
                    "scoringStrategy.type", strategy.type, SUPPORTED_SCORING_STRATEGY_TYPES
                )
            )
        for i, resource in enumerate(strategy.resources):
            if not 0 < resource.weight <= _MAX_RESOURCE_WEIGHT:
                errors.append(
                    FieldError.invalid(
                        f"scoringStrategy.resources[{i}].weight",
                        resource.weight,
                        f"resource weight of {resource.name} not in valid range (0, 100]",
                    )
                )
        # Upstream reports shape problems at scoringStrategy.shape, without the
        # requestedToCapacityRatio level; kept so that messages match.
        if strategy.shape is not None:
            errors.extend(validate_function_shape(strategy.shape, "scoringStrategy.shape"))
        elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            # Upstream would dereference a nil shape here and crash; report it instead.
            errors.append(
                FieldError.required("scoringStrategy.shape", "at least one point must be specified")
            )
        return errors


def _string_list(raw: object, path: str, errors: list[FieldError]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.append(FieldError.invalid(path, raw, "must be a list of strings"))
        return ()
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            out.append(item)
        else:
            errors.append(FieldError.invalid(f"{path}[{i}]", item, "must be a string"))
    return tuple(out)


def _decode_strategy(raw: object, errors: list[FieldError]) -> ScoringStrategy:
    path = "scoringStrategy"
    if raw is None:
        return ScoringStrategy()
    if not isinstance(raw, Mapping):
        errors.append(FieldError.invalid(path, raw, "must be an object"))
        return ScoringStrategy()
    reader = ArgsReader(raw, ("type", "resources", "requestedToCapacityRatio"))
    # No default for the type of a strategy that is given: "" fails validation, as upstream.
    strategy_type = reader.get("type", str, "")
    ratio = reader.get("requestedToCapacityRatio", dict, None)
    nested_errors(reader, path, errors)
    resources = decode_resource_specs(raw.get("resources"), f"{path}.resources", errors)
    shape = None
    if ratio is not None:
        shape = _decode_shape(ratio, f"{path}.requestedToCapacityRatio", errors)
    return ScoringStrategy(strategy_type, resources, shape)


def _decode_shape(
    raw: Mapping[str, Any], path: str, errors: list[FieldError]
) -> tuple[UtilizationShapePoint, ...]:
    reader = ArgsReader(raw, ("shape",))
    points_raw = reader.get("shape", list, [])
    nested_errors(reader, path, errors)
    points = []
    for i, item in enumerate(points_raw):
        item_path = f"{path}.shape[{i}]"
        if not isinstance(item, Mapping):
            errors.append(FieldError.invalid(item_path, item, "must be an object"))
            continue
        point_reader = ArgsReader(item, ("utilization", "score"))
        utilization = point_reader.get("utilization", int, 0)
        score = point_reader.get("score", int, 0)
        nested_errors(point_reader, item_path, errors)
        points.append(UtilizationShapePoint(utilization, score))
    return tuple(points)


# --- filtering ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """A resource the node lacks for the pod (upstream ``InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    #: The request exceeds the node's whole allocatable: no eviction can make room.
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class PodResourceRequest:
    """What Filter checks: the pod's effective requests (cpu in millicores) and its
    non-zero scalar requests, sorted by name so that reasons come in a stable order."""

    milli_cpu: int
    memory: int
    ephemeral_storage: int
    scalars: tuple[tuple[str, int], ...]

    def clone(self) -> PodResourceRequest:
        """Immutable: shared by clones of the cycle state."""
        return self


def compute_pod_resource_request(
    pod: Pod,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_resource_groups: frozenset[str] = frozenset(),
) -> PodResourceRequest:
    """The pod's requests as Filter checks them, without the ignored extended resources."""
    requests = pod.requests
    scalars = sorted(
        (name, quantity)
        for name, quantity in requests.scalar.items()
        if quantity and not _ignored(name, ignored_resources, ignored_resource_groups)
    )
    return PodResourceRequest(
        requests.milli_cpu, requests.memory, requests.ephemeral_storage, tuple(scalars)
    )


def _ignored(name: str, ignored: frozenset[str], groups: frozenset[str]) -> bool:
    # Only extended resources can be ignored; hugepages and the like are always checked.
    if not (ignored or groups) or not is_extended_resource_name(name):
        return False
    return name in ignored or name.split("/", 1)[0] in groups


def fits_request(request: PodResourceRequest, node_info: NodeInfo) -> list[InsufficientResource]:
    """Every resource the node lacks for ``request``, in upstream's order: pods, cpu,
    memory, ephemeral storage, then scalar resources (by name). Empty when it fits."""
    out: list[InsufficientResource] = []
    allocatable = node_info.allocatable
    used = node_info.requested
    allowed_pods = allocatable.allowed_pod_number
    pod_count = len(node_info.pods)
    if pod_count + 1 > allowed_pods:
        out.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, pod_count, allowed_pods))
    # A resource the pod does not request cannot be short, even on an overcommitted node.
    cpu = request.milli_cpu
    if cpu > 0 and cpu > allocatable.milli_cpu - used.milli_cpu:
        out.append(
            InsufficientResource(
                CPU,
                REASON_INSUFFICIENT_CPU,
                cpu,
                used.milli_cpu,
                allocatable.milli_cpu,
                cpu > allocatable.milli_cpu,
            )
        )
    memory = request.memory
    if memory > 0 and memory > allocatable.memory - used.memory:
        out.append(
            InsufficientResource(
                MEMORY,
                REASON_INSUFFICIENT_MEMORY,
                memory,
                used.memory,
                allocatable.memory,
                memory > allocatable.memory,
            )
        )
    storage = request.ephemeral_storage
    if storage > 0 and storage > allocatable.ephemeral_storage - used.ephemeral_storage:
        out.append(
            InsufficientResource(
                EPHEMERAL_STORAGE,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
                storage,
                used.ephemeral_storage,
                allocatable.ephemeral_storage,
                storage > allocatable.ephemeral_storage,
            )
        )
    if request.scalars:
        node_scalar = allocatable.scalar
        used_scalar = used.scalar
        for name, quantity in request.scalars:
            capacity = node_scalar.get(name, 0)
            in_use = used_scalar.get(name, 0)
            if quantity > capacity - in_use:
                out.append(
                    InsufficientResource(
                        name,
                        insufficient_reason(name),
                        quantity,
                        in_use,
                        capacity,
                        quantity > capacity,
                    )
                )
    return out


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Upstream's ``Fits``: what ``node_info`` lacks for ``pod``, ignoring nothing."""
    return fits_request(compute_pod_resource_request(pod), node_info)


def is_fit(pod: Pod, node: Node | None) -> bool:
    """Whether ``pod`` fits an empty ``node`` (False without a node)."""
    if node is None:
        return False
    return not fits(pod, NodeInfo(node))


def have_any_requested_resources_increased(pod: Pod, old: Node, new: Node) -> bool:
    """Whether the update raised the pod count or the allocatable of a resource the pod
    requests."""
    before, after = old.allocatable, new.allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    request = compute_pod_resource_request(pod)
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, _ in request.scalars
    )


# --- the plugin --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    #: The pod's request for each scored resource, in configuration order.
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


def _build_scorer(strategy: ScoringStrategy) -> ResourceAllocationScorer:
    resources = strategy.resources
    if strategy.type == LEAST_ALLOCATED:
        scorer = least_resource_scorer(resources)
        vector = least_resource_vector_scorer(resources)
    elif strategy.type == MOST_ALLOCATED:
        scorer = most_resource_scorer(resources)
        vector = most_resource_vector_scorer(resources)
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = strategy.shape or ()
        scorer = requested_to_capacity_ratio_scorer(resources, shape)
        vector = requested_to_capacity_ratio_vector_scorer(resources, shape)
    else:
        raise ValueError(f"scoring strategy {strategy.type} is not supported")
    return ResourceAllocationScorer(strategy.type, resources, scorer, vector_scorer=vector)


#: (resource column or None when the table has none, amount requested, reason) — one
#: per resource Filter checks, in the order of the reasons.
_Check = tuple[int | None, int, str]


def _checks(request: PodResourceRequest, table: NodeTable) -> list[_Check]:
    # As fits_request: cpu, memory and ephemeral storage only when requested, scalar
    # resources (non-zero by construction) always, by name.
    out: list[_Check] = []
    if request.milli_cpu > 0:
        out.append((0, request.milli_cpu, REASON_INSUFFICIENT_CPU))
    if request.memory > 0:
        out.append((1, request.memory, REASON_INSUFFICIENT_MEMORY))
    if request.ephemeral_storage > 0:
        out.append((2, request.ephemeral_storage, REASON_INSUFFICIENT_EPHEMERAL_STORAGE))
    for name, quantity in request.scalars:
        out.append((table.resource(name), quantity, insufficient_reason(name)))
    return out


class Fit:
    """The NodeResourcesFit plugin: PreFilter, Filter, PreScore, Score, EnqueueExtensions."""

    name = NAME

    def __init__(
        self,
        args: NodeResourcesFitArgs,
        handle: Handle | None = None,
        *,
        enable_in_place_pod_vertical_scaling: bool = True,
    ) -> None:
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self._scorer = _build_scorer(args.scoring_strategy)
        #: With in-place resize (on by default in 1.34), a running pod can shrink and free room.
        self._in_place_scaling = enable_in_place_pod_vertical_scaling
        self._handle = handle
        self._alloc = AllocCache()

    # PreFilter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Record the pod's requests for Filter. Never rejects."""
        request = compute_pod_resource_request(
            pod, self._ignored_resources, self._ignored_resource_groups
        )
        state.write(PRE_FILTER_STATE_KEY, request)
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state holds only the pod's own requests, which preemption cannot change."""
        return None

    # Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable with one reason per lacking resource; UnschedulableAndUnresolvable
        when a request exceeds the node's allocatable outright."""
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        insufficient = fits_request(request, node_info)
        if not insufficient:
            return None
        code = Code.UNSCHEDULABLE
        for resource in insufficient:
            if resource.unresolvable:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                break
        return Status(code, tuple(r.reason for r in insufficient))

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` of ``table``: one Status per distinct set
        of lacking resources, the same code and reasons as per node."""
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, PodResourceRequest):
            status = Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (status,))
        checks = _checks(request, table)
        if not gather_first(table, rows) and not self._any_short(table, checks):
            # The usual answer, found without gathering anything.
            return None
        return self._verdicts(table, rows, checks)

    def _any_short(self, table: NodeTable, checks: list[_Check]) -> bool:
        """Whether any node of the table lacks anything (a cheap pre-check)."""
        if np.count_nonzero(table.pod_count >= table.allowed_pods):
            return True
        for index, amount, _ in checks:
            if index is None:
                # No node has any: short everywhere if asked for.
                if amount > 0:
                    return True
                continue
            free = np.subtract(self._alloc.column(table, index).values, table.requested[:, index])
            if np.count_nonzero(free < amount):
                return True
        return False

    def _verdicts(
        self, table: NodeTable, rows: IntArray, checks: list[_Check]
    ) -> NodeVerdicts | None:
        if len(checks) > 61:
            # More resources than bits in a key: judge node by node (never in practice).
            return self._verdicts_per_node(table, rows, checks)
        # Bit 0: too many pods; bit k: checks[k - 1] is short. Then one more bit, at the
        # bottom, for "some short resource exceeds allocatable outright".
        bits = (table.pod_count[rows] >= table.allowed_pods[rows]).astype(np.int64)
        unresolvable = np.zeros(len(rows), dtype=np.bool_)
        for k, (index, amount, _) in enumerate(checks, start=1):
            if index is None:
                if amount > 0:
                    bits |= 1 << k
                    unresolvable[:] = True
                continue
            capacity = table.allocatable[rows, index]
            short = amount > capacity - table.requested[rows, index]
            bits |= short.astype(np.int64) << k
            unresolvable |= short & (amount > capacity)
        keys = bits * 2 + unresolvable
        failed = np.flatnonzero(keys)
        if not len(failed):
            return None
        distinct, inverse = np.unique(keys[failed], return_inverse=True)
        statuses = tuple(self._status(int(key), checks) for key in distinct.tolist())
        codes = np.zeros(len(rows), dtype=np.int32)
        codes[failed] = inverse.reshape(-1) + 1
        return NodeVerdicts(codes, statuses)

    @staticmethod
    def _status(key: int, checks: list[_Check]) -> Status:
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key & 1 else Code.UNSCHEDULABLE
        bits = key >> 1
        reasons = [REASON_TOO_MANY_PODS] if bits & 1 else []
        reasons.extend(reason for k, (_, _, reason) in enumerate(checks, 1) if bits >> k & 1)
        return Status(code, tuple(reasons))

    def _verdicts_per_node(
        self, table: NodeTable, rows: IntArray, checks: list[_Check]
    ) -> NodeVerdicts | None:
        seen: dict[Status, int] = {}
        codes = np.zeros(len(rows), dtype=np.int32)
        for i, row in enumerate(rows.tolist()):
            reasons = []
            unresolvable = False
            if table.pod_count[row] >= table.allowed_pods[row]:
                reasons.append(REASON_TOO_MANY_PODS)
            for index, amount, reason in checks:
                capacity = 0 if index is None else int(table.allocatable[row, index])
                used = 0 if index is None else int(table.requested[row, index])
                if amount > capacity - used:
                    reasons.append(reason)
                    unresolvable = unresolvable or amount > capacity
            if reasons:
                code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
                codes[i] = seen.setdefault(Status(code, tuple(reasons)), len(seen) + 1)
        return NodeVerdicts(codes, tuple(seen)) if seen else None

    # PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Record the pod's (non-zero) request for each scored resource."""
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._scorer.pod_requests(pod)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The strategy's score in [0, 100]; computes the pod's requests itself when
        PreScore did not run."""
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = (
            pre.pod_requests if isinstance(pre, _PreScoreState) else self._scorer.pod_requests(pod)
        )
        return self._scorer.score(node_info, requests)

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows`` of ``table``: the same raw scores."""
        pre = state.get(PRE_SCORE_STATE_KEY)
        requests = (
            pre.pod_requests if isinstance(pre, _PreScoreState) else self._scorer.pod_requests(pod)
        )
        return self._scorer.score_nodes(table, rows, requests)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already on the 0-100 scale."""
        return None

    # Requeueing

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Pod deletions and scale-downs, node additions and allocatable changes."""
        pod_actions = ActionType.DELETE
        if self._in_place_scaling:
            # A running pod resized down frees room on its node.
            pod_actions |= ActionType.UPDATE_POD_SCALE_DOWN
        return [
            # A deleted pod frees its requests on its node.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            # A new node, or more allocatable on a node, may give the room that was missing.
            # (With queueing hints there is no pre-check that could drop a Node/Add, so
            # upstream no longer registers taint and label updates here.)
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue on the deletion of a bound or nominated pod, or on a scale-down that frees
        a resource ``pod`` requests (or of ``pod`` itself)."""
        if (old is not None and not isinstance(old, Pod)) or (
            new is not None and not isinstance(new, Pod)
        ):
            raise TypeError(f"expected Pod objects, got {type(old).__name__}, {type(new).__name__}")
        if new is None:
            if old is None:
                raise TypeError("expected a Pod, got None for both old and new")
            if not old.node_name and not old.nominated_node_name:
                # An unscheduled pod held nothing anywhere.
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if old is None:
            # A pod addition is not registered; if one arrives anyway, do not drop it.
            return QueueingHint.QUEUE
        if not self._in_place_scaling:
            # Without in-place resize, a pod update cannot free anything.
            return QueueingHint.QUEUE_SKIP
        if _scaled_down_for(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue on a node the pod fits, when it was just added or gained room in a
        resource the pod requests (or pod slots)."""
        if (old is not None and not isinstance(old, Node)) or (
            new is not None and not isinstance(new, Node)
        ):
            raise TypeError(
                f"expected Node objects, got {type(old).__name__}, {type(new).__name__}"
            )
        if not is_fit(pod, new):
            return QueueingHint.QUEUE_SKIP
        if old is None:
            return QueueingHint.QUEUE
        assert new is not None  # is_fit is False without a node
        if not have_any_requested_resources_increased(pod, old, new):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _scaled_down_for(target: Pod, old: Pod, new: Pod) -> bool:
    # The pending pod itself shrank: it may fit now. Pods from files may lack a uid;
    # their key identifies them instead.
    if (new.uid == target.uid) if target.uid else (new.key == target.key):
        return True
    if not new.node_name:
        # An unscheduled pod held nothing anywhere.
        return False
    before, after, wanted = old.requests, new.requests, target.requests
    if wanted.milli_cpu and before.milli_cpu > after.milli_cpu:
        return True
    if wanted.memory and before.memory > after.memory:
        return True
    if wanted.ephemeral_storage and before.ephemeral_storage > after.ephemeral_storage:
        return True
    return any(
        quantity and before.scalar.get(name, 0) > after.scalar.get(name, 0)
        for name, quantity in wanted.scalar.items()
    )


if TYPE_CHECKING:
    from kubesched.framework.interface import (
        EnqueueExtensions,
        FilterPlugin,
        PreFilterPlugin,
        PreScorePlugin,
        ScorePlugin,
    )

    def _implements(
        p: Fit,
    ) -> tuple[PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions]:
        # The type checker's twin of upstream's `var _ framework.FilterPlugin = &Fit{}`.
        return p, p, p, p, p


def new(args: Mapping[str, Any] | None, handle: Handle) -> Fit:
    """Build NodeResourcesFit from ``pluginConfig[].args``; raises ArgsError listing every
    problem."""
    decoded, errors = NodeResourcesFitArgs.decode(args)
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return Fit(decoded, handle)
