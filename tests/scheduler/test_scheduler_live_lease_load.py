"""Two ``kubesched run`` replicas with leader election (short lease timings) against the
embedded API server, driven by the official ``kubernetes`` client as a user would
(issue 12's check, small): a burst of pods that fit nowhere costs the leader neither its
lease nor its process; a foreign binder racing it for pods of its schedulerName loses
nothing; SIGKILL of the leader hands over to the other, which binds every pod; no pod is
ever bound twice; SIGTERM exits 0 and releases the Lease."""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver

LEASE = "kubesched-load"
SCHEDULER = "kubesched"
NODES = ("n1", "n2", "n3")
UNSCHEDULABLE = 300
TIMINGS = {"leaseDuration": "2s", "renewDeadline": "1500ms", "retryPeriod": "300ms"}


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.5)
    yield handle
    handle.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Replica:
    """One ``kubesched run`` process with its endpoints on a port of its own."""

    def __init__(self, config: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    *(sys.executable, "-m", "kubesched.cli", "run", "--config", str(config)),
                    *("--secure-port", str(self.port), "--bind-address", "127.0.0.1", "-v"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()
        except OSError:
            return 0, ""

    def leading(self) -> bool:
        status, text = self.get("/metrics")
        line = 'leader_election_master_status{name="kube-scheduler"} 1'
        return status == 200 and line in text.splitlines()

    def healthy(self) -> bool:
        return self.get("/healthz") == (200, "ok") and self.get("/readyz") == (200, "ok")

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def until(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def pod(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }


class Bindings:
    """Watches every pod; remembers each node a pod was ever seen on."""

    def __init__(self, core: k8s.CoreV1Api) -> None:
        self.core = core
        self.seen: dict[str, set[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        version = self.core.list_namespaced_pod("default").metadata.resource_version
        while not self._stop.is_set():
            stream = k8s_watch.Watch().stream(
                self.core.list_namespaced_pod,
                "default",
                resource_version=version,
                timeout_seconds=2,
            )
            for event in stream:
                obj = event["object"]
                version = obj.metadata.resource_version
                if obj.spec.node_name:
                    self.seen.setdefault(obj.metadata.name, set()).add(obj.spec.node_name)

    def bound(self, names: list[str]) -> bool:
        return all(name in self.seen for name in names)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


class ForeignBinder:
    """The tutorial's bash binder, in Python: binds pending pods of our schedulerName to
    a random node as it sees them, racing the scheduler. It goes for every other pod (by
    name) and sometimes waits a moment first, so that both sides win some."""

    def __init__(self, core: k8s.CoreV1Api, prefix: str) -> None:
        self.core = core
        self.prefix = prefix
        self.won: set[str] = set()
        self.lost = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        rng = random.Random(7)
        while not self._stop.is_set():
            pending = self.core.list_namespaced_pod(
                "default", field_selector="spec.nodeName=", _request_timeout=5
            ).items
            for item in pending:
                name = item.metadata.name
                if not name.startswith(self.prefix) or name in self.won:
                    continue
                if int(name.rsplit("-", 1)[1]) % 2:
                    continue
                time.sleep(rng.random() * 0.02)
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": rng.choice(NODES)},
                }
                try:
                    self.core.create_namespaced_pod_binding(
                        name, "default", body, _preload_content=False
                    )
                    self.won.add(name)
                except k8s.ApiException:
                    self.lost += 1  # kubesched was first (409) or the pod is gone
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_two_replicas_keep_the_lease_under_load_and_hand_over_on_sigkill(
    apiserver: ApiServerHandle, tmp_path: Path
) -> None:
    k8s_config.load_kube_config(str(apiserver.kubeconfig_path))
    core = k8s.CoreV1Api()
    coordination = k8s.CoordinationV1Api()
    for name in NODES:
        core.create_node(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
            }
        )
    config = tmp_path / "scheduler.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"kubeconfig": str(apiserver.kubeconfig_path)},
                "leaderElection": {"leaderElect": True, "resourceName": LEASE, **TIMINGS},
                "profiles": [{"schedulerName": SCHEDULER}],
            }
        )
    )
    replicas = [Replica(config, tmp_path / f"replica-{i}.log") for i in range(2)]
    bindings = Bindings(core)
    binder: ForeignBinder | None = None
    try:
        leader = until(lambda: next((r for r in replicas if r.leading()), None), "a leader")
        standby = next(r for r in replicas if r is not leader)
        until(standby.healthy, "the standby healthy")
        lease = coordination.read_namespaced_lease(LEASE, "kube-system")
        holder, transitions = lease.spec.holder_identity, lease.spec.lease_transitions

        # A burst of pods that fit nowhere, plus pods that fit, raced by a foreign binder.
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda i: core.create_namespaced_pod("default", pod(f"big-{i}", "100")),
                    range(UNSCHEDULABLE),
                )
            )
        binder = ForeignBinder(core, "race-")
        racing = [f"race-{i}" for i in range(40)]
        for name in racing:
            core.create_namespaced_pod("default", pod(name, "10m"))
        until(lambda: bindings.bound(racing), "every raced pod bound", timeout=60)
        binder.stop()

        # The leader kept its lease and its process, and both replicas are healthy.
        assert leader.proc.poll() is None, leader.tail()
        assert leader.leading() and not standby.leading()
        lease = coordination.read_namespaced_lease(LEASE, "kube-system")
        assert (lease.spec.holder_identity, lease.spec.lease_transitions) == (holder, transitions)
        assert leader.healthy() and standby.healthy()
        # Both binders won some (else there was no race), and nothing was lost.
        assert binder.won and set(racing) - binder.won
        big = core.read_namespaced_pod("big-0", "default")
        scheduled = next(c for c in big.status.conditions if c.type == "PodScheduled")
        assert (scheduled.status, scheduled.reason) == ("False", "Unschedulable")

        # SIGKILL of the leader: the standby takes over and binds every new pod.
        leader.proc.send_signal(signal.SIGKILL)
        leader.proc.wait()
        after = [f"after-{i}" for i in range(20)]
        for name in after:
            core.create_namespaced_pod("default", pod(name, "10m"))
        until(standby.leading, "the standby leading", timeout=20)
        until(lambda: bindings.bound(after), "every pod created after the kill bound")
        lease = coordination.read_namespaced_lease(LEASE, "kube-system")
        assert lease.spec.holder_identity != holder
        assert lease.spec.lease_transitions == transitions + 1
        assert standby.healthy()

        # SIGTERM: exit 0, the Lease released.
        standby.proc.send_signal(signal.SIGTERM)
        assert standby.proc.wait(timeout=20) == 0, standby.tail()
        lease = coordination.read_namespaced_lease(LEASE, "kube-system")
        assert not lease.spec.holder_identity

        # No pod was ever bound twice (or moved); no pod that fits nowhere was bound.
        time.sleep(0.5)
        assert all(len(nodes) == 1 for nodes in bindings.seen.values()), bindings.seen
        assert not [n for n in bindings.seen if n.startswith("big-")]
        # Every Scheduled event is kubesched's own binding: never one for a pod the
        # foreign binder bound, never two for one pod.
        events = k8s.EventsV1Api().list_namespaced_event("default").items
        scheduled_events = [e.regarding.name for e in events if e.reason == "Scheduled"]
        assert len(scheduled_events) == len(set(scheduled_events))
        assert not set(scheduled_events) & binder.won
    finally:
        if binder is not None:
            binder.stop()
        bindings.stop()
        for replica in replicas:
            replica.stop()
