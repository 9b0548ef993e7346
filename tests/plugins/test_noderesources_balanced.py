"""NodeResourcesBalancedAllocation: scores and args.

The score table follows upstream's ``balanced_allocation_test.go`` as of release-1.34
(``(1 - std) * MaxNodeScore``, best-effort pods skipped in PreScore); the args table
follows ``TestValidateNodeResourcesBalancedAllocationArgs``.
"""

from __future__ import annotations

import pytest

from kubesched.config.errors import ErrorType
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.plugins.noderesources import balanced_allocation
from kubesched.plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
    balanced_resource_scorer,
)
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

GPU = "nvidia.com/gpu"


def milli_node(name: str, milli_cpu: int, memory: int, **scalars: int) -> Node:
    """upstream's makeNode(name, milliCPU, memory, extended)."""
    resources = {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": "100"}
    resources.update({k: str(v) for k, v in scalars.items()})
    return make_node(name).capacity(**resources).obj()


def gpu(count: int) -> dict[str, int]:
    return {GPU: count}


def pod(*containers: dict[str, str], on: str = "", name: str = "p") -> PodWrapper:
    wrapper = make_pod(name)
    for requests in containers:
        wrapper.req(**requests)
    if on:
        wrapper.node(on)
    return wrapper


def cpu_only(on: str = "") -> PodWrapper:
    """upstream's cpuOnly spec: 1000m + 2000m of cpu, memory explicitly 0."""
    return pod({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}, on=on)


def cpu_and_memory(on: str = "") -> PodWrapper:
    return pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}, on=on)


def cpu_memory_and_gpu(on: str = "") -> PodWrapper:
    return pod(
        {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}, on=on
    )


DEFAULT = [("cpu", 1), ("memory", 1)]
WITH_GPU = [("cpu", 1), ("memory", 1), (GPU, 1)]


def make_plugin(resources) -> BalancedAllocation:
    raw = {"resources": [{"name": n, "weight": w} for n, w in resources]}
    return balanced_allocation.new(raw, None)  # type: ignore[arg-type]


def infos(nodes: list[Node], existing: list[PodWrapper]) -> list[NodeInfo]:
    pods = [w.obj() for w in existing]
    return [NodeInfo(n, pods=tuple(p for p in pods if p.node_name == n.name)) for n in nodes]


@pytest.mark.parametrize(
    ("resources", "requested", "nodes", "existing", "want"),
    [
        pytest.param(
            DEFAULT,
            cpu_and_memory(),
            [milli_node("node1", 4000, 10000), milli_node("node2", 6000, 10000)],
            [],
            [87, 100],
            id="nothing scheduled, resources requested, differently sized nodes",
        ),
        pytest.param(
            DEFAULT,
            cpu_and_memory(),
            [milli_node("node1", 10000, 20000), milli_node("node2", 10000, 20000)],
            [cpu_only(on="node1"), cpu_and_memory(on="node2")],
            [82, 95],
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            DEFAULT,
            cpu_and_memory(),
            [milli_node("node1", 10000, 20000), milli_node("node2", 10000, 50000)],
            [cpu_only(on="node1"), cpu_and_memory(on="node2")],
            [82, 80],
            id="resources requested, pods scheduled with resources, differently sized nodes",
        ),
        pytest.param(
            DEFAULT,
            cpu_only(),
            [milli_node("node1", 6000, 10000), milli_node("node2", 6000, 10000)],
            [cpu_only(on="node1"), cpu_and_memory(on="node2")],
            [50, 75],
            id="requested resources at node capacity",
        ),
        pytest.param(
            DEFAULT,
            pod({"memory": "2000"}, {"memory": "3000"}),
            [milli_node("node1", 3000, 5000), milli_node("node2", 3000, 5000)],
            [cpu_only(on="node1")],
            [100, 50],
            id="nodes reaching the min and max score",
        ),
        pytest.param(
            DEFAULT,
            pod({"cpu": "4000m", "memory": "0"}),
            [milli_node("node1", 6000, 10000)],
            [cpu_only(on="node1")],
            [50],
            id="fraction above one is capped at one",
        ),
        pytest.param(
            WITH_GPU,
            pod({"memory": "0", GPU: "1"}),
            [
                milli_node("node1", 3500, 40000, **gpu(8)),
                milli_node("node2", 3500, 40000, **gpu(8)),
            ],
            [cpu_and_memory(on="node2"), cpu_memory_and_gpu(on="node1")],
            [70, 65],
            id="include scalar resource on a node for balanced resource allocation",
        ),
        pytest.param(
            WITH_GPU,
            cpu_and_memory(),
            [milli_node("node1", 3500, 40000, **gpu(8)), milli_node("node2", 3500, 40000)],
            [],
            [63, 63],
            id="scalar resource the pod does not request is skipped",
        ),
    ],
)
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["with PreScore", "without PreScore"])
def test_balanced_allocation(resources, requested, nodes, existing, want, run_pre_score):
    plugin = make_plugin(resources)
    node_infos = infos(nodes, existing)
    the_pod = requested.obj()
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, the_pod, node_infos) is None
    got = [plugin.score(state, the_pod, info) for info in node_infos]
    assert got == [(s, None) for s in want]


@pytest.mark.parametrize(
    "requested",
    [
        pytest.param(make_pod("p"), id="nothing requested, skip in PreScore"),
        pytest.param(make_pod("p").container(), id="containers without requests, skip"),
        pytest.param(pod({"cpu": "0", "memory": "0"}), id="zero requests, skip"),
    ],
)
def test_best_effort_pod_is_skipped(requested):
    plugin = make_plugin(DEFAULT)
    nodes = infos([milli_node("node1", 4000, 10000), milli_node("node2", 4000, 10000)], [])
    the_pod = requested.obj()
    status = plugin.pre_score(CycleState(), the_pod, nodes)
    assert status is not None
    assert status.code is Code.SKIP
    # Score without PreScore gives best-effort pods 0 everywhere.
    assert [plugin.score(CycleState(), the_pod, n) for n in nodes] == [(0, None), (0, None)]


def test_pod_requesting_only_an_unscored_resource_is_skipped():
    plugin = make_plugin(DEFAULT)
    status = plugin.pre_score(CycleState(), pod({GPU: "1"}).obj(), [])
    assert status is not None
    assert status.code is Code.SKIP


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        pytest.param([], [], 100, id="no resources give std 0"),
        pytest.param([5], [10], 100, id="one resource gives std 0"),
        pytest.param([0, 0], [0, 0], 100, id="resources with zero allocatable are skipped"),
        pytest.param([3, 5], [4, 10], 87, id="two resources use half the difference"),
        pytest.param([12, 0], [6, 10], 50, id="fractions are capped at one"),
        pytest.param(
            [3000, 5000, 4], [3500, 40000, 8], 70, id="three resources use the population std"
        ),
    ],
)
def test_balanced_resource_scorer(requested, allocatable, want):
    assert balanced_resource_scorer(requested, allocatable) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
            [],
            id="valid config",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]},
            ["resources[0].weight: Invalid value: 2: must be 1"],
            id="invalid weight",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
            ['resources[1].name: Duplicate value: "cpu"'],
            id="repeated resources",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "weight": 3}, {"name": "cpu", "weight": 1}]},
            [
                "resources[0].weight: Invalid value: 3: must be 1",
                'resources[1].name: Duplicate value: "cpu"',
            ],
            id="every problem is reported",
        ),
        pytest.param({"resources": [{"name": GPU}]}, [], id="absent weight is defaulted to one"),
        pytest.param(
            {"resources": [{"name": GPU, "weight": 0}]}, [], id="zero weight is defaulted to one"
        ),
        pytest.param(
            {"resource": []},
            ['resource: Invalid value: "resource": unknown field'],
            id="unknown field is rejected",
        ),
        pytest.param(
            {"resources": [{"name": "cpu", "wieght": 1}]},
            ['resources[0].wieght: Invalid value: "wieght": unknown field'],
            id="unknown nested field is rejected with its path",
        ),
    ],
)
def test_balanced_args_validation(raw, want):
    decoded, errors = NodeResourcesBalancedAllocationArgs.decode(raw)
    assert [str(e) for e in errors + decoded.validate()] == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(None, (ResourceSpec("cpu", 1), ResourceSpec("memory", 1)), id="no args"),
        pytest.param(
            {"resources": []},
            (ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
            id="empty resources are cpu and memory",
        ),
        pytest.param(
            {"resources": [{"name": GPU, "weight": 0}]},
            (ResourceSpec(GPU, 1),),
            id="zero weight becomes one",
        ),
    ],
)
def test_balanced_args_defaulting(raw, want):
    decoded, errors = NodeResourcesBalancedAllocationArgs.decode(raw)
    assert errors == []
    assert decoded.resources == want


def test_factory_raises_on_invalid_args():
    with pytest.raises(ArgsError) as err:
        balanced_allocation.new(
            {"resources": [{"name": "cpu", "weight": 2}]},
            None,  # type: ignore[arg-type]
        )
    assert [(e.path, e.type) for e in err.value.errors] == [
        ("resources[0].weight", ErrorType.INVALID)
    ]
