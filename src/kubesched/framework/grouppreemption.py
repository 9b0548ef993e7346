"""Preemption for a gang, decided by a dry run of the whole quorum.

Preempting for each member as it fails (what a Permit-based gang gets from
DefaultPreemption) evicts pods for members whose gang then stays pending anyway. Here a
member that fits nowhere asks the profile's :class:`PreemptionPlanner` for the victims
that would make room, *without evicting them*: the victims leave the group cycle's
snapshot only, and the member is tried again there (nominated to the planned node).
The cycle goes on with the next members, which see both the assumed members and the
victims gone. Only if the whole quorum then has nodes are the victims evicted (the
plans executed) and the members nominated; otherwise nobody is evicted. Either way the
snapshot gets every victim back before the cycle ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import PreemptionPlan, PreemptionPlanner, Status
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.pod import Pod

__all__ = ["GroupPreemption", "planner_of"]


def planner_of(fwk: Framework) -> PreemptionPlanner | None:
    """The profile's first PostFilter plugin that can dry-run its preemption."""
    return fwk.preemption_planner


@dataclass
class GroupPreemption:
    """The preemption plans of one group cycle, and the victims taken out of its
    snapshot meanwhile."""

    planner: PreemptionPlanner
    snapshot: Snapshot
    plans: list[tuple[Pod, PreemptionPlan]] = field(default_factory=list)
    removed: list[Pod] = field(default_factory=list)

    def try_member(self, state: CycleState, pod: Pod, fit: FitError) -> Pod | None:
        """Plan preemption for ``pod`` that fit nowhere. With a plan, its victims leave
        the snapshot and the pod is returned nominated to the planned node (try it
        again); without one, the reason goes into ``fit``'s message and None."""
        plan, status = self.planner.plan_preemption(state, pod, fit.diagnosis.node_to_status)
        if plan is None:
            fit.diagnosis.post_filter_msg = status.message if status is not None else ""
            return None
        for victim in plan.victims:
            if self.snapshot.remove_pod(victim):
                self.removed.append(victim)
        self.plans.append((pod, plan))
        return pod.evolve(nominated_node_name=plan.node_name)

    def restore(self) -> None:
        """Put every victim back into the snapshot (it is the cache's, in the live
        scheduler: the victims are still there until their deletion is seen)."""
        for victim in reversed(self.removed):
            self.snapshot.add_pod(victim)
        self.removed.clear()

    def victims(self) -> list[Pod]:
        """Every victim of every plan."""
        return [victim for _, plan in self.plans for victim in plan.victims]

    def execute(self) -> Status | None:
        """Evict every plan's victims; the first failure, if any."""
        for pod, plan in self.plans:
            status = self.planner.execute_preemption(pod, plan)
            if status is not None and not status.is_success():
                return status
        return None
