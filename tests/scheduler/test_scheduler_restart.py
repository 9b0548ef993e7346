"""An API server restart mid-run (``--data``: the objects survive in SQLite): the
scheduler's informers relist and rewatch, no pod is lost and none is bound twice."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from urllib.parse import urlparse

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.cli import scheduler_config
from kubesched.scheduler.scheduler import Scheduler
from tests.scheduler.test_scheduler_live import make_node, make_pod, until

NODE_CPU = 2
POD_CPU = "500m"
PODS_PER_BATCH = 4  # two batches fill both nodes exactly: 2 × 2 CPUs / 500m


def test_an_api_server_restart_loses_no_pod_and_binds_none_twice(tmp_path: Path) -> None:
    data = tmp_path / "data.db"
    kubeconfig = tmp_path / "kubeconfig"
    servers: list[ApiServerHandle] = [
        start_apiserver(kubeconfig_path=kubeconfig, data=data, bookmark_interval=0.2)
    ]
    port = urlparse(servers[0].url).port
    assert port is not None

    async def main() -> None:
        connection = load_kubeconfig([kubeconfig])
        async with (
            Client(connection, qps=1000, burst=1000) as client,
            Client(connection, qps=1000, burst=1000) as setup,
        ):
            scheduler = Scheduler(
                scheduler_config(None), in_tree_registry(), client, rng=random.Random(0)
            )
            task = asyncio.create_task(scheduler.run())
            try:
                await body(setup, scheduler)
            finally:
                scheduler.stop()
                await task

    async def all_pods(setup: Client) -> list[Pod]:
        return list((await setup.list(PODS, "default")).items)

    async def body(setup: Client, scheduler: Scheduler) -> None:
        await until(lambda: scheduler.synced, what="informers synced")
        for name in ("n1", "n2"):
            await setup.create(NODES.raw, make_node(name, cpu=str(NODE_CPU)))
        first = [f"a{i}" for i in range(PODS_PER_BATCH)]
        for name in first:
            await setup.create(PODS.raw, make_pod(name).req(POD_CPU).raw)
        await until(lambda: scheduler.bound == PODS_PER_BATCH, timeout=10, what="the first batch")
        second = [f"b{i}" for i in range(PODS_PER_BATCH)]
        for name in second:
            await setup.create(PODS.raw, make_pod(name).req(POD_CPU).raw)
        # Down while the second batch is being scheduled and bound.
        await asyncio.to_thread(servers[0].stop)
        await asyncio.sleep(0.3)
        servers.append(
            await asyncio.to_thread(
                start_apiserver,
                port=port,
                kubeconfig_path=kubeconfig,
                data=data,
                bookmark_interval=0.2,
            )
        )

        async def every_pod_bound() -> bool:
            pods = await all_pods(setup)
            return len(pods) == 2 * PODS_PER_BATCH and all(p.node_name for p in pods)

        await until(every_pod_bound, timeout=20, what="every pod bound after the restart")
        pods = await all_pods(setup)
        assert sorted(p.name for p in pods) == sorted(first + second)
        # None bound twice: the scheduler's successful bindings are exactly one per pod
        # (a second bind of a bound pod is refused by the server, and would not count).
        assert scheduler.bound <= 2 * PODS_PER_BATCH
        # The nodes are full, not overfull: the cache counted each pod once.
        per_node = {"n1": 0, "n2": 0}
        for p in pods:
            per_node[p.node_name] += 1
        assert per_node == {"n1": PODS_PER_BATCH, "n2": PODS_PER_BATCH}
        await until(lambda: scheduler.cache.assumed_count() == 0, what="bindings confirmed")
        assert scheduler.cache.pod_count() == 2 * PODS_PER_BATCH

    try:
        asyncio.run(asyncio.wait_for(main(), 40.0))
    finally:
        for server in servers:
            server.stop()
