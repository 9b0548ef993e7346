"""ImageLocality's columnar Score gives the per-node scores, node for node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.vector import VectorScorePlugin
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins import imagelocality
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.testing import PluginHandle
from kubesched.testing.wrappers import make_node, make_pod

MB = 1024 * 1024
IMAGES = ("gcr.io/a", "gcr.io/b:v1", "gcr.io/c", "registry:5000/d", "e@sha256:0f")


def plugin_for(snapshot: Snapshot) -> ImageLocality:
    return imagelocality.new(None, PluginHandle(snapshot))  # type: ignore[arg-type]


# --- building clusters --------------------------------------------------------------------

# Sizes around the thresholds (23 MiB, 1000 MiB per container) and odd byte counts, so
# that the float share and the truncations matter.
sizes = st.one_of(
    st.integers(0, 3000).map(lambda mb: mb * MB),
    st.integers(0, 5 * 1024 * MB),
)


@st.composite
def image_names(draw: st.DrawFn) -> list[str]:
    """The names of one node image: normalized or not, as nodes report them."""
    base = draw(st.sampled_from(IMAGES))
    normalized = imagelocality.normalized_image_name(base)
    return draw(st.sampled_from(([normalized], [base, normalized], [base])))


@st.composite
def clusters(draw: st.DrawFn) -> list[Node]:
    out = []
    for i in range(draw(st.integers(1, 8))):
        wrapper = make_node(f"node-{i}")
        for names in draw(st.lists(image_names(), max_size=4)):
            wrapper = wrapper.image(names, draw(sizes))
        out.append(wrapper.obj())
    return out


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    wrapper = make_pod("incoming")
    # Repeats allowed: a pod listing an image twice counts it twice.
    for image in draw(st.lists(st.sampled_from((*IMAGES, "gcr.io/nowhere")), max_size=4)):
        wrapper = wrapper.image(image)
    inits = draw(st.lists(st.sampled_from(IMAGES), max_size=2))
    if inits:
        wrapper.raw["spec"]["initContainers"] = [
            {"name": f"init{i}", "image": image} for i, image in enumerate(inits)
        ]
    if not inits and not wrapper.raw["spec"]["containers"]:
        wrapper = wrapper.image("gcr.io/a")  # a pod has at least one container
    return wrapper.obj()


# --- comparing ----------------------------------------------------------------------------


def per_node(plugin: ImageLocality, snapshot: Snapshot, pod: Pod, rows: list[int]) -> list[int]:
    infos = snapshot.list()
    out = []
    for r in rows:
        score, status = plugin.score(CycleState(), pod, infos[r])
        assert status is None
        out.append(score)
    return out


def vector(plugin: ImageLocality, snapshot: Snapshot, pod: Pod, rows: list[int]) -> list[int]:
    assert snapshot.table is not None
    got = plugin.score_nodes(CycleState(), pod, snapshot.table, np.array(rows, dtype=np.int64))
    assert got.dtype == np.int64
    assert len(got) == len(rows)
    return got.tolist()


@settings(deadline=None, max_examples=300)
@given(cluster=clusters(), incoming=st.lists(pods(), min_size=1, max_size=3), data=st.data())
def test_score_nodes_agrees_with_score_on_random_clusters(
    cluster: list[Node], incoming: list[Pod], data: st.DataObject
) -> None:
    bound = [make_pod("bound").image("gcr.io/a").node(cluster[0].name).obj()]
    snapshot = Snapshot.from_objects(cluster, bound, columnar=True)
    plugin = plugin_for(snapshot)
    order = data.draw(st.permutations(range(len(cluster))))
    rows = order[: data.draw(st.integers(0, len(cluster)))]
    for pod in incoming:
        assert vector(plugin, snapshot, pod, rows) == per_node(plugin, snapshot, pod, rows)
    # Pods coming and going change nothing here; the answers must stay the same.
    snapshot.add_pod(make_pod("extra").node(cluster[-1].name).obj())
    assert snapshot.remove_pod(bound[0])
    for pod in incoming:
        assert vector(plugin, snapshot, pod, rows) == per_node(plugin, snapshot, pod, rows)


# --- plain cases (upstream's image_locality_test.go) --------------------------------------

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


def image_node(name: str, *images: tuple[list[str], int]) -> Node:
    wrapper = make_node(name)
    for names, size_mb in images:
        wrapper = wrapper.image(names, size_mb * MB)
    return wrapper.obj()


def pod_with(*images: str) -> Pod:
    wrapper = make_pod("p")
    for image in images:
        wrapper = wrapper.image(image)
    return wrapper.obj()


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        pytest.param(
            pod_with("gcr.io/40", "gcr.io/250"),
            [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
            [0, 5],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            pod_with("gcr.io/40", "gcr.io/300"),
            [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
            [7, 0],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            pod_with("gcr.io/10", "gcr.io/4000"),
            [
                image_node("node1", *NODE_4000_30),
                image_node("node2", *NODE_250_10),
                image_node("node3"),
            ],
            [66, 0, 0],
            id="if exceed limit, use limit (with a node that has no images)",
        ),
        pytest.param(
            pod_with("gcr.io/300", "gcr.io/600", "gcr.io/900"),
            [
                image_node("node1", *NODE_600_40_900),
                image_node("node2", *NODE_300_600_900),
                image_node("node3"),
            ],
            [32, 36, 0],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            pod_with("gcr.io/unknown"),
            [image_node("node1", *NODE_4000_30), image_node("node2")],
            [0, 0],
            id="images on no node score zero everywhere",
        ),
    ],
)
def test_score_nodes(pod: Pod, nodes: list[Node], expected: list[int]) -> None:
    snapshot = Snapshot.from_objects(nodes, [], columnar=True)
    assert snapshot.table is not None
    rows = [snapshot.table.rows[n.name] for n in nodes]
    plugin = plugin_for(snapshot)
    assert vector(plugin, snapshot, pod, rows) == expected
    assert per_node(plugin, snapshot, pod, rows) == expected


def test_the_plugin_offers_the_vector_protocol() -> None:
    assert isinstance(plugin_for(Snapshot([])), VectorScorePlugin)
