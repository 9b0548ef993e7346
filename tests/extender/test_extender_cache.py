"""The extender with cluster access: its node and pod cache is kept by informers over a
real embedded API server (objects written with the official ``kubernetes`` client), and
``kubesched extender serve --kubeconfig`` answers over a real port.

The cluster: nodes ``a``, ``b`` and ``c`` with 2 CPUs each; ``a`` runs ``busy`` (1500m),
``c`` runs ``half-1`` and ``half-2`` (1 CPU each); ``c`` is tainted
``dedicated=gpu:NoSchedule`` only where a test says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from extender_helpers import filter_args, go_node, go_pod, names_args
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.extender import types as t
from kubesched.extender.backend import CACHE_NOT_SYNCED
from kubesched.extender.cli import Serving, build_parser, build_serving, main, serve
from kubesched.extender.profile import unknown_node

INSUFFICIENT_CPU = "Insufficient cpu"


def node(name: str, *, taint: bool = False) -> dict[str, Any]:
    resources = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    spec: dict[str, Any] = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {"capacity": resources, "allocatable": resources},
    }


def pod(name: str, cpu: str, node_name: str = "", labels: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": name}},
        "spec": spec,
    }


@dataclass
class Cluster:
    handle: ApiServerHandle
    core: k8s.CoreV1Api
    uids: dict[str, str]

    def add_pod(self, body: dict[str, Any]) -> str:
        created = self.core.create_namespaced_pod("default", body)
        uid = str(created.metadata.uid)
        self.uids[body["metadata"]["name"]] = uid
        return uid


@contextlib.contextmanager
def cluster(tmp: Path, *, taint_c: bool = False) -> Iterator[Cluster]:
    with start_apiserver(kubeconfig_path=tmp / "kubeconfig") as handle:
        api = k8s_config.new_client_from_config(config_file=str(handle.kubeconfig_path))
        core = k8s.CoreV1Api(api)
        for name in ("a", "b", "c"):
            core.create_node(node(name, taint=taint_c and name == "c"))
        world = Cluster(handle, core, {})
        world.add_pod(pod("busy", "1500m", "a"))
        world.add_pod(pod("half-1", "1", "c"))
        world.add_pod(pod("half-2", "1", "c"))
        try:
            yield world
        finally:
            api.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A cluster the read-only tests share."""
    with cluster(tmp_path_factory.mktemp("cache")) as world:
        yield world


Call = Callable[[str, bytes], Awaitable[tuple[int, Any]]]


@contextlib.asynccontextmanager
async def extender(
    world: Cluster, *, start_cache: bool = True
) -> AsyncIterator[tuple[Call, Serving]]:
    """``kubesched extender serve --kubeconfig`` on a free port; yields a POST function
    (path, body) → (status, decoded JSON or text) and what serves."""
    argv = ["serve", "--kubeconfig", str(world.handle.kubeconfig_path), "--port", "0"]
    serving = build_serving(build_parser().parse_args(argv))
    assert serving.cache is not None
    if not start_cache:
        serving.cache.start = lambda: None  # type: ignore[method-assign]
    stop = asyncio.Event()
    listening: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve(serving, stop, listening.set_result))
    port = await asyncio.wait_for(listening, 10)
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as session:

        async def call(path: str, body: bytes) -> tuple[int, Any]:
            method = "GET" if not body else "POST"
            async with session.request(method, base + path, data=body or None) as response:
                raw = await response.read()
                if response.content_type == "application/json":
                    return response.status, t.loads(raw, "reply")
                return response.status, raw.decode()

        try:
            if start_cache:
                await serving.cache.wait_for_sync(10)
            yield call, serving
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


POD = go_pod("web", cpu="1", memory="1Gi")


# --- readiness and the not-synced answer --------------------------------------------


def test_readyz_waits_for_the_informers_and_requests_meanwhile_say_why(shared: Cluster) -> None:
    async def scenario() -> None:
        async with extender(shared, start_cache=False) as (call, serving):
            assert await call("/healthz", b"") == (200, "ok")
            status, text = await call("/readyz", b"")
            assert status == 503 and "not synced" in text
            status, body = await call("/filter", names_args(POD, ["a"]))
            assert (status, body["Error"]) == (200, CACHE_NOT_SYNCED)
            status, text = await call("/prioritize", names_args(POD, ["a"]))
            assert (status, text) == (503, CACHE_NOT_SYNCED)
            assert serving.cache is not None
            for informer in serving.cache.informers:
                informer.start()
            await serving.cache.wait_for_sync(10)
            assert await call("/readyz", b"") == (200, "ok")

    run(scenario)


# --- filter and prioritize in both modes ----------------------------------------------


def test_node_names_filter_counts_the_bound_pods_and_names_unknown_nodes(shared: Cluster) -> None:
    async def scenario() -> None:
        async with extender(shared) as (call, _):
            status, body = await call("/filter", names_args(POD, ["a", "b", "ghost"]))
        assert status == 200
        assert body == {
            "Nodes": None,
            "NodeNames": ["b"],
            "FailedNodes": {"a": INSUFFICIENT_CPU, "ghost": unknown_node("ghost")},
            "FailedAndUnresolvableNodes": {},
            "Error": "",
        }

    run(scenario)


def test_full_nodes_filter_also_counts_the_cached_pods(shared: Cluster) -> None:
    # kube-scheduler sends the nodes but never their pods: without the cache node "a"
    # would look empty and pass.
    async def scenario() -> None:
        async with extender(shared) as (call, serving):
            status, body = await call(
                "/filter", filter_args(POD, [go_node("a", cpu="2"), go_node("b", cpu="2")])
            )
            # These nodes differ from the cached ones (labels, images): theirs are used.
            assert serving.cache is not None and serving.cache.merges == 1
        assert status == 200
        assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["b"]
        assert body["FailedNodes"] == {"a": INSUFFICIENT_CPU}

    run(scenario)


def test_node_names_prioritize_prefers_the_node_with_room(shared: Cluster) -> None:
    async def scenario() -> None:
        async with extender(shared) as (call, _):
            status, body = await call(
                "/prioritize", names_args(go_pod("tiny", cpu="100m"), ["a", "b", "ghost"])
            )
        assert status == 200
        scores = {entry["Host"]: entry["Score"] for entry in body}
        assert scores["ghost"] == 0
        assert scores["b"] > scores["a"]

    run(scenario)


def test_required_anti_affinity_sees_a_pod_on_a_node_not_asked_about(shared: Cluster) -> None:
    # The spread and affinity plugins count pods across the whole cluster, so the
    # snapshot holds every cached node, not only the candidates.
    anti = go_pod("loner", cpu="100m")
    anti["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "busy"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }

    async def scenario() -> None:
        async with extender(shared) as (call, _):
            _, only_b = await call("/filter", names_args(anti, ["b"]))
            _, a_and_b = await call("/filter", names_args(anti, ["a", "b"]))
        assert only_b["NodeNames"] == ["b"]
        assert a_and_b["NodeNames"] == ["b"]
        assert list(a_and_b["FailedNodes"]) == ["a"]
        assert "anti-affinity" in a_and_b["FailedNodes"]["a"]

    run(scenario)


# --- the cache follows the cluster -----------------------------------------------------


def test_cache_follows_binds_deletions_and_node_changes(tmp_path: Path) -> None:
    with cluster(tmp_path) as world:

        async def until(call: Call, body: bytes, want: Callable[[Any], bool]) -> Any:
            for _ in range(200):
                _, answer = await call("/filter", body)
                if want(answer):
                    return answer
                await asyncio.sleep(0.05)
            raise AssertionError(f"the cache never got there; last answer {answer}")

        async def scenario() -> None:
            async with extender(world) as (call, serving):
                assert serving.cache is not None
                body = names_args(POD, ["b", "d"])
                first = await until(call, body, lambda r: r["NodeNames"] == ["b"])
                assert first["FailedNodes"] == {"d": unknown_node("d")}
                rebuilds = serving.cache.rebuilds
                # Full Nodes equal to the cached ones: answered from the same snapshot.
                listed = await asyncio.to_thread(world.core.list_node)
                items = world.core.api_client.sanitize_for_serialization(listed.items)
                _, full = await call("/filter", filter_args(POD, items))
                assert [n["metadata"]["name"] for n in full["Nodes"]["items"]] == ["b"]
                assert full["FailedNodes"] == {"a": INSUFFICIENT_CPU, "c": INSUFFICIENT_CPU}
                assert (serving.cache.rebuilds, serving.cache.merges) == (rebuilds, 0)
                # A pod bound to b: the snapshot takes it in place, without a rebuild.
                await asyncio.to_thread(world.add_pod, pod("late", "1500m", "b"))
                await until(call, body, lambda r: "b" in (r["FailedNodes"] or {}))
                assert serving.cache.rebuilds == rebuilds
                await asyncio.to_thread(
                    world.core.delete_namespaced_pod, "late", "default", grace_period_seconds=0
                )
                await until(call, body, lambda r: r["NodeNames"] == ["b"])
                # A new node: rebuilt on the next request.
                await asyncio.to_thread(world.core.create_node, node("d"))
                await until(call, body, lambda r: r["NodeNames"] == ["b", "d"])
                assert serving.cache.rebuilds > rebuilds

        run(scenario)


# --- preempt ---------------------------------------------------------------------------


def meta_args(world: Cluster, victims: dict[str, list[str]]) -> bytes:
    return t.encode_preemption_args(
        t.ExtenderPreemptionArgs(
            Pod=POD,
            NodeNameToVictims=None,
            NodeNameToMetaVictims={
                name: {"Pods": [{"UID": world.uids[v]} for v in pods], "NumPDBViolations": 0}
                for name, pods in victims.items()
            },
        )
    )


def test_preempt_keeps_the_nodes_where_the_victims_make_room(tmp_path: Path) -> None:
    # a: evicting busy frees 1.5 CPU, enough. c: evicting half-1 frees 1 CPU, enough,
    # but c is tainted, which no eviction changes. b: nothing to evict and room already.
    # ghost: unknown to the cache, dropped.
    with cluster(tmp_path, taint_c=True) as world:

        async def scenario() -> tuple[int, Any]:
            async with extender(world) as (call, _):
                return await call(
                    "/preempt",
                    meta_args(world, {"a": ["busy"], "c": ["half-1"], "b": [], "ghost": []}),
                )

        status, body = asyncio.run(scenario())
    assert status == 200
    assert body == {
        "NodeNameToMetaVictims": {
            "a": {"Pods": [{"UID": world.uids["busy"]}], "NumPDBViolations": 0},
            "b": {"Pods": [], "NumPDBViolations": 0},
        }
    }


def test_preempt_drops_a_node_whose_victims_do_not_make_room(shared: Cluster) -> None:
    # c: evicting nothing leaves it full; evicting half-1 makes room. Go's shape for
    # full victims (not nodeCacheCapable): the answer names them by UID.
    half_1 = go_pod("half-1", cpu="1")
    half_1["metadata"]["uid"] = shared.uids["half-1"]
    args = t.ExtenderPreemptionArgs(
        Pod=POD,
        NodeNameToVictims={
            "c": {"Pods": [half_1], "NumPDBViolations": 1},
            "a": {"Pods": [], "NumPDBViolations": 0},
        },
        NodeNameToMetaVictims=None,
    )

    async def scenario() -> tuple[int, Any]:
        async with extender(shared) as (call, _):
            return await call("/preempt", t.encode_preemption_args(args))

    status, body = asyncio.run(scenario())
    assert status == 200
    assert body == {
        "NodeNameToMetaVictims": {
            "c": {"Pods": [{"UID": shared.uids["half-1"]}], "NumPDBViolations": 1}
        }
    }


def test_preempt_victim_without_uid_is_a_400(shared: Cluster) -> None:
    victim = go_pod("x", cpu="1")
    del victim["metadata"]["uid"]
    args = t.ExtenderPreemptionArgs(
        Pod=POD,
        NodeNameToVictims={"c": {"Pods": [victim], "NumPDBViolations": 0}},
        NodeNameToMetaVictims=None,
    )

    async def scenario() -> tuple[int, Any]:
        async with extender(shared) as (call, _):
            return await call("/preempt", t.encode_preemption_args(args))

    status, text = asyncio.run(scenario())
    assert status == 400
    assert text == (
        "bad preempt request: ExtenderPreemptionArgs.NodeNameToVictims[c].Pods[0].metadata.uid: "
        "Required value: a victim is named by its UID"
    )


# --- the command line ------------------------------------------------------------------


def test_kubeconfig_that_cannot_be_read_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--kubeconfig", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched extender: error: --kubeconfig: cannot connect: ")
    assert "missing" in err


def test_without_cluster_access_there_is_no_cache() -> None:
    serving = build_serving(build_parser().parse_args(["serve"]))
    assert serving.cache is None and serving.client is None and serving.server.ready is None
