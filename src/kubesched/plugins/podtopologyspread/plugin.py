"""PodTopologySpread: spread pods evenly over topology domains (zones, nodes, ...).

Filter rejects a node when placing the pod there would make a DoNotSchedule
constraint's skew exceed its maxSkew; Score prefers the nodes whose domains hold the
fewest pods selected by the ScheduleAnyway constraints. Pods without constraints are
spread by the default constraints built from the workloads that select them. Mirrors
kube-scheduler's ``pkg/scheduler/framework/plugins/podtopologyspread`` (release 1.34).
When the snapshot has a node table, PreFilter and PreScore count with arrays and Filter,
Score and NormalizeScore also judge all nodes at once (``filter_nodes``,
``score_nodes``, ``normalize_scores``), with the per-node answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore, PodInfo
from kubesched.framework.vector import (
    NodeVerdicts,
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from kubesched.objects.affinity import (
    DO_NOT_SCHEDULE,
    POLICY_HONOR,
    POLICY_IGNORE,
    SCHEDULE_ANYWAY,
    TopologySpreadConstraint,
)
from kubesched.objects.node import LABEL_HOSTNAME, LABEL_ZONE, Node
from kubesched.objects.pod import Pod
from kubesched.objects.selectors import qualified_name_errors
from kubesched.plugins.podtopologyspread.common import (
    NAME,
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
    Constraint,
    build_constraints,
    build_default_constraints,
    node_has_topology_keys,
)
from kubesched.plugins.podtopologyspread.filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    compute_pre_filter_state,
    compute_pre_filter_state_from_table,
    filter_node,
    filter_rows,
    filter_statuses,
    update_with_pod,
)
from kubesched.plugins.podtopologyspread.scoring import (
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    compute_pre_score_state,
    compute_pre_score_state_from_table,
    normalize_rows,
    normalize_scores,
    score_node,
    score_rows,
)

__all__ = [
    "LIST_DEFAULTING",
    "NAME",
    "REASON_CONSTRAINTS_NOT_MATCH",
    "REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraint",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
]

#: defaultingType: use the built-in constraints below.
SYSTEM_DEFAULTING = "System"
#: defaultingType: use ``defaultConstraints`` as given (possibly none).
LIST_DEFAULTING = "List"
_DEFAULTING_TYPES = (SYSTEM_DEFAULTING, LIST_DEFAULTING)
_WHEN_UNSATISFIABLE = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)  # sorted, as upstream lists them
_FILTER_STATUSES = filter_statuses()

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DefaultConstraint:
    """One entry of ``defaultConstraints``: a v1.TopologySpreadConstraint as written.

    ``label_selector`` is kept raw only to be rejected: a default constraint's selector
    is deduced for each pod.
    """

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: object = None
    min_domains: int | None = None
    node_affinity_policy: str = POLICY_HONOR
    node_taints_policy: str = POLICY_IGNORE
    match_label_keys: tuple[str, ...] = ()

    def as_constraint(self) -> TopologySpreadConstraint:
        """The entry as a pod's constraint, without a selector."""
        return TopologySpreadConstraint(
            max_skew=self.max_skew,
            topology_key=self.topology_key,
            when_unsatisfiable=self.when_unsatisfiable,
            label_selector=None,
            min_domains=self.min_domains,
            node_affinity_policy=self.node_affinity_policy,
            node_taints_policy=self.node_taints_policy,
            match_label_keys=self.match_label_keys,
        )


#: Upstream's system defaults: spread each workload over nodes and zones, softly.
SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    DefaultConstraint(max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)

_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """``PodTopologySpreadArgs`` (kubescheduler.config.k8s.io/v1), defaults applied."""

    default_constraints: tuple[DefaultConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[PodTopologySpreadArgs, list[FieldError]]:
        """Decode the args as written in a configuration, with the decoding errors."""
        reader = ArgsReader(args, known=("defaultConstraints", "defaultingType"))
        # v1 defaulting: an unset (or empty) defaultingType means System.
        defaulting_type = reader.get("defaultingType", str, "") or SYSTEM_DEFAULTING
        raw = reader.get("defaultConstraints", list, [])
        errors = reader.errors
        constraints = tuple(
            _decode_constraint(item, f"defaultConstraints[{i}]", errors)
            for i, item in enumerate(raw)
        )
        return cls(constraints, defaulting_type), errors

    def validate(self) -> list[FieldError]:
        """Every problem, as upstream's ``ValidatePodTopologySpreadArgs`` reports them."""
        errors: list[FieldError] = []
        if self.defaulting_type not in _DEFAULTING_TYPES:
            errors.append(
                FieldError.not_supported("defaultingType", self.defaulting_type, _DEFAULTING_TYPES)
            )
        elif self.defaulting_type == SYSTEM_DEFAULTING and self.default_constraints:
            errors.append(
                FieldError.invalid(
                    "defaultingType", self.defaulting_type, "when .defaultConstraints are not empty"
                )
            )
        for i, c in enumerate(self.default_constraints):
            path = f"defaultConstraints[{i}]"
            if c.max_skew <= 0:
                # Worded as the contract (and the API server's pod validation);
                # 1.34's args validation says "not in valid range (0, inf)".
                errors.append(
                    FieldError.invalid(f"{path}.maxSkew", c.max_skew, "must be greater than zero")
                )
            key_path = f"{path}.topologyKey"
            if not c.topology_key:
                errors.append(FieldError.required(key_path, "can not be empty"))
            else:
                errors.extend(
                    FieldError.invalid(key_path, c.topology_key, message)
                    for message in qualified_name_errors(c.topology_key)
                )
            when_path = f"{path}.whenUnsatisfiable"
            if not c.when_unsatisfiable:
                errors.append(FieldError.required(when_path, "can not be empty"))
            elif c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
                errors.append(
                    FieldError.not_supported(when_path, c.when_unsatisfiable, _WHEN_UNSATISFIABLE)
                )
            if c.label_selector is not None:
                errors.append(
                    FieldError.forbidden(
                        f"{path}.labelSelector",
                        "constraint must not define a selector, as they deduced for each pod",
                    )
                )
            for earlier in self.default_constraints[:i]:
                if (earlier.topology_key, earlier.when_unsatisfiable) == (
                    c.topology_key,
                    c.when_unsatisfiable,
                ):
                    errors.append(
                        FieldError.duplicate(path, f"{{{c.topology_key}, {c.when_unsatisfiable}}}")
                    )
                    break
        return errors

    def effective_constraints(self) -> tuple[DefaultConstraint, ...]:
        """The default constraints in force: the system ones or the given list."""
        if self.defaulting_type == SYSTEM_DEFAULTING:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints


def _decode_constraint(item: object, path: str, errors: list[FieldError]) -> DefaultConstraint:
    if not isinstance(item, Mapping):
        errors.append(FieldError.invalid(path, item, "must be an object"))
        return DefaultConstraint()
    for key in item:
        if key not in _CONSTRAINT_FIELDS:
            errors.append(FieldError.invalid(f"{path}.{key}", key, "unknown field"))

    def get(key: str, kind: type, default: Any) -> Any:
        value = item.get(key)
        if value is None:
            return default
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            errors.append(FieldError.invalid(f"{path}.{key}", value, f"must be {kind.__name__}"))
            return default
        return value

    keys = get("matchLabelKeys", list, [])
    for j, key in enumerate(keys):
        if not isinstance(key, str):
            errors.append(FieldError.invalid(f"{path}.matchLabelKeys[{j}]", key, "must be str"))
    return DefaultConstraint(
        max_skew=get("maxSkew", int, 0),
        topology_key=get("topologyKey", str, ""),
        when_unsatisfiable=get("whenUnsatisfiable", str, ""),
        label_selector=item.get("labelSelector"),
        min_domains=get("minDomains", int, None),
        node_affinity_policy=get("nodeAffinityPolicy", str, "") or POLICY_HONOR,
        node_taints_policy=get("nodeTaintsPolicy", str, "") or POLICY_IGNORE,
        match_label_keys=tuple(k for k in keys if isinstance(k, str)),
    )


class PodTopologySpread:
    """The PodTopologySpread plugin: PreFilter/Filter for DoNotSchedule constraints,
    PreScore/Score/NormalizeScore for ScheduleAnyway ones."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self._handle = handle
        self._defaults = tuple(c.as_constraint() for c in args.effective_constraints())
        self._system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING

    def _constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's own constraints for ``action``, or else the default ones."""
        if pod.topology_spread_constraints:
            return build_constraints(pod.topology_spread_constraints, pod.labels, action)
        if not self._defaults:
            return []
        workloads = self._handle.cluster.workloads(pod.namespace)
        return build_default_constraints(self._defaults, pod, workloads, action)

    # --- PreFilter / Filter -----------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Count the pods of each DoNotSchedule constraint per domain; Skip without any."""
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, Status.skip()
        # Spreading counts pods on every node, not only those the framework will filter.
        snapshot = self._handle.snapshot
        table = snapshot.table
        if table is not None:
            s = compute_pre_filter_state_from_table(pod, constraints, table)
        else:
            s = compute_pre_filter_state(pod, constraints, snapshot.list())
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def pre_filter_extensions(self) -> PodTopologySpread:
        """AddPod/RemovePod keep the counts right while preemption tries victims."""
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Count ``pod_to_add`` on ``node_info`` (a nominated pod, in preemption)."""
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        update_with_pod(s, pod_to_add.pod, pod, node_info, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Stop counting ``pod_to_remove`` on ``node_info`` (a preemption victim)."""
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        update_with_pod(s, pod_to_remove.pod, pod, node_info, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Unschedulable when the node would break a constraint's maxSkew;
        UnschedulableAndUnresolvable when it lacks a topology key."""
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return s
        if not s.constraints:
            return None
        return filter_node(s, node_info)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> NodeVerdicts | None:
        """``filter`` for the nodes at ``rows``, each constraint checked over all of them
        at once."""
        s = _pre_filter_state(state)
        if isinstance(s, Status):
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (s,))
        if not s.constraints:
            return None
        codes = filter_rows(s, table, rows)
        if codes is None:
            return None
        return NodeVerdicts(codes, _FILTER_STATUSES)

    # --- PreScore / Score ---------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Count the pods of each ScheduleAnyway constraint per feasible domain; Skip
        without any."""
        all_nodes = self._handle.snapshot.list()
        if not all_nodes:
            return Status.skip()
        constraints = self._constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.skip()
        # Only the system defaults tolerate nodes missing a topology key, so that nodes
        # without a zone label still get hostname spreading.
        require_all = bool(pod.topology_spread_constraints) or not self._system_defaulted
        table = self._handle.snapshot.table
        rows = getattr(nodes, "rows", None)
        if table is not None and isinstance(rows, np.ndarray):
            # The columnar path hands PreScore a NodeInfoView: its rows are the nodes.
            s = compute_pre_score_state_from_table(pod, constraints, rows, table, require_all)
        else:
            s = compute_pre_score_state(pod, constraints, nodes, all_nodes, require_all)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The weighted number of matching pods in the node's domains (lower is better)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _missing_state(PRE_SCORE_STATE_KEY)
        return score_node(s, pod, node_info), None

    def score_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        """``score`` for the nodes at ``rows``.

        Raises KeyError when PreScore did not run (the per-node ``score`` returns an
        Error status then; the vector protocol has no status to return).
        """
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            raise KeyError(_missing_state(PRE_SCORE_STATE_KEY).message)
        return score_rows(s, pod, table, rows)

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Invert the raw scores into [0, 100]: the emptiest domains score highest."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _missing_state(PRE_SCORE_STATE_KEY)
        normalize_scores(s, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: Pod, scores: IntArray) -> IntArray:
        """``normalize_score`` over the scores ``score_nodes`` just gave, in its rows'
        order."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            raise KeyError(_missing_state(PRE_SCORE_STATE_KEY).message)
        return normalize_rows(s, scores)

    # --- requeueing ---------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """The pod and node changes that may let a pod this plugin rejected fit."""
        return [
            # An assigned pod added, relabeled or deleted changes the counts; the pod's
            # own new toleration can admit tainted nodes under nodeTaintsPolicy Honor.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.ADD
                    | ActionType.UPDATE_POD_LABEL
                    | ActionType.UPDATE_POD_TOLERATION
                    | ActionType.DELETE,
                ),
                self.is_schedulable_after_pod_change,
            ),
            # A node added, deleted, relabeled or retainted changes the domains and which
            # nodes count.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when an assigned pod of the namespace starts or stops counting for one of
        the pod's constraints, or the pod itself gains tolerations that Honor can use."""
        old_pod = _as(old, Pod)
        new_pod = _as(new, Pod)
        for changed in (old_pod, new_pod):
            if changed is not None and not _involved(changed, pod):
                return QueueingHint.QUEUE_SKIP
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        if old_pod is not None and new_pod is not None:
            if (
                _same_pod(new_pod, pod)
                and new_pod.tolerations != old_pod.tolerations
                and any(c.node_taints_policy == POLICY_HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            if dict(new_pod.labels) == dict(old_pod.labels):
                return QueueingHint.QUEUE_SKIP
            for c in constraints:
                if c.matches(old_pod.labels) != c.matches(new_pod.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        changed_pod = new_pod if new_pod is not None else old_pod
        if changed_pod is not None and any(c.matches(changed_pod.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when a node holding every topology key appears, goes, or changes a
        topology value or its taints, or when a node gains or loses a topology key."""
        old_node = _as(old, Node)
        new_node = _as(new, Node)
        constraints = self._constraints(pod, DO_NOT_SCHEDULE)
        old_ok = old_node is not None and node_has_topology_keys(old_node.labels, constraints)
        new_ok = new_node is not None and node_has_topology_keys(new_node.labels, constraints)
        if old_node is not None and new_node is not None:
            if old_ok != new_ok:
                return QueueingHint.QUEUE
            if new_ok and (
                any(
                    old_node.labels.get(c.topology_key) != new_node.labels.get(c.topology_key)
                    for c in constraints
                )
                or old_node.taints != new_node.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP
        if new_node is not None:
            return QueueingHint.QUEUE if new_ok else QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE if old_ok else QueueingHint.QUEUE_SKIP


def _implements(
    plugin: PodTopologySpread,
) -> tuple[
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    EnqueueExtensions,
    VectorFilterPlugin,
    VectorScorePlugin,
    VectorScoreExtensions,
]:
    """Never called: lets the type checker verify the extension points implemented."""
    return plugin, plugin, plugin, plugin, plugin, plugin, plugin, plugin


def _pre_filter_state(state: CycleState) -> PreFilterState | Status:
    s = state.get(PRE_FILTER_STATE_KEY)
    if not isinstance(s, PreFilterState):
        return _missing_state(PRE_FILTER_STATE_KEY)
    return s


def _missing_state(key: str) -> Status:
    # Reading state that PreFilter/PreScore did not write is a bug in the caller.
    return Status.error(f'reading "{key}" from cycleState: not found')


_T = TypeVar("_T")


def _as(obj: object, kind: type[_T]) -> _T | None:
    if obj is None:
        return None
    if not isinstance(obj, kind):
        # The hint caller queues the pod when a hint raises.
        raise TypeError(f"expected {kind.__name__}, got {type(obj).__name__}")
    return obj


def _same_pod(a: Pod, b: Pod) -> bool:
    # Pods read from files may have no uid; their namespace/name identifies them then.
    if a.uid and b.uid:
        return a.uid == b.uid
    return a.key == b.key


def _involved(incoming: Pod, pod: Pod) -> bool:
    """Whether ``incoming`` can change ``pod``'s spreading: it is the pod itself, or an
    assigned pod of its namespace."""
    return _same_pod(incoming, pod) or (
        bool(incoming.node_name) and incoming.namespace == pod.namespace
    )


def new(args: Mapping[str, Any] | None, handle: Handle) -> PodTopologySpread:
    """Build the plugin from its configuration args; raises ArgsError listing every
    problem."""
    parsed, errors = PodTopologySpreadArgs.from_mapping(args)
    # As upstream, args that cannot be decoded are not validated further: the defaults
    # standing in for bad values would only add misleading errors.
    errors = errors or parsed.validate()
    if errors:
        raise ArgsError(errors)
    return PodTopologySpread(parsed, handle)
