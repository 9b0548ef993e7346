"""Benchmark of ``kubesched extender serve`` (issue 6): filter and prioritize over HTTP.

Starts the embedded API server and two extender servers, each in its own process: one
with cluster access (``--kubeconfig``: node and pod cache) and one without. Fills the
cluster with scheduler_perf-like nodes (4 cpu / 32Gi / 110 pods, three zones, a few
images) and bound pods, then sends filter and prioritize requests one at a time, as one
kube-scheduler does, in three modes:

* ``Nodes`` — kube-scheduler's default: every candidate node in full, to the server
  without cluster access (plugins see no pods);
* ``Nodes+cache`` — the same requests to the server with the cache (plugins see the
  bound pods);
* ``NodeNames`` — nodeCacheCapable: names only, answered from the cache.

Prints requests/s and p50/p99 latency (client side, request sent to answer read) per
mode, node count and verb, with the default profile, and the server process's CPU time
per request (from ``/proc``), which moves much less than wall time when other processes
share the machine.

    .venv/bin/python bench/extender_bench.py [--nodes 100,1000] [--requests 300] [--pods-per-node 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

_ZONES = ("zone-a", "zone-b", "zone-c")
_PY = sys.executable


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def node_body(i: int) -> dict[str, Any]:
    name = f"node-{i}"
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": _ZONES[i % 3],
            },
        },
        "spec": {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True"}],
            "images": [
                {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 321520},
                {"names": [f"example.com/app:{i % 7}"], "sizeBytes": 50_000_000},
            ],
        },
    }


def pod_body(name: str, node: str = "", app: str = "web") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "app",
                "image": "example.com/app:1",
                "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
            }
        ],
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ],
    }
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": app},
            "uid": f"uid-{name}",
        },
        "spec": spec,
    }


async def _post_all(
    session: aiohttp.ClientSession, url: str, bodies: list[tuple[str, Any]]
) -> None:
    queue = list(reversed(bodies))

    async def worker() -> None:
        while queue:
            path, body = queue.pop()
            async with session.post(url + path, json=body) as response:
                if response.status >= 300:
                    raise RuntimeError(f"{path}: {response.status} {await response.text()}")

    await asyncio.gather(*(worker() for _ in range(8)))


async def _wait_ready(session: aiohttp.ClientSession, url: str) -> None:
    for _ in range(600):
        try:
            async with session.get(url + "/readyz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} never became ready")


async def _measure(
    session: aiohttp.ClientSession, url: str, body: bytes, requests: int, pid: int
) -> tuple[float, float, float, float]:
    """requests/s, p50 ms, p99 ms and server CPU ms per request of ``requests``
    sequential POSTs of ``body`` to the server of process ``pid``."""
    headers = {"Content-Type": "application/json"}
    for _ in range(max(5, requests // 10)):  # warm-up
        async with session.post(url, data=body, headers=headers) as response:
            await response.read()
    latencies = []
    cpu = _cpu_seconds(pid)
    started = time.perf_counter()
    for _ in range(requests):
        t0 = time.perf_counter()
        async with session.post(url, data=body, headers=headers) as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"{url}: {response.status} {(await response.read())[:300]!r}")
        latencies.append((time.perf_counter() - t0) * 1000)
    elapsed = time.perf_counter() - started
    cpu_ms = (_cpu_seconds(pid) - cpu) * 1000 / requests
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return requests / elapsed, statistics.median(latencies), p99, cpu_ms


async def bench(
    api: str,
    cached: tuple[str, int],
    bare: tuple[str, int],
    sizes: list[int],
    requests: int,
    per_node: int,
) -> None:
    """Fill the cluster, then measure; ``cached``/``bare`` are each server's URL and pid."""
    biggest = max(sizes)
    async with aiohttp.ClientSession() as session:
        await _post_all(session, api, [("/api/v1/nodes", node_body(i)) for i in range(biggest)])
        pods = [
            (
                "/api/v1/namespaces/default/pods",
                pod_body(f"bound-{i}", f"node-{i % biggest}", f"app-{i % 10}"),
            )
            for i in range(biggest * per_node)
        ]
        await _post_all(session, api, pods)
        async with session.get(api + "/api/v1/nodes") as response:
            nodes = (await response.json())["items"]
        nodes.sort(key=lambda n: int(n["metadata"]["name"].split("-")[1]))
        await _wait_ready(session, cached[0])
        # The cache has synced; wait until it holds every node and pod just written.
        probe = json.dumps(
            {"Pod": pod_body("probe"), "Nodes": None, "NodeNames": [f"node-{biggest - 1}"]}
        )
        for _ in range(600):
            async with session.post(cached[0] + "/filter", data=probe) as response:
                if (await response.json())["NodeNames"] == [f"node-{biggest - 1}"]:
                    break
            await asyncio.sleep(0.1)
        pod = pod_body("pending", app="app-1")
        print("| mode | nodes | verb | requests/s | p50 ms | p99 ms | server CPU ms/request |")
        print("|---|---:|---|---:|---:|---:|---:|")
        for size in sizes:
            subset = nodes[:size]
            full = json.dumps(
                {"Pod": pod, "Nodes": {"metadata": {}, "items": subset}, "NodeNames": None}
            ).encode()
            names = json.dumps(
                {"Pod": pod, "Nodes": None, "NodeNames": [n["metadata"]["name"] for n in subset]}
            ).encode()
            count = requests if size <= 100 else max(50, requests // 5)
            for mode, (url, pid), body in (
                ("Nodes", bare, full),
                ("Nodes+cache", cached, full),
                ("NodeNames", cached, names),
            ):
                for verb in ("filter", "prioritize"):
                    rate, p50, p99, cpu = await _measure(session, f"{url}/{verb}", body, count, pid)
                    print(
                        f"| {mode} | {size:,} | {verb} | {rate:,.0f} | {p50:.2f} | {p99:.2f} "
                        f"| {cpu:.2f} |",
                        flush=True,
                    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--nodes", default="100,1000", help="node counts per request, comma-separated"
    )
    parser.add_argument("--requests", type=int, default=300, help="requests per 100-node case")
    parser.add_argument("--pods-per-node", type=int, default=2, help="bound pods per node")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.nodes.split(",")]
    kubeconfig = Path("/tmp/kubesched-extender-bench.kubeconfig")
    api_code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    ext_code = "import sys; from kubesched.extender.cli import main; sys.exit(main(sys.argv[1:]))"
    api = subprocess.Popen(
        [
            _PY,
            "-c",
            api_code,
            "--port",
            "0",
            "--write-kubeconfig",
            str(kubeconfig),
            "--no-controllers",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    procs = [api]
    try:
        assert api.stdout is not None
        api.stdout.readline()
        api_url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        cached_port, bare_port = _free_port(), _free_port()
        serve = [_PY, "-c", ext_code, "serve", "--host", "127.0.0.1"]
        cached = subprocess.Popen(
            [*serve, "--port", str(cached_port), "--kubeconfig", str(kubeconfig)]
        )
        bare = subprocess.Popen([*serve, "--port", str(bare_port)])
        procs += [cached, bare]
        asyncio.run(
            bench(
                api_url,
                (f"http://127.0.0.1:{cached_port}", cached.pid),
                (f"http://127.0.0.1:{bare_port}", bare.pid),
                sizes,
                args.requests,
                args.pods_per_node,
            )
        )
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
