"""NodeResourcesBalancedAllocation: favour nodes whose resources would be used in similar
proportions with the pod on them, so that no resource runs out while others sit idle.

Mirrors upstream's ``noderesources/balanced_allocation.go`` (release-1.34). For each
configured resource the node has (and, for scalar resources, the pod requests), the
fraction ``requested / allocatable`` is taken, capped at 1. The score is
``(1 - std) * 100`` truncated, where std is the standard deviation of those fractions:
``|f1 - f2| / 2`` for two of them, the population deviation for more, 0 for fewer.
Real requests are used, not the non-zero defaults; a pod that requests none of the
resources is not scored at all (PreScore returns Skip), so that best-effort pods do not
all pile onto the same node (kubernetes/kubernetes#129138).

``score_nodes`` scores every node of the table at once with the same float operations in
the same order, so that each score is bit for bit the per-node one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, ScoreExtensions, Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins.noderesources.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    ResourceSpec,
    decode_resource_specs,
    is_best_effort,
)
from kubesched.plugins.noderesources.vectorized import (
    BoolArray,
    FloatArray,
    IntArray,
    ScoredColumn,
)

NAME = "NodeResourcesBalancedAllocation"

PRE_SCORE_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """The resources to balance, after the v1 defaulting (absent or empty: cpu and
    memory; an absent or zero weight: 1). Weights must be 1: they are not used."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def decode(
        cls, raw: Mapping[str, Any] | None
    ) -> tuple[NodeResourcesBalancedAllocationArgs, list[FieldError]]:
        """The args in ``raw`` (``pluginConfig[].args``), with what could not be decoded."""
        reader = ArgsReader(raw, ("resources",))
        errors = reader.errors
        resources = decode_resource_specs(reader.args.get("resources"), "resources", errors)
        return cls(resources), errors

    def validate(self) -> list[FieldError]:
        """Every problem, with paths relative to the args (upstream
        ``ValidateNodeResourcesBalancedAllocationArgs``)."""
        errors: list[FieldError] = []
        seen: set[str] = set()
        for i, resource in enumerate(self.resources):
            if resource.name in seen:
                errors.append(FieldError.duplicate(f"resources[{i}].name", resource.name))
            else:
                seen.add(resource.name)
            if resource.weight != 1:
                errors.append(
                    FieldError.invalid(f"resources[{i}].weight", resource.weight, "must be 1")
                )
        return errors


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``(1 - std) * 100`` over the fractions of the resources with allocatable > 0."""
    fractions: list[float] = []
    total = 0.0
    for i, alloc in enumerate(allocatable):
        if alloc == 0:
            continue
        fraction = min(float(requested[i]) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        # The common cpu + memory case; same value as the general formula.
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_resource_vector_scorer(columns: Sequence[ScoredColumn], size: int) -> IntArray:
    """``balanced_resource_scorer`` over arrays, bit for bit: each float operation is the
    per-node one, in the same order (sums accumulate resource by resource)."""
    if len(columns) == 2 and columns[0][1].positive and columns[1][1].positive:
        return _two_positive(columns)
    fractions: list[FloatArray] = []
    masks: list[BoolArray | None] = []
    for _, alloc, used, pod_request in columns:
        divisor = alloc.safe_floats if alloc.uniform is None else float(alloc.uniform)
        # float(requested) / float(alloc), capped at 1 (min(x, 1.0) as per node).
        fraction = np.divide(used + pod_request, divisor)
        np.minimum(fraction, 1.0, out=fraction)
        fractions.append(fraction)
        masks.append(alloc.nonzero)
    if any(m is not None for m in masks):
        std = _masked_std(fractions, masks, size)
    elif len(fractions) == 2:
        std = np.subtract(fractions[0], fractions[1])
        std /= 2
        np.abs(std, out=std)
    elif len(fractions) > 2:
        std = _std(fractions)
    else:
        return np.full(size, MAX_NODE_SCORE, dtype=np.int64)
    return _score_of(std)


def _two_positive(columns: Sequence[ScoredColumn]) -> IntArray:
    # The common case (cpu and memory on every node), with fewer operations and the same
    # bits: for 0 < a, min(r/a, 1.0) / 2 == min(r, a) / (2a) in floating point (scaling by
    # two commutes with rounding, and float(min(r, a)) <= float(a)), so the halved
    # difference of the fractions is the difference of these halves.
    halves: list[FloatArray] = []
    for _, alloc, used, pod_request in columns:
        requested = used + pod_request
        capacity = alloc.values if alloc.uniform is None else alloc.uniform
        np.minimum(requested, capacity, out=requested)
        if alloc.uniform is None:
            halves.append(np.divide(requested, alloc.doubled_floats))
        else:
            halves.append(np.divide(requested, 2.0 * alloc.uniform))
    std = np.subtract(halves[0], halves[1], out=halves[0])
    np.abs(std, out=std)
    return _score_of(std)


def _score_of(std: FloatArray) -> IntArray:
    # int((1 - std) * 100), truncating as int() does.
    np.subtract(1.0, std, out=std)
    std *= MAX_NODE_SCORE
    return std.astype(np.int64)


def _std(fractions: Sequence[FloatArray]) -> FloatArray:
    # The population deviation of three or more fractions present on every node.
    total = fractions[0].copy()
    for fraction in fractions[1:]:
        total += fraction
    mean = total / len(fractions)
    squares = np.zeros_like(mean)
    for fraction in fractions:
        deviation = fraction - mean
        squares += deviation * deviation
    squares /= len(fractions)
    return np.sqrt(squares, out=squares)


def _masked_std(
    fractions: Sequence[FloatArray], masks: Sequence[BoolArray | None], size: int
) -> FloatArray:
    # Nodes lack some resources: each node takes its own fractions, in order. Adding 0.0
    # for a missing one leaves a sum unchanged, so the sums stay those of the node.
    present = [np.ones(size, dtype=np.bool_) if m is None else m for m in masks]
    count = np.zeros(size, dtype=np.int64)
    total = np.zeros(size, dtype=np.float64)
    first = np.zeros(size, dtype=np.float64)
    second = np.zeros(size, dtype=np.float64)
    for fraction, mask in zip(fractions, present, strict=True):
        first = np.where(mask & (count == 0), fraction, first)
        second = np.where(mask & (count == 1), fraction, second)
        total += np.where(mask, fraction, 0.0)
        count += mask
    divisor = np.maximum(count, 1).astype(np.float64)
    mean = total / divisor
    squares = np.zeros(size, dtype=np.float64)
    for fraction, mask in zip(fractions, present, strict=True):
        deviation = fraction - mean
        squares += np.where(mask, deviation * deviation, 0.0)
    many = np.sqrt(squares / divisor)
    two = np.abs((first - second) / 2)
    return np.where(count == 2, two, np.where(count > 2, many, 0.0))


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    #: The pod's request for each configured resource, in configuration order.
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin: PreScore and Score."""

    name = NAME

    def __init__(
        self, args: NodeResourcesBalancedAllocationArgs, handle: Handle | None = None
    ) -> None:
        self._scorer = ResourceAllocationScorer(
            NAME,
            args.resources,
            balanced_resource_scorer,
            use_requested=True,
            vector_scorer=balanced_resource_vector_scorer,
        )
        self._handle = handle

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip for a pod requesting none of the resources; otherwise record its requests."""
        requests = self._scorer.pod_requests(pod)
        if is_best_effort(requests):
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(requests))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The balance score in [0, 100]; 0 for a best-effort pod when PreScore did not run."""
        pre = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(pre, _PreScoreState):
            requests = pre.pod_requests
        else:
            requests = self._scorer.pod_requests(pod)
            if is_best_effort(requests):
                return 0, None
        return self._scorer.score(node_info, requests)

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows`` of ``table``: the same scores."""
        pre = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(pre, _PreScoreState):
            requests = pre.pod_requests
        else:
            requests = self._scorer.pod_requests(pod)
            if is_best_effort(requests):
                return np.zeros(len(rows), dtype=np.int64)
        return self._scorer.score_nodes(table, rows, requests)

    def score_extensions(self) -> ScoreExtensions | None:
        """None: scores are already on the 0-100 scale."""
        return None


if TYPE_CHECKING:
    from kubesched.framework.interface import PreScorePlugin, ScorePlugin

    def _implements(p: BalancedAllocation) -> tuple[PreScorePlugin, ScorePlugin]:
        # The type checker's twin of upstream's `var _ framework.ScorePlugin = &...{}`.
        return p, p


def new(args: Mapping[str, Any] | None, handle: Handle) -> BalancedAllocation:
    """Build NodeResourcesBalancedAllocation from ``pluginConfig[].args``; raises ArgsError
    listing every problem."""
    decoded, errors = NodeResourcesBalancedAllocationArgs.decode(args)
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return BalancedAllocation(decoded, handle)
