"""``kubesched explain`` with one-plugin profiles on cluster files carrying storage objects:
each node's verdict from VolumeRestrictions, NodeVolumeLimits and VolumeZone (cases
after their upstream unit tests), and a missing claim's message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod
from kubesched.testing.storage_wrappers import make_csi_node, make_pv, make_pvc

ZONE = "topology.kubernetes.io/zone"
DISK = "node(s) had no available disk"
RWOP = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
ZONE_CONFLICT = "node(s) had no available volume zone"
EXCEEDED = "node(s) exceed max volume count"


def one_plugin(name: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": name}], "disabled": [{"name": "*"}]},
                        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                        "bind": {"enabled": [{"name": "DefaultBinder"}]},
                    },
                }
            ],
        }
    )


def node(name: str, zone: str) -> dict[str, Any]:
    return make_node(name).label(ZONE, zone).capacity(cpu="4", memory="8Gi", pods="110").dict()


GCE = {"name": "disk", "gcePersistentDisk": {"pdName": "foo"}}
NODES = [node("node-a", "us-west1-a"), node("node-b", "us-west1-b")]


def pod_(name: str) -> Any:
    """A pod with one container (the loader refuses a pod without)."""
    return make_pod(name).image("registry.k8s.io/pause:3.10")


def claim(name: str) -> Any:
    """A claim the API server accepts (an access mode, a storage request)."""
    return make_pvc(name).request("1Gi").access_modes("ReadWriteOnce")


def volume(name: str, zone: str | None = None) -> Any:
    """A CSI volume the API server accepts."""
    wrapper = make_pv(name).capacity("1Gi").access_modes("ReadWriteOnce")
    if zone is not None:
        wrapper.label(ZONE, zone)
    return wrapper.csi("ebs.csi.aws.com", name)


def bound(pod: Any, node_name: str) -> dict[str, Any]:
    raw: dict[str, Any] = pod.node(node_name).dict()
    return raw


CASES = [
    pytest.param(
        "VolumeRestrictions",
        [bound(pod_("old").volume(GCE), "node-a")],
        pod_("new").volume(GCE).dict(),
        {"node-a": DISK, "node-b": None},
        id="volumerestrictions-same-gce-disk",
    ),
    pytest.param(
        "VolumeRestrictions",
        [
            claim("claim-with-rwop-1").access_modes("ReadWriteOncePod").dict(),
            bound(pod_("pod-with-one-pvc").pvc("claim-with-rwop-1"), "node-a"),
        ],
        pod_("pod-with-one-conflict").pvc("claim-with-rwop-1").dict(),
        {"node-a": RWOP, "node-b": RWOP},
        id="volumerestrictions-access-mode-conflict",
    ),
    pytest.param(
        "VolumeZone",
        [
            volume("vol-1", "us-west1-a").dict(),
            claim("data").volume_name("vol-1").dict(),
        ],
        pod_("pod-1").pvc("data").dict(),
        {"node-a": None, "node-b": ZONE_CONFLICT},
        id="volumezone-zone-label-matched",
    ),
    pytest.param(
        "VolumeZone",
        [
            volume("vol-3", "us-west1-c__us-west1-b").dict(),
            claim("data").volume_name("vol-3").dict(),
        ],
        pod_("pod-1").pvc("data").dict(),
        {"node-a": ZONE_CONFLICT, "node-b": None},
        id="volumezone-multi-zone",
    ),
    pytest.param(
        "NodeVolumeLimits",
        [
            make_csi_node("node-a").driver("ebs.csi.aws.com", 1).dict(),
            make_csi_node("node-b").driver("ebs.csi.aws.com", 2).dict(),
            *(volume(f"pv-{i}").dict() for i in range(3)),
            *(claim(f"c{i}").volume_name(f"pv-{i}").dict() for i in range(3)),
            bound(pod_("running-a").pvc("c0"), "node-a"),
            bound(pod_("running-b").pvc("c1"), "node-b"),
        ],
        pod_("new").pvc("c2").dict(),
        {"node-a": EXCEEDED, "node-b": None},
        id="nodevolumelimits-doesnt-fit-when-node-limit-reached",
    ),
]


@pytest.mark.parametrize(("plugin", "objects", "pod", "verdicts"), CASES)
def test_explain_shows_each_nodes_volume_verdict(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    plugin: str,
    objects: list[dict[str, Any]],
    pod: dict[str, Any],
    verdicts: dict[str, str | None],
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([*NODES, *objects]))
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod))
    config = tmp_path / "config.yaml"
    config.write_text(one_plugin(plugin))
    argv = ["explain", "--cluster", str(cluster), "--pod", str(pod_file), "--config", str(config)]
    assert main([*argv, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    got = {n["name"]: n["reason"] for n in data["nodes"]}
    assert got == verdicts
    for n in data["nodes"]:
        assert n["rejectedBy"] == (plugin if n["reason"] else None)
    # The table shows the same verdicts, named by plugin.
    assert main(argv) == 0
    table = capsys.readouterr().out
    for reason in filter(None, verdicts.values()):
        assert f"{plugin}: {reason}" in table


def test_explain_reports_a_missing_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all(NODES))
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod_("web").pvc("x").dict()))
    for plugin in ("VolumeRestrictions", "VolumeZone"):
        config = tmp_path / f"{plugin}.yaml"
        config.write_text(one_plugin(plugin))
        argv = [
            "explain",
            "--cluster",
            str(cluster),
            "--pod",
            str(pod_file),
            "--config",
            str(config),
        ]
        assert main([*argv, "-o", "json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["node"] is None
        assert data["message"].startswith(
            '0/2 nodes are available: persistentvolumeclaim "x" not found.'
        )
        assert {n["reason"] for n in data["nodes"]} == {'persistentvolumeclaim "x" not found'}
