"""PodTopologySpread's questions about the cluster, answered for every node at once from
the snapshot's ``NodeTable``.

The per-node code asks, node by node: does the node hold every topology key, does each
constraint count it (node inclusion policies), how many of its pods does a selector
select. Here each question is one numpy expression over the table's rows, so that
PreFilter and PreScore cost a few array operations instead of a loop over thousands of
NodeInfos. The answers are the same as ``common``'s, node for node.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable, match_labels_mask, node_selector_mask
from kubesched.objects.affinity import POLICY_HONOR
from kubesched.objects.pod import Pod
from kubesched.objects.selectors import LabelSelector
from kubesched.objects.taints import NO_EXECUTE, NO_SCHEDULE, tolerations_tolerate_taint
from kubesched.plugins.podtopologyspread.common import Constraint

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


def has_topology_keys(table: NodeTable, constraints: Sequence[Constraint]) -> BoolArray:
    """Per row: whether the node holds the topology key of every constraint
    (``common.node_has_topology_keys``)."""
    mask = np.ones(table.size, dtype=np.bool_)
    for key in {c.topology_key for c in constraints}:
        column = table.labels.get(key)
        if column is None:
            return np.zeros(table.size, dtype=np.bool_)
        mask &= column.codes >= 0
    return mask


def inclusion_masks(
    table: NodeTable, pod: Pod, constraints: Sequence[Constraint]
) -> list[BoolArray | None]:
    """Per constraint, which rows its node inclusion policies admit (None: every row),
    as ``common.NodeInclusion`` decides node by node."""
    affinity_ok: BoolArray | None = None
    if any(c.node_affinity_policy == POLICY_HONOR for c in constraints):
        affinity_ok = required_node_affinity_mask(table, pod)
    taints_ok: BoolArray | None = None
    if any(c.node_taints_policy == POLICY_HONOR for c in constraints):
        taints_ok = tolerated_mask(table, pod)
    out: list[BoolArray | None] = []
    for c in constraints:
        mask: BoolArray | None = None
        if affinity_ok is not None and c.node_affinity_policy == POLICY_HONOR:
            mask = affinity_ok
        if taints_ok is not None and c.node_taints_policy == POLICY_HONOR:
            mask = taints_ok if mask is None else mask & taints_ok
        out.append(mask)
    return out


def required_node_affinity_mask(table: NodeTable, pod: Pod) -> BoolArray | None:
    """Rows passing the pod's nodeSelector and required node affinity (None: all)."""
    mask: BoolArray | None = None
    if pod.node_selector:
        mask = match_labels_mask(table, pod.node_selector)
    required = pod.required_node_affinity
    if required is not None:
        hit = node_selector_mask(table, required)
        mask = hit if mask is None else mask & hit
    return mask


def tolerated_mask(table: NodeTable, pod: Pod) -> BoolArray | None:
    """Rows whose NoSchedule and NoExecute taints the pod all tolerates (None: all)."""
    untolerated = [
        tid
        for tid, taint in enumerate(table.taints)
        if taint.effect in _DO_NOT_SCHEDULE_EFFECTS
        and not tolerations_tolerate_taint(pod.tolerations, taint)
    ]
    if not untolerated:
        return None
    matrix = table.taint_matrix()
    carried: BoolArray = np.any(matrix[:, untolerated], axis=1)
    return ~carried


class MatchingCounts:
    """Per row, the pods a selector selects in the pod's namespace, terminating pods
    excluded (``common.count_matching_pods``); each selector is counted once per cycle."""

    __slots__ = ("_cache", "_namespace", "_table")

    def __init__(self, table: NodeTable, namespace: str) -> None:
        self._table = table
        self._namespace = namespace
        self._cache: dict[int, tuple[LabelSelector | None, IntArray]] = {}

    def of(self, selector: LabelSelector | None) -> IntArray:
        """The per-row counts for ``selector``."""
        hit = self._cache.get(id(selector))
        if hit is not None and hit[0] is selector:
            return hit[1]
        # As count_matching_pods: a missing or empty selector counts no pod (1.34).
        if selector is None or selector.is_empty():
            counts = np.zeros(self._table.size, dtype=np.int64)
        else:
            counts = self._table.pods_matching(selector, (self._namespace,), include_deleting=False)
        self._cache[id(selector)] = (selector, counts)
        return counts


def domain_sums(codes: npt.NDArray[np.integer], weights: IntArray, size: int) -> IntArray:
    """Per code in ``[0, size)``, the sum of ``weights`` of the entries with that code."""
    if not len(codes):
        return np.zeros(size, dtype=np.int64)
    # Float sums of small integers are exact (well under 2**53).
    return np.bincount(codes, weights=weights, minlength=size).astype(np.int64)


def first_appearance_order(codes: npt.NDArray[np.integer]) -> list[int]:
    """The distinct ``codes`` in the order they first appear (dict insertion order of the
    per-node loops)."""
    if not len(codes):
        return []
    unique, first = np.unique(codes, return_index=True)
    ordered: list[int] = unique[np.argsort(first, kind="stable")].tolist()
    return ordered
