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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
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
            NAME, args.resources, balanced_resource_scorer, use_requested=True
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
