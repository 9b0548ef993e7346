"""``kubesched controllers`` against a bare API server, and ``kubesched apiserver --nodes``
with the controllers beside it: processes started for real, pods run by the kubelet,
clean stops on SIGTERM, bad flags refused with the flag named."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from kubesched.apiserver.runner import start_apiserver
from kubesched.cli.controllers import main as controllers_main


def _kubesched(*args: str) -> list[str]:
    code = "import sys; from kubesched.cli import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *args]


def _wait(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def _bound_pod(name: str, node: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            node_name=node, containers=[client.V1Container(name="c", image="pause")]
        ),
    )


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    return out


def test_controllers_run_against_a_bare_server(tmp_path: Path) -> None:
    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=1) as server:
        api = config.new_client_from_config(config_file=str(server.kubeconfig_path))
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", _bound_pod("early", "node-0"))
        proc = subprocess.Popen(
            _kubesched(
                "controllers",
                "--kubeconfig",
                str(server.kubeconfig_path),
                "--run-delay",
                "0.05",
                "--node-lease-interval",
                "0",
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # A pod bound before the controllers started runs too (level-triggered).
            _wait(lambda: core.read_namespaced_pod("early", "default").status.phase == "Running")
            leases = client.CoordinationV1Api(api).list_namespaced_lease("kube-node-lease")
            assert leases.items == []  # --node-lease-interval 0
            # The daemonset-controller runs where the server serves DaemonSets (issue 14).
            apps = client.AppsV1Api(api).get_api_resources().resources
            daemon = ["daemonset-controller"] if any(r.name == "daemonsets" for r in apps) else []
        finally:
            out = _stop(proc)
            api.close()
    running = next(line for line in out.splitlines() if line.startswith("controllers running:"))
    assert running.split(": ")[1].split(", ") == [
        "cronjob-controller",
        "csi-attacher",
        "csi-node-registrar",
        "csi-provisioner",
        *daemon,
        "deployment-controller",
        "disruption-controller",
        "dra-driver-simulator",
        "elasticquota-controller",
        "ephemeral-volume-controller",
        "garbage-collector-controller",
        "job-controller",
        "kubelet",
        "persistentvolume-attach-detach-controller",
        "persistentvolume-binder-controller",
        "persistentvolume-protection-controller",
        "persistentvolumeclaim-protection-controller",
        "pod-garbage-collector-controller",
        "podgroup-controller",
        "replicaset-controller",
        "replicationcontroller-controller",
        "resourceclaim-controller",
        "serviceaccount-controller",
        "statefulset-controller",
    ]
    assert "kubesched controllers stopped" in out


def test_apiserver_with_nodes_runs_the_controllers(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen(
        _kubesched(
            "apiserver",
            "--port",
            "0",
            "--write-kubeconfig",
            str(kubeconfig),
            "--nodes",
            "2",
            "--run-delay",
            "0.05",
            "--controllers",
            "kubelet",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert "2 simulated nodes created" in lines[0]
        assert "listening on" in lines[1]
        assert lines[2].strip() == "controllers running: kubelet"
        json.loads(kubeconfig.read_text())
        api = config.new_client_from_config(config_file=str(kubeconfig))
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", _bound_pod("p", "node-1"))
        _wait(lambda: core.read_namespaced_pod("p", "default").status.phase == "Running")
        api.close()
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--node-lease-interval", "-1"], "--node-lease-interval: Invalid value: -1"),
        (["--controllers", "kubelet,replicaset"], "unknown controller(s) replicaset"),
        (["--kube-api-qps", "0"], "--kube-api-qps and --kube-api-burst must be positive"),
    ],
    ids=["negative-lease-interval", "unknown-controller", "zero-qps"],
)
def test_bad_flags_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    with start_apiserver(kubeconfig_path=tmp_path / "kc") as server:
        assert controllers_main(["--kubeconfig", str(server.kubeconfig_path), *argv]) == 2
    assert message in capsys.readouterr().err
