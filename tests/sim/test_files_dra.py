"""Cluster files for ``simulate`` / ``explain`` hold Dynamic Resource Allocation's kinds
(resource.k8s.io/v1): decoded into objects.dra's views, validated as the API server
validates them (CEL selectors compiled), with the file, item and field in every error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.sim.files import InputError, load_objects
from kubesched.testing import make_node, make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice


def _write(path: Path, *objects: dict) -> Path:
    path.write_text(yaml.safe_dump_all(objects))
    return path


def test_a_cluster_file_with_dra_kinds_loads(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "cluster.yaml",
        make_node("gpu-node").capacity(cpu="8", memory="16Gi", pods="110").raw,
        make_device_class("gpu.example.com").selector("device.driver == 'gpu.example.com'").obj(),
        make_slice("gpu-node-gpus", "gpu.example.com")
        .node("gpu-node")
        .device("gpu-0", capacity={"memory": "80Gi"}, model="LATEST-GPU-MODEL")
        .obj(),
        make_claim("one-gpu", "ml").request("gpu", "gpu.example.com", count=2).template(),
        make_claim("shared", "ml").request("gpu", "gpu.example.com", mode="All").obj(),
        make_pod("trainer").namespace("ml").resource_claim("gpu", template="one-gpu").raw,
    )
    objects = load_objects(path)
    assert objects.warnings == [] and objects.ignored_kinds == {}
    assert objects.device_classes[0].selectors == ("device.driver == 'gpu.example.com'",)
    assert objects.resource_slices[0].devices[0].attributes["model"] == "LATEST-GPU-MODEL"
    template = objects.resource_claim_templates[0]
    assert (template.namespace, template.requests[0].exactly.count) == ("ml", 2)
    claim = objects.resource_claims[0]
    assert claim.requests[0].exactly.allocation_mode == "All"
    assert objects.pods[0].resource_claims[0].resource_claim_template_name == "one-gpu"


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            make_device_class("bad").selector("device.attributes['x'].y ==").obj(),
            'items: DeviceClass "bad": spec.selectors[0].cel.expression: Invalid value: '
            "\"device.attributes['x'].y ==\": compilation failed: ERROR: <input>:1:28: "
            "Syntax error: mismatched input '<EOF>'",
        ),
        (
            make_slice("nowhere", "gpu.example.com").device("d0").obj(),
            'ResourceSlice "nowhere": spec: Required value: exactly one of `nodeName`, '
            "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
        ),
        (
            make_claim("c", "ml").request("GPU", "gpu.example.com").obj(),
            'ResourceClaim "ml/c": spec.devices.requests[0].name: Invalid value: "GPU"',
        ),
    ],
    ids=["selector-that-does-not-compile", "slice-reaching-no-node", "bad-request-name"],
)
def test_bad_dra_objects_are_refused_with_file_and_field(tmp_path, obj, expected) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [obj]}))
    with pytest.raises(InputError) as err:
        load_objects(path)
    (problem,) = err.value.problems
    assert problem.startswith(f"{path}: ")
    assert expected.removeprefix("items: ") in problem
