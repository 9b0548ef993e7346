"""``kubesched run`` against an API server that wants a bearer token over HTTPS: the
kubeconfig the server wrote (CA and token) is all the scheduler needs to bind a pod."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

from kubesched.apiserver.runner import start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS

PROGRAM = "import sys; from kubesched.scheduler.cli import main; sys.exit(main(sys.argv[1:]))"


def test_run_binds_a_pod_on_a_tls_and_token_api_server(tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    with start_apiserver(kubeconfig_path=kubeconfig, token="sched-token", tls=True) as server:
        assert server.url.startswith("https://")
        config = load_kubeconfig([kubeconfig])

        async def create() -> None:
            async with Client(config) as client:
                node = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": "n1"},
                    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
                }
                await client.create(NODES.raw, node)
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {
                        "schedulerName": "kubesched",
                        "containers": [{"name": "c", "image": "x"}],
                    },
                }
                await client.create(PODS.raw, pod)

        async def node_of(name: str) -> str:
            async with Client(config) as client:
                raw = await client.get(PODS.raw, name, "default")
                return str(raw["spec"].get("nodeName", ""))

        asyncio.run(create())
        proc = subprocess.Popen(
            [sys.executable, "-c", PROGRAM, "--kubeconfig", str(kubeconfig), "--secure-port", "0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 10.0
            while asyncio.run(node_of("p")) == "" and time.monotonic() < deadline:
                time.sleep(0.05)
            assert asyncio.run(node_of("p")) == "n1"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=5) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
