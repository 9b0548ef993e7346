"""Coscheduling in the live scheduler, on the embedded API server with the PodGroup CRD:
scheduler-plugins' configuration, PodGroups and labelled pods as users write them; a
gang is placed whole or waits holding nothing, and a pod whose PodGroup comes later
waits for it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from live_helpers import node_of, until

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import loads_config
from kubesched.controllers.crds import install_crds, scheduling_crds
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, POD_GROUPS, PODS
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.scheduling_wrappers import make_pod_group

# The shape of scheduler-plugins' manifests/coscheduling/scheduler-config.yaml.
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
"""


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def pod(name: str, group: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {POD_GROUP_LABEL: group}},
        "spec": {
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]
        },
    }


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
    }


async def messages(client: Client, name: str) -> list[str]:
    events = (await client.list(EVENTS, "default")).items
    return [
        str(e.get("message", e.get("note", "")))
        for e in events
        if e["involvedObject"].get("name") == name and e.get("reason") == "FailedScheduling"
    ]


def run(apiserver: ApiServerHandle, body: Callable[..., Any]) -> None:
    """``body(client, scheduler)`` with scheduler-plugins' profile on two 2-CPU nodes."""

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            await install_crds(client, scheduling_crds())
            config = loads_config(CONFIG, "scheduler-config.yaml")
            scheduler = Scheduler(config, in_tree_registry(), client, rng=random.Random(0))
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                for i in range(2):
                    await client.create(NODES.raw, node(f"n{i}"))
                await until(lambda: scheduler.cache.node_count() == 2, "nodes cached")
                await body(client, scheduler)
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 40.0))


def test_a_pod_group_is_placed_whole_and_a_too_big_one_holds_nothing(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(POD_GROUPS.raw, make_pod_group("big").min_member(5).raw)
        await client.create(POD_GROUPS.raw, make_pod_group("train").min_member(3).raw)
        await until(lambda: scheduler.lister.pod_group("default", "train"), "groups listed")
        for i in range(5):
            await client.create(PODS.raw, pod(f"big-{i}", "big"))

        async def big_told() -> list[str]:
            return [m for m in await messages(client, "big-0") if "(minMember 5)" in m]

        told = await until(big_told, "the big group told")
        assert told[0].startswith(
            "pod group default/big (minMember 5): 4 of the 5 members needed could be placed "
            "(5 pending), so none was; member default/big-4: 0/2 nodes are available: "
            "2 Insufficient cpu."
        )
        assert scheduler.cache.pod_count() == 0
        for i in range(3):
            await client.create(PODS.raw, pod(f"train-{i}", "train"))

        async def train_bound() -> bool:
            return all([await node_of(client, f"train-{i}") for i in range(3)])

        await until(train_bound, "the train group bound")
        assert not any([await node_of(client, f"big-{i}") for i in range(5)])

    run(apiserver, body)


def test_pods_wait_for_their_pod_group_then_go_together(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        for i in range(2):
            await client.create(PODS.raw, pod(f"late-{i}", "late"))

        async def not_found() -> list[str]:
            return [m for m in await messages(client, "late-1") if "PodGroup not found" in m]

        told = await until(not_found, "PodGroup not found")
        assert told[0] == (
            "0/2 nodes are available: PodGroup not found. preemption: 0/2 nodes are "
            "available: 2 Preemption is not helpful for scheduling."
        )
        await client.create(POD_GROUPS.raw, make_pod_group("late").min_member(2).raw)

        async def bound() -> bool:
            return all([await node_of(client, f"late-{i}") for i in range(2)])

        await until(bound, "the group bound once its PodGroup exists")

    run(apiserver, body)
