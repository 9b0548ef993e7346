"""NodeResourcesFit: Filter, args validation and requeue hints.

Tables follow upstream's ``noderesources/fit_test.go`` (TestEnoughRequests,
TestNotEnoughRequests, TestStorageRequests, TestRestartableInitContainers,
TestEventsToRegister, Test_isSchedulableAfter*, TestIsFit,
TestHaveAnyRequestedResourcesIncreased) and ``validation_pluginargs_test.go``
(TestValidateFitArgs and the scoring-strategy tables).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config.errors import ErrorType
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    Code,
    EventResource,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.noderesources import fit
from kubesched.plugins.noderesources.fit import (
    Fit,
    InsufficientResource,
    NodeResourcesFitArgs,
    ScoringStrategy,
    compute_pod_resource_request,
    fits_request,
    have_any_requested_resources_increased,
    is_fit,
)
from kubesched.plugins.noderesources.resource_allocation import ResourceSpec
from kubesched.testing.wrappers import PodWrapper, make_node, make_pod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGEPAGES_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"


def usage(cpu: int = 0, mem: int = 0, storage: int = 0, **scalars: int) -> dict[str, Any]:
    """A container's requests like upstream's framework.Resource: cpu in millicores."""
    out: dict[str, Any] = {"cpu": f"{cpu}m", "memory": str(mem), "ephemeral-storage": str(storage)}
    out.update({name: str(v) for name, v in scalars.items()})
    return out


def resource_pod(*usages: dict[str, Any], name: str = "p") -> PodWrapper:
    """Upstream's newResourcePod: one container per usage."""
    wrapper = make_pod(name)
    for u in usages:
        wrapper.container(requests=u)
    return wrapper


def with_init(wrapper: PodWrapper, *usages: dict[str, Any]) -> PodWrapper:
    """Upstream's newResourceInitPod: one init container per usage."""
    for u in usages:
        wrapper.init_req(**u)
    return wrapper


def with_pod_level(wrapper: PodWrapper, **requests: str) -> PodWrapper:
    """Pod-level resources (spec.resources.requests); the wrappers have no method for it."""
    wrapper.raw["spec"]["resources"] = {"requests": dict(requests)}
    return wrapper


def ext(name: str, quantity: int) -> dict[str, str]:
    return {name: str(quantity)}


def fit_node(name: str = "n") -> Node:
    """makeAllocatableResources(10, 20, 32, 5, 20, 5): cpu 10m, memory 20, 32 pods,
    5 of example.com/aaa, 20 of ephemeral storage, 5 of hugepages-2Mi."""
    return (
        make_node(name)
        .capacity(cpu="10m", memory="20", pods="32")
        .allocatable(
            cpu="10m",
            memory="20",
            pods="32",
            **{EXT_A: 5, "ephemeral-storage": 20, HUGEPAGES_A: 5},
        )
        .obj()
    )


def node_info(node: Node, *existing: PodWrapper) -> NodeInfo:
    return NodeInfo(node, pods=tuple(w.obj() for w in existing))


def run_filter(plugin: Fit, pod: Pod, info: NodeInfo) -> Status | None:
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [info])
    assert result is None
    assert status is None
    return plugin.filter(state, pod, info)


def plugin(args: dict[str, Any] | None = None) -> Fit:
    return fit.new(args, None)  # type: ignore[arg-type]


_REASONS = {
    "pods": "Too many pods",
    "cpu": "Insufficient cpu",
    "memory": "Insufficient memory",
    "ephemeral-storage": "Insufficient ephemeral-storage",
}


def ins(name: str, requested: int, used: int, capacity: int, unresolvable: bool = False):
    return InsufficientResource(
        name, _REASONS.get(name, f"Insufficient {name}"), requested, used, capacity, unresolvable
    )


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


# --- TestEnoughRequests ------------------------------------------------------------------

ENOUGH_CASES = [
    pytest.param(
        make_pod("p"),
        [usage(10, 20)],
        None,
        None,
        [],
        id="no resources requested always fits",
    ),
    pytest.param(
        resource_pod(usage(1, 1)),
        [usage(10, 20)],
        None,
        unschedulable("Insufficient cpu", "Insufficient memory"),
        [ins("cpu", 1, 10, 10), ins("memory", 1, 20, 20)],
        id="too many resources fails",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(3, 1)),
        [usage(8, 19)],
        None,
        unschedulable("Insufficient cpu"),
        [ins("cpu", 3, 8, 10)],
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(3, 1), usage(2, 1)),
        [usage(8, 19)],
        None,
        unschedulable("Insufficient cpu"),
        [ins("cpu", 3, 8, 10)],
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(1, 3)),
        [usage(9, 19)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 3, 19, 20)],
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(1, 3), usage(1, 2)),
        [usage(9, 19)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 3, 19, 20)],
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(1, 1)),
        [usage(9, 19)],
        None,
        None,
        [],
        id="init container fits because it is the max, not the sum, of containers and inits",
    ),
    pytest.param(
        with_init(resource_pod(usage(1, 1)), usage(1, 1), usage(1, 1)),
        [usage(9, 19)],
        None,
        None,
        [],
        id="multiple init containers fit because it is the max, not the sum",
    ),
    pytest.param(resource_pod(usage(1, 1)), [usage(5, 5)], None, None, [], id="both resources fit"),
    pytest.param(
        resource_pod(usage(2, 1)),
        [usage(9, 5)],
        None,
        unschedulable("Insufficient cpu"),
        [ins("cpu", 2, 9, 10)],
        id="one resource memory fits",
    ),
    pytest.param(
        resource_pod(usage(1, 2)),
        [usage(5, 19)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 2, 19, 20)],
        id="one resource cpu fits",
    ),
    pytest.param(resource_pod(usage(5, 1)), [usage(5, 19)], None, None, [], id="equal edge case"),
    pytest.param(
        with_init(resource_pod(usage(4, 1)), usage(5, 1)),
        [usage(5, 19)],
        None,
        None,
        [],
        id="equal edge case for init container",
    ),
    pytest.param(
        resource_pod({**usage(), EXT_A: "1"}),
        [usage()],
        None,
        None,
        [],
        id="extended resource fits",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(), EXT_A: "1"}),
        [usage()],
        None,
        None,
        [],
        id="extended resource fits for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_A: "10"}),
        [{**usage(), EXT_A: "0"}],
        None,
        unresolvable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), EXT_A: "10"}),
        [{**usage(), EXT_A: "0"}],
        None,
        unresolvable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_A: "1"}),
        [{**usage(), EXT_A: "5"}],
        None,
        unschedulable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), EXT_A: "1"}),
        [{**usage(), EXT_A: "5"}],
        None,
        unschedulable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_A: "3"}, {**usage(1, 1), EXT_A: "3"}),
        [{**usage(), EXT_A: "2"}],
        None,
        unresolvable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), EXT_A: "3"}, {**usage(1, 1), EXT_A: "3"}),
        [{**usage(), EXT_A: "2"}],
        None,
        None,
        [],
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), EXT_A: "6"}, {**usage(1, 1), EXT_A: "3"}),
        [{**usage(), EXT_A: "2"}],
        None,
        unresolvable(f"Insufficient {EXT_A}"),
        [ins(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_B: "1"}),
        [usage()],
        None,
        unresolvable(f"Insufficient {EXT_B}"),
        [ins(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), EXT_B: "1"}),
        [usage()],
        None,
        unresolvable(f"Insufficient {EXT_B}"),
        [ins(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), K8S_IO_A: "10"}),
        [usage()],
        None,
        unresolvable(f"Insufficient {K8S_IO_A}"),
        [ins(K8S_IO_A, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), K8S_IO_B: "10"}),
        [usage()],
        None,
        unresolvable(f"Insufficient {K8S_IO_B}"),
        [ins(K8S_IO_B, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), HUGEPAGES_A: "10"}),
        [{**usage(), HUGEPAGES_A: "0"}],
        None,
        unresolvable(f"Insufficient {HUGEPAGES_A}"),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        with_init(resource_pod(usage()), {**usage(1, 1), HUGEPAGES_A: "10"}),
        [{**usage(), HUGEPAGES_A: "0"}],
        None,
        unresolvable(f"Insufficient {HUGEPAGES_A}"),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), HUGEPAGES_A: "3"}, {**usage(1, 1), HUGEPAGES_A: "3"}),
        [{**usage(), HUGEPAGES_A: "2"}],
        None,
        unresolvable(f"Insufficient {HUGEPAGES_A}"),
        [ins(HUGEPAGES_A, 6, 2, 5, True)],
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_B: "1"}),
        [usage()],
        {"ignoredResources": [EXT_B]},
        None,
        [],
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        resource_pod(usage(1, 1)).overhead(cpu="3m", memory="13"),
        [usage(5, 5)],
        None,
        None,
        [],
        id="resources plus pod overhead fits",
    ),
    pytest.param(
        resource_pod(usage(1, 1)).overhead(cpu="1m", memory="15"),
        [usage(5, 5)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 16, 5, 20)],
        id="requests plus overhead does not fit for memory",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_B: "1", K8S_IO_A: "1"}),
        [usage()],
        {"ignoredResourceGroups": ["example.com"]},
        unresolvable(f"Insufficient {K8S_IO_A}"),
        [ins(K8S_IO_A, 1, 0, 0, True)],
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), EXT_A: "0"}),
        [{**usage(), EXT_A: "6"}],
        None,
        None,
        [],
        id="skip checking extended resource request with quantity zero",
    ),
    pytest.param(
        resource_pod(ext(EXT_A, 1)),
        [{**usage(20, 30), EXT_A: "1"}],
        None,
        None,
        [],
        id="skip checking a resource the pod requests zero of on an overcommitted node",
    ),
    pytest.param(
        with_pod_level(resource_pod(usage(1, 1)), cpu="1m", memory="2"),
        [usage(5, 5)],
        None,
        None,
        [],
        id="both pod-level and container-level resources fit",
    ),
    pytest.param(
        with_pod_level(resource_pod(usage(1, 1)), cpu="7m", memory="2"),
        [usage(5, 5)],
        None,
        unschedulable("Insufficient cpu"),
        [ins("cpu", 7, 5, 10)],
        id="pod-level cpu resource does not fit",
    ),
    pytest.param(
        with_pod_level(resource_pod(usage(1, 1)), cpu="3m", memory="2"),
        [usage(5, 19)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 2, 19, 20)],
        id="pod-level memory resource does not fit",
    ),
    pytest.param(
        with_pod_level(make_pod("p"), cpu="3m", memory="2", **{HUGEPAGES_A: "5"}),
        [],
        None,
        None,
        [],
        id="pod-level hugepages resource fits",
    ),
    pytest.param(
        with_pod_level(
            resource_pod({**usage(1, 1), HUGEPAGES_A: "3"}),
            cpu="3m",
            memory="2",
            **{HUGEPAGES_A: "5"},
        ),
        [],
        None,
        None,
        [],
        id="both pod-level and container-level hugepages resources fit",
    ),
    pytest.param(
        with_pod_level(make_pod("p"), cpu="3m", memory="2", **{HUGEPAGES_A: "10"}),
        [],
        None,
        unresolvable(f"Insufficient {HUGEPAGES_A}"),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
        id="pod-level hugepages resource does not fit",
    ),
    pytest.param(
        with_init(with_pod_level(resource_pod(usage(1, 1)), cpu="3m", memory="2"), usage(1, 1)),
        [usage(5, 19)],
        None,
        unschedulable("Insufficient memory"),
        [ins("memory", 2, 19, 20)],
        id="pod-level cpu fits, pod-level memory does not, init containers aside",
    ),
    pytest.param(
        resource_pod({**usage(1, 1), DRA_EXT: "1"}),
        [usage()],
        None,
        unresolvable(f"Insufficient {DRA_EXT}"),
        [ins(DRA_EXT, 1, 0, 0, True)],
        id="extended resource a DRA class could back is checked (DRAExtendedResource off)",
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "args", "want_status", "want_insufficient"), ENOUGH_CASES
)
def test_enough_requests(pod, existing, args, want_status, want_insufficient):
    info = node_info(fit_node(), *(resource_pod(u, name=f"e{i}") for i, u in enumerate(existing)))
    p = plugin(args)
    the_pod = pod.obj()
    assert run_filter(p, the_pod, info) == want_status
    args_obj, _ = NodeResourcesFitArgs.decode(args)
    request = compute_pod_resource_request(
        the_pod,
        frozenset(args_obj.ignored_resources),
        frozenset(args_obj.ignored_resource_groups),
    )
    assert fits_request(request, info) == want_insufficient


def test_filter_without_pre_filter_is_an_error():
    info = node_info(make_node("n").obj())
    status = plugin().filter(CycleState(), make_pod("p").obj(), info)
    assert status == Status(
        Code.ERROR, ('error reading "PreFilterNodeResourcesFit" from cycleState: not found',)
    )


# --- TestNotEnoughRequests ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(
            make_pod("p"),
            usage(10, 20),
            id="even without specified resources, fails when there is no space for another pod",
        ),
        pytest.param(
            resource_pod(usage(1, 1)),
            usage(5, 5),
            id="even if both resources fit, fails when there is no space for another pod",
        ),
        pytest.param(
            resource_pod(usage(5, 1)),
            usage(5, 19),
            id="even for the equal edge case, fails when there is no space for another pod",
        ),
        pytest.param(
            with_init(resource_pod(usage(5, 1)), usage(5, 1)),
            usage(5, 19),
            id="even for the equal edge case with an init container, fails on the pod count",
        ),
    ],
)
def test_not_enough_requests(pod, existing):
    node = make_node("n").allocatable(cpu="10m", memory="20", pods="1").obj()
    info = node_info(node, resource_pod(existing, name="e"))
    assert run_filter(plugin(), pod.obj(), info) == unschedulable("Too many pods")


# --- TestStorageRequests -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "existing", "want"),
    [
        pytest.param(
            resource_pod(usage(1, 1)),
            usage(2, 10),
            None,
            id="empty storage requested, and pod fits",
        ),
        pytest.param(
            resource_pod(usage(storage=25)),
            usage(2, 2),
            unresolvable("Insufficient ephemeral-storage"),
            id="ephemeral storage request exceeds allocatable",
        ),
        pytest.param(
            resource_pod(usage(storage=5)),
            usage(2, 2, storage=10),
            None,
            id="ephemeral local storage is sufficient",
        ),
        pytest.param(resource_pod(usage(storage=10)), usage(2, 2), None, id="pod fits"),
        pytest.param(
            resource_pod(usage(storage=11)),
            usage(2, 2, storage=10),
            unschedulable("Insufficient ephemeral-storage"),
            id="ephemeral storage short because of other pods is resolvable",
        ),
    ],
)
def test_storage_requests(pod, existing, want):
    info = node_info(fit_node(), resource_pod(existing, name="e"))
    assert run_filter(plugin(), pod.obj(), info) == want


# --- TestRestartableInitContainers (SidecarContainers is always on in 1.34) -------------


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            make_pod("p").container(name="regular"),
            None,
            id="allow pod without restartable init containers",
        ),
        pytest.param(
            make_pod("p").container(name="regular").init_req(restartable=True),
            None,
            id="allow pod with restartable init containers",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m").init_req(restartable=True, cpu="1m"),
            None,
            id="allow pod if the total requested resources do not exceed allocatable",
        ),
        pytest.param(
            make_pod("p").req(cpu="1m").init_req(restartable=True, cpu="2m"),
            unresolvable("Insufficient cpu"),
            id="reject pod if container plus sidecar requests exceed allocatable",
        ),
    ],
)
def test_restartable_init_containers(pod, want):
    node = make_node("n").allocatable(cpu="2m", memory="0", pods="1").obj()
    assert run_filter(plugin(), pod.obj(), node_info(node)) == want


# --- args validation ---------------------------------------------------------------------

LONG = "a" * 64


def strategy(type_: str, resources=None, shape=None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_}
    if resources is not None:
        out["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape is not None:
        out["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": s} for u, s in shape]
        }
    return {"scoringStrategy": out}


INVALID = ErrorType.INVALID
REQUIRED = ErrorType.REQUIRED


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(
            {"ignoredResources": ["longvalue" + LONG]},
            [("ignoredResources[0]", INVALID, "name part must be no more than 63")],
            id="ignored resource with too long a name",
        ),
        pytest.param(
            {"ignoredResources": ["example.com/"]},
            [
                ("ignoredResources[0]", INVALID, "name part must be non-empty"),
                ("ignoredResources[0]", INVALID, "must consist of alphanumeric characters"),
            ],
            id="ignored resource with an empty name part",
        ),
        pytest.param(
            {"ignoredResources": ["example.com/aaa/bbb"]},
            [("ignoredResources[0]", INVALID, "must consist of alphanumeric characters")],
            id="ignored resource with too many slashes",
        ),
        pytest.param({"ignoredResources": ["example.com"]}, [], id="valid ignored resource"),
        pytest.param(
            {"ignoredResourceGroups": ["example.com"]}, [], id="valid ignored resource group"
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/"]},
            [
                ("ignoredResourceGroups[0]", INVALID, "resource group name can't contain '/'"),
                ("ignoredResourceGroups[0]", INVALID, "name part must be non-empty"),
                ("ignoredResourceGroups[0]", INVALID, "must consist of alphanumeric characters"),
            ],
            id="ignored resource group with a slash and an empty name part",
        ),
        pytest.param(
            {"ignoredResourceGroups": [LONG]},
            [("ignoredResourceGroups[0]", INVALID, "name part must be no more than 63")],
            id="ignored resource group with too long a name",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["example.com/aa"]},
            [("ignoredResourceGroups[0]", INVALID, "resource group name can't contain '/'")],
            id="ignored resource group cannot contain a slash",
        ),
        pytest.param({}, [], id="absent scoring strategy is defaulted"),
        pytest.param(
            {"scoringStrategy": {"type": "Invalid"}},
            [("scoringStrategy.type", ErrorType.NOT_SUPPORTED, "supported values")],
            id="unsupported scoring strategy type",
        ),
        pytest.param(
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            [("scoringStrategy.type", ErrorType.NOT_SUPPORTED, "supported values")],
            id="a given scoring strategy needs a type",
        ),
        # TestValidateLeastAllocatedScoringStrategy / MostAllocated. A zero weight is
        # defaulted to 1 by the v1 API, so -1 stands for "less than min" here.
        *(
            row
            for kind in ("LeastAllocated", "MostAllocated")
            for row in (
                pytest.param(strategy(kind), [], id=f"{kind} default config"),
                pytest.param(
                    strategy(kind, [("cpu", 1), ("memory", 10)]),
                    [],
                    id=f"{kind} multi valid resources",
                ),
                pytest.param(
                    strategy(kind, [("cpu", -1)]),
                    [("scoringStrategy.resources[0].weight", INVALID, "(0, 100]")],
                    id=f"{kind} weight less than min",
                ),
                pytest.param(
                    strategy(kind, [("cpu", 101)]),
                    [("scoringStrategy.resources[0].weight", INVALID, "(0, 100]")],
                    id=f"{kind} weight greater than max",
                ),
                pytest.param(
                    strategy(kind, [("cpu", -1), ("memory", 101)]),
                    [
                        ("scoringStrategy.resources[0].weight", INVALID, "of cpu not"),
                        ("scoringStrategy.resources[1].weight", INVALID, "of memory not"),
                    ],
                    id=f"{kind} multi invalid resources",
                ),
            )
        ),
        # TestValidateRequestedToCapacityRatioScoringStrategy
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[]),
            [("scoringStrategy.shape", REQUIRED, "at least one point must be specified")],
            id="ratio strategy with no shape points",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio"),
            [("scoringStrategy.shape", REQUIRED, "at least one point must be specified")],
            id="ratio strategy without requestedToCapacityRatio",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", [("cpu", 101)], [(30, 3)]),
            [("scoringStrategy.resources[0].weight", INVALID, "(0, 100]")],
            id="ratio strategy weight greater than max",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", [("cpu", -1)], [(30, 3)]),
            [("scoringStrategy.resources[0].weight", INVALID, "(0, 100]")],
            id="ratio strategy weight less than min",
        ),
        pytest.param(strategy("RequestedToCapacityRatio", shape=[(30, 3)]), [], id="valid shape"),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(-1, 3)]),
            [("scoringStrategy.shape[0].utilization", INVALID, "not in valid range [0, 100]")],
            id="utilization less than min",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(101, 3)]),
            [("scoringStrategy.shape[0].utilization", INVALID, "not in valid range [0, 100]")],
            id="utilization greater than max",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(10, 3), (10, 3)]),
            [("scoringStrategy.shape[1].utilization", INVALID, "sorted in increasing order")],
            id="duplicated utilization values",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(10, 3), (20, 3), (30, 3)]),
            [],
            id="increasing utilization values",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(10, 3), (20, 3), (15, 3)]),
            [("scoringStrategy.shape[2].utilization", INVALID, "sorted in increasing order")],
            id="non-increasing utilization values",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(10, -1)]),
            [("scoringStrategy.shape[0].score", INVALID, "not in valid range [0, 10]")],
            id="score less than min",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(10, 11)]),
            [("scoringStrategy.shape[0].score", INVALID, "not in valid range [0, 10]")],
            id="score greater than max",
        ),
        pytest.param(
            {"ignoredResource": ["x"]},
            [("ignoredResource", INVALID, "unknown field")],
            id="unknown field is rejected",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated", "shapes": []}},
            [("scoringStrategy.shapes", INVALID, "unknown field")],
            id="unknown nested field is rejected with its path",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": "1"}],
                }
            },
            [("scoringStrategy.resources[0].weight", INVALID, "must be int")],
            id="weight of the wrong type",
        ),
    ],
)
def test_fit_args_validation(args, want):
    decoded, errors = NodeResourcesFitArgs.decode(args)
    errors = errors + decoded.validate()
    got = [(e.path, e.type, e.detail) for e in errors]
    assert len(got) == len(want), got
    for (path, type_, detail), (want_path, want_type, want_detail) in zip(got, want, strict=True):
        assert (path, type_) == (want_path, want_type)
        assert want_detail in detail


def test_fit_args_messages_print_like_upstream():
    decoded, errors = NodeResourcesFitArgs.decode(
        {"scoringStrategy": {"type": "Invalid", "resources": [{"name": "cpu", "weight": -1}]}}
    )
    assert [str(e) for e in errors + decoded.validate()] == [
        'scoringStrategy.type: Unsupported value: "Invalid": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        "scoringStrategy.resources[0].weight: Invalid value: -1: "
        "resource weight of cpu not in valid range (0, 100]",
    ]


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, NodeResourcesFitArgs(), id="no args mean the defaults"),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated"}},
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated")),
            id="absent resources are cpu and memory",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "MostAllocated", "resources": []}},
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("MostAllocated")),
            id="empty resources are cpu and memory",
        ),
        pytest.param(
            strategy("LeastAllocated", [("cpu", 0), ("memory", 3)]),
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 3))
                )
            ),
            id="zero weight is defaulted to one",
        ),
    ],
)
def test_fit_args_defaulting(args, want):
    decoded, errors = NodeResourcesFitArgs.decode(args)
    assert errors == []
    assert decoded == want
    assert decoded.scoring_strategy.resources == want.scoring_strategy.resources


def test_factory_reports_every_problem():
    with pytest.raises(ArgsError) as err:
        fit.new({"ignoredResourceGroups": ["a/b"], "scoringStrategy": {"type": "X"}}, None)  # type: ignore[arg-type]
    assert [e.path for e in err.value.errors] == [
        "ignoredResourceGroups[0]",
        "scoringStrategy.type",
    ]


# --- events and hints --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_place", "want_pod_actions"),
    [
        pytest.param(
            True,
            ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN,
            id="register pod scale-down with in-place resize",
        ),
        pytest.param(False, ActionType.DELETE, id="register only pod deletion without it"),
    ],
)
def test_events_to_register(in_place, want_pod_actions):
    p = Fit(NodeResourcesFitArgs(), None, enable_in_place_pod_vertical_scaling=in_place)
    events = [e.event for e in p.events_to_register()]
    assert events == [
        ClusterEvent(EventResource.POD, want_pod_actions),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
    assert all(e.hint is not None for e in p.events_to_register())


QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP


def cpu_pod(name: str, cpu: str, node: str = "", uid: str | None = None) -> Pod:
    w = make_pod(name).req(cpu=cpu)
    if node:
        w.node(node)
    if uid is not None:
        w.uid(uid)
    return w.obj()


def level_pod(name: str, node: str = "", **requests: str) -> Pod:
    w = with_pod_level(make_pod(name), **requests)
    if node:
        w.node(node)
    return w.obj()


@pytest.mark.parametrize(
    ("in_place", "pod", "old", "new", "want"),
    [
        pytest.param(
            True,
            cpu_pod("pod1", "1"),
            cpu_pod("pod2", "1", "fake"),
            None,
            QUEUE,
            id="queue-on-other-pod-deleted",
        ),
        pytest.param(
            True,
            make_pod("pod1").obj(),
            make_pod("pod2").obj(),
            None,
            SKIP,
            id="skip-queue-on-unscheduled-pod-deleted",
        ),
        pytest.param(
            True,
            cpu_pod("pod1", "1"),
            make_pod("pod2").nominated_node_name("n").obj(),
            None,
            QUEUE,
            id="queue-on-nominated-pod-deleted",
        ),
        pytest.param(
            False,
            cpu_pod("pod1", "1"),
            cpu_pod("pod2", "2", "fake"),
            cpu_pod("pod2", "1", "fake"),
            SKIP,
            id="skip-queue-on-disable-inplace-pod-vertical-scaling",
        ),
        pytest.param(
            True,
            cpu_pod("pod1", "1", uid="uid0"),
            cpu_pod("pod2", "2", uid="uid1"),
            cpu_pod("pod2", "1", uid="uid1"),
            SKIP,
            id="skip-queue-on-other-unscheduled-pod",
        ),
        pytest.param(
            True,
            cpu_pod("pod1", "1"),
            make_pod("pod2").req(memory="2").node("fake").obj(),
            make_pod("pod2").req(memory="1").node("fake").obj(),
            SKIP,
            id="skip-queue-on-other-pod-unrelated-resource-scaled-down",
        ),
        pytest.param(
            True,
            level_pod("pod1", cpu="1"),
            level_pod("pod2", "fake", memory="2"),
            level_pod("pod2", "fake", memory="1"),
            SKIP,
            id="skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
        ),
        pytest.param(
            True,
            cpu_pod("pod1", "1"),
            cpu_pod("pod2", "2", "fake"),
            cpu_pod("pod2", "1", "fake"),
            QUEUE,
            id="queue-on-other-pod-some-resource-scale-down",
        ),
        pytest.param(
            True,
            level_pod("pod1", cpu="1"),
            level_pod("pod2", "fake", cpu="2"),
            level_pod("pod2", "fake", cpu="1"),
            QUEUE,
            id="queue-on-other-pod-some-pod-level-resource-scale-down",
        ),
        pytest.param(
            True,
            cpu_pod("pod1", "1"),
            cpu_pod("pod1", "2"),
            cpu_pod("pod1", "1"),
            QUEUE,
            id="queue-on-target-pod-some-resource-scale-down",
        ),
        pytest.param(
            True,
            level_pod("pod1", cpu="1"),
            level_pod("pod1", cpu="2"),
            level_pod("pod1", cpu="1"),
            QUEUE,
            id="queue-on-target-pod-some-pod-level-resource-scale-down",
        ),
    ],
)
def test_is_schedulable_after_pod_change(in_place, pod, old, new, want):
    p = Fit(NodeResourcesFitArgs(), None, enable_in_place_pod_vertical_scaling=in_place)
    assert p.is_schedulable_after_pod_change(pod, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param("not-a-pod", None, id="backoff-wrong-old-object"),
        pytest.param(None, "not-a-pod", id="backoff-wrong-new-object"),
    ],
)
def test_pod_hint_rejects_other_objects(old, new):
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_pod_change(make_pod("p").obj(), old, new)


def hint_node(**resources: str) -> Node:
    """upstream st.MakeNode().Capacity(...), which always adds pods: 32."""
    return make_node("n").capacity(pods="32", **resources).obj()


MEM2_EXT1 = make_pod("p").req(memory="2", **{EXT_A: "1"}).obj()


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            make_pod("p").req(memory="2").obj(),
            None,
            hint_node(memory="1"),
            SKIP,
            id="skip-queue-on-node-add-without-sufficient-resources",
        ),
        pytest.param(
            make_pod("p").req(**{EXT_A: "1"}).obj(),
            None,
            hint_node(**{EXT_B: "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-required-resource-type",
        ),
        pytest.param(
            MEM2_EXT1,
            None,
            hint_node(memory="4", **{EXT_A: "2"}),
            QUEUE,
            id="queue-on-node-add-with-sufficient-resources",
        ),
        pytest.param(
            MEM2_EXT1,
            hint_node(memory="2", **{EXT_A: "2"}),
            hint_node(memory="2", **{EXT_A: "1", EXT_B: "2"}),
            SKIP,
            id="skip-queue-on-node-unrelated-changes",
        ),
        pytest.param(
            MEM2_EXT1,
            hint_node(memory="2", **{EXT_A: "1"}),
            hint_node(memory="2", **{EXT_A: "2"}),
            QUEUE,
            id="queue-on-pod-requested-resources-increase",
        ),
        pytest.param(
            MEM2_EXT1,
            hint_node(memory="4", **{EXT_A: "2"}),
            hint_node(memory="1", **{EXT_A: "2"}),
            SKIP,
            id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            MEM2_EXT1,
            hint_node(memory="1", **{EXT_A: "2"}),
            hint_node(memory="4", **{EXT_A: "2"}),
            QUEUE,
            id="queue-on-node-changes-from-unsuitable-to-suitable",
        ),
    ],
)
def test_is_schedulable_after_node_change(pod, old, new, want):
    assert plugin().is_schedulable_after_node_change(pod, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param("not-a-node", hint_node(), id="backoff-wrong-old-object"),
    ],
)
def test_node_hint_rejects_other_objects(old, new):
    with pytest.raises(TypeError):
        plugin().is_schedulable_after_node_change(make_pod("p").obj(), old, new)


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(make_pod("p").obj(), None, False, id="nil node"),
        pytest.param(
            make_pod("p").req(cpu="2").obj(), hint_node(cpu="1"), False, id="insufficient resource"
        ),
        pytest.param(
            make_pod("p").req(cpu="1").obj(), hint_node(cpu="2"), True, id="sufficient resource"
        ),
        pytest.param(
            level_pod("p", cpu="2"),
            hint_node(cpu="1"),
            False,
            id="insufficient pod-level resource",
        ),
        pytest.param(
            level_pod("p", cpu="2"), hint_node(cpu="2"), True, id="sufficient pod-level resource"
        ),
        pytest.param(
            level_pod("p", **{HUGEPAGES_A: "2Mi"}),
            hint_node(**{HUGEPAGES_A: "2Mi"}),
            True,
            id="sufficient pod-level hugepages",
        ),
        pytest.param(
            level_pod("p", **{HUGEPAGES_A: "4Mi"}),
            hint_node(**{HUGEPAGES_A: "2Mi"}),
            False,
            id="insufficient pod-level hugepages",
        ),
    ],
)
def test_is_fit(pod, node, want):
    assert is_fit(pod, node) is want


def all_kinds(cpu: str, mem: str, storage: str, ext_a: str | None = None, pods: str | None = None):
    res = {"cpu": cpu, "memory": mem, "ephemeral-storage": storage}
    if ext_a is not None:
        res[EXT_A] = ext_a
    if pods is not None:
        res["pods"] = pods
    return make_node("n").capacity(**res).obj()


REQUESTS_ALL = (
    make_pod("p").req(cpu="2m", memory="2", **{"ephemeral-storage": "2", EXT_A: "2"}).obj()
)
REQUESTS_CPU_MEM = make_pod("p").req(cpu="2m", memory="2").obj()


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            all_kinds("1", "1", "1", "1", "1"),
            all_kinds("2", "2", "2", "2", "1"),
            False,
            id="no requested resources",
        ),
        pytest.param(
            make_pod("p").obj(),
            all_kinds("1", "1", "1", "1", "1"),
            all_kinds("1", "1", "1", "1", "2"),
            True,
            id="no requested resources but more pods allowed",
        ),
        pytest.param(
            REQUESTS_ALL,
            all_kinds("1", "2", "3"),
            all_kinds("1", "2", "1"),
            False,
            id="scalar resources not in the node",
        ),
        pytest.param(
            REQUESTS_ALL,
            all_kinds("1", "2", "3", "4"),
            all_kinds("1", "2", "1", "1"),
            False,
            id="requested resources decreased",
        ),
        pytest.param(
            REQUESTS_ALL,
            all_kinds("1", "2", "3", "4"),
            all_kinds("3", "4", "3", "4"),
            True,
            id="requested resources increased",
        ),
        pytest.param(
            REQUESTS_CPU_MEM,
            all_kinds("1", "2", "3", "4"),
            all_kinds("1", "2", "1", "1"),
            False,
            id="non-requested resources decreased",
        ),
        pytest.param(
            REQUESTS_CPU_MEM,
            all_kinds("1", "2", "3", "4"),
            all_kinds("1", "2", "5", "6"),
            False,
            id="non-requested resources increased",
        ),
    ],
)
def test_have_any_requested_resources_increased(pod, old, new, want):
    assert have_any_requested_resources_increased(pod, old, new) is want
