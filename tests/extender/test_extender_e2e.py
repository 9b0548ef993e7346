"""Our live scheduler calling extenders, end to end (issue #6's check).

The embedded API server runs for real; the scheduler is configured from YAML, as
``kubesched run --config`` is, and calls extenders served over HTTP in the same process:
an SDK extender (filter, prioritize, bind), and small aiohttp servers for what the SDK
does not serve (a slow extender, a preempt verb). Last, ``kubesched run`` itself with
``examples/extender_filter.py``, each in a process of its own. The official
``kubernetes`` client reads the outcome, as a user would.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import loads_config
from kubesched.extender import types as t
from kubesched.extender.sdk import Extender
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS, PRIORITY_CLASSES
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

GADGET = "example.com/gadget"
REASON = "node(s) didn't have label scheduler-extender=allowed"


@pytest.fixture
def apiserver(tmp_path) -> Any:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def core(apiserver: ApiServerHandle) -> k8s.CoreV1Api:
    """The official client, configured from the server's kubeconfig."""
    configuration = k8s.Configuration()
    k8s_config.load_kube_config(str(apiserver.kubeconfig_path), client_configuration=configuration)
    return k8s.CoreV1Api(k8s.ApiClient(configuration))


# --- cluster objects -------------------------------------------------------------------


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def pod(
    name: str,
    cpu: str = "100m",
    *,
    gadget: bool = False,
    node_name: str = "",
    selector: dict[str, str] | None = None,
    priority_class: str = "",
) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": cpu}
    if gadget:
        requests[GADGET] = "1"
    resources = {"requests": requests, "limits": {GADGET: "1"} if gadget else {}}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": resources}],
        "terminationGracePeriodSeconds": 0,
    }
    if node_name:
        spec["nodeName"] = node_name
    if selector:
        spec["nodeSelector"] = selector
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


# --- harness -------------------------------------------------------------------------


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on a free local port; yields its URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def scheduling(apiserver: ApiServerHandle, extenders: str) -> AsyncIterator[Client]:
    """A started Scheduler whose configuration lists ``extenders`` (YAML)."""
    text = f"""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
extenders:
{extenders}
"""
    config = loads_config(text, "extenders.yaml")
    connection = load_kubeconfig([apiserver.kubeconfig_path])
    async with Client(connection, qps=1000, burst=1000) as client:
        scheduler = Scheduler(config, in_tree_registry(), client, rng=random.Random(0))
        task = asyncio.create_task(scheduler.run())
        await until(lambda: scheduler.synced, "informers synced")
        try:
            yield client
        finally:
            scheduler.stop()
            await task


async def until(check: Callable[[], Any], what: str, timeout: float = 8.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), 20.0))


async def node_of(api: k8s.CoreV1Api, name: str) -> str:
    found = await asyncio.to_thread(api.read_namespaced_pod, name, "default")
    return found.spec.node_name or ""


async def event_messages(api: k8s.CoreV1Api, name: str, reason: str) -> list[str]:
    events = await asyncio.to_thread(api.list_namespaced_event, "default")
    return [
        e.message for e in events.items if e.involved_object.name == name and e.reason == reason
    ]


# --- filter, prioritize, managed resources, bind -----------------------------------------


def gadget_extender(client_box: list[Client], bound: list[str]) -> Extender:
    """Filters out nodes without the label, prefers node ``b``, binds through the API."""
    ext = Extender()

    @ext.filter
    def labelled(pod: Pod, node: Node) -> bool | str:
        return node.labels.get("scheduler-extender") == "allowed" or REASON

    @ext.prioritize
    def prefer_b(pod: Pod, node: Node) -> int:
        return 10 if node.name == "b" else 0

    @ext.bind
    async def bind(args: t.ExtenderBindingArgs) -> str | None:
        bound.append(f"{args['PodName']}->{args['Node']}")
        await client_box[0].bind(args["PodNamespace"], args["PodName"], args["Node"])
        return None

    return ext


def test_filter_prioritize_and_bind_extender_decide_for_the_pods_it_manages(apiserver):
    api = core(apiserver)
    bound: list[str] = []
    box: list[Client] = []

    async def body() -> None:
        async with serving(gadget_extender(box, bound).app()) as url:
            extenders = f"""
- urlPrefix: {url}
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 2
  managedResources:
  - name: {GADGET}
    ignoredByScheduler: true
"""
            async with scheduling(apiserver, extenders) as client:
                box.append(client)
                allowed = {"scheduler-extender": "allowed"}
                await client.create(NODES.raw, node("a", allowed))
                await client.create(NODES.raw, node("b", allowed))
                await client.create(NODES.raw, node("c", {"zone": "c"}))
                # b and c are busy: the plugins (LeastAllocated, BalancedAllocation)
                # prefer the empty node a.
                await client.create(PODS.raw, pod("busy-b", "2", node_name="b"))
                await client.create(PODS.raw, pod("busy-c", "2", node_name="c"))

                # Not interested (no gadget): plugins alone decide, DefaultBinder binds.
                await client.create(PODS.raw, pod("plain"))
                assert await until(lambda: node_of(api, "plain"), "plain bound") == "a"

                # Interested: c is filtered out, and b's extender score 10 × weight 2 × 10
                # = 200 outweighs what the plugins give a over b. The gadget itself is
                # on no node: only ignoredByScheduler lets NodeResourcesFit pass it.
                await client.create(PODS.raw, pod("gadget", gadget=True))
                assert await until(lambda: node_of(api, "gadget"), "gadget bound") == "b"
                assert bound == ["gadget->b"]

                # Only c matches the selector, and the extender rejects it: the
                # FailedScheduling message counts the extender's reason like a plugin's.
                await client.create(PODS.raw, pod("nowhere", gadget=True, selector={"zone": "c"}))
                messages = await until(
                    lambda: event_messages(api, "nowhere", "FailedScheduling"), "FailedScheduling"
                )
                # c is Unschedulable (FailedNodes), so preemption tries it, as upstream.
                assert messages[0] == (
                    f"0/3 nodes are available: 1 {REASON}, "
                    "2 node(s) didn't match Pod's node affinity/selector. "
                    "preemption: 0/3 nodes are available: "
                    "1 No preemption victims found for incoming pod, "
                    "2 Preemption is not helpful for scheduling."
                )
                assert await node_of(api, "nowhere") == ""
                assert await node_of(api, "plain") == "a"

    run(body)


# --- ignorable or not: an extender that does not answer in time ----------------------


def slow_app(seconds: float) -> web.Application:
    async def filter_(request: web.Request) -> web.Response:
        await asyncio.sleep(seconds)
        return web.json_response({"Nodes": None, "NodeNames": None, "FailedNodes": {}})

    app = web.Application()
    app.router.add_post("/filter", filter_)
    return app


@pytest.mark.parametrize("ignorable", [True, False])
def test_an_extender_that_times_out_is_skipped_only_when_ignorable(apiserver, ignorable):
    api = core(apiserver)

    async def body() -> None:
        async with serving(slow_app(1.0)) as url:
            extenders = f"""
- urlPrefix: {url}
  filterVerb: filter
  httpTimeout: 200ms
  ignorable: {json.dumps(ignorable)}
"""
            async with scheduling(apiserver, extenders) as client:
                await client.create(NODES.raw, node("a"))
                await client.create(NODES.raw, node("b"))
                await client.create(PODS.raw, pod("p"))
                if ignorable:
                    assert await until(lambda: node_of(api, "p"), "p bound") in ("a", "b")
                    assert await event_messages(api, "p", "FailedScheduling") == []
                    return
                messages = await until(
                    lambda: event_messages(api, "p", "FailedScheduling"), "FailedScheduling"
                )
                assert messages[0] == (
                    f'Post "{url}/filter": no answer within 0.2s (httpTimeout exceeded)'
                )
                found = await asyncio.to_thread(api.read_namespaced_pod, "p", "default")
                condition = next(c for c in found.status.conditions if c.type == "PodScheduled")
                assert (condition.status, condition.reason) == ("False", "SchedulerError")
                assert found.spec.node_name is None

    run(body)


# --- preemption asks the extender -------------------------------------------------------


def preempt_app(calls: list[dict[str, Any]], refuse: str) -> web.Application:
    """A preempt verb that accepts every candidate except the node ``refuse``."""

    async def preempt(request: web.Request) -> web.Response:
        args = t.decode_preemption_args(await request.json())
        calls.append(args)
        meta = {
            name: {
                "Pods": [{"UID": p["metadata"]["uid"]} for p in victims["Pods"] or ()],
                "NumPDBViolations": victims["NumPDBViolations"],
            }
            for name, victims in (args["NodeNameToVictims"] or {}).items()
            if name != refuse and victims is not None
        }
        return web.json_response({"NodeNameToMetaVictims": meta})

    app = web.Application()
    app.router.add_post("/preempt", preempt)
    return app


def test_preemption_candidates_go_through_the_extenders_preempt_verb(apiserver):
    api = core(apiserver)
    calls: list[dict[str, Any]] = []

    async def body() -> None:
        async with serving(preempt_app(calls, refuse="x")) as url:
            extenders = f"""
- urlPrefix: {url}
  preemptVerb: preempt
"""
            async with scheduling(apiserver, extenders) as client:
                for name, value in (("lowest", 1), ("low", 10), ("high", 1000)):
                    await client.create(
                        PRIORITY_CLASSES.raw,
                        {
                            "apiVersion": "scheduling.k8s.io/v1",
                            "kind": "PriorityClass",
                            "metadata": {"name": name},
                            "value": value,
                        },
                    )
                await client.create(NODES.raw, node("x"))
                await client.create(NODES.raw, node("y"))
                # Without the extender, x wins: its victim has the lower priority.
                await client.create(
                    PODS.raw, pod("on-x", "4", node_name="x", priority_class="lowest")
                )
                await client.create(PODS.raw, pod("on-y", "4", node_name="y", priority_class="low"))
                await client.create(PODS.raw, pod("preemptor", "4", priority_class="high"))

                async def gone(name: str) -> bool:
                    names = await asyncio.to_thread(api.list_namespaced_pod, "default")
                    return name not in {p.metadata.name for p in names.items}

                await until(lambda: gone("on-y"), "the victim on y deleted")
                assert await until(lambda: node_of(api, "preemptor"), "preemptor bound") == "y"
                assert not await gone("on-x")
                sent = calls[0]["NodeNameToVictims"] or {}
                assert sorted(sent) == ["x", "y"]
                assert [p["metadata"]["name"] for p in sent["y"]["Pods"] or ()] == ["on-y"]

    run(body)


# --- kubesched run --config, with the example extender as its own process ---------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, deadline: float) -> None:
    while True:  # start the extender first, as the docs say
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            assert time.monotonic() < deadline, "the example extender did not start"
            time.sleep(0.05)


def test_kubesched_run_with_the_example_filter_extender(apiserver, tmp_path):
    api = core(apiserver)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = tmp_path / "config.yaml"
    config.write_text(
        f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {{leaderElect: false}}
extenders:
- urlPrefix: {url}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
"""
    )
    example = Path(__file__).resolve().parents[2] / "examples" / "extender_filter.py"
    extender = subprocess.Popen(
        [sys.executable, str(example), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    scheduler = None
    try:
        wait_healthy(url, time.monotonic() + 30)
        scheduler = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from kubesched.cli import main; sys.exit(main(sys.argv[1:]))",
                "run",
                "--config",
                str(config),
                "--kubeconfig",
                str(apiserver.kubeconfig_path),
                "--secure-port",
                "0",
            ],
            stderr=subprocess.PIPE,
            text=True,
        )

        async def body() -> None:
            connection = load_kubeconfig([apiserver.kubeconfig_path])
            async with Client(connection) as client:
                await client.create(NODES.raw, node("plain"))
                await client.create(NODES.raw, node("allowed", {"scheduler-extender": "allowed"}))
                # The plugins alone would prefer the empty node "plain".
                await client.create(PODS.raw, pod("busy", "2", node_name="allowed"))
                await client.create(PODS.raw, pod("p"))
                await client.create(
                    PODS.raw, pod("q", selector={"kubernetes.io/hostname": "plain"})
                )
            # Both nodes fit; the extender's filter rules out "plain".
            assert await until(lambda: node_of(api, "p"), "p bound", 20.0) == "allowed"
            messages = await until(
                lambda: event_messages(api, "q", "FailedScheduling"), "FailedScheduling", 20.0
            )
            assert messages[0].startswith(
                "0/2 nodes are available: 1 node(s) didn't have label "
                "scheduler-extender=allowed, 1 node(s) didn't match Pod's node affinity/selector."
            ), messages[0]

        asyncio.run(asyncio.wait_for(body(), 40.0))
        scheduler.send_signal(signal.SIGTERM)
        assert scheduler.wait(timeout=10) == 0, scheduler.stderr.read() if scheduler.stderr else ""
    finally:
        for proc in (scheduler, extender):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
