"""Dynamic Resource Allocation through a whole simulation: claims made from templates as
the resource-claim controller would, a device allocated to one pod is gone for the next,
a shared claim is allocated once, and ``explain`` gives upstream's per-node verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.config.defaults import default_config
from kubesched.framework.apiclient import RESOURCE_CLAIMS
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.lab import load_cluster, simulate
from kubesched.testing import make_node, make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice

DRIVER = "gpu.example.com"


def node(name: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu="8", memory="16Gi", pods="110").dict()


def gpus(node_name: str, *names: str) -> dict[str, Any]:
    wrapper = make_slice(f"{node_name}-gpus", DRIVER).node(node_name).pool(node_name)
    for i, name in enumerate(names):
        wrapper.device(name, model="LATEST-GPU-MODEL", index=i)
    return wrapper.obj()


def pod(name: str, entry: str = "gpu", **source: str) -> dict[str, Any]:
    wrapper = make_pod(name).image("registry.k8s.io/pause:3.10")
    raw: dict[str, Any] = wrapper.resource_claim(entry, **source).dict()
    return raw


def write(tmp_path: Path, objects: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return path


GPU_CLASS = make_device_class(DRIVER).selector(f"device.driver == '{DRIVER}'").obj()


def test_devices_allocated_to_one_pod_are_gone_for_the_next(tmp_path: Path) -> None:
    objects = [
        node("node-a"),
        node("node-b"),
        GPU_CLASS,
        gpus("node-a", "gpu-0", "gpu-1"),
        gpus("node-b", "gpu-0"),
        make_claim("one-gpu", "default").request("gpu", DRIVER).template(),
        *(pod(f"trainer-{i}", template="one-gpu") for i in range(4)),
    ]
    cluster, pending = load_cluster(write(tmp_path, objects), seed=1)
    # The claims the controller would make: <pod>-<entry>-<5 characters>, owned by the pod.
    assert all(p.resource_claim_statuses["gpu"].startswith(f"{p.name}-gpu-") for p in pending)
    result = simulate(cluster, pending, default_config(), in_tree_registry(), seed=1)
    placed = {p.pod.name: p.node for p in result.placements}
    assert sorted(n for n in placed.values() if n) == ["node-a", "node-a", "node-b"]
    (unplaced,) = [p for p in result.placements if p.node is None]
    assert unplaced.message is not None
    assert "cannot allocate all claims" in unplaced.message
    claims = result.simulator.api.list(RESOURCE_CLAIMS)
    taken = [
        (r["pool"], r["device"])
        for c in claims
        for r in ((c.get("status") or {}).get("allocation") or {"devices": {"results": []}})[
            "devices"
        ]["results"]
    ]
    assert sorted(taken) == [("node-a", "gpu-0"), ("node-a", "gpu-1"), ("node-b", "gpu-0")]
    for c in claims:
        owner = c["metadata"]["ownerReferences"][0]
        reserved = (c.get("status") or {}).get("reservedFor") or []
        if placed[owner["name"]] is not None:
            assert [r["name"] for r in reserved] == [owner["name"]]
            assert c["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]


def test_a_shared_claim_is_allocated_once_for_all_its_pods(tmp_path: Path) -> None:
    objects = [
        node("node-a"),
        node("node-b"),
        GPU_CLASS,
        gpus("node-b", "gpu-0"),
        make_claim("shared", "default").request("gpu", DRIVER).obj(),
        *(pod(f"worker-{i}", claim="shared") for i in range(3)),
    ]
    cluster, pending = load_cluster(write(tmp_path, objects), seed=1)
    result = simulate(cluster, pending, default_config(), in_tree_registry(), seed=1)
    assert [p.node for p in result.placements] == ["node-b"] * 3
    (claim,) = result.simulator.api.list(RESOURCE_CLAIMS)
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["pool"], r["device"]) for r in results] == [("node-b", "gpu-0")]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == [
        "worker-0",
        "worker-1",
        "worker-2",
    ]


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


CLAIM = "my-pod-my-resource"
EXPLAIN_CASES = [
    pytest.param(
        [make_claim("my-pod-my-resource", "default").request("req-1", DRIVER).obj()],
        {"node-a": "cannot allocate all claims", "node-b": None},
        id="with-resources-only-on-one-node",
    ),
    pytest.param(
        [
            make_claim(CLAIM, "default")
            .request("req-1", DRIVER)
            .allocated(("req-1", DRIVER, "node-a", "gpu-0"))
            .allocated_on("node-a")
            .obj()
        ],
        {"node-a": None, "node-b": "resourceclaim not available on the node"},
        id="allocated-claim-topology",
    ),
    pytest.param(
        [
            make_claim(CLAIM, "default")
            .request("req-1", DRIVER, "device.attributes['gpu.example.com'].missing == 1")
            .obj()
        ],
        None,
        id="claim-CEL-runtime-error",
    ),
]


@pytest.mark.parametrize(("claims", "verdicts"), EXPLAIN_CASES)
def test_explain_with_dynamic_resources_alone(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    claims: list[dict[str, Any]],
    verdicts: dict[str, str | None] | None,
) -> None:
    cluster = write(
        tmp_path, [node("node-a"), node("node-b"), GPU_CLASS, gpus("node-b", "gpu-0"), *claims]
    )
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod("my-pod", "my-resource", claim=CLAIM)))
    config = tmp_path / "config.yaml"
    config.write_text(one_plugin("DynamicResources"))
    argv = ["explain", "--cluster", str(cluster), "--pod", str(pod_file), "--config", str(config)]
    assert main([*argv, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    if verdicts is None:
        assert data["node"] is None
        # An Error aborts the attempt, wrapped as upstream's framework wraps it.
        assert data["message"] == (
            'running "DynamicResources" filter plugin: '
            f"claim default/{CLAIM}: selector #0: CEL runtime error: no such key: missing"
        )
        return
    assert {n["name"]: n["reason"] for n in data["nodes"]} == verdicts
    for n in data["nodes"]:
        assert n["rejectedBy"] == ("DynamicResources" if n["reason"] else None)
    if verdicts.get("node-a") == "cannot allocate all claims":
        # Which request node-a could not satisfy, and why (it has no devices).
        (node_a,) = [n for n in data["nodes"] if n["name"] == "node-a"]
        assert node_a["detail"] == (
            f"claim default/{CLAIM}, request req-1: wants 1 device(s), 0 on the node match "
            "its selectors, 0 of them in use"
        )
        assert main(argv) == 0
        assert f"DynamicResources: cannot allocate all claims ({node_a['detail']})" in (
            capsys.readouterr().out
        )


def test_extended_resources_backed_by_dra_are_plain_extended_resources_as_in_1_34(
    tmp_path: Path,
) -> None:
    # DRAExtendedResource is alpha and off in 1.34: a class's extendedResourceName is
    # dropped as the API server drops it, so a pod asking for that resource gets no
    # device; NodeResourcesFit finds no node with it.
    backed = make_device_class(DRIVER).selector(f"device.driver == '{DRIVER}'").obj()
    backed["spec"]["extendedResourceName"] = "example.com/gpu"
    wants = make_pod("wants-gpu").req(cpu="100m").dict()
    wants["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    wants["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    objects = [node("node-a"), backed, gpus("node-a", "gpu-0"), wants]
    cluster, pending = load_cluster(write(tmp_path, objects), seed=1)
    (device_class,) = cluster.device_classes
    assert device_class.extended_resource_name == ""
    result = simulate(cluster, pending, default_config(), in_tree_registry(), seed=1)
    (placement,) = result.placements
    assert placement.node is None
    assert placement.message is not None
    assert placement.message.startswith("0/1 nodes are available: 1 Insufficient example.com/gpu.")
    assert result.simulator.api.list(RESOURCE_CLAIMS) == []


def test_a_cel_runtime_error_on_one_node_aborts_the_attempt_though_another_node_fits(
    tmp_path: Path,
) -> None:
    # 1.34's Filter returns Error for a CEL runtime error (statusError: "something wrong
    # with the claim or class"), and an Error on any node ends the attempt, even when
    # another node's device satisfies the selector.
    with_foo = gpus("node-a", "gpu-0")
    with_foo["spec"]["devices"][0]["attributes"]["foo"] = {"int": 1}
    template = make_claim("foo-gpu", "default").request("gpu", DRIVER).template()
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": f"device.attributes['{DRIVER}'].foo == 1"}}
    ]
    objects = [
        node("node-a"),
        node("node-b"),
        GPU_CLASS,
        with_foo,
        gpus("node-b", "gpu-0"),
        template,
        pod("trainer", template="foo-gpu"),
    ]
    cluster, pending = load_cluster(write(tmp_path, objects), seed=1)
    result = simulate(cluster, pending, default_config(), in_tree_registry(), seed=1)
    (placement,) = result.placements
    assert placement.node is None
    claim = pending[0].resource_claim_statuses["gpu"]
    assert placement.message == (
        'running "DynamicResources" filter plugin: '
        f"claim default/{claim}: selector #0: CEL runtime error: no such key: foo"
    )
