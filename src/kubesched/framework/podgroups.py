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
    """Per group key: the pending members (by pod key) and the placed members.

    How many members exist (pending and not held by scheduling gates, or placed; a pod
    both pending and placed counted once) is kept as a count, so that asking costs
    nothing whatever the group's size (the quorum gate asks for every member)."""

    def __init__(self, group_of: GroupOf) -> None:
        self.group_of = group_of
        self._pending: dict[str, dict[str, Pod]] = {}
        self._placed: dict[str, set[str]] = {}
        #: Pod key → the group it was filed under (a relabelled pod moves).
        self._pending_group: dict[str, str] = {}
        self._placed_group: dict[str, str] = {}
        #: The latest description of each group seen.
        self._groups: dict[str, PodGroupInfo] = {}
        #: Per group: pod key → [ready and pending, placed]; and how many keys have
        #: either (the members that exist).
        self._flags: dict[str, dict[str, list[bool]]] = {}
        self._existing: dict[str, int] = {}

    def _flag(self, key: str, pod_key: str, index: int, value: bool) -> None:
        flags = self._flags.setdefault(key, {})
        entry = flags.get(pod_key)
        if entry is None:
            if not value:
                return
            entry = flags[pod_key] = [False, False]
        before = entry[0] or entry[1]
        entry[index] = value
        after = entry[0] or entry[1]
        if before != after:
            self._existing[key] = self._existing.get(key, 0) + (1 if after else -1)
        if not after:
            del flags[pod_key]
            if not flags:
                del self._flags[key]
                self._existing.pop(key, None)

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
        self._flag(group.key, pod.key, 0, not pod.scheduling_gates)
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
            self._flag(key, pod.key, 0, False)
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
        self._flag(group.key, pod.key, 1, True)

    def placed_removed(self, pod: Pod) -> None:
        """``pod`` left its node (forgotten, deleted, finished)."""
        key = self._placed_group.pop(pod.key, None)
        if key is not None:
            members = self._placed.get(key)
            if members is not None:
                members.discard(pod.key)
                if not members:
                    del self._placed[key]
            self._flag(key, pod.key, 1, False)

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
        return self._existing.get(key, 0)

    def has_quorum(self, group: PodGroupInfo) -> bool:
        """Whether enough members exist for a quorum."""
        return self.existing(group.key) >= group.min_member
