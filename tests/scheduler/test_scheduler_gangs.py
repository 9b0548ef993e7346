"""Gangs in the live scheduler against the real embedded API server: a quorum is placed in
one cycle or not at all, nothing waits at Permit, and a gang that cannot fit holds
nothing and blocks no one. The groups come from examples/gang.py (two labels)."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from live_helpers import node_of, until

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import loads_config
from kubesched.framework.registry import Registry
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, PODS, PRIORITY_CLASSES
from kubesched.plugins.registry import IN_TREE
from kubesched.scheduler.scheduler import Scheduler

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

import gang  # noqa: E402  (the example plugin, imported as the CLI imports it)

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: kubesched
    plugins:
      multiPoint:
        enabled: [{name: Gang}]
"""


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def pod(
    name: str, cpu: str, group: str = "", quorum: int = 0, high: bool = False
) -> dict[str, Any]:
    labels = {}
    if group:
        labels = {gang.GROUP_LABEL: group, gang.MIN_AVAILABLE_LABEL: str(quorum)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {
            "schedulerName": "kubesched",
            **({"priorityClassName": "high"} if high else {}),
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


async def failures(client: Client, name: str) -> list[str]:
    events = (await client.list(EVENTS, "default")).items
    return [
        str(e.get("message", e.get("note", "")))
        for e in events
        if e["involvedObject"].get("name") == name and e.get("reason") == "FailedScheduling"
    ]


async def condition(client: Client, name: str) -> dict[str, Any] | None:
    raw = await client.get(PODS.raw, name, "default")
    conds = raw.get("status", {}).get("conditions", [])
    return next((c for c in conds if c["type"] == "PodScheduled"), None)


def run(apiserver: ApiServerHandle, nodes: int, body: Callable[..., Any]) -> None:
    """``body(client, scheduler)`` with the Gang profile on ``nodes`` nodes of 2 CPUs."""
    registry = Registry({**IN_TREE, "Gang": gang.new})

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            config = loads_config(CONFIG, "config.yaml")
            scheduler = Scheduler(config, registry, client, rng=random.Random(0))
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                for i in range(nodes):
                    await client.create(NODES.raw, node(f"n{i}"))
                await until(lambda: scheduler.cache.node_count() == nodes, "nodes cached")
                await body(client, scheduler)
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 40.0))


def test_a_quorum_is_placed_whole_or_not_at_all(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        # Room for two of the three members: none is bound, each says why.
        for i in range(3):
            await client.create(PODS.raw, pod(f"g-{i}", "2", "g", 3))
        messages = await until(lambda: failures(client, "g-2"), "FailedScheduling")
        assert messages[0].startswith(
            "pod group default/g (minMember 3): 2 of the 3 members needed could be placed "
            "(3 pending), so none was; member default/g-"
        )
        assert "Insufficient cpu" in messages[0]
        for i in range(3):
            assert not await node_of(client, f"g-{i}")
            cond = await until(lambda i=i: condition(client, f"g-{i}"), "PodScheduled")
            assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
            assert cond["message"].startswith("pod group default/g (minMember 3)")
        # Nothing is held: no pod assumed, nothing waits at Permit.
        assert scheduler.cache.assumed_count() == 0 and len(scheduler.waiting_pods) == 0
        # A third node: the whole group goes.
        await client.create(NODES.raw, node("n2"))

        async def all_bound() -> bool:
            return all([await node_of(client, f"g-{i}") for i in range(3)])

        await until(all_bound, "the whole group bound")
        bound = {await node_of(client, f"g-{i}") for i in range(3)}
        assert bound == {"n0", "n1", "n2"}

    run(apiserver, 2, body)


def test_members_wait_holding_nothing_until_the_quorum_exists(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        for i in range(2):
            await client.create(PODS.raw, pod(f"w-{i}", "1", "w", 3))

        async def gated() -> dict[str, Any] | None:
            cond = await condition(client, "w-1")
            return cond if cond and "2 of 3 members exist" in cond["message"] else None

        cond = await until(gated, "the waiting condition")
        assert cond["message"] == (
            "pod group default/w: 2 of 3 members exist; waiting for the rest before "
            "scheduling any of them"
        )
        assert scheduler.cache.pod_count() == 0
        await client.create(PODS.raw, pod("w-2", "1", "w", 3))

        async def all_bound() -> bool:
            return all([await node_of(client, f"w-{i}") for i in range(3)])

        await until(all_bound, "the group bound once complete")

    run(apiserver, 2, body)


def test_interleaved_gangs_do_not_deadlock(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        # Each gang needs both nodes whole; they arrive interleaved.
        for i in range(2):
            await client.create(PODS.raw, pod(f"a-{i}", "2", "a", 2))
            await client.create(PODS.raw, pod(f"b-{i}", "2", "b", 2))

        async def one_gang_bound() -> str:
            a = [await node_of(client, f"a-{i}") for i in range(2)]
            b = [await node_of(client, f"b-{i}") for i in range(2)]
            if all(a):
                return "a" if not any(b) else "both"
            if all(b):
                return "b" if not any(a) else "both"
            return ""

        winner = await until(one_gang_bound, "one gang bound whole")
        assert winner in ("a", "b")
        loser = "b" if winner == "a" else "a"

        async def told() -> list[str]:
            return [m for m in await failures(client, f"{loser}-0") if "(minMember 2)" in m]

        messages = await until(told, "the other gang told")
        assert messages[-1].startswith(f"pod group default/{loser} (minMember 2): ")
        assert not await node_of(client, f"{loser}-0") and not await node_of(client, f"{loser}-1")
        # The losing gang holds nothing: once the winner's bindings are confirmed, no pod
        # is assumed, and only the winner's two pods are on the nodes.
        await until(lambda: scheduler.cache.assumed_count() == 0, "no pod assumed")
        assert scheduler.cache.pod_count() == 2

    run(apiserver, 2, body)


def test_a_gang_that_cannot_fit_does_not_block_later_pods(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"}
        await client.create(
            PRIORITY_CLASSES.raw, {**high, "metadata": {"name": "high"}, "value": 100}
        )
        for i in range(3):
            await client.create(PODS.raw, pod(f"big-{i}", "2", "big", 3, high=True))

        async def told() -> list[str]:
            return [m for m in await failures(client, "big-0") if "(minMember 3)" in m]

        await until(told, "the big gang failed")
        await client.create(PODS.raw, pod("small", "1"))
        assert await until(lambda: node_of(client, "small"), "the small pod bound")
        assert not await node_of(client, "big-0")

    run(apiserver, 2, body)


def test_members_beyond_the_quorum_are_scheduled_one_by_one(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        # minMember 2 of 5 one-CPU members on 4 CPUs: the quorum, then two more.
        for i in range(5):
            await client.create(PODS.raw, pod(f"m-{i}", "1", "m", 2))

        async def bound() -> list[str]:
            return [n for n in [await node_of(client, f"m-{i}") for i in range(5)] if n]

        await until(lambda: _count(bound, 4), "four members bound")
        await until(lambda: _any_failure(client, 5), "the fifth member told")

    run(apiserver, 2, body)


async def _count(bound: Callable[[], Any], n: int) -> bool:
    return len(await bound()) == n


async def _any_failure(client: Client, members: int) -> bool:
    for i in range(members):
        if not await node_of(client, f"m-{i}"):
            messages = await failures(client, f"m-{i}")
            return bool(messages) and messages[-1].startswith("0/2 nodes are available")
    return False


async def _priority_classes(client: Client) -> None:
    kind = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"}
    await client.create(PRIORITY_CLASSES.raw, {**kind, "metadata": {"name": "high"}, "value": 100})


def filler(name: str, node_name: str) -> dict[str, Any]:
    """A low-priority pod bound to ``node_name``, deleted at once when evicted."""
    raw = pod(name, "1")
    raw["spec"]["nodeName"] = node_name
    raw["spec"]["terminationGracePeriodSeconds"] = 0
    return raw


def test_a_gang_preempts_only_when_its_whole_quorum_then_fits(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await _priority_classes(client)
        for n in range(2):
            for i in range(2):
                await client.create(PODS.raw, filler(f"low-{n}-{i}", f"n{n}"))
        await until(lambda: scheduler.cache.pod_count() == 4, "the fillers cached")
        # Three 2-CPU members cannot fit on two 2-CPU nodes whatever is evicted: nobody is.
        for i in range(3):
            await client.create(PODS.raw, pod(f"big-{i}", "2", "big", 3, high=True))

        async def told() -> list[str]:
            return [m for m in await failures(client, "big-0") if "(minMember 3)" in m]

        messages = await until(told, "the big gang told")
        assert "none was preempted" in messages[0]
        assert scheduler.cache.pod_count() == 4
        for i in range(3):
            await client.delete(PODS.raw, f"big-{i}", "default")
        # Two of them fit once the four fillers go: they are evicted, the gang binds.
        for i in range(2):
            await client.create(PODS.raw, pod(f"g-{i}", "2", "g", 2, high=True))

        async def all_bound() -> bool:
            return all([await node_of(client, f"g-{i}") for i in range(2)])

        await until(all_bound, "the gang bound after preemption", timeout=20)
        for n in range(2):
            for i in range(2):
                assert not await node_of(client, f"low-{n}-{i}")

    run(apiserver, 2, body)
