"""InterPodAffinity over the node table: counts per topology domain as arrays.

The per-node PreFilter and PreScore walk every pod of every node and fill dicts keyed by
topology pair (label key, label value). With a ``NodeTable`` the same sums come from a few
array operations: the pods a term selects, per node (``pods_matching``, or the per-node
counts of the existing pods' distinct terms), are summed per value of the term's topology
key with one ``np.bincount`` over that key's label codes. The result, ``DomainCounts``,
answers "count at this node's pair" for all nodes at once (vector Filter and Score) and,
by one dict lookup, for a single node (per-node Filter and Score on the same state).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import (
    TERM_PREFERRED_AFFINITY,
    TERM_PREFERRED_ANTI_AFFINITY,
    TERM_REQUIRED_AFFINITY,
    TERM_REQUIRED_ANTI_AFFINITY,
    NodeTable,
)
from kubesched.objects.pod import Pod

if TYPE_CHECKING:
    from kubesched.plugins.interpodaffinity.filtering import IncomingTerm

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class DomainCounts:
    """Counts (or weight sums) per topology pair, held as arrays over a table's label codes.

    ``by_key[key][code]`` is the sum for the pair ``(key, values[code])`` of the label
    column ``key``; one more slot at the end stays 0 and stands for nodes without the label
    (their code, -1, indexes it), so that looking up a node's code needs no mask.
    ``empty`` says whether the dict the per-node code would have built has no entry at all
    (the per-node code tests that, not the sums). Never changed after it is built: states
    that change switch to dicts instead.
    """

    __slots__ = ("by_key", "empty", "table")

    def __init__(self, table: NodeTable, by_key: dict[str, IntArray], empty: bool) -> None:
        self.table = table
        self.by_key = by_key
        self.empty = empty

    def get(self, key: str, value: str) -> int:
        """The sum at pair ``(key, value)`` (0 when absent)."""
        counts = self.by_key.get(key)
        if counts is None:
            return 0
        code = self.table.labels[key].index.get(value)
        return 0 if code is None else int(counts[code])

    def at(self, key: str, rows: IntArray) -> IntArray | None:
        """The sums at each row's pair for ``key`` (None when no pair has that key)."""
        counts = self.by_key.get(key)
        if counts is None:
            return None
        return counts[self.table.labels[key].codes[rows]]

    def pairs(self) -> dict[tuple[str, str], int]:
        """The non-zero sums as the per-node PreFilter's ``(key, value) → count`` dict."""
        out: dict[tuple[str, str], int] = {}
        for key, counts in self.by_key.items():
            values = self.table.labels[key].values
            for code in np.flatnonzero(counts).tolist():
                out[(key, values[code])] = int(counts[code])
        return out

    def nested(self) -> dict[str, dict[str, int]]:
        """The non-zero sums as the per-node PreScore's ``key → value → sum`` dict."""
        out: dict[str, dict[str, int]] = {}
        for (key, value), total in self.pairs().items():
            out.setdefault(key, {})[value] = total
        return out

    @classmethod
    def from_pairs(cls, table: NodeTable, pairs: Mapping[tuple[str, str], int]) -> DomainCounts:
        """The arrays of a ``(key, value) → count`` dict (after AddPod/RemovePod changed it).

        Pairs whose value no node has cannot match a node, so they are dropped; they still
        make the dict non-empty, which ``empty`` keeps.
        """
        by_key: dict[str, IntArray] = {}
        for (key, value), count in pairs.items():
            column = table.labels.get(key)
            if column is None or value not in column.index:
                continue
            counts = by_key.get(key)
            if counts is None:
                counts = by_key[key] = np.zeros(len(column.values) + 1, dtype=np.int64)
            counts[column.index[value]] += count
        return cls(table, by_key, not pairs)


class DomainSums:
    """Builds a ``DomainCounts``: adds per-node counts at their nodes' topology values."""

    __slots__ = ("_by_key", "_table", "_touched")

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        self._by_key: dict[str, IntArray] = {}
        self._touched = False

    def add(self, key: str, node_counts: IntArray, weight: int = 1) -> None:
        """Add ``weight`` times each node's count at the node's value of label ``key``.

        Nodes without the label add nothing; a non-zero count on a node with the label
        creates the pair even if the weights cancel out, as the per-node dicts do.
        """
        column = self._table.labels.get(key)
        if column is None:
            return
        size = len(column.values)
        # Shifted by one so that nodes without the label (code -1) land in bin 0, dropped.
        # Counts are small integers: float64 weights sum them exactly.
        per_value = np.bincount(column.codes + 1, weights=node_counts, minlength=size + 1)[1:]
        if not per_value.any():
            return
        self._touched = True
        sums = np.zeros(size + 1, dtype=np.int64)  # the last slot: nodes without the label
        sums[:size] = per_value
        if weight != 1:
            sums *= weight
        current = self._by_key.get(key)
        if current is None:
            self._by_key[key] = sums
        else:
            current += sums

    def result(self) -> DomainCounts:
        """The sums; ``empty`` when nothing was added at any node with the label."""
        return DomainCounts(self._table, self._by_key, not self._touched)


def table_namespaces(table: NodeTable) -> set[str]:
    """The namespaces that have (or had) pods in the table."""
    return {namespace for namespace, _, _ in table.groups}


def pods_matching_all(table: NodeTable, terms: Sequence[IncomingTerm]) -> IntArray:
    """Per node, how many pods match every one of ``terms`` (none for no terms)."""
    if len(terms) == 1:
        return terms[0].pods_per_node(table)
    out = np.zeros(table.size, dtype=np.int64)
    if not terms:
        return out
    for group in table.groups.values():
        if group.total and all(t.matches_labels(group.namespace, group.labels) for t in terms):
            out += group.counts
    return out


def required_counts(
    table: NodeTable,
    pod: Pod,
    namespace_labels: Mapping[str, str] | None,
    affinity: Sequence[IncomingTerm],
    anti_affinity: Sequence[IncomingTerm],
) -> tuple[DomainCounts, DomainCounts, DomainCounts]:
    """PreFilter's three maps from the table: existing pods' required anti-affinity that
    selects ``pod``; pods matching all of its affinity terms; pods matching each of its
    anti-affinity terms. Terminating pods count, as in the per-node code."""
    existing = DomainSums(table)
    namespace, labels = pod.namespace, pod.labels
    for existing_term, _, node_counts in table.terms_of(TERM_REQUIRED_ANTI_AFFINITY):
        # Each distinct term once, however many pods carry it.
        if existing_term.matches(namespace, labels, namespace_labels):
            existing.add(existing_term.topology_key, node_counts)
    matched = DomainSums(table)
    if affinity:
        node_counts = pods_matching_all(table, affinity)
        for term in affinity:
            matched.add(term.topology_key, node_counts)
    avoided = DomainSums(table)
    for term in anti_affinity:
        avoided.add(term.topology_key, term.pods_per_node(table))
    return existing.result(), matched.result(), avoided.result()


def has_required_anti_affinity(table: NodeTable) -> bool:
    """Whether any existing pod has a required anti-affinity term."""
    return any(
        kind == TERM_REQUIRED_ANTI_AFFINITY and counts.any()
        for (kind, _, _), counts in table.terms.items()
    )


def preferred_sums(
    table: NodeTable,
    pod: Pod,
    namespace_labels: Mapping[str, str] | None,
    affinity: Iterable[IncomingTerm],
    anti_affinity: Iterable[IncomingTerm],
    hard_weight: int,
) -> DomainCounts:
    """PreScore's weight sums from the table: the pod's preferred terms over the existing
    pods, and the existing pods' terms (preferred, and required affinity with
    ``hard_weight``) over the pod."""
    sums = DomainSums(table)
    for term in affinity:
        sums.add(term.topology_key, term.pods_per_node(table), term.weight)
    for term in anti_affinity:
        sums.add(term.topology_key, term.pods_per_node(table), -term.weight)
    namespace, labels = pod.namespace, pod.labels
    for (kind, existing_term, weight), node_counts in table.terms.items():
        if kind == TERM_REQUIRED_AFFINITY:
            if hard_weight <= 0:
                continue
            weight = hard_weight
        elif kind == TERM_PREFERRED_ANTI_AFFINITY:
            weight = -weight
        elif kind != TERM_PREFERRED_AFFINITY:
            continue
        if existing_term.matches(namespace, labels, namespace_labels) and node_counts.any():
            sums.add(existing_term.topology_key, node_counts, weight)
    return sums.result()
