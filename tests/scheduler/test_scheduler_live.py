"""The live scheduler against the real embedded API server, started in-process.

Nodes and pods are created through our kube client; the Scheduler runs in the test's
event loop exactly as ``kubesched run`` runs it. Every wait polls with a deadline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import KubeSchedulerConfiguration, default_config
from kubesched.framework.interface import Status
from kubesched.framework.registry import Registry
from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, PODS, PRIORITY_CLASSES
from kubesched.objects.pod import Pod
from kubesched.plugins import defaultbinder
from kubesched.plugins.registry import IN_TREE, in_tree_registry
from kubesched.scheduler.cli import scheduler_config
from kubesched.scheduler.scheduler import Scheduler

T = TypeVar("T")
OURS = "kubesched"


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    """A fresh API server per test: nodes are cluster-wide and must not leak."""
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


# --- builders -------------------------------------------------------------------------


@dataclasses.dataclass
class PodWrapper:
    """A fluent pod manifest builder (upstream ``st.MakePod()``)."""

    raw: dict[str, Any]

    def scheduler(self, name: str) -> PodWrapper:
        self.raw["spec"]["schedulerName"] = name
        return self

    def req(self, cpu: str) -> PodWrapper:
        self.raw["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
        return self

    def priority_class(self, name: str) -> PodWrapper:
        self.raw["spec"]["priorityClassName"] = name
        return self

    def grace(self, seconds: int) -> PodWrapper:
        self.raw["spec"]["terminationGracePeriodSeconds"] = seconds
        return self


def make_pod(name: str) -> PodWrapper:
    return PodWrapper(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": OURS, "containers": [{"name": "c", "image": "pause"}]},
        }
    )


def make_node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


# --- harness --------------------------------------------------------------------------


def run(
    body: Callable[[Client, Scheduler], Awaitable[None]],
    apiserver: ApiServerHandle,
    config: KubeSchedulerConfiguration | None = None,
    registry: Registry | None = None,
) -> None:
    """Run ``body(client, scheduler)`` with a started scheduler; 30 s at most (a
    deadline for a loaded machine, not a speed check)."""

    async def main() -> None:
        async with running(apiserver, config, registry) as (client, scheduler):
            await body(client, scheduler)

    asyncio.run(asyncio.wait_for(main(), 30.0))


@asynccontextmanager
async def running(
    apiserver: ApiServerHandle,
    config: KubeSchedulerConfiguration | None = None,
    registry: Registry | None = None,
) -> AsyncIterator[tuple[Client, Scheduler]]:
    connection = load_kubeconfig([apiserver.kubeconfig_path])
    async with Client(connection, qps=1000, burst=1000) as client:
        scheduler = Scheduler(
            config or scheduler_config(None),
            registry or in_tree_registry(),
            client,
            rng=random.Random(0),
        )
        task = asyncio.create_task(scheduler.run())
        await until(lambda: all(i.has_synced.is_set() for i in scheduler.informers))
        try:
            yield client, scheduler
        finally:
            scheduler.stop()
            await task


async def until(check: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll ``check`` (plain or async) until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


async def pod_raw(client: Client, name: str) -> dict[str, Any] | None:
    try:
        return await client.get(PODS.raw, name, "default")
    except NotFound:
        return None


async def events_for(client: Client, name: str, reason: str) -> list[dict[str, Any]]:
    events = (await client.list(EVENTS, "default")).items
    return [
        e for e in events if e["involvedObject"].get("name") == name and e.get("reason") == reason
    ]


async def bound_to(client: Client, name: str) -> str:
    return node_of(await pod_raw(client, name))


async def create_priority_classes(client: Client) -> None:
    for name, value in (("low", 10), ("high", 1000)):
        pc = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        await client.create(PRIORITY_CLASSES.raw, pc)


def node_of(raw: dict[str, Any] | None) -> str:
    return (raw or {}).get("spec", {}).get("nodeName", "")


# --- tests ----------------------------------------------------------------------------


def test_pods_with_our_scheduler_name_are_bound_and_others_left_alone(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        for n in ("node-a", "node-b"):
            await client.create(NODES.raw, make_node(n))
        # The foreign pod first: once ours are bound, the informer has seen it too.
        await client.create(PODS.raw, make_pod("theirs").scheduler("default-scheduler").raw)
        names = [f"p{i}" for i in range(4)]
        for name in names:
            await client.create(PODS.raw, make_pod(name).req("500m").raw)

        async def all_bound() -> bool:
            return all([node_of(await pod_raw(client, n)) for n in names])

        await until(all_bound, what="our pods bound")
        for name in names:
            host = node_of(await pod_raw(client, name))
            assert host in ("node-a", "node-b")
            events = await until(lambda name=name: events_for(client, name, "Scheduled"))
            assert events[0]["message"] == f"Successfully assigned default/{name} to {host}"
            assert events[0]["type"] == "Normal"
        theirs = await pod_raw(client, "theirs")
        assert node_of(theirs) == ""
        assert not (theirs or {}).get("status", {}).get("conditions")
        assert await events_for(client, "theirs", "FailedScheduling") == []
        assert scheduler.bound == len(names)

    run(body, apiserver)


def test_impossible_pod_is_reported_then_lands_on_a_new_node_that_fits(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(NODES.raw, make_node("small", cpu="1"))
        await client.create(PODS.raw, make_pod("big").req("3").raw)

        events = await until(lambda: events_for(client, "big", "FailedScheduling"))
        message = events[0]["message"]
        assert message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
        assert events[0]["type"] == "Warning"

        async def condition() -> dict[str, Any] | None:
            raw = await pod_raw(client, "big")
            for c in (raw or {}).get("status", {}).get("conditions", []):
                if c["type"] == "PodScheduled":
                    return c
            return None

        cond = await until(condition, what="the PodScheduled condition")
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "False",
            "Unschedulable",
            message,
        )

        await client.create(NODES.raw, make_node("large", cpu="8"))

        async def landed() -> str:
            return node_of(await pod_raw(client, "big"))

        assert await until(landed, what="the pod bound to the new node") == "large"

    run(body, apiserver)


def test_the_pod_scheduled_condition_is_written_only_when_it_changes(apiserver):
    # Upstream's updatePod: a retry that fails for the same reason writes nothing; a new
    # message is written but keeps lastTransitionTime, since the status stays False.
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(NODES.raw, make_node("small", cpu="1"))
        await client.create(PODS.raw, make_pod("big").req("3").raw)

        async def condition() -> dict[str, Any] | None:
            raw = await pod_raw(client, "big")
            for c in (raw or {}).get("status", {}).get("conditions", []):
                if c["type"] == "PodScheduled":
                    return {"rv": raw["metadata"]["resourceVersion"], **c}  # type: ignore[index]
            return None

        first = await until(condition, what="the PodScheduled condition")

        def failures() -> float:
            return scheduler.metrics.schedule_attempts.get("unschedulable", "kubesched")

        for attempt in (2.0, 3.0):
            await until(lambda: scheduler.queue.counts()["unschedulable"] == 1)
            scheduler.queue.activate([Pod("default", "big")])
            await until(lambda a=attempt: failures() >= a, what=f"failure {attempt}")
        await until(lambda: scheduler.queue.counts()["unschedulable"] == 1)
        assert await condition() == first  # same resourceVersion: no write

        # Not enough for the pod, so NodeResourcesFit's hint skips the event: activate it.
        await client.create(NODES.raw, make_node("medium", cpu="2"))
        await until(lambda: scheduler.cache.node_info("medium") is not None, what="the new node")
        scheduler.queue.activate([Pod("default", "big")])

        async def rewritten() -> dict[str, Any] | None:
            now = await condition()
            return now if now and now["message"] != first["message"] else None

        second = await until(rewritten, what="the new message")
        assert second["message"].startswith("0/2 nodes are available")
        assert second["lastTransitionTime"] == first["lastTransitionTime"]

    run(body, apiserver)


def test_higher_priority_pod_preempts_a_lower_priority_one(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await create_priority_classes(client)
        await client.create(NODES.raw, make_node("only", cpu="2"))
        victim = make_pod("victim").req("2").priority_class("low").grace(0).raw
        await client.create(PODS.raw, victim)

        async def victim_bound() -> str:
            return node_of(await pod_raw(client, "victim"))

        await until(victim_bound, what="the victim bound")
        await client.create(PODS.raw, make_pod("preemptor").req("2").priority_class("high").raw)

        async def victim_gone() -> bool:
            return await pod_raw(client, "victim") is None

        await until(victim_gone, what="the victim deleted")

        async def preemptor_bound() -> str:
            return node_of(await pod_raw(client, "preemptor"))

        assert await until(preemptor_bound, what="the preemptor bound") == "only"
        preempted = await until(lambda: events_for(client, "victim", "Preempted"))
        preemptor = await pod_raw(client, "preemptor")
        assert preemptor is not None
        uid = preemptor["metadata"]["uid"]
        # Upstream's PreemptPod: the event regards the victim, relates the preemptor, and
        # is reported by the preemptor's profile.
        assert preempted[0]["message"] == f"Preempted by pod {uid} on node only"
        assert preempted[0]["related"]["name"] == "preemptor"
        assert preempted[0]["related"]["uid"] == uid
        assert preempted[0]["reportingComponent"] == "kubesched"

    run(body, apiserver)


def test_a_terminating_victim_keeps_the_preemptor_nominated_until_it_is_gone(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await create_priority_classes(client)
        await client.create(NODES.raw, make_node("only", cpu="2"))
        await client.create(
            PODS.raw, make_pod("victim").req("2").priority_class("low").grace(1).raw
        )
        await until(lambda: bound_to(client, "victim"), what="the victim bound")
        await client.create(PODS.raw, make_pod("preemptor").req("2").priority_class("high").raw)

        async def nominated() -> str:
            raw = await pod_raw(client, "preemptor")
            return (raw or {}).get("status", {}).get("nominatedNodeName", "")

        assert await until(nominated, what="status.nominatedNodeName") == "only"
        victim = await pod_raw(client, "victim")
        assert victim is not None and victim["metadata"].get("deletionTimestamp")
        disruption = [
            c for c in victim["status"].get("conditions", []) if c["type"] == "DisruptionTarget"
        ]
        assert [(c["status"], c["reason"], c["message"]) for c in disruption] == [
            (
                "True",
                "PreemptionByScheduler",
                "kubesched: preempting to accommodate a higher priority pod",
            )
        ]
        assert await bound_to(client, "preemptor") == ""
        failed = await events_for(client, "preemptor", "FailedScheduling")
        assert failed[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
        assert await until(lambda: bound_to(client, "preemptor"), what="the preemptor") == "only"
        assert await pod_raw(client, "victim") is None

    run(body, apiserver)


def test_each_profile_schedules_the_pods_that_name_it(apiserver):
    base = scheduler_config(None)
    profiles = tuple(
        dataclasses.replace(base.profiles[0], scheduler_name=name) for name in ("one", "two")
    )
    config = dataclasses.replace(base, profiles=profiles)

    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(NODES.raw, make_node("n"))
        for name in ("one", "two", "three"):
            await client.create(PODS.raw, make_pod(f"for-{name}").scheduler(name).raw)
        assert await until(lambda: bound_to(client, "for-one")) == "n"
        assert await until(lambda: bound_to(client, "for-two")) == "n"
        events = await until(lambda: events_for(client, "for-two", "Scheduled"))
        assert events[0]["reportingComponent"] == "two"
        assert await bound_to(client, "for-three") == ""

    run(body, apiserver, config)


def test_a_pending_pod_deleted_leaves_the_queue_and_a_pod_bound_elsewhere_counts(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(NODES.raw, make_node("n", cpu="2"))
        await client.create(PODS.raw, make_pod("huge").req("8").raw)
        await until(lambda: events_for(client, "huge", "FailedScheduling"))
        assert scheduler.queue.counts()["unschedulable"] == 1
        await client.delete(PODS.raw, "huge", "default")
        await until(lambda: len(scheduler.queue) == 0, what="the queue emptied")

        # Another scheduler's pod, bound by it, uses the node's cpu: ours must not fit.
        other = make_pod("elsewhere").scheduler("default-scheduler").req("2").raw
        other["spec"]["nodeName"] = "n"
        await client.create(PODS.raw, other)
        await client.create(PODS.raw, make_pod("late").req("1").raw)
        events = await until(lambda: events_for(client, "late", "FailedScheduling"))
        assert events[0]["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")

    run(body, apiserver)


class FlakyBinder(defaultbinder.DefaultBinder):
    """DefaultBinder that fails its first bind."""

    failures = 1

    def bind(self, state, pod, node_name):
        if FlakyBinder.failures:
            FlakyBinder.failures -= 1
            return Status.error("injected bind failure")
        return super().bind(state, pod, node_name)


def test_a_failed_binding_is_undone_reported_and_retried(apiserver):
    FlakyBinder.failures = 1
    registry = Registry({**IN_TREE, "DefaultBinder": lambda args, handle: FlakyBinder(handle)})

    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(NODES.raw, make_node("n"))
        await client.create(PODS.raw, make_pod("p").req("1").raw)
        events = await until(lambda: events_for(client, "p", "FailedScheduling"))
        assert events[0]["message"] == (
            'Binding rejected: running Bind plugin "DefaultBinder": injected bind failure'
        )
        assert await until(lambda: bound_to(client, "p"), what="the retry") == "n"
        raw = await pod_raw(client, "p")
        conditions = (raw or {}).get("status", {}).get("conditions", [])
        # Our False condition and the binding's True one merged by type: one condition.
        assert [(c["type"], c["status"]) for c in conditions] == [("PodScheduled", "True")]
        assert await until(lambda: events_for(client, "p", "Scheduled"))
        # Forgotten, then confirmed once by the informer: counted once on the node.
        await until(lambda: not scheduler.cache.is_assumed_pod(scheduler.cache.get_pod(p_obj)))
        info = scheduler.cache.node_info("n")
        assert info is not None and [pi.pod.name for pi in info.pods] == ["p"]

    p_obj = Pod(namespace="default", name="p")
    run(body, apiserver, registry=registry)


def test_default_run_config_is_one_profile_named_kubesched():
    config = scheduler_config(None)
    assert [p.scheduler_name for p in config.profiles] == [OURS]
    assert config.profiles[0].plugins == default_config().profiles[0].plugins
