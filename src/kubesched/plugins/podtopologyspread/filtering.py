"""PodTopologySpread's hard constraints: PreFilter, its AddPod/RemovePod, and Filter.

PreFilter counts, per DoNotSchedule constraint and topology domain, the pods the
constraint selects, and keeps the two least loaded domains ("critical paths") so that
Filter can check ``count + self-match - global minimum <= maxSkew`` in constant time
per node (upstream ``filtering.go``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter computed for Filter (and AddPod/RemovePod adjust in preemption).

    An empty ``constraints`` is a legitimate state: every node passes.
    """

    constraints: Sequence[Constraint]
    #: Per constraint: topology value → matching pods in that domain.
    match_num: list[dict[str, int]]
    critical_paths: list[CriticalPaths]
    #: Per constraint: 1 if the incoming pod is selected by it (counts for itself).
    self_match: tuple[int, ...]

    def min_match_num(self, i: int) -> int:
        """The global minimum for constraint ``i``, 0 while it has fewer eligible domains
        than its minDomains."""
        if len(self.match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].n0

    def clone(self) -> PreFilterState:
        """A copy preemption can change; the constraints never change and are shared."""
        return PreFilterState(
            self.constraints,
            [dict(m) for m in self.match_num],
            [p.clone() for p in self.critical_paths],
            self.self_match,
        )


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
    paths = []
    for counts in match_num:
        p = CriticalPaths()
        for value, num in counts.items():
            p.update(value, num)
        paths.append(p)
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
