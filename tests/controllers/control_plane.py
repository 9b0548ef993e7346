"""The control plane the controller tests drive, and small helpers to drive it.

:func:`start_control_plane` starts the embedded API server with the simulated kubelet
beside it (:func:`kubesched.cli.cluster.start_cluster`: three simulated nodes, bound pods
Running and Ready after 50 ms) and a thread whose event loop
runs, through our ``kube`` client, the workload controllers and the live scheduler
(``default-scheduler``), plus a watch that records every node each pod was ever seen on
(so a test can say no pod was bound twice). Tests talk to it with kubectl and the
official ``kubernetes`` client, and poll for end states.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.config import KubeSchedulerConfiguration, default_config
from kubesched.kube import Client, Informer, load_kubeconfig
from kubesched.kube.resources import PODS
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

KUBECTL = shutil.which("kubectl") or "kubectl"
T = TypeVar("T")


@dataclass
class ControlPlane:
    """A running API server with controllers and a scheduler beside it."""

    apiserver: ClusterHandle
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    main: asyncio.Future[None] | None = None
    #: pod UID -> every node name the pod was seen bound to.
    nodes_seen: dict[str, set[str]] = field(default_factory=dict)
    controllers: dict[str, Any] = field(default_factory=dict)
    #: Every pod ADDED / DELETED the controllers' informer saw, in order:
    #: (event, pod name, name of its controller).
    pod_log: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def kubeconfig(self) -> Path:
        return self.apiserver.kubeconfig_path

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """Run kubectl against the cluster; its stdout (stderr raised on failure; with
        ``check=False`` both, stdout first)."""
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result.stdout if check else result.stdout + result.stderr

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def api_client(self) -> k8s.ApiClient:
        """The official client, configured from the cluster's kubeconfig."""
        configuration = k8s.Configuration()
        k8s_config.load_kube_config(str(self.kubeconfig), client_configuration=configuration)
        return k8s.ApiClient(configuration)

    def pod_events(self) -> list[tuple[str, str, str]]:
        """A copy of :attr:`pod_log`, taken in the controllers' loop."""

        async def copy() -> list[tuple[str, str, str]]:
            return list(self.pod_log)

        return asyncio.run_coroutine_threadsafe(copy(), self.loop).result(10)

    def rebound(self) -> dict[str, set[str]]:
        """Pods seen on more than one node (there must be none)."""
        seen = asyncio.run_coroutine_threadsafe(_copy(self.nodes_seen), self.loop).result(10)
        return {uid: nodes for uid, nodes in seen.items() if len(nodes) > 1}

    def stop(self) -> None:
        if self.main is not None:
            self.loop.call_soon_threadsafe(self.main.cancel)
        self.thread.join(timeout=20)
        self.apiserver.stop()


async def _copy(seen: dict[str, set[str]]) -> dict[str, set[str]]:
    return {uid: set(nodes) for uid, nodes in seen.items()}


def default_scheduler_config() -> KubeSchedulerConfiguration:
    """kube-scheduler's defaults as the cluster's ``default-scheduler``, one replica."""
    config = default_config()
    election = dataclasses.replace(config.leader_election, leader_elect=False)
    return dataclasses.replace(config, leader_election=election)


def start_control_plane(kubeconfig: Path, nodes: int = 3) -> ControlPlane:
    """Start the API server with every controller beside it (the simulated kubelet and
    the workload controllers, through the controller manager), then, in a thread of its
    own, the scheduler and a watch of pods; return once all have synced."""
    apiserver = start_cluster(
        kubeconfig_path=kubeconfig,
        bookmark_interval=0.2,
        nodes=nodes,
        run_delay=0.05,
        node_lease_interval=0,
    )
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    plane = ControlPlane(apiserver, loop, threading.Thread())
    if apiserver.controllers is not None:
        plane.controllers.update(apiserver.controllers.manager.controllers)
    failures: list[BaseException] = []

    async def body() -> None:
        config = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(config, qps=500, burst=500) as client:
            pods: Informer[dict[str, Any]] = Informer(client, PODS.raw)

            def seen(pod: dict[str, Any]) -> None:
                node = (pod.get("spec") or {}).get("nodeName")
                if node:
                    plane.nodes_seen.setdefault(pod["metadata"]["uid"], set()).add(node)

            def logged(event: str) -> Callable[[dict[str, Any]], None]:
                def log(pod: dict[str, Any]) -> None:
                    refs = pod["metadata"].get("ownerReferences") or [{}]
                    plane.pod_log.append((event, pod["metadata"]["name"], refs[0].get("name", "")))

                return log

            pods.add_handler(
                lambda pod: (seen(pod), logged("ADDED")(pod)),
                lambda _old, new: seen(new),
                logged("DELETED"),
            )
            scheduler = Scheduler(
                default_scheduler_config(), in_tree_registry(), client, rng=random.Random(0)
            )
            pods.start()
            scheduler_task = asyncio.create_task(scheduler.run())
            try:
                await pods.has_synced.wait()
                while not all(i.has_synced.is_set() for i in scheduler.informers):
                    await asyncio.sleep(0.02)
                ready.set()
                await asyncio.Event().wait()
            finally:
                scheduler.stop()
                await asyncio.gather(scheduler_task, return_exceptions=True)
                await pods.stop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        plane.main = loop.create_task(body())
        try:
            loop.run_until_complete(plane.main)
        except asyncio.CancelledError:
            pass
        except BaseException as exc:
            failures.append(exc)
        finally:
            ready.set()
            loop.close()

    plane.thread = threading.Thread(target=run, name="scheduler", daemon=True)
    plane.thread.start()
    if not ready.wait(timeout=60) or failures:
        apiserver.stop()
        raise RuntimeError("the scheduler did not start") from (failures or [None])[0]
    return plane


def wait_for(check: Callable[[], T], timeout: float = 30.0, what: str = "") -> T:
    """Poll ``check`` every 50 ms until it returns something truthy; that value. The
    deadline is for a loaded machine, not a speed check."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or check}: last {last!r}")
