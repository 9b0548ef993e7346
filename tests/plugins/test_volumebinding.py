"""VolumeBinding: upstream's unit-test tables (``volume_binding_test.go`` TestVolumeBinding,
``binder_test.go`` FindPodVolumes / capacity cases) transcribed — our code, their cases —
plus args validation, queueing hints, and the Reserve / PreBind / Unreserve cycle over the
in-memory store with the simulated PV controller."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.framework.apiclient import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, QueueingHint, Status
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.quantity import parse_quantity
from kubesched.objects.storage import StorageObject
from kubesched.plugins.volumebinding import plugin as volumebinding
from kubesched.sim.volumes import SimulatedVolumes
from kubesched.testing import PluginHandle, RecordingClient, make_node, make_pod
from kubesched.testing.storage_wrappers import (
    make_csi_driver,
    make_csi_node,
    make_csi_storage_capacity,
    make_pv,
    make_pvc,
    make_storage_class,
)

WAIT = "wait-sc"
WAIT_HDD = "wait-hdd-sc"
IMMEDIATE = "immediate-sc"
PROVISIONER = "driver.example.com"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"


def classes() -> list[StorageObject]:
    return [
        make_storage_class(IMMEDIATE, PROVISIONER).binding_mode("Immediate").obj(),
        make_storage_class(WAIT, "kubernetes.io/no-provisioner")
        .binding_mode("WaitForFirstConsumer")
        .obj(),
        make_storage_class(WAIT_HDD, "kubernetes.io/no-provisioner")
        .binding_mode("WaitForFirstConsumer")
        .obj(),
    ]


def pod(*claims: str) -> Pod:
    wrapper = make_pod("pod-a")
    for claim in claims:
        wrapper = wrapper.pvc(claim)
    return wrapper.obj()


def node(name: str, **labels: str) -> Node:
    wrapper = make_node(name).label(HOSTNAME, name)
    for key, value in labels.items():
        wrapper = wrapper.label(key.replace("__", "/").replace("_", "."), value)
    return wrapper.obj()


def zoned(name: str, region: str, zone: str) -> Node:
    return make_node(name).label(REGION, region).label(ZONE, zone).label(HOSTNAME, name).obj()


def bound_pvc(name: str, pv: str, cls: str = WAIT) -> Any:
    return (
        make_pvc(name)
        .storage_class(cls)
        .volume_name(pv)
        .annotation("pv.kubernetes.io/bind-completed", "yes")
        .phase("Bound")
    )


def pv(name: str, cls: str = WAIT, capacity: str = "1Gi") -> Any:
    return make_pv(name).storage_class(cls).capacity(capacity).access_modes("ReadWriteOnce")


def run(
    the_pod: Pod, nodes: Sequence[Node], storage: Sequence[StorageObject]
) -> tuple[Status | None, list[Status | None]]:
    handle = PluginHandle(nodes=nodes, storage=[*classes(), *storage])
    plugin = volumebinding.new(None, handle)
    state = CycleState()
    _, pre = plugin.pre_filter(state, the_pod, handle.snapshot.list())
    if pre is not None:
        return pre, []
    return None, [plugin.filter(state, the_pod, info) for info in handle.snapshot.list()]


UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

CASES = [
    pytest.param(pod(), [node("node-a")], [], Status.skip(), [], id="pod-has-no-pvcs"),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a").obj(), pv("pv-a").obj()],
        None,
        [None],
        id="all-bound",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [],
        Status(UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" not found',)),
        [],
        id="pvc-does-not-exist",
    ),
    pytest.param(
        pod("pvc-a", "pvc-b"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a").obj()],
        Status(UNRESOLVABLE, ('persistentvolumeclaim "pvc-b" not found',)),
        [],
        id="part-of-pvcs-do-not-exist",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [make_pvc("pvc-a").storage_class(IMMEDIATE).obj()],
        Status(UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",)),
        [],
        id="immediate-claims-not-bound",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [make_pvc("pvc-a").storage_class(WAIT).obj()],
        None,
        [Status(UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",))],
        id="unbound-claims-no-matches",
    ),
    pytest.param(
        pod("pvc-a", "pvc-b"),
        [node("node-a", foo="barbar")],
        [
            bound_pvc("pvc-a", "pv-a").obj(),
            make_pvc("pvc-b").storage_class(WAIT).obj(),
            pv("pv-a").node_affinity_in("foo", "bar").obj(),
        ],
        None,
        [
            Status(
                UNRESOLVABLE,
                (
                    "node(s) had volume node affinity conflict",
                    "node(s) didn't find available persistent volumes to bind",
                ),
            )
        ],
        id="bound-and-unbound-unsatisfied",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a").obj()],
        None,
        [
            Status(
                UNRESOLVABLE,
                ("node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",),
            )
        ],
        id="pv-not-found",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a")],
        [bound_pvc("pvc-a", "pv-a").phase("Lost").obj()],
        Status(
            UNRESOLVABLE,
            ('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"',),
        ),
        [],
        id="pv-not-found-claim-lost",
    ),
    pytest.param(
        pod("pvc-a"),
        [node("node-a"), node("node-b"), node("node-c")],
        [
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("50Gi")
            .access_modes("ReadWriteOnce")
            .obj(),
            pv("pv-a-0", capacity="200Gi").node_affinity_in(HOSTNAME, "node-a").obj(),
            pv("pv-a-1", capacity="200Gi").node_affinity_in(HOSTNAME, "node-a").obj(),
            pv("pv-b-0", capacity="100Gi").node_affinity_in(HOSTNAME, "node-b").obj(),
            pv("pv-b-1", capacity="100Gi").node_affinity_in(HOSTNAME, "node-b").obj(),
        ],
        None,
        [
            None,
            None,
            Status(UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",)),
        ],
        id="local-volumes-with-close-capacity",
    ),
    pytest.param(
        pod("pvc-a"),
        [
            zoned("zone-a-node-a", "region-a", "zone-a"),
            zoned("zone-b-node-a", "region-b", "zone-b"),
            zoned("zone-c-node-a", "region-c", "zone-c"),
        ],
        [
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("50Gi")
            .access_modes("ReadWriteOnce")
            .obj(),
            pv("pv-a-0", capacity="200Gi").node_affinity_in(ZONE, "zone-a").obj(),
            pv("pv-b-0", capacity="100Gi").node_affinity_in(ZONE, "zone-b").obj(),
        ],
        None,
        [
            None,
            None,
            Status(UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",)),
        ],
        id="zonal-volumes-with-close-capacity",
    ),
]


@pytest.mark.parametrize(("the_pod", "nodes", "storage", "want_pre", "want_filter"), CASES)
def test_volume_binding(the_pod, nodes, storage, want_pre, want_filter):
    pre, filters = run(the_pod, nodes, storage)
    assert pre == want_pre
    assert filters == want_filter


# --- provisioning and storage capacity (binder_test.go's FindPodVolumes cases) ----------

CSI = "csi.example.com"


def provisioning(*storage: StorageObject, topology: str = "") -> list[StorageObject]:
    cls = make_storage_class("csi-sc", CSI).binding_mode("WaitForFirstConsumer")
    if topology:
        cls = cls.allowed_topology(ZONE, topology)
    return [cls.obj(), make_pvc("pvc-a").storage_class("csi-sc").request("10Gi").obj(), *storage]


def cap(name: str, size: str, zone: str | None = "a", max_size: str = "") -> StorageObject:
    obj = make_csi_storage_capacity(name, "csi-sc", size, {ZONE: zone} if zone else None)
    if max_size:
        obj = dataclasses.replace(obj, maximum_volume_size=parse_quantity(max_size))
    return obj


NO_SPACE = Status(UNRESOLVABLE, ("node(s) did not have enough free storage",))
NO_PV = Status(UNRESOLVABLE, ("node(s) didn't find available persistent volumes to bind",))

PROVISION_CASES = [
    pytest.param(provisioning(), None, id="provisionable-without-capacity-tracking"),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(False).obj()),
        None,
        id="driver-does-not-track-capacity",
    ),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(True).obj()),
        NO_SPACE,
        id="tracked-and-no-capacity-object",
    ),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(True).obj(), cap("c", "10Gi")),
        None,
        id="capacity-exactly-enough",
    ),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(True).obj(), cap("c", "9Gi")),
        NO_SPACE,
        id="capacity-too-small",
    ),
    pytest.param(
        provisioning(
            make_csi_driver(CSI).storage_capacity(True).obj(),
            cap("c", "100Gi", max_size="5Gi"),
        ),
        NO_SPACE,
        id="maximum-volume-size-wins-over-capacity",
    ),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(True).obj(), cap("c", "100Gi", "b")),
        NO_SPACE,
        id="capacity-in-another-zone",
    ),
    pytest.param(
        provisioning(make_csi_driver(CSI).storage_capacity(True).obj(), cap("c", "100Gi", None)),
        NO_SPACE,
        id="capacity-without-topology-is-unavailable",
    ),
    pytest.param(provisioning(topology="b"), NO_PV, id="allowed-topologies-exclude-the-node"),
    pytest.param(provisioning(topology="a"), None, id="allowed-topologies-include-the-node"),
]


@pytest.mark.parametrize(("storage", "want"), PROVISION_CASES)
def test_provisioning_and_storage_capacity(storage, want):
    pre, filters = run(
        pod("pvc-a"), [node("node-a", **{"topology.kubernetes.io__zone": "a"})], storage
    )
    assert pre is None
    assert filters == [want]


def test_a_class_without_provisioner_and_no_volume_cannot_bind():
    _, filters = run(pod("pvc-a"), [node("node-a")], [make_pvc("pvc-a").storage_class(WAIT).obj()])
    assert filters == [NO_PV]


def test_a_claim_provisioned_for_another_node_fits_only_there():
    claim = (
        make_pvc("pvc-a")
        .storage_class("csi-sc")
        .annotation("volume.kubernetes.io/selected-node", "node-b")
        .obj()
    )
    storage = [make_storage_class("csi-sc", CSI).binding_mode("WaitForFirstConsumer").obj(), claim]
    _, filters = run(pod("pvc-a"), [node("node-a"), node("node-b")], storage)
    assert filters == [NO_PV, None]


def test_a_missing_class_of_a_claim_to_provision_is_an_error():
    claim = make_pvc("pvc-a").storage_class("gone").obj()
    # Without its class the claim binds Immediately: PreFilter reports it unbound.
    pre, _ = run(pod("pvc-a"), [node("node-a")], [claim])
    assert pre == Status(UNRESOLVABLE, ("pod has unbound immediate PersistentVolumeClaims",))


# --- claims PreFilter refuses --------------------------------------------------------------


def test_a_claim_being_deleted_is_unresolvable():
    claim = make_pvc("pvc-a").storage_class(WAIT)
    claim.raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    pre, _ = run(pod("pvc-a"), [node("node-a")], [claim.obj()])
    assert pre == Status(UNRESOLVABLE, ('persistentvolumeclaim "pvc-a" is being deleted',))


def test_an_ephemeral_claim_not_created_yet_waits_for_its_controller():
    the_pod = make_pod("pod-a").uid("pod-uid").ephemeral("scratch", WAIT).obj()
    pre, _ = run(the_pod, [node("node-a")], [])
    assert pre == Status(
        UNRESOLVABLE,
        (
            "waiting for ephemeral volume controller to create the persistentvolumeclaim "
            '"pod-a-scratch"',
        ),
    )


def test_an_ephemeral_claim_of_another_owner_is_refused():
    the_pod = make_pod("pod-a").uid("pod-uid").ephemeral("scratch", WAIT).obj()
    claim = make_pvc("pod-a-scratch").storage_class(WAIT).owner("Pod", "pod-a", "other-uid")
    pre, _ = run(the_pod, [node("node-a")], [claim.obj()])
    assert pre == Status(
        UNRESOLVABLE,
        ("PVC default/pod-a-scratch was not created for pod default/pod-a (pod is not owner)",),
    )


# --- args ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({}, []),
        ({"bindTimeoutSeconds": 0}, []),
        (
            {"bindTimeoutSeconds": -10},
            [
                "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not "
                "be a negative value"
            ],
        ),
        (
            {"shape": [{"utilization": 0, "score": 0}]},
            [
                'shape: Invalid value: [{"utilization":0,"score":0}]: unexpected field '
                "`shape`, remove it or turn on the feature gate StorageCapacityScoring"
            ],
        ),
        ({"bindTimeoutSeconds": "x"}, ['bindTimeoutSeconds: Invalid value: "x": must be int']),
        ({"other": 1}, ['other: Invalid value: "other": unknown field']),
    ],
    ids=["defaults", "zero-timeout", "negative-timeout", "shape-refused", "wrong-type", "unknown"],
)
def test_args_validation(args, errors):
    handle = PluginHandle()
    if not errors:
        plugin = volumebinding.new(args, handle)
        assert plugin.args.bind_timeout_seconds == args.get("bindTimeoutSeconds", 600)
        return
    with pytest.raises(ArgsError) as err:
        volumebinding.new(args, handle)
    assert [str(e) for e in err.value.errors] == errors


# --- queueing hints ---------------------------------------------------------------------------

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP


def hint(name: str, the_pod: Pod, old: object, new: object) -> QueueingHint:
    plugin = volumebinding.new(None, PluginHandle())
    result: QueueingHint = getattr(plugin, f"is_schedulable_after_{name}_change")(the_pod, old, new)
    return result


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_pvc("pvc-a").obj(), QUEUE),
        (make_pvc("pvc-a").obj(), make_pvc("pvc-a").volume_name("pv").obj(), QUEUE),
        (None, make_pvc("other").obj(), SKIP),
        (None, make_pvc("pvc-a").namespace("elsewhere").obj(), SKIP),
    ],
    ids=[
        "queue-on-the-pods-claim-added",
        "queue-on-the-pods-claim-updated",
        "skip-queue-on-another-claim",
        "skip-queue-on-a-claim-of-another-namespace",
    ],
)
def test_persistent_volume_claim_hint(old, new, want):
    assert hint("persistent_volume_claim", pod("pvc-a"), old, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, make_storage_class("sc").obj(), QUEUE),
        (
            make_storage_class("sc").obj(),
            make_storage_class("sc").allowed_topology(ZONE, "a").obj(),
            QUEUE,
        ),
        (
            make_storage_class("sc").obj(),
            make_storage_class("sc").default().obj(),
            SKIP,
        ),
    ],
    ids=[
        "queue-on-class-added",
        "queue-on-allowed-topologies-changed",
        "skip-queue-on-other-class-update",
    ],
)
def test_storage_class_hint(old, new, want):
    assert hint("storage_class", pod("pvc-a"), old, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        (None, cap("c", "1Gi"), QUEUE),
        (cap("c", "1Gi"), cap("c", "2Gi"), QUEUE),
        (cap("c", "2Gi"), cap("c", "1Gi"), SKIP),
        (cap("c", "2Gi", max_size="1Gi"), cap("c", "2Gi", max_size="2Gi"), QUEUE),
        (cap("c", "2Gi"), cap("c", "2Gi"), SKIP),
    ],
    ids=[
        "queue-on-capacity-added",
        "queue-on-capacity-increased",
        "skip-queue-on-capacity-decreased",
        "queue-on-maximum-volume-size-increased",
        "skip-queue-on-capacity-unchanged",
    ],
)
def test_csi_storage_capacity_hint(old, new, want):
    assert hint("csi_storage_capacity", pod("pvc-a"), old, new) is want


def test_csi_node_hint_queues_on_added_or_migrated_plugins_changed():
    plain = make_csi_node("n").obj()
    migrated = make_csi_node("n").migrated("kubernetes.io/gce-pd").obj()
    assert hint("csi_node", pod(), None, plain) is QUEUE
    assert hint("csi_node", pod(), plain, migrated) is QUEUE
    assert hint("csi_node", pod(), plain, make_csi_node("n").driver("d").obj()) is SKIP


def test_csi_driver_hint_queues_when_an_inline_volumes_driver_stops_tracking_capacity():
    inline = make_pod("p").volume({"name": "v", "csi": {"driver": CSI}}).obj()
    tracking = make_csi_driver(CSI).storage_capacity(True).obj()
    not_tracking = make_csi_driver(CSI).storage_capacity(False).obj()
    assert hint("csi_driver", inline, tracking, not_tracking) is QUEUE
    assert hint("csi_driver", inline, not_tracking, tracking) is SKIP
    assert hint("csi_driver", pod("pvc-a"), tracking, not_tracking) is SKIP


def test_a_hint_given_the_wrong_kind_raises_so_the_pod_is_queued():
    with pytest.raises(TypeError):
        hint("storage_class", pod(), None, make_pvc("x").obj())


# --- Reserve, PreBind, Unreserve over the in-memory store --------------------------------------


class Cycle:
    """One pod's cycle through the plugin, with the store, the lister it feeds and the
    simulated PV controller."""

    def __init__(self, nodes: Sequence[Node], raw: Sequence[dict[str, Any]], timeout: int = 600):
        self.client = RecordingClient()
        self.handle = PluginHandle(nodes=nodes, client=self.client)
        self.volumes = SimulatedVolumes(self.client, self.handle.cluster, self._labels)
        self.volumes.load(raw)
        self.plugin = volumebinding.new({"bindTimeoutSeconds": timeout}, self.handle)

    def _labels(self, name: str) -> Any:
        info = self.handle.snapshot.find(name)
        return info.node.labels if info is not None else None

    def schedule(self, the_pod: Pod, node_name: str) -> tuple[CycleState, Status | None]:
        state = CycleState()
        _, pre = self.plugin.pre_filter(state, the_pod, self.handle.snapshot.list())
        assert pre is None, pre
        info = self.handle.snapshot.get(node_name)
        assert self.plugin.filter(state, the_pod, info) is None
        return state, self.plugin.reserve(state, the_pod, node_name)


def wffc_class(provisioner: str = "kubernetes.io/no-provisioner") -> dict[str, Any]:
    return make_storage_class(WAIT, provisioner).binding_mode("WaitForFirstConsumer").dict()


def test_static_binding_assumes_writes_the_claim_ref_and_waits_for_the_pv_controller():
    cycle = Cycle(
        [node("node-a")],
        [
            wffc_class(),
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("1Gi")
            .access_modes("ReadWriteOnce")
            .dict(),
            pv("pv-a").node_affinity_in(HOSTNAME, "node-a").dict(),
        ],
    )
    the_pod = pod("pvc-a")
    state, reserved = cycle.schedule(the_pod, "node-a")
    assert reserved is None
    # Assumed: the next pod sees the volume taken before anything was written.
    assumed = cycle.plugin.binder.pv_cache.get("pv-a")
    assert assumed is not None and assumed.claim_ref is not None
    assert cycle.client.get(PERSISTENT_VOLUMES, "pv-a")["spec"].get("claimRef") is None
    assert cycle.plugin.pre_bind_pre_flight(state, the_pod, "node-a") is None
    assert cycle.plugin.pre_bind(state, the_pod, "node-a") is None
    written = cycle.client.get(PERSISTENT_VOLUMES, "pv-a")
    assert written["spec"]["claimRef"]["name"] == "pvc-a"
    claim = cycle.client.get(PERSISTENT_VOLUME_CLAIMS, "pvc-a", "default")
    assert claim["spec"]["volumeName"] == "pv-a"
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"


def test_dynamic_provisioning_writes_the_selected_node_and_waits_for_the_volume():
    cycle = Cycle(
        [node("node-a", **{"topology.kubernetes.io__zone": "z1"})],
        [
            make_storage_class(WAIT, CSI)
            .binding_mode("WaitForFirstConsumer")
            .allowed_topology(ZONE, "z1")
            .dict(),
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("5Gi")
            .access_modes("ReadWriteOnce")
            .dict(),
        ],
    )
    the_pod = pod("pvc-a")
    state, reserved = cycle.schedule(the_pod, "node-a")
    assert reserved is None
    assert cycle.plugin.pre_bind(state, the_pod, "node-a") is None
    claim = cycle.client.get(PERSISTENT_VOLUME_CLAIMS, "pvc-a", "default")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-a"
    volume = cycle.client.get(PERSISTENT_VOLUMES, claim["spec"]["volumeName"])
    assert volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}
    ]
    assert volume["spec"]["capacity"] == {"storage": "5Gi"}


def test_a_bound_pod_skips_prebind():
    cycle = Cycle(
        [node("node-a")],
        [wffc_class(), bound_pvc("pvc-a", "pv-a").dict(), pv("pv-a").claim_ref("pvc-a").dict()],
    )
    the_pod = pod("pvc-a")
    state, _ = cycle.schedule(the_pod, "node-a")
    assert cycle.plugin.pre_bind_pre_flight(state, the_pod, "node-a") == Status.skip()


def test_unreserve_reverts_the_assumption():
    cycle = Cycle(
        [node("node-a")],
        [
            wffc_class(),
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("1Gi")
            .access_modes("ReadWriteOnce")
            .dict(),
            pv("pv-a").dict(),
        ],
    )
    the_pod = pod("pvc-a")
    state, _ = cycle.schedule(the_pod, "node-a")
    assert cycle.plugin.binder.pv_cache.get("pv-a").claim_ref is not None  # type: ignore[union-attr]
    cycle.plugin.unreserve(state, the_pod, "node-a")
    cycle.plugin.unreserve(state, the_pod, "node-a")  # idempotent
    assert cycle.plugin.binder.pv_cache.get("pv-a").claim_ref is None  # type: ignore[union-attr]


def test_a_stale_assumed_volume_conflicts_at_prebind_and_is_reverted():
    cycle = Cycle(
        [node("node-a")],
        [
            wffc_class(),
            make_pvc("pvc-a")
            .storage_class(WAIT)
            .request("1Gi")
            .access_modes("ReadWriteOnce")
            .dict(),
            pv("pv-a").dict(),
        ],
    )
    the_pod = pod("pvc-a")
    state, _ = cycle.schedule(the_pod, "node-a")
    # Someone changes the volume between Reserve and PreBind.
    cycle.client.patch(PERSISTENT_VOLUMES, "pv-a", {"metadata": {"labels": {"x": "y"}}})
    status = cycle.plugin.pre_bind(state, the_pod, "node-a")
    assert status is not None and status.code is Code.ERROR
    assert "the object has been modified" in status.message
    assert cycle.client.get(PERSISTENT_VOLUMES, "pv-a")["spec"].get("claimRef") is None


def test_a_binding_nobody_completes_times_out():
    # A class that cannot provision and a claim whose provisioning nobody answers: the
    # claim keeps its selected node but never gets a volume.
    cycle = Cycle(
        [node("node-a")],
        [
            make_storage_class(WAIT, CSI).binding_mode("WaitForFirstConsumer").dict(),
            make_pvc("pvc-a").storage_class(WAIT).request("1Gi").dict(),
        ],
        timeout=0,
    )
    cycle.volumes.settle = lambda: None  # type: ignore[method-assign]  # no controller
    the_pod = pod("pvc-a")
    state, _ = cycle.schedule(the_pod, "node-a")
    status = cycle.plugin.pre_bind(state, the_pod, "node-a")
    assert status == Status.error("binding volumes: context deadline exceeded")


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({}, 'binding volumes: selectedNode annotation reset for PVC "pvc-a"'),
        ({"example.com/keep": "x"}, 'binding volumes: provisioning failed for PVC "pvc-a"'),
    ],
    ids=["no-annotation-left", "other-annotations-left"],
)
def test_provisioning_given_back_fails_the_binding(annotations, message):
    claim = make_pvc("pvc-a").storage_class(WAIT).request("1Gi")
    for key, value in annotations.items():
        claim = claim.annotation(key, value)
    cycle = Cycle(
        [node("node-a")],
        [make_storage_class(WAIT, CSI).binding_mode("WaitForFirstConsumer").dict(), claim.dict()],
    )

    # A provisioner that fails: it removes the selected-node annotation.
    def give_back() -> None:
        claim = cycle.client.get(PERSISTENT_VOLUME_CLAIMS, "pvc-a", "default")
        if claim["metadata"].get("annotations", {}).get("volume.kubernetes.io/selected-node"):
            cycle.client.patch(
                PERSISTENT_VOLUME_CLAIMS,
                "pvc-a",
                {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": None}}},
                "default",
            )

    cycle.volumes.settle = give_back  # type: ignore[method-assign]
    the_pod = pod("pvc-a")
    state, _ = cycle.schedule(the_pod, "node-a")
    assert cycle.plugin.pre_bind(state, the_pod, "node-a") == Status.error(message)
