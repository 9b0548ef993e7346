"""CapacityScheduling's preemption policy: which pods may go for a pod, by quota.

Mirrors the ``preemptor`` of scheduler-plugins v0.34.7's ``capacity_scheduling.go``. The
framework's evaluator (``plugins/defaultpreemption/evaluator.py``) runs the search, the
choice of candidate and the evictions; this module supplies upstream's policy
(``PreemptionInterface``):

- a pod whose namespace has an ElasticQuota and would stay within its ``min`` reclaims:
  its victims are pods of *other* quota namespaces that use more than their ``min``
  (borrowers), whatever their priority, taken from the least important while the
  borrower stays over its ``min``;
- a pod whose namespace would go over its ``min`` may only preempt lower-priority pods of
  its *own* namespace;
- a pod of a namespace without a quota preempts lower-priority pods of namespaces
  without a quota, as DefaultPreemption would;
- the pod must then fit the node, stay within its quota's ``max`` and keep the sum of
  every quota's use within the sum of their ``min``.

Beyond upstream (scheduler-plugins issue 683): upstream only evicts on the one node it
nominates. When every ``min`` is in use and the borrowed share sits on other nodes
(or the pod can only run on a node where nobody borrows), no single node frees enough
of the sum, and a namespace within its ``min`` never gets its share back. Here a pod
within its ``min`` may also take borrowers' pods on other nodes, the least important
first, just enough to bring the sum back within the sum of ``min``; they join the
candidate's victims (after the node's own), so the candidate choice and the evictions
are the evaluator's as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects.pod import PREEMPT_NEVER, Pod
from kubesched.objects.policy import PodDisruptionBudget
from kubesched.objects.resources import Resource
from kubesched.plugins.capacityscheduling.elasticquota import ElasticQuotaInfos
from kubesched.plugins.capacityscheduling.state import (
    PreFilterState,
    read_pre_filter_state,
    read_quota_state,
)
from kubesched.plugins.defaultpreemption.evaluator import (
    filter_pods_with_pdb_violation,
    importance_key,
)

__all__ = [
    "ERR_REASON_PREEMPTION_NEVER",
    "ERR_REASON_TERMINATING_POD",
    "GLOBAL_QUOTA_EXCEEDED",
    "QuotaPreemptor",
]

ERR_REASON_PREEMPTION_NEVER: Final = "not eligible due to preemptionPolicy=Never."
ERR_REASON_TERMINATING_POD: Final = "not eligible due to a terminating pod on the nominated node."
ERR_REASON_NO_STATE: Final = "not eligible due to failed to read from cycleState"
#: The pod would fit the node, but not its quota's max or the sum of every min.
GLOBAL_QUOTA_EXCEEDED: Final = "global quota max exceeded"


def no_victims(node_name: str, pod: Pod) -> str:
    """Upstream's message for a node with no pod this pod may preempt."""
    return f"No victims found on node {node_name} for preemptor pod {pod.name}"


class QuotaPreemptor:
    """The evaluator's ``PreemptionInterface`` for CapacityScheduling."""

    def __init__(self, handle: Handle, state: CycleState) -> None:
        self.handle = handle
        #: The PostFilter's cycle state: eligibility reads PreFilter's results from it.
        self.state = state

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Every node where preemption might help is dry-run, from the first (upstream
        returns ``0, n``)."""
        return 0, num_nodes

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Not with preemptionPolicy Never; not while a pod this one may preempt is still
        terminating on the node it was nominated to (it already preempted there)."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, ERR_REASON_PREEMPTION_NEVER
        pre_filter = read_pre_filter_state(self.state)
        if pre_filter is None:
            return False, ERR_REASON_NO_STATE
        nominated = pod.nominated_node_name
        if not nominated:
            return True, ""
        if (
            nominated_node_status is not None
            and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        ):
            return True, ""
        infos = read_quota_state(self.state)
        node_info = self.handle.snapshot.find(nominated)
        if infos is None or node_info is None:
            return True, ""
        own = infos.get(pod.namespace)
        if own is not None:
            more_than_min = bool(own.over_min_with(pre_filter.nominated_in_quota))
            for info in node_info.pods:
                other = info.pod
                if not other.deleting:
                    continue
                quota = infos.get(other.namespace)
                if quota is None:
                    continue
                if other.namespace == pod.namespace and other.priority < pod.priority:
                    return False, ERR_REASON_TERMINATING_POD
                if other.namespace != pod.namespace and not more_than_min and quota.over_min():
                    # The room it frees is the borrowed share this pod reclaims.
                    return False, ERR_REASON_TERMINATING_POD
            return True, ""
        for info in node_info.pods:
            other = info.pod
            if other.namespace in infos:
                continue
            if other.deleting and other.priority < pod.priority:
                return False, ERR_REASON_TERMINATING_POD
        return True, ""

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The pods to evict for ``pod`` to run on ``node_info`` (a copy, as ``state``
        is), most important first, with how many of them break a PDB."""
        infos = read_quota_state(state)
        pre_filter = read_pre_filter_state(state)
        if infos is None or pre_filter is None:
            # Upstream: Unschedulable with the message of the failed read.
            return [], 0, Status.unschedulable("Failed to read preFilterState from cycleState")
        return _Selection(self.handle, state, pod, node_info, infos, pre_filter).run(pdbs)


class _Selection:
    """One dry run of preemption on one node (upstream ``SelectVictimsOnNode``)."""

    def __init__(
        self,
        handle: Handle,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        infos: ElasticQuotaInfos,
        pre_filter: PreFilterState,
    ) -> None:
        self.handle = handle
        self.state = state
        self.pod = pod
        self.node_info = node_info
        self.infos = infos
        self.pre_filter = pre_filter
        self.own = infos.get(pod.namespace)

    def run(self, pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        pod, node_info, own = self.pod, self.node_info, self.own
        more_than_min = own is not None and bool(
            own.over_min_with(self.pre_filter.nominated_in_quota)
        )
        # Least important first: a borrower gives up its least important pods, and
        # stops being a victim once back within its min.
        potential: list[PodInfo] = []
        for info in sorted(node_info.pods, key=lambda i: importance_key(i.pod), reverse=True):
            if self._may_preempt(info.pod, more_than_min):
                potential.append(info)
                status = self._remove(info, node_info)
                if status is not None:
                    return [], 0, status
        reclaiming = own is not None and not more_than_min
        if not potential and not reclaiming:
            return [], 0, Status.unresolvable(no_victims(node_info.name, pod))

        status = self.handle.run_filter_plugins_with_nominated_pods(self.state, pod, node_info)
        if status is not None and not status.is_success():
            if not potential:
                return [], 0, Status.unresolvable(no_victims(node_info.name, pod))
            return [], 0, status

        elsewhere: list[tuple[PodInfo, NodeInfo]] = []
        if own is not None:
            request = self.pre_filter.pod_request
            over = own.over_max_with(request) or self.infos.aggregated_over_min_with(request)
            if over and reclaiming and not own.over_max_with(request):
                elsewhere, status = self._reclaim_elsewhere(request)
                if status is not None:
                    return [], 0, status
                if elsewhere:
                    # Pods gone elsewhere may change what the filters count here (a
                    # spread constraint's domains): the pod must still fit.
                    status = self.handle.run_filter_plugins_with_nominated_pods(
                        self.state, pod, node_info
                    )
                    if status is not None and not status.is_success():
                        return [], 0, status
                over = self.infos.aggregated_over_min_with(request)
            if over:
                return [], 0, Status.unschedulable(self._quota_message(request))
        if not potential and not elsewhere:
            return [], 0, Status.unresolvable(no_victims(node_info.name, pod))

        return self._reprieve(potential, elsewhere, pdbs)

    def _may_preempt(self, victim: Pod, more_than_min: bool) -> bool:
        """Upstream's choice of potential victims on the node (see module docstring)."""
        pod = self.pod
        quota = self.infos.get(victim.namespace)
        if self.own is None:
            return quota is None and victim.priority < pod.priority
        if quota is None:
            return False
        if more_than_min:
            return victim.namespace == pod.namespace and victim.priority < pod.priority
        return victim.namespace != pod.namespace and quota.over_min()

    def _reclaim_elsewhere(
        self, request: Resource
    ) -> tuple[list[tuple[PodInfo, NodeInfo]], Status | None]:
        """Borrowers' pods on other nodes, the least important first, until the sum of
        use plus ``request`` is within the sum of min again (issue 683)."""
        pod, infos = self.pod, self.infos
        found: list[tuple[PodInfo, NodeInfo]] = []
        others = [
            (info, node)
            for node in self.handle.snapshot.list()
            if node.name != self.node_info.name
            for info in node.pods
            if info.pod.namespace != pod.namespace and info.pod.namespace in infos
        ]
        others.sort(key=lambda pair: importance_key(pair[0].pod), reverse=True)
        for info, node in others:
            if not infos.aggregated_over_min_with(request):
                break
            quota = infos.get(info.pod.namespace)
            if quota is None or not quota.over_min():
                continue
            status = self._remove(info, node, on_node=False)
            if status is not None:
                return [], status
            found.append((info, node))
        return found, None

    def _quota_message(self, request: Resource) -> str:
        own = self.own
        assert own is not None
        parts = []
        names = own.over_max_with(request)
        if names:
            parts.append(own.describe_over_max(names, request, Resource()))
        names = self.infos.aggregated_over_min_with(request)
        if names:
            parts.append(self.infos.describe_over_min(names, request, Resource()))
        return f"{GLOBAL_QUOTA_EXCEEDED} ({'; '.join(parts)})"

    def _reprieve(
        self,
        potential: list[PodInfo],
        elsewhere: list[tuple[PodInfo, NodeInfo]],
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """Give back as many victims as still let the pod fit the node and its quota,
        PDB-violating ones first, each group most important first (upstream's
        reprieve); then the victims on other nodes, which only the quota needs."""
        handle, state, pod, node_info = self.handle, self.state, self.pod, self.node_info
        potential.sort(key=lambda info: importance_key(info.pod))
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []
        num_violating = 0

        for group, counts in ((violating, True), (non_violating, False)):
            for info in group:
                status = self._add(info, node_info)
                if status is not None:
                    return [], 0, status
                fits = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
                if (fits is None or fits.is_success()) and self._quota_allows():
                    continue
                status = self._remove(info, node_info)
                if status is not None:
                    return [], 0, status
                victims.append(info.pod)
                num_violating += counts

        if elsewhere:
            infos = [info for info, _ in elsewhere]
            infos.sort(key=lambda info: importance_key(info.pod))
            nodes = {info.pod.key: node for info, node in elsewhere}
            far_violating, far_non_violating = filter_pods_with_pdb_violation(infos, pdbs)
            for group, counts in ((far_violating, True), (far_non_violating, False)):
                for info in group:
                    node = nodes[info.pod.key]
                    status = self._add(info, node, on_node=False)
                    if status is not None:
                        return [], 0, status
                    if self._quota_allows():
                        continue
                    status = self._remove(info, node, on_node=False)
                    if status is not None:
                        return [], 0, status
                    victims.append(info.pod)
                    num_violating += counts

        if not victims:
            return [], 0, Status.unresolvable(no_victims(node_info.name, pod))
        victims.sort(key=importance_key)
        return victims, num_violating, None

    def _quota_allows(self) -> bool:
        """Upstream's check in the reprieve: the pod and the pods nominated before it
        stay within its quota's max and the sum of every min."""
        own = self.own
        if own is None:
            return True
        pre_filter = self.pre_filter
        return not (
            own.over_max_with(pre_filter.nominated_in_quota)
            or self.infos.aggregated_over_min_with(pre_filter.nominated_all)
        )

    def _remove(self, info: PodInfo, node: NodeInfo, *, on_node: bool = True) -> Status | None:
        """Take ``info`` out of its node (only the candidate node's copy is changed) and
        out of every plugin's state, this plugin's quota accounts included."""
        if on_node and not node.remove_pod(info.pod):
            return Status.error(f"no corresponding pod {info.pod.name} in pods of node {node.name}")
        return _ok(
            self.handle.run_pre_filter_extension_remove_pod(self.state, self.pod, info, node)
        )

    def _add(self, info: PodInfo, node: NodeInfo, *, on_node: bool = True) -> Status | None:
        if on_node:
            node.add_pod_info(info)
        return _ok(self.handle.run_pre_filter_extension_add_pod(self.state, self.pod, info, node))


def _ok(status: Status | None) -> Status | None:
    return None if status is None or status.is_success() else status
