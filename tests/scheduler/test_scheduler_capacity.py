"""CapacityScheduling in the live scheduler, against the embedded API server with
scheduler-plugins' CRDs installed and ElasticQuotas created through the API.

The scheduler runs scheduler-plugins' own configuration for the plugin (CapacityScheduling
through multiPoint, every other PostFilter disabled). Every wait polls with a deadline.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import KubeSchedulerConfiguration, loads_config
from kubesched.controllers.crds import install_crds, scheduling_crds
from kubesched.extender.types import decode_preemption_args
from kubesched.framework.interface import Status
from kubesched.framework.registry import Registry
from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import (
    ELASTIC_QUOTAS,
    EVENTS,
    NAMESPACES,
    NODES,
    PODS,
    PRIORITY_CLASSES,
)
from kubesched.plugins import defaultbinder
from kubesched.plugins.capacityscheduling import NAME, CapacityScheduling
from kubesched.plugins.registry import IN_TREE, in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

GPU = "nvidia.com/gpu"

#: scheduler-plugins' configuration for CapacityScheduling
#: (manifests/capacityscheduling/scheduler-config.yaml), as users write it.
MANIFEST_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "REPLACE_ME_WITH_KUBE_CONFIG_PATH"
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: CapacityScheduling
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
"""

#: The same with each extension point listed, as scheduler-plugins' own command test
#: writes it (cmd/scheduler/main_test.go).
PER_POINT_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    preFilter:
      enabled:
      - name: CapacityScheduling
    postFilter:
      enabled:
      - name: CapacityScheduling
      disabled:
      - name: "*"
    reserve:
      enabled:
      - name: CapacityScheduling
"""


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


# --- builders -------------------------------------------------------------------------


def node(name: str, cpu: str = "4", gpus: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    if gpus:
        allocatable[GPU] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def pod(
    name: str, ns: str, *, cpu: str = "", gpus: int = 0, priority_class: str = ""
) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if cpu:
        requests["cpu"] = cpu
    if gpus:
        requests[GPU] = str(gpus)
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if requests:
        # Extended resources must be limited as much as requested.
        limits = {GPU: str(gpus)} if gpus else {}
        container["resources"] = {"requests": requests, "limits": limits}
    spec: dict[str, Any] = {"containers": [container], "terminationGracePeriodSeconds": 0}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def elastic_quota(ns: str, min_: dict[str, str], max_: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"{ns}-quota", "namespace": ns},
        "spec": {"min": min_, "max": max_},
    }


# --- harness --------------------------------------------------------------------------


def run(
    body: Callable[[Client, Scheduler], Awaitable[None]],
    apiserver: ApiServerHandle,
    setup: Callable[[Client], Awaitable[None]],
    *,
    config: KubeSchedulerConfiguration | None = None,
    registry: Registry | None = None,
) -> None:
    """Install the CRDs, run ``setup`` (namespaces, quotas, nodes), start the scheduler
    with scheduler-plugins' configuration, then ``body``; 60 s at most (a deadline for a
    loaded machine, not a speed check)."""

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            await install_crds(client, scheduling_crds())
            await setup(client)
            scheduler = Scheduler(
                config or loads_config(MANIFEST_CONFIG, "scheduler-config.yaml"),
                registry or in_tree_registry(),
                client,
                rng=random.Random(0),
            )
            task = asyncio.create_task(scheduler.run())
            await until(lambda: all(i.has_synced.is_set() for i in scheduler.informers))
            try:
                await body(client, scheduler)
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 60.0))


async def until(check: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
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


async def namespaces(client: Client, *names: str) -> None:
    for name in names:
        await client.create(
            NAMESPACES.raw, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )


async def priority_classes(client: Client) -> None:
    for name, value in (("low", 10), ("high", 1000)):
        await client.create(
            PRIORITY_CLASSES.raw,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )


async def node_of(client: Client, name: str, ns: str) -> str | None:
    """The pod's node ("" while pending), None once it is gone."""
    try:
        raw = await client.get(PODS.raw, name, ns)
    except NotFound:
        return None
    return str(raw.get("spec", {}).get("nodeName", ""))


async def bound(client: Client, ns: str) -> list[str]:
    pods = (await client.list(PODS.raw, ns)).items
    return sorted(
        p["metadata"]["name"]
        for p in pods
        if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")
    )


async def events_for(client: Client, name: str, ns: str, reason: str) -> list[dict[str, Any]]:
    items = (await client.list(EVENTS, ns)).items
    return [
        e for e in items if e["involvedObject"].get("name") == name and e.get("reason") == reason
    ]


def plugin_of(scheduler: Scheduler) -> CapacityScheduling:
    plugin = next(iter(scheduler.frameworks.values())).plugins[NAME]
    assert isinstance(plugin, CapacityScheduling)
    return plugin


# --- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", [MANIFEST_CONFIG, PER_POINT_CONFIG], ids=["manifest-multipoint", "per-point"]
)
def test_scheduler_plugins_configurations_load_as_written(text: str) -> None:
    from kubesched.framework.runtime import Framework

    config = loads_config(text, "scheduler-config.yaml")
    fwk = Framework(config.profiles[0], in_tree_registry())
    names = {point: [p.name for p in plugins] for point, plugins in fwk.points.items()}
    assert names["preFilter"][-1] == NAME
    assert names["postFilter"] == [NAME]  # DefaultPreemption disabled
    assert names["reserve"][-1] == NAME
    assert NAME not in names["filter"] and NAME not in names["score"]


# --- quota max ----------------------------------------------------------------------------


async def lender_and_borrower(client: Client) -> None:
    """team-a (min 1, max 2) may borrow from team-b (min 4), which uses nothing: the sum
    of min bounds what all quotas together use, so a quota alone could not borrow."""
    await namespaces(client, "team-a", "team-b")
    await client.create(ELASTIC_QUOTAS.raw, elastic_quota("team-a", {"cpu": "1"}, {"cpu": "2"}))
    await client.create(ELASTIC_QUOTAS.raw, elastic_quota("team-b", {"cpu": "4"}, {"cpu": "4"}))


def test_a_namespace_is_held_at_its_quotas_max_with_the_numbers(apiserver):
    async def setup(client: Client) -> None:
        await lender_and_borrower(client)
        await client.create(NODES.raw, node("n1", cpu="8"))

    async def body(client: Client, scheduler: Scheduler) -> None:
        for i in range(3):
            await client.create(PODS.raw, pod(f"p{i}", "team-a", cpu="1"))
        events = await until(lambda: events_for(client, "p2", "team-a", "FailedScheduling"))
        await until(lambda: _count(bound(client, "team-a"), 2), what="p0 and p1 bound")
        assert await bound(client, "team-a") == ["p0", "p1"]
        assert events[0]["message"] == (
            "0/1 nodes are available: Pod team-a/p2 is rejected in PreFilter because "
            "ElasticQuota team-a is more than Max (ElasticQuota team-a/team-a-quota cpu: "
            "used 2, request 1, max 2). "
            "0/1 nodes are available: 1 No victims found on node n1 for preemptor pod p2."
        )
        raw = await client.get(PODS.raw, "p2", "team-a")
        condition = raw["status"]["conditions"][0]
        assert (condition["type"], condition["reason"]) == ("PodScheduled", "Unschedulable")
        assert "ElasticQuota team-a is more than Max" in condition["message"]

        # Deleting a pod frees quota: the pending one goes through.
        await client.delete(PODS.raw, "p0", "team-a")
        await until(lambda: node_of(client, "p2", "team-a"), what="p2 bound")

    run(body, apiserver, setup)


# --- borrowing and reclaim ------------------------------------------------------------------


async def two_teams(client: Client) -> None:
    await namespaces(client, "team-a", "team-b")
    for ns in ("team-a", "team-b"):
        await client.create(ELASTIC_QUOTAS.raw, elastic_quota(ns, {"cpu": "2"}, {"cpu": "4"}))
    await client.create(NODES.raw, node("n1", cpu="2"))
    await client.create(NODES.raw, node("n2", cpu="2"))


def test_a_namespace_borrows_the_unused_min_and_gives_it_back_by_preemption(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        for i in range(4):
            await client.create(PODS.raw, pod(f"a{i}", "team-a", cpu="1"))
        await until(lambda: _count(bound(client, "team-a"), 4), what="team-a borrows team-b's min")

        await client.create(PODS.raw, pod("b0", "team-b", cpu="1"))
        host = await until(lambda: node_of(client, "b0", "team-b"), what="b0 reclaims")
        assert host in ("n1", "n2")
        # One of team-a's pods went for it (team-a stays at its min of 2 or more).
        preempted = [
            name
            for name in ("a0", "a1", "a2", "a3")
            if await events_for(client, name, "team-a", "Preempted")
        ]
        assert len(preempted) == 1
        assert len(await bound(client, "team-a")) == 3

    run(body, apiserver, two_teams)


def test_over_its_min_a_namespace_preempts_only_its_own_lower_priority_pods(apiserver):
    async def setup(client: Client) -> None:
        await two_teams(client)
        await priority_classes(client)

    async def body(client: Client, scheduler: Scheduler) -> None:
        # team-b within its min on n1 with low priority, team-a fills n2 at its min.
        for i in range(2):
            await client.create(PODS.raw, pod(f"b{i}", "team-b", cpu="1", priority_class="low"))
        await until(lambda: _count(bound(client, "team-b"), 2))
        for i in range(2):
            await client.create(PODS.raw, pod(f"a{i}", "team-a", cpu="1", priority_class="low"))
        await until(lambda: _count(bound(client, "team-a"), 2))

        # A high-priority team-a pod would take team-a over its min: team-b's
        # lower-priority pods are safe, one of team-a's own goes.
        await client.create(PODS.raw, pod("a-high", "team-a", cpu="1", priority_class="high"))
        await until(lambda: node_of(client, "a-high", "team-a"), what="a-high bound")
        assert await bound(client, "team-b") == ["b0", "b1"]
        assert len(await bound(client, "team-a")) == 2

    run(body, apiserver, setup)


# --- scheduler-plugins issue 683 ------------------------------------------------------------


def test_683_a_namespace_within_its_min_gets_its_gpu_back(apiserver):
    """5 GPUs; team-a (min 4, max 5) holds all 5; team-b (min 1) asks for 1."""

    async def setup(client: Client) -> None:
        await namespaces(client, "team-a", "team-b")
        await client.create(
            ELASTIC_QUOTAS.raw,
            elastic_quota("team-a", {GPU: "4", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
        )
        await client.create(
            ELASTIC_QUOTAS.raw,
            elastic_quota("team-b", {GPU: "1", "cpu": "8"}, {GPU: "5", "cpu": "8"}),
        )
        await client.create(NODES.raw, node("gpu-1", gpus=2))
        await client.create(NODES.raw, node("gpu-2", gpus=3))

    async def body(client: Client, scheduler: Scheduler) -> None:
        for i in range(5):
            await client.create(PODS.raw, pod(f"a{i}", "team-a", gpus=1))
        await until(lambda: _count(bound(client, "team-a"), 5), what="team-a holds 5")

        await client.create(PODS.raw, pod("b0", "team-b", gpus=1))
        await until(lambda: node_of(client, "b0", "team-b"), what="team-b gets its GPU")
        assert len(await bound(client, "team-a")) == 4
        # A sixth team-a pod now waits: team-b's min is in use.
        await client.create(PODS.raw, pod("a5", "team-a", gpus=1))
        events = await until(lambda: events_for(client, "a5", "team-a", "FailedScheduling"))
        assert "ElasticQuota" in events[0]["message"]
        assert await node_of(client, "a5", "team-a") == ""

    run(body, apiserver, setup)


# --- accounting after failures ------------------------------------------------------------


class FlakyBinder(defaultbinder.DefaultBinder):
    """DefaultBinder that fails its first bind."""

    failures = 1

    def bind(self, state, pod, node_name):  # type: ignore[no-untyped-def]
        if FlakyBinder.failures:
            FlakyBinder.failures -= 1
            return Status.error("injected bind failure")
        return super().bind(state, pod, node_name)


def test_a_failed_bind_gives_the_quota_back(apiserver):
    """max 2 cpu: the first bind fails and is retried; had its reservation leaked,
    the second pod would be refused as over max."""
    FlakyBinder.failures = 1
    registry = Registry({**IN_TREE, "DefaultBinder": lambda args, handle: FlakyBinder(handle)})

    async def setup(client: Client) -> None:
        await lender_and_borrower(client)
        await client.create(NODES.raw, node("n1", cpu="8"))

    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(PODS.raw, pod("p0", "team-a", cpu="1"))
        events = await until(lambda: events_for(client, "p0", "team-a", "FailedScheduling"))
        assert "injected bind failure" in events[0]["message"]
        await until(lambda: node_of(client, "p0", "team-a"), what="p0 bound on retry")
        await client.create(PODS.raw, pod("p1", "team-a", cpu="1"))
        await until(lambda: node_of(client, "p1", "team-a"), what="p1 bound within max")
        await client.create(PODS.raw, pod("p2", "team-a", cpu="1"))
        await until(lambda: events_for(client, "p2", "team-a", "FailedScheduling"))
        assert await bound(client, "team-a") == ["p0", "p1"]
        plugin = plugin_of(scheduler)
        assert plugin.usage.in_flight() == []
        assert plugin.usage.used("team-a").milli_cpu == 2000

    run(body, apiserver, setup, registry=registry)


async def _count(names: Awaitable[list[str]], n: int) -> bool:
    return len(await names) == n


# --- scheduler-plugins' own demo, with kubectl ------------------------------------------------


def kubectl_for(apiserver: ApiServerHandle, cache_dir: Path) -> Callable[..., str]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.fail("kubectl is not on PATH: install kubectl >= 1.27")

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            [
                binary,
                "--kubeconfig",
                str(apiserver.kubeconfig_path),
                "--cache-dir",
                str(cache_dir),
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    return run


def demo_quota(ns: str) -> str:
    return f"""\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: {ns}
  namespace: {ns}
spec:
  max:
    cpu: 6
  min:
    cpu: 4
"""


def demo_pods(ns: str, n: int) -> str:
    return "---\n".join(
        f"""\
apiVersion: v1
kind: Pod
metadata:
  name: nginx-{i}
  namespace: {ns}
  labels:
    app: nginx
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: nginx
    image: nginx
    resources:
      limits:
        cpu: 2
      requests:
        cpu: 2
"""
        for i in range(n)
    )


def test_scheduler_plugins_demo_applied_with_kubectl(apiserver, tmp_path):
    """The demo of scheduler-plugins' CapacityScheduling README, with kubectl: quota1
    and quota2 (min 4, max 6 cpu) on 8 cpus. quota1's four 2-cpu pods: three run (max
    6), one waits. quota2's two pods: the first takes the 2 free cpus, the second is
    within quota2's min and preempts one of quota1's pods."""
    kubectl = kubectl_for(apiserver, tmp_path / "kubectl-cache")

    async def setup(client: Client) -> None:
        for ns in ("quota1", "quota2"):
            await asyncio.to_thread(kubectl, "create", "namespace", ns)
            await asyncio.to_thread(kubectl, "apply", "-f", "-", stdin=demo_quota(ns))
        await client.create(NODES.raw, node("n1", cpu="4"))
        await client.create(NODES.raw, node("n2", cpu="4"))

    def running(ns: str) -> list[str]:
        out = kubectl(
            "get",
            "pods",
            "-n",
            ns,
            "-o",
            "jsonpath={range .items[?(@.spec.nodeName)]}{.metadata.name} {end}",
        )
        return sorted(out.split())

    async def body(client: Client, scheduler: Scheduler) -> None:
        await asyncio.to_thread(kubectl, "apply", "-f", "-", stdin=demo_pods("quota1", 4))
        await until(
            lambda: events_for(client, "nginx-3", "quota1", "FailedScheduling"),
            what="quota1's fourth pod held at max",
        )
        assert await asyncio.to_thread(running, "quota1") == ["nginx-0", "nginx-1", "nginx-2"]

        await asyncio.to_thread(kubectl, "apply", "-f", "-", stdin=demo_pods("quota2", 2))

        async def quota2_running() -> bool:
            return await asyncio.to_thread(running, "quota2") == ["nginx-0", "nginx-1"]

        await until(quota2_running, what="quota2's two pods running")
        assert len(await asyncio.to_thread(running, "quota1")) == 2
        quotas = await asyncio.to_thread(kubectl, "get", "elasticquotas", "-A", "-o", "name")
        assert sorted(quotas.split()) == [
            "elasticquota.scheduling.x-k8s.io/quota1",
            "elasticquota.scheduling.x-k8s.io/quota2",
        ]

    run(body, apiserver, setup)


# --- extenders' preempt verb ------------------------------------------------------------------


def preempt_app(calls: list[dict[str, Any]], refuse: str) -> web.Application:
    """A preempt verb that accepts every candidate except the node ``refuse``."""

    async def preempt(request: web.Request) -> web.Response:
        args = decode_preemption_args(await request.json())
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


def test_reclaim_candidates_go_through_the_extenders_preempt_verb(apiserver):
    """team-a borrows on both nodes; team-b's pod reclaims one cpu, and the extender's
    preempt verb, which refuses node x, decides where."""
    calls: list[dict[str, Any]] = []

    async def main() -> None:
        runner = web.AppRunner(preempt_app(calls, refuse="x"), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        config = loads_config(
            MANIFEST_CONFIG + f"extenders:\n- urlPrefix: {url}\n  preemptVerb: preempt\n",
            "scheduler-config.yaml",
        )
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        try:
            async with Client(connection, qps=1000, burst=1000) as client:
                await install_crds(client, scheduling_crds())
                await namespaces(client, "team-a", "team-b")
                for ns in ("team-a", "team-b"):
                    await client.create(
                        ELASTIC_QUOTAS.raw, elastic_quota(ns, {"cpu": "2"}, {"cpu": "4"})
                    )
                for name in ("x", "y"):
                    await client.create(NODES.raw, node(name, cpu="2"))
                    for i in range(2):
                        borrower = pod(f"a-{name}{i}", "team-a", cpu="1")
                        borrower["spec"]["nodeName"] = name
                        await client.create(PODS.raw, borrower)
                scheduler = Scheduler(config, in_tree_registry(), client, rng=random.Random(0))
                task = asyncio.create_task(scheduler.run())
                await until(lambda: all(i.has_synced.is_set() for i in scheduler.informers))
                try:
                    await client.create(PODS.raw, pod("b0", "team-b", cpu="1"))
                    host = await until(lambda: node_of(client, "b0", "team-b"), what="b0")
                    assert host == "y"
                    sent = calls[0]["NodeNameToVictims"] or {}
                    assert sorted(sent) == ["x", "y"]
                    assert await bound(client, "team-a") in (
                        ["a-x0", "a-x1", "a-y1"],
                        ["a-x0", "a-x1", "a-y0"],
                    )
                finally:
                    scheduler.stop()
                    await task
        finally:
            await runner.cleanup()

    asyncio.run(asyncio.wait_for(main(), 60.0))
