"""Listers of scheduler-plugins' custom resources over informers: the PodGroups and
ElasticQuotas (``scheduling.x-k8s.io/v1alpha1``) that gang and quota scheduling read
through the framework's ``ClusterLister``, for the live scheduler and the extender server.

The CRDs may not be installed: the informers are optional, so a server that does not serve
the group (404) leaves the stores empty instead of holding up the scheduler's start, and
the informer lists again later, picking the objects up once the CRDs are installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.kube.client import Client
from kubesched.kube.informer import Informer
from kubesched.kube.resources import ELASTIC_QUOTAS, POD_GROUPS
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.podgroup import PodGroup

__all__ = ["SchedulingListers"]


class SchedulingListers:
    """The PodGroup and ElasticQuota informers and the lookups over their stores (start
    the informers first; :attr:`scheduling_informers` lists them)."""

    def __init__(self, client: Client) -> None:
        self.pod_group_informer: Informer[PodGroup] = Informer(client, POD_GROUPS, optional=True)
        self.elastic_quota_informer: Informer[ElasticQuota] = Informer(
            client, ELASTIC_QUOTAS, optional=True
        )

    @property
    def scheduling_informers(self) -> list[Informer[Any]]:
        """Both informers, to start, sync and stop with the others."""
        return [self.pod_group_informer, self.elastic_quota_informer]

    def pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """The PodGroup ``namespace/name``, if known."""
        return self.pod_group_informer.get(f"{namespace}/{name}")

    def pod_groups(self) -> Sequence[PodGroup]:
        """Every PodGroup."""
        return self.pod_group_informer.list()

    def elastic_quotas(self) -> Sequence[ElasticQuota]:
        """Every ElasticQuota."""
        return self.elastic_quota_informer.list()
