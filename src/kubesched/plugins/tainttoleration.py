"""TaintToleration: keep pods off nodes whose taints they do not tolerate, and prefer the
nodes with the fewest untolerated PreferNoSchedule taints.

Mirrors kube-scheduler's ``tainttoleration`` plugin. Filter looks at NoSchedule and
NoExecute taints; the first one the pod does not tolerate rejects the node for good
(preemption does not remove taints). Score counts the PreferNoSchedule taints the pod
does not tolerate, and NormalizeScore reverses the count so that fewer is better.

The columnar forms (``filter_nodes``, ``score_nodes``, ``normalize_scores``) judge every
node at once from the node table. Taints only change with nodes, and a node change
builds a new table, so what a set of tolerations makes of the table's taints is worked
out once per table and per distinct set of tolerations, then reused for every pod that
carries the same tolerations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.framework.vector import (
    NodeVerdicts,
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.taints import (
    PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubesched.plugins import names
from kubesched.plugins.helper import (
    DO_NOT_SCHEDULE_TAINT_EFFECTS,
    as_changed,
    check_no_args,
    default_normalize_score,
    default_normalize_scores,
    same_pod,
)

NAME = names.TAINT_TOLERATION

#: Filter reason, formatted with the first untolerated taint's key and value.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint {{{key}: {value}}}"

PRE_SCORE_STATE_KEY = "PreScore" + NAME

IntArray = npt.NDArray[np.int64]

#: Distinct toleration sets remembered per table; past it the memo starts afresh (pods
#: of a workload share their tolerations, so a handful is the common case).
_MEMO_LIMIT: Final = 256


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's tolerations that can match a PreferNoSchedule taint."""

    tolerations: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self  # immutable


def _tolerations_prefer_no_schedule(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    # An empty effect matches every effect, PreferNoSchedule included.
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def _count_intolerable_prefer_no_schedule(node: Node, tolerations: Sequence[Toleration]) -> int:
    count = 0
    for taint in node.taints:
        if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(
            tolerations, taint
        ):
            count += 1
    return count


def _reason(taint: Taint) -> str:
    return ERR_REASON_UNTOLERATED.format(key=taint.key, value=taint.value)


def _untolerated(
    taints: Sequence[Taint], ids: Sequence[int], tolerations: Sequence[Toleration]
) -> npt.NDArray[np.bool_]:
    """Over every distinct taint of the table: which of ``ids`` no toleration tolerates."""
    out = np.zeros(len(taints), dtype=np.bool_)
    if not tolerations:
        out[list(ids)] = True
        return out
    for tid in ids:
        out[tid] = not tolerations_tolerate_taint(tolerations, taints[tid])
    return out


class _TaintIndex:
    """The taints of one node table, flattened for array work, and the verdicts worked
    out from them per set of tolerations.

    ``flat_row[i]`` / ``flat_taint[i]`` list every node's taints (as table taint ids),
    nodes in row order and each node's taints in its own order, duplicates kept: the
    first entry of a row among the untolerated ones is the taint the per-node Filter
    names, and counting entries counts what the per-node Score counts.
    """

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.num_taints = len(table.taints)
        lengths = np.fromiter((len(ids) for ids in table.node_taints), dtype=np.int64)
        self.flat_row = np.repeat(np.arange(table.size, dtype=np.int64), lengths)
        self.flat_taint = np.fromiter(
            (tid for ids in table.node_taints for tid in ids),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        effects = [t.effect for t in table.taints]
        self.hard_ids = [
            i for i, effect in enumerate(effects) if effect in DO_NOT_SCHEDULE_TAINT_EFFECTS
        ]
        self.prefer_ids = [i for i, effect in enumerate(effects) if effect == PREFER_NO_SCHEDULE]
        #: tolerations → (per row, 0 or the verdict code; the statuses), None: all pass.
        self.filter_memo: dict[
            tuple[Toleration, ...], tuple[npt.NDArray[np.int32], tuple[Status, ...]] | None
        ] = {}
        # Per taint id, the 1-based code of its Filter reason among all the table's
        # NoSchedule/NoExecute reasons (taints differing only by effect read the same),
        # and those reasons' statuses; built on first use.
        self._reason_code: npt.NDArray[np.int32] | None = None
        self._reason_statuses: list[Status] = []
        #: PreferNoSchedule tolerations → per row, the untolerated taints (None: none).
        self.score_memo: dict[tuple[Toleration, ...], IntArray | None] = {}

    def verdicts(
        self, tolerations: tuple[Toleration, ...]
    ) -> tuple[npt.NDArray[np.int32], tuple[Status, ...]] | None:
        """Per row, the code of the status naming its first untolerated NoSchedule or
        NoExecute taint (0 when it has none), and the statuses; None when none fails."""
        memo = self.filter_memo
        if tolerations in memo:
            return memo[tolerations]
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        bad = _untolerated(self.table.taints, self.hard_ids, tolerations)
        result = None
        if bad.any():
            picked = bad[self.flat_taint]
            rows = self.flat_row[picked]
            taints = self.flat_taint[picked]
            # Entries are grouped by row: the first entry of each row is its first taint.
            first = np.ones(len(rows), dtype=np.bool_)
            first[1:] = rows[1:] != rows[:-1]
            rows, taints = rows[first], taints[first]
            # Renumber the reasons in use from 1, so the statuses are only those.
            reason_code = self._reason_codes()
            used = np.unique(reason_code[taints])
            local = np.zeros(len(self._reason_statuses) + 1, dtype=np.int32)
            local[used] = np.arange(1, len(used) + 1, dtype=np.int32)
            codes = np.zeros(self.table.size, dtype=np.int32)
            codes[rows] = local[reason_code[taints]]
            statuses = tuple(self._reason_statuses[c - 1] for c in used.tolist())
            result = codes, statuses
        memo[tolerations] = result
        return result

    def _reason_codes(self) -> npt.NDArray[np.int32]:
        if self._reason_code is None:
            codes = np.zeros(self.num_taints, dtype=np.int32)
            by_reason: dict[str, int] = {}
            for tid in self.hard_ids:
                reason = _reason(self.table.taints[tid])
                code = by_reason.get(reason)
                if code is None:
                    code = by_reason[reason] = len(by_reason) + 1
                    self._reason_statuses.append(Status.unresolvable(reason))
                codes[tid] = code
            self._reason_code = codes
        return self._reason_code

    def counts(self, tolerations: tuple[Toleration, ...]) -> IntArray | None:
        """Per row, how many PreferNoSchedule taints none of ``tolerations`` tolerates
        (None when that is 0 everywhere)."""
        memo = self.score_memo
        if tolerations in memo:
            return memo[tolerations]
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        bad = _untolerated(self.table.taints, self.prefer_ids, tolerations)
        result = None
        if bad.any():
            rows = self.flat_row[bad[self.flat_taint]]
            result = np.bincount(rows, minlength=self.table.size).astype(np.int64)
        memo[tolerations] = result
        return result


class TaintToleration:
    """Filters on NoSchedule/NoExecute taints; scores on PreferNoSchedule taints."""

    name = NAME

    def __init__(self) -> None:
        # The index of the last table seen: the scheduler works on one table at a time.
        self._index: _TaintIndex | None = None

    def _taint_index(self, table: NodeTable) -> _TaintIndex:
        index = self._index
        if index is None or index.table is not table or index.num_taints != len(table.taints):
            index = self._index = _TaintIndex(table)
        return index

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when a NoSchedule or NoExecute taint of the node is
        not tolerated; the reason names the first such taint."""
        taint = find_untolerated_taint(
            node_info.node.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS
        )
        if taint is None:
            return None
        return Status.unresolvable(ERR_REASON_UNTOLERATED.format(key=taint.key, value=taint.value))

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows``: each node with an untolerated NoSchedule
        or NoExecute taint fails with the status naming the first of them."""
        if not table.taints:
            return None
        index = self._taint_index(table)
        if not index.hard_ids:
            return None
        found = index.verdicts(pod.tolerations)
        if found is None:
            return None
        codes, statuses = found
        return NodeVerdicts(codes[rows], statuses)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Keep the tolerations that Score needs."""
        state.write(
            PRE_SCORE_STATE_KEY, _PreScoreState(_tolerations_prefer_no_schedule(pod.tolerations))
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The number of PreferNoSchedule taints of the node the pod does not tolerate."""
        data = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return 0, Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        return _count_intolerable_prefer_no_schedule(node_info.node, data.tolerations), None

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows``.

        Raises KeyError when PreScore did not run (the per-node ``score`` returns an
        Error status then; the vector protocol has no status to return).
        """
        data = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            raise KeyError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        counts = None
        if table.taints:
            index = self._taint_index(table)
            if index.prefer_ids:
                counts = index.counts(data.tolerations)
        if counts is None:
            return np.zeros(len(rows), dtype=np.int64)
        return counts[rows]

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Reverse the counts into [0, 100]: no untolerated taint scores 100."""
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_scores(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """``normalize_score`` over an array of counts."""
        return default_normalize_scores(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or its taints changed; the rejected pod gaining tolerations."""
        return (
            # A new node, or a node losing a taint, may be one the pod tolerates. Label
            # changes never matter here (upstream registers them only without hints).
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            # The rejected pod may be updated with a toleration for the taint.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_change,
            ),
        )


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the node went from having an untolerated taint (or not existing) to
    having none."""
    original, modified = as_changed(Node, old, new)
    was_untolerated = original is None or (
        find_untolerated_taint(original.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS)
        is not None
    )
    is_untolerated = (
        find_untolerated_taint(modified.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS)
        is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the pod whose tolerations changed is ``pod`` itself."""
    _, modified = as_changed(Pod, old, new)
    return QueueingHint.QUEUE if same_pod(modified, pod) else QueueingHint.QUEUE_SKIP


_filter: type[FilterPlugin] = TaintToleration
_pre_score: type[PreScorePlugin] = TaintToleration
_score: type[ScorePlugin] = TaintToleration
_enqueue_extensions: type[EnqueueExtensions] = TaintToleration
_vector_filter: type[VectorFilterPlugin] = TaintToleration
_vector_score: type[VectorScorePlugin] = TaintToleration
_vector_score_extensions: type[VectorScoreExtensions] = TaintToleration


def new(args: Mapping[str, Any] | None, handle: Handle) -> TaintToleration:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return TaintToleration()
