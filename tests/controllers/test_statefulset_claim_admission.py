"""The documentation's StatefulSet (``web.yaml``) against the embedded API server with the
StatefulSet controller beside it (issue 15): the claims the controller makes from the
``volumeClaimTemplates`` pass through the server's admission as any client's would — the
default StorageClass filled in, the protection finalizer added, the claim defaulted — and
kubectl shows them. The claims' binding is the PV controller's business, not tested here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_helpers import kubectl, wait_for

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.controllers import statefulset

WEB = Path(__file__).resolve().parents[1] / "apiserver" / "manifests" / "web.yaml"
DEFAULT_CLASS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("sts-claims") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, controllers=[statefulset.NAME])
    yield handle
    handle.stop()


def test_web_claims_get_the_default_class_and_protection(
    cluster: ClusterHandle, tmp_path: Path
) -> None:
    config = cluster.kubeconfig_path
    manifest = tmp_path / "standard.yaml"
    manifest.write_text(DEFAULT_CLASS)
    kubectl(config, "apply", "-f", str(manifest))
    kubectl(config, "apply", "-f", str(WEB))
    # OrderedReady: web-0's claim first (nothing runs web-0 here, so web-1 waits).
    raw = wait_for(
        "www-web-0 made",
        lambda: kubectl(config, "get", "pvc", "www-web-0", "-o", "json", check=False),
    )
    claim = json.loads(raw)
    assert claim["spec"]["storageClassName"] == "standard"
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert claim["metadata"]["labels"] == {"app": "nginx"}
    assert claim["status"] == {"phase": "Pending"}
    rows = kubectl(config, "get", "pvc").splitlines()
    assert rows[1].split()[:4] == ["www-web-0", "Pending", "standard", "<unset>"]
