"""examples/extender_filter.py: the tutorials' filter extender, answered over HTTP.

The example is started the way a user starts it (``python examples/extender_filter.py
--port N``, a real process on loopback), then sent a filter and a prioritize call with
the JSON a stock kube-scheduler sends: Go field names, full v1.Node objects.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extender_filter.py"


def node(name: str, labels: dict[str, str]) -> dict[str, Any]:
    """A v1.Node as kube-scheduler's Go encoder writes it (only zero values elided)."""
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"kubernetes.io/hostname": name, **labels},
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kernelVersion": "",
                "osImage": "",
                "containerRuntimeVersion": "",
                "kubeletVersion": "v1.30.0",
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


POD = {
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "uid-web-0",
        "creationTimestamp": "2024-05-01T11:00:00Z",
    },
    "spec": {
        "containers": [{"name": "web", "image": "nginx", "resources": {}}],
        "schedulerName": "default-scheduler",
        "priority": 0,
    },
    "status": {"phase": "Pending", "qosClass": "BestEffort"},
}

NODES = [
    node("plain", {}),
    node("allowed-hdd", {"scheduler-extender": "allowed", "disk": "hdd"}),
    node("allowed-ssd", {"scheduler-extender": "allowed", "disk": "ssd"}),
    node("denied", {"scheduler-extender": "denied"}),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=1) as response:
                    assert response.read() == b"ok"
                    break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(process.stderr.read() if process.stderr else "") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def call(url: str, body: bytes) -> tuple[int, bytes]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def args_body() -> bytes:
    return json.dumps(
        {"Pod": POD, "Nodes": {"metadata": {}, "items": NODES}, "NodeNames": None}
    ).encode()


def test_only_labelled_nodes_pass_the_filter(base_url: str) -> None:
    status, body = call(f"{base_url}/filter", args_body())
    assert status == 200
    answer = json.loads(body)
    assert list(answer) == [
        "Nodes",
        "NodeNames",
        "FailedNodes",
        "FailedAndUnresolvableNodes",
        "Error",
    ]
    assert answer["Nodes"]["items"] == [NODES[1], NODES[2]]
    reason = "node(s) didn't have label scheduler-extender=allowed"
    assert answer["FailedNodes"] == {"denied": reason, "plain": reason}
    assert answer["FailedAndUnresolvableNodes"] == {}
    assert answer["NodeNames"] is None
    assert answer["Error"] == ""


def test_prioritize_prefers_ssd(base_url: str) -> None:
    kept = json.dumps({"Pod": POD, "Nodes": {"metadata": {}, "items": NODES[1:3]}}).encode()
    status, body = call(f"{base_url}/prioritize", kept)
    assert status == 200
    assert body == b'[{"Host":"allowed-hdd","Score":0},{"Host":"allowed-ssd","Score":10}]'


def test_bad_request_is_answered_and_the_extender_keeps_serving(base_url: str) -> None:
    status, body = call(f"{base_url}/filter", b'{"Nodes": {"items": []}}')
    assert status == 400
    assert json.loads(body)["Error"] == (
        "bad filter request: ExtenderArgs.Pod: Required value: the pod being scheduled is missing"
    )
    assert call(f"{base_url}/filter", args_body())[0] == 200


def test_bind_is_not_served(base_url: str) -> None:
    status, _ = call(f"{base_url}/bind", b"{}")
    assert status == 404
