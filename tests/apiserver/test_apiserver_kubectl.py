"""``kubectl --kubeconfig F`` against the embedded API server, unchanged: get, apply,
patch, delete. Skipped, with the reason, where kubectl is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None,
    reason="kubectl is not on PATH: install kubectl >= 1.27 to run the kubectl integration tests",
)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 100m}}
"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: kn1
  labels: {zone: a}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""


@pytest.fixture(scope="module")
def kubectl(apiserver):
    def run(*args, stdin=None, check=True):
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(apiserver.kubeconfig_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    return run


def test_apply_get_patch_delete(kubectl):
    assert kubectl("apply", "-f", "-", stdin=POD).stdout.strip() == "pod/web created"
    assert kubectl("apply", "-f", "-", stdin=NODE).stdout.strip() == "node/kn1 created"
    assert kubectl("apply", "-f", "-", stdin=POD).stdout.strip() == "pod/web unchanged"
    pod = json.loads(kubectl("get", "pod", "web", "-o", "json").stdout)
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert pod["status"]["phase"] == "Pending"
    assert "web" in kubectl("get", "pods").stdout
    assert "kn1" in kubectl("get", "nodes").stdout
    node = json.loads(kubectl("get", "node", "kn1", "-o", "json").stdout)
    assert node["status"]["allocatable"]["cpu"] == "4"
    kubectl("patch", "pod", "web", "-p", '{"metadata":{"labels":{"tier":"front"}}}')
    kubectl("patch", "pod", "web", "--type=merge", "-p", '{"metadata":{"annotations":{"a":"b"}}}')
    kubectl(
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/labels/j","value":"k"}]',
    )
    labels = json.loads(kubectl("get", "pod", "web", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"app": "web", "tier": "front", "j": "k"}
    listed = json.loads(kubectl("get", "pods", "-l", "tier=front", "-o", "json").stdout)
    assert [p["metadata"]["name"] for p in listed["items"]] == ["web"]
    assert kubectl("delete", "pod", "web").stdout.strip() == 'pod "web" deleted'
    assert "No resources found" in kubectl("get", "pods").stderr
    kubectl("delete", "node", "kn1")


def test_errors_reach_kubectl_users(kubectl):
    result = kubectl("get", "pod", "nope", check=False)
    assert result.returncode != 0
    assert 'pods "nope" not found' in result.stderr
    result = kubectl("get", "widgets", check=False)
    assert result.returncode != 0
    assert "widgets" in result.stderr
