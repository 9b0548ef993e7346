"""PodGroups and ElasticQuotas in the live scheduler: a plugin reads them through
``handle.cluster`` (the scheduler's informers), and their creation is a cluster event
that moves the pods it rejected — against the embedded API server with the CRDs
installed as the controllers install them."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from live_helpers import node_of, until

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import load_config
from kubesched.controllers.crds import install_crds, scheduling_crds
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PreFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.registry import Registry
from kubesched.framework.types import NodeInfo
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import ELASTIC_QUOTAS, NODES, POD_GROUPS, PODS
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup, pod_group_name
from kubesched.plugins.registry import IN_TREE
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: kubesched
    plugins:
      preFilter:
        enabled: [{name: NeedsGroupAndQuota}]
"""


class NeedsGroupAndQuota:
    """Lets a pod through only once its PodGroup (named by its label) and an
    ElasticQuota of its namespace exist."""

    name = "NeedsGroupAndQuota"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        group = pod_group_name(pod)
        if group and self.handle.cluster.pod_group(pod.namespace, group) is None:
            return None, Status.unresolvable(f"PodGroup {group} not found")
        if not any(q.namespace == pod.namespace for q in self.handle.cluster.elastic_quotas()):
            return None, Status.unresolvable("no ElasticQuota")
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD_GROUP, ActionType.ADD), group_added
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.ELASTIC_QUOTA, ActionType.ADD)),
        )


def group_added(pod: Pod, old: object, new: object) -> QueueingHint:
    assert isinstance(new, PodGroup)  # the informer's typed view
    if new.namespace == pod.namespace and new.name == pod_group_name(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any], handle: Handle) -> NeedsGroupAndQuota:
    return NeedsGroupAndQuota(handle)


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def test_creating_the_group_and_the_quota_moves_the_rejected_pod(
    apiserver: ApiServerHandle, tmp_path: Path
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    registry = Registry({**IN_TREE, "NeedsGroupAndQuota": new})

    async def main() -> None:
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            await install_crds(client, scheduling_crds())
            await client.create(NODES.raw, make_node("n1").capacity(cpu="4", pods="10").dict())
            scheduler = Scheduler(load_config(config), registry, client, rng=random.Random(0))
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                member = make_pod("m").pod_group("train").scheduler_name("kubesched").req(cpu="1")
                await client.create(PODS.raw, member.dict())
                await until(lambda: "default/m" in scheduler.queue.unschedulable, "m rejected")
                # Another group appearing is not this pod's: the hint skips it.
                await client.create(POD_GROUPS.raw, make_pod_group("other").dict())
                await until(lambda: scheduler.lister.pod_group("default", "other"), "other listed")
                # The informer ran its handlers as it stored the group: m was not moved.
                assert "default/m" in scheduler.queue.unschedulable
                await client.create(POD_GROUPS.raw, make_pod_group("train").min_member(1).dict())
                await until(
                    lambda: isinstance(scheduler.lister.pod_group("default", "train"), PodGroup),
                    "train listed",
                )
                # Still rejected, now for want of a quota, until one comes.
                await client.create(ELASTIC_QUOTAS.raw, make_elastic_quota("default").dict())
                assert await until(lambda: node_of(client, "m"), "m bound") == "n1"
                quotas = scheduler.lister.elastic_quotas()
                assert [type(q) for q in quotas] == [ElasticQuota]
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 30.0))
