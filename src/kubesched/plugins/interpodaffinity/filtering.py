"""InterPodAffinity, the filtering half: required pod affinity and anti-affinity.

Mirrors ``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`` (release-1.34).
PreFilter counts, per topology pair (label key, label value), the existing pods that
matter to the incoming pod, in three maps:

* existing pods whose *required anti-affinity* selects the incoming pod (symmetry);
* existing pods that match *all* of the incoming pod's required affinity terms;
* existing pods that match one of the incoming pod's required anti-affinity terms.

Filter then only looks up the node's labels in those maps, so it costs O(terms) per node.
AddPod/RemovePod keep the maps right while preemption tries removing victims or adding
nominated pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PreFilterResult, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects.affinity import PodAffinityTerm
from kubesched.objects.pod import Pod

if TYPE_CHECKING:
    from kubesched.framework.handle import ClusterLister, Handle

#: The plugin's name (upstream ``names.InterPodAffinity``); defined here, the lowest module
#: of the package, so that the cycle-state keys of both halves derive from it.
NAME = "InterPodAffinity"

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

#: (topology key, topology value) → number of matching pods (never stored as zero).
TopologyCounts = dict[tuple[str, str], int]


class IncomingTerm:
    """A term of the pod being scheduled, with its namespaceSelector resolved.

    Upstream merges the namespaces that a non-empty namespaceSelector selects into the
    term's namespace list once per cycle, so that existing pods are then matched without
    looking up their namespace. The cluster lister cannot enumerate namespaces, so here the
    selection is made lazily per namespace and remembered: a namespace is selected when its
    Namespace object exists and its labels match, which is exactly the set upstream merges.
    A missing selector (no namespace) and the empty one (every namespace) need no lookup.
    """

    __slots__ = ("_cluster", "_selected", "_term", "topology_key", "weight")

    def __init__(self, term: PodAffinityTerm, cluster: ClusterLister, weight: int = 0) -> None:
        self._term = term
        self.topology_key = term.topology_key
        self.weight = weight
        selector = term.namespace_selector
        needs_lookup = selector is not None and not selector.is_empty()
        self._cluster = cluster if needs_lookup else None
        self._selected: dict[str, bool] = {}

    def matches(self, pod: Pod) -> bool:
        """Whether ``pod`` is in the term's namespaces and matches its label selector."""
        term = self._term
        if self._cluster is None:
            return term.matches(pod.namespace, pod.labels)
        selector = term.label_selector
        if selector is None:
            return False
        namespace = pod.namespace
        if namespace not in term.namespaces:
            selected = self._selected.get(namespace)
            if selected is None:
                ns_labels = self._cluster.namespace_labels(namespace)
                ns_selector = term.namespace_selector
                selected = (
                    ns_labels is not None
                    and ns_selector is not None
                    and ns_selector.matches(ns_labels)
                )
                self._selected[namespace] = selected
            if not selected:
                return False
        return selector.matches(pod.labels)


def matches_all(terms: Sequence[IncomingTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches every term; False for no terms (upstream's quirk kept)."""
    if not terms:
        return False
    for term in terms:  # noqa: SIM110 - a plain loop is cheaper than all() on a generator
        if not term.matches(pod):
            return False
    return True


def _add(counts: TopologyCounts, node_labels: Mapping[str, str], key: str, value: int) -> None:
    """Add ``value`` to the node's pair for ``key``; drop the pair when it reaches zero."""
    topology_value = node_labels.get(key)
    if topology_value is None:
        return
    pair = (key, topology_value)
    total = counts.get(pair, 0) + value
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter computes for Filter; AddPod/RemovePod update the counts in place."""

    #: Existing pods whose required anti-affinity selects the incoming pod.
    existing_anti_affinity_counts: TopologyCounts
    #: Existing pods matching all of the incoming pod's required affinity terms.
    affinity_counts: TopologyCounts
    #: Existing pods matching the incoming pod's required anti-affinity terms.
    anti_affinity_counts: TopologyCounts
    pod: Pod
    required_affinity: tuple[IncomingTerm, ...]
    required_anti_affinity: tuple[IncomingTerm, ...]
    #: Labels of the incoming pod's Namespace (None when it has no Namespace object).
    namespace_labels: Mapping[str, str] | None
    #: The incoming pod matches its own required affinity terms (first pod of a group).
    matches_own_affinity: bool

    def clone(self) -> PreFilterState:
        """Copies of the counts; the pod and its terms never change, so they are shared."""
        return PreFilterState(
            dict(self.existing_anti_affinity_counts),
            dict(self.affinity_counts),
            dict(self.anti_affinity_counts),
            self.pod,
            self.required_affinity,
            self.required_anti_affinity,
            self.namespace_labels,
            self.matches_own_affinity,
        )

    def update_with_pod(self, other: Pod, node_labels: Mapping[str, str], sign: int) -> None:
        """Count ``other`` on a node with ``node_labels`` in (sign 1) or out (sign -1)."""
        pod = self.pod
        for term in other.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, self.namespace_labels):
                _add(self.existing_anti_affinity_counts, node_labels, term.topology_key, sign)
        if matches_all(self.required_affinity, other):
            for incoming in self.required_affinity:
                _add(self.affinity_counts, node_labels, incoming.topology_key, sign)
        for incoming in self.required_anti_affinity:
            if incoming.matches(other):
                _add(self.anti_affinity_counts, node_labels, incoming.topology_key, sign)


def existing_anti_affinity_counts(
    pod: Pod, namespace_labels: Mapping[str, str] | None, nodes: Sequence[NodeInfo]
) -> TopologyCounts:
    """Topology pairs of existing pods whose required anti-affinity selects ``pod``.

    ``nodes`` need only be those hosting pods with required anti-affinity.
    """
    counts: TopologyCounts = {}
    namespace, labels = pod.namespace, pod.labels
    for node_info in nodes:
        node_labels = node_info.node.labels
        for info in node_info.pods_with_required_anti_affinity:
            for term in info.pod.required_anti_affinity:
                if term.matches(namespace, labels, namespace_labels):
                    _add(counts, node_labels, term.topology_key, 1)
    return counts


def incoming_affinity_counts(
    affinity: Sequence[IncomingTerm],
    anti_affinity: Sequence[IncomingTerm],
    nodes: Sequence[NodeInfo],
) -> tuple[TopologyCounts, TopologyCounts]:
    """Topology pairs of existing pods that match the incoming pod's required terms.

    A pod counts for affinity only when it matches all the affinity terms (one pod must
    satisfy them together); it counts for each anti-affinity term it matches.
    """
    affinity_counts: TopologyCounts = {}
    anti_counts: TopologyCounts = {}
    if not affinity and not anti_affinity:
        return affinity_counts, anti_counts
    for node_info in nodes:
        node_labels = node_info.node.labels
        for info in node_info.pods:
            existing = info.pod
            if affinity and matches_all(affinity, existing):
                for term in affinity:
                    _add(affinity_counts, node_labels, term.topology_key, 1)
            for term in anti_affinity:
                if term.matches(existing):
                    _add(anti_counts, node_labels, term.topology_key, 1)
    return affinity_counts, anti_counts


def _read_state(state: CycleState) -> PreFilterState | Status:
    try:
        data = state.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        # Upstream: PreFilter did not run (or was skipped) for this cycle.
        return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
    if not isinstance(data, PreFilterState):
        return Status.error(f"{data!r}  convert to interpodaffinity.state error")
    return data


def _satisfies_existing_anti_affinity(s: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        # Any of the node's labels may be the topology key of some existing pod's term.
        for pair in node_labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def _satisfies_anti_affinity(s: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    counts = s.anti_affinity_counts
    if counts:
        for term in s.required_anti_affinity:
            value = node_labels.get(term.topology_key)
            if value is not None and counts.get((term.topology_key, value), 0) > 0:
                return False
    return True


def _satisfies_affinity(s: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    pods_exist = True
    counts = s.affinity_counts
    for term in s.required_affinity:
        value = node_labels.get(term.topology_key)
        if value is None:
            # The node must have every topology key, even for the first pod of a group.
            return False
        if counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches the terms
    # but the pod matches them itself, so let it start the group rather than pend forever.
    return not counts and s.matches_own_affinity


class InterPodAffinityFiltering:
    """PreFilter, AddPod/RemovePod and Filter of the InterPodAffinity plugin."""

    _handle: Handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count the matching existing pods per topology pair; Skip when nothing applies.

        ``nodes`` are all the nodes of the snapshot, as upstream passes them.
        """
        handle = self._handle
        cluster = handle.cluster
        affinity = tuple(IncomingTerm(t, cluster) for t in pod.required_affinity)
        anti_affinity = tuple(IncomingTerm(t, cluster) for t in pod.required_anti_affinity)
        namespace_labels = cluster.namespace_labels(pod.namespace)
        existing = existing_anti_affinity_counts(
            pod, namespace_labels, handle.snapshot.have_pods_with_required_anti_affinity_list()
        )
        affinity_counts, anti_counts = incoming_affinity_counts(affinity, anti_affinity, nodes)
        if not existing and not affinity and not anti_affinity:
            return None, Status.skip()
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(
                existing_anti_affinity_counts=existing,
                affinity_counts=affinity_counts,
                anti_affinity_counts=anti_counts,
                pod=pod,
                required_affinity=affinity,
                required_anti_affinity=anti_affinity,
                namespace_labels=namespace_labels,
                matches_own_affinity=matches_all(affinity, pod),
            ),
        )
        return None, None

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_to_add`` as if it ran on ``node_info``'s node."""
        s = _read_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_add.pod, node_info.node.labels, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Stop counting ``pod_to_remove`` on ``node_info``'s node."""
        s = _read_state(state)
        if isinstance(s, Status):
            return s
        s.update_with_pod(pod_to_remove.pod, node_info.node.labels, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node when the pod's affinity, its anti-affinity or an existing pod's
        anti-affinity would be violated there.

        A missing affinity match is UnschedulableAndUnresolvable (removing pods cannot
        create a match); anti-affinity violations are Unschedulable (preemption can help).
        """
        s = _read_state(state)
        if isinstance(s, Status):
            return s
        node_labels = node_info.node.labels
        if not _satisfies_affinity(s, node_labels):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not _satisfies_anti_affinity(s, node_labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not _satisfies_existing_anti_affinity(s, node_labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None
