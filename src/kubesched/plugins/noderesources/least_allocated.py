"""LeastAllocated: favour the nodes with the most room left (upstream ``least_allocated.go``).

Each resource scores ``(allocatable - requested) * 100 / allocatable`` (0 once requested
exceeds allocatable); the node score is the weighted mean, in integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec, Scorer


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
