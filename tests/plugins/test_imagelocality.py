"""ImageLocality, after upstream's image_locality_test.go."""

from __future__ import annotations

import hashlib

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ScorePlugin
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import imagelocality
from kubesched.plugins.imagelocality import normalized_image_name
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

MB = 1024 * 1024


def pod_with(*images: str, init: tuple[str, ...] = ()) -> Pod:
    wrapper = make_pod("p")
    for image in images:
        wrapper = wrapper.image(image)
    if init:
        wrapper.raw["spec"]["initContainers"] = [
            {"name": f"init{i}", "image": image} for i, image in enumerate(init)
        ]
    return wrapper.obj()


def image_node(name: str, *images: tuple[list[str], int]) -> Node:
    wrapper = make_node(name)
    for names, size_mb in images:
        wrapper = wrapper.image(names, size_mb * MB)
    return wrapper.obj()


NODE_40_300_2000 = (
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
)
NODE_250_10 = ((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_600_40_900 = (
    (["gcr.io/600:latest"], 600),
    (["gcr.io/40:latest"], 40),
    (["gcr.io/900:latest"], 900),
)
NODE_300_600_900 = (
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
)
NODE_4000_30 = ((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_20_30_40 = (
    (["gcr.io/20:latest"], 20),
    (["gcr.io/30:latest"], 30),
    (["gcr.io/40:latest"], 40),
)


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        pytest.param(
            # node1: 40M/2 < 23M → 0; node2: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
            pod_with("gcr.io/40", "gcr.io/250"),
            [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
            [("node1", 0), ("node2", 5)],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            # node1: 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
            pod_with("gcr.io/40", "gcr.io/300"),
            [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
            [("node1", 7), ("node2", 0)],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            # node1: 4000M/2 >= 1000M * 2 → 100; node2: 10M/2 < 23M → 0
            pod_with("gcr.io/10", "gcr.io/4000"),
            [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10)],
            [("node1", 100), ("node2", 0)],
            id="if exceed limit, use limit",
        ),
        pytest.param(
            # node1: 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
            pod_with("gcr.io/10", "gcr.io/4000"),
            [
                image_node("node1", *NODE_4000_30),
                image_node("node2", *NODE_250_10),
                image_node("node3"),
            ],
            [("node1", 66), ("node2", 0), ("node3", 0)],
            id="if exceed limit, use limit (with a node that has no images)",
        ),
        pytest.param(
            # node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32
            # node2: 100 * (300M * 1/3 + 600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 36
            pod_with("gcr.io/300", "gcr.io/600", "gcr.io/900"),
            [
                image_node("node1", *NODE_600_40_900),
                image_node("node2", *NODE_300_600_900),
                image_node("node3"),
            ],
            [("node1", 32), ("node2", 36), ("node3", 0)],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            # node1: 100 * (30M + 40M * 1/2 - 23M) / (1000M * 2 - 23M) = 1
            pod_with("gcr.io/30", "gcr.io/40"),
            [image_node("node1", *NODE_20_30_40), image_node("node2", *NODE_4000_30)],
            [("node1", 1), ("node2", 0)],
            id="pod with multiple small images",
        ),
        pytest.param(
            # node1: 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6
            pod_with("gcr.io/30", init=("gcr.io/300",)),
            [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_20_30_40)],
            [("node1", 6), ("node2", 0)],
            id="init containers count: two images spread on two nodes, prefer the larger one",
        ),
    ],
)
def test_score(pod: Pod, nodes: list[Node], expected: list[tuple[str, int]]) -> None:
    snapshot = Snapshot.from_objects(nodes, [])
    plugin = imagelocality.new(None, PluginHandle(snapshot))  # type: ignore[arg-type]
    got = []
    for node in nodes:
        score, status = plugin.score(CycleState(), pod, snapshot.get(node.name))
        assert status is None
        got.append((node.name, score))
    assert got == expected


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(
            "root@" + fake_digest("root"), "root@" + fake_digest("root"), id="keep it as is 2"
        ),
        pytest.param("nginx", "nginx:latest", id="no docker.io/library prefix is added"),
    ],
)
def test_normalized_image_name(name: str, expected: str) -> None:
    assert normalized_image_name(name) == expected


def test_factory_builds_a_score_plugin_without_normalize() -> None:
    plugin = imagelocality.new({}, PluginHandle())  # type: ignore[arg-type]
    assert plugin.name == "ImageLocality"
    assert isinstance(plugin, ScorePlugin)
    assert plugin.score_extensions() is None
