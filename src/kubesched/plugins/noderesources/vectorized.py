"""What the vector forms of the resource plugins read from the node table, prepared once.

Allocatable only changes when the nodes do, and then the snapshot builds a new
``NodeTable`` (a new scalar resource column replaces the ``allocatable`` matrix too), so
anything derived from it alone — contiguous copies of its columns, whether a column is
the same on every node, whether it holds zeros — is computed once per matrix and kept.
What depends on the pods (``requested``, the non-zero columns, pod counts) changes with
every pod and is read fresh on each call.

Integer arithmetic over these arrays follows the per-node Python code (``//`` floors in
numpy as in Python); int64 bounds are only a concern for quantities beyond 2**53 (about
9 PB of memory), which no real node has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: Below this share of the table's rows, gathering the inputs first is cheaper than
#: computing over every node and gathering the result.
GATHER_FIRST_SHARE = 4


@dataclass(frozen=True, slots=True)
class AllocColumn:
    """One resource's allocatable over the nodes (all of them, or the gathered rows)."""

    #: Allocatable per node, contiguous.
    values: IntArray
    #: The same as floats, with 1.0 where the value is 0 (a divisor that never warns).
    safe_floats: FloatArray
    #: Twice ``safe_floats`` (exact: a power-of-two scaling).
    doubled_floats: FloatArray
    #: ``values`` with 1 where the value is 0.
    safe_values: IntArray
    #: Which nodes have a non-zero amount; None when all do.
    nonzero: BoolArray | None
    #: Every amount is > 0: no zero to skip and no negative corner case.
    positive: bool
    #: The amount every node has, when they all have the same positive one: numpy divides
    #: by a scalar much faster than element-wise.
    uniform: int | None

    @classmethod
    def of(cls, values: IntArray) -> AllocColumn:
        """Derive everything from one column of allocatable."""
        values = np.ascontiguousarray(values, dtype=np.int64)
        zero = values == 0
        has_zero = bool(np.count_nonzero(zero))
        safe = np.where(zero, 1, values) if has_zero else values
        floats = safe.astype(np.float64)
        positive = bool(len(values)) and int(values.min()) > 0
        uniform = None
        if positive and int(values.max()) == int(values.min()):
            uniform = int(values[0])
        return cls(
            values=values,
            safe_floats=floats,
            doubled_floats=2.0 * floats,
            safe_values=safe,
            nonzero=~zero if has_zero else None,
            positive=positive,
            uniform=uniform,
        )

    def take(self, rows: IntArray) -> AllocColumn:
        """The same column at ``rows`` only."""
        return AllocColumn(
            values=self.values[rows],
            safe_floats=self.safe_floats[rows],
            doubled_floats=self.doubled_floats[rows],
            safe_values=self.safe_values[rows],
            nonzero=None if self.nonzero is None else self.nonzero[rows],
            positive=self.positive,
            uniform=self.uniform,
        )


class AllocCache:
    """The ``AllocColumn`` of each resource of one table's allocatable matrix, built on
    first use; rebuilt when the table (or its matrix) is replaced."""

    __slots__ = ("_columns", "_matrix", "_table")

    def __init__(self) -> None:
        self._table: NodeTable | None = None
        self._matrix: IntArray | None = None
        self._columns: dict[int, AllocColumn] = {}

    def column(self, table: NodeTable, index: int) -> AllocColumn:
        """Allocatable of resource column ``index`` over all rows of ``table``."""
        if self._table is not table or self._matrix is not table.allocatable:
            self._table = table
            self._matrix = table.allocatable
            self._columns = {}
        column = self._columns.get(index)
        if column is None:
            column = self._columns[index] = AllocColumn.of(table.allocatable[:, index])
        return column


def gather_first(table: NodeTable, rows: IntArray) -> bool:
    """Whether to gather the inputs at ``rows`` before computing (few rows), rather than
    computing over the whole table and gathering the result."""
    return len(rows) * GATHER_FIRST_SHARE < table.size


def floor_div_scalar(values: IntArray, divisor: int) -> IntArray:
    """``values // divisor`` in place (Python's floor division); a power of two becomes an
    arithmetic shift, which floors too and is cheaper."""
    if divisor > 0 and divisor & (divisor - 1) == 0:
        np.right_shift(values, divisor.bit_length() - 1, out=values)
    else:
        np.floor_divide(values, divisor, out=values)
    return values


#: One configured resource, ready for a vector strategy: (its position in the configured
#: resources, i.e. its weight's index; its allocatable; what the pods on each node use —
#: a view into the table, never to be written; the pod's request).
ScoredColumn = tuple[int, AllocColumn, IntArray, int]


#: ``scorer(columns, size) -> scores``: the vector twin of ``resource_allocation.Scorer``.
#: Only resources some node may have are passed; nodes with 0 allocatable of one are to
#: skip it, as the per-node strategies skip it.
VectorScorer = Callable[[Sequence[ScoredColumn], int], IntArray]


def weighted_mean(node_score: IntArray | None, weight_sum: IntArray | int, size: int) -> IntArray:
    """``node_score // weight_sum``, 0 where the weight sum is 0 (no resource scored)."""
    if node_score is None:
        return np.zeros(size, dtype=np.int64)
    if isinstance(weight_sum, int):
        if weight_sum == 0:
            return np.zeros(size, dtype=np.int64)
        return floor_div_scalar(node_score, weight_sum)
    safe = np.where(weight_sum == 0, 1, weight_sum)
    np.floor_divide(node_score, safe, out=node_score)
    node_score[weight_sum == 0] = 0
    return node_score


def add_weighted(
    node_score: IntArray | None,
    weight_sum: IntArray | int,
    scores: IntArray,
    weight: int,
    counted: BoolArray | None,
) -> tuple[IntArray, IntArray | int]:
    """Add one resource's ``scores`` (already 0 where not ``counted``) with ``weight`` to
    the running sums; ``counted`` None means every node counts it."""
    if weight != 1:
        scores *= weight
    if node_score is None:
        node_score = scores
    else:
        node_score += scores
    if counted is None:
        weight_sum = weight_sum + weight
    else:
        weight_sum = weight_sum + np.where(counted, weight, 0)
    return node_score, weight_sum
