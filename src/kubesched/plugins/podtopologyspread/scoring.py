"""PodTopologySpread's soft constraints: PreScore, Score and NormalizeScore.

A node scores the pods that its domains already hold for each ScheduleAnyway
constraint, weighted by the log of the number of domains (so that a constraint over
few big domains is not drowned by one over many small ones), plus ``maxSkew - 1`` to
tolerate small skews. NormalizeScore inverts it: the emptiest node gets 100
(upstream ``scoring.go``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

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

PRE_SCORE_STATE_KEY = "PreScore" + NAME
_INVALID_SCORE = -1


@dataclass(slots=True)
class PreScoreState:
    """What PreScore computed for Score and NormalizeScore (read-only afterwards)."""

    constraints: Sequence[Constraint]
    #: Feasible nodes that miss a topology key; they score 0.
    ignored_nodes: set[str] = field(default_factory=set)
    #: Per constraint: topology value → matching pods. Only the domains of feasible
    #: nodes appear; hostname constraints are counted per node in Score instead.
    pod_counts: list[dict[str, int]] = field(default_factory=list)
    #: Per constraint: log(number of domains + 2).
    normalizing_weight: list[float] = field(default_factory=list)

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
