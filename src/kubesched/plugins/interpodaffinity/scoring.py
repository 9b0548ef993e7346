"""InterPodAffinity, the scoring half: preferred pod affinity and anti-affinity.

Mirrors ``pkg/scheduler/framework/plugins/interpodaffinity/scoring.go`` (release-1.34).
PreScore walks the existing pods once and sums weights per topology pair:

* the incoming pod's preferred affinity (+weight) and anti-affinity (-weight) terms that
  an existing pod matches, at the topology value of that pod's node;
* symmetrically, the existing pods' preferred affinity (+weight) and anti-affinity
  (-weight) terms that the incoming pod matches, and their *required* affinity terms with
  the configured ``hardPodAffinityWeight``.

Score adds up the pairs a node has; NormalizeScore maps the range [min, max] onto
[0, 100] (all zero when every node scored the same).

With a node table PreScore sums per distinct term from its columns (``domains``), and
``score_nodes`` / ``normalize_scores`` score all nodes at once with the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Status
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.pod import Pod
from kubesched.plugins.interpodaffinity.domains import DomainCounts, IntArray, preferred_sums
from kubesched.plugins.interpodaffinity.filtering import NAME, IncomingTerm

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.plugins.interpodaffinity.plugin import InterPodAffinityArgs

PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: topology key → topology value → summed weight.
TopologyScores = dict[str, dict[str, int]]


class PreScoreState:
    """The weight sums PreScore computed, read by Score and NormalizeScore.

    Held as the per-node code's ``key → value → sum`` dict or, from the columnar PreScore,
    as ``DomainCounts`` arrays over the node table; the per-node Score reads either.
    """

    __slots__ = ("_domains", "_scores")

    def __init__(self, topology_score: TopologyScores | DomainCounts) -> None:
        self._scores = None if isinstance(topology_score, DomainCounts) else topology_score
        self._domains = topology_score if isinstance(topology_score, DomainCounts) else None

    @property
    def topology_score(self) -> TopologyScores:
        """The sums as ``key → value → sum`` (from arrays: the non-zero sums only)."""
        if self._scores is None:
            assert self._domains is not None
            self._scores = self._domains.nested()
        return self._scores

    @property
    def domains(self) -> DomainCounts | None:
        """The sums as arrays over the node table (None for the per-node PreScore)."""
        return self._domains

    def is_empty(self) -> bool:
        """Whether PreScore found no topology pair at all (NormalizeScore leaves the
        scores as they are then)."""
        if self._domains is not None:
            return self._domains.empty
        return not self._scores

    def get(self, key: str, value: str) -> int:
        """The sum at pair ``(key, value)`` (0 when absent)."""
        if self._domains is not None:
            return self._domains.get(key, value)
        assert self._scores is not None
        return self._scores.get(key, {}).get(value, 0)

    def topology_keys(self) -> Iterable[str]:
        """The topology keys that have sums."""
        if self._domains is not None:
            return self._domains.by_key.keys()
        assert self._scores is not None
        return self._scores.keys()

    def clone(self) -> PreScoreState:
        """Never changed after PreScore, so it is shared, as upstream does."""
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreScoreState):
            return NotImplemented
        return self.is_empty() == other.is_empty() and _non_zero(self.topology_score) == _non_zero(
            other.topology_score
        )

    __hash__ = None  # type: ignore[assignment]


def _non_zero(scores: TopologyScores) -> TopologyScores:
    return {
        key: {value: total for value, total in by_value.items() if total}
        for key, by_value in scores.items()
        if any(by_value.values())
    }


def _add(scores: TopologyScores, node_labels: Mapping[str, str], key: str, weight: int) -> None:
    value = node_labels.get(key)
    if value is not None:
        # An entry is created even when the sum comes back to zero: upstream's Skip test
        # ("no topology score at all") and NormalizeScore's early return rely on that.
        by_value = scores.setdefault(key, {})
        by_value[value] = by_value.get(value, 0) + weight


def _read_state(state: CycleState) -> PreScoreState | Status:
    try:
        data = state.read(PRE_SCORE_STATE_KEY)
    except KeyError:
        return Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
    if not isinstance(data, PreScoreState):
        return Status.error(f"{data!r}  convert to interpodaffinity.preScoreState error")
    return data


class InterPodAffinityScoring:
    """PreScore, Score and NormalizeScore of the InterPodAffinity plugin."""

    _handle: Handle
    args: InterPodAffinityArgs

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Sum the weights per topology pair over all nodes' pods; Skip when none apply."""
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        handle = self._handle
        snapshot = handle.snapshot
        cluster = handle.cluster
        table = snapshot.table
        if table is not None:
            return self._pre_score_table(state, pod, table)
        # Without preferred terms of its own, the pod can only be scored by existing pods'
        # terms, so only pods with affinity (and their nodes) need a look.
        all_nodes = snapshot.list() if has_constraints else snapshot.have_pods_with_affinity_list()
        affinity = tuple(IncomingTerm(w.term, cluster, w.weight) for w in pod.preferred_affinity)
        anti_affinity = tuple(
            IncomingTerm(w.term, cluster, w.weight) for w in pod.preferred_anti_affinity
        )
        namespace, labels = pod.namespace, pod.labels
        namespace_labels = cluster.namespace_labels(namespace)
        hard_weight = self.args.hard_pod_affinity_weight

        scores: TopologyScores = {}
        for node_info in all_nodes:
            node_labels = node_info.node.labels
            if not node_labels:
                continue  # no topology value to credit
            pods = node_info.pods if has_constraints else node_info.pods_with_affinity
            for info in pods:
                existing = info.pod
                for term in affinity:
                    if term.matches(existing):
                        _add(scores, node_labels, term.topology_key, term.weight)
                for term in anti_affinity:
                    if term.matches(existing):
                        _add(scores, node_labels, term.topology_key, -term.weight)
                if hard_weight > 0:
                    for required in existing.required_affinity:
                        if required.matches(namespace, labels, namespace_labels):
                            _add(scores, node_labels, required.topology_key, hard_weight)
                for weighted in existing.preferred_affinity:
                    if weighted.term.matches(namespace, labels, namespace_labels):
                        _add(scores, node_labels, weighted.term.topology_key, weighted.weight)
                for weighted in existing.preferred_anti_affinity:
                    if weighted.term.matches(namespace, labels, namespace_labels):
                        _add(scores, node_labels, weighted.term.topology_key, -weighted.weight)
        if not scores:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def _pre_score_table(self, state: CycleState, pod: Pod, table: NodeTable) -> Status | None:
        """``pre_score`` from the node table: the same sums, per distinct term."""
        if not (pod.preferred_affinity or pod.preferred_anti_affinity) and not table.terms:
            return Status.skip()  # no pod has terms of any kind: nothing to score
        cluster = self._handle.cluster
        sums = preferred_sums(
            table,
            pod,
            cluster.namespace_labels(pod.namespace),
            [IncomingTerm(w.term, cluster, w.weight) for w in pod.preferred_affinity],
            [IncomingTerm(w.term, cluster, w.weight) for w in pod.preferred_anti_affinity],
            self.args.hard_pod_affinity_weight,
        )
        if sums.empty:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(sums))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The summed weights of the node's topology pairs (negative for anti-affinity)."""
        s = _read_state(state)
        if isinstance(s, Status):
            return 0, s
        node_labels = node_info.node.labels
        total = 0
        for key in s.topology_keys():
            value = node_labels.get(key)
            if value is not None:
                total += s.get(key, value)
        return total, None

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows`` at once."""
        s = _read_state(state)
        if isinstance(s, Status):
            raise RuntimeError(s.message)
        domains = s.domains
        if domains is None or domains.table is not table:
            # A state the per-node PreScore built (only if the table appeared meanwhile).
            pairs = {
                (key, value): total
                for key, by_value in s.topology_score.items()
                for value, total in by_value.items()
            }
            domains = DomainCounts.from_pairs(table, pairs)
        total = np.zeros(len(rows), dtype=np.int64)
        for key in domains.by_key:
            sums = domains.at(key, rows)
            if sums is not None:
                total += sums
        return total

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Map [min, max] of the scores onto [0, MAX_NODE_SCORE]; all 0 when min == max."""
        s = _read_state(state)
        if isinstance(s, Status):
            return s
        if s.is_empty() or not scores:
            return None
        low = min(ns.score for ns in scores)
        spread = max(ns.score for ns in scores) - low
        for ns in scores:
            # Same float arithmetic and truncation as upstream's int64(float64(...)).
            ns.score = int(MAX_NODE_SCORE * ((ns.score - low) / spread)) if spread > 0 else 0
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """``normalize_score`` over an array: the same float steps, then truncation."""
        s = _read_state(state)
        if isinstance(s, Status):
            raise RuntimeError(s.message)
        if s.is_empty() or not len(scores):
            return scores
        low = scores.min()
        spread = int(scores.max()) - int(low)
        if spread <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        # int64 → float64 is exact for these sums, and IEEE division and the product by
        # 100 round as Python's int / int and float * int do; astype truncates like int().
        fractions: npt.NDArray[np.float64] = (scores - low) / np.float64(spread)
        normalized: IntArray = (MAX_NODE_SCORE * fractions).astype(np.int64)
        return normalized
