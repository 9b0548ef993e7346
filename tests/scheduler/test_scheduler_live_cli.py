"""``kubesched run`` semantics (``scheduler.cli.main``) as a user starts it: a separate
process against the embedded API server, stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from typing import Any

from kubesched.apiserver.runner import start_apiserver
from kubesched.kube import Client, KubeError, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.scheduler.cli import main

PROGRAM = "import sys; from kubesched.scheduler.cli import main; sys.exit(main(sys.argv[1:]))"


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def _pod(name: str, scheduler_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": scheduler_name, "containers": [{"name": "c", "image": "x"}]},
    }


def test_run_binds_pods_of_profile_kubesched_and_exits_0_on_sigterm(tmp_path):
    with start_apiserver(kubeconfig_path=tmp_path / "kubeconfig") as server:

        async def create() -> None:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                await client.create(NODES.raw, _node("n1"))
                await client.create(PODS.raw, _pod("mine", "kubesched"))
                await client.create(PODS.raw, _pod("upstreams", "default-scheduler"))

        async def node_of(name: str) -> str:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                raw = await client.get(PODS.raw, name, "default")
                return str(raw["spec"].get("nodeName", ""))

        asyncio.run(create())
        proc = subprocess.Popen(
            # --secure-port 0: no endpoints, so parallel runs cannot collide on 10259.
            [
                sys.executable,
                "-c",
                PROGRAM,
                "--kubeconfig",
                str(server.kubeconfig_path),
                "--secure-port",
                "0",
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 30.0  # a loaded machine starts Python slowly
            while asyncio.run(node_of("mine")) == "" and time.monotonic() < deadline:
                time.sleep(0.05)
            assert asyncio.run(node_of("mine")) == "n1"
            assert asyncio.run(node_of("upstreams")) == ""
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=15) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_run_reports_a_bad_config_file_and_exits_1(tmp_path, capsys):
    bad = tmp_path / "config.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Nope\n")
    assert main(["--config", str(bad), "--kubeconfig", str(tmp_path / "none")]) == 1
    assert "kubesched run:" in capsys.readouterr().err


def test_run_exits_1_when_the_api_server_stops_answering_its_renewals(tmp_path):
    """A leader gives up only when the server does not answer for renewDeadline, and
    then exits 1 (kube-scheduler's "leaderelection lost")."""
    config = tmp_path / "config.yaml"
    server = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig")
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection: {{kubeconfig: {server.kubeconfig_path}}}\n"
        "leaderElection: {leaderElect: true, resourceName: exits, leaseDuration: 2s,"
        " renewDeadline: 1s, retryPeriod: 200ms}\n"
    )

    async def holder() -> str:
        async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
            try:
                lease = await client.get_lease("kube-system", "exits")
            except KubeError:
                return ""
            return str(lease["spec"].get("holderIdentity", ""))

    proc = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, "--config", str(config), "--secure-port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30.0
        while not asyncio.run(holder()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert asyncio.run(holder()), "the scheduler never took the Lease"
        server.stop()  # nothing answers from now on
        assert proc.wait(timeout=30) == 1
        assert "leader election lost" in (proc.stderr.read() if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()
