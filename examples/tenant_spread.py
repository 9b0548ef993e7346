"""TenantSpread: every pod belongs to a tenant, and a tenant's pods spread over nodes.

Tutorial 004's multi-tenant scheduler keeps a ``tenant -> node -> count`` map and sends
each pod to the node with the fewest pods of its tenant; a pod without a ``tenant`` label
is an error. As a plugin it needs no map of its own — the scheduler's snapshot already
knows which pods run where, including the ones it has just placed — and it splits into
the extension points the framework offers:

* PreFilter rejects a pod without a ``tenant`` label, once for the whole attempt, as
  UnschedulableAndUnresolvable: no node and no preemption can fix a missing label. The
  pod waits until its labels change (see ``events_to_register``); the FailedScheduling
  message reads ``0/8 nodes are available: pod has no tenant label.``
* Score counts the pods of the same tenant on each node, and NormalizeScore turns the
  counts around, so that the node with the fewest gets 100 and the one with the most 0.

Unlike upstream's PodTopologySpread this is a preference, not a constraint: a tenant may
still pile up on one node when no other fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ScorePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.objects.pod import Pod

NAME = "TenantSpread"

#: The label naming a pod's tenant.
TENANT_LABEL = "tenant"

#: PreFilter reason for a pod without the label.
ERR_REASON_NO_TENANT = "pod has no tenant label"


class TenantSpread:
    """Requires a tenant label; prefers the nodes with the fewest pods of that tenant."""

    name = NAME

    # --- PreFilter: the pod-wide check ------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Reject a pod without a tenant; otherwise let every node through (no result)."""
        if not pod.labels.get(TENANT_LABEL):
            return None, Status.unresolvable(ERR_REASON_NO_TENANT)
        return None, None

    def pre_filter_extensions(self) -> None:
        """Nothing to update when preemption adds or removes pods: PreFilter keeps no
        state about them."""
        return None

    # --- Score: fewest pods of the same tenant ----------------------------------------

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        """The number of pods on the node with the pod's tenant (raw, before normalizing)."""
        tenant = pod.labels.get(TENANT_LABEL)
        count = 0
        for info in node_info.pods:
            if info.pod.labels.get(TENANT_LABEL) == tenant:
                count += 1
        return count, None

    def score_extensions(self) -> TenantSpread:
        return self

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        """Reverse the counts into [0, 100]: the fewest pods of the tenant scores 100.

        With no pod of the tenant anywhere every node scores 100 (a tie, broken at random).
        """
        most = max((s.score for s in scores), default=0)
        for s in scores:
            if most == 0:
                s.score = MAX_NODE_SCORE
            else:
                # Integer arithmetic, as upstream's DefaultNormalizeScore: 0 pods -> 100,
                # the most pods -> 0, the rest in proportion between.
                s.score = MAX_NODE_SCORE - s.score * MAX_NODE_SCORE // most
        return None

    # --- requeueing ---------------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The only rejection is a missing label, so only a label change can help."""
        return (
            # Someone labels the pending pod with its tenant (``kubectl label pod ...``).
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
                is_schedulable_after_pod_change,
            ),
        )


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the updated pod is ``pod`` itself and now has a tenant."""
    if not isinstance(new, Pod):
        raise TypeError(f"expected Pod, but got {type(new).__name__}")  # the pod is queued
    if new.key != pod.key or (pod.uid and new.uid and new.uid != pod.uid):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE if new.labels.get(TENANT_LABEL) else QueueingHint.QUEUE_SKIP


_pre_filter: type[PreFilterPlugin] = TenantSpread
_score: type[ScorePlugin] = TenantSpread
_enqueue_extensions: type[EnqueueExtensions] = TenantSpread


def new(args: Mapping[str, Any] | None, handle: Handle) -> TenantSpread:
    """Build the plugin. It takes no arguments; any given are reported, not ignored."""
    unknown = [key for key in args or {} if key not in ("kind", "apiVersion")]
    if unknown:
        raise ArgsError([FieldError.invalid(key, key, "unknown field") for key in unknown])
    return TenantSpread()
