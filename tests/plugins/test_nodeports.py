"""NodePorts, after upstream's node_ports_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterPlugin,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins import nodeports
from kubesched.plugins.nodeports import fits_ports, is_schedulable_after_pod_change
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

CONFLICT = Status(
    Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",)
)
SKIP = Status(Code.SKIP)


def new_pod(node: str, *host_ports: str) -> Pod:
    """A pod on ``node`` with host ports written ``PROTOCOL/IP/PORT``."""
    wrapper: PodWrapper = make_pod("p").node(node)
    for spec in host_ports:
        protocol, ip, port = spec.split("/")
        wrapper = wrapper.host_port(int(port), protocol, ip)
    return wrapper.obj()


def node_info(*host_ports: str) -> NodeInfo:
    return NodeInfo(make_node("m1").obj(), (new_pod("m1", *host_ports),))


def with_init_container(sidecar: bool, port: int) -> Pod:
    wrapper = make_pod("p")
    init: dict[str, Any] = {
        "name": "init",
        "ports": [{"containerPort": port, "hostPort": port, "protocol": "TCP"}],
    }
    if sidecar:
        init["restartPolicy"] = "Always"
    wrapper.raw["spec"]["initContainers"] = [init]
    return wrapper.obj()


@pytest.mark.parametrize(
    ("pod", "info", "want_pre_filter", "want_filter"),
    [
        pytest.param(
            make_pod("p").obj(), NodeInfo(make_node("m1").obj()), SKIP, None, id="skip filter"
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/9090"),
            None,
            None,
            id="other port",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/8080"),
            None,
            CONFLICT,
            id="same udp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8080"),
            None,
            CONFLICT,
            id="same tcp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.2/8080"),
            None,
            None,
            id="different host ip",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8080"),
            None,
            None,
            id="different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/8080"),
            None,
            CONFLICT,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
            None,
            CONFLICT,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            node_info("TCP/127.0.0.1/8001"),
            None,
            CONFLICT,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            node_info("TCP/127.0.0.1/8001"),
            None,
            CONFLICT,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001"),
            None,
            CONFLICT,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001"),
            None,
            None,
            id="second different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
            None,
            CONFLICT,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            with_init_container(sidecar=False, port=8001),
            node_info("TCP/0.0.0.0/8001"),
            SKIP,
            None,
            id="non-sidecar initContainer using hostPort",
        ),
        pytest.param(
            with_init_container(sidecar=True, port=8001),
            node_info("TCP/0.0.0.0/8001"),
            None,
            CONFLICT,
            id="TCP hostPort conflict from sidecar initContainer",
        ),
    ],
)
def test_node_ports(
    pod: Pod, info: NodeInfo, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    plugin = nodeports.NodePorts()
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [info])
    assert (result, status) == (None, want_pre_filter)
    if status is not None and status.is_skip():
        return
    assert plugin.filter(state, pod, info) == want_filter


def test_filter_without_pre_filter_is_an_error() -> None:
    got = nodeports.NodePorts().filter(CycleState(), make_pod("p").obj(), node_info())
    assert got == Status.error('reading "PreFilterNodePorts" from cycleState: not found')


@pytest.mark.parametrize(
    ("pod", "existing", "expect"),
    [
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80"),
            node_info("TCP/127.0.0.1/9090"),
            True,
            id="non-conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info("UDP/127.0.0.1/80"),
            True,
            id="same ports on different protocols",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info("TCP/127.0.0.1/80"),
            False,
            id="conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod: Pod, existing: NodeInfo, expect: bool) -> None:
    assert fits_ports(pod.host_ports, existing.used_ports) is expect


POD_WITH_HOST_PORT = make_pod("p").host_port(8080).obj()


@pytest.mark.parametrize(
    ("deleted", "expected"),
    [
        pytest.param(make_pod("q").obj(), QueueingHint.QUEUE_SKIP, id="skip-queue-on-unscheduled"),
        pytest.param(
            make_pod("q").node("fake-node").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-non-hostport",
        ),
        pytest.param(
            make_pod("q").node("fake-node").host_port(8081).obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod("q").node("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="queue-on-released-hostport",
        ),
        pytest.param(
            make_pod("q").nominated_node_name("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="queue-on-nominated-pod-releasing-hostport",
        ),
    ],
)
def test_is_schedulable_after_pod_change(deleted: Pod, expected: QueueingHint) -> None:
    assert is_schedulable_after_pod_change(POD_WITH_HOST_PORT, deleted, None) is expected


def test_hint_raises_on_wrong_object() -> None:
    with pytest.raises(TypeError):
        is_schedulable_after_pod_change(POD_WITH_HOST_PORT, "not-a-pod", None)


def test_events_register_pod_delete_and_node_add() -> None:
    pod_event, node_event = nodeports.NodePorts().events_to_register()
    assert (pod_event.event.resource, pod_event.event.action) == (
        EventResource.POD,
        ActionType.DELETE,
    )
    assert pod_event.hint is is_schedulable_after_pod_change
    assert (node_event.event.resource, node_event.event.action) == (
        EventResource.NODE,
        ActionType.ADD,
    )
    assert node_event.hint is None


def test_factory_builds_the_plugin() -> None:
    plugin = nodeports.new(None, None)  # type: ignore[arg-type]
    assert plugin.name == "NodePorts"
    for protocol in (PreFilterPlugin, FilterPlugin, EnqueueExtensions):
        assert isinstance(plugin, protocol)
    assert plugin.pre_filter_extensions() is None
