"""``kubesched export`` copies Dynamic Resource Allocation's objects (resource.k8s.io/v1)
from the embedded API server, and the policy lab loads them back: DeviceClasses,
ResourceSlices, claim templates and claims with their allocation and consumers; pods keep
their resourceClaims and resourceClaimStatuses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli import main
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS, Resource
from kubesched.sim.files import load_objects
from kubesched.testing import make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice


def _raw(plural: str, kind: str, namespaced: bool) -> Resource[Any]:
    return Resource("resource.k8s.io", "v1", plural, kind, namespaced, lambda r: r)


CLASSES = _raw("deviceclasses", "DeviceClass", False)
SLICES = _raw("resourceslices", "ResourceSlice", False)
TEMPLATES = _raw("resourceclaimtemplates", "ResourceClaimTemplate", True)
CLAIMS = _raw("resourceclaims", "ResourceClaim", True)


@pytest.fixture
def apiserver(tmp_path: Path) -> Any:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
    }


async def _populate(client: Client) -> None:
    await client.create(NODES.raw, _node("gpu-node"))
    await client.create(
        CLASSES.raw,
        make_device_class("gpu.example.com").selector("device.driver == 'gpu.example.com'").obj(),
    )
    gpus = make_slice("gpu-node-gpus", "gpu.example.com").node("gpu-node").pool("gpu-node")
    for i in range(2):
        gpus.device(f"gpu-{i}", capacity={"memory": "80Gi"}, index=i, model="LATEST-GPU-MODEL")
    await client.create(SLICES.raw, gpus.obj())
    template = make_claim("one-gpu", "default").request("gpu", "gpu.example.com").template()
    await client.create(TEMPLATES.raw, template, "default")
    claim = make_claim("trainer-gpu", "default").request("gpu", "gpu.example.com").obj()
    created = await client.create(CLAIMS.raw, claim, "default")
    pod = make_pod("trainer").resource_claim("gpu", claim="trainer-gpu").req(cpu="1").raw
    pod["spec"]["nodeName"] = "gpu-node"
    stored = await client.create(PODS.raw, pod, "default")
    status = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "gpu",
                        "driver": "gpu.example.com",
                        "pool": "gpu-node",
                        "device": "gpu-0",
                    }
                ]
            }
        },
        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": stored["metadata"]["uid"]}],
    }
    created["status"] = status
    await client.update(CLAIMS.raw, created, "status")


def test_export_copies_dra_objects_and_the_lab_loads_them(
    apiserver: ApiServerHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = Path(apiserver.kubeconfig_path)

    async def setup() -> None:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            await _populate(client)

    asyncio.run(setup())
    out = tmp_path / "cluster.yaml"
    assert main(["export", "--kubeconfig", str(kubeconfig), "-o", str(out)]) == 0
    summary = capsys.readouterr().err
    assert "1 DeviceClass" in summary and "1 ResourceSlice" in summary
    assert "1 ResourceClaim," in summary and "1 ResourceClaimTemplate" in summary
    objects = load_objects(out)
    assert objects.ignored_kinds == {} and objects.warnings == []
    assert [c.name for c in objects.device_classes] == ["gpu.example.com"]
    assert [d.name for s in objects.resource_slices for d in s.devices] == ["gpu-0", "gpu-1"]
    assert [t.name for t in objects.resource_claim_templates] == ["one-gpu"]
    (claim,) = objects.resource_claims
    assert [r.device for r in claim.results] == ["gpu-0"]
    assert [r.name for r in claim.reserved_for] == ["trainer"]
    (pod,) = objects.pods
    assert [c.resource_claim_name for c in pod.resource_claims] == ["trainer-gpu"]
    assert pod.containers[0].claims[0].name == "gpu"

    # The copy explains a new pod with no warnings about the DRA kinds.
    new_pod = tmp_path / "pod.yaml"
    new_pod.write_text(yaml.safe_dump(make_pod("newcomer").req(cpu="1").raw))
    assert main(["explain", "--cluster", str(out), "--pod", str(new_pod), "-o", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["node"] == "gpu-node"
    assert "ResourceSlice" not in captured.err
