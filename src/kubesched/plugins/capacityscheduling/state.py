"""What CapacityScheduling's PreFilter leaves in the cycle state for PostFilter.

Two entries, as upstream's: the quota accounts of the cycle (cloned with the state, so
that preemption's dry runs can remove and add pods in them), and the pod's request with
the requests of the pods nominated before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubesched.framework.cycle_state import CycleState
from kubesched.objects.resources import Resource
from kubesched.plugins import names
from kubesched.plugins.capacityscheduling.elasticquota import ElasticQuotaInfos

__all__ = [
    "PRE_FILTER_STATE_KEY",
    "QUOTA_SNAPSHOT_KEY",
    "PreFilterState",
    "QuotaSnapshot",
    "read_pre_filter_state",
    "read_quota_state",
]

PRE_FILTER_STATE_KEY: Final = "PreFilter" + names.CAPACITY_SCHEDULING
#: Upstream's key ``ElasticQuotaSnapshot``, prefixed so that no other plugin's collides.
QUOTA_SNAPSHOT_KEY: Final = names.CAPACITY_SCHEDULING + "/ElasticQuotaSnapshot"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's request, and the requests it is checked with (upstream
    ``PreFilterState``)."""

    pod_request: Resource
    #: The pod's request plus those of the pods nominated in its namespace with at least
    #: its priority: they go first within its quota.
    nominated_in_quota: Resource
    #: ``nominated_in_quota`` plus the requests of the pods nominated in other quota
    #: namespaces within their min: they go first within the sum of every min.
    nominated_all: Resource

    def clone(self) -> PreFilterState:
        return self  # never changed after PreFilter


class QuotaSnapshot:
    """The cycle's quota accounts (upstream ``ElasticQuotaSnapshotState``)."""

    __slots__ = ("infos",)

    def __init__(self, infos: ElasticQuotaInfos) -> None:
        self.infos = infos

    def clone(self) -> QuotaSnapshot:
        return QuotaSnapshot(self.infos.clone())


def read_quota_state(state: CycleState) -> ElasticQuotaInfos | None:
    """The accounts PreFilter wrote, or None when it did not run."""
    snapshot = state.get(QUOTA_SNAPSHOT_KEY)
    return snapshot.infos if isinstance(snapshot, QuotaSnapshot) else None


def read_pre_filter_state(state: CycleState) -> PreFilterState | None:
    """PreFilter's requests, or None when it did not run."""
    data = state.get(PRE_FILTER_STATE_KEY)
    return data if isinstance(data, PreFilterState) else None
