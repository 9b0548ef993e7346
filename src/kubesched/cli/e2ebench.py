"""``kubesched bench --e2e``: the live scheduler timed end to end against an API server.

Three processes share the machine, as in a real control plane: the API server (the
embedded one, started here with ``--no-controllers``, or any cluster named by ``--kubeconfig``),
the scheduler (``kubesched run``, started here, so that its CPU time and peak memory are
its own), and this driver, which creates the pods through our ``kube`` client and
watches them.

The run, in order:

1. nodes: the embedded server creates ``--nodes`` simulated nodes in scheduler_perf's
   shape (4 cpu, 32Gi, 110 pods, three zones); a cluster of ``--kubeconfig`` keeps its own.
2. raw binds: throwaway pods (a schedulerName nobody serves) are created, then bound
   directly through the Binding subresource from concurrent clients, alone on the
   server; their binds/s is what the API server can bind without a scheduler. They are
   deleted before the scheduler starts.
3. the scheduler starts (percentageOfNodesToScore 100, clientConnection qps/burst 5000 as
   scheduler_perf, no leader election) and its informers sync.
4. ``--pods`` pending pods (100m cpu, 500Mi, as scheduler_perf's default pod) are created
   at once from concurrent clients, while a watch records when each is seen bound.
5. a tenth as many pods that fit nowhere are created; the scheduler's own request counts
   give the API requests per scheduled and per unschedulable attempt
   (:mod:`kubesched.cli.e2ebench_requests`).

Throughput is pods over the time from the first create request to the last pod seen
bound. A pod's latency runs from the moment its create request was sent (client side:
``creationTimestamp`` has only one-second resolution) to the watch event that shows it
bound. Where the scheduler's time went comes from its own ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from kubesched.cli import e2ebench_requests as requests
from kubesched.kube import Client, KubeError, NotFound, load_config
from kubesched.kube.resources import NAMESPACES, NODES, PODS, RawObject

__all__ = ["E2EError", "E2EResult", "e2e_text", "run_e2e"]

#: schedulerName of the pods the benchmark's scheduler schedules.
BENCH_SCHEDULER = "kubesched-bench"
#: schedulerName of the raw-bind pods: no scheduler serves it, so only we bind them.
RAW_SCHEDULER = "kubesched-bench-none"
#: scheduler_perf's clientConnection (test/integration/util: QPS 5000, burst 5000).
CLIENT_QPS = 5000
CLIENT_BURST = 5000
#: Requests this driver keeps in flight when creating and binding.
CONCURRENCY = 64
#: Environment variable naming a file: run the scheduler under cProfile, stats there.
PROFILE_ENV = "KUBESCHED_E2E_PROFILE"
_PROFILED = (
    "import cProfile, sys, time\n"
    "from kubesched.cli import main\n"
    "profiler = cProfile.Profile(time.process_time)\n"
    "code = profiler.runcall(main, sys.argv[2:])\n"
    "profiler.dump_stats(sys.argv[1])\n"
    "sys.exit(code)\n"
)
_SERVER_LINE = re.compile(r"listening on (\S+)")


class E2EError(Exception):
    """The benchmark could not run or did not finish (the message says which step)."""


@dataclass
class E2EResult:
    """What one end-to-end run measured."""

    nodes: int
    pods: int
    bound: int
    seconds: float
    create_seconds: float
    latencies_ms: list[float]
    raw_binds: int
    raw_bind_seconds: float
    scheduler_cpu_seconds: float | None
    scheduler_peak_mib: float | None
    apiserver_cpu_seconds: float | None
    driver_cpu_seconds: float
    load_average: float = 0.0
    metrics: dict[str, float] = field(default_factory=dict)
    server: str = "embedded"
    #: API requests per attempt (``e2ebench_requests.AttemptCost.to_json``).
    api_requests: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """One JSON object: throughput, latency percentiles, raw binds, where time went."""
        lat = sorted(self.latencies_ms)
        m = self.metrics
        algorithm = m.get("algorithm_seconds", 0.0)
        cpu = self.scheduler_cpu_seconds
        return {
            "server": self.server,
            "nodes": self.nodes,
            "pods": self.pods,
            "bound": self.bound,
            "seconds": round(self.seconds, 3),
            "pods_per_second": round(self.bound / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(_percentile(lat, 50), 1),
            "p90_ms": round(_percentile(lat, 90), 1),
            "p99_ms": round(_percentile(lat, 99), 1),
            "create_seconds": round(self.create_seconds, 3),
            "raw_binds": self.raw_binds,
            "raw_binds_per_second": (
                round(self.raw_binds / self.raw_bind_seconds, 1) if self.raw_bind_seconds else 0.0
            ),
            "scheduler_cpu_seconds": _round(cpu, 2),
            # Per pod: steadier than wall time on a shared machine.
            "scheduler_cpu_ms_per_pod": _per_pod(cpu, self.pods),
            "apiserver_cpu_ms_per_pod": _per_pod(self.apiserver_cpu_seconds, self.pods),
            "scheduler_peak_mib": _round(self.scheduler_peak_mib, 1),
            "apiserver_cpu_seconds": _round(self.apiserver_cpu_seconds, 2),
            "driver_cpu_seconds": round(self.driver_cpu_seconds, 2),
            # Other work on the machine slows the wall-clock figures: say how much.
            "load_average": round(self.load_average, 2),
            "time": {
                # Serial work of the scheduling cycles (filter + score + select).
                "scheduling_algorithm_seconds": round(algorithm, 3),
                # Bind calls run concurrently: their summed latency exceeds wall time.
                "bind_api_seconds_summed": round(m.get("bind_seconds", 0.0), 3),
                "bind_api_mean_ms": round(
                    1000 * m.get("bind_seconds", 0.0) / max(m.get("binds", 0.0), 1.0), 2
                ),
                # The scheduler's CPU not spent in the algorithm: informers, decoding,
                # cache and queue, binding and event writes, the event loop.
                "other_cpu_seconds": _round(None if cpu is None else max(cpu - algorithm, 0.0), 2),
                "scheduling_attempts": int(m.get("attempts", 0.0)),
            },
            "api_requests": self.api_requests,
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _per_pod(seconds: float | None, pods: int) -> float | None:
    return None if seconds is None or not pods else round(1000 * seconds / pods, 3)


def _percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not ordered:
        return 0.0
    rank = max(1, -(-len(ordered) * pct // 100))
    return ordered[min(int(rank), len(ordered)) - 1]


def e2e_text(data: dict[str, Any]) -> str:
    """The human-readable report of :meth:`E2EResult.to_json`."""
    t = data["time"]

    def fmt(value: object, unit: str) -> str:
        return "n/a" if value is None else f"{value}{unit}"

    lines = [
        f"end to end ({data['server']} API server): {data['nodes']} nodes, "
        f"{data['pods']} pods, {data['bound']} bound in {data['seconds']}s",
        f"  throughput      {data['pods_per_second']} pods/s "
        f"(pods created in {data['create_seconds']}s)",
        f"  latency         p50 {data['p50_ms']} ms, p90 {data['p90_ms']} ms, "
        f"p99 {data['p99_ms']} ms (create request sent -> seen bound)",
        f"  API server      {data['raw_binds_per_second']} raw binds/s alone "
        f"({data['raw_binds']} binds); {fmt(data['apiserver_cpu_seconds'], 's')} CPU "
        f"while scheduling ({fmt(data['apiserver_cpu_ms_per_pod'], ' ms')} per pod)",
        f"  scheduler       {fmt(data['scheduler_cpu_seconds'], 's')} CPU "
        f"({fmt(data['scheduler_cpu_ms_per_pod'], ' ms')} per pod), peak "
        f"{fmt(data['scheduler_peak_mib'], ' MiB')}",
        f"    algorithm     {t['scheduling_algorithm_seconds']}s over "
        f"{t['scheduling_attempts']} attempts",
        f"    other CPU     {fmt(t['other_cpu_seconds'], 's')} (informers, cache, binding, "
        "events, event loop)",
        f"    bind calls    {t['bind_api_mean_ms']} ms mean, {t['bind_api_seconds_summed']}s "
        "summed (concurrent)",
        *([requests.text(data["api_requests"])] if data.get("api_requests") else []),
        f"  this driver     {data['driver_cpu_seconds']}s CPU (creating, watching)",
        f"  load average    {data['load_average']} (1 min, at the start; 2 cores)",
    ]
    return "\n".join(lines) + "\n"


# --- processes ------------------------------------------------------------------------


def _proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a live process (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _proc_peak_mib(pid: int) -> float | None:
    """Peak resident memory (VmHWM) of a live process in MiB (Linux), None elsewhere."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _spawn(args: list[str], log: Path, profile: str = "") -> subprocess.Popen[bytes]:
    """``python -m kubesched.cli ARGS`` with its output in ``log``; under cProfile,
    writing to ``profile``, when that is given."""
    command = [sys.executable, "-m", "kubesched.cli", *args]
    if profile:
        # CPU time, not wall time: on a shared machine, wall time charges whichever
        # function was running when the process was descheduled.
        command = [sys.executable, "-c", _PROFILED, profile, *args]
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


async def _wait_for(
    check: Callable[[], Awaitable[bool]],
    proc: subprocess.Popen[bytes],
    what: str,
    log: Path,
    timeout: float = 120.0,
) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if proc.poll() is not None:
            raise E2EError(f"{what} exited with status {proc.returncode}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            raise E2EError(f"{what} not ready after {timeout:.0f}s:\n{_tail(log)}")
        await asyncio.sleep(0.1)


def _node_template(folder: Path) -> Path:
    """scheduler_perf's node-default.yaml, as a template for the simulated nodes."""
    path = folder / "node-template.yaml"
    template = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node"},
        "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
    }
    path.write_text(yaml.safe_dump(template), encoding="utf-8")
    return path


def _scheduler_config(folder: Path, kubeconfig: str) -> Path:
    """Every node scored, scheduler_perf's QPS/burst, one replica."""
    path = folder / "scheduler.yaml"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "clientConnection": {"kubeconfig": kubeconfig, "qps": CLIENT_QPS, "burst": CLIENT_BURST},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": BENCH_SCHEDULER}],
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


# --- the API calls ----------------------------------------------------------------------


def _pod(name: str, namespace: str, scheduler: str) -> RawObject:
    """scheduler_perf's pod-default.yaml: one pause container, 100m cpu, 500Mi."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "500Mi"},
                        "limits": {"cpu": "100m", "memory": "500Mi"},
                    },
                }
            ],
        },
    }


async def _concurrently(calls: Iterable[Callable[[], Awaitable[object]]]) -> None:
    """Run the calls with :data:`CONCURRENCY` in flight; the first failure is raised."""
    pending = iter(calls)

    async def worker() -> None:
        for call in pending:
            await call()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def _raw_binds(client: Client, namespace: str, nodes: list[str], count: int) -> float:
    """Create ``count`` pods nobody schedules, bind them all (timed), delete them."""
    names = [f"raw-{i:05d}" for i in range(count)]
    await _concurrently(
        lambda n=n: client.create(PODS.raw, _pod(n, namespace, RAW_SCHEDULER), namespace)  # type: ignore[misc]
        for n in names
    )
    started = time.perf_counter()
    await _concurrently(
        lambda i=i, n=n: client.bind(namespace, n, nodes[i % len(nodes)])  # type: ignore[misc]
        for i, n in enumerate(names)
    )
    elapsed = time.perf_counter() - started

    async def delete(name: str) -> None:
        with contextlib.suppress(NotFound):
            await client.delete(PODS.raw, name, namespace, grace_period_seconds=0)

    await _concurrently(lambda n=n: delete(n) for n in names)  # type: ignore[misc]
    return elapsed


class _BoundWatch:
    """Follows the namespace's pods; records when each is first seen with a node."""

    def __init__(self, client: Client, namespace: str, expected: int) -> None:
        self.client = client
        self.namespace = namespace
        self.expected = expected
        self.bound: dict[str, float] = {}
        self.done = asyncio.Event()

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
                        name = obj["metadata"]["name"]
                        if (obj.get("spec") or {}).get("nodeName") and name not in self.bound:
                            self.bound[name] = time.perf_counter()
                            if len(self.bound) >= self.expected:
                                self.done.set()
                                return


async def _metrics(port: int) -> dict[str, float]:
    """Sums read from the scheduler's /metrics: algorithm seconds, Bind seconds/count,
    scheduling attempts."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as resp,
    ):
        text = await resp.text()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        if name == "scheduler_scheduling_algorithm_duration_seconds_sum":
            found["algorithm_seconds"] = float(value)
        elif name.startswith("scheduler_framework_extension_point_duration_seconds_sum{"):
            if 'extension_point="Bind"' in name:
                found["bind_seconds"] = found.get("bind_seconds", 0.0) + float(value)
        elif name.startswith("scheduler_framework_extension_point_duration_seconds_count{"):
            if 'extension_point="Bind"' in name:
                found["binds"] = found.get("binds", 0.0) + float(value)
        elif name.startswith("scheduler_schedule_attempts_total{"):
            found["attempts"] = found.get("attempts", 0.0) + float(value)
    return found


async def _read_requests(port: int) -> dict[str, float]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as resp,
    ):
        return requests.parse_requests(await resp.text())


async def _unschedulable(
    client: Client, namespace: str, count: int, port: int, before: dict[str, float]
) -> dict[str, float]:
    """Create ``count`` pods no node can hold; the request counts once each has had an
    attempt and the writes it caused have settled."""

    async def create(i: int) -> None:
        body = _pod(f"nowhere-{i:05d}", namespace, BENCH_SCHEDULER)
        body["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": requests.UNSCHEDULABLE_CPU}
        }
        await client.create(PODS.raw, body, namespace)

    await _concurrently(lambda i=i: create(i) for i in range(count))  # type: ignore[misc]
    deadline = time.monotonic() + 120
    wanted = before.get("attempts:unschedulable", 0.0) + count
    while (await _read_requests(port)).get("attempts:unschedulable", 0.0) < wanted:
        if time.monotonic() > deadline:
            raise E2EError(f"the {count} pods that fit nowhere were not all attempted in 120s")
        await asyncio.sleep(0.2)
    return await requests.settled(lambda: _read_requests(port))


async def _ready(port: int) -> bool:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/readyz") as resp,
        ):
            return resp.status == 200
    except aiohttp.ClientError:
        return False


# --- the run ----------------------------------------------------------------------------


def run_e2e(
    nodes: int,
    pods: int,
    *,
    kubeconfig: str | None = None,
    timeout: float = 600.0,
    scheduler_args: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> E2EResult:
    """Run the end-to-end benchmark (see the module docstring); raises :class:`E2EError`.

    **kubeconfig**: an existing cluster instead of the embedded API server (its nodes
    are used as they are; the pods go to a namespace of their own, deleted at the end).
    **scheduler_args**: extra arguments for ``kubesched run``.
    """
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="kubesched-e2e-") as tmp:
        folder = Path(tmp)
        server: subprocess.Popen[bytes] | None = None
        spawned: list[subprocess.Popen[bytes]] = []
        try:
            if kubeconfig is None:
                say(f"starting the API server with {nodes} nodes")
                server, kubeconfig = _start_server(folder, nodes)
            return asyncio.run(
                _drive(
                    folder,
                    kubeconfig,
                    server,
                    nodes,
                    pods,
                    timeout,
                    scheduler_args or [],
                    say,
                    spawned.append,
                )
            )
        finally:
            for proc in spawned:
                _stop(proc)
            _stop(server)


def _start_server(folder: Path, nodes: int) -> tuple[subprocess.Popen[bytes], str]:
    kubeconfig = folder / "kubeconfig"
    log = folder / "apiserver.log"
    args = ["apiserver", "--port", "0", "--write-kubeconfig", str(kubeconfig)]
    args += [
        "--nodes",
        str(nodes),
        "--node-template",
        str(_node_template(folder)),
        "--no-controllers",
    ]
    proc = _spawn(args, log)
    deadline = time.monotonic() + 120
    while not _SERVER_LINE.search(_tail(log, 5)):
        if proc.poll() is not None:
            raise E2EError(f"the API server exited with status {proc.returncode}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            _stop(proc)
            raise E2EError(f"the API server did not start:\n{_tail(log)}")
        time.sleep(0.05)
    return proc, str(kubeconfig)


async def _drive(
    folder: Path,
    kubeconfig: str,
    server: subprocess.Popen[bytes] | None,
    nodes: int,
    pods: int,
    timeout: float,
    scheduler_args: list[str],
    say: Callable[[str], None],
    remember: Callable[[subprocess.Popen[bytes]], None],
) -> E2EResult:
    connection = load_config(kubeconfig)
    namespace = f"kubesched-bench-{secrets.token_hex(3)}"
    async with Client(connection, qps=0, burst=1) as client:
        node_names = [n["metadata"]["name"] for n in (await client.list_all(NODES.raw)).items]
        if not node_names:
            raise E2EError(f"{kubeconfig}: the cluster has no nodes")
        await client.create(
            NAMESPACES.raw,
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
        try:
            say(f"binding {pods} throwaway pods directly")
            raw_seconds = await _raw_binds(client, namespace, node_names, pods)
            say("starting the scheduler")
            port = _free_port()
            log = folder / "scheduler.log"
            config = _scheduler_config(folder, kubeconfig)
            args = ["run", "--config", str(config), "--secure-port", str(port)]
            args += ["--bind-address", "127.0.0.1", *scheduler_args]
            # For profiling the live path: the scheduler's cProfile stats go to this file.
            scheduler = _spawn(args, log, os.environ.get(PROFILE_ENV, ""))
            remember(scheduler)
            await _wait_for(lambda: _ready(port), scheduler, "the scheduler", log)
            before = await requests.settled(lambda: _read_requests(port))
            result = await _measure(
                client,
                namespace,
                pods,
                timeout,
                scheduler,
                server,
                port,
                log,
                say,
                len(node_names),
                raw_seconds,
            )
            cost = requests.AttemptCost()
            middle = await requests.settled(lambda: _read_requests(port))
            cost.scheduled = requests.per_attempt(before, middle, "scheduled")
            cost.unschedulable_pods = max(1, pods // 10)
            say(f"creating {cost.unschedulable_pods} pods that fit nowhere")
            after = await _unschedulable(client, namespace, cost.unschedulable_pods, port, middle)
            cost.unschedulable = requests.per_attempt(middle, after, "unschedulable")
            result.api_requests = cost.to_json()
            return result
        finally:
            with contextlib.suppress(KubeError):
                await client.delete(NAMESPACES.raw, namespace)


async def _measure(
    client: Client,
    namespace: str,
    pods: int,
    timeout: float,
    scheduler: subprocess.Popen[bytes],
    server: subprocess.Popen[bytes] | None,
    port: int,
    log: Path,
    say: Callable[[str], None],
    nodes: int,
    raw_seconds: float,
) -> E2EResult:
    listed = await client.list(PODS.raw, namespace, limit=1)
    watch = _BoundWatch(client, namespace, pods)
    watcher = asyncio.create_task(watch.run(listed.resource_version))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    sent: dict[str, float] = {}
    names = [f"pod-{i:05d}" for i in range(pods)]
    cpu0 = _proc_cpu_seconds(scheduler.pid)
    server_cpu0 = _proc_cpu_seconds(server.pid) if server is not None else None
    driver0 = time.process_time()

    async def create(name: str) -> None:
        sent[name] = time.perf_counter()
        await client.create(PODS.raw, _pod(name, namespace, BENCH_SCHEDULER), namespace)

    say(f"creating {pods} pods")
    started = time.perf_counter()
    await _concurrently(lambda n=n: create(n) for n in names)  # type: ignore[misc]
    created = time.perf_counter() - started
    say("waiting until every pod is bound")
    try:
        await asyncio.wait_for(asyncio.shield(watch.done.wait()), timeout)
    except TimeoutError:
        watcher.cancel()
        raise E2EError(
            f"only {len(watch.bound)} of {pods} pods bound after {timeout:.0f}s; the "
            f"scheduler's log:\n{_tail(log)}"
        ) from None
    finally:
        if scheduler.poll() is not None:
            raise E2EError(
                f"the scheduler exited with status {scheduler.returncode}:\n{_tail(log)}"
            )
    await watcher
    cpu1 = _proc_cpu_seconds(scheduler.pid)
    peak = _proc_peak_mib(scheduler.pid)
    server_cpu1 = _proc_cpu_seconds(server.pid) if server is not None else None
    driver_cpu = time.process_time() - driver0
    metrics = await _metrics(port)
    last = max(watch.bound.values())
    latencies = [1000 * max(watch.bound[n] - sent[n], 0.0) for n in names]
    return E2EResult(
        nodes=nodes,
        pods=pods,
        bound=len(watch.bound),
        seconds=last - started,
        create_seconds=created,
        latencies_ms=latencies,
        raw_binds=pods,
        raw_bind_seconds=raw_seconds,
        scheduler_cpu_seconds=None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
        scheduler_peak_mib=peak,
        apiserver_cpu_seconds=(
            None if server_cpu0 is None or server_cpu1 is None else server_cpu1 - server_cpu0
        ),
        driver_cpu_seconds=driver_cpu,
        metrics=metrics,
        server="embedded" if server is not None else "kubeconfig",
        load_average=load,
    )


def result_json(result: E2EResult) -> str:
    """The ``--json`` line."""
    return json.dumps(result.to_json())


def run_e2e_command(args: Any) -> int:
    """``kubesched bench --e2e``: run, print the report (or ``--json``); the exit code."""
    nodes = 5000 if args.nodes is None else args.nodes
    pods = 5000 if args.pods is None else args.pods
    for name, value in (("--nodes", nodes), ("--pods", pods)):
        if value <= 0:
            print(
                f"kubesched: error: {name}: Invalid value: {value}: must be a positive number",
                file=sys.stderr,
            )
            return 2
    for name, value in (
        ("--workload", args.workload != "basic"),
        ("--init-pods", args.init_pods),
        ("--per-node", args.per_node),
        ("--config", args.config),
    ):
        if value:
            print(f"kubesched: error: {name}: not supported with --e2e", file=sys.stderr)
            return 2
    if args.kubeconfig is not None and args.nodes is not None:
        print(
            "kubesched: error: --nodes: not with --kubeconfig (the cluster's own nodes are used)",
            file=sys.stderr,
        )
        return 2
    show = sys.stderr.isatty() and not args.json

    def say(message: str) -> None:
        if show:
            sys.stderr.write(f"{message}\n")
            sys.stderr.flush()

    try:
        result = run_e2e(nodes, pods, kubeconfig=args.kubeconfig, progress=say)
    except (E2EError, KubeError) as err:
        print(f"kubesched bench --e2e: {err}", file=sys.stderr)
        return 1
    data = result.to_json()
    if args.json:
        sys.stdout.write(json.dumps(data) + "\n")
    else:
        sys.stdout.write(e2e_text(data))
    return 0 if data["bound"] == data["pods"] else 1
