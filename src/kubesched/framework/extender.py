"""How a scheduling attempt reaches the configured extenders, without knowing HTTP.

Upstream's scheduler holds ``[]fwk.Extender`` and its algorithm calls each extender's
verbs with the rules of ``schedule_one.go`` (interest, ignorable failures, order). Here
``framework`` must do no I/O and cannot import ``extender``, so the algorithm sees the
extenders as one :class:`Extenders` object; ``kubesched.extender.client_schedule``
implements it over HTTP, with those rules.

The verbs are **coroutines**: the live scheduler runs its scheduling cycle in the event
loop, and a call that may wait up to ``httpTimeout`` must not block the informers, the
binding tasks and the lease renewals meanwhile. So an attempt with extenders is
``await SchedulingAlgorithm.schedule(...)``, and PostFilter plugins that ask extenders
(DefaultPreemption's ``callExtenders``) implement :class:`ExtenderAwarePostFilter`.
Without extenders nothing here runs: the synchronous path is unchanged.

Any exception from a verb means a failure that upstream turns into an error of the
attempt (a non-ignorable extender that failed); the algorithm reports it as an Error
status with the exception's message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.pod import Pod

if TYPE_CHECKING:
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.interface import PostFilterResult, Status

__all__ = [
    "EXTENDER_NAME",
    "ExtenderAwarePostFilter",
    "Extenders",
    "NodeInfoLister",
    "Victims",
]

#: Recorded among a diagnosis' unschedulable plugins when extenders rejected nodes
#: (upstream ``framework.ExtenderName``); a profile with extenders registers every
#: cluster event for it, so such a pod is retried on any change.
EXTENDER_NAME = "Extender"


@dataclass
class Victims:
    """The pods preemption would evict on one node (upstream ``extenderv1.Victims``)."""

    pods: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


class NodeInfoLister(Protocol):
    """Finds a node's NodeInfo by name (``Snapshot`` is one); ``get`` raises KeyError."""

    def get(self, node_name: str) -> NodeInfo: ...


class Extenders(Protocol):
    """The configured extenders, in upstream's order (ignorable ones last)."""

    async def filter(
        self, pod: Pod, feasible: Sequence[NodeInfo], statuses: NodeToStatus
    ) -> list[NodeInfo]:
        """The feasible nodes every interested extender keeps (upstream
        ``findNodesThatPassExtenders``); each rejected node's status goes into
        ``statuses`` with the extender's reason."""
        ...

    async def prioritize(
        self, pod: Pod, nodes: Sequence[NodeInfo], totals: dict[str, int]
    ) -> dict[str, dict[str, int]]:
        """Add each interested extender's ``score × weight × 10`` to ``totals`` (node →
        total); returns, per extender, each node's scaled score. Never fails."""
        ...

    def preempts_for(self, pod: Pod) -> bool:
        """Whether an extender with a preemptVerb is interested in ``pod``."""
        ...

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        """The candidates (node → victims) the preempting extenders accept (upstream
        ``callExtenders``)."""
        ...

    async def bind(self, pod: Pod, node_name: str) -> bool:
        """Bind through the first interested binder; False when none binds the pod (the
        Bind plugins do then)."""
        ...


@runtime_checkable
class ExtenderAwarePostFilter(Protocol):
    """A PostFilter plugin that consults the handle's extenders (through ``await``);
    the framework calls it instead of ``post_filter`` when the profile has extenders."""

    async def post_filter_with_extenders(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus, extenders: Extenders
    ) -> tuple[PostFilterResult | None, Status | None]: ...
