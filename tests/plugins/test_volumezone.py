"""VolumeZone, after upstream's volume_zone_test.go (TestSingleZone, TestMultiZone,
TestWithBinding and the queueing-hint tables)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, QueueingHint, Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins import volumezone
from kubesched.plugins.volumezone import (
    is_schedulable_after_persistent_volume_change,
    is_schedulable_after_persistent_volume_claim_change,
    is_schedulable_after_storage_class_added,
)
from kubesched.testing import PluginHandle, make_node, make_pod
from kubesched.testing.storage_wrappers import make_pv, make_pvc, make_storage_class

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
SKIP = Status(Code.SKIP)
CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had no available volume zone",))


def pv(name: str, **labels: str) -> Any:
    wrapper = make_pv(name)
    for key, value in labels.items():
        wrapper.label(key, value)
    return wrapper.obj()


def pod_with_claim(claim: str) -> Pod:
    return make_pod("pod_1").pvc(claim).obj()


def host(**labels: str) -> NodeInfo:
    node = make_node("host1").obj()
    node = type(node)(name=node.name, labels=dict(labels))
    return NodeInfo(node)


def run(storage: list[Any], pod: Pod, node_info: NodeInfo) -> tuple[Status | None, Status | None]:
    """PreFilter, then Filter on the same state (upstream's tables call both)."""
    plugin = volumezone.new(None, PluginHandle(storage=storage))
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    return pre, plugin.filter(state, pod, node_info)


SINGLE = [
    make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj(),
    make_pv("Vol_2").label(BETA_REGION, "us-west1").label("uselessLabel", "none").obj(),
    make_pv("Vol_3").label(BETA_REGION, "us-west1").obj(),
    make_pv("Vol_Stable_1").label(ZONE, "us-west1-a").obj(),
    make_pv("Vol_Stable_2").label(REGION, "us-west1").label("uselessLabel", "none").obj(),
    make_pv("Vol_Stable_3").label(ZONE, "us-west1-a").label(REGION, "us-west1-a").obj(),
    *(
        make_pvc(claim).volume_name(volume).obj()
        for claim, volume in [
            ("PVC_1", "Vol_1"),
            ("PVC_2", "Vol_2"),
            ("PVC_3", "Vol_3"),
            ("PVC_4", "Vol_not_exist"),
            ("PVC_Stable_1", "Vol_Stable_1"),
            ("PVC_Stable_2", "Vol_Stable_2"),
            ("PVC_Stable_3", "Vol_Stable_3"),
        ]
    ),
]


@pytest.mark.parametrize(
    ("pod", "node", "want_pre_filter", "want_filter"),
    [
        pytest.param(
            make_pod("pod_1").obj(), host(**{BETA_ZONE: "us-west1-a"}), SKIP, None,
            id="pod-without-volume",
        ),
        pytest.param(pod_with_claim("PVC_1"), host(), None, None, id="node-without-labels"),
        pytest.param(
            pod_with_claim("PVC_1"), host(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}),
            None, None, id="beta-zone-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_2"), host(**{BETA_REGION: "us-west1", "uselessLabel": "none"}),
            None, None, id="beta-region-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_2"), host(**{BETA_REGION: "no_us-west1", "uselessLabel": "none"}),
            None, CONFLICT, id="beta-region-label-doesnt-match",
        ),
        pytest.param(
            pod_with_claim("PVC_1"), host(**{BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}),
            None, CONFLICT, id="beta-zone-label-doesnt-match",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_1"), host(**{ZONE: "us-west1-a", "uselessLabel": "none"}),
            None, None, id="zone-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_2"), host(**{REGION: "us-west1", "uselessLabel": "none"}),
            None, None, id="region-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_2"), host(**{REGION: "no_us-west1", "uselessLabel": "none"}),
            None, CONFLICT, id="region-label-doesnt-match",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_1"), host(**{ZONE: "no_us-west1-a", "uselessLabel": "none"}),
            None, CONFLICT, id="zone-label-doesnt-match",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_3"), host(**{ZONE: "us-west1-a"}),
            None, CONFLICT, id="pv-with-zone-and-region-node-with-only-zone",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_1"), host(**{BETA_ZONE: "us-west1-a"}),
            None, CONFLICT, id="pv-with-zone-node-with-beta-zone",
        ),
        pytest.param(
            pod_with_claim("PVC_1"), host(**{ZONE: "us-west1-a"}),
            None, None, id="pv-with-beta-label-node-with-ga-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_1"), host(**{ZONE: "us-west1-b"}),
            None, CONFLICT, id="pv-with-beta-label-node-with-ga-label-dont-match",
        ),
    ],
)  # fmt: skip
def test_single_zone(
    pod: Pod, node: NodeInfo, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    assert run(SINGLE, pod, node) == (want_pre_filter, want_filter)


MULTI = [
    make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj(),
    make_pv("Vol_2").label(BETA_ZONE, "us-west1-b").label("uselessLabel", "none").obj(),
    make_pv("Vol_3").label(BETA_ZONE, "us-west1-c__us-west1-a").obj(),
    make_pv("Vol_Stable_1").label(ZONE, "us-west1-a").obj(),
    make_pv("Vol_Stable_2").label(ZONE, "us-west1-c__us-west1-a").obj(),
    *(
        make_pvc(claim).volume_name(volume).obj()
        for claim, volume in [
            ("PVC_1", "Vol_1"),
            ("PVC_2", "Vol_2"),
            ("PVC_3", "Vol_3"),
            ("PVC_4", "Vol_not_exist"),
            ("PVC_Stable_1", "Vol_Stable_1"),
            ("PVC_Stable_2", "Vol_Stable_2"),
        ]
    ),
]


@pytest.mark.parametrize(
    ("pod", "node", "want_filter"),
    [
        pytest.param(pod_with_claim("PVC_3"), host(), None, id="node-without-labels"),
        pytest.param(
            pod_with_claim("PVC_3"), host(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"}),
            None, id="beta-zone-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_1"), host(**{BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
            CONFLICT, id="beta-zone-label-doesnt-match",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_2"), host(**{ZONE: "us-west1-a", "uselessLabel": "none"}),
            None, id="zone-label-matched",
        ),
        pytest.param(
            pod_with_claim("PVC_Stable_1"), host(**{ZONE: "us-west1-b", "uselessLabel": "none"}),
            CONFLICT, id="zone-label-doesnt-match",
        ),
    ],
)  # fmt: skip
def test_multi_zone(pod: Pod, node: NodeInfo, want_filter: Status | None) -> None:
    assert run(MULTI, pod, node) == (None, want_filter)


IMMEDIATE_UNSET = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "Class_Immediate"},
    "provisioner": "p",
}
WITH_BINDING = [
    make_storage_class("Class_Wait").binding_mode("WaitForFirstConsumer").obj(),
    volumezone.StorageClass.from_dict(IMMEDIATE_UNSET),
    make_pv("Vol_1").label(BETA_ZONE, "us-west1-a").obj(),
    make_pvc("PVC_1").volume_name("Vol_1").obj(),
    make_pvc("PVC_NoSC").storage_class("Class_0").obj(),
    make_pvc("PVC_EmptySC").obj(),
    make_pvc("PVC_WaitSC").storage_class("Class_Wait").obj(),
    make_pvc("PVC_ImmediateSC").storage_class("Class_Immediate").obj(),
]
NODE = host(**{BETA_ZONE: "us-west1-a", "uselessLabel": "none"})


def unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


@pytest.mark.parametrize(
    ("claim", "want_pre_filter", "want_filter"),
    [
        pytest.param("PVC_1", None, None, id="label-zone-failure-domain-matched"),
        pytest.param(
            "PVC_EmptySC",
            unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            id="unbound-volume-empty-storage-class",
        ),
        pytest.param(
            "PVC_NoSC",
            unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
            id="unbound-volume-no-storage-class",
        ),
        pytest.param(
            "PVC_ImmediateSC",
            unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
            id="unbound-volume-immediate-binding-mode",
        ),
        pytest.param("PVC_WaitSC", SKIP, None, id="unbound-volume-wait-binding-mode"),
        pytest.param(
            "PVC_missing",
            unresolvable('persistentvolumeclaim "PVC_missing" not found'),
            unresolvable('persistentvolumeclaim "PVC_missing" not found'),
            id="missing-claim",
        ),
    ],
)
def test_with_binding(
    claim: str, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    assert run(WITH_BINDING, pod_with_claim(claim), NODE) == (want_pre_filter, want_filter)


def test_a_claim_bound_to_a_volume_not_created_yet() -> None:
    pre, _ = run(SINGLE, pod_with_claim("PVC_4"), NODE)
    assert pre == unresolvable('persistentvolume "Vol_not_exist" not found')


# --- queueing hints ------------------------------------------------------------------------

POD_1 = pod_with_claim("PVC_1")


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            make_pod("pod_1").obj(), None, make_pvc("PVC_1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE_SKIP, id="pvc-was-added-but-pod-refers-no-pvc",
        ),
        pytest.param(
            pod_with_claim("PVC_2"), None, make_pvc("PVC_1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE_SKIP, id="pvc-was-added-and-pod-was-bound-to-different-pvc",
        ),
        pytest.param(
            POD_1, None, make_pvc("PVC_1").namespace("ns1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE_SKIP, id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
        ),
        pytest.param(
            POD_1, None, make_pvc("PVC_1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE, id="pvc-was-added-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            POD_1, make_pvc("PVC_1").obj(), make_pvc("PVC_1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE, id="pvc-was-updated-and-pod-was-bound-to-the-pvc",
        ),
        pytest.param(
            make_pod("pod_1").obj(), make_pvc("PVC_1").obj(),
            make_pvc("PVC_1").volume_name("Vol_1").obj(),
            QueueingHint.QUEUE_SKIP, id="pvc-was-updated-but-pod-refers-no-pvc",
        ),
    ],
)  # fmt: skip
def test_pvc_change_hint(pod: Pod, old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_persistent_volume_claim_change(pod, old, new) is want


def test_hints_refuse_objects_of_the_wrong_kind() -> None:
    # A hint that raises makes the queue requeue the pod (upstream's Queue with an error).
    with pytest.raises(TypeError):
        is_schedulable_after_persistent_volume_claim_change(POD_1, None, "not-a-pvc")
    with pytest.raises(TypeError):
        is_schedulable_after_storage_class_added(POD_1, None, "not-a-storageclass")
    with pytest.raises(TypeError):
        is_schedulable_after_persistent_volume_change(POD_1, "not-a-pv", make_pv("Vol_1").obj())


@pytest.mark.parametrize(
    ("cls", "want"),
    [
        pytest.param(
            volumezone.StorageClass.from_dict({"metadata": {"name": "SC_1"}}),
            QueueingHint.QUEUE_SKIP,
            id="sc-doesnt-have-volume-binding-mode",
        ),
        pytest.param(
            make_storage_class("SC_1").binding_mode("WaitForFirstConsumer").obj(),
            QueueingHint.QUEUE,
            id="new-sc-is-wait-for-first-consumer-mode",
        ),
    ],
)
def test_storage_class_added_hint(cls: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_storage_class_added(POD_1, None, cls) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None,
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id="new-pv-was-added",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-b"}),
            QueueingHint.QUEUE,
            id="pv-was-updated-and-changed-topology",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QUEUE,
            id="pv-was-updated-and-added-topology-label",
        ),
        pytest.param(
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            pv("Vol_1", **{BETA_ZONE: "us-west1-a", ZONE: "zone"}),
            QueueingHint.QUEUE_SKIP,
            id="pv-was-updated-but-no-topology-is-changed",
        ),
    ],
)
def test_pv_change_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_persistent_volume_change(POD_1, old, new) is want


def test_events_registered() -> None:
    plugin = volumezone.new(None, PluginHandle())
    events = {(e.event.resource.value, int(e.event.action)) for e in plugin.events_to_register()}
    assert ("StorageClass", 1) in events and ("Node", 1 | 8) in events
