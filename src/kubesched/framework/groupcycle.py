"""A quorum of a gang placed in one scheduling cycle: all of it, or none of it.

Upstream's gangs (scheduler-plugins' Coscheduling) hold each member at Permit until the
quorum has nodes. Members that wait hold their nodes, so two gangs that each got part of
the cluster wait for each other until a timeout (scheduler-plugins #114, #117), and an
incomplete gang starves everyone meanwhile (#713). Upstream's own gang design (KEP-4671,
the Workload API) moves to what this module does instead: when a quorum of members is
pending, the scheduler takes them out of the queue together and runs one multi-pod cycle
against one snapshot:

* members in QueueSort order; each member's PreFilter / Filter / Score runs as in an
  ordinary attempt (``SchedulingAlgorithm.schedule_pod``) and sees the earlier members,
  which are assumed on their nodes in the same snapshot; each member is reserved;
* a member that fits nowhere is passed over while the rest can still make a quorum;
* once ``min_member`` members (counting those placed before) have a node, every placed
  member goes through Permit and on to binding;
* otherwise every reserved member is unreserved in reverse order and forgotten, and the
  group goes back to the queue with one explained reason (``GroupOutcome.message``).

Nothing waits at Permit for the group, so gangs cannot deadlock and a failed gang holds
nothing. The callers (the live scheduler's ``schedule_one``, the simulator) supply how a
member is assumed and forgotten (cache or snapshot) and do the requeueing and binding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.grouppreemption import GroupPreemption, planner_of
from kubesched.framework.interface import Code, PodGroupInfo, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import (
    FitError,
    ScheduleResult,
    SchedulingAlgorithm,
    SchedulingError,
)
from kubesched.framework.types import QueuedPodInfo
from kubesched.framework.waiting_pods import waiting_pod_key
from kubesched.objects.pod import Pod

__all__ = [
    "GroupOutcome",
    "MemberFailure",
    "MemberPlacement",
    "schedule_group",
    "sort_members",
]


@dataclass
class MemberPlacement:
    """A member assumed and reserved on a node in the group cycle."""

    pod: Pod
    assumed: Pod
    state: CycleState
    result: ScheduleResult


@dataclass
class MemberFailure:
    """A member that could not be placed, and why (its FitError message)."""

    pod: Pod
    status: Status
    #: The plugins that rejected it (for requeueing on their events).
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    #: Its FitError, when it fit nowhere (preemption reads the node statuses).
    fit: FitError | None = None
    #: The cycle state of its attempt (preemption's dry run starts from it).
    state: CycleState | None = None


@dataclass
class GroupOutcome:
    """How a group cycle ended.

    On success, ``placed`` holds the members that passed Permit (each assumed and
    reserved: bind them); ``failed`` the members passed over; ``untried`` the members
    not needed for the quorum (schedule them one by one). On failure nothing stays
    assumed or reserved, and ``status`` explains it for every member.
    """

    group: PodGroupInfo
    members: int
    placed_before: int
    placed: list[MemberPlacement] = field(default_factory=list)
    failed: list[MemberFailure] = field(default_factory=list)
    untried: list[Pod] = field(default_factory=list)
    #: None on success; else Unschedulable (or Error) with the group's message.
    status: Status | None = None
    #: How many members had a node when the cycle gave up (before the roll-back).
    reached: int = 0
    #: After a dry run that placed the whole quorum: the pods evicted for it, and the
    #: node each member is nominated to (the members retry once the victims are gone).
    preempted: dict[str, tuple[Pod, ...]] = field(default_factory=dict)
    nominations: dict[str, str] = field(default_factory=dict)
    #: Victims of a dry run that did not place the quorum (nobody was evicted).
    spared: int = 0
    #: Plugins that rejected members placed only by the dry run (their retry after the
    #: evictions waits for those plugins' events, a victim's deletion among them).
    preempting_plugins: set[str] = field(default_factory=set)

    def victim_count(self) -> int:
        """How many pods were evicted for the group."""
        return sum(len(victims) for victims in self.preempted.values())

    @property
    def succeeded(self) -> bool:
        return self.status is None

    @property
    def needed(self) -> int:
        """How many members this cycle had to place."""
        return max(0, self.group.min_member - self.placed_before)

    def unschedulable_plugins(self) -> frozenset[str]:
        """Every plugin that rejected a member: any event that may help one of them may
        help the group."""
        out: set[str] = set(self.preempting_plugins)
        for failure in self.failed:
            out |= failure.unschedulable_plugins
        return frozenset(out)

    def pending_plugins(self) -> frozenset[str]:
        out: set[str] = set()
        for failure in self.failed:
            out |= failure.pending_plugins
        return frozenset(out)


def sort_members(fwk: Framework, members: Sequence[QueuedPodInfo]) -> list[QueuedPodInfo]:
    """``members`` in the profile's QueueSort order (ties: as given)."""

    def compare(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
        if fwk.queue_sort_less(a, b):
            return -1
        if fwk.queue_sort_less(b, a):
            return 1
        return 0

    return sorted(members, key=functools.cmp_to_key(compare))


def group_message(outcome: GroupOutcome) -> str:
    """The one reason every member of a failed group reports: the group, how many of
    the members its quorum needs could be placed, and which member failed where."""
    group = outcome.group
    head = f"pod group {group.key} (minMember {group.min_member}"
    if outcome.placed_before:
        head += f", {outcome.placed_before} already placed"
    head += "): "
    if outcome.preempted:
        return head + (
            f"the {outcome.needed} members needed fit once {outcome.victim_count()} "
            "lower-priority pod(s) are preempted; preempting them, the members are nominated "
            "to their nodes."
        )
    head += f"{outcome.reached} of the {outcome.needed} members needed could be placed"
    head += f" ({outcome.members} pending), so none was"
    if outcome.spared:
        head += f" (even with {outcome.spared} lower-priority pod(s) preempted: none was preempted)"
    if not outcome.failed:
        return head + "."
    first = outcome.failed[0]
    more = len(outcome.failed) - 1
    tail = f"; member {first.pod.key}: {first.status.message}"
    if more:
        tail += f" (and {more} more member(s) failed)"
    return head + tail


def schedule_group(
    fwk: Framework,
    algorithm: SchedulingAlgorithm,
    group: PodGroupInfo,
    members: Sequence[Pod],
    placed_before: int,
    assume: Callable[[Pod], None],
    forget: Callable[[Pod], None],
    *,
    record_plugin_metrics: bool = False,
    before_member: Callable[[Pod], None] | None = None,
    preemption: bool = True,
) -> GroupOutcome:
    """Place a quorum of ``group`` from ``members`` (pending, in QueueSort order) in
    the framework's current snapshot, all or nothing (see the module docstring).

    ``placed_before``: members of the group already with a node. ``assume(pod)`` must
    count ``pod`` (with ``node_name``) on its node in the snapshot the framework uses;
    ``forget(pod)`` undo it. ``before_member(pod)`` is called before each attempt.
    With ``preemption`` and a PostFilter plugin that can plan its preemption, members
    that fit nowhere are placed by a dry run (``framework/grouppreemption.py``) and the
    victims are evicted only when the whole quorum then fits (the caller must let the
    plugin's evictions happen, as after PostFilter, and record ``nominations``).
    """
    outcome = GroupOutcome(group, len(members), placed_before)
    planner = planner_of(fwk) if preemption else None
    dry_run = GroupPreemption(planner, fwk.snapshot) if planner is not None else None
    need = outcome.needed
    placed = outcome.placed
    for index, pod in enumerate(members):
        if len(placed) >= need:
            outcome.untried = list(members[index:])
            break
        if len(placed) + len(members) - index < need:
            outcome.untried = list(members[index:])
            break
        if before_member is not None:
            before_member(pod)
        state = CycleState()
        state.record_plugin_metrics = record_plugin_metrics
        try:
            try:
                result = algorithm.schedule_pod(state, pod)
            except FitError as fit:
                retry = dry_run.try_member(state, pod, fit) if dry_run is not None else None
                if retry is None:
                    raise
                outcome.preempting_plugins |= fit.diagnosis.unschedulable_plugins
                # The plan's victims are out of the snapshot: try it there again.
                state = CycleState()
                state.record_plugin_metrics = record_plugin_metrics
                result = algorithm.schedule_pod(state, retry)
        except FitError as fit:
            outcome.failed.append(
                MemberFailure(
                    pod,
                    Status(Code.UNSCHEDULABLE, (str(fit),)),
                    frozenset(fit.diagnosis.unschedulable_plugins),
                    frozenset(fit.diagnosis.pending_plugins),
                    fit,
                    state,
                )
            )
            continue
        except SchedulingError as err:
            # A fault, not a misfit: the whole group retries after a backoff.
            outcome.failed.append(MemberFailure(pod, err.status))
            outcome.reached = len(placed)
            _roll_back(fwk, placed, forget)
            if dry_run is not None:
                dry_run.restore()
            outcome.status = Status.error(group_message(outcome))
            return outcome
        host = result.suggested_host
        assumed = pod.evolve(node_name=host, nominated_node_name="")
        assume(assumed)
        status = fwk.run_reserve_plugins_reserve(state, assumed, host)
        if status is not None:
            fwk.run_reserve_plugins_unreserve(state, assumed, host)
            forget(assumed)
            message = status.message
            if status.is_rejected():
                message = str(FitError.on_node(pod, host, status))
            outcome.failed.append(
                MemberFailure(
                    pod,
                    Status(status.code, (message,), status.plugin),
                    frozenset({status.plugin} - {""}),
                )
            )
            continue
        placed.append(MemberPlacement(pod, assumed, state, result))
    outcome.reached = len(placed)
    if dry_run is not None and dry_run.plans:
        # Placed only in the dry run: the victims are still there. Either the quorum
        # fits once they go, and they are evicted now, or nobody is.
        quorum = len(placed) >= need
        nominations = {m.pod.key: m.assumed.node_name for m in placed}
        _roll_back(fwk, placed, forget)
        dry_run.restore()
        if quorum:
            outcome.preempted = {pod.key: plan.victims for pod, plan in dry_run.plans}
            outcome.nominations = nominations
            failure = dry_run.execute()
            if failure is not None:
                outcome.preempted = {}
                outcome.nominations = {}
                outcome.status = Status.error(f"pod group {group.key}: {failure.message}")
                return outcome
        else:
            outcome.spared = len(dry_run.victims())
        outcome.status = Status.unschedulable(group_message(outcome))
        return outcome
    if len(placed) < need:
        _roll_back(fwk, placed, forget)
        outcome.status = Status.unschedulable(group_message(outcome))
        return outcome
    # The quorum has nodes: only now does any member meet Permit.
    for member in placed:
        host = member.assumed.node_name
        status = fwk.run_permit_plugins(member.state, member.assumed, host)
        if status is None or status.code is Code.WAIT:
            continue
        message = status.message
        if status.is_rejected():
            message = str(FitError.on_node(member.pod, host, status))
        outcome.failed.append(
            MemberFailure(
                member.pod,
                Status(status.code, (message,), status.plugin),
                frozenset({status.plugin} - {""}),
            )
        )
        _roll_back(fwk, placed, forget)
        code = Code.UNSCHEDULABLE if status.is_rejected() else Code.ERROR
        outcome.status = Status(code, (group_message(outcome),), status.plugin)
        return outcome
    return outcome


def _roll_back(
    fwk: Framework, placed: list[MemberPlacement], forget: Callable[[Pod], None]
) -> None:
    """Unreserve and forget every placed member, the last placed first; a member that a
    Permit plugin holds is let go of as well."""
    for member in reversed(placed):
        waiting = fwk.waiting_pod_for(member.assumed)
        if waiting is not None:
            fwk.waiting_pods.remove(waiting_pod_key(member.assumed))
        fwk.run_reserve_plugins_unreserve(member.state, member.assumed, member.assumed.node_name)
        forget(member.assumed)
    placed.clear()
