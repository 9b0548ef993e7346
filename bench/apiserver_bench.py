"""Benchmark of the embedded API server (issue 4): creates/s, binds/s, watch events/s, memory.

Starts ``kubesched apiserver`` in its own process (so the client does not share its GIL),
then over HTTP: creates N nodes and M pods, binds every pod from C concurrent clients,
while one watcher follows all pods. Prints one line per figure.

    .venv/bin/python bench/apiserver_bench.py [--nodes 5000] [--pods 10000] [--clients 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _run_all(session, url, bodies, clients):
    queue = list(reversed(bodies))

    async def worker():
        while queue:
            path, body = queue.pop()
            async with session.post(url + path, json=body) as response:
                if response.status >= 300:
                    raise RuntimeError(f"{path}: {response.status} {await response.text()}")
                await response.read()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - started


async def _watch(session, url, rv, expected, done):
    count = 0
    started = time.perf_counter()
    first = None
    async with session.get(
        f"{url}/api/v1/pods", params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "600"}
    ) as response:
        async for _line in response.content:
            if first is None:
                first = time.perf_counter()
            count += 1
            if count >= expected:
                break
    done.set()
    return count, time.perf_counter() - (first or started)


async def bench(url: str, nodes: int, pods: int, clients: int, pid: int) -> None:
    connector = aiohttp.TCPConnector(limit=clients + 2)
    async with aiohttp.ClientSession(connector=connector) as session:
        node_bodies = [
            (
                "/api/v1/nodes",
                {
                    "metadata": {"name": f"node-{i}", "labels": {"zone": f"z{i % 3}"}},
                    "status": {"capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
                },
            )
            for i in range(nodes)
        ]
        elapsed = await _run_all(session, url, node_bodies, clients)
        print(f"create nodes: {nodes} in {elapsed:.2f}s = {nodes / elapsed:,.0f}/s")
        async with session.get(f"{url}/api/v1/pods") as response:
            rv = (await response.json())["metadata"]["resourceVersion"]
        done = asyncio.Event()
        # Every pod: one ADDED (create) and one MODIFIED (bind).
        watcher = asyncio.create_task(_watch(session, url, rv, 2 * pods, done))
        pod_bodies = [
            (
                "/api/v1/namespaces/default/pods",
                {
                    "metadata": {"name": f"pod-{i}", "labels": {"app": f"a{i % 10}"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "pause",
                                "resources": {"requests": {"cpu": "100m"}},
                            }
                        ]
                    },
                },
            )
            for i in range(pods)
        ]
        elapsed = await _run_all(session, url, pod_bodies, clients)
        print(f"create pods: {pods} in {elapsed:.2f}s = {pods / elapsed:,.0f}/s")
        binds = [
            (
                f"/api/v1/namespaces/default/pods/pod-{i}/binding",
                {
                    "metadata": {"name": f"pod-{i}"},
                    "target": {"kind": "Node", "name": f"node-{i % nodes}"},
                },
            )
            for i in range(pods)
        ]
        elapsed = await _run_all(session, url, binds, clients)
        print(f"bind pods ({clients} clients): {pods} in {elapsed:.2f}s = {pods / elapsed:,.0f}/s")
        count, watch_elapsed = await asyncio.wait_for(watcher, timeout=120)
        print(
            f"watch: {count} events to one watcher at {count / watch_elapsed:,.0f}/s "
            "(limited by the writers: events arrive as fast as they are written)"
        )
        started = time.perf_counter()
        async with session.get(
            f"{url}/api/v1/pods",
            params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "600"},
        ) as response:
            replayed = 0
            async for _line in response.content:
                replayed += 1
                if replayed >= 2 * pods:
                    break
        replay_elapsed = time.perf_counter() - started
        print(
            f"watch replay from the window: {replayed} events at {replayed / replay_elapsed:,.0f}/s"
        )
        started = time.perf_counter()
        async with session.get(
            f"{url}/api/v1/pods",
            params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "600"},
        ) as response:
            initial = 0
            async for _line in response.content:
                initial += 1
                if initial >= pods:
                    break
        initial_elapsed = time.perf_counter() - started
        print(f"watch initial ADDED: {initial} events at {initial / initial_elapsed:,.0f}/s")
        print(f"server memory (RSS): {_rss_mib(pid):.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args(argv)
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    kubeconfig = Path("/tmp/kubesched-bench.kubeconfig")
    window = str(max(4096, 2 * args.pods + 10))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "--port",
            "0",
            "--write-kubeconfig",
            str(kubeconfig),
            "--window",
            window,
            # No kubelets, as in scheduler_perf: the simulated kubelet would add a pod watcher.
            "--no-controllers",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        asyncio.run(bench(url, args.nodes, args.pods, args.clients, proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
