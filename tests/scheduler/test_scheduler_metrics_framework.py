"""The framework's metrics in a live scheduler: every extension point timed, plugins
timed in the sampled cycles only, the queue's incoming pods by event, unschedulable
pods by plugin, the cache's size, preemption victims; and assumed pods that are never
confirmed expire when a TTL is set."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.framework.interface import Status
from kubesched.framework.registry import Registry
from kubesched.kube import Client
from kubesched.kube.resources import NODES, PODS
from kubesched.plugins.registry import IN_TREE
from kubesched.scheduler.scheduler import PLUGIN_METRICS_SAMPLE_PERCENT
from tests.scheduler.test_scheduler_live import (
    create_priority_classes,
    make_node,
    make_pod,
    node_of,
    pod_raw,
    running,
    until,
)
from tests.scheduler.test_scheduler_metrics import parse, series_with, value

POINT = "scheduler_framework_extension_point_duration_seconds_count"
PLUGIN = "scheduler_plugin_execution_duration_seconds_count"


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


async def bind_all(client: Client, names: list[str]) -> None:
    async def all_bound() -> bool:
        return all([node_of(await pod_raw(client, n)) for n in names])

    await until(all_bound, what="pods bound")


def test_extension_points_plugins_queue_and_cache_metrics(apiserver: ApiServerHandle):
    async def main() -> None:
        async with running(apiserver) as (client, scheduler):
            # Every cycle sampled, so that each plugin's timings must show.
            scheduler.sample_plugin_metrics = lambda: True  # type: ignore[method-assign]
            for n in ("node-a", "node-b"):
                await client.create(NODES.raw, make_node(n))
            await until(lambda: scheduler.cache.node_count() == 2)
            names = ["p0", "p1"]
            for name in names:
                await client.create(PODS.raw, make_pod(name).req("500m").raw)
            await bind_all(client, names)
            await client.create(PODS.raw, make_pod("huge").req("64").raw)
            await until(lambda: scheduler.queue.counts()["unschedulable"] == 1, what="huge")
            await until(lambda: scheduler.cache.assumed_count() == 0, what="binds confirmed")
            _, samples = parse(scheduler.metrics.render())

            def point(ext: str, status: str = "Success") -> float | None:
                return value(samples, POINT, extension_point=ext, status=status, profile=OURS)

            # PreFilter runs for all three; both nodes fit the small pods, so they are
            # scored; the huge pod fails Filter and never reaches Reserve.
            assert point("PreFilter") == 3
            for ext in ("PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"):
                assert point(ext) == 2, ext
            assert sum(series_with(samples, PLUGIN, plugin="NodeResourcesFit")) >= 2 * 3
            for ext, plugin in (
                ("PreFilter", "NodeResourcesFit"),
                ("Filter", "NodeResourcesFit"),
                ("Score", "NodeResourcesBalancedAllocation"),
                ("Bind", "DefaultBinder"),
            ):
                got = value(samples, PLUGIN, plugin=plugin, extension_point=ext, status="Success")
                assert got is not None and got >= 2, (ext, plugin)
            incoming = "scheduler_queue_incoming_pods_total"
            assert value(samples, incoming, queue="active", event="PodAdd") == 3
            assert (
                value(samples, incoming, queue="unschedulable", event="ScheduleAttemptFailure") == 1
            )
            unschedulable = "scheduler_unschedulable_pods"
            assert value(samples, unschedulable, plugin="NodeResourcesFit", profile=OURS) == 1
            size = "scheduler_scheduler_cache_size"
            assert value(samples, size, type="nodes") == 2
            assert value(samples, size, type="pods") == 2
            assert value(samples, size, type="assumed_pods") == 0

    asyncio.run(asyncio.wait_for(main(), 30.0))


OURS = "kubesched"


def test_plugins_are_timed_only_in_sampled_cycles(apiserver: ApiServerHandle):
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10  # upstream's pluginMetricsSamplePercent

    async def main() -> None:
        async with running(apiserver) as (client, scheduler):
            scheduler.sample_plugin_metrics = lambda: False  # type: ignore[method-assign]
            await client.create(NODES.raw, make_node("node-a"))
            await until(lambda: scheduler.cache.node_count() == 1)
            await client.create(PODS.raw, make_pod("p").raw)
            await bind_all(client, ["p"])
            _, samples = parse(scheduler.metrics.render())
            assert value(samples, POINT, extension_point="Bind", status="Success", profile=OURS)
            assert not series_with(samples, PLUGIN)

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_preemption_victims_are_counted(apiserver: ApiServerHandle):
    async def main() -> None:
        async with running(apiserver) as (client, scheduler):
            await create_priority_classes(client)
            await client.create(NODES.raw, make_node("n", cpu="1"))
            await until(lambda: scheduler.cache.node_count() == 1)
            await client.create(
                PODS.raw, make_pod("low").req("1").priority_class("low").grace(0).raw
            )
            await bind_all(client, ["low"])
            await client.create(
                PODS.raw, make_pod("high").req("1").priority_class("high").grace(0).raw
            )
            await until(lambda: scheduler.metrics.preemption_victims.count() == 1, what="a victim")
            _, samples = parse(scheduler.metrics.render())
            assert value(samples, "scheduler_preemption_victims_bucket", le="1") == 1

    asyncio.run(asyncio.wait_for(main(), 30.0))


class LostBinder:
    """A Bind plugin whose bindings never reach the API server (a lost write): the pod
    stays assumed, bound as far as the scheduler knows, and is never confirmed."""

    name = "DefaultBinder"

    def bind(self, state, pod, node_name) -> Status | None:
        return None


def test_an_assumed_pod_never_confirmed_expires_after_the_ttl(apiserver: ApiServerHandle):
    registry = Registry({**IN_TREE, "DefaultBinder": lambda args, handle: LostBinder()})

    async def main() -> None:
        async with running(apiserver, registry=registry) as (client, scheduler):
            assert scheduler.cache.ttl == 0  # upstream's durationToExpireAssumedPod
            scheduler.cache.ttl = 0.2
            await client.create(NODES.raw, make_node("n"))
            await until(lambda: scheduler.cache.node_count() == 1)
            await client.create(PODS.raw, make_pod("p").req("1").raw)
            await until(lambda: scheduler.bound == 1, what="the binding cycle")
            assert scheduler.cache.assumed_count() == 1
            # The cleanup loop runs every second: the pod expires within the next runs.
            await until(lambda: scheduler.cache.pod_count() == 0, timeout=5, what="expiry")
            assert not node_of(await pod_raw(client, "p"))

    asyncio.run(asyncio.wait_for(main(), 30.0))
