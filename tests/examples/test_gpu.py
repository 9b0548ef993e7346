"""examples/gpu.py: GPU pods on GPU nodes only; other pods prefer nodes without GPUs."""

from __future__ import annotations

from typing import Any

import gpu
import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import ActionType, Code, EventResource, QueueingHint, Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.testing import make_node, make_pod

NO_GPU = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) have no GPU",))


def gpu_node(name: str = "gpu", gpus: str = "4") -> Node:
    return (
        make_node(name)
        .capacity(cpu="16", memory="64Gi", pods="110", **{"nvidia.com/gpu": gpus})
        .taint("nvidia.com/gpu", "present")
        .obj()
    )


def cpu_node(name: str = "cpu") -> Node:
    return make_node(name).capacity(cpu="4", memory="16Gi", pods="110").obj()


def gpu_pod(name: str = "train", gpus: int = 1) -> Pod:
    return (
        make_pod(name)
        .container(requests={"cpu": "1"}, limits={"nvidia.com/gpu": gpus})
        .toleration("nvidia.com/gpu", operator="Exists", effect="NoSchedule")
        .obj()
    )


def cpu_pod(name: str = "web") -> Pod:
    return make_pod(name).req(cpu="500m").obj()


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        pytest.param(gpu_pod(), None, id="gpu-pod-is-filtered"),
        pytest.param(cpu_pod(), Status(Code.SKIP), id="cpu-pod-skips-the-filter"),
        pytest.param(make_pod("be").obj(), Status(Code.SKIP), id="besteffort-pod-skips"),
    ],
)
def test_pre_filter(the_pod: Pod, expected: Status | None) -> None:
    result, status = gpu.new(None, None).pre_filter(CycleState(), the_pod, [])
    assert result is None
    assert status == expected


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(gpu_node(), None, id="gpu-node-fits"),
        pytest.param(cpu_node(), NO_GPU, id="cpu-node-has-no-gpu"),
        pytest.param(gpu_node(gpus="0"), NO_GPU, id="node-advertising-zero-gpus-has-none"),
        pytest.param(gpu_node(gpus="1"), None, id="too-few-gpus-is-left-to-noderesourcesfit"),
    ],
)
def test_filter(node: Node, expected: Status | None) -> None:
    the_pod = gpu_pod(gpus=2)
    assert gpu.new(None, None).filter(CycleState(), the_pod, NodeInfo(node)) == expected


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        pytest.param(gpu_pod(), Status(Code.SKIP), id="gpu-pod-skips-scoring"),
        pytest.param(cpu_pod(), None, id="cpu-pod-is-scored"),
    ],
)
def test_pre_score(the_pod: Pod, expected: Status | None) -> None:
    assert gpu.new(None, None).pre_score(CycleState(), the_pod, []) == expected


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(cpu_node(), 100, id="node-without-gpus-scores-100"),
        pytest.param(gpu_node(), 0, id="gpu-node-scores-0"),
    ],
)
def test_score(node: Node, expected: int) -> None:
    plugin = gpu.new(None, None)
    assert plugin.score(CycleState(), cpu_pod(), NodeInfo(node)) == (expected, None)
    assert plugin.score_extensions() is None


def test_registers_for_nodes_added_or_changing_allocatable() -> None:
    events = gpu.new(None, None).events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE)
    ]
    assert events[0].hint is gpu.is_schedulable_after_node_change


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(None, gpu_node(), QueueingHint.QUEUE, id="queue-on-gpu-node-added"),
        pytest.param(None, cpu_node(), QueueingHint.QUEUE_SKIP, id="skip-queue-on-cpu-node-added"),
        pytest.param(
            gpu_node(gpus="0"),
            gpu_node(gpus="4"),
            QueueingHint.QUEUE,
            id="queue-on-node-starting-to-advertise-gpus",
        ),
        pytest.param(
            gpu_node(gpus="4"),
            gpu_node(gpus="2"),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-gpu-node-that-already-had-gpus",
        ),
        pytest.param(
            cpu_node(), cpu_node(), QueueingHint.QUEUE_SKIP, id="skip-queue-on-cpu-node-update"
        ),
    ],
)
def test_hint(old: Node | None, new: Node, expected: QueueingHint) -> None:
    assert gpu.is_schedulable_after_node_change(gpu_pod(), old, new) is expected


def test_hint_fails_on_unexpected_objects_so_the_pod_is_queued() -> None:
    with pytest.raises(TypeError):
        gpu.is_schedulable_after_node_change(gpu_pod(), None, cpu_pod())


def test_args() -> None:
    with pytest.raises(ArgsError) as info:
        gpu.new({"resource": "amd.com/gpu"}, None)
    assert [str(e) for e in info.value.errors] == [
        'resource: Invalid value: "resource": unknown field'
    ]


@pytest.mark.parametrize("config", ["config-gpu.yaml", "config.yaml"])
def test_the_example_profile_filters_with_gpu_aware_first(framework_for: Any, config: str) -> None:
    fwk = framework_for(config, "gpu-aware", [cpu_node(), gpu_node()])
    filters = [p.name for p in fwk.plugins_at("filter")]
    assert filters[0] == "GPUAware"
    assert filters.count("GPUAware") == 1
    assert "GPUAware" in [p.name for p in fwk.plugins_at("score")]

    # A GPU pod on a CPU node: GPUAware's reason, not NodeResourcesFit's Insufficient.
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, gpu_pod())
    assert status is None
    cpu_info, gpu_info = fwk.snapshot.find("cpu"), fwk.snapshot.find("gpu")
    assert fwk.run_filter_plugins(state, gpu_pod(), cpu_info) == NO_GPU.with_plugin("GPUAware")
    assert fwk.run_filter_plugins(state, gpu_pod(), gpu_info) is None

    # A CPU pod: GPUAware's Filter is skipped for the attempt.
    state = CycleState()
    fwk.run_pre_filter_plugins(state, cpu_pod())
    assert "GPUAware" in state.skip_filter_plugins


def test_the_default_profile_has_no_gpu_rules(framework_for: Any) -> None:
    fwk = framework_for("config.yaml", "default-scheduler")
    assert "GPUAware" not in [p.name for p in fwk.plugins_at("filter")]
