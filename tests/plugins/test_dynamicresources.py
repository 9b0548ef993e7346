"""DynamicResources, after upstream's dynamicresources_test.go (TestPlugin's cases with
their names and messages, the queueing-hint tables) and the allocator's tests
(allocator_test.go: counts, All, constraints with backtracking, firstAvailable, admin
access, pool generations)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from kubesched.framework.apiclient import RESOURCE_CLAIMS
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, QueueingHint, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice
from kubesched.objects.pod import Pod
from kubesched.plugins.dynamicresources import plugin as dra
from kubesched.testing import PluginHandle, RecordingClient, make_node, make_pod
from kubesched.testing.dra import make_claim, make_device_class, make_slice

NS = "default"
POD_NAME = "my-pod"
POD_UID = "1234"
RESOURCE = "my-resource"
CLAIM = f"{POD_NAME}-{RESOURCE}"
CLASS = "my-resource-class"
DRIVER = "some-driver"
WORKER = "worker"
WORKER_2 = "worker-2"
WORKER_3 = "worker-3"
FINALIZER = "resource.kubernetes.io/delete-protection"

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def unresolvable(message: str) -> Status:
    return Status(UNRESOLVABLE, (message,))


# --- objects as upstream's test names them ----------------------------------------------


def pod_with_claim_name() -> Pod:
    return make_pod(POD_NAME).uid(POD_UID).resource_claim(RESOURCE, claim=CLAIM).obj()


def pod_with_claim_template(in_status: bool = True) -> Pod:
    wrapper = make_pod(POD_NAME).uid(POD_UID).resource_claim(RESOURCE, template=CLAIM)
    if in_status:
        wrapper = wrapper.claim_status(RESOURCE, CLAIM)
    return wrapper.obj()


def pending_claim(name: str = CLAIM, uid: str = "claim-uid", **kw: Any) -> Any:
    wrapper = make_claim(name, NS).uid(uid).owned_by(POD_NAME, POD_UID)
    return wrapper.request("req-1", kw.get("device_class", CLASS), *kw.get("selectors", ()))


def allocated_claim(node: str = WORKER) -> dict[str, Any]:
    return (
        pending_claim()
        .finalizer()
        .allocated(("req-1", DRIVER, node, "instance-1"))
        .allocated_on(node)
        .obj()
    )


def device_class(*selectors: str) -> dict[str, Any]:
    wrapper = make_device_class(CLASS)
    for s in selectors:
        wrapper.selector(s)
    return wrapper.obj()


def worker_slice(node: str = WORKER, *devices: str, generation: int = 0) -> dict[str, Any]:
    wrapper = make_slice(f"{node}-slice", DRIVER).node(node).pool(node, generation)
    for name in devices or ("instance-1",):
        wrapper.device(name)
    return wrapper.obj()


# --- running the extension points in upstream's order -------------------------------------


@dataclass
class Outcome:
    pre_enqueue: Status | None = None
    pre_filter: Status | None = None
    filter: dict[str, Status | None] = field(default_factory=dict)
    post_filter: Status | None = None
    reserve: Status | None = None
    pre_bind: Status | None = None
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)


def setup(
    claims: list[dict[str, Any]],
    classes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    slices: list[dict[str, Any]] = (),  # type: ignore[assignment]
    nodes: tuple[str, ...] = (WORKER,),
    args: dict[str, Any] | None = None,
) -> tuple[dra.DynamicResources, PluginHandle, list[NodeInfo]]:
    client = RecordingClient()
    for c in claims:
        client.add(RESOURCE_CLAIMS, c)
    typed: list[Any] = [
        ResourceClaim.from_dict(client.get(RESOURCE_CLAIMS, c["metadata"]["name"], NS))
        for c in claims
    ]
    typed += [DeviceClass.from_dict(c) for c in classes]
    typed += [ResourceSlice.from_dict(s) for s in slices]
    node_objs = [make_node(n).obj() for n in nodes]
    handle = PluginHandle(nodes=node_objs, dra=typed, client=client)
    plugin = dra.new(args, handle)
    # Every claim write becomes visible to the lister at once, as an informer would
    # report it before the next cycle.
    client.on_change(
        lambda res, old, new: (
            handle.cluster.put_dra(ResourceClaim.from_dict(new))
            if res == RESOURCE_CLAIMS and new is not None
            else None
        )
    )
    return plugin, handle, [NodeInfo(n) for n in node_objs]


def run(
    pod: Pod,
    claims: list[dict[str, Any]],
    classes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    slices: list[dict[str, Any]] = (),  # type: ignore[assignment]
    nodes: tuple[str, ...] = (WORKER,),
) -> Outcome:
    plugin, handle, node_infos = setup(claims, classes, slices, nodes)
    out = Outcome()
    out.pre_enqueue = plugin.pre_enqueue(pod)
    if out.pre_enqueue is None:
        state = CycleState()
        _, out.pre_filter = plugin.pre_filter(state, pod, node_infos)
        if out.pre_filter is None:
            feasible = []
            for ni in node_infos:
                status = plugin.filter(state, pod, ni)
                out.filter[ni.node.name] = status
                if status is None:
                    feasible.append(ni.node.name)
            if feasible:
                out.reserve = plugin.reserve(state, pod, feasible[0])
                ready = out.reserve is None
                if ready and plugin.pre_bind_pre_flight(state, pod, feasible[0]) is None:
                    out.pre_bind = plugin.pre_bind(state, pod, feasible[0])
            else:
                _, out.post_filter = plugin.post_filter(state, pod, NodeToStatus())
    for c in handle.client.list(RESOURCE_CLAIMS):
        out.claims[c["metadata"]["name"]] = c
    return out


def allocation_of(claim: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
        "results"
    ) or []
    return [(r["request"], r["driver"], r["pool"], r["device"]) for r in results]


def reserved(claim: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in (claim.get("status") or {}).get("reservedFor") or []]


# --- TestPlugin ----------------------------------------------------------------------------


def test_empty_pod_is_skipped_by_prefilter_and_postfilter_says_unschedulable() -> None:
    plugin, _, node_infos = setup([])
    pod = make_pod(POD_NAME).uid(POD_UID).obj()
    state = CycleState()
    assert plugin.pre_enqueue(pod) is None
    assert plugin.pre_filter(state, pod, node_infos) == (None, Status(Code.SKIP))
    assert plugin.post_filter(state, pod, NodeToStatus()) == (None, Status(Code.UNSCHEDULABLE))
    assert plugin.pre_bind_pre_flight(state, pod, WORKER) == Status(Code.SKIP)


@pytest.mark.parametrize(
    ("pod", "claims", "message"),
    [
        pytest.param(
            pod_with_claim_template(in_status=False),
            [],
            f'pod "{NS}/{POD_NAME}": ResourceClaim not created yet',
            id="missing-claim-template-not-in-status",
        ),
        pytest.param(
            pod_with_claim_name(),
            [],
            f'resourceclaim.resource.k8s.io "{CLAIM}" not found',
            id="missing-claim",
        ),
        pytest.param(
            pod_with_claim_template(),
            [pending_claim().deleting().obj()],
            f'resourceclaim "{CLAIM}" is being deleted',
            id="deleted-claim",
        ),
        pytest.param(
            pod_with_claim_template(),
            [
                make_claim(CLAIM, NS)
                .uid("x")
                .owned_by(POD_NAME, "other")
                .request("req-1", CLASS)
                .obj()
            ],
            f"ResourceClaim {CLAIM} was not created for pod {NS}/{POD_NAME} (pod is not owner)",
            id="wrong-claim",
        ),
    ],
)
def test_pre_enqueue_keeps_out_pods_whose_claims_are_not_ready(
    pod: Pod, claims: list[dict[str, Any]], message: str
) -> None:
    out = run(pod, claims)
    assert out.pre_enqueue == unresolvable(message)


def test_no_resources_cannot_allocate_and_postfilter_says_still_not_schedulable() -> None:
    out = run(pod_with_claim_name(), [pending_claim().obj()], [device_class()])
    assert out.pre_filter is None
    assert out.filter == {WORKER: unresolvable("cannot allocate all claims")}
    assert out.post_filter == Status.unschedulable("still not schedulable")


def test_with_resources_prebind_writes_finalizer_allocation_and_reservation() -> None:
    out = run(pod_with_claim_name(), [pending_claim().obj()], [device_class()], [worker_slice()])
    assert out.filter == {WORKER: None}
    assert out.reserve is None and out.pre_bind is None
    claim = out.claims[CLAIM]
    assert claim["metadata"]["finalizers"] == [FINALIZER]
    assert allocation_of(claim) == [("req-1", DRIVER, WORKER, "instance-1")]
    assert claim["status"]["allocation"]["nodeSelector"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [WORKER]}]}
        ]
    }
    assert reserved(claim) == [POD_UID]


def test_with_resources_has_finalizer_keeps_one() -> None:
    out = run(
        pod_with_claim_name(),
        [pending_claim().finalizer().obj()],
        [device_class()],
        [worker_slice()],
    )
    assert out.pre_bind is None
    assert out.claims[CLAIM]["metadata"]["finalizers"] == [FINALIZER]


def test_missing_class() -> None:
    out = run(pod_with_claim_name(), [pending_claim().obj()], [], [worker_slice()])
    assert out.pre_filter == unresolvable(f"request req-1: device class {CLASS} does not exist")


def test_claim_with_prioritized_list_unknown_device_class() -> None:
    claim = (
        make_claim(CLAIM, NS)
        .uid("claim-uid")
        .first_available("req-1", ("subreq-1", "does-not-exist"))
        .obj()
    )
    out = run(pod_with_claim_name(), [claim], [device_class()], [worker_slice()])
    assert out.pre_filter == unresolvable(
        "request req-1/subreq-1: device class does-not-exist does not exist"
    )


def test_claim_with_prioritized_list_takes_the_first_subrequest_that_fits() -> None:
    other = make_device_class("other-class").selector("device.driver == 'other-driver'").obj()
    claim = (
        make_claim(CLAIM, NS)
        .uid("claim-uid")
        .first_available("req-1", ("subreq-1", "other-class"), ("subreq-2", CLASS))
        .obj()
    )
    out = run(pod_with_claim_name(), [claim], [device_class(), other], [worker_slice()])
    assert out.pre_bind is None
    assert allocation_of(out.claims[CLAIM]) == [("req-1/subreq-2", DRIVER, WORKER, "instance-1")]


def test_wrong_topology_is_not_available_and_postfilter_deallocates() -> None:
    out = run(pod_with_claim_name(), [allocated_claim(node=WORKER_2)], [device_class()])
    assert out.filter == {WORKER: unresolvable("resourceclaim not available on the node")}
    assert out.post_filter == Status.unschedulable("deallocation of ResourceClaim completed")
    assert "allocation" not in (out.claims[CLAIM].get("status") or {})


def test_wrong_topology_reserved_by_another_pod_is_not_deallocated() -> None:
    claim = pending_claim().allocated(("req-1", DRIVER, WORKER_2, "instance-1"))
    claim = claim.allocated_on(WORKER_2).reserved_for("other", "other-uid").obj()
    out = run(pod_with_claim_name(), [claim], [device_class()])
    assert out.post_filter == Status.unschedulable("still not schedulable")
    assert allocation_of(out.claims[CLAIM])


def test_good_topology_prebind_adds_the_reservation() -> None:
    out = run(pod_with_claim_name(), [allocated_claim()], [device_class()])
    assert out.filter == {WORKER: None}
    assert out.pre_bind is None
    assert reserved(out.claims[CLAIM]) == [POD_UID]
    assert allocation_of(out.claims[CLAIM]) == [("req-1", DRIVER, WORKER, "instance-1")]


def test_reserved_okay_needs_no_prebind() -> None:
    claim = pending_claim().allocated(("req-1", DRIVER, WORKER, "instance-1"))
    claim = claim.reserved_for(POD_NAME, POD_UID).obj()
    plugin, _handle, node_infos = setup([claim], [device_class()])
    state = CycleState()
    pod = pod_with_claim_name()
    assert plugin.pre_filter(state, pod, node_infos) == (None, None)
    assert plugin.filter(state, pod, node_infos[0]) is None
    assert plugin.reserve(state, pod, WORKER) is None
    assert plugin.pre_bind_pre_flight(state, pod, WORKER) == Status(Code.SKIP)


def test_claim_in_use_by_the_most_consumers() -> None:
    claim = pending_claim().allocated(("req-1", DRIVER, WORKER, "instance-1"))
    for i in range(256):
        claim.reserved_for(f"pod-{i}", f"uid-{i}")
    out = run(pod_with_claim_name(), [claim.obj()], [device_class()])
    assert out.pre_filter == unresolvable("resourceclaim in use")


@pytest.mark.parametrize(
    ("selectors_class", "selectors_claim", "message"),
    [
        pytest.param(
            ("device.attributes['some-driver'].missing == 1",),
            (),
            f"class {CLASS}: selector #0: CEL runtime error: no such key: missing",
            id="class-CEL-runtime-error",
        ),
        pytest.param(
            (),
            ("device.attributes['some-driver'].missing == 1",),
            f"claim {NS}/{CLAIM}: selector #0: CEL runtime error: no such key: missing",
            id="claim-CEL-runtime-error",
        ),
    ],
)
def test_cel_runtime_error_is_a_filter_error(
    selectors_class: tuple[str, ...], selectors_claim: tuple[str, ...], message: str
) -> None:
    out = run(
        pod_with_claim_name(),
        [pending_claim(selectors=selectors_claim).obj()],
        [device_class(*selectors_class)],
        [worker_slice()],
    )
    assert out.filter == {WORKER: Status.error(message)}


def test_prebind_retries_on_conflict_and_fails_when_allocated_elsewhere() -> None:
    plugin, handle, node_infos = setup([pending_claim().obj()], [device_class()], [worker_slice()])
    pod = pod_with_claim_name()
    state = CycleState()
    plugin.pre_filter(state, pod, node_infos)
    assert plugin.filter(state, pod, node_infos[0]) is None
    assert plugin.reserve(state, pod, WORKER) is None
    # Someone else allocated the claim meanwhile (a concurrent scheduler).
    raw = handle.client.get(RESOURCE_CLAIMS, CLAIM, NS)
    raw["status"] = {
        "allocation": {
            "devices": {
                "results": [{"request": "req-1", "driver": DRIVER, "pool": WORKER, "device": "x"}]
            }
        }
    }
    handle.client.update_status(RESOURCE_CLAIMS, raw)
    status = plugin.pre_bind(state, pod, WORKER)
    assert status == Status.error(f"claim {NS}/{CLAIM} got allocated elsewhere in the meantime")
    plugin.unreserve(state, pod, WORKER)
    assert not plugin.manager.has_pending_allocation("claim-uid")


def test_no_device_is_given_twice_across_pods_in_flight() -> None:
    """Pod A reserves the only device; pod B's cycle, before A's PreBind, finds none."""
    claim_a = make_claim("claim-a", NS).uid("uid-a").request("req-1", CLASS).obj()
    claim_b = make_claim("claim-b", NS).uid("uid-b").request("req-1", CLASS).obj()
    plugin, _handle, node_infos = setup([claim_a, claim_b], [device_class()], [worker_slice()])
    pod_a = make_pod("a").uid("pa").resource_claim("c", claim="claim-a").obj()
    pod_b = make_pod("b").uid("pb").resource_claim("c", claim="claim-b").obj()
    state_a, state_b = CycleState(), CycleState()
    plugin.pre_filter(state_a, pod_a, node_infos)
    assert plugin.filter(state_a, pod_a, node_infos[0]) is None
    assert plugin.reserve(state_a, pod_a, WORKER) is None
    plugin.pre_filter(state_b, pod_b, node_infos)
    assert plugin.filter(state_b, pod_b, node_infos[0]) == unresolvable(
        "cannot allocate all claims"
    )
    # A's allocation written; still taken for B (now from the claim itself).
    assert plugin.pre_bind(state_a, pod_a, WORKER) is None
    state_b = CycleState()
    plugin.pre_filter(state_b, pod_b, node_infos)
    assert plugin.filter(state_b, pod_b, node_infos[0]) == unresolvable(
        "cannot allocate all claims"
    )
    # A unreserved instead: the device is free again.
    plugin2, _, infos2 = setup([claim_a, claim_b], [device_class()], [worker_slice()])
    s1, s2 = CycleState(), CycleState()
    plugin2.pre_filter(s1, pod_a, infos2)
    plugin2.filter(s1, pod_a, infos2[0])
    plugin2.reserve(s1, pod_a, WORKER)
    plugin2.unreserve(s1, pod_a, WORKER)
    plugin2.pre_filter(s2, pod_b, infos2)
    assert plugin2.filter(s2, pod_b, infos2[0]) is None


def test_shared_claim_being_allocated_makes_the_second_pod_wait() -> None:
    shared = make_claim("shared", NS).uid("uid-s").request("req-1", CLASS).obj()
    plugin, _, node_infos = setup([shared], [device_class()], [worker_slice()])
    pod_a = make_pod("a").uid("pa").resource_claim("c", claim="shared").obj()
    pod_b = make_pod("b").uid("pb").resource_claim("c", claim="shared").obj()
    s_a, s_b = CycleState(), CycleState()
    plugin.pre_filter(s_a, pod_a, node_infos)
    plugin.filter(s_a, pod_a, node_infos[0])
    plugin.reserve(s_a, pod_a, WORKER)
    assert plugin.pre_filter(s_b, pod_b, node_infos) == (
        None,
        unresolvable(f"resource claim {NS}/shared is in the process of being allocated"),
    )
    assert plugin.pre_bind(s_a, pod_a, WORKER) is None
    s_b = CycleState()
    assert plugin.pre_filter(s_b, pod_b, node_infos) == (None, None)
    assert plugin.filter(s_b, pod_b, node_infos[0]) is None
    assert plugin.pre_bind(s_b, pod_b, WORKER) is None
    stored = plugin.handle.client.get(RESOURCE_CLAIMS, "shared", NS)
    assert reserved(stored) == ["pa", "pb"]
    assert allocation_of(stored) == [("req-1", DRIVER, WORKER, "instance-1")]


def test_unreserve_removes_the_pod_from_reserved_for() -> None:
    plugin, handle, node_infos = setup([allocated_claim()], [device_class()])
    pod = pod_with_claim_name()
    state = CycleState()
    plugin.pre_filter(state, pod, node_infos)
    plugin.filter(state, pod, node_infos[0])
    plugin.reserve(state, pod, WORKER)
    assert plugin.pre_bind(state, pod, WORKER) is None
    assert reserved(handle.client.get(RESOURCE_CLAIMS, CLAIM, NS)) == [POD_UID]
    plugin.unreserve(state, pod, WORKER)
    assert reserved(handle.client.get(RESOURCE_CLAIMS, CLAIM, NS)) == []


@pytest.mark.parametrize(
    ("request_raw", "message"),
    [
        pytest.param(
            {"tolerations": [{"operator": "Exists"}]},
            f"claim {NS}/{CLAIM}, request req-1: tolerations needs the DRADeviceTaints "
            "feature gate, which is alpha and off in Kubernetes 1.34",
            id="device-taints",
        ),
        pytest.param(
            {"capacity": {"requests": {"memory": "1Gi"}}},
            f"claim {NS}/{CLAIM}, request req-1: capacity needs the DRAConsumableCapacity "
            "feature gate, which is alpha and off in Kubernetes 1.34",
            id="consumable-capacity",
        ),
    ],
)
def test_alpha_request_fields_are_refused_by_name(
    request_raw: dict[str, Any], message: str
) -> None:
    claim = pending_claim().obj()
    claim["spec"]["devices"]["requests"][0]["exactly"].update(request_raw)
    out = run(pod_with_claim_name(), [claim], [device_class()], [worker_slice()])
    assert out.pre_filter == unresolvable(message)


def test_device_consuming_counters_is_not_allocated() -> None:
    s = worker_slice()
    s["spec"]["devices"][0]["consumesCounters"] = [{"counterSet": "x", "counters": {}}]
    out = run(pod_with_claim_name(), [pending_claim().obj()], [device_class()], [s])
    assert out.filter == {WORKER: unresolvable("cannot allocate all claims")}


def test_filter_timeout_zero_means_no_limit_and_negative_is_refused() -> None:
    plugin, _, _ = setup([], args={"filterTimeout": "0s"})
    assert plugin.args.filter_timeout == 0
    assert dra.new(None, PluginHandle()).args.filter_timeout == 10.0


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(
            {"filterTimeout": "-1s"},
            ['filterTimeout: Invalid value: "-1s": must be zero or positive'],
            id="negative",
        ),
        pytest.param({"filterTimeout": "soon"}, None, id="not-a-duration"),
        pytest.param(
            {"other": 1}, ['other: Invalid value: "other": unknown field'], id="unknown-field"
        ),
    ],
)
def test_args_validation(args: dict[str, Any], errors: list[str] | None) -> None:
    from kubesched.framework.args import ArgsError

    with pytest.raises(ArgsError) as info:
        dra.new(args, PluginHandle())
    got = [str(e) for e in info.value.errors]
    if errors is not None:
        assert got == errors
    else:
        assert len(got) == 1 and got[0].startswith("filterTimeout: Invalid value")


# --- queueing hints --------------------------------------------------------------------------


def _hint_plugin(claims: list[dict[str, Any]]) -> dra.DynamicResources:
    plugin, _, _ = setup(claims)
    return plugin


@pytest.mark.parametrize(
    ("pod", "claims", "old", "new", "hint"),
    [
        pytest.param(
            pod_with_claim_template(),
            [],
            None,
            pending_claim(name="other", uid="u2").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-claim-of-pod-not-found",
        ),
        pytest.param(
            pod_with_claim_template(),
            [allocated_claim()],
            None,
            make_claim(CLAIM + "-foo", NS).uid("other").request("req-1", CLASS).obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-claim",
        ),
        pytest.param(
            pod_with_claim_name(),
            [pending_claim().obj()],
            None,
            pending_claim().obj(),
            QueueingHint.QUEUE,
            id="queue-on-add",
        ),
        pytest.param(
            pod_with_claim_name(),
            [pending_claim().obj()],
            pending_claim().obj(),
            pending_claim().finalizer().obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-finalizer-only",
        ),
        pytest.param(
            pod_with_claim_name(),
            [pending_claim().obj()],
            pending_claim().obj(),
            allocated_claim(),
            QueueingHint.QUEUE,
            id="queue-on-status-change",
        ),
        pytest.param(
            pod_with_claim_name(),
            [pending_claim().obj(), make_claim("other", NS).uid("o").request("r", CLASS).obj()],
            make_claim("other", NS).uid("o").allocated(("r", DRIVER, WORKER, "d")).obj(),
            make_claim("other", NS).uid("o").obj(),
            QueueingHint.QUEUE,
            id="structured-claim-deallocate",
        ),
    ],
)
def test_is_schedulable_after_claim_change(
    pod: Pod, claims: list[dict[str, Any]], old: Any, new: Any, hint: QueueingHint
) -> None:
    plugin = _hint_plugin(claims)
    old_claim = None if old is None else ResourceClaim.from_dict(old)
    new_claim = ResourceClaim.from_dict(new)
    assert plugin.is_schedulable_after_claim_change(pod, old_claim, new_claim) == hint


def test_is_schedulable_after_pod_change() -> None:
    plugin = _hint_plugin([pending_claim().obj()])
    waiting = pod_with_claim_template(in_status=False)
    created = pod_with_claim_template()
    other = make_pod("other").uid("x").obj()
    assert (
        plugin.is_schedulable_after_pod_change(waiting, waiting, other) == QueueingHint.QUEUE_SKIP
    )
    assert (
        plugin.is_schedulable_after_pod_change(waiting, waiting, waiting) == QueueingHint.QUEUE_SKIP
    )
    assert plugin.is_schedulable_after_pod_change(waiting, waiting, created) == QueueingHint.QUEUE


def test_filter_nodes_gives_the_per_node_answers() -> None:
    """The node-table Filter and the per-node Filter agree (a node with a free device, a
    node without devices, a node whose device is taken)."""
    taken = make_claim("taken", NS).uid("t").request("req-1", CLASS)
    taken = taken.allocated(("req-1", DRIVER, WORKER_3, "instance-1")).obj()
    plugin, handle, node_infos = setup(
        [pending_claim().obj(), taken],
        [device_class()],
        [worker_slice(WORKER), worker_slice(WORKER_3)],
        nodes=(WORKER, WORKER_2, WORKER_3),
    )
    pod = pod_with_claim_name()
    per_node, table = CycleState(), CycleState()
    plugin.pre_filter(per_node, pod, node_infos)
    plugin.pre_filter(table, pod, node_infos)
    expected = [plugin.filter(per_node, pod, ni) for ni in node_infos]
    assert expected == [None, unresolvable("cannot allocate all claims")] * 1 + [
        unresolvable("cannot allocate all claims")
    ]
    snapshot = Snapshot.from_objects([ni.node for ni in node_infos], [], columnar=True)
    handle.snapshot = snapshot
    assert snapshot.table is not None
    rows = np.arange(len(node_infos), dtype=np.int64)
    verdicts = plugin.filter_nodes(table, pod, snapshot.table, rows)
    assert verdicts is not None
    got = [None if c == 0 else verdicts.statuses[c - 1] for c in verdicts.codes.tolist()]
    assert got == expected
    # Why each rejected node could not satisfy the claim (explain).
    why = plugin.unsatisfied(table, WORKER_3)
    assert str(why) == (
        f"claim {NS}/{CLAIM}, request req-1: wants 1 device(s), 1 on the node match its "
        "selectors, 1 of them in use"
    )


def test_is_schedulable_after_resource_slice_change() -> None:
    plugin = _hint_plugin([pending_claim().obj()])
    s = ResourceSlice.from_dict(worker_slice())
    assert (
        plugin.is_schedulable_after_resource_slice_change(pod_with_claim_name(), None, s)
        == QueueingHint.QUEUE
    )
    waiting = pod_with_claim_template(in_status=False)
    assert (
        plugin.is_schedulable_after_resource_slice_change(waiting, None, s)
        == QueueingHint.QUEUE_SKIP
    )
