"""LeastAllocated: favour the nodes with the most room left (upstream ``least_allocated.go``).

Each resource scores ``(allocatable - requested) * 100 / allocatable`` (0 once requested
exceeds allocatable); the node score is the weighted mean, in integer arithmetic.
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


def least_requested_score(requested: int, capacity: int) -> int:
    """The free share of ``capacity`` on a 0-100 scale, truncated."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """The LeastAllocated scorer for ``resources`` (weights in configuration order)."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += least_requested_score(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        return node_score // weight_sum if weight_sum else 0

    return score


def least_resource_vector_scorer(resources: Sequence[ResourceSpec]) -> VectorScorer:
    """``least_resource_scorer`` over arrays: the same integer arithmetic per node."""
    weights = tuple(r.weight for r in resources)

    def score(columns: Sequence[ScoredColumn], size: int) -> IntArray:
        node_score: IntArray | None = None
        weight_sum: IntArray | int = 0
        for index, alloc, used, pod_request in columns:
            counted = None
            if alloc.positive:
                # max(alloc - requested, 0) * 100 // alloc is 0 exactly when requested
                # exceeds alloc, as the per-node rule says, without a mask.
                if alloc.uniform is None:
                    free = np.subtract(alloc.values, used)
                    free -= pod_request
                else:
                    free = np.subtract(alloc.uniform - pod_request, used)
                np.maximum(free, 0, out=free)
                free *= MAX_NODE_SCORE
                if alloc.uniform is None:
                    np.floor_divide(free, alloc.values, out=free)
                else:
                    floor_div_scalar(free, alloc.uniform)
            else:
                # Some node has 0 (skipped) or a negative amount: the literal rule.
                requested = used + pod_request
                over = requested > alloc.values
                free = np.subtract(alloc.values, requested, out=requested)
                free *= MAX_NODE_SCORE
                np.floor_divide(free, alloc.safe_values, out=free)
                free[over] = 0
                counted = alloc.nonzero
                if counted is not None:
                    free[~counted] = 0
            node_score, weight_sum = add_weighted(
                node_score, weight_sum, free, weights[index], counted
            )
        return weighted_mean(node_score, weight_sum, size)

    return score
