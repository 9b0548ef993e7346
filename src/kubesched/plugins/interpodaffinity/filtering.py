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

With a node table (the columnar snapshot) PreFilter builds the maps from its columns
(``domains``) and ``filter_nodes`` judges all nodes at once; ``filter`` reads the same
state, so both give the same answer for every node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PreFilterResult, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.framework.vector import NodeVerdicts
from kubesched.objects.affinity import PodAffinityTerm
from kubesched.objects.pod import Pod
from kubesched.plugins.interpodaffinity.domains import (
    BoolArray,
    DomainCounts,
    IntArray,
    has_required_anti_affinity,
    required_counts,
    table_namespaces,
)

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

    def __eq__(self, other: object) -> bool:
        # The namespaces selected so far are a cache, not part of what the term is.
        if not isinstance(other, IncomingTerm):
            return NotImplemented
        return self._term == other._term and self.weight == other.weight

    def __hash__(self) -> int:
        return hash((self._term, self.weight))

    def matches(self, pod: Pod) -> bool:
        """Whether ``pod`` is in the term's namespaces and matches its label selector."""
        return self.matches_labels(pod.namespace, pod.labels)

    def matches_labels(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether a pod in ``namespace`` with ``labels`` is selected by the term."""
        term = self._term
        if self._cluster is None:
            return term.matches(namespace, labels)
        selector = term.label_selector
        if selector is None:
            return False
        if namespace not in term.namespaces and not self._selects_namespace(namespace):
            return False
        return selector.matches(labels)

    def _selects_namespace(self, namespace: str) -> bool:
        selected = self._selected.get(namespace)
        if selected is None:
            cluster = self._cluster
            ns_labels = None if cluster is None else cluster.namespace_labels(namespace)
            ns_selector = self._term.namespace_selector
            selected = (
                ns_labels is not None and ns_selector is not None and ns_selector.matches(ns_labels)
            )
            self._selected[namespace] = selected
        return selected

    def pods_per_node(self, table: NodeTable) -> IntArray:
        """Per node of ``table``, how many of its pods the term selects."""
        term = self._term
        namespaces: Iterable[str] | None
        if self._cluster is not None:
            # Resolve the namespaceSelector once per namespace that has pods.
            namespaces = term.namespaces | {
                ns for ns in table_namespaces(table) if self._selects_namespace(ns)
            }
        elif term.namespace_selector is not None:
            namespaces = None  # the empty namespaceSelector: every namespace
        else:
            namespaces = term.namespaces
        return table.pods_matching(term.label_selector, namespaces)


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


#: Which of PreFilterState's three maps (indices into its storage).
_EXISTING, _AFFINITY, _ANTI = 0, 1, 2

#: Either form of one map: the per-node dict, or the table's arrays.
Counts = TopologyCounts | DomainCounts


class PreFilterState:
    """What PreFilter computes for Filter; AddPod/RemovePod update the counts in place.

    Each of the three maps is held as the per-node code's ``(key, value) → count`` dict,
    as ``DomainCounts`` arrays over the node table (the columnar PreFilter), or both. The
    per-node Filter reads either; the vector Filter reads the arrays, building them from
    the dict when AddPod/RemovePod changed it. A dict read through the public attributes
    may be changed by the caller, so reading one drops the arrays of that map.
    """

    __slots__ = (
        "_dicts",
        "_domains",
        "matches_own_affinity",
        "namespace_labels",
        "pod",
        "required_affinity",
        "required_anti_affinity",
    )

    def __init__(
        self,
        existing_anti_affinity_counts: Counts,
        affinity_counts: Counts,
        anti_affinity_counts: Counts,
        pod: Pod,
        required_affinity: tuple[IncomingTerm, ...],
        required_anti_affinity: tuple[IncomingTerm, ...],
        namespace_labels: Mapping[str, str] | None,
        matches_own_affinity: bool,
    ) -> None:
        maps = (existing_anti_affinity_counts, affinity_counts, anti_affinity_counts)
        self._dicts: list[TopologyCounts | None] = [
            None if isinstance(m, DomainCounts) else m for m in maps
        ]
        self._domains: list[DomainCounts | None] = [
            m if isinstance(m, DomainCounts) else None for m in maps
        ]
        self.pod = pod
        self.required_affinity = required_affinity
        self.required_anti_affinity = required_anti_affinity
        #: Labels of the incoming pod's Namespace (None when it has no Namespace object).
        self.namespace_labels = namespace_labels
        #: The incoming pod matches its own required affinity terms (first pod of a group).
        self.matches_own_affinity = matches_own_affinity

    # --- the maps ----------------------------------------------------------------------

    def _dict(self, which: int) -> TopologyCounts:
        counts = self._dicts[which]
        if counts is None:
            domains = self._domains[which]
            assert domains is not None  # one form is always there
            counts = self._dicts[which] = domains.pairs()
        return counts

    def _public(self, which: int) -> TopologyCounts:
        counts = self._dict(which)
        self._domains[which] = None  # the caller may change the dict
        return counts

    @property
    def existing_anti_affinity_counts(self) -> TopologyCounts:
        """Existing pods whose required anti-affinity selects the incoming pod."""
        return self._public(_EXISTING)

    @property
    def affinity_counts(self) -> TopologyCounts:
        """Existing pods matching all of the incoming pod's required affinity terms."""
        return self._public(_AFFINITY)

    @property
    def anti_affinity_counts(self) -> TopologyCounts:
        """Existing pods matching the incoming pod's required anti-affinity terms."""
        return self._public(_ANTI)

    def domains(self, which: int, table: NodeTable) -> DomainCounts:
        """One map as arrays over ``table`` (built from the dict if needed)."""
        domains = self._domains[which]
        if domains is None or domains.table is not table:
            domains = self._domains[which] = DomainCounts.from_pairs(table, self._dict(which))
        return domains

    def count(self, which: int, key: str, value: str) -> int:
        """The count at pair ``(key, value)`` of one map."""
        counts = self._dicts[which]
        if counts is not None:
            return counts.get((key, value), 0)
        domains = self._domains[which]
        assert domains is not None
        return domains.get(key, value)

    def is_empty(self, which: int) -> bool:
        """Whether one map has no pair at all."""
        counts = self._dicts[which]
        if counts is not None:
            return not counts
        domains = self._domains[which]
        assert domains is not None
        return domains.empty

    # --- copies and updates ------------------------------------------------------------

    def clone(self) -> PreFilterState:
        """Copies of the counts; the pod and its terms never change, so they are shared.

        The arrays are never changed in place either, so the copy shares them.
        """
        out = PreFilterState(
            dict(self._dict(_EXISTING)),
            dict(self._dict(_AFFINITY)),
            dict(self._dict(_ANTI)),
            self.pod,
            self.required_affinity,
            self.required_anti_affinity,
            self.namespace_labels,
            self.matches_own_affinity,
        )
        out._domains = list(self._domains)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreFilterState):
            return NotImplemented
        return (
            all(self._dict(i) == other._dict(i) for i in (_EXISTING, _AFFINITY, _ANTI))
            and self.pod == other.pod
            and self.required_affinity == other.required_affinity
            and self.required_anti_affinity == other.required_anti_affinity
            and self.namespace_labels == other.namespace_labels
            and self.matches_own_affinity == other.matches_own_affinity
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def update_with_pod(self, other: Pod, node_labels: Mapping[str, str], sign: int) -> None:
        """Count ``other`` on a node with ``node_labels`` in (sign 1) or out (sign -1)."""
        pod = self.pod
        existing, affinity, anti = (self._dict(i) for i in (_EXISTING, _AFFINITY, _ANTI))
        # The dicts change: their arrays are rebuilt when a vector Filter needs them.
        self._domains = [None, None, None]
        for term in other.required_anti_affinity:
            if term.matches(pod.namespace, pod.labels, self.namespace_labels):
                _add(existing, node_labels, term.topology_key, sign)
        if matches_all(self.required_affinity, other):
            for incoming in self.required_affinity:
                _add(affinity, node_labels, incoming.topology_key, sign)
        for incoming in self.required_anti_affinity:
            if incoming.matches(other):
                _add(anti, node_labels, incoming.topology_key, sign)


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
    if not s.is_empty(_EXISTING):
        # Any of the node's labels may be the topology key of some existing pod's term.
        for key, value in node_labels.items():
            if s.count(_EXISTING, key, value) > 0:
                return False
    return True


def _satisfies_anti_affinity(s: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    if not s.is_empty(_ANTI):
        for term in s.required_anti_affinity:
            value = node_labels.get(term.topology_key)
            if value is not None and s.count(_ANTI, term.topology_key, value) > 0:
                return False
    return True


def _satisfies_affinity(s: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for term in s.required_affinity:
        value = node_labels.get(term.topology_key)
        if value is None:
            # The node must have every topology key, even for the first pod of a group.
            return False
        if s.count(_AFFINITY, term.topology_key, value) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches the terms
    # but the pod matches them itself, so let it start the group rather than pend forever.
    return s.is_empty(_AFFINITY) and s.matches_own_affinity


# The vector Filter's verdict codes index these, in the order the per-node Filter checks.
_FAILED_AFFINITY = 1
_FAILED_ANTI_AFFINITY = 2
_FAILED_EXISTING_ANTI_AFFINITY = 3
_VERDICT_STATUSES = (
    Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
    Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
)


class _RowCodes:
    """Each topology key's label codes at the rows being judged, gathered once."""

    __slots__ = ("_codes", "_table", "rows")

    def __init__(self, table: NodeTable, rows: IntArray) -> None:
        self._table = table
        self.rows = rows
        self._codes: dict[str, npt.NDArray[np.int32] | None] = {}

    def __call__(self, key: str) -> npt.NDArray[np.int32] | None:
        """The codes of label ``key`` at the rows (-1 where unset); None if no node has it."""
        if key in self._codes:
            return self._codes[key]
        column = self._table.labels.get(key)
        codes = None if column is None else column.codes[self.rows]
        self._codes[key] = codes
        return codes


def _hits(domains: DomainCounts, keys: Iterable[str], codes_of: _RowCodes) -> BoolArray | None:
    """Rows whose pair for any of ``keys`` has a positive count (None: no row)."""
    hit: BoolArray | None = None
    for key in keys:
        counts = domains.by_key.get(key)
        codes = codes_of(key)
        if counts is None or codes is None:
            continue
        positive = (counts > 0)[codes]  # the last slot (no label) is never positive
        hit = positive if hit is None else hit | positive
    return hit


class InterPodAffinityFiltering:
    """PreFilter, AddPod/RemovePod and Filter of the InterPodAffinity plugin."""

    _handle: Handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count the matching existing pods per topology pair; Skip when nothing applies.

        ``nodes`` are all the nodes of the snapshot, as upstream passes them. With a node
        table the counts come from its columns (same answers, far fewer Python steps).
        """
        handle = self._handle
        cluster = handle.cluster
        snapshot = handle.snapshot
        # The table counts over every node; a caller passing fewer nodes gets the
        # per-node counting over just those.
        table = snapshot.table
        if table is not None and len(nodes) != table.size:
            table = None
        if (
            table is not None
            and not (pod.required_affinity or pod.required_anti_affinity)
            and not has_required_anti_affinity(table)
        ):
            return None, Status.skip()  # nothing can apply: skip without counting
        affinity = tuple(IncomingTerm(t, cluster) for t in pod.required_affinity)
        anti_affinity = tuple(IncomingTerm(t, cluster) for t in pod.required_anti_affinity)
        namespace_labels = cluster.namespace_labels(pod.namespace)
        existing: Counts
        affinity_counts: Counts
        anti_counts: Counts
        if table is not None:
            counted = required_counts(table, pod, namespace_labels, affinity, anti_affinity)
            existing, affinity_counts, anti_counts = counted
            no_existing = counted[0].empty
        else:
            existing = existing_anti_affinity_counts(
                pod, namespace_labels, snapshot.have_pods_with_required_anti_affinity_list()
            )
            affinity_counts, anti_counts = incoming_affinity_counts(affinity, anti_affinity, nodes)
            no_existing = not existing
        if no_existing and not affinity and not anti_affinity:
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

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows`` at once: the same checks in the same order,
        each a lookup of the rows' topology values in the PreFilter arrays."""
        s = _read_state(state)
        if isinstance(s, Status):
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (s,))
        codes_of = _RowCodes(table, rows)
        # Found from the last check to the first, so that the first failing one wins.
        failed: list[tuple[BoolArray, int]] = []
        if not s.is_empty(_EXISTING):
            existing = s.domains(_EXISTING, table)
            hit = _hits(existing, existing.by_key, codes_of)
            if hit is not None:
                failed.append((hit, _FAILED_EXISTING_ANTI_AFFINITY))
        if s.required_anti_affinity and not s.is_empty(_ANTI):
            keys = [t.topology_key for t in s.required_anti_affinity]
            hit = _hits(s.domains(_ANTI, table), keys, codes_of)
            if hit is not None:
                failed.append((hit, _FAILED_ANTI_AFFINITY))
        if s.required_affinity:
            failed.append((~self._satisfy_affinity(s, table, codes_of), _FAILED_AFFINITY))
        codes: npt.NDArray[np.int8] | None = None
        for mask, code in failed:
            if not mask.any():
                continue
            if codes is None:
                codes = mask.astype(np.int8)
                if code != 1:
                    codes *= code
            else:
                np.copyto(codes, code, where=mask)
        return None if codes is None else NodeVerdicts(codes, _VERDICT_STATUSES)

    @staticmethod
    def _satisfy_affinity(s: PreFilterState, table: NodeTable, codes_of: _RowCodes) -> BoolArray:
        """Which rows have every topology key and, unless the pod may start its group,
        a matching pod in each term's domain."""
        affinity = s.domains(_AFFINITY, table)
        first_of_group = s.is_empty(_AFFINITY) and s.matches_own_affinity
        ok: BoolArray | None = None
        for term in s.required_affinity:
            key = term.topology_key
            codes = codes_of(key)
            counts = affinity.by_key.get(key)
            if codes is None or (counts is None and not first_of_group):
                return np.zeros(len(codes_of.rows), dtype=np.bool_)
            # Without pods the node needs the key only; with them, a pod in its domain
            # (the no-label slot is 0, so that fails too).
            passes = codes >= 0 if first_of_group or counts is None else (counts > 0)[codes]
            ok = passes if ok is None else ok & passes
        assert ok is not None
        return ok
