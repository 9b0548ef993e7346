"""TaintToleration: keep pods off nodes whose taints they do not tolerate, and prefer the
nodes with the fewest untolerated PreferNoSchedule taints.

Mirrors kube-scheduler's ``tainttoleration`` plugin. Filter looks at NoSchedule and
NoExecute taints; the first one the pod does not tolerate rejects the node for good
(preemption does not remove taints). Score counts the PreferNoSchedule taints the pod
does not tolerate, and NormalizeScore reverses the count so that fewer is better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.taints import (
    PREFER_NO_SCHEDULE,
    Toleration,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubesched.plugins import names
from kubesched.plugins.helper import (
    DO_NOT_SCHEDULE_TAINT_EFFECTS,
    as_changed,
    check_no_args,
    default_normalize_score,
    same_pod,
)

NAME = names.TAINT_TOLERATION

#: Filter reason, formatted with the first untolerated taint's key and value.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint {{{key}: {value}}}"

PRE_SCORE_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class _PreScoreState:
    """The pod's tolerations that can match a PreferNoSchedule taint."""

    tolerations: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self  # immutable


def _tolerations_prefer_no_schedule(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    # An empty effect matches every effect, PreferNoSchedule included.
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def _count_intolerable_prefer_no_schedule(node: Node, tolerations: Sequence[Toleration]) -> int:
    count = 0
    for taint in node.taints:
        if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(
            tolerations, taint
        ):
            count += 1
    return count


class TaintToleration:
    """Filters on NoSchedule/NoExecute taints; scores on PreferNoSchedule taints."""

    name = NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when a NoSchedule or NoExecute taint of the node is
        not tolerated; the reason names the first such taint."""
        taint = find_untolerated_taint(
            node_info.node.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS
        )
        if taint is None:
            return None
        return Status.unresolvable(ERR_REASON_UNTOLERATED.format(key=taint.key, value=taint.value))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Keep the tolerations that Score needs."""
        state.write(
            PRE_SCORE_STATE_KEY, _PreScoreState(_tolerations_prefer_no_schedule(pod.tolerations))
        )
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The number of PreferNoSchedule taints of the node the pod does not tolerate."""
        data = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(data, _PreScoreState):
            return 0, Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        return _count_intolerable_prefer_no_schedule(node_info.node, data.tolerations), None

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Reverse the counts into [0, 100]: no untolerated taint scores 100."""
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or its taints changed; the rejected pod gaining tolerations."""
        return (
            # A new node, or a node losing a taint, may be one the pod tolerates. Label
            # changes never matter here (upstream registers them only without hints).
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                is_schedulable_after_node_change,
            ),
            # The rejected pod may be updated with a toleration for the taint.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                is_schedulable_after_pod_change,
            ),
        )


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the node went from having an untolerated taint (or not existing) to
    having none."""
    original, modified = as_changed(Node, old, new)
    was_untolerated = original is None or (
        find_untolerated_taint(original.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS)
        is not None
    )
    is_untolerated = (
        find_untolerated_taint(modified.taints, pod.tolerations, DO_NOT_SCHEDULE_TAINT_EFFECTS)
        is not None
    )
    if was_untolerated and not is_untolerated:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the pod whose tolerations changed is ``pod`` itself."""
    _, modified = as_changed(Pod, old, new)
    return QueueingHint.QUEUE if same_pod(modified, pod) else QueueingHint.QUEUE_SKIP


_filter: type[FilterPlugin] = TaintToleration
_pre_score: type[PreScorePlugin] = TaintToleration
_score: type[ScorePlugin] = TaintToleration
_enqueue_extensions: type[EnqueueExtensions] = TaintToleration


def new(args: Mapping[str, Any] | None, handle: Handle) -> TaintToleration:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return TaintToleration()
