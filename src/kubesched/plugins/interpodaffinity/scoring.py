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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Status
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.pod import Pod
from kubesched.plugins.interpodaffinity.filtering import NAME, IncomingTerm

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle
    from kubesched.plugins.interpodaffinity.plugin import InterPodAffinityArgs

PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: topology key → topology value → summed weight.
TopologyScores = dict[str, dict[str, int]]


@dataclass(slots=True)
class PreScoreState:
    """The weight sums PreScore computed, read by Score and NormalizeScore."""

    topology_score: TopologyScores

    def clone(self) -> PreScoreState:
        """Never changed after PreScore, so it is shared, as upstream does."""
        return self


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

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The summed weights of the node's topology pairs (negative for anti-affinity)."""
        s = _read_state(state)
        if isinstance(s, Status):
            return 0, s
        node_labels = node_info.node.labels
        total = 0
        for key, by_value in s.topology_score.items():
            value = node_labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total, None

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Map [min, max] of the scores onto [0, MAX_NODE_SCORE]; all 0 when min == max."""
        s = _read_state(state)
        if isinstance(s, Status):
            return s
        if not s.topology_score or not scores:
            return None
        low = min(ns.score for ns in scores)
        spread = max(ns.score for ns in scores) - low
        for ns in scores:
            # Same float arithmetic and truncation as upstream's int64(float64(...)).
            ns.score = int(MAX_NODE_SCORE * ((ns.score - low) / spread)) if spread > 0 else 0
        return None
