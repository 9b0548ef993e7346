"""VolumeRestrictions, after upstream's volume_restrictions_test.go (the GCE, AWS, RBD and
iSCSI disk-conflict tables, the ReadWriteOncePod table) and its queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, QueueingHint, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects.pod import Pod
from kubesched.plugins import volumerestrictions
from kubesched.plugins.volumerestrictions import (
    is_schedulable_after_persistent_volume_claim_added,
    is_schedulable_after_pod_deleted,
)
from kubesched.testing import PluginHandle, make_node, make_pod
from kubesched.testing.storage_wrappers import make_pvc

SKIP = Status(Code.SKIP)
DISK_CONFLICT = Status(Code.UNSCHEDULABLE, ("node(s) had no available disk",))
RWOP_CONFLICT = Status(
    Code.UNSCHEDULABLE,
    (
        "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
        "access mode",
    ),
)


def pod_with(*volumes: dict[str, Any], name: str = "p") -> Pod:
    wrapper = make_pod(name)
    for i, volume in enumerate(volumes):
        wrapper.volume({"name": f"v{i}", **volume})
    return wrapper.obj()


def node_with(*pods: Pod) -> NodeInfo:
    return NodeInfo(make_node("node-1").obj(), pods)


def run(
    pod: Pod, node_info: NodeInfo, handle: PluginHandle | None = None
) -> tuple[Status | None, Status | None]:
    """PreFilter, then Filter if PreFilter let it run (as upstream's tables do)."""
    plugin = volumerestrictions.new(None, handle or PluginHandle())
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [])
    if pre is not None:
        return pre, None
    return None, plugin.filter(state, pod, node_info)


GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {
    "iscsi": {
        "targetPortal": "127.0.0.1:3260",
        "iqn": "iqn.2016-12.server:storage.target01",
        "fsType": "ext4",
        "lun": 0,
    }
}
ISCSI2 = {
    "iscsi": {
        "targetPortal": "127.0.0.1:3260",
        "iqn": "iqn.2017-12.server:storage.target01",
        "fsType": "ext4",
        "lun": 0,
    }
}


def disk_cases(kind: str, vol: dict[str, Any], vol2: dict[str, Any]) -> list[Any]:
    return [
        pytest.param(pod_with(), node_with(), SKIP, None, id=f"{kind}-nothing"),
        pytest.param(pod_with(), node_with(pod_with(vol)), SKIP, None, id=f"{kind}-one-state"),
        pytest.param(
            pod_with(vol), node_with(pod_with(vol)), None, DISK_CONFLICT, id=f"{kind}-same-state"
        ),
        pytest.param(
            pod_with(vol2), node_with(pod_with(vol)), None, None, id=f"{kind}-different-state"
        ),
    ]


@pytest.mark.parametrize(
    ("pod", "node_info", "want_pre_filter", "want_filter"),
    [
        *disk_cases("gce", GCE, GCE2),
        pytest.param(
            pod_with({"emptyDir": {}}),
            node_with(),
            SKIP,
            None,
            id="gce-pod-with-a-volume-that-doesnt-have-restrictions",
        ),
        *disk_cases("aws", AWS, AWS2),
        *disk_cases("rbd", RBD, RBD2),
        *disk_cases("iscsi", ISCSI, ISCSI2),
    ],
)
def test_disk_conflicts(
    pod: Pod, node_info: NodeInfo, want_pre_filter: Status | None, want_filter: Status | None
) -> None:
    assert run(pod, node_info) == (want_pre_filter, want_filter)


@pytest.mark.parametrize(
    ("first", "second", "conflict"),
    [
        pytest.param(True, True, False, id="gce-both-read-only-share"),
        pytest.param(True, False, True, id="gce-one-writer-conflicts"),
    ],
)
def test_read_only_gce_disks_may_be_shared(first: bool, second: bool, conflict: bool) -> None:
    existing = pod_with({"gcePersistentDisk": {"pdName": "foo", "readOnly": first}})
    pod = pod_with({"gcePersistentDisk": {"pdName": "foo", "readOnly": second}})
    assert run(pod, node_with(existing))[1] == (DISK_CONFLICT if conflict else None)


# --- ReadWriteOncePod ----------------------------------------------------------------------


def claim_pod(name: str, *claims: str) -> Pod:
    wrapper = make_pod(name).node("node-1")
    for claim in claims:
        wrapper.pvc(claim)
    return wrapper.obj()


POD_WITH_ONE_PVC = claim_pod("pod-with-one-pvc", "claim-with-rwop-1")
POD_WITH_TWO_PVCS = claim_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2")
POD_WITH_ONE_CONFLICT = claim_pod("pod-with-one-conflict", "claim-with-rwop-1")
POD_WITH_TWO_CONFLICTS = claim_pod(
    "pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2"
)
POD_WITH_RWX = claim_pod("pod-with-rwx", "claim-with-rwx")
RWOP_1 = make_pvc("claim-with-rwop-1").access_modes("ReadWriteOncePod").obj()
RWOP_2 = make_pvc("claim-with-rwop-2").access_modes("ReadWriteOncePod").obj()
RWX = make_pvc("claim-with-rwx").access_modes("ReadWriteMany").obj()


@pytest.mark.parametrize(
    ("pod", "existing", "claims", "want_pre_filter", "want_filter"),
    [
        pytest.param(make_pod("p").obj(), [], [], SKIP, None, id="nothing"),
        pytest.param(
            POD_WITH_ONE_PVC,
            [],
            [],
            Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                ('persistentvolumeclaim "claim-with-rwop-1" not found',),
            ),
            None,
            id="failed-to-get-pvc",
        ),
        pytest.param(
            POD_WITH_ONE_PVC,
            [POD_WITH_RWX],
            [RWOP_1, RWX],
            SKIP,
            None,
            id="no-access-mode-conflict",
        ),
        pytest.param(
            POD_WITH_ONE_CONFLICT,
            [POD_WITH_ONE_PVC, POD_WITH_RWX],
            [RWOP_1, RWX],
            None,
            RWOP_CONFLICT,
            id="access-mode-conflict-unschedulable",
        ),
        pytest.param(
            POD_WITH_TWO_CONFLICTS,
            [POD_WITH_TWO_PVCS, POD_WITH_RWX],
            [RWOP_1, RWOP_2, RWX],
            None,
            RWOP_CONFLICT,
            id="two-conflicts-unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(
    pod: Pod,
    existing: list[Pod],
    claims: list[Any],
    want_pre_filter: Status | None,
    want_filter: Status | None,
) -> None:
    node = make_node("node-1").obj()
    handle = PluginHandle(nodes=[node] if existing else [], pods=existing, storage=claims)
    assert run(pod, NodeInfo(node, tuple(existing)), handle) == (want_pre_filter, want_filter)


def test_preemption_removing_the_claims_user_lifts_the_conflict() -> None:
    node = make_node("node-1").obj()
    handle = PluginHandle(nodes=[node], pods=[POD_WITH_ONE_PVC], storage=[RWOP_1])
    plugin = volumerestrictions.new(None, handle)
    state = CycleState()
    assert plugin.pre_filter(state, POD_WITH_ONE_CONFLICT, []) == (None, None)
    info = NodeInfo(node, (POD_WITH_ONE_PVC,))
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT
    # What preemption does while it tries removing victims: RemovePod, then AddPod back.
    victim = PodInfo(POD_WITH_ONE_PVC)
    copy = state.clone()
    assert plugin.remove_pod(copy, POD_WITH_ONE_CONFLICT, victim, info) is None
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, NodeInfo(node)) is None
    assert plugin.add_pod(copy, POD_WITH_ONE_CONFLICT, victim, info) is None
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT
    # The original state is untouched by the copy's changes.
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT


# --- queueing hints ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "claim", "want"),
    [
        pytest.param(
            claim_pod("p", "pvc1"), make_pvc("pvc1").obj(), QueueingHint.QUEUE, id="queue-pvc-used"
        ),
        pytest.param(
            claim_pod("p", "pvc1"),
            make_pvc("pvc1").namespace("other").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-other-namespace",
        ),
        pytest.param(
            claim_pod("p", "pvc1"),
            make_pvc("pvc2").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-unrelated-pvc",
        ),
    ],
)
def test_pvc_added_hint(pod: Pod, claim: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_persistent_volume_claim_added(pod, None, claim) is want


@pytest.mark.parametrize(
    ("pod", "deleted", "want"),
    [
        pytest.param(
            pod_with(GCE), pod_with(GCE, name="old"), QueueingHint.QUEUE, id="queue-disk-conflict"
        ),
        pytest.param(
            pod_with(GCE), pod_with(GCE2, name="old"), QueueingHint.QUEUE_SKIP, id="skip-other-disk"
        ),
        pytest.param(
            claim_pod("p", "rwop"),
            claim_pod("old", "rwop"),
            QueueingHint.QUEUE,
            id="queue-same-claim",
        ),
        pytest.param(
            claim_pod("p", "rwop"),
            make_pod("old").namespace("other").pvc("rwop").obj(),
            QueueingHint.QUEUE_SKIP,
            id="skip-other-namespace",
        ),
        pytest.param(
            claim_pod("p", "a"),
            claim_pod("old", "b"),
            QueueingHint.QUEUE_SKIP,
            id="skip-other-claim",
        ),
    ],
)
def test_pod_deleted_hint(pod: Pod, deleted: Pod, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_deleted(pod, deleted, None) is want


def test_events_registered() -> None:
    plugin = volumerestrictions.new(None, PluginHandle())
    events = {(e.event.resource.value, e.event.action.name) for e in plugin.events_to_register()}
    assert events == {("Pod", "DELETE"), ("Node", "ADD"), ("PersistentVolumeClaim", "ADD")}
