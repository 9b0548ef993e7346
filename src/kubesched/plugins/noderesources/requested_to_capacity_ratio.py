"""RequestedToCapacityRatio: score utilization through a user-drawn piecewise-linear
function (upstream ``requested_to_capacity_ratio.go`` and ``helper/shape_score.go``).

The shape's scores are on a 0-10 scale (``MAX_CUSTOM_PRIORITY_SCORE``) and are scaled by
``MAX_NODE_SCORE / 10`` before use. Per resource, utilization is
``requested * 100 / allocatable`` (100 once requested exceeds allocatable); resources
scoring 0 are left out of the weighted mean, which is rounded half away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.framework.args import FieldError
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec, Scorer
from kubesched.plugins.noderesources.vectorized import IntArray, ScoredColumn, VectorScorer

#: The top of the scale the shape's scores are written on.
MAX_CUSTOM_PRIORITY_SCORE = 10
#: Utilization is a percentage.
MAX_UTILIZATION = 100


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """One point of the shape: at ``utilization`` percent, the score is ``score`` (0-10)."""

    utilization: int
    score: int


def validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    """Upstream's ``validateFunctionShape``: points present, utilization strictly
    increasing (first offence only), utilization in [0, 100], score in [0, 10]."""
    if not shape:
        return [FieldError.required(path, "at least one point must be specified")]
    errors: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(
                FieldError.invalid(
                    f"{path}[{i}].utilization",
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            errors.append(
                FieldError.invalid(
                    f"{path}[{i}].utilization",
                    point.utilization,
                    f"not in valid range [0, {MAX_UTILIZATION}]",
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                FieldError.invalid(
                    f"{path}[{i}].score",
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errors


def _go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's: a falling segment of the shape
    has a negative numerator, where Python's ``//`` would round down instead."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear ``f(p)`` through ``(utilization, score)`` points: flat before
    the first point and after the last, integer interpolation in between."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return score
                prev_u, prev_s = points[i - 1]
                return prev_s + _go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
        # Validation requires a point; without one (args built in code), score nothing.
        return points[-1][1] if points else 0

    return f


def _round_half_away(x: float) -> int:
    # Go's math.Round, for the non-negative values this module produces.
    r = math.floor(x)
    return r + 1 if x - r >= 0.5 else r


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    """The RequestedToCapacityRatio scorer for ``resources`` and ``shape``."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    weights = tuple(r.weight for r in resources)
    at_full = raw(MAX_UTILIZATION)

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return at_full
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            resource = resource_score(requested[i], alloc)
            if resource > 0:
                node_score += resource * weights[i]
                weight_sum += weights[i]
        return _round_half_away(node_score / weight_sum) if weight_sum else 0

    return score


def requested_to_capacity_ratio_vector_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> VectorScorer:
    """``requested_to_capacity_ratio_scorer`` over arrays. The shape is evaluated once
    per utilization percentage (and per distinct value outside 0-100, which only
    negative amounts produce); the final mean is the same float division and rounding."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    weights = tuple(r.weight for r in resources)
    table = np.array([raw(p) for p in range(MAX_UTILIZATION + 1)], dtype=np.int64)

    def shape_of(utilization: IntArray) -> IntArray:
        if not len(utilization):
            return utilization
        if int(utilization.min()) >= 0 and int(utilization.max()) <= MAX_UTILIZATION:
            return table[utilization]
        distinct, inverse = np.unique(utilization, return_inverse=True)
        mapped = np.array([raw(int(p)) for p in distinct.tolist()], dtype=np.int64)
        return mapped[inverse.reshape(utilization.shape)]

    def score(columns: Sequence[ScoredColumn], size: int) -> IntArray:
        node_score = np.zeros(size, dtype=np.int64)
        weight_sum = np.zeros(size, dtype=np.int64)
        for index, alloc, used, pod_request in columns:
            requested = used + pod_request
            # Over capacity scores as full utilization: raw(100).
            over = requested > alloc.values
            requested *= MAX_UTILIZATION
            np.floor_divide(requested, alloc.safe_values, out=requested)
            requested[over] = MAX_UTILIZATION
            if alloc.nonzero is not None:
                requested[~alloc.nonzero] = 0
            resource = shape_of(requested)
            counted = resource > 0
            if alloc.nonzero is not None:
                counted &= alloc.nonzero
            weight = weights[index]
            node_score += np.where(counted, resource * weight, 0)
            weight_sum += np.where(counted, weight, 0)
        scored = weight_sum != 0
        mean = np.divide(node_score, np.where(scored, weight_sum, 1))
        rounded = np.floor(mean)
        rounded += (mean - rounded) >= 0.5
        out = rounded.astype(np.int64)
        out[~scored] = 0
        return out

    return score
