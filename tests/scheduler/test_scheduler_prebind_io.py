"""PreBind doing I/O in the live scheduler, against the real embedded API server: a
PreBind plugin reads and updates an object (meeting a real conflict and retrying), then
waits on informer-fed state that another client changes; the pod binds only after that.
A wait that times out, or a call that fails, fails the binding with the plugin's message;
a pod every PreBind plugin skips binds without PreBind; stopping the scheduler frees a
PreBind thread that is still waiting."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from live_helpers import node_of, until

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import load_config
from kubesched.framework.apiclient import APIResource, Conflict, retry_on_conflict
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PreBindPreFlightPlugin, Status
from kubesched.framework.registry import Registry
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import EVENTS, NAMESPACES, NODES, PODS, Resource
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import IN_TREE
from kubesched.scheduler.scheduler import Scheduler

CONFIG_MAPS = APIResource("", "v1", "configmaps", "ConfigMap")
KUBE_CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap", True, dict)
READY_LABEL = "stamp.example.com/ready"


class Stamp:
    """PreBind for pods labelled ``stamp``: record the node in the pod's ConfigMap (after
    provoking a conflict with a stale copy), then wait until namespace ``default`` carries
    ``READY_LABEL`` = the pod's name."""

    name = "Stamp"

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle = handle
        self.timeout = float((args or {}).get("timeoutSeconds", 30))

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None if "stamp" in pod.labels else Status.skip()

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        client = self.handle.client
        stale = client.get(CONFIG_MAPS, f"stamp-{pod.name}", pod.namespace)
        client.update(CONFIG_MAPS, {**stale, "data": {"touched": "yes"}})
        conflicted = False
        try:
            client.update(CONFIG_MAPS, {**stale, "data": {"node": node_name}})
        except Conflict:
            conflicted = True

        def record() -> object:
            fresh = client.get(CONFIG_MAPS, f"stamp-{pod.name}", pod.namespace)
            data = {"node": node_name, "conflicted": str(conflicted).lower()}
            return client.update(CONFIG_MAPS, {**fresh, "data": data})

        retry_on_conflict(record)

        def ready() -> bool:
            labels = self.handle.cluster.namespace_labels(pod.namespace) or {}
            return labels.get(READY_LABEL) == pod.name

        if not client.wait_until(ready, self.timeout):
            return Status.error(f"timed out waiting for {READY_LABEL}={pod.name}")
        return None


_check: type[PreBindPreFlightPlugin] = Stamp

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: kubesched
    plugins:
      preBind:
        enabled: [{name: Stamp}]
    pluginConfig:
      - name: Stamp
        args: {timeoutSeconds: TIMEOUT}
"""


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def pod(name: str, stamp: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"stamp": "yes"} if stamp else {},
        },
        "spec": {"schedulerName": "kubesched", "containers": [{"name": "c", "image": "pause"}]},
    }


def config_map(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {},
    }


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


async def failure(client: Client, name: str) -> str:
    events = (await client.list(EVENTS, "default")).items
    return next(
        (
            e["message"]
            for e in events
            if e["involvedObject"].get("name") == name and e.get("reason") == "FailedScheduling"
        ),
        "",
    )


def run(
    apiserver: ApiServerHandle,
    tmp_path: Path,
    body: Callable[[Client, Scheduler], Any],
    timeout: float = 30,
) -> Scheduler:
    """``body(client, scheduler)`` with the Stamp profile on one node; returns the
    scheduler, stopped."""
    config_path = tmp_path / "config.yaml"
    config_path.write_text(CONFIG.replace("TIMEOUT", str(timeout)))
    registry = Registry({**IN_TREE, "Stamp": Stamp})
    holder: list[Scheduler] = []

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            scheduler = Scheduler(load_config(config_path), registry, client, rng=random.Random(0))
            holder.append(scheduler)
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                await client.create(NODES.raw, NODE)
                await until(lambda: scheduler.cache.node_count() == 1, "node cached")
                await body(client, scheduler)
            finally:
                scheduler.stop()
                await task

    asyncio.run(asyncio.wait_for(main(), 60.0))
    return holder[0]


def test_prebind_writes_meets_a_conflict_waits_for_another_client_then_the_pod_binds(
    apiserver, tmp_path
):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(KUBE_CONFIG_MAPS, config_map("stamp-p1"))
        await client.create(PODS.raw, pod("p1"))

        async def stamped() -> dict[str, str]:
            cm = await client.get(KUBE_CONFIG_MAPS, "stamp-p1", "default")
            return dict(cm.get("data") or {}) if "node" in (cm.get("data") or {}) else {}

        data = await until(stamped, "the plugin's write")
        # The plugin saw its stale update refused and retried from a fresh read.
        assert data == {"node": "n1", "conflicted": "true"}
        # It is waiting: the pod is not bound until the namespace is labelled.
        assert await node_of(client, "p1") == ""
        await client.patch(NAMESPACES.raw, "default", {"metadata": {"labels": {READY_LABEL: "p1"}}})
        assert await until(lambda: node_of(client, "p1"), "the pod bound") == "n1"
        assert await failure(client, "p1") == ""

    run(apiserver, tmp_path, body)


def test_a_pod_every_prebind_plugin_skips_binds_without_prebind(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        # No ConfigMap: the plugin's PreBind would fail with NotFound if it ran.
        await client.create(PODS.raw, pod("plain", stamp=False))
        assert await until(lambda: node_of(client, "plain"), "the pod bound") == "n1"

    scheduler = run(apiserver, tmp_path, body)
    # No worker thread was needed.
    assert scheduler._pre_bind_executor is None


def test_a_wait_that_times_out_fails_the_binding_with_the_plugins_message(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(KUBE_CONFIG_MAPS, config_map("stamp-late"))
        await client.create(PODS.raw, pod("late"))
        message = await until(lambda: failure(client, "late"), "FailedScheduling")
        assert message == (
            'Binding rejected: running PreBind plugin "Stamp": '
            f"timed out waiting for {READY_LABEL}=late"
        )
        assert await node_of(client, "late") == ""

    run(apiserver, tmp_path, body, timeout=0.2)


def test_an_api_error_in_prebind_fails_the_binding_with_the_servers_message(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(PODS.raw, pod("orphan"))
        message = await until(lambda: failure(client, "orphan"), "FailedScheduling")
        assert message == (
            'Binding rejected: running PreBind plugin "Stamp": configmaps "stamp-orphan" not found'
        )
        assert await node_of(client, "orphan") == ""
        assert scheduler.cache.pod_count() == 0  # forgotten

    run(apiserver, tmp_path, body)


def test_stopping_the_scheduler_frees_a_prebind_thread_that_still_waits(apiserver, tmp_path):
    async def body(client: Client, scheduler: Scheduler) -> None:
        await client.create(KUBE_CONFIG_MAPS, config_map("stamp-stuck"))
        await client.create(PODS.raw, pod("stuck"))

        async def waiting() -> bool:
            cm = await client.get(KUBE_CONFIG_MAPS, "stamp-stuck", "default")
            return "node" in (cm.get("data") or {})

        await until(waiting, "the plugin waiting")

    run(apiserver, tmp_path, body, timeout=3600)
    threads = [t for t in threading.enumerate() if t.name.startswith("prebind")]
    for thread in threads:
        thread.join(10)
    assert not any(t.is_alive() for t in threads)
