"""``kubesched bench --e2e --workload deployment``: one Deployment, from apply to every pod
Running, through the whole control plane.

Five processes share the machine, as in a real cluster: the API server (the embedded one,
started here with ``--no-controllers``), the workload controllers (``kubesched controllers
--controllers replicaset-controller,deployment-controller``), the simulated kubelet
(``kubesched controllers --controllers kubelet``, node leases off: 5,000 nodes renewing
every 10 s would be 500 writes/s of their own), the scheduler (``kubesched run``, as the
cluster's ``default-scheduler``), and this driver, which creates the Deployment through
our ``kube`` client and watches its pods. Every controller client gets scheduler_perf's
QPS (5,000), so that no token bucket, only the work, bounds the run.

The run: the Deployment (``--pods`` replicas of scheduler_perf's pause pod, 100m cpu and
500Mi) is created; a watch records when each pod is first seen, first seen bound and
first seen Running. Throughput is pods over the time from the create request to the last
pod seen Running. Where the time went: when the last pod was created (controllers), bound
(scheduler) and Running (kubelet), and each process's CPU over the run (from ``/proc``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.cli.e2ebench import (
    CLIENT_BURST,
    CLIENT_QPS,
    E2EError,
    _free_port,
    _node_template,
    _percentile,
    _proc_cpu_seconds,
    _ready,
    _spawn,
    _stop,
    _tail,
    _wait_for,
)
from kubesched.kube import Client, KubeError, load_config
from kubesched.kube.resources import NAMESPACES, NODES, PODS, RawObject, Resource

__all__ = ["WorkloadResult", "run_workload", "workload_text"]

DEPLOYMENTS: Resource[RawObject] = Resource(
    "apps", "v1", "deployments", "Deployment", True, lambda raw: raw
)
WORKLOAD_CONTROLLERS = "replicaset-controller,deployment-controller"
KUBELET = "kubelet"
_READY_LINE = "controllers running"
#: Environment variable naming a file: run the workload controllers under cProfile.
PROFILE_ENV = "KUBESCHED_E2E_CONTROLLERS_PROFILE"


@dataclass
class WorkloadResult:
    """What one Deployment run measured (times in seconds from the create request)."""

    nodes: int
    pods: int
    running: int
    seconds: float
    created: dict[str, float]
    bound: dict[str, float]
    started: dict[str, float]
    cpu: dict[str, float | None]
    load_average: float
    rebound: int = 0
    processes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """One JSON object: throughput, the stages' ends, per-pod latency, CPU."""

        def last(times: dict[str, float]) -> float:
            return round(max(times.values()), 3) if times else 0.0

        latencies = sorted(
            1000 * (self.started[n] - self.created[n]) for n in self.started if n in self.created
        )
        cpu = {k: (None if v is None else round(v, 2)) for k, v in self.cpu.items()}
        per_pod = {
            k: (None if v is None or not self.pods else round(1000 * v / self.pods, 3))
            for k, v in self.cpu.items()
        }
        return {
            "workload": "deployment",
            "nodes": self.nodes,
            "pods": self.pods,
            "running": self.running,
            "seconds": round(self.seconds, 3),
            "pods_per_second": round(self.running / self.seconds, 1) if self.seconds else 0.0,
            "last_created_seconds": last(self.created),
            "last_bound_seconds": last(self.bound),
            "last_running_seconds": last(self.started),
            "p50_ms": round(_percentile(latencies, 50), 1),
            "p99_ms": round(_percentile(latencies, 99), 1),
            "cpu_seconds": cpu,
            "cpu_ms_per_pod": per_pod,
            "pods_bound_twice": self.rebound,
            "load_average": round(self.load_average, 2),
        }


def workload_text(data: dict[str, Any]) -> str:
    """The human-readable report of :meth:`WorkloadResult.to_json`."""
    cpu, per_pod = data["cpu_seconds"], data["cpu_ms_per_pod"]

    def fmt(name: str) -> str:
        if cpu.get(name) is None:
            return "n/a"
        return f"{cpu[name]}s ({per_pod[name]} ms per pod)"

    lines = [
        f"end to end, one Deployment: {data['nodes']} nodes, {data['pods']} replicas, "
        f"{data['running']} Running in {data['seconds']}s",
        f"  throughput      {data['pods_per_second']} pods/s (apply -> last pod Running)",
        f"  stages          last pod created {data['last_created_seconds']}s, bound "
        f"{data['last_bound_seconds']}s, Running {data['last_running_seconds']}s",
        f"  latency         p50 {data['p50_ms']} ms, p99 {data['p99_ms']} ms "
        "(pod created -> Running)",
        f"  API server      {fmt('apiserver')}",
        f"  controllers     {fmt('controllers')} (ReplicaSet + Deployment)",
        f"  scheduler       {fmt('scheduler')}",
        f"  kubelet         {fmt('kubelet')}",
        f"  this driver     {fmt('driver')}",
        f"  pods bound twice {data['pods_bound_twice']}",
        f"  load average    {data['load_average']} (1 min, at the start)",
    ]
    return "\n".join(lines) + "\n"


def _deployment(name: str, namespace: str, replicas: int) -> RawObject:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "pause",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "500Mi"},
                                "limits": {"cpu": "100m", "memory": "500Mi"},
                            },
                        }
                    ]
                },
            },
        },
    }


def _scheduler_config(folder: Path, kubeconfig: str) -> Path:
    """The cluster's default-scheduler with kube-scheduler's defaults (a share of the
    nodes scored, as ``percentageOfNodesToScore`` unset gives), scheduler_perf's
    QPS/burst."""
    path = folder / "scheduler.yaml"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": kubeconfig, "qps": CLIENT_QPS, "burst": CLIENT_BURST},
        "leaderElection": {"leaderElect": False},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


class _PodWatch:
    """Follows the namespace's pods: when each was first seen, bound and Running."""

    def __init__(self, client: Client, namespace: str, expected: int, start: float) -> None:
        self.client = client
        self.namespace = namespace
        self.expected = expected
        self.start = start
        self.created: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.started: dict[str, float] = {}
        self.nodes: dict[str, str] = {}
        self.rebound = 0
        self.done = asyncio.Event()

    def _see(self, obj: RawObject) -> None:
        now = time.perf_counter() - self.start
        name = obj["metadata"]["name"]
        self.created.setdefault(name, now)
        node = (obj.get("spec") or {}).get("nodeName")
        if node:
            self.bound.setdefault(name, now)
            if self.nodes.setdefault(name, node) != node:
                self.rebound += 1
        if (obj.get("status") or {}).get("phase") == "Running" and name not in self.started:
            self.started[name] = now
            if len(self.started) >= self.expected:
                self.done.set()

    async def run(self, resource_version: str) -> None:
        rv = resource_version
        while not self.done.is_set():
            stream = self.client.watch_stream(
                PODS.raw, self.namespace, rv, timeout_seconds=600, allow_bookmarks=True
            )
            async with contextlib.aclosing(stream):
                async for event in stream:
                    obj = event.get("object") or {}
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        self._see(obj)
                        if self.done.is_set():
                            return


def _start_server(folder: Path, nodes: int) -> tuple[subprocess.Popen[bytes], str]:
    kubeconfig = folder / "kubeconfig"
    log = folder / "apiserver.log"
    args = ["apiserver", "--port", "0", "--write-kubeconfig", str(kubeconfig)]
    args += ["--nodes", str(nodes), "--node-template", str(_node_template(folder))]
    args += ["--no-controllers"]
    proc = _spawn(args, log)
    deadline = time.monotonic() + 120
    while "listening on" not in _tail(log, 5):
        if proc.poll() is not None:
            raise E2EError(f"the API server exited with status {proc.returncode}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            _stop(proc)
            raise E2EError(f"the API server did not start:\n{_tail(log)}")
        time.sleep(0.05)
    return proc, str(kubeconfig)


def _start_controllers(
    folder: Path, kubeconfig: str, which: str, extra: list[str]
) -> subprocess.Popen[bytes]:
    log = folder / f"controllers-{which.split('-')[0].split(',')[0]}.log"
    args = ["controllers", "--kubeconfig", kubeconfig, "--controllers", which]
    args += ["--kube-api-qps", str(CLIENT_QPS), "--kube-api-burst", str(CLIENT_BURST), *extra]
    # For profiling: the workload controllers' cProfile stats (CPU time) go to this file.
    profile = os.environ.get(PROFILE_ENV, "") if which == WORKLOAD_CONTROLLERS else ""
    return _spawn(args, log, profile)


async def _log_says(log: Path, text: str) -> bool:
    return text in _tail(log, 20)


def run_workload(
    nodes: int,
    pods: int,
    *,
    timeout: float = 600.0,
    run_delay: float = 0.0,
    progress: Callable[[str], None] | None = None,
) -> WorkloadResult:
    """Run the Deployment benchmark (see the module docstring); raises
    :class:`~kubesched.cli.e2ebench.E2EError`. **run_delay**: the kubelet's delay from
    bound to Running."""
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="kubesched-e2e-deploy-") as tmp:
        folder = Path(tmp)
        procs: dict[str, subprocess.Popen[bytes]] = {}
        try:
            say(f"starting the API server with {nodes} nodes")
            procs["apiserver"], kubeconfig = _start_server(folder, nodes)
            return asyncio.run(
                _drive(folder, kubeconfig, procs, nodes, pods, timeout, run_delay, say)
            )
        finally:
            for name in ("controllers", "scheduler", "kubelet", "apiserver"):
                if name in procs:
                    _stop(procs[name])


async def _drive(
    folder: Path,
    kubeconfig: str,
    procs: dict[str, subprocess.Popen[bytes]],
    nodes: int,
    pods: int,
    timeout: float,
    run_delay: float,
    say: Callable[[str], None],
) -> WorkloadResult:
    say("starting the kubelet, the workload controllers and the scheduler")
    kubelet_flags = ["--node-lease-interval", "0", "--run-delay", str(run_delay)]
    procs["kubelet"] = _start_controllers(folder, kubeconfig, KUBELET, kubelet_flags)
    procs["controllers"] = _start_controllers(folder, kubeconfig, WORKLOAD_CONTROLLERS, [])
    port = _free_port()
    config = _scheduler_config(folder, kubeconfig)
    args = ["run", "--config", str(config), "--secure-port", str(port)]
    args += ["--bind-address", "127.0.0.1"]
    procs["scheduler"] = _spawn(args, folder / "scheduler.log")
    for name, log in (
        ("kubelet", folder / "controllers-kubelet.log"),
        ("controllers", folder / "controllers-replicaset.log"),
    ):
        await _wait_for(
            lambda log=log: _log_says(log, _READY_LINE),  # type: ignore[misc]
            procs[name],
            f"the {name}",
            log,
        )
    await _wait_for(
        lambda: _ready(port), procs["scheduler"], "the scheduler", folder / "scheduler.log"
    )
    connection = load_config(kubeconfig)
    namespace = f"kubesched-bench-{secrets.token_hex(3)}"
    async with Client(connection, qps=0, burst=1) as client:
        node_count = len((await client.list_all(NODES.raw)).items)
        await client.create(
            NAMESPACES.raw,
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
        try:
            return await _measure(client, namespace, procs, node_count, pods, timeout, folder, say)
        finally:
            with contextlib.suppress(KubeError):
                await client.delete(NAMESPACES.raw, namespace)


async def _measure(
    client: Client,
    namespace: str,
    procs: dict[str, subprocess.Popen[bytes]],
    nodes: int,
    pods: int,
    timeout: float,
    folder: Path,
    say: Callable[[str], None],
) -> WorkloadResult:
    listed = await client.list(PODS.raw, namespace, limit=1)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cpu0 = {name: _proc_cpu_seconds(proc.pid) for name, proc in procs.items()}
    driver0 = time.process_time()
    start = time.perf_counter()
    watch = _PodWatch(client, namespace, pods, start)
    watcher = asyncio.create_task(watch.run(listed.resource_version))
    say(f"creating a Deployment of {pods} replicas")
    await client.create(DEPLOYMENTS, _deployment("bench", namespace, pods), namespace)
    say("waiting until every pod is Running")
    try:
        await asyncio.wait_for(asyncio.shield(watch.done.wait()), timeout)
    except TimeoutError:
        watcher.cancel()
        logs = "\n".join(f"--- {p.name}:\n{_tail(p, 8)}" for p in sorted(folder.glob("*.log")))
        raise E2EError(
            f"only {len(watch.started)} of {pods} pods Running after {timeout:.0f}s "
            f"({len(watch.created)} created, {len(watch.bound)} bound):\n{logs}"
        ) from None
    seconds = time.perf_counter() - start
    await watcher
    cpu: dict[str, float | None] = {}
    for name, proc in procs.items():
        if proc.poll() is not None:
            raise E2EError(f"the {name} exited with status {proc.returncode}")
        now = _proc_cpu_seconds(proc.pid)
        before = cpu0[name]
        cpu[name] = None if now is None or before is None else now - before
    cpu["driver"] = time.process_time() - driver0
    return WorkloadResult(
        nodes=nodes,
        pods=pods,
        running=len(watch.started),
        seconds=seconds,
        created=watch.created,
        bound=watch.bound,
        started=watch.started,
        cpu=cpu,
        load_average=load,
        rebound=watch.rebound,
    )


def run_workload_command(args: Any) -> int:
    """``kubesched bench --e2e --workload deployment``: run, print the report (or
    ``--json``); the exit code."""
    import json
    import sys

    nodes = 5000 if args.nodes is None else args.nodes
    pods = 5000 if args.pods is None else args.pods
    for name, value in (("--nodes", nodes), ("--pods", pods)):
        if value <= 0:
            print(
                f"kubesched: error: {name}: Invalid value: {value}: must be a positive number",
                file=sys.stderr,
            )
            return 2
    for name, given in (
        ("--init-pods", args.init_pods),
        ("--per-node", args.per_node),
        ("--config", args.config),
        ("--kubeconfig", args.kubeconfig),
    ):
        if given:
            print(
                f"kubesched: error: {name}: not supported with --workload deployment",
                file=sys.stderr,
            )
            return 2
    show = sys.stderr.isatty() and not args.json

    def say(message: str) -> None:
        if show:
            sys.stderr.write(f"{message}\n")
            sys.stderr.flush()

    try:
        result = run_workload(nodes, pods, progress=say)
    except (E2EError, KubeError) as err:
        print(f"kubesched bench --e2e: {err}", file=sys.stderr)
        return 1
    data = result.to_json()
    sys.stdout.write(json.dumps(data) + "\n" if args.json else workload_text(data))
    return 0 if data["running"] == data["pods"] and not data["pods_bound_twice"] else 1
