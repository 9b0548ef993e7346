"""DefaultPreemption: when no node fits a pod, evict lower-priority pods to make room.

Mirrors upstream's ``pkg/scheduler/framework/plugins/defaultpreemption``. It is the
PostFilter plugin of the default profile: it decides whether the pod may preempt at all,
how many candidate nodes to dry-run (``minCandidateNodesPercentage`` /
``minCandidateNodesAbsolute``) and which pods of a node are victims; the evaluator
(``evaluator.py``) does the search, the choice and the evictions.

Preemption here is synchronous (see ``evaluator.py``), so the plugin has no PreEnqueue
gate and registers no cluster events: upstream only has them for async preemption.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderAwarePostFilter, Extenders
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    Code,
    PostFilterPlugin,
    PostFilterResult,
    PreemptionPlan,
    PreemptionPlanner,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeToStatus, PodInfo
from kubesched.objects.pod import PREEMPT_NEVER, Pod
from kubesched.objects.policy import PodDisruptionBudget
from kubesched.plugins import names
from kubesched.plugins.defaultpreemption.evaluator import (
    Candidate,
    Evaluator,
    PreemptionInterface,
    select_victims_on_node,
)

__all__ = [
    "ERR_REASON_PREEMPTION_NEVER",
    "ERR_REASON_TERMINATING_POD",
    "MESSAGE_PREFIX",
    "NAME",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "new",
]

NAME: Final = names.DEFAULT_PREEMPTION

ERR_REASON_PREEMPTION_NEVER: Final = "not eligible due to preemptionPolicy=Never."
ERR_REASON_TERMINATING_POD: Final = "not eligible due to a terminating pod on the nominated node."
#: Every message of this plugin starts so, as FailedScheduling events show it after the
#: filters' summary.
MESSAGE_PREFIX: Final = "preemption: "

_PERCENTAGE: Final = "minCandidateNodesPercentage"
_ABSOLUTE: Final = "minCandidateNodesAbsolute"


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """How many candidate nodes the dry run looks for (upstream ``DefaultPreemptionArgs``).

    The number is ``max(nodes * percentage / 100, absolute)``, capped at the number of
    nodes where preemption might help. Larger numbers find better victims but cost more.
    """

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[DefaultPreemptionArgs, list[FieldError]]:
        """Decode the wire form; unset fields take the defaults. Returns the args and the
        decoding errors (unknown fields, wrong types)."""
        reader = ArgsReader(args, known=(_PERCENTAGE, _ABSOLUTE))
        defaults = cls()
        decoded = cls(
            min_candidate_nodes_percentage=reader.get(
                _PERCENTAGE, int, defaults.min_candidate_nodes_percentage
            ),
            min_candidate_nodes_absolute=reader.get(
                _ABSOLUTE, int, defaults.min_candidate_nodes_absolute
            ),
        )
        return decoded, reader.errors

    def validate(self) -> list[FieldError]:
        """Every problem, as upstream's ``ValidateDefaultPreemptionArgs`` reports it."""
        errors: list[FieldError] = []
        percentage = self.min_candidate_nodes_percentage
        absolute = self.min_candidate_nodes_absolute
        if not 0 <= percentage <= 100:
            errors.append(
                FieldError.invalid(_PERCENTAGE, percentage, "not in valid range [0, 100]")
            )
        if absolute < 0:
            errors.append(FieldError.invalid(_ABSOLUTE, absolute, "not in valid range [0, inf)"))
        if percentage == 0 and absolute == 0:
            errors.append(
                FieldError.invalid(
                    _PERCENTAGE, percentage, f"cannot be zero at the same time as {_ABSOLUTE}"
                )
            )
            errors.append(
                FieldError.invalid(
                    _ABSOLUTE, absolute, f"cannot be zero at the same time as {_PERCENTAGE}"
                )
            )
        return errors


class DefaultPreemption:
    """The PostFilter plugin; also the evaluator's ``PreemptionInterface``."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, self)

    def post_filter(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Preempt for ``pod`` (see ``Evaluator.preempt``); any message gets the
        ``preemption: `` prefix."""
        result, status = self.evaluator.preempt(state, pod, node_to_status)
        return result, _prefixed(status)

    def plan_preemption(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PreemptionPlan | None, Status | None]:
        """The candidate ``post_filter`` would choose, evicting no one (a gang's dry run)."""
        best, status = self.evaluator.plan(state, pod, node_to_status)
        if best is None:
            return None, _prefixed(status)
        return PreemptionPlan(best.node_name, best.victims), None

    def execute_preemption(self, pod: Pod, plan: PreemptionPlan) -> Status | None:
        """Evict ``plan``'s victims for ``pod``, as ``post_filter`` would have."""
        candidate = Candidate(plan.node_name, plan.victims)
        return _prefixed(self.evaluator.prepare_candidate(candidate, pod))

    async def post_filter_with_extenders(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus, extenders: Extenders
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``post_filter`` with the extenders' preempt verbs consulted on the candidates
        (the framework calls this when the scheduler has extenders)."""
        result, status = await self.evaluator.preempt_with_extenders(
            state, pod, node_to_status, extenders
        )
        return result, _prefixed(status)

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """How many candidates the dry run must find among ``num_nodes`` nodes."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random node to start the dry run from, so that successive preemptions do not
        always evict on the same nodes, and the number of candidates to find."""
        offset = self.handle.rng.randrange(num_nodes) if num_nodes > 0 else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Whether ``pod`` may preempt now, and why not.

        Not with preemptionPolicy Never. Not while a lower-priority pod is still
        terminating on the node it was nominated to: it already preempted there and waits
        for its victims to go. Unless the filters now call that node
        UnschedulableAndUnresolvable: then the pod must look for another node.
        """
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, ERR_REASON_PREEMPTION_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            node_info = self.handle.snapshot.find(nominated)
            if node_info is not None:
                for info in node_info.pods:
                    # Upstream also requires the pod's DisruptionTarget condition (set by
                    # the scheduler's preemption); objects.Pod keeps no conditions, so any
                    # terminating lower-priority pod counts.
                    if info.pod.deleting and self.is_preemption_allowed(node_info, info, pod):
                        return False, ERR_REASON_TERMINATING_POD
        return True, ""

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """Whether ``victim`` may be evicted for ``preemptor``: only lower priorities."""
        return victim.pod.priority < preemptor.priority

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest lower-priority pods to evict from ``node_info`` (a copy) for ``pod``
        to fit; see ``evaluator.select_victims_on_node``."""
        return select_victims_on_node(
            self.handle, state, pod, node_info, pdbs, self.is_preemption_allowed
        )


def _prefixed(status: Status | None) -> Status | None:
    if status is not None and status.message:
        return Status(status.code, (MESSAGE_PREFIX + status.message,))
    return status


# What upstream's ``var _ fwk.PostFilterPlugin = &DefaultPreemption{}`` states.
_post_filter: type[PostFilterPlugin] = DefaultPreemption
_extender_aware: type[ExtenderAwarePostFilter] = DefaultPreemption
_planner: type[PreemptionPlanner] = DefaultPreemption
_preemption_interface: type[PreemptionInterface] = DefaultPreemption


def new(args: Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
    """Build the plugin from ``pluginConfig`` args; raises ArgsError listing every problem."""
    decoded, errors = DefaultPreemptionArgs.from_mapping(args)
    # A field of the wrong type was replaced by its default, so validating the rest
    # cannot report it twice.
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return DefaultPreemption(decoded, handle)
