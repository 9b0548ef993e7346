"""MostAllocated: favour the fullest nodes, to bin-pack (upstream ``most_allocated.go``).

Each resource scores ``requested * 100 / allocatable``, with requested capped at
allocatable (non-zero defaults can push it over); the node score is the weighted mean,
in integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec, Scorer
from kubesched.plugins.noderesources.vectorized import (
    IntArray,
    ScoredColumn,
    VectorScorer,
    add_weighted,
    floor_div_scalar,
    weighted_mean,
)


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of ``capacity`` on a 0-100 scale, truncated."""
    if capacity == 0:
        return 0
    # Pods without requests count with the non-zero defaults, which may exceed capacity.
    requested = min(requested, capacity)
    return requested * MAX_NODE_SCORE // capacity


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """The MostAllocated scorer for ``resources`` (weights in configuration order)."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += most_requested_score(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        return node_score // weight_sum if weight_sum else 0

    return score


def most_resource_vector_scorer(resources: Sequence[ResourceSpec]) -> VectorScorer:
    """``most_resource_scorer`` over arrays: the same integer arithmetic per node."""
    weights = tuple(r.weight for r in resources)

    def score(columns: Sequence[ScoredColumn], size: int) -> IntArray:
        node_score: IntArray | None = None
        weight_sum: IntArray | int = 0
        for index, alloc, used, pod_request in columns:
            counted = None if alloc.positive else alloc.nonzero
            requested = used + pod_request
            if alloc.uniform is not None:
                np.minimum(requested, alloc.uniform, out=requested)
                requested *= MAX_NODE_SCORE
                floor_div_scalar(requested, alloc.uniform)
            else:
                np.minimum(requested, alloc.values, out=requested)
                requested *= MAX_NODE_SCORE
                np.floor_divide(requested, alloc.safe_values, out=requested)
                if counted is not None:
                    requested[~counted] = 0
            node_score, weight_sum = add_weighted(
                node_score, weight_sum, requested, weights[index], counted
            )
        return weighted_mean(node_score, weight_sum, size)

    return score
