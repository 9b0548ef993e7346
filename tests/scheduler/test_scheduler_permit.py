"""Permit's Wait in the live scheduler, against the real embedded API server: a gang
held at Permit (tests/scheduler/permit_gang.py) without holding up other pods, binds together, and
a group that never fills up is rejected by its timeout, reported and forgotten."""

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
from kubesched.config import load_config
from kubesched.framework.registry import Registry
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, PODS
from kubesched.plugins.registry import IN_TREE
from kubesched.scheduler.scheduler import Scheduler

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import permit_gang as gang  # noqa: E402  (a Permit plugin holding a gang, for these tests)

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: kubesched
    plugins:
      multiPoint:
        enabled: [{name: Gang}]
    pluginConfig:
      - name: Gang
        args: {timeoutSeconds: TIMEOUT}
"""


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def pod(name: str, group: str = "", quorum: int = 0) -> dict[str, Any]:
    labels = {}
    if group:
        labels = {gang.GROUP_LABEL: group, gang.MIN_AVAILABLE_LABEL: str(quorum)}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {"schedulerName": "kubesched", "containers": [{"name": "c", "image": "pause"}]},
    }


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


async def failures(client: Client, name: str) -> list[dict[str, Any]]:
    events = (await client.list(EVENTS, "default")).items
    return [
        e
        for e in events
        if e["involvedObject"].get("name") == name and e.get("reason") == "FailedScheduling"
    ]


def run(
    apiserver: ApiServerHandle, tmp_path: Path, body: Callable[..., Any], timeout: float
) -> None:
    """``body(client, scheduler)`` with the Gang profile (``timeout``: its Permit wait)
    running on two nodes."""
    config_path = tmp_path / "config.yaml"
    config_path.write_text(CONFIG.replace("TIMEOUT", str(timeout)))
    registry = Registry({**IN_TREE, "Gang": gang.new})

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            scheduler = Scheduler(load_config(config_path), registry, client, rng=random.Random(0))
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                await client.create(NODES.raw, node("n1"))
                await client.create(NODES.raw, node("n2"))
                await until(lambda: scheduler.cache.node_count() == 2, "nodes cached")
                await body(client, scheduler)
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_a_gang_is_held_at_permit_without_blocking_other_pods_then_binds(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        for name in ("g-0", "g-1"):
            await client.create(PODS.raw, pod(name, "g", 3))
        await until(lambda: len(scheduler.waiting_pods) == 2, "two members held")
        # Held pods are assumed: the next cycles go on, and a plain pod binds meanwhile.
        await client.create(PODS.raw, pod("plain"))
        assert await until(lambda: node_of(client, "plain"), "the plain pod bound")
        assert len(scheduler.waiting_pods) == 2
        assert not await node_of(client, "g-0") and not await node_of(client, "g-1")
        await client.create(PODS.raw, pod("g-2", "g", 3))

        async def all_bound() -> bool:
            return all([await node_of(client, f"g-{i}") for i in range(3)])

        await until(all_bound, "the whole group bound")
        assert len(scheduler.waiting_pods) == 0
        for i in range(3):
            assert not await failures(client, f"g-{i}")

    # A timeout that cannot expire during the test.
    run(apiserver, tmp_path, body, timeout=60)


def test_a_group_that_never_fills_up_times_out_and_is_forgotten(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(PODS.raw, pod("lonely", "h", 2))
        events = await until(lambda: failures(client, "lonely"), "FailedScheduling")
        assert events[0]["message"] == (
            "0/1 nodes are available: 1 rejected due to timeout after waiting 300ms at plugin Gang."
        )
        assert events[0]["type"] == "Warning"

        async def condition() -> dict[str, Any] | None:
            raw = await client.get(PODS.raw, "lonely", "default")
            conds = raw.get("status", {}).get("conditions", [])
            return next((c for c in conds if c["type"] == "PodScheduled"), None)

        cond = await until(condition, "the PodScheduled condition")
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        assert not await node_of(client, "lonely")
        # Forgotten: nothing is left assumed on the nodes, nothing is held.
        assert scheduler.cache.pod_count() == 0
        assert len(scheduler.waiting_pods) == 0
        assert scheduler.metrics.schedule_attempts.get("unschedulable", "kubesched") >= 1

    run(apiserver, tmp_path, body, timeout=0.3)


def test_deleting_a_held_pod_rejects_it_and_frees_its_place(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(PODS.raw, pod("held", "k", 2))
        await until(lambda: len(scheduler.waiting_pods) == 1, "the pod held")
        assert scheduler.cache.pod_count() == 1  # assumed on its node
        await client.delete(PODS.raw, "held", "default")
        await until(lambda: len(scheduler.waiting_pods) == 0, "the held pod rejected")
        await until(lambda: scheduler.cache.pod_count() == 0, "the assumed pod forgotten")

    # A timeout that cannot expire during the test.
    run(apiserver, tmp_path, body, timeout=60)


def test_a_bind_that_meets_a_pod_bound_meanwhile_is_reported_and_not_requeued(apiserver, tmp_path):
    """Upstream's handleBindingCycleError: a 409 from the bind (another binder was first)
    unreserves and forgets, records FailedScheduling and PodScheduled=False
    (SchedulerError), and leaves alone a pod the informer shows bound."""

    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(PODS.raw, pod("raced", "r", 2))
        await until(lambda: len(scheduler.waiting_pods) == 1, "the pod held at Permit")
        [assumed] = [w.pod for w in scheduler.waiting_pods]
        # A foreign binder binds it to the other node while we hold it.
        elsewhere = "n2" if assumed.node_name == "n1" else "n1"
        await client.bind("default", "raced", elsewhere)
        await client.create(PODS.raw, pod("mate", "r", 2))  # the group fills: both go
        assert await until(lambda: node_of(client, "mate"), "the other member bound")
        events = await until(lambda: failures(client, "raced"), "FailedScheduling")
        assert events[0]["message"].startswith("Binding rejected: ")
        assert "already assigned" in events[0]["message"]

        async def condition() -> dict[str, Any] | None:
            raw = await client.get(PODS.raw, "raced", "default")
            conds = raw.get("status", {}).get("conditions", [])
            found = next((c for c in conds if c["type"] == "PodScheduled"), None)
            return found if found and found["status"] == "False" else None

        cond = await until(condition, "PodScheduled=False")
        assert cond["reason"] == "SchedulerError"
        # Bound once, where the other binder put it; not requeued, nothing left assumed.
        assert await node_of(client, "raced") == elsewhere
        assert scheduler.queue.get("default/raced") is None
        assert scheduler.cache.assumed_count() == 0
        assert scheduler.metrics.schedule_attempts.get("error", "kubesched") == 1
        await asyncio.sleep(0.3)  # nothing retries it meanwhile
        assert scheduler.queue.get("default/raced") is None
        assert len(await failures(client, "raced")) == 1

    # A timeout that cannot expire during the test.
    run(apiserver, tmp_path, body, timeout=60)
