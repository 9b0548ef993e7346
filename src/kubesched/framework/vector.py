"""The columnar extension points: Filter and Score over all nodes at once.

An in-tree plugin may implement, beside its per-node ``filter`` / ``score``, the vector
forms below; the runner uses them when the snapshot has a ``NodeTable`` and falls back to
the per-node methods otherwise (and for plugins that only have those). Both forms must
give the same answers: the test suite holds them to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, overload, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.framework.interface import Status

if TYPE_CHECKING:
    from kubesched.framework.columns import NodeTable
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.types import NodeInfo
    from kubesched.objects.pod import Pod

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class NodeVerdicts:
    """A vector Filter's answer for the rows it was given.

    ``codes[i]`` is 0 when ``rows[i]`` passes, else ``k`` for ``statuses[k - 1]``.
    """

    codes: npt.NDArray[np.integer]
    statuses: tuple[Status, ...]

    @classmethod
    def reject(cls, mask: npt.NDArray[np.bool_], status: Status) -> NodeVerdicts:
        """Every row where ``mask`` is True fails with ``status``."""
        return cls(mask.astype(np.int8), (status,))


@runtime_checkable
class VectorFilterPlugin(Protocol):
    """Filter for many nodes at once."""

    @property
    def name(self) -> str: ...

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """Judge the nodes at ``rows`` of ``table``; None means all pass."""
        ...


@runtime_checkable
class VectorScorePlugin(Protocol):
    """Score for many nodes at once: raw scores aligned with ``rows``, before
    normalization (the plugin's ScoreExtensions may offer ``normalize_scores``)."""

    @property
    def name(self) -> str: ...

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray: ...


@runtime_checkable
class VectorScoreExtensions(Protocol):
    """NormalizeScore over an array of scores, in the rows' order."""

    def normalize_scores(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray: ...


class NodeInfoView(Sequence["NodeInfo"]):
    """The node infos at ``rows``, without building a list: PreFilter and PreScore get
    this in the columnar path, and vector plugins read ``rows`` directly."""

    __slots__ = ("_infos", "rows")

    def __init__(self, infos: Sequence[NodeInfo], rows: IntArray) -> None:
        self._infos = infos
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        if isinstance(index, slice):
            return NodeInfoView(self._infos, self.rows[index])
        return self._infos[int(self.rows[index])]

    def __iter__(self) -> Iterator[NodeInfo]:
        infos = self._infos
        for row in self.rows.tolist():
            yield infos[row]
