"""Upstream's VolumeBinding cases through ``kubesched explain`` with a one-plugin profile
(cluster files carrying the storage objects), as users read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod
from kubesched.testing.storage_wrappers import make_pv, make_pvc, make_storage_class

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "DefaultBinder"},
                        {"name": "VolumeBinding"},
                    ],
                }
            },
        }
    ],
}
WAIT = make_storage_class("wait-sc", "kubernetes.io/no-provisioner").binding_mode(
    "WaitForFirstConsumer"
)
IMMEDIATE = make_storage_class("immediate-sc", "kubernetes.io/no-provisioner").binding_mode(
    "Immediate"
)


def bound(name: str, pv: str) -> dict[str, Any]:
    return (
        make_pvc(name)
        .storage_class("wait-sc")
        .access_modes("ReadWriteOnce")
        .request("1Gi")
        .volume_name(pv)
        .annotation("pv.kubernetes.io/bind-completed", "yes")
        .phase("Bound")
        .dict()
    )


def explain(tmp_path: Path, capsys: Any, storage: list[dict[str, Any]], *claims: str) -> Any:
    node = make_node("node-a").label("foo", "barbar").label("kubernetes.io/hostname", "node-a")
    items = [node.dict(), WAIT.dict(), IMMEDIATE.dict(), *storage]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    pod = make_pod("pod-a").container()
    for claim in claims:
        pod = pod.pvc(claim)
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod.dict()))
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    argv = ["explain", "--cluster", str(cluster), "--pod", str(pod_file)]
    code = main([*argv, "--config", str(config), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize(
    ("storage", "claims", "message", "reason"),
    [
        pytest.param(
            [],
            ("pvc-a",),
            '0/1 nodes are available: persistentvolumeclaim "pvc-a" not found.',
            'persistentvolumeclaim "pvc-a" not found',
            id="pvc-does-not-exist",
        ),
        pytest.param(
            [
                make_pvc("pvc-a")
                .storage_class("immediate-sc")
                .access_modes("ReadWriteOnce")
                .request("1Gi")
                .dict()
            ],
            ("pvc-a",),
            "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            "pod has unbound immediate PersistentVolumeClaims",
            id="immediate-claims-not-bound",
        ),
        pytest.param(
            [
                make_pvc("pvc-a")
                .storage_class("wait-sc")
                .access_modes("ReadWriteOnce")
                .request("1Gi")
                .dict()
            ],
            ("pvc-a",),
            "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.",
            "node(s) didn't find available persistent volumes to bind",
            id="unbound-claims-no-matches",
        ),
        pytest.param(
            [bound("pvc-a", "pv-a")],
            ("pvc-a",),
            "0/1 nodes are available: 1 node(s) unavailable due to one or more pvc(s) bound "
            "to non-existent pv(s).",
            "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
            id="pv-not-found",
        ),
        pytest.param(
            [
                bound("pvc-a", "pv-a"),
                make_pvc("pvc-b")
                .storage_class("wait-sc")
                .access_modes("ReadWriteOnce")
                .request("1Gi")
                .dict(),
                make_pv("pv-a")
                .storage_class("wait-sc")
                .capacity("1Gi")
                .access_modes("ReadWriteOnce")
                .claim_ref("pvc-a", uid="pvc-a")
                .csi("csi.example.com", "vol-a")
                .phase("Bound")
                .node_affinity_in("foo", "bar")
                .dict(),
            ],
            ("pvc-a", "pvc-b"),
            "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to "
            "bind, 1 node(s) had volume node affinity conflict.",
            "node(s) had volume node affinity conflict, node(s) didn't find available "
            "persistent volumes to bind",
            id="bound-and-unbound-unsatisfied",
        ),
    ],
)
def test_explain_says_why_volumes_do_not_fit(tmp_path, capsys, storage, claims, message, reason):
    data = explain(tmp_path, capsys, storage, *claims)
    assert data["node"] is None
    assert data["message"] == message
    (node,) = data["nodes"]
    assert node["feasible"] is False
    assert node["reason"] == reason


def test_explain_places_a_pod_whose_volume_fits(tmp_path, capsys):
    pv = (
        make_pv("pv-a")
        .storage_class("wait-sc")
        .capacity("5Gi")
        .access_modes("ReadWriteOnce")
        .csi("csi.example.com", "vol-a")
        .node_affinity_in("kubernetes.io/hostname", "node-a")
    )
    claim = make_pvc("pvc-a").storage_class("wait-sc").access_modes("ReadWriteOnce").request("1Gi")
    data = explain(tmp_path, capsys, [pv.dict(), claim.dict()], "pvc-a")
    assert data["node"] == "node-a"
    assert data["nodes"][0]["feasible"] is True
