"""`kubesched capacity` with Dynamic Resource Allocation: each copy of a shape whose claim
comes from a ResourceClaimTemplate gets a claim of its own (as the resource-claim
controller would make it), so the count stops when the devices run out; copies of a
shape naming one ResourceClaim share it, and go where its device is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kubesched.cli import main
from kubesched.sim import document
from kubesched.testing import make_node, make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice

DRIVER = "gpu.example.com"


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["capacity", *argv, "-o", "json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, document.schema())
    return data


def gpus(node: str, count: int, model: str) -> dict[str, Any]:
    wrapper = make_slice(f"{node}-gpus", DRIVER).node(node).pool(node)
    for i in range(count):
        wrapper.device(f"gpu-{i}", model=model, index=i)
    return wrapper.obj()


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    """Three nodes of 8 CPUs: 4 GPUs of the latest model on n0, 2 on n1, 3 older on n2."""
    return write(
        tmp_path / "cluster.yaml",
        *[make_node(f"n{i}").capacity(cpu="8", memory="16Gi", pods="110").dict() for i in range(3)],
        make_device_class(DRIVER).selector(f"device.driver == '{DRIVER}'").obj(),
        gpus("n0", 4, "LATEST-GPU-MODEL"),
        gpus("n1", 2, "LATEST-GPU-MODEL"),
        gpus("n2", 3, "OLDER-GPU-MODEL"),
    )


def trainer(name: str, cpu: str, **source: str) -> dict[str, Any]:
    pod: dict[str, Any] = make_pod(name).req(cpu=cpu).resource_claim("gpu", **source).dict()
    return pod


def test_each_copy_gets_its_own_claim_from_the_template(
    cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shape = write(
        tmp_path / "any.yaml",
        make_claim("one-gpu", "default").request("gpu", DRIVER).template(),
        trainer("trainer", "100m", template="one-gpu"),
    )
    (result,) = run(capsys, "--cluster", str(cluster), "--pod", str(shape))["shapes"]
    # One GPU a copy: every GPU of the cluster, and CPU is not what stops it.
    assert result["count"] == 4 + 2 + 3
    assert [(n["node"], n["count"]) for n in result["perNode"]] == [("n0", 4), ("n1", 2), ("n2", 3)]
    assert {n["limit"] for n in result["perNode"]} == {"cannot allocate all claims"}
    assert result["stopReason"].startswith("0/3 nodes are available: 3 cannot allocate all claims")


def test_a_cel_selector_on_the_model_counts_only_those_gpus(
    cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = make_claim("latest", "default").request("gpu", DRIVER).template()
    request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    request["selectors"] = [
        {"cel": {"expression": f"device.attributes['{DRIVER}'].model == 'LATEST-GPU-MODEL'"}}
    ]
    shape = write(tmp_path / "latest.yaml", template, trainer("latest", "100m", template="latest"))
    cheap = write(
        tmp_path / "any.yaml",
        make_claim("any-gpu", "default").request("gpu", DRIVER).template(),
        trainer("any", "100m", template="any-gpu"),
    )
    data = run(capsys, "--cluster", str(cluster), "--pod", str(shape), "--pod", str(cheap))
    latest, anything = data["shapes"]
    assert latest["count"] == 6
    assert [n["count"] for n in latest["perNode"]] == [4, 2, 0]
    assert anything["count"] == 9
    # The mix, round-robin: the latest-model copies take n0 and n1, the others what is
    # left; each copy's claim is its own, so no GPU is counted twice.
    mix = data["mix"]
    assert mix["count"] == 9
    assert mix["perShape"] == {"latest": 5, "any": 4}
    assert sum(n["counts"]["latest"] for n in mix["perNode"] if n["node"] == "n2") == 0


def test_copies_naming_one_claim_share_it_and_go_where_its_device_is(
    cluster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = make_claim("shared-gpu", "default").request("gpu", DRIVER).obj()
    request = shared["spec"]["devices"]["requests"][0]["exactly"]
    request["selectors"] = [
        {"cel": {"expression": f"device.attributes['{DRIVER}'].model == 'OLDER-GPU-MODEL'"}}
    ]
    shape = write(tmp_path / "shared.yaml", shared, trainer("user", "1", claim="shared-gpu"))
    (result,) = run(capsys, "--cluster", str(cluster), "--pod", str(shape))["shapes"]
    # Allocated once, on n2 (the older GPUs), for the first copy; every copy then goes
    # there until n2's 8 CPUs are taken.
    assert [(n["node"], n["count"]) for n in result["perNode"]] == [("n0", 0), ("n1", 0), ("n2", 8)]
    n2 = result["perNode"][2]
    assert n2["limit"] == "Insufficient cpu"
