"""NodeAffinity: place pods by node labels, through ``spec.nodeSelector`` and node affinity.

Mirrors kube-scheduler's ``nodeaffinity`` plugin. Filter requires the node to match the
pod's ``nodeSelector`` and its required node affinity (any term), and the
scheduler-enforced ``addedAffinity`` of the plugin's args when set. PreFilter narrows the
nodes to those named by ``matchFields`` on ``metadata.name`` when every term names some.
Score sums the weights of the preferred terms (the pod's and the added ones) that the
node matches; NormalizeScore scales the sums to [0, 100].

The columnar forms (``filter_nodes``, ``score_nodes``, ``normalize_scores``) match the
selectors against the node table's label columns. Labels only change with nodes, and a
node change builds a new table, so each distinct selector is matched once per table and
the result reused for every pod that carries an equal one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.columns import (
    NodeTable,
    match_labels_mask,
    node_selector_mask,
    term_mask,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.framework.vector import (
    NodeVerdicts,
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.selectors import (
    IN,
    NODE_NAME_FIELD,
    NodeSelector,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from kubesched.plugins import names
from kubesched.plugins.helper import (
    as_changed,
    default_normalize_score,
    default_normalize_scores,
    field_error_from_object_error,
    join_path,
)

NAME = names.NODE_AFFINITY

#: The pod's nodeSelector or required node affinity does not match the node.
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: The args' addedAffinity does not match the node.
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: PreFilter: every required term names nodes by metadata.name, and none is left.
ERR_REASON_CONFLICT = "pod affinity terms conflict"

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

IntArray = npt.NDArray[np.int64]

#: Filter verdict codes of the columnar form (indexes into ``_VERDICT_STATUSES`` + 1).
_CODE_ENFORCED: Final = 1
_CODE_POD: Final = 2
_VERDICT_STATUSES: Final = (
    Status.unresolvable(ERR_REASON_ENFORCED),
    Status.unresolvable(ERR_REASON_POD),
)
#: Distinct selectors remembered per table; past it the memo starts afresh (pods of a
#: workload share their affinity, so a handful is the common case).
_MEMO_LIMIT: Final = 256
#: At most this many rows, the selectors are matched node by node, not over the table:
#: a daemon pod pinned to its own node (PreFilterResult) must not cost a pass over every
#: node, and would not share its selector with the next pod anyway.
_FEW_ROWS: Final = 8

_ADDED_AFFINITY: Final = "addedAffinity"
_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


# --- args ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """The plugin's arguments (upstream ``NodeAffinityArgs``): ``addedAffinity``, a node
    affinity applied to every pod of the profile on top of the pod's own.

    ``added_required`` is its required node selector (None: not set; a selector without
    terms matches no node). ``added_preferred`` are its preferred terms, scored with the
    pod's. Terms of weight 0 and empty preferences are dropped, as upstream does.
    """

    added_required: NodeSelector | None = None
    added_preferred: tuple[PreferredSchedulingTerm, ...] = ()


def decode_args(raw: Mapping[str, Any] | None) -> tuple[NodeAffinityArgs, list[FieldError]]:
    """The args written in a profile's ``pluginConfig``, and every problem found in them.

    Paths are relative to the args (``addedAffinity.requiredDuringScheduling…``).
    """
    errors: list[FieldError] = []
    raw = raw or {}
    _check_fields(raw, "", (_ADDED_AFFINITY, "kind", "apiVersion"), errors)
    added = raw.get(_ADDED_AFFINITY)
    if added is None:
        return NodeAffinityArgs(), errors
    if not isinstance(added, Mapping):
        errors.append(FieldError.invalid(_ADDED_AFFINITY, added, "must be an object"))
        return NodeAffinityArgs(), errors
    _check_fields(added, _ADDED_AFFINITY, (_REQUIRED, _PREFERRED), errors)
    required = None
    if added.get(_REQUIRED) is not None:
        required = _decode_node_selector(
            added[_REQUIRED], join_path(_ADDED_AFFINITY, _REQUIRED), errors
        )
    preferred = _decode_preferred_terms(
        added.get(_PREFERRED), join_path(_ADDED_AFFINITY, _PREFERRED), errors
    )
    return NodeAffinityArgs(required, preferred), errors


def _check_fields(
    obj: Mapping[str, Any], path: str, known: Sequence[str], errors: list[FieldError]
) -> None:
    for key in obj:
        if key not in known:
            errors.append(FieldError.invalid(join_path(path, str(key)), key, "unknown field"))


def _decode_term(raw: object, path: str, errors: list[FieldError]) -> NodeSelectorTerm | None:
    try:
        return NodeSelectorTerm.from_dict(raw)
    except ObjectError as err:
        errors.append(field_error_from_object_error(err, path))
        return None


def _decode_node_selector(raw: object, path: str, errors: list[FieldError]) -> NodeSelector:
    # Terms are decoded one by one so that a problem in each is reported, and an empty
    # list is accepted: upstream builds a selector that matches no node from it.
    if not isinstance(raw, Mapping):
        errors.append(FieldError.invalid(path, raw, "must be an object"))
        return NodeSelector()
    _check_fields(raw, path, ("nodeSelectorTerms",), errors)
    items = raw.get("nodeSelectorTerms") or []
    if not isinstance(items, list):
        errors.append(
            FieldError.invalid(join_path(path, "nodeSelectorTerms"), items, "must be a list")
        )
        return NodeSelector()
    terms = []
    for i, item in enumerate(items):
        term = _decode_term(item, join_path(path, "nodeSelectorTerms", i), errors)
        if term is not None:
            terms.append(term)
    return NodeSelector(tuple(terms))


def _decode_preferred_terms(
    raw: object, path: str, errors: list[FieldError]
) -> tuple[PreferredSchedulingTerm, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        errors.append(FieldError.invalid(path, raw, "must be a list"))
        return ()
    out = []
    for i, item in enumerate(raw):
        item_path = join_path(path, i)
        if not isinstance(item, Mapping):
            errors.append(FieldError.invalid(item_path, item, "must be an object"))
            continue
        _check_fields(item, item_path, ("weight", "preference"), errors)
        weight = item.get("weight")
        if weight is None:
            weight = 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            errors.append(
                FieldError.invalid(join_path(item_path, "weight"), weight, "must be an integer")
            )
            continue
        # Upstream reports problems of a preference at "<term>[i].matchFields…", leaving
        # out "preference"; the full path is kept here, as it points at the right line.
        preference = item.get("preference")
        term = _decode_term(
            {} if preference is None else preference, join_path(item_path, "preference"), errors
        )
        if term is None or weight == 0 or not (term.match_expressions or term.match_fields):
            continue  # upstream ignores zero weights and empty terms
        out.append(PreferredSchedulingTerm(weight, term))
    return tuple(out)


# --- matching -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity (upstream RequiredNodeAffinity)."""

    node_selector: tuple[tuple[str, str], ...]
    affinity: NodeSelector | None

    @classmethod
    def of(cls, pod: Pod) -> _RequiredNodeAffinity:
        return cls(tuple(pod.node_selector.items()), pod.required_node_affinity)

    def matches(self, node: Node) -> bool:
        labels = node.labels
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        return self.affinity is None or self.affinity.matches(node.name, labels)

    def clone(self) -> _RequiredNodeAffinity:
        return self  # other pods coming and going do not change it


def _preferred_score(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    total = 0
    for term in terms:
        if term.term.matches(node.name, node.labels):
            total += term.weight
    return total


def _node_names_of(affinity: NodeSelector) -> set[str] | None:
    """The node names the required terms allow by ``metadata.name In``, or None when
    some term does not restrict names (the terms are ORed)."""
    names_: set[str] = set()
    for term in affinity.terms:
        term_names: set[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == NODE_NAME_FIELD and requirement.operator == IN:
                # Requirements of a term are ANDed: intersect.
                values = set(requirement.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        names_ |= term_names
    return names_


class _TableMemo:
    """Per node table: the Filter codes of each distinct required affinity and the raw
    scores of each distinct set of preferred terms, over every row of the table."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.codes: dict[_RequiredNodeAffinity, npt.NDArray[np.int8] | None] = {}
        self.scores: dict[tuple[PreferredSchedulingTerm, ...], IntArray] = {}


def _preferred_scores(table: NodeTable, terms: Sequence[PreferredSchedulingTerm]) -> IntArray:
    """Per row, the sum of the weights of the ``terms`` the node matches."""
    total = np.zeros(table.size, dtype=np.int64)
    for term in terms:
        total += np.where(term_mask(table, term.term), np.int64(term.weight), np.int64(0))
    return total


# --- plugin -------------------------------------------------------------------------------


class NodeAffinity:
    """Filters and scores nodes by the pod's node affinity and the enforced one."""

    name = NAME

    def __init__(self, args: NodeAffinityArgs, handle: Handle | None = None) -> None:
        self.args = args
        self._handle = handle
        self._added_required = args.added_required
        self._added_preferred = args.added_preferred
        # The memo of the last table seen: the scheduler works on one table at a time.
        self._memo: _TableMemo | None = None

    def _table_memo(self, table: NodeTable) -> _TableMemo:
        memo = self._memo
        if memo is None or memo.table is not table:
            memo = self._memo = _TableMemo(table)
        return memo

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip when nothing constrains the pod's node; narrow the nodes to the names of
        ``metadata.name`` fields; UnschedulableAndUnresolvable when those conflict."""
        affinity = pod.required_node_affinity
        if affinity is None and self._added_required is None and not pod.node_selector:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, _RequiredNodeAffinity.of(pod))
        if affinity is None or not affinity.terms:
            return None, None
        node_names = _node_names_of(affinity)
        if node_names is None:
            return None, None
        if not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(frozenset(node_names)), None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: the state does not depend on the other pods."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when the node misses the enforced affinity, or the
        pod's nodeSelector / required node affinity."""
        node = node_info.node
        added = self._added_required
        if added is not None and not added.matches(node.name, node.labels):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        required = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(required, _RequiredNodeAffinity):
            # PreFilter is disabled in this profile: work it out here.
            required = _RequiredNodeAffinity.of(pod)
        if not required.matches(node):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows``: the enforced affinity is checked first,
        then the pod's nodeSelector and required node affinity."""
        required = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(required, _RequiredNodeAffinity):
            required = _RequiredNodeAffinity.of(pod)
        if (
            self._added_required is None
            and not required.node_selector
            and required.affinity is None
        ):
            return None
        if len(rows) <= _FEW_ROWS:
            few = self._few_rows_codes(table, rows, required)
            if few is not None:
                return few
        memo = self._table_memo(table)
        if required in memo.codes:
            codes = memo.codes[required]
        else:
            if len(memo.codes) >= _MEMO_LIMIT:
                memo.codes.clear()
            codes = memo.codes[required] = self._filter_codes(table, required)
        if codes is None:
            return None
        return NodeVerdicts(codes[rows], _VERDICT_STATUSES)

    def _few_rows_codes(
        self, table: NodeTable, rows: IntArray, required: _RequiredNodeAffinity
    ) -> NodeVerdicts | None:
        """``filter`` node by node over a few ``rows``; None when the handle's snapshot
        is not the one ``table`` was built from (its rows are not those node infos)."""
        snapshot = self._handle.snapshot if self._handle is not None else None
        if snapshot is None or snapshot.table is not table:
            return None
        infos = snapshot.list()
        added = self._added_required
        codes = np.zeros(len(rows), dtype=np.int8)
        for i, row in enumerate(rows.tolist()):
            node = infos[row].node
            if added is not None and not added.matches(node.name, node.labels):
                codes[i] = _CODE_ENFORCED
            elif not required.matches(node):
                codes[i] = _CODE_POD
        return NodeVerdicts(codes, _VERDICT_STATUSES)

    def _filter_codes(
        self, table: NodeTable, required: _RequiredNodeAffinity
    ) -> npt.NDArray[np.int8] | None:
        """Per row of the table, 0 (passes), _CODE_ENFORCED or _CODE_POD; None: all pass."""
        matches = np.ones(table.size, dtype=np.bool_)
        if required.node_selector:
            matches &= match_labels_mask(table, dict(required.node_selector))
        if required.affinity is not None:
            matches &= node_selector_mask(table, required.affinity)
        codes = np.where(matches, np.int8(0), np.int8(_CODE_POD))
        if self._added_required is not None:
            # The enforced affinity is checked first: its reason wins.
            enforced = node_selector_mask(table, self._added_required)
            codes[~enforced] = _CODE_ENFORCED
        return codes if codes.any() else None

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip when neither the pod nor the args have preferred terms.

        Nothing is stored: the pod's preferred terms were parsed when it was decoded.
        """
        if not pod.preferred_node_affinity and not self._added_preferred:
            return Status.skip()
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The sum of the weights of the preferred terms the node matches."""
        node = node_info.node
        total = 0
        if self._added_preferred:
            total += _preferred_score(self._added_preferred, node)
        if pod.preferred_node_affinity:
            total += _preferred_score(pod.preferred_node_affinity, node)
        return total, None

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows``."""
        preferred = pod.preferred_node_affinity
        if not preferred and not self._added_preferred:
            return np.zeros(len(rows), dtype=np.int64)
        memo = self._table_memo(table)
        scores = memo.scores.get(preferred)
        if scores is None:
            if len(memo.scores) >= _MEMO_LIMIT:
                memo.scores.clear()
            scores = memo.scores[preferred] = _preferred_scores(
                table, (*self._added_preferred, *preferred)
            )
        return scores[rows]

    def score_extensions(self) -> NodeAffinity:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Scale the sums to [0, 100], the highest sum scoring 100."""
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_scores(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """``normalize_score`` over an array of sums."""
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or its labels changed."""
        return (
            # Only a node's labels (and name, for a new node) decide whether it matches.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when a node that matches (the enforced and the pod's required affinity)
        is added, or an update makes a node match that did not."""
        original, modified = as_changed(Node, old, new)
        added = self._added_required
        if added is not None and not added.matches(modified.name, modified.labels):
            return QueueingHint.QUEUE_SKIP
        required = _RequiredNodeAffinity.of(pod)
        if not required.matches(modified):
            return QueueingHint.QUEUE_SKIP
        if original is None:
            return QueueingHint.QUEUE
        # An update: only a node that did not match before is news to the pod.
        if required.matches(original):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


_pre_filter: type[PreFilterPlugin] = NodeAffinity
_filter: type[FilterPlugin] = NodeAffinity
_pre_score: type[PreScorePlugin] = NodeAffinity
_score: type[ScorePlugin] = NodeAffinity
_enqueue_extensions: type[EnqueueExtensions] = NodeAffinity
_vector_filter: type[VectorFilterPlugin] = NodeAffinity
_vector_score: type[VectorScorePlugin] = NodeAffinity
_vector_score_extensions: type[VectorScoreExtensions] = NodeAffinity


def new(args: Mapping[str, Any] | None, handle: Handle) -> NodeAffinity:
    """Build the plugin from its ``pluginConfig`` args; ArgsError lists every problem."""
    decoded, errors = decode_args(args)
    if errors:
        raise ArgsError(errors)
    return NodeAffinity(decoded, handle)
