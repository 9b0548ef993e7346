"""Pod decoding: effective requests, scoring defaults, QoS, priority, errors."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import PriorityClass
from kubesched.objects.priority import PriorityResolver
from kubesched.testing import make_node, make_pod

GI = 1024**3
MI = 1024**2


@pytest.mark.parametrize(
    ("pod", "cpu", "memory"),
    [
        pytest.param(
            make_pod().req(cpu="1", memory="1Gi").req(cpu="500m", memory="1Gi"),
            1500,
            2 * GI,
            id="containers-are-summed",
        ),
        pytest.param(
            make_pod().req(cpu="1").init_req(cpu="3").init_req(cpu="2"),
            3000,
            0,
            id="init-containers-count-as-their-max",
        ),
        pytest.param(
            make_pod().req(cpu="2").init_req(cpu="1"),
            2000,
            0,
            id="init-smaller-than-containers-changes-nothing",
        ),
        pytest.param(
            make_pod().req(cpu="1").init_req(restartable=True, cpu="1").init_req(cpu="3"),
            4000,
            0,
            id="sidecar-runs-beside-later-init-containers",
        ),
        pytest.param(
            make_pod().req(cpu="1").init_req(restartable=True, cpu="500m"),
            1500,
            0,
            id="sidecar-adds-to-containers",
        ),
        pytest.param(
            make_pod().req(cpu="1").overhead(cpu="250m", memory="120Mi"),
            1250,
            120 * MI,
            id="overhead-is-added",
        ),
        pytest.param(
            make_pod().container(limits={"cpu": "2", "memory": "1Gi"}),
            2000,
            GI,
            id="limits-default-the-requests",
        ),
        pytest.param(make_pod().req(cpu="0.1m"), 1, 0, id="sub-millicore-rounds-up"),
    ],
)
def test_effective_requests(pod: Any, cpu: int, memory: int) -> None:
    p = pod.obj()
    assert (p.requests.milli_cpu, p.requests.memory) == (cpu, memory)


@pytest.mark.parametrize(
    ("pod", "cpu", "memory"),
    [
        pytest.param(make_pod().container(), 100, 200 * MI, id="no-requests-get-defaults"),
        pytest.param(make_pod().req(cpu="0"), 0, 200 * MI, id="explicit-zero-stays-zero"),
        pytest.param(
            make_pod().req(memory="1Gi").container(),
            100 + 100,
            GI + 200 * MI,
            id="per-container-defaults",
        ),
        pytest.param(make_pod().req(cpu="2", memory="1Gi"), 2000, GI, id="set-requests-unchanged"),
    ],
)
def test_non_zero_requests(pod: Any, cpu: int, memory: int) -> None:
    p = pod.obj()
    assert (p.non_zero_milli_cpu, p.non_zero_memory) == (cpu, memory)


@pytest.mark.parametrize(
    ("pod", "qos"),
    [
        pytest.param(make_pod().container(), "BestEffort", id="nothing-set-is-best-effort"),
        pytest.param(
            make_pod().container(limits={"cpu": "1", "memory": "1Gi"}),
            "Guaranteed",
            id="limits-only-is-guaranteed",
        ),
        pytest.param(
            make_pod().container(
                requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}
            ),
            "Guaranteed",
            id="equal-requests-and-limits",
        ),
        pytest.param(
            make_pod().container(
                requests={"cpu": "500m", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}
            ),
            "Burstable",
            id="request-below-limit",
        ),
        pytest.param(make_pod().req(cpu="1"), "Burstable", id="requests-without-limits"),
        pytest.param(
            make_pod().container(limits={"cpu": "1", "memory": "1Gi"}).container(),
            "Burstable",
            id="one-container-without-limits",
        ),
        pytest.param(
            make_pod().req(**{"nvidia.com/gpu": "1"}),
            "BestEffort",
            id="extended-resources-do-not-count",
        ),
    ],
)
def test_qos_class(pod: Any, qos: str) -> None:
    assert pod.obj().qos_class == qos


def test_qos_class_persisted_by_the_api_server_wins() -> None:
    # Upstream's GetPodQOS reads status.qosClass when set; only an unset (or unknown)
    # class is computed from the containers.
    raw = make_pod().container(limits={"cpu": "1", "memory": "1Gi"}).dict()
    assert Pod.from_dict(raw).qos_class == "Guaranteed"
    raw["status"] = {"qosClass": "Burstable"}
    assert Pod.from_dict(raw).qos_class == "Burstable"
    raw["status"] = {"qosClass": "Bogus"}
    assert Pod.from_dict(raw).qos_class == "Guaranteed"


def test_decoding_defaults() -> None:
    pod = Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})
    assert (pod.namespace, pod.scheduler_name, pod.phase, pod.priority) == (
        "default",
        "default-scheduler",
        "Pending",
        0,
    )


def test_host_network_defaults_host_ports() -> None:
    raw = make_pod().container(ports=[{"containerPort": 8080}]).dict()
    raw["spec"]["hostNetwork"] = True
    assert [p.host_port for p in Pod.from_dict(raw).host_ports] == [8080]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            make_pod("web").req(cpu="lots").dict(),
            "Pod default/web: spec.containers[0].resources.requests.cpu: quantities must match",
            id="bad-quantity-names-pod-and-field",
        ),
        pytest.param(
            make_pod("web").toleration(key="k", effect="Sometimes").dict(),
            "Pod default/web: spec.tolerations[0].effect: Unsupported value",
            id="bad-toleration-effect",
        ),
        pytest.param(
            make_pod("web").spread_constraint(0, "zone").dict(),
            "Pod default/web: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0",
            id="bad-spread-constraint",
        ),
        pytest.param({"metadata": {}}, "Pod: metadata.name: Required value", id="missing-name"),
    ],
)
def test_decoding_errors_name_the_object_and_field(raw: Any, message: str) -> None:
    with pytest.raises(ObjectError) as err:
        Pod.from_dict(raw)
    assert str(err.value).startswith(message)


@pytest.mark.parametrize(
    ("classes", "pod", "priority"),
    [
        pytest.param([], make_pod(), 0, id="no-class-no-default-is-zero"),
        pytest.param(
            [PriorityClass("high", 1000)],
            make_pod().priority_class_name("high"),
            1000,
            id="named-class",
        ),
        pytest.param(
            [PriorityClass("d", 7, global_default=True)], make_pod(), 7, id="global-default"
        ),
        pytest.param(
            [],
            make_pod().priority_class_name("system-node-critical"),
            2000001000,
            id="system-class",
        ),
        pytest.param(
            [PriorityClass("high", 1000)],
            make_pod().priority(5).priority_class_name("high"),
            5,
            id="admitted-priority-kept",
        ),
    ],
)
def test_priority_resolution(classes: list[PriorityClass], pod: Any, priority: int) -> None:
    assert PriorityResolver(classes).resolve(pod.obj()).priority == priority


def test_unknown_priority_class_is_an_error() -> None:
    with pytest.raises(ObjectError, match='no PriorityClass with name "nope" was found'):
        PriorityResolver([]).resolve(make_pod().priority_class_name("nope").obj())


def test_node_allocatable_defaults_to_capacity() -> None:
    node = make_node("n").capacity(cpu="4", memory="8Gi", pods="110").obj()
    assert (
        node.allocatable.milli_cpu,
        node.allocatable.memory,
        node.allocatable.allowed_pod_number,
    ) == (4000, 8 * GI, 110)
    explicit = make_node("n").capacity(cpu="4").allocatable(cpu="3500m").obj()
    assert explicit.allocatable.milli_cpu == 3500


def test_node_errors_name_the_node() -> None:
    raw = make_node("n1").capacity(cpu="four").dict()
    with pytest.raises(ObjectError, match=r"^Node n1: status.capacity.cpu: "):
        Node.from_dict(raw)
