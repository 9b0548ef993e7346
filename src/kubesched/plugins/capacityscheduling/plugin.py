"""CapacityScheduling: elastic quotas per namespace, with borrowing and reclaim.

Mirrors scheduler-plugins v0.34.7's ``pkg/capacityscheduling`` (``capacity_scheduling.go``).
A namespace's ElasticQuota (``scheduling.x-k8s.io/v1alpha1``) guarantees it ``min`` and
caps it at ``max``; a namespace may borrow beyond its ``min`` what the others leave
unused, and takes it back by preemption.

- **PreFilter** rejects a pod whose namespace would go over its ``max``, or that would
  take the sum of every quota's use over the sum of their ``min``; the pods nominated
  before it (by preemption) count first. A namespace without a quota is not limited.
- **PostFilter** replaces DefaultPreemption (scheduler-plugins' configuration disables
  every other PostFilter): the framework's evaluator with this plugin's victim rules
  (``preemption.py``), including the reclaim upstream misses (issue 683). It is also
  the profile's PreemptionPlanner, so that a gang's quorum preempts by quota too.
- **Reserve / Unreserve** count the pod in flight until the scheduler's snapshot holds
  it (``usage.py``: the use is derived from the snapshot, so no failure path can leak).

Messages name the quota and the numbers (used, request, max or the sums of min), for
FailedScheduling events and ``kubesched explain``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import ExtenderAwarePostFilter, Extenders
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    PostFilterPlugin,
    PostFilterResult,
    PreemptionPlan,
    PreemptionPlanner,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeToStatus, PodInfo
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource
from kubesched.plugins import names
from kubesched.plugins.capacityscheduling.elasticquota import ElasticQuotaInfos
from kubesched.plugins.capacityscheduling.preemption import QuotaPreemptor
from kubesched.plugins.capacityscheduling.state import (
    PRE_FILTER_STATE_KEY,
    QUOTA_SNAPSHOT_KEY,
    PreFilterState,
    QuotaSnapshot,
    read_quota_state,
)
from kubesched.plugins.capacityscheduling.usage import QuotaUsage
from kubesched.plugins.defaultpreemption.evaluator import Candidate, Evaluator
from kubesched.plugins.helper import as_deleted

__all__ = [
    "NAME",
    "CapacityScheduling",
    "CapacitySchedulingArgs",
    "new",
    "over_max_message",
    "over_min_message",
]

NAME: Final = names.CAPACITY_SCHEDULING

_ENVELOPE: Final = frozenset({"kind", "apiVersion"})


def over_max_message(pod: Pod, namespace: str) -> str:
    """Upstream's PreFilter message when the pod's quota would go over its max."""
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
        f"ElasticQuota {namespace} is more than Max"
    )


def over_min_message(pod: Pod) -> str:
    """Upstream's PreFilter message when the sum of use would go over the sum of min."""
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
        "total ElasticQuota used is more than min"
    )


@dataclass(frozen=True, slots=True)
class CapacitySchedulingArgs:
    """CapacityScheduling's args: none.

    scheduler-plugins v0.34.7 registers no args type for the plugin and its factory
    ignores what it is given, so there are no fields, defaults or validation to carry
    over. Upstream silently ignores any ``pluginConfig`` args; here a field is refused
    by name, so that a misplaced setting does not go unnoticed (``kind`` and
    ``apiVersion`` of the versioned form are accepted).
    """

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[CapacitySchedulingArgs, list[FieldError]]:
        errors = [
            FieldError.invalid(str(key), key, "unknown field: CapacityScheduling takes no args")
            for key in (args or {})
            if key not in _ENVELOPE
        ]
        return cls(), errors

    def validate(self) -> list[FieldError]:
        return []


class CapacityScheduling:
    """The plugin: PreFilter (+ extensions), PostFilter, Reserve; see the module
    docstring."""

    name = NAME

    def __init__(self, args: CapacitySchedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        #: The pods each quota namespace uses (upstream's ElasticQuotaInfos cache).
        self.usage = QuotaUsage()

    # --- the accounts -----------------------------------------------------------------

    def quota_infos(self) -> ElasticQuotaInfos:
        """Every quota's account as of the handle's current snapshot and the pods in
        flight (upstream ``snapshotElasticQuota``)."""
        return self.usage.infos(self.handle.cluster.elastic_quotas(), self.handle.snapshot)

    # --- PreFilter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Reject the pod if its quota's max, or the sum of every min, cannot take it
        with the pods nominated before it."""
        infos = self.quota_infos()
        state.write(QUOTA_SNAPSHOT_KEY, QuotaSnapshot(infos))
        request = pod.requests
        own = infos.get(pod.namespace)
        if own is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(request, request, request))
            return None, None

        in_quota, others = self._nominated_requests(pod, infos)
        nominated_all = in_quota.copy()
        nominated_all.add(others)
        with_in_quota = in_quota.copy()
        with_in_quota.add(request)
        with_all = nominated_all.copy()
        with_all.add(request)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(request, with_in_quota, with_all))

        over = own.over_max_with(with_in_quota)
        if over:
            detail = own.describe_over_max(over, request, in_quota)
            return None, Status.unschedulable(f"{over_max_message(pod, own.namespace)} ({detail})")
        over = infos.aggregated_over_min_with(with_all)
        if over:
            detail = infos.describe_over_min(over, request, nominated_all)
            return None, Status.unschedulable(f"{over_min_message(pod)} ({detail})")
        return None, None

    def _nominated_requests(self, pod: Pod, infos: ElasticQuotaInfos) -> tuple[Resource, Resource]:
        """The requests of the pods nominated before ``pod``: in its namespace with at
        least its priority, and in other quota namespaces within their min."""
        in_quota, others = Resource(), Resource()
        nominator = self.handle.nominator
        for node_name in nominator.nominated_nodes():
            for info in nominator.nominated_pods_for_node(node_name):
                other = info.pod
                if other.key == pod.key:
                    continue
                quota = infos.get(other.namespace)
                if quota is None:
                    continue
                if other.namespace == pod.namespace:
                    if other.priority >= pod.priority:
                        in_quota.add(other.requests)
                elif not quota.over_min():
                    others.add(other.requests)
        return in_quota, others

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Preemption's dry run gives ``pod_to_add`` back: count it in its quota."""
        infos = read_quota_state(state)
        if infos is None:
            return Status.error(f'reading "{QUOTA_SNAPSHOT_KEY}" from cycleState: not found')
        quota = infos.get(pod_to_add.pod.namespace)
        if quota is not None:
            quota.add_pod(pod_to_add.pod)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Preemption's dry run takes ``pod_to_remove`` away: its quota stops counting it."""
        infos = read_quota_state(state)
        if infos is None:
            return Status.error(f'reading "{QUOTA_SNAPSHOT_KEY}" from cycleState: not found')
        quota = infos.get(pod_to_remove.pod.namespace)
        if quota is not None:
            quota.remove_pod(pod_to_remove.pod)
        return None

    # --- PostFilter -------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Preempt by quota (see ``preemption.py``). Upstream builds a new evaluator for
        each call, with the cycle's state, and adds no message prefix."""
        evaluator = Evaluator(NAME, self.handle, QuotaPreemptor(self.handle, state))
        return evaluator.preempt(state, pod, node_to_status)

    async def post_filter_with_extenders(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus, extenders: Extenders
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``post_filter`` with the extenders' preempt verbs consulted on the candidates
        (upstream's evaluator calls them for this plugin as for DefaultPreemption)."""
        evaluator = Evaluator(NAME, self.handle, QuotaPreemptor(self.handle, state))
        return await evaluator.preempt_with_extenders(state, pod, node_to_status, extenders)

    def plan_preemption(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PreemptionPlan | None, Status | None]:
        """The candidate ``post_filter`` would choose, evicting no one: a gang's dry run
        of the whole quorum (PreemptionPlanner). Quota victims on other nodes (issue
        683) are in the plan's victims like the node's own."""
        evaluator = Evaluator(NAME, self.handle, QuotaPreemptor(self.handle, state))
        best, status = evaluator.plan(state, pod, node_to_status)
        if best is None:
            return None, status
        return PreemptionPlan(best.node_name, best.victims), None

    def execute_preemption(self, pod: Pod, plan: PreemptionPlan) -> Status | None:
        """Evict ``plan``'s victims for ``pod``, as ``post_filter`` would have."""
        evaluator = Evaluator(NAME, self.handle, QuotaPreemptor(self.handle, CycleState()))
        return evaluator.prepare_candidate(Candidate(plan.node_name, plan.victims), pod)

    # --- Reserve ----------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Count ``pod`` in its quota until it is unreserved, unless the snapshot holds it
        already: the scheduler (and a group cycle, member by member) assumes a pod on
        its node before Reserve, and from then on the snapshot counts it, so nothing is
        left to undo whatever happens to it next."""
        if not any(q.namespace == pod.namespace for q in self.handle.cluster.elastic_quotas()):
            return None
        node_info = self.handle.snapshot.find(node_name)
        if node_info is not None and any(info.pod.key == pod.key for info in node_info.pods):
            return None
        self.usage.reserve(pod)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Take back what :meth:`reserve` counted; idempotent."""
        self.usage.unreserve(pod)

    # --- requeueing -------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Upstream's events: a pod deleted, any change of an ElasticQuota."""
        return (
            # A deleted pod (or one turned terminal) of a quota namespace gives its use
            # back to its quota and to the sum of every min; a nominated one, its
            # nomination's share.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE),
                self.is_schedulable_after_pod_change,
            ),
            # A new, changed or deleted quota changes a max or the sum of every min
            # (deleted: its namespace is no longer limited), for any pod: no hint.
            ClusterEventWithHint(ClusterEvent(EventResource.ELASTIC_QUOTA, ActionType.ALL)),
        )

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Queue when the deleted pod was on a node or nominated to one and its namespace
        has an ElasticQuota: only such a pod counted in a quota or in the sum of min."""
        deleted = as_deleted(Pod, old)
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QUEUE_SKIP
        quotas = self.handle.cluster.elastic_quotas()
        if any(q.namespace == deleted.namespace for q in quotas):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


# What upstream's ``var _ framework.XPlugin = &CapacityScheduling{}`` lines state.
_pre_filter: type[PreFilterPlugin] = CapacityScheduling
_post_filter: type[PostFilterPlugin] = CapacityScheduling
_planner: type[PreemptionPlanner] = CapacityScheduling
_extender_aware: type[ExtenderAwarePostFilter] = CapacityScheduling
_reserve: type[ReservePlugin] = CapacityScheduling
_enqueue: type[EnqueueExtensions] = CapacityScheduling


def new(args: Mapping[str, Any] | None, handle: Handle) -> CapacityScheduling:
    """Build the plugin from ``pluginConfig`` args; raises ArgsError listing every problem."""
    decoded, errors = CapacitySchedulingArgs.from_mapping(args)
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return CapacityScheduling(decoded, handle)
