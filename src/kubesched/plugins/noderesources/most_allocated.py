"""MostAllocated: favour the fullest nodes, to bin-pack (upstream ``most_allocated.go``).

Each resource scores ``requested * 100 / allocatable``, with requested capped at
allocatable (non-zero defaults can push it over); the node score is the weighted mean,
in integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec, Scorer


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
