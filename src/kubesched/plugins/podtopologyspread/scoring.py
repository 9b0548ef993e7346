"""PodTopologySpread's soft constraints: PreScore, Score and NormalizeScore.

A node scores the pods that its domains already hold for each ScheduleAnyway
constraint, weighted by the log of the number of domains (so that a constraint over
few big domains is not drowned by one over many small ones), plus ``maxSkew - 1`` to
tolerate small skews. NormalizeScore inverts it: the emptiest node gets 100
(upstream ``scoring.go``).

With the snapshot's node table, PreScore counts with arrays and Score and
NormalizeScore have vector forms (``score_rows``, ``normalize_rows``) computing the same
floats in the same order; the per-node forms keep working on the same state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable, rows_of
from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.node import LABEL_HOSTNAME
from kubesched.objects.pod import Pod
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    Constraint,
    NodeInclusion,
    count_matching_pods,
    node_has_topology_keys,
)
from kubesched.plugins.podtopologyspread.tables import (
    MatchingCounts,
    domain_sums,
    first_appearance_order,
    has_topology_keys,
    inclusion_masks,
)

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

PRE_SCORE_STATE_KEY = "PreScore" + NAME
_INVALID_SCORE = -1


class ScoreColumns:
    """PreScore's counts as arrays over one ``NodeTable``, for the vector Score.

    Per constraint: for a hostname constraint, the matching pods per row; otherwise the
    matching pods per domain code (``_domain_codes``: the label's codes, with nodes
    without the key in the domain ``""`` as the per-node code has them), 0 for domains
    of no feasible node. ``ignored`` marks the rows of feasible nodes missing a key.
    """

    __slots__ = (
        "domain_counts",
        "feasible_codes",
        "host_counts",
        "ignored",
        "last_ignored",
        "table",
    )

    def __init__(self, table: NodeTable, ignored: BoolArray) -> None:
        self.table = table
        self.ignored = ignored
        self.host_counts: list[IntArray | None] = []
        self.domain_counts: list[IntArray | None] = []
        #: Per constraint: the domain codes of the feasible, non-ignored nodes, in their
        #: order (to list the domains as the per-node loop meets them).
        self.feasible_codes: list[npt.NDArray[np.integer] | None] = []
        #: ``ignored`` at the rows of the last ``score_rows``, for ``normalize_rows``
        #: (the vector NormalizeScore gets the scores without their rows).
        self.last_ignored: BoolArray | None = None

    def pod_counts(self, constraints: Sequence[Constraint]) -> list[dict[str, int]]:
        """The per-node form of the domain counts."""
        out: list[dict[str, int]] = []
        for i, c in enumerate(constraints):
            counts = self.domain_counts[i]
            codes = self.feasible_codes[i]
            domains: dict[str, int] = {}
            if counts is not None and codes is not None:
                column = self.table.labels.get(c.topology_key)
                values = column.values if column is not None else []
                order = first_appearance_order(codes)
                nums = counts[order].tolist() if order else []
                for code, num in zip(order, nums, strict=True):
                    domains[values[code] if code < len(values) else ""] = num
            out.append(domains)
        return out


class PreScoreState:
    """What PreScore computed for Score and NormalizeScore (read-only afterwards, but
    for the vector Score noting which of its rows are ignored, for NormalizeScore).

    Built from the node table, the state holds ``ScoreColumns`` and makes the per-node
    forms (``ignored_nodes``, ``pod_counts``) only when asked.
    """

    __slots__ = ("_ignored_nodes", "_pod_counts", "columns", "constraints", "normalizing_weight")

    def __init__(
        self,
        constraints: Sequence[Constraint],
        ignored_nodes: set[str] | None = None,
        pod_counts: list[dict[str, int]] | None = None,
        normalizing_weight: list[float] | None = None,
        columns: ScoreColumns | None = None,
    ) -> None:
        self.constraints = constraints
        #: Per constraint: log(number of domains + 2).
        self.normalizing_weight = normalizing_weight if normalizing_weight is not None else []
        self.columns = columns
        if columns is None:
            ignored_nodes = ignored_nodes if ignored_nodes is not None else set()
            pod_counts = pod_counts if pod_counts is not None else []
        self._ignored_nodes = ignored_nodes
        self._pod_counts = pod_counts

    @property
    def ignored_nodes(self) -> set[str]:
        """Feasible nodes that miss a topology key; they score 0."""
        if self._ignored_nodes is None:
            assert self.columns is not None
            names = self.columns.table.names
            rows = np.flatnonzero(self.columns.ignored).tolist()
            self._ignored_nodes = {names[r] for r in rows}
        return self._ignored_nodes

    @property
    def pod_counts(self) -> list[dict[str, int]]:
        """Per constraint: topology value → matching pods. Only the domains of feasible
        nodes appear; hostname constraints are counted per node in Score instead."""
        if self._pod_counts is None:
            assert self.columns is not None
            self._pod_counts = self.columns.pod_counts(self.constraints)
        return self._pod_counts

    def clone(self) -> PreScoreState:
        # Nothing changes the state after PreScore, so the copy can be the state.
        return self


def topology_normalizing_weight(size: int) -> float:
    """The weight of a constraint over ``size`` domains: log(size + 2)."""
    return math.log(size + 2)


def compute_pre_score_state(
    pod: Pod,
    constraints: Sequence[Constraint],
    filtered_nodes: Sequence[NodeInfo],
    all_nodes: Sequence[NodeInfo],
    require_all_topologies: bool,
) -> PreScoreState:
    """Count matching pods per domain of the feasible nodes, over all nodes.

    ``require_all_topologies`` is False only for the system default constraints, so
    that nodes without a zone label still get hostname spreading.
    """
    counts: list[dict[str, int]] = [{} for _ in constraints]
    state = PreScoreState(constraints, pod_counts=counts)
    sizes = [0] * len(constraints)
    for info in filtered_nodes:
        labels = info.node.labels
        if require_all_topologies and not node_has_topology_keys(labels, constraints):
            state.ignored_nodes.add(info.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == LABEL_HOSTNAME:
                continue
            value = labels.get(c.topology_key, "")
            if value not in counts[i]:
                counts[i][value] = 0
                sizes[i] += 1
    for i, c in enumerate(constraints):
        size = sizes[i]
        if c.topology_key == LABEL_HOSTNAME:
            size = len(filtered_nodes) - len(state.ignored_nodes)
        state.normalizing_weight.append(topology_normalizing_weight(size))

    inclusion = NodeInclusion(pod, constraints)
    ns = pod.namespace
    for info in all_nodes:
        node = info.node
        labels = node.labels
        if require_all_topologies and not node_has_topology_keys(labels, constraints):
            continue
        included = inclusion.included(node)
        for i, c in enumerate(constraints):
            if not included[i]:
                continue
            value = labels.get(c.topology_key, "")
            # Domains with no feasible node are not scored; hostname ones are
            # counted per node in Score.
            domain_counts = counts[i]
            if value not in domain_counts:
                continue
            domain_counts[value] += count_matching_pods(info.pods, c.selector, ns)
    return state


def score_node(state: PreScoreState, pod: Pod, node_info: NodeInfo) -> int:
    """The node's raw score: the weighted matching pods of its domains (lower is better)."""
    node = node_info.node
    if node.name in state.ignored_nodes:
        return 0
    labels = node.labels
    score = 0.0
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            count = count_matching_pods(node_info.pods, c.selector, pod.namespace)
        else:
            count = state.pod_counts[i].get(value, 0)
        score += count * state.normalizing_weight[i] + (c.max_skew - 1)
    # Go's math.Round rounds halves away from zero; the score is never negative.
    return math.floor(score + 0.5)


def normalize_scores(state: PreScoreState, scores: list[NodeScore]) -> None:
    """Invert and scale raw scores into [0, 100] in place; ignored nodes get 0."""
    ignored = state.ignored_nodes
    min_score: int | None = None
    max_score = 0
    for s in scores:
        if s.name in ignored:
            s.score = _INVALID_SCORE
            continue
        if min_score is None or s.score < min_score:
            min_score = s.score
        max_score = max(max_score, s.score)
    low = min_score if min_score is not None else 0
    for s in scores:
        if s.score == _INVALID_SCORE:
            s.score = 0
        elif max_score == 0:
            s.score = MAX_NODE_SCORE
        else:
            s.score = MAX_NODE_SCORE * (max_score + low - s.score) // max_score


# --- the columnar forms -----------------------------------------------------------------


def compute_pre_score_state_from_table(
    pod: Pod,
    constraints: Sequence[Constraint],
    rows: IntArray,
    table: NodeTable,
    require_all_topologies: bool,
) -> PreScoreState:
    """``compute_pre_score_state`` with the feasible nodes at ``rows`` of ``table`` and
    all its rows as every node: the same domains, weights and counts, as arrays."""
    has_keys = has_topology_keys(table, constraints)
    ignored = np.zeros(table.size, dtype=np.bool_)
    considered: BoolArray | None = None
    feasible_rows = rows
    if require_all_topologies:
        keyed = has_keys[rows]
        ignored[rows[~keyed]] = True
        feasible_rows = rows[keyed]
        considered = has_keys
    cols = ScoreColumns(table, ignored)
    masks = inclusion_masks(table, pod, constraints)
    matching = MatchingCounts(table, pod.namespace)
    weights: list[float] = []
    for c, mask in zip(constraints, masks, strict=True):
        if c.topology_key == LABEL_HOSTNAME:
            # Counted per node in Score, whatever the inclusion policies say.
            cols.host_counts.append(matching.of(c.selector))
            cols.domain_counts.append(None)
            cols.feasible_codes.append(None)
            weights.append(topology_normalizing_weight(len(feasible_rows)))
            continue
        codes = _domain_codes(table, c.topology_key)
        size = _domain_code_count(table, c.topology_key)
        feasible = codes[feasible_rows]
        present = np.bincount(feasible, minlength=size) > 0
        counted = considered
        if mask is not None:
            counted = mask if counted is None else counted & mask
        if counted is None:
            counts = domain_sums(codes, matching.of(c.selector), size)
        else:
            counts = domain_sums(codes[counted], matching.of(c.selector)[counted], size)
        # Domains of no feasible node are not scored.
        counts[~present] = 0
        cols.host_counts.append(None)
        cols.domain_counts.append(counts)
        cols.feasible_codes.append(feasible)
        weights.append(topology_normalizing_weight(int(np.count_nonzero(present))))
    return PreScoreState(constraints, normalizing_weight=weights, columns=cols)


def _domain_code_count(table: NodeTable, key: str) -> int:
    """How many domain codes ``_domain_codes`` may use for ``key``: one per label value
    plus one for ``""`` when no node is valued so."""
    column = table.labels.get(key)
    return 1 if column is None else len(column.values) + 1


def _domain_codes(table: NodeTable, key: str) -> npt.NDArray[np.int64]:
    """Per row, the code of the node's domain for ``key`` as the per-node PreScore names
    it (``labels.get(key, "")``): a node without the key is in domain ``""``."""
    column = table.labels.get(key)
    if column is None:
        return np.zeros(table.size, dtype=np.int64)
    empty = column.index.get("", len(column.values))
    codes = column.codes.astype(np.int64)
    codes[codes < 0] = empty
    return codes


def _columns_from_dicts(state: PreScoreState, pod: Pod, table: NodeTable) -> ScoreColumns:
    """Arrays describing a state built per node: a loop over domains, not nodes."""
    ignored = np.zeros(table.size, dtype=np.bool_)
    ignored[rows_of(table, state.ignored_nodes)] = True
    cols = ScoreColumns(table, ignored)
    matching = MatchingCounts(table, pod.namespace)
    for i, c in enumerate(state.constraints):
        cols.feasible_codes.append(None)
        if c.topology_key == LABEL_HOSTNAME:
            cols.host_counts.append(matching.of(c.selector))
            cols.domain_counts.append(None)
            continue
        size = _domain_code_count(table, c.topology_key)
        counts = np.zeros(size, dtype=np.int64)
        column = table.labels.get(c.topology_key)
        for value, num in state.pod_counts[i].items():
            code = None if column is None else column.index.get(value)
            if code is None and value == "":
                code = size - 1
            if code is not None:
                counts[code] = num
        cols.host_counts.append(None)
        cols.domain_counts.append(counts)
    return cols


def score_rows(state: PreScoreState, pod: Pod, table: NodeTable, rows: IntArray) -> IntArray:
    """``score_node`` for the nodes at ``rows``, with the same float arithmetic in the
    same order (so the same roundings)."""
    cols = state.columns
    if cols is None or cols.table is not table:
        cols = state.columns = _columns_from_dicts(state, pod, table)
    total: FloatArray = np.zeros(len(rows), dtype=np.float64)
    for i, c in enumerate(state.constraints):
        column = table.labels.get(c.topology_key)
        if column is None:
            continue
        codes = column.codes[rows]
        present = codes >= 0
        host_counts = cols.host_counts[i]
        if host_counts is not None:
            count = host_counts[rows]
        else:
            domain_counts = cols.domain_counts[i]
            assert domain_counts is not None
            count = domain_counts[np.where(present, codes, 0)]
        # score += count * weight + (maxSkew - 1), term by term as score_node does.
        term = count * state.normalizing_weight[i] + (c.max_skew - 1)
        total = np.where(present, total + term, total)
    ignored = cols.ignored[rows]
    cols.last_ignored = ignored
    # Go's math.Round rounds halves away from zero; the score is never negative.
    out = np.floor(total + 0.5).astype(np.int64)
    out[ignored] = 0
    return out


def normalize_rows(state: PreScoreState, scores: IntArray) -> IntArray:
    """``normalize_scores`` over the scores ``score_rows`` just computed."""
    cols = state.columns
    ignored = None if cols is None else cols.last_ignored
    if ignored is None or len(ignored) != len(scores):
        raise RuntimeError("PodTopologySpread: normalize_scores before score_nodes")
    valid = ~ignored
    if not valid.any():
        return np.zeros(len(scores), dtype=np.int64)
    kept = scores[valid]
    low = int(kept.min())
    high = max(0, int(kept.max()))
    if high == 0:
        out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        out = MAX_NODE_SCORE * (high + low - scores) // high
    out[ignored | (scores == _INVALID_SCORE)] = 0
    return out
