"""Coscheduling: the pods of a PodGroup are placed together, a quorum or none.

Mirrors scheduler-plugins v0.34.7's ``pkg/coscheduling`` as users configure it: the
name ``Coscheduling``, ``CoschedulingArgs`` with that release's defaults and validation,
membership by the pod label ``scheduling.x-k8s.io/pod-group`` naming a PodGroup of the
pod's namespace, and its QueueSort (priority, then the group's creation time, then the
pod's key), so that scheduler-plugins' ``manifests/coscheduling/scheduler-config.yaml``
loads unchanged.

The gang itself is not done at Permit, as upstream does it (members held there hold
their nodes: interleaved gangs deadlock, scheduler-plugins #114). The plugin is a
``PodGroupPlugin``: it tells the framework each pod's group and quorum (``minMember``),
and the framework holds members until the quorum exists and then places it in one
scheduling cycle (``framework/groupcycle.py``). Hence:

* ``permitWaitingTimeSeconds`` is accepted and validated but not needed: nothing waits
  at Permit; likewise ``scheduleTimeoutSeconds`` of a PodGroup;
* ``podGroupBackoffSeconds`` is how long a group that could not be placed waits before
  its next cycle (the framework's group backoff);
* ``podGroupRejectPercentage`` is accepted and validated but not needed: upstream's
  PostFilter uses it to decide whether to reject the members already waiting at
  Permit; here a failed group holds nothing to reject.

A pod naming a PodGroup that does not exist is rejected at PreFilter (upstream: at
Permit, with the same words, ``PodGroup not found``) and retried when a PodGroup is
added. ``minResources`` is checked at PreFilter as upstream does: the free resources of
all nodes, not counting the group's own pods, must cover it (``resource gap: ...``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    PodGroupInfo,
    PodGroupPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    QueueSortPlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup, pod_group_key, pod_group_name
from kubesched.objects.quantity import Quantity
from kubesched.objects.resources import Resource

__all__ = [
    "ERR_POD_GROUP_NOT_FOUND",
    "NAME",
    "Coscheduling",
    "CoschedulingArgs",
    "new",
]

NAME: Final = "Coscheduling"

#: Upstream's status when a pod names a PodGroup that does not exist.
ERR_POD_GROUP_NOT_FOUND: Final = "PodGroup not found"

#: How many pods' sort times are kept before the memo starts over.
_MAX_KEPT_TIMES = 100_000

_PERMIT_WAITING = "permitWaitingTimeSeconds"
_BACKOFF = "podGroupBackoffSeconds"
_REJECT_PERCENTAGE = "podGroupRejectPercentage"


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    """scheduler-plugins' ``CoschedulingArgs`` (v0.34.7 defaults)."""

    #: Accepted, not needed: no member waits at Permit (see the module docstring).
    permit_waiting_time_seconds: int = 60
    #: How long a group that could not be placed waits before its next cycle.
    pod_group_backoff_seconds: int = 0
    #: Accepted, not needed: a failed group holds nothing to reject.
    pod_group_reject_percentage: int = 10

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[CoschedulingArgs, list[FieldError]]:
        """Decode the wire form; unset fields take the defaults."""
        reader = ArgsReader(args, known=(_PERMIT_WAITING, _BACKOFF, _REJECT_PERCENTAGE))
        defaults = cls()
        decoded = cls(
            permit_waiting_time_seconds=reader.get(
                _PERMIT_WAITING, int, defaults.permit_waiting_time_seconds
            ),
            pod_group_backoff_seconds=reader.get(_BACKOFF, int, defaults.pod_group_backoff_seconds),
            pod_group_reject_percentage=reader.get(
                _REJECT_PERCENTAGE, int, defaults.pod_group_reject_percentage
            ),
        )
        return decoded, reader.errors

    def validate(self) -> list[FieldError]:
        """Every problem, as v0.34.7's ``ValidateCoschedulingArgs`` words it."""
        errors: list[FieldError] = []
        if self.permit_waiting_time_seconds < 0:
            errors.append(
                FieldError.invalid(
                    _PERMIT_WAITING, self.permit_waiting_time_seconds, "must be greater than 0"
                )
            )
        if self.pod_group_backoff_seconds < 0:
            errors.append(
                FieldError.invalid(
                    _BACKOFF, self.pod_group_backoff_seconds, "must be greater than 0"
                )
            )
        if not 0 <= self.pod_group_reject_percentage <= 100:
            errors.append(
                FieldError.invalid(
                    _REJECT_PERCENTAGE,
                    self.pod_group_reject_percentage,
                    "must be between 0 and 100",
                )
            )
        return errors


@functools.lru_cache(maxsize=4096)
def _epoch(timestamp: str) -> float | None:
    """An RFC 3339 time as seconds since the epoch (None when unset or unreadable)."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Coscheduling:
    """Names each pod's gang from its PodGroup; sorts the queue so members go together."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        #: Pod key → (the pod object, its sort time): QueueSort compares a pod many
        #: times while it waits; a new version of the pod is looked up again.
        self._times: dict[str, tuple[Pod, float]] = {}

    def _pod_group(self, pod: Pod) -> PodGroup | None:
        name = pod_group_name(pod)
        if name is None:
            return None
        return self.handle.cluster.pod_group(pod.namespace, name)

    # --- PodGroupPlugin -----------------------------------------------------------

    def pod_group(self, pod: Pod) -> PodGroupInfo | None:
        """The pod's PodGroup as the framework's gang: ``minMember`` is the quorum."""
        group = self._pod_group(pod)
        if group is None:
            return None
        return PodGroupInfo(group.key, group.min_member, self.args.pod_group_backoff_seconds)

    # --- QueueSort ----------------------------------------------------------------

    def _creation_time(self, info: QueuedPodInfo) -> float:
        """Upstream's ``GetCreationTimestamp``: the PodGroup's creation time for a
        member, else the pod's. When neither is known (files without timestamps), the
        time the pod entered the queue."""
        pod = info.pod
        cached = self._times.get(pod.key)
        if cached is not None and cached[0] is pod:
            return cached[1]
        group = self._pod_group(pod)
        stamp = _epoch(group.creation_timestamp) if group is not None else None
        if stamp is None:
            stamp = _epoch(pod.creation_timestamp)
        if stamp is None:
            # Not kept: the queue time changes when the pod is queued again.
            return info.timestamp
        if len(self._times) >= _MAX_KEPT_TIMES:
            self._times.clear()
        self._times[pod.key] = (pod, stamp)
        return stamp

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority first; then the older group (or pod); then by pod key."""
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        ta, tb = self._creation_time(a), self._creation_time(b)
        if ta == tb:
            return a.pod.key < b.pod.key
        return ta < tb

    # --- PreFilter ----------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """A pod naming a missing PodGroup waits for it; a group whose ``minResources``
        the whole cluster cannot cover waits too (both unresolvable by preemption)."""
        name = pod_group_name(pod)
        if name is None:
            return None, None
        group = self.handle.cluster.pod_group(pod.namespace, name)
        if group is None:
            return None, Status.unresolvable(ERR_POD_GROUP_NOT_FOUND)
        need = group.min_resources
        if need.milli_cpu or need.memory or need.ephemeral_storage or need.scalar:
            gap = _resource_gap(nodes, group)
            if gap:
                return None, Status.unresolvable(f"resource gap: {gap}")
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # --- EnqueueExtensions --------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A member waiting for its quorum may go when another member is added; a pod
        waiting for its PodGroup when the PodGroup is added or changed."""

        def same_group(pod: Pod, old: object, new: object) -> QueueingHint:
            mine = pod_group_key(pod)
            theirs = pod_group_key(new) if isinstance(new, Pod) else None
            if mine is not None and mine == theirs:
                return QueueingHint.QUEUE
            return QueueingHint.QUEUE_SKIP

        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD), same_group),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE)
            ),
        ]


def _resource_gap(nodes: Sequence[NodeInfo], group: PodGroup) -> str:
    """What the cluster lacks for ``minResources`` (and ``minMember`` pods), free room
    summed over the nodes without the group's own pods (upstream
    ``CheckClusterResource``); "" when nothing is lacking."""
    need = group.min_resources
    want: dict[str, int] = {
        "cpu": need.milli_cpu,
        "memory": need.memory,
        "ephemeral-storage": need.ephemeral_storage,
        "pods": group.min_member,
        **dict(need.scalar),
    }
    want = {k: v for k, v in want.items() if v > 0}
    for info in nodes:
        if not want:
            return ""
        if not info.has_node:
            continue
        free = _free(info, group.key)
        for name in list(want):
            left = want[name] - free.get(name, 0)
            if left <= 0:
                del want[name]
            else:
                want[name] = left
    if not want:
        return ""
    return ", ".join(f"{name}: {_amount(name, value)}" for name, value in sorted(want.items()))


def _amount(name: str, value: int) -> str:
    """An amount in the scheduler's units as a quantity is written (``1500m``, ``2Gi``)."""
    if name == "cpu":
        return str(Quantity(Fraction(value, 1000)))
    if name in ("memory", "ephemeral-storage"):
        return str(Quantity(Fraction(value), "BinarySI"))
    return str(value)


def _free(info: NodeInfo, group_key: str) -> dict[str, int]:
    """A node's free resources, counting its pods of ``group_key`` as free."""
    alloc: Resource = info.allocatable
    used = info.requested.copy()
    others = 0
    for pi in info.pods:
        if pod_group_key(pi.pod) == group_key:
            req = pi.pod.requests
            used.milli_cpu -= req.milli_cpu
            used.memory -= req.memory
            used.ephemeral_storage -= req.ephemeral_storage
            for name, value in req.scalar.items():
                used.scalar[name] = used.scalar.get(name, 0) - value
        else:
            others += 1
    free = {
        "cpu": alloc.milli_cpu - used.milli_cpu,
        "memory": alloc.memory - used.memory,
        "ephemeral-storage": alloc.ephemeral_storage - used.ephemeral_storage,
        "pods": alloc.allowed_pod_number - others,
    }
    for name, value in alloc.scalar.items():
        free[name] = value - used.scalar.get(name, 0)
    return free


# What upstream's ``var _ fwk.QueueSortPlugin = &Coscheduling{}`` lines state.
_queue_sort: type[QueueSortPlugin] = Coscheduling
_pre_filter: type[PreFilterPlugin] = Coscheduling
_pod_group_plugin: type[PodGroupPlugin] = Coscheduling
_enqueue: type[EnqueueExtensions] = Coscheduling


def new(args: Mapping[str, Any] | None, handle: Handle) -> Coscheduling:
    """Build the plugin from ``pluginConfig`` args; raises ArgsError listing every problem."""
    decoded, errors = CoschedulingArgs.from_mapping(args)
    errors.extend(decoded.validate())
    if errors:
        raise ArgsError(errors)
    return Coscheduling(decoded, handle)
