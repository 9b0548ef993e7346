"""NodeResourcesFit scoring strategies.

Tables follow upstream's ``least_allocated_test.go``, ``most_allocated_test.go``,
``requested_to_capacity_ratio_test.go`` (incl. TestBrokenLinearFunction and the
bin-packing tables) and ``fit_test.go`` (TestFitScore), with the expected scores exactly.
Upstream's node capacities like ``"cpu": "4000"`` are cores, as there.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.noderesources import fit
from kubesched.plugins.noderesources.fit import Fit, NodeResourcesFitArgs, ScoringStrategy
from kubesched.plugins.noderesources.requested_to_capacity_ratio import (
    build_broken_linear_function,
)
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

EXTENDED_RES = "abc.com/xyz"
DEFAULT_RESOURCES = [("cpu", 1), ("memory", 1)]
EXTENDED_RESOURCE_SET = [("cpu", 1), ("memory", 1), (EXTENDED_RES, 1)]


def node(name: str, cpu: str | None = None, memory: str | None = None, **scalars: str) -> Node:
    """upstream st.MakeNode().Name(name).Capacity(...): pods 32 plus the given resources;
    a node without cpu/memory when they are not given."""
    resources: dict[str, str] = {"pods": "32", **scalars}
    if cpu is not None:
        resources["cpu"] = cpu
    if memory is not None:
        resources["memory"] = memory
    return make_node(name).capacity(**resources).obj()


def milli_node(name: str, milli_cpu: int, memory: int, **scalars: int) -> Node:
    """upstream's makeNode(name, milliCPU, memory, extended)."""
    resources = {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": "100"}
    resources.update({k: str(v) for k, v in scalars.items()})
    return make_node(name).capacity(**resources).obj()


def pod(*containers: dict[str, str], on: str = "", name: str = "p") -> PodWrapper:
    wrapper = make_pod(name)
    for requests in containers:
        wrapper.req(**requests)
    if on:
        wrapper.node(on)
    return wrapper


def cm(cpu: str, memory: str, **scalars: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **scalars}


def args_for(kind: str, resources=DEFAULT_RESOURCES, shape=None) -> dict[str, Any]:
    strategy: dict[str, Any] = {
        "type": kind,
        "resources": [{"name": n, "weight": w} for n, w in resources],
    }
    if shape is not None:
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": s} for u, s in shape]
        }
    return {"scoringStrategy": strategy}


def node_infos(nodes: list[Node], existing: list[PodWrapper]) -> list[NodeInfo]:
    pods = [w.obj() for w in existing]
    return [NodeInfo(n, pods=tuple(p for p in pods if p.node_name == n.name)) for n in nodes]


def run_scores(
    plugin: Fit, the_pod: Pod, infos: list[NodeInfo], *, pre_score: bool = True
) -> list[tuple[str, int]]:
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, the_pod, infos) is None
    out = []
    for info in infos:
        score, status = plugin.score(state, the_pod, info)
        assert status is None
        out.append((info.name, score))
    return out


def check(args: dict[str, Any], requested: PodWrapper, nodes, existing, want, pre_score=True):
    plugin = fit.new(args, None)  # type: ignore[arg-type]
    got = run_scores(plugin, requested.obj(), node_infos(nodes, existing), pre_score=pre_score)
    assert got == [(n.name, s) for n, s in zip(nodes, want, strict=True)]


N1_4000_10000 = node("node1", "4000", "10000")
N2_4000_10000 = node("node2", "4000", "10000")
N2_6000_10000 = node("node2", "6000", "10000")
N1_10000_20000 = node("node1", "10000", "20000")
N2_10000_20000 = node("node2", "10000", "20000")
TWO_CONTAINERS = pod(cm("1000", "2000"), cm("2000", "3000"))

# --- LeastAllocated ------------------------------------------------------------------------

LEAST_CASES = [
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [N1_4000_10000, N2_4000_10000],
        [],
        [100, 100],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        TWO_CONTAINERS,
        [N1_4000_10000, N2_6000_10000],
        [],
        [37, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [N1_4000_10000, N2_4000_10000],
        [pod(on="node1"), pod(on="node1"), pod(on="node2"), pod(on="node2")],
        [100, 100],
        id="no resources requested, pods without containers scheduled",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [N1_10000_20000, N2_10000_20000],
        [
            pod(cm("3000", "0"), on="node1"),
            pod(cm("3000", "0"), on="node1"),
            pod(cm("3000", "0"), on="node2"),
            pod(cm("3000", "5000"), on="node2"),
        ],
        [70, 57],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        TWO_CONTAINERS,
        [N1_10000_20000, N2_10000_20000],
        [pod(cm("3000", "0"), on="node1"), pod(cm("3000", "5000"), on="node2")],
        [57, 45],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        TWO_CONTAINERS,
        [N1_10000_20000, node("node2", "10000", "50000")],
        [pod(cm("3000", "0"), on="node1"), pod(cm("3000", "5000"), on="node2")],
        [57, 60],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        pod(cm("3000", "0")),
        [N1_4000_10000, N2_4000_10000],
        [pod(cm("3000", "0"), on="node1"), pod(cm("3000", "5000"), on="node2")],
        [50, 25],
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [node("node1"), node("node2")],
        [pod(cm("3000", "0"), on="node1"), pod(cm("3000", "5000"), on="node2")],
        [0, 0],
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        [("memory", 2), ("cpu", 1)],
        TWO_CONTAINERS,
        [N1_4000_10000, N2_6000_10000],
        [],
        [41, 50],
        id="different weights on cpu and memory, differently sized nodes",
    ),
    pytest.param(
        EXTENDED_RESOURCE_SET,
        TWO_CONTAINERS,
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", **{EXTENDED_RES: "4"})],
        [],
        [50, 50],
        id="bypass extended resource if the pod does not request it",
    ),
    pytest.param(
        EXTENDED_RESOURCE_SET,
        pod(cm("3000", "5000", **{EXTENDED_RES: "2"})),
        [
            node("node1", "6000", "10000", **{EXTENDED_RES: "4"}),
            node("node2", "6000", "10000", **{EXTENDED_RES: "10"}),
        ],
        [],
        [50, 60],
        id="honor extended resource if the pod requests it",
    ),
    pytest.param(
        [(EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)],
        pod(cm("3000", "4000")),
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", **{EXTENDED_RES: "4"})],
        [],
        [55, 55],
        id="resource the node does not have is left out",
    ),
]


@pytest.mark.parametrize(("resources", "requested", "nodes", "existing", "want"), LEAST_CASES)
def test_least_allocated(resources, requested, nodes, existing, want):
    check(args_for("LeastAllocated", resources), requested, nodes, existing, want)


# --- MostAllocated -------------------------------------------------------------------------

MOST_CASES = [
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [N1_4000_10000, N2_4000_10000],
        [],
        [0, 0],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        TWO_CONTAINERS,
        [N1_4000_10000, N2_6000_10000],
        [],
        [62, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p"),
        [N1_10000_20000, N2_10000_20000],
        [
            pod(cm("3000", "0"), on="node1"),
            pod(cm("3000", "0"), on="node1"),
            pod(cm("3000", "0"), on="node2"),
            pod(cm("3000", "5000"), on="node2"),
        ],
        [30, 42],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        TWO_CONTAINERS,
        [N1_10000_20000, N2_10000_20000],
        [pod(cm("3000", "0"), on="node1"), pod(cm("3000", "5000"), on="node2")],
        [42, 55],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        pod(cm("2000", "4000"), cm("3000", "5000")),
        [node("node1", "5000", "10000"), node("node2", "10000", "9000")],
        [],
        [95, 75],
        id="resources requested equal node capacity",
    ),
    pytest.param(
        [("memory", 2), ("cpu", 1)],
        TWO_CONTAINERS,
        [N1_4000_10000, N2_6000_10000],
        [],
        [58, 50],
        id="different weights on cpu and memory, differently sized nodes",
    ),
    pytest.param(
        DEFAULT_RESOURCES,
        make_pod("p").container(name="container"),
        [node("node1", "250m", "1000Mi"), node("node2", "250m", "1000Mi")],
        [
            make_pod("e1").container(name="container").node("node1"),
            make_pod("e2").container(name="container").node("node1"),
        ],
        [80, 30],
        id="no resources requested, pods scheduled, non-zero request defaults apply",
    ),
    pytest.param(
        EXTENDED_RESOURCE_SET,
        TWO_CONTAINERS,
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", **{EXTENDED_RES: "4"})],
        [],
        [50, 50],
        id="bypass extended resource if the pod does not request it",
    ),
    pytest.param(
        EXTENDED_RESOURCE_SET,
        pod(cm("3000", "5000", **{EXTENDED_RES: "2"})),
        [
            node("node1", "6000", "10000", **{EXTENDED_RES: "4"}),
            node("node2", "6000", "10000", **{EXTENDED_RES: "10"}),
        ],
        [],
        [50, 40],
        id="honor extended resource if the pod requests it",
    ),
    pytest.param(
        [(EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)],
        pod(cm("3000", "4000")),
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", **{EXTENDED_RES: "4"})],
        [],
        [45, 45],
        id="resource the node does not have is left out",
    ),
]


@pytest.mark.parametrize(("resources", "requested", "nodes", "existing", "want"), MOST_CASES)
def test_most_allocated(resources, requested, nodes, existing, want):
    check(args_for("MostAllocated", resources), requested, nodes, existing, want)


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
def test_no_resources_to_score_is_an_error(kind):
    # Upstream's "Resources not set, pods scheduled with error": unreachable through the
    # v1 args (they default an empty list), so the plugin is built from the args directly.
    strategy = ScoringStrategy(kind, (), ())
    plugin = Fit(NodeResourcesFitArgs(scoring_strategy=strategy))
    infos = node_infos([N1_4000_10000, N2_6000_10000], [])
    state = CycleState()
    the_pod = TWO_CONTAINERS.obj()
    assert plugin.pre_score(state, the_pod, infos) is None
    for info in infos:
        score, status = plugin.score(state, the_pod, info)
        assert score == 0
        assert status is not None
        assert status.code is Code.ERROR
        assert status.reasons == ("resources not found",)


@pytest.mark.parametrize(
    ("resources", "path"),
    [
        pytest.param(
            [("memory", -1), ("cpu", 1)],
            "scoringStrategy.resources[0].weight",
            id="resource with negative weight",
        ),
        pytest.param(
            [("memory", 1), ("cpu", 101)],
            "scoringStrategy.resources[1].weight",
            id="resource weight larger than MaxNodeScore",
        ),
    ],
)
@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
def test_invalid_weights_fail_the_factory(kind, resources, path):
    with pytest.raises(ArgsError) as err:
        fit.new(args_for(kind, resources), None)  # type: ignore[arg-type]
    assert [e.path for e in err.value.errors] == [path]


# --- RequestedToCapacityRatio --------------------------------------------------------------

LEAST_LIKE_SHAPE = [(0, 10), (100, 0)]


@pytest.mark.parametrize(
    ("requested", "nodes", "existing", "want"),
    [
        pytest.param(
            make_pod("p"),
            [N1_4000_10000, N2_4000_10000],
            [pod(on="node1"), pod(on="node1")],
            [100, 100],
            id="nothing scheduled, nothing requested (least requested nodes have priority)",
        ),
        pytest.param(
            TWO_CONTAINERS,
            [N1_4000_10000, N2_6000_10000],
            [pod(on="node1"), pod(on="node1")],
            [38, 50],
            id="nothing scheduled, resources requested, differently sized nodes (rounded)",
        ),
        pytest.param(
            make_pod("p"),
            [N1_4000_10000, N2_6000_10000],
            [pod(cm("3000", "5000"), on="node1"), pod(cm("3000", "5000"), on="node2")],
            [38, 50],
            id="no resources requested, pods scheduled with resources",
        ),
    ],
)
def test_requested_to_capacity_ratio(requested, nodes, existing, want):
    args = args_for("RequestedToCapacityRatio", shape=LEAST_LIKE_SHAPE)
    check(args, requested, nodes, existing, want)


@pytest.mark.parametrize(
    ("points", "p", "want"),
    [
        *(
            pytest.param([(10, 1), (90, 9)], p, want, id=f"rising segment at {p}")
            for p, want in [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ]
        ),
        *(
            pytest.param([(0, 2), (40, 10), (100, 0)], p, want, id=f"rise then fall at {p}")
            for p, want in [
                (-10, 2),
                (0, 2),
                (20, 6),
                (30, 8),
                (40, 10),
                (70, 5),
                (100, 0),
                (110, 0),
            ]
        ),
        *(
            pytest.param([(0, 2), (40, 2), (100, 2)], p, 2, id=f"flat at {p}")
            for p in (-10, 0, 20, 30, 40, 70, 100, 110)
        ),
        pytest.param(
            [(0, 10), (100, 0)], 33, 7, id="falling segment truncates toward zero like Go"
        ),
    ],
)
def test_broken_linear_function(points, p, want):
    assert build_broken_linear_function(points)(p) == want


BIN_SHAPE = [(0, 0), (100, 1)]
GIB10 = 10000 * 1024 * 1024


@pytest.mark.parametrize(
    ("requested", "existing", "want"),
    [
        pytest.param(make_pod("p"), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            pod({"intel.com/foo": "2"}),
            [pod()],
            [2, 5],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            pod({"intel.com/foo": "2"}),
            [pod({"intel.com/foo": "2"}, on="node2")],
            [2, 10],
            id="resources requested, on a node with an existing pod running",
        ),
        pytest.param(
            pod({"intel.com/foo": "4"}),
            [pod()],
            [5, 10],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_bin_packing_single_extended(requested, existing, want):
    nodes = [
        milli_node("node1", 4000, GIB10, **{"intel.com/foo": 8}),
        milli_node("node2", 4000, GIB10, **{"intel.com/foo": 4}),
    ]
    args = args_for("RequestedToCapacityRatio", [("intel.com/foo", 1)], BIN_SHAPE)
    check(args, requested, nodes, existing, want)


@pytest.mark.parametrize(
    ("requested", "existing", "want"),
    [
        pytest.param(make_pod("p"), [], [0, 0], id="nothing scheduled, nothing requested"),
        pytest.param(
            pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [pod()],
            [4, 3],
            id="resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [pod({"intel.com/foo": "4", "intel.com/bar": "2"}, on="node2")],
            [4, 7],
            id="resources requested, on a node with an existing pod running",
        ),
        pytest.param(
            pod({"intel.com/foo": "4", "intel.com/bar": "2"}),
            [pod()],
            [5, 5],
            id="resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_bin_packing_multiple_extended(requested, existing, want):
    nodes = [
        milli_node("node1", 4000, GIB10, **{"intel.com/foo": 8, "intel.com/bar": 4}),
        milli_node("node2", 4000, GIB10, **{"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    args = args_for(
        "RequestedToCapacityRatio", [("intel.com/foo", 3), ("intel.com/bar", 5)], BIN_SHAPE
    )
    check(args, requested, nodes, existing, want)


# --- TestFitScore --------------------------------------------------------------------------

EXISTING = [pod(cm("2000", "4000"), on="node1"), pod(cm("1000", "2000"), on="node2")]
WITH_SIDECAR = [
    pod(cm("1000", "2000"), on="node1").init_req(restartable=True, cpu="1000", memory="2000"),
    pod(cm("1000", "2000"), on="node2"),
]


@pytest.mark.parametrize(
    ("args", "requested", "nodes", "existing", "want"),
    [
        pytest.param(
            args_for("RequestedToCapacityRatio", shape=[(0, 10), (100, 0)]),
            pod(cm("3000", "5000")),
            [N1_4000_10000, N2_6000_10000],
            EXISTING,
            [10, 32],
            id="RequestedToCapacityRatio case1",
        ),
        pytest.param(
            args_for("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]),
            pod(cm("3000", "5000")),
            [N1_4000_10000, N2_6000_10000],
            EXISTING,
            [95, 68],
            id="RequestedToCapacityRatio case2",
        ),
        pytest.param(
            args_for("MostAllocated"),
            pod(cm("1000", "2000")),
            [N1_4000_10000, N2_6000_10000],
            EXISTING,
            [67, 36],
            id="MostAllocated",
        ),
        pytest.param(
            args_for("LeastAllocated"),
            pod(cm("1000", "2000")),
            [N1_4000_10000, N2_6000_10000],
            EXISTING,
            [32, 63],
            id="LeastAllocated",
        ),
        pytest.param(
            args_for("MostAllocated"),
            pod(cm("1000", "2000")),
            [N1_4000_10000, N2_4000_10000],
            WITH_SIDECAR,
            [67, 45],
            id="MostAllocated with sidecar container",
        ),
        pytest.param(
            args_for("LeastAllocated"),
            pod(cm("1000", "2000")),
            [N1_4000_10000, N2_4000_10000],
            WITH_SIDECAR,
            [32, 55],
            id="LeastAllocated with sidecar container",
        ),
    ],
)
@pytest.mark.parametrize("pre_score", [True, False], ids=["with PreScore", "without PreScore"])
def test_fit_score(args, requested, nodes, existing, want, pre_score):
    check(args, requested, nodes, existing, want, pre_score=pre_score)


def test_default_args_score_least_allocated():
    check({}, pod(cm("1000", "2000")), [N1_4000_10000, N2_6000_10000], EXISTING, [32, 63])
