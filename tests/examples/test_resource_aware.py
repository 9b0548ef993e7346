"""examples/resource_aware.py: the weighted share of CPU and memory left free."""

from __future__ import annotations

from typing import Any

import pytest
import resource_aware

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.types import NodeInfo
from kubesched.testing import make_node, make_pod


def node_info(cpu: str, memory: str, *used: tuple[str, str]) -> NodeInfo:
    """A 4-CPU/8Gi-style node with pods requesting ``used`` (cpu, memory) each."""
    node = make_node("n").capacity(cpu=cpu, memory=memory, pods="110").obj()
    pods = [make_pod(f"u{i}").req(cpu=c, memory=m).obj() for i, (c, m) in enumerate(used)]
    return NodeInfo(node, tuple(pods))


@pytest.mark.parametrize(
    ("args", "info", "pod_req", "expected"),
    [
        pytest.param(
            None, node_info("4", "8Gi"), {}, 100, id="empty-node-and-besteffort-pod-scores-100"
        ),
        pytest.param(
            None,
            node_info("4", "8Gi"),
            {"cpu": "1", "memory": "2Gi"},
            75,
            id="the-pod-itself-counts-cpu-75-memory-75",
        ),
        pytest.param(
            None,
            node_info("4", "8Gi", ("2", "2Gi")),
            {"cpu": "1", "memory": "2Gi"},
            # cpu: (4-3)/4 = 25; memory: (8-4)/8 = 50; mean 37
            37,
            id="running-pods-count-mean-of-25-and-50",
        ),
        pytest.param(
            {"cpuWeight": 3, "memoryWeight": 1},
            node_info("4", "8Gi", ("2", "2Gi")),
            {"cpu": "1", "memory": "2Gi"},
            # (25*3 + 50*1) / 4 = 31
            31,
            id="cpu-weighted-three-to-one",
        ),
        pytest.param(
            {"cpuWeight": 0, "memoryWeight": 1},
            node_info("4", "8Gi", ("2", "2Gi")),
            {"cpu": "1", "memory": "2Gi"},
            50,
            id="cpu-weight-zero-scores-memory-alone",
        ),
        pytest.param(
            None,
            node_info("4", "8Gi", ("3", "1Gi")),
            {"cpu": "2", "memory": "1Gi"},
            # cpu over-committed: 0; memory (8-2)/8 = 75; mean 37
            37,
            id="over-committed-resource-scores-zero",
        ),
        pytest.param(
            None,
            node_info("3", "3Gi"),
            {"cpu": "1", "memory": "1Gi"},
            # 2/3 = 66.67 truncated to 66 for both
            66,
            id="integer-arithmetic-truncates",
        ),
    ],
)
def test_score(args: Any, info: NodeInfo, pod_req: dict[str, str], expected: int) -> None:
    plugin = resource_aware.new(args, None)
    pod = make_pod("p").req(**pod_req).obj() if pod_req else make_pod("p").obj()
    score, status = plugin.score(CycleState(), pod, info)
    assert status is None
    assert score == expected


@pytest.mark.parametrize(
    ("allocatable", "requested", "expected"),
    [
        pytest.param(1000, 0, 100, id="nothing-requested"),
        pytest.param(1000, 250, 75, id="a-quarter-requested"),
        pytest.param(1000, 1000, 0, id="all-requested"),
        pytest.param(1000, 1500, 0, id="over-requested-is-zero-not-negative"),
        pytest.param(0, 0, 0, id="node-without-the-resource"),
    ],
)
def test_free_score(allocatable: int, requested: int, expected: int) -> None:
    assert resource_aware.free_score(allocatable, requested) == expected


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param({"cpuWeight": 2, "memoryWeight": 0}, [], id="valid-weights"),
        pytest.param(
            {"cpuWeight": -1},
            ["cpuWeight: Invalid value: -1: must be in the range [0, 100]"],
            id="negative-cpu-weight",
        ),
        pytest.param(
            {"cpuWeight": 101, "memoryWeight": 500},
            [
                "cpuWeight: Invalid value: 101: must be in the range [0, 100]",
                "memoryWeight: Invalid value: 500: must be in the range [0, 100]",
            ],
            id="every-problem-is-reported",
        ),
        pytest.param(
            {"cpuWeight": 0, "memoryWeight": 0},
            [
                'Invalid value: {"cpuWeight":0,"memoryWeight":0}: at least one of cpuWeight '
                "and memoryWeight must be greater than zero"
            ],
            id="both-weights-zero",
        ),
        pytest.param(
            {"cpuWeight": "2", "memoryWeight": True},
            [
                'cpuWeight: Invalid value: "2": must be int',
                "memoryWeight: Invalid value: true: must be of the right type",
            ],
            id="wrong-types",
        ),
        pytest.param(
            {"cpu": 1, "memoryWeight": -5},
            [
                'cpu: Invalid value: "cpu": unknown field',
                "memoryWeight: Invalid value: -5: must be in the range [0, 100]",
            ],
            id="unknown-field-and-bad-value-together",
        ),
    ],
)
def test_args_validation(args: dict[str, Any], errors: list[str]) -> None:
    if not errors:
        plugin = resource_aware.new(args, None)
        assert plugin.args == resource_aware.ResourceAwareArgs(
            cpu_weight=args["cpuWeight"], memory_weight=args["memoryWeight"]
        )
        return
    with pytest.raises(ArgsError) as info:
        resource_aware.new(args, None)
    assert [str(e) for e in info.value.errors] == errors


def test_defaults_weigh_cpu_and_memory_alike() -> None:
    assert resource_aware.new(None, None).args == resource_aware.ResourceAwareArgs(1, 1)


def test_the_example_profile_prefers_the_emptiest_node(framework_for: Any) -> None:
    nodes = [
        make_node(name).capacity(cpu="4", memory="16Gi", pods="110").obj()
        for name in ("busy", "empty", "half")
    ]
    bound = [
        make_pod("b1").node("busy").req(cpu="3", memory="12Gi").obj(),
        make_pod("h1").node("half").req(cpu="2", memory="8Gi").obj(),
    ]
    fwk = framework_for("config-resource-aware.yaml", "my-custom-scheduler", nodes, bound)
    assert [p.name for p in fwk.plugins_at("score")] == ["ResourceAware"]
    assert fwk.plugins["resource_aware:new"].args == resource_aware.ResourceAwareArgs(1, 1)
    pod = make_pod("p").req(cpu="1", memory="4Gi").obj()
    by_plugin, status = fwk.run_score_plugins(CycleState(), pod, fwk.snapshot.list())
    assert status is None
    assert {s.name: s.score for s in by_plugin["ResourceAware"]} == {
        "busy": 0,
        "empty": 75,
        "half": 25,
    }
