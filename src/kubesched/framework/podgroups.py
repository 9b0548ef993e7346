"""Which members of each gang exist: pending ones and placed ones.

The quorum gate and the group cycle (``framework/groupcycle.py``) both need to know, for
a group, which of its members wait to be scheduled and how many already have a node
(assumed or bound). The live scheduler feeds this from its queue (pending pods) and its
cache (placed pods); the simulator from its own queue and snapshot. Pods are filed under
the group their profile's PodGroupPlugin names (``Framework.pod_group``).
"""

from __future__ import annotations

from collections.abc import Callable

from kubesched.framework.interface import PodGroupInfo
from kubesched.objects.pod import Pod

__all__ = ["GroupOf", "PodGroupTracker", "quorum_message"]

#: ``group_of(pod)``: the pod's gang, or None (``Framework.pod_group`` of its profile).
GroupOf = Callable[[Pod], PodGroupInfo | None]


def quorum_message(group: PodGroupInfo, existing: int) -> str:
    """Why a member waits before any attempt: its group has too few members yet."""
    return (
        f"pod group {group.key}: {existing} of {group.min_member} members exist; "
        "waiting for the rest before scheduling any of them"
    )


class PodGroupTracker:
    """Per group key: the pending members (by pod key) and the placed members."""

    def __init__(self, group_of: GroupOf) -> None:
        self.group_of = group_of
        self._pending: dict[str, dict[str, Pod]] = {}
        self._placed: dict[str, set[str]] = {}
        #: Pod key → the group it was filed under (a relabelled pod moves).
        self._pending_group: dict[str, str] = {}
        self._placed_group: dict[str, str] = {}
        #: The latest description of each group seen.
        self._groups: dict[str, PodGroupInfo] = {}

    # --- feeding ------------------------------------------------------------------

    def pending_added(self, pod: Pod) -> PodGroupInfo | None:
        """``pod`` waits to be scheduled (added or updated); its group, if any."""
        self.pending_removed(pod)
        group = self.group_of(pod)
        if group is None:
            return None
        self._groups[group.key] = group
        self._pending.setdefault(group.key, {})[pod.key] = pod
        self._pending_group[pod.key] = group.key
        return group

    def pending_removed(self, pod: Pod) -> str | None:
        """``pod`` no longer waits (bound, deleted); the key of the group it left."""
        key = self._pending_group.pop(pod.key, None)
        if key is not None:
            members = self._pending.get(key)
            if members is not None:
                members.pop(pod.key, None)
                if not members:
                    del self._pending[key]
        return key

    def placed_added(self, pod: Pod) -> None:
        """``pod`` has a node (assumed or bound)."""
        self.placed_removed(pod)
        group = self.group_of(pod)
        if group is None:
            return
        self._groups[group.key] = group
        self._placed.setdefault(group.key, set()).add(pod.key)
        self._placed_group[pod.key] = group.key

    def placed_removed(self, pod: Pod) -> None:
        """``pod`` left its node (forgotten, deleted, finished)."""
        key = self._placed_group.pop(pod.key, None)
        if key is not None:
            members = self._placed.get(key)
            if members is not None:
                members.discard(pod.key)
                if not members:
                    del self._placed[key]

    # --- reading ------------------------------------------------------------------

    def group(self, key: str) -> PodGroupInfo | None:
        """The latest description of group ``key``."""
        return self._groups.get(key)

    def pending(self, key: str) -> list[Pod]:
        """The group's members waiting to be scheduled."""
        return list(self._pending.get(key, {}).values())

    def placed(self, key: str) -> int:
        """How many of the group's members have a node."""
        return len(self._placed.get(key, ()))

    def existing(self, key: str) -> int:
        """How many members exist: pending or placed, each counted once, not counting
        pending members held by scheduling gates (they cannot join a quorum yet)."""
        placed = self._placed.get(key, set())
        ready = [
            k
            for k, pod in self._pending.get(key, {}).items()
            if not pod.scheduling_gates and k not in placed
        ]
        return len(placed) + len(ready)

    def has_quorum(self, group: PodGroupInfo) -> bool:
        """Whether enough members exist for a quorum."""
        return self.existing(group.key) >= group.min_member
