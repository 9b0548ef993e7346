"""PodTopologySpread's hard constraints: PreFilter, its AddPod/RemovePod, and Filter.

PreFilter counts, per DoNotSchedule constraint and topology domain, the pods the
constraint selects, and keeps the two least loaded domains ("critical paths") so that
Filter can check ``count + self-match - global minimum <= maxSkew`` in constant time
per node (upstream ``filtering.go``).

With the snapshot's node table, PreFilter counts with arrays (``tables``) and Filter
also has a vector form, ``filter_rows``, judging many nodes at once; the per-node form
and AddPod/RemovePod keep working on the same state, which makes its dicts on demand.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import LabelColumn, NodeTable
from kubesched.framework.interface import Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
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

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

#: The match number of an unset critical path (upstream uses MaxInt32).
_UNSET = 2**31 - 1


class CriticalPaths:
    """The two domains with the fewest matching pods for one constraint.

    Path 0 always holds the minimum; path 1 is at least as large but not necessarily
    the second minimum. Two are enough because preemption only removes pods from one
    node at a time, each node on its own copy of the state.
    """

    __slots__ = ("n0", "n1", "v0", "v1")

    def __init__(self) -> None:
        self.v0, self.n0 = "", _UNSET
        self.v1, self.n1 = "", _UNSET

    def pairs(self) -> tuple[tuple[str, int], tuple[str, int]]:
        """The two paths as ``(domain, count)`` pairs."""
        return (self.v0, self.n0), (self.v1, self.n1)

    def update(self, value: str, num: int) -> None:
        """Record that domain ``value`` now has ``num`` matching pods."""
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        elif num < self.n0:
            self.v1, self.n1 = self.v0, self.n0
            self.v0, self.n0 = value, num
            return
        else:
            if num < self.n1:
                self.v1, self.n1 = value, num
            return
        # A known domain changed: keep the minimum first.
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def clone(self) -> CriticalPaths:
        out = CriticalPaths()
        out.v0, out.n0, out.v1, out.n1 = self.v0, self.n0, self.v1, self.n1
        return out


class FilterColumns:
    """PreFilter's counts as arrays over one ``NodeTable``, for the vector Filter.

    Per constraint: the label column of its topology key, the matching pods per label
    code (0 for codes with no eligible node), the eligible rows (to list the domains in
    the per-node order when the dict form is needed), and the global minimum Filter
    compares with (minDomains applied).
    """

    __slots__ = ("columns", "counts", "eligible", "min_match", "table")

    def __init__(
        self,
        table: NodeTable,
        columns: list[LabelColumn | None],
        counts: list[IntArray],
        eligible: list[BoolArray],
        min_match: list[int],
    ) -> None:
        self.table = table
        self.columns = columns
        self.counts = counts
        self.eligible = eligible
        self.min_match = min_match

    def as_dicts(self) -> tuple[list[dict[str, int]], list[CriticalPaths]]:
        """The per-node form: domains in the order the per-node loop meets them, and the
        critical paths built from them in that order (ties resolve the same way)."""
        match_num: list[dict[str, int]] = []
        paths: list[CriticalPaths] = []
        for column, counts, eligible in zip(self.columns, self.counts, self.eligible, strict=True):
            domains: dict[str, int] = {}
            if column is not None:
                order = first_appearance_order(column.codes[eligible])
                values = column.values
                nums = counts[order].tolist() if order else []
                domains = {values[code]: num for code, num in zip(order, nums, strict=True)}
            match_num.append(domains)
            paths.append(_critical_paths(domains))
        return match_num, paths


class PreFilterState:
    """What PreFilter computed for Filter (and AddPod/RemovePod adjust in preemption).

    An empty ``constraints`` is a legitimate state: every node passes. Built from the
    node table, the state holds ``FilterColumns`` and makes the per-node dicts only when
    the per-node Filter, AddPod/RemovePod or a clone needs them; once changed by
    AddPod/RemovePod, the columns are dropped and the dicts are the truth.
    """

    __slots__ = ("_critical_paths", "_match_num", "columns", "constraints", "self_match")

    def __init__(
        self,
        constraints: Sequence[Constraint],
        match_num: list[dict[str, int]] | None,
        critical_paths: list[CriticalPaths] | None,
        self_match: tuple[int, ...],
        columns: FilterColumns | None = None,
    ) -> None:
        if (match_num is None or critical_paths is None) and columns is None:
            raise ValueError("PreFilterState needs the counts or their columns")
        self.constraints = constraints
        #: Per constraint: 1 if the incoming pod is selected by it (counts for itself).
        self.self_match = self_match
        self._match_num = match_num
        self._critical_paths = critical_paths
        self.columns = columns

    def _materialize(self) -> tuple[list[dict[str, int]], list[CriticalPaths]]:
        if self._match_num is None or self._critical_paths is None:
            assert self.columns is not None
            self._match_num, self._critical_paths = self.columns.as_dicts()
        return self._match_num, self._critical_paths

    @property
    def match_num(self) -> list[dict[str, int]]:
        """Per constraint: topology value → matching pods in that domain."""
        return self._materialize()[0]

    @property
    def critical_paths(self) -> list[CriticalPaths]:
        """Per constraint: the two least loaded domains."""
        return self._materialize()[1]

    def changed(self) -> None:
        """AddPod/RemovePod changed the dicts: the columns no longer describe them."""
        self._materialize()
        self.columns = None

    def min_match_num(self, i: int) -> int:
        """The global minimum for constraint ``i``, 0 while it has fewer eligible domains
        than its minDomains."""
        if self.columns is not None:
            return self.columns.min_match[i]
        if len(self.match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].n0

    def clone(self) -> PreFilterState:
        """A copy preemption can change; the constraints never change and are shared.

        The dicts are made once here rather than in each of preemption's many copies.
        """
        match_num, paths = self._materialize()
        return PreFilterState(
            self.constraints,
            [dict(m) for m in match_num],
            [p.clone() for p in paths],
            self.self_match,
            self.columns,
        )


def _critical_paths(domains: dict[str, int]) -> CriticalPaths:
    p = CriticalPaths()
    for value, num in domains.items():
        p.update(value, num)
    return p


def compute_pre_filter_state(
    pod: Pod, constraints: Sequence[Constraint], all_nodes: Sequence[NodeInfo]
) -> PreFilterState:
    """Count the pods each constraint selects per domain over ``all_nodes``.

    Only nodes holding every constraint's topology key count, and for each constraint
    only those its node inclusion policies admit.
    """
    match_num: list[dict[str, int]] = [{} for _ in constraints]
    inclusion = NodeInclusion(pod, constraints)
    ns = pod.namespace
    for info in all_nodes:
        node = info.node
        labels = node.labels
        if not node_has_topology_keys(labels, constraints):
            continue
        included = inclusion.included(node)
        for i, c in enumerate(constraints):
            if not included[i]:
                continue
            value = labels[c.topology_key]
            counts = match_num[i]
            counts[value] = counts.get(value, 0) + count_matching_pods(info.pods, c.selector, ns)
    paths = [_critical_paths(counts) for counts in match_num]
    self_match = tuple(1 if c.matches(pod.labels) else 0 for c in constraints)
    return PreFilterState(constraints, match_num, paths, self_match)


def update_with_pod(
    state: PreFilterState, updated: Pod, preemptor: Pod, node_info: NodeInfo, delta: int
) -> None:
    """Add (``delta`` 1) or remove (-1) ``updated`` on ``node_info`` in the counts."""
    if updated.namespace != preemptor.namespace or not node_info.has_node:
        return
    node = node_info.node
    labels = node.labels
    constraints = state.constraints
    if not node_has_topology_keys(labels, constraints):
        return
    included = NodeInclusion(preemptor, constraints).included(node)
    state.changed()
    for i, c in enumerate(constraints):
        if not c.matches(updated.labels) or not included[i]:
            continue
        value = labels[c.topology_key]
        counts = state.match_num[i]
        num = counts.get(value, 0) + delta
        counts[value] = num
        state.critical_paths[i].update(value, num)


def filter_node(state: PreFilterState, node_info: NodeInfo) -> Status | None:
    """Whether placing the pod on ``node_info`` keeps every constraint within maxSkew."""
    labels = node_info.node.labels
    for i, c in enumerate(state.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status.unresolvable(REASON_NODE_LABEL_NOT_MATCH)
        skew = state.match_num[i].get(value, 0) + state.self_match[i] - state.min_match_num(i)
        if skew > c.max_skew:
            return Status.unschedulable(REASON_CONSTRAINTS_NOT_MATCH)
    return None


# --- the columnar forms -----------------------------------------------------------------

#: Verdict codes of ``filter_rows``, indexes (from 1) into ``filter_statuses()``.
_CODE_LABEL_MISSING = 1
_CODE_SKEW = 2


def filter_statuses() -> tuple[Status, Status]:
    """The statuses ``filter_rows``' codes stand for, as ``filter_node`` words them."""
    return (
        Status.unresolvable(REASON_NODE_LABEL_NOT_MATCH),
        Status.unschedulable(REASON_CONSTRAINTS_NOT_MATCH),
    )


def compute_pre_filter_state_from_table(
    pod: Pod, constraints: Sequence[Constraint], table: NodeTable
) -> PreFilterState:
    """``compute_pre_filter_state`` over every row of ``table``, with arrays: the same
    counts, domains and minima (the dicts are made only if someone asks for them)."""
    eligible_all = has_topology_keys(table, constraints)
    masks = inclusion_masks(table, pod, constraints)
    matching = MatchingCounts(table, pod.namespace)
    columns: list[LabelColumn | None] = []
    counts: list[IntArray] = []
    eligible: list[BoolArray] = []
    min_match: list[int] = []
    for c, mask in zip(constraints, masks, strict=True):
        column = table.labels.get(c.topology_key)
        ok = eligible_all if mask is None else eligible_all & mask
        size = 0 if column is None else len(column.values)
        if column is None or not ok.any():
            domain_counts = np.zeros(size, dtype=np.int64)
            domains = 0
            low = _UNSET
        else:
            codes = column.codes[ok]
            domain_counts = domain_sums(codes, matching.of(c.selector)[ok], size)
            present = np.bincount(codes, minlength=size) > 0
            domains = int(np.count_nonzero(present))
            low = int(domain_counts[present].min())
        columns.append(column)
        counts.append(domain_counts)
        eligible.append(ok)
        # As min_match_num: 0 while there are fewer domains than minDomains.
        min_match.append(0 if domains < c.min_domains else low)
    self_match = tuple(1 if c.matches(pod.labels) else 0 for c in constraints)
    filter_columns = FilterColumns(table, columns, counts, eligible, min_match)
    return PreFilterState(constraints, None, None, self_match, filter_columns)


def _columns_from_dicts(state: PreFilterState, table: NodeTable) -> FilterColumns:
    """Arrays describing a state whose dicts are the truth (built per node, or changed by
    AddPod/RemovePod): a loop over domains, not nodes."""
    columns: list[LabelColumn | None] = []
    counts: list[IntArray] = []
    eligible: list[BoolArray] = []
    min_match: list[int] = []
    for i, c in enumerate(state.constraints):
        column = table.labels.get(c.topology_key)
        size = 0 if column is None else len(column.values)
        domain_counts = np.zeros(size, dtype=np.int64)
        if column is not None:
            for value, num in state.match_num[i].items():
                code = column.index.get(value)
                if code is not None:
                    domain_counts[code] = num
        columns.append(column)
        counts.append(domain_counts)
        eligible.append(np.zeros(table.size, dtype=np.bool_))  # unused: dicts exist
        min_match.append(state.min_match_num(i))
    return FilterColumns(table, columns, counts, eligible, min_match)


def filter_rows(
    state: PreFilterState, table: NodeTable, rows: IntArray
) -> npt.NDArray[np.int8] | None:
    """``filter_node`` for the nodes at ``rows``: per row 0 (passes) or the code of its
    status in ``filter_statuses()``; None when every row passes.

    Constraints are checked in order and a row's first failure decides its status, as
    in ``filter_node``: a missing topology key, or a skew above maxSkew.
    """
    cols = state.columns
    if cols is None or cols.table is not table:
        cols = _columns_from_dicts(state, table)
    out = np.zeros(len(rows), dtype=np.int8)
    undecided = np.ones(len(rows), dtype=np.bool_)
    for i, c in enumerate(state.constraints):
        column = table.labels.get(c.topology_key)
        if column is None:
            out[undecided] = _CODE_LABEL_MISSING
            break
        codes = column.codes[rows]
        missing = codes < 0
        counts = cols.counts[i]
        if len(counts):
            matched = counts[np.where(missing, 0, codes)]
        else:
            matched = np.zeros(len(rows), dtype=np.int64)
        limit = c.max_skew + cols.min_match[i] - state.self_match[i]
        skewed = ~missing & (matched > limit)
        out[undecided & missing] = _CODE_LABEL_MISSING
        out[undecided & skewed] = _CODE_SKEW
        undecided &= ~(missing | skewed)
        if not undecided.any():
            break
    return out if out.any() else None
