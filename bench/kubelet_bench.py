"""Benchmark of the simulated kubelet (issue 13): pods bound to simulated nodes -> Running.

Starts ``kubesched apiserver --nodes N --no-controllers`` and ``kubesched controllers``
(the kubelet, node leases off, no run delay) in processes of their own, then creates P
pods already bound to the nodes (``spec.nodeName``, round-robin) from C concurrent
clients while one watcher counts the pods that reach phase Running. Prints the rate from
the first create to the last Running pod, and each process's CPU over that time.

``--in-store`` measures a checkout from before the kubelet moved to ``controllers`` (run
it with ``PYTHONPATH=<old checkout>/src``): there ``kubesched apiserver --nodes N`` runs the
node agent inside the server, on the store.

    .venv/bin/python bench/kubelet_bench.py [--nodes 5000] [--pods 5000] [--clients 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

_CODE = "import sys; from kubesched.cli import main; sys.exit(main(sys.argv[1:]))"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pod(i: int, nodes: int) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default"},
        "spec": {
            "nodeName": f"node-{i % nodes}",
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "10m"}}}
            ],
        },
    }


async def bench(url: str, nodes: int, pods: int, clients: int, pids: dict[str, int]) -> None:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients + 2)) as s:
        async with s.get(f"{url}/api/v1/pods") as response:
            rv = (await response.json())["metadata"]["resourceVersion"]
        running: set[str] = set()
        done = asyncio.Event()

        async def watch() -> None:
            params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "900"}
            async with s.get(f"{url}/api/v1/pods", params=params) as response:
                async for line in response.content:
                    event = json.loads(line)
                    pod = event["object"]
                    if (pod.get("status") or {}).get("phase") == "Running":
                        running.add(pod["metadata"]["name"])
                        if len(running) >= pods:
                            done.set()
                            return

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.2)
        cpu = {name: _cpu_seconds(pid) for name, pid in pids.items()}
        queue = list(range(pods - 1, -1, -1))

        async def create() -> None:
            while queue:
                body = _pod(queue.pop(), nodes)
                async with s.post(f"{url}/api/v1/namespaces/default/pods", json=body) as r:
                    if r.status >= 300:
                        raise RuntimeError(f"create: {r.status} {await r.text()}")
                    await r.read()

        started = time.perf_counter()
        await asyncio.gather(*(create() for _ in range(clients)))
        created = time.perf_counter() - started
        await asyncio.wait_for(done.wait(), 900)
        elapsed = time.perf_counter() - started
        watcher.cancel()
        print(f"{pods} pods on {nodes} nodes: created in {created:.1f} s, all Running after")
        print(f"  {elapsed:.1f} s: {pods / elapsed:,.0f} pods/s")
        for name, pid in pids.items():
            used = _cpu_seconds(pid) - cpu[name]
            print(f"  {name} CPU {used:.1f} s ({1000 * used / pods:.2f} ms per pod)")


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _CODE, *args], stdout=subprocess.PIPE, text=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--in-store", action="store_true", help="an old checkout's node agent")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="kubesched-kubelet-bench-"))
    kubeconfig = folder / "kubeconfig"
    window = str(max(4096, 4 * args.pods))
    server_args = ["apiserver", "--port", "0", "--write-kubeconfig", str(kubeconfig)]
    server_args += ["--window", window, "--nodes", str(args.nodes), "--run-delay", "0"]
    if not args.in_store:
        server_args.append("--no-controllers")
    procs: list[subprocess.Popen[str]] = []
    try:
        server = _start(server_args)
        procs.append(server)
        assert server.stdout is not None
        while "listening on" not in server.stdout.readline():
            pass
        pids = {"apiserver": server.pid}
        if not args.in_store:
            kubelet = ["--run-delay", "0", "--node-lease-interval", "0", "--controllers", "kubelet"]
            controllers = _start(["controllers", "--kubeconfig", str(kubeconfig), *kubelet])
            procs.append(controllers)
            assert controllers.stdout is not None
            controllers.stdout.readline()  # controllers running: ...
            pids["controllers"] = controllers.pid
        url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        asyncio.run(bench(url, args.nodes, args.pods, args.clients, pids))
    finally:
        for proc in reversed(procs):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
