"""The preemption evaluator: which pods to evict, on which node, to make room for a pod.

Mirrors upstream's ``pkg/scheduler/framework/preemption/preemption.go``. When no node
fits a pod, PostFilter asks the evaluator to:

1. keep the nodes whose rejection was Unschedulable (UnschedulableAndUnresolvable means
   evicting pods cannot help there);
2. dry-run preemption on a window of them, from a random offset, until enough candidates
   are found (``numCandidates``, and at least one that violates no PodDisruptionBudget):
   on a copy of each node, remove every lower-priority pod, check the pod fits, then
   give back ("reprieve") as many of the removed pods as still let it fit;
3. pick the candidate whose victims matter least (PDB violations, priorities, count,
   start times), and
4. evict its victims and clear the nominations of lower-priority pods on that node.

What is upstream's ``Interface`` (the policy a preemption plugin supplies: candidate
count, eligibility, victim selection) is ``PreemptionInterface`` here; DefaultPreemption
implements it. Everything is synchronous: upstream 1.34 can evict victims in a goroutine
(SchedulerAsyncPreemption) and keep the preemptor out of the queue meanwhile; here the
victims are deleted before PostFilter returns, so nothing needs to wait. A victim held
at Permit is rejected (``preempted``) instead of deleted, as upstream's ``PreemptPod``.

With extenders, ``preempt_with_extenders`` adds upstream's step 3 between the search and
the choice: the candidates go to the extenders' preempt verbs (``callExtenders``), which
may drop candidates or victims. It awaits them; everything else stays synchronous.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Protocol

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import Extenders, Victims
from kubesched.framework.handle import Handle, PodNominator
from kubesched.framework.interface import Code, PostFilterResult, Status
from kubesched.framework.schedule import Diagnosis, FitError
from kubesched.framework.types import NodeInfo, NodeToStatus, PodInfo
from kubesched.objects.pod import Pod
from kubesched.objects.policy import PodDisruptionBudget

__all__ = [
    "NOT_HELPFUL",
    "NO_CANDIDATE",
    "NO_NODES_AVAILABLE",
    "NO_VICTIMS",
    "Candidate",
    "Evaluator",
    "PreemptionInterface",
    "filter_pods_with_pdb_violation",
    "importance_key",
    "pick_one_node_for_preemption",
    "select_victims_on_node",
]

#: The status of the nodes a dry run did not look at, in the "no candidate" message.
NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
#: A node where no pod has a lower priority than the preemptor.
NO_VICTIMS: Final = "No preemption victims found for incoming pod"
#: Candidates existed but none could be picked (cannot happen with the default criteria).
NO_CANDIDATE: Final = "no candidate node for preemption"
NO_NODES_AVAILABLE: Final = "no nodes available"

#: Added to every victim's priority before summing, so that all terms are positive and a
#: node with a few negative-priority victims does not win over one with fewer of them.
_PRIORITY_OFFSET: Final = 2**31


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where the preemptor fits once ``victims`` are gone.

    ``victims`` are ordered from the most to the least important (highest priority
    first); ``num_pdb_violations`` counts the victims whose eviction breaks a PDB.
    """

    node_name: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int = 0


class PreemptionInterface(Protocol):
    """The policy a preemption plugin gives the evaluator (upstream ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start index in ``[0, num_nodes)`` and how many candidates to find."""
        ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Whether ``pod`` may preempt at all; the reason when it may not."""
        ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest pods to evict from ``node_info`` (a copy, as ``state`` is) for
        ``pod`` to fit, most important first, with the number of PDB violations."""
        ...


class Evaluator:
    """Runs preemption for one plugin (upstream ``preemption.Evaluator``)."""

    def __init__(self, plugin_name: str, handle: Handle, interface: PreemptionInterface) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface

    def preempt(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Try to make room for ``pod``; ``node_to_status`` is why each node rejected it.

        Returns ``(None, Unschedulable)`` when the pod may not preempt (its nomination is
        kept), ``(PostFilterResult(""), Unschedulable)`` when no node would help (its
        nomination is cleared), ``(None, Error)`` on faults, and the nominated node with
        its evicted victims and ``None`` (Success) otherwise.
        """
        found = self._candidates(state, pod, node_to_status)
        if not isinstance(found, list):
            return found
        return self._choose_and_prepare(pod, found)

    async def preempt_with_extenders(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus, extenders: Extenders
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``preempt``, letting the interested preempting extenders narrow the candidates
        before one is chosen; a failed non-ignorable extender is an Error status."""
        found = self._candidates(state, pod, node_to_status)
        if not isinstance(found, list):
            return found
        if extenders.preempts_for(pod):
            try:
                found = await self.call_extenders(pod, found, extenders)
            except Exception as err:  # upstream: fwk.AsStatus(err)
                return None, Status.error(str(err) or type(err).__name__)
        return self._choose_and_prepare(pod, found)

    async def call_extenders(
        self, pod: Pod, candidates: Sequence[Candidate], extenders: Extenders
    ) -> list[Candidate]:
        """The candidates as the extenders answer them (upstream ``callExtenders``): each
        may drop nodes or victims. Victims stay ordered most important first, which
        choosing a candidate relies on (an extender's answer may come in any order)."""
        victims = {c.node_name: Victims(list(c.victims), c.num_pdb_violations) for c in candidates}
        answer = await extenders.process_preemption(pod, victims, self.handle.snapshot)
        return [
            Candidate(node, tuple(sorted(v.pods, key=importance_key)), v.num_pdb_violations)
            for node, v in answer.items()
        ]

    def plan(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[Candidate | None, Status | None]:
        """Steps 1 to 3 without the evictions (a gang's dry run): the candidate that
        ``preempt`` would choose, or None and why not."""
        found = self._candidates(state, pod, node_to_status)
        if not isinstance(found, list):
            return None, found[1]
        best = self.select_candidate(found)
        if best is None or not best.node_name:
            return None, Status.unschedulable(NO_CANDIDATE)
        return best, None

    def _candidates(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> list[Candidate] | tuple[PostFilterResult | None, Status | None]:
        """Steps 1 and 2: the candidates, or the result when there are none."""
        # Upstream first re-reads the pod from the informer; the caller's pod is current.
        eligible, reason = self.interface.pod_eligible_to_preempt_others(
            pod, node_to_status.get(pod.nominated_node_name)
        )
        if not eligible:
            return None, Status.unschedulable(reason)

        all_nodes = self.handle.snapshot.list()
        candidates, statuses, errors = self.find_candidates(state, all_nodes, pod, node_to_status)
        if errors and not candidates:
            return None, Status.error(_aggregate(errors))
        if not candidates:
            statuses.absent = Status.unresolvable(NOT_HELPFUL)
            fit_error = FitError(pod, len(all_nodes), Diagnosis(node_to_status=statuses))
            # An empty nomination tells the caller to clear the pod's nominatedNodeName.
            return PostFilterResult(), Status.unschedulable(str(fit_error))
        return candidates

    def _choose_and_prepare(
        self, pod: Pod, candidates: Sequence[Candidate]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Steps 3 and 4: pick the best candidate, evict its victims."""
        best = self.select_candidate(candidates)
        if best is None or not best.node_name:
            return None, Status.unschedulable(NO_CANDIDATE)
        status = self.prepare_candidate(best, pod)
        if status is not None:
            return None, status
        victims = tuple(victim.key for victim in best.victims)
        return PostFilterResult(nominated_node_name=best.node_name, victims=victims), None

    def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        node_to_status: NodeToStatus,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """The candidates among the nodes where preemption might help, the status of
        each node tried without success, and the errors met."""
        if not all_nodes:
            return [], NodeToStatus(), [NO_NODES_AVAILABLE]
        snapshot = self.handle.snapshot
        # Positions in the snapshot let only the nodes with a status be looked at.
        position = snapshot.position if all_nodes is snapshot.list() else None
        potential = node_to_status.nodes_for_code(Code.UNSCHEDULABLE, all_nodes, position)
        if not potential:
            return [], NodeToStatus(), []
        pdbs = self.handle.cluster.pdbs()
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, list[str]]:
        """Simulate preemption on ``potential_nodes`` from ``offset`` (wrapping around).

        Stops once ``num_candidates`` candidates are found, provided one of them violates
        no PDB. Non-violating candidates come first in the result. Each kind is capped at
        ``num_candidates``, as upstream's fixed-size lists are: nodes past the cap are
        still tried (and count as tried), but not kept.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        for i in range(n):
            original = potential_nodes[(offset + i) % n]
            node_info = original.clone()
            victims, num_violations, status = self.interface.select_victims_on_node(
                state.clone(), pod, node_info, pdbs
            )
            if (status is None or status.is_success()) and victims:
                found = non_violating if num_violations == 0 else violating
                if len(found) < num_candidates:
                    found.append(Candidate(node_info.name, tuple(victims), num_violations))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status is None or status.is_success():
                status = Status.error(
                    f'expected at least one victim pod on node "{node_info.name}"'
                )
            if status.code is Code.ERROR:
                errors.append(status.message)
            statuses.set(node_info.name, status)
        return non_violating + violating, statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """The candidate whose victims matter least (see pick_one_node_for_preemption)."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        name = pick_one_node_for_preemption(candidates)
        for candidate in candidates:
            if candidate.node_name == name:
                return candidate
        return candidates[0]  # unreachable: the name comes from the candidates

    def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status | None:
        """Evict the victims, then clear the nominations of lower-priority pods that were
        nominated to the node: they may no longer fit there, and clearing sends them back
        to the queue to look elsewhere sooner."""
        client = self.handle.client
        reason = f"{pod.scheduler_name}: preempting to accommodate a higher priority pod"
        for victim in candidate.victims:
            if victim.deleting:
                continue  # its graceful deletion already started: no second API call
            waiting = self.handle.get_waiting_pod(victim.uid or victim.key)
            if waiting is not None:
                # Held at Permit, not bound yet: upstream rejects it rather than deleting
                # it, and its binding cycle then unreserves it and sends it back.
                waiting.reject(self.plugin_name, "preempted")
                continue
            try:
                client.delete_pod(victim, reason, preemptor=pod)
            except Exception as err:  # the client's failure becomes an Error status
                return Status.error(str(err) or type(err).__name__)

        nominator = self.handle.nominator
        for nominated in lower_priority_nominated_pods(nominator, pod, candidate.node_name):
            nominator.delete_nominated_pod(nominated)
            # Upstream logs a failure here and goes on: the nomination is not critical.
            with contextlib.suppress(Exception):
                client.set_nominated_node_name(nominated, "")
        return None


def lower_priority_nominated_pods(nominator: PodNominator, pod: Pod, node_name: str) -> list[Pod]:
    """The pods nominated to ``node_name`` with a lower priority than ``pod``."""
    return [
        info.pod
        for info in list(nominator.nominated_pods_for_node(node_name))
        if info.pod.priority < pod.priority
    ]


def select_victims_on_node(
    handle: Handle,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    pdbs: Sequence[PodDisruptionBudget],
    may_preempt: Callable[[NodeInfo, PodInfo, Pod], bool],
) -> tuple[list[Pod], int, Status | None]:
    """Upstream DefaultPreemption's ``SelectVictimsOnNode``; mutates ``node_info`` and
    ``state`` (copies). ``may_preempt(node_info, victim, preemptor)`` picks the pods that
    can be evicted at all.

    Removes every evictable pod, checks that ``pod`` then fits, and re-adds pods, most
    important first, keeping each one that still lets ``pod`` fit. Pods whose eviction
    would violate a PDB are re-added first, so that the victims break as few budgets as
    possible. Returns the victims (most important first), how many of them violate a
    PDB, and a status: Success, the filter's rejection, or Error.
    """

    def remove(info: PodInfo) -> Status | None:
        if not node_info.remove_pod(info.pod):
            return Status.error(
                f"no corresponding pod {info.pod.name} in pods of node {node_info.name}"
            )
        return handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)

    def add(info: PodInfo) -> Status | None:
        node_info.add_pod_info(info)
        return handle.run_pre_filter_extension_add_pod(state, pod, info, node_info)

    potential = [info for info in node_info.pods if may_preempt(node_info, info, pod)]
    for info in potential:
        status = remove(info)
        if status is not None and not status.is_success():
            return [], 0, status
    if not potential:
        # Nothing was removed, so filtering the node again would only repeat its failure.
        return [], 0, Status.unresolvable(NO_VICTIMS)

    # If the pod does not fit even with every evictable pod gone, this node cannot help.
    # (Affinity of the pod to the victims themselves is not considered, as upstream.)
    status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
    if status is not None and not status.is_success():
        return [], 0, status

    potential.sort(key=lambda info: importance_key(info.pod))
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    victims: list[PodInfo] = []

    def reprieve(info: PodInfo) -> tuple[bool, Status | None]:
        status = add(info)
        if status is not None and not status.is_success():
            return False, status
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is None or status.is_success():
            return True, None
        status = remove(info)
        if status is not None and not status.is_success():
            return False, status
        victims.append(info)
        return False, None

    num_violating = 0
    for info in violating:
        fits, error = reprieve(info)
        if error is not None:
            return [], 0, error
        if not fits:
            num_violating += 1
    for info in non_violating:
        _, error = reprieve(info)
        if error is not None:
            return [], 0, error

    if violating and non_violating:
        # The two groups were reprieved one after the other; restore one importance order.
        victims.sort(key=lambda info: importance_key(info.pod))
    return [info.pod for info in victims], num_violating, None


def filter_pods_with_pdb_violation(
    infos: Sequence[PodInfo], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``infos`` into (violating, non-violating), keeping their order.

    Each PDB's ``disruptions_allowed`` is spent by the matching pods in the order given;
    a pod whose eviction takes a budget below zero violates it. A PDB in another
    namespace, with a missing or empty selector, or that already lists the pod among its
    ``disrupted_pods`` (the API server counted that eviction) does not count.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in infos:
        victim = info.pod
        violated = False
        # A pod without labels matches no selector that can select anything.
        if victim.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != victim.namespace:
                    continue
                selector = pdb.selector
                if selector is None or selector.is_empty() or not selector.matches(victim.labels):
                    continue
                if victim.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> str:
    """The node of the candidate to preempt on, by upstream's criteria in order:

    1. fewest PDB violations;
    2. lowest priority of its most important victim;
    3. smallest sum of victims' priorities;
    4. fewest victims;
    5. latest start time among its highest-priority victims;
    6. the first remaining candidate (upstream: the first in map order, i.e. any).
    """
    if not candidates:
        return ""
    criteria: tuple[Callable[[Candidate], float], ...] = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + _PRIORITY_OFFSET for v in c.victims),
        lambda c: -len(c.victims),
        _earliest_start_of_highest_priority,
    )
    remaining = list(candidates)
    for score in criteria:
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            break
    return remaining[0].node_name


def importance_key(pod: Pod) -> tuple[int, float]:
    """Sorts pods from the most to the least important (upstream ``MoreImportantPod``):
    higher priority first, then the one that started earlier."""
    return -pod.priority, _start_time(pod.creation_timestamp)


def _earliest_start_of_highest_priority(candidate: Candidate) -> float:
    """The earliest start among the candidate's highest-priority victims (upstream
    ``GetEarliestPodStartTime``); later is better, so it is the score as is."""
    top = max(v.priority for v in candidate.victims)
    return min(_start_time(v.creation_timestamp) for v in candidate.victims if v.priority == top)


@functools.lru_cache(maxsize=4096)
def _start_time(timestamp: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp.

    The pod's creation time stands in for ``status.startTime``, which objects.Pod does
    not keep. A pod without one counts as starting now, i.e. after every other, as
    upstream's ``GetPodStartTime`` does.
    """
    if not timestamp:
        return math.inf
    try:
        parsed = datetime.fromisoformat(timestamp)
    except ValueError:
        return math.inf
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _aggregate(messages: list[str]) -> str:
    """Several errors as one message, like apimachinery's ``NewAggregate``: a lone error
    as it is, more in brackets, duplicates once."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
