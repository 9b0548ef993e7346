"""NodeVolumeLimits, after upstream's csi_test.go (TestCSILimits and the queueing-hint
tables), each case run through the per-node Filter and the node table's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, QueueingHint, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.pod import Pod
from kubesched.objects.storage import StorageObject
from kubesched.plugins.nodevolumelimits import csi
from kubesched.plugins.nodevolumelimits.csi import (
    is_schedulable_after_csi_node_updated,
    is_schedulable_after_pod_deleted,
    is_schedulable_after_pvc_added,
)
from kubesched.testing import PluginHandle, make_node, make_pod
from kubesched.testing.storage_wrappers import (
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
    make_volume_attachment,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
NODE = "node-for-max-pd-test-1"
SC = "csi-sc"

SKIP = Status(Code.SKIP)
EXCEEDED = Status(Code.UNSCHEDULABLE, ("node(s) exceed max volume count",))

_names = iter(range(10_000))


def pod(*claims: str, volumes: tuple[dict[str, Any], ...] = (), **meta: str) -> Pod:
    wrapper = make_pod(meta.get("name", f"p{next(_names)}")).namespace(
        meta.get("namespace", "default")
    )
    if "uid" in meta:
        wrapper.uid(meta["uid"])
    for claim in claims:
        wrapper.pvc(claim, name=f"v-{claim.replace('/', '-').replace('.', '-')}"[:63])
    for volume in volumes:
        wrapper.volume(volume)
    return wrapper.obj()


def ephemeral(name: str) -> dict[str, Any]:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


RUNNING = pod("csi-ebs.csi.aws.com-3")
PENDING_VOLUME = pod("csi-4")
UNBOUND_PVC_2 = pod("csi-4")
MISSING_PV = pod("csi-6")
NO_SC_PVC = pod("csi-5")
GCE_TWO_VOL = pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE_VOL = pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO_VOL = pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
CSI_EBS_ONE_VOL = pod("csi-ebs.csi.aws.com-0")
CSI_EBS_TWO_VOL = pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE = pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = pod(volumes=(ephemeral("xyz"),), name="abc", namespace="test", uid="12345")
EPHEMERAL_TWO = pod(
    volumes=(ephemeral("x"), ephemeral("y")), name="abc", namespace="test", uid="12345II"
)
AWS_INLINE = {"name": "aws", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}
IN_TREE_INLINE = pod(volumes=(AWS_INLINE,))
IN_TREE_INLINE_SAME_ID = pod(
    volumes=({"name": "aws", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}},)
)
CONFIG_AND_SECRET = (
    {"name": "cm", "configMap": {"name": "c"}},
    {"name": "s", "secret": {"secretName": "s"}},
)
ONLY_CONFIGMAP_AND_SECRET = pod(volumes=CONFIG_AND_SECRET)
PVC_WITH_CONFIGMAP_AND_SECRET = pod("csi-ebs.csi.aws.com-0", volumes=CONFIG_AND_SECRET)
EPHEMERAL_WITH_CONFIGMAP_AND_SECRET = pod(
    volumes=(*CONFIG_AND_SECRET, ephemeral("xyz")), name="abc", namespace="test"
)
INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET = pod(volumes=(*CONFIG_AND_SECRET, AWS_INLINE))


def ephemeral_claim(owner: Pod, volume: str, owned: bool = True) -> Any:
    wrapper = make_pvc(f"{owner.name}-{volume}").namespace(owner.namespace).storage_class(SC)
    if owned:
        wrapper.owner("Pod", owner.name, owner.uid)
    return wrapper.obj()


EPHEMERAL_CLAIM = ephemeral_claim(EPHEMERAL, "xyz")
CONFLICTING_CLAIM = ephemeral_claim(EPHEMERAL, "xyz", owned=False)
EPHEMERAL_CLAIM_X = ephemeral_claim(EPHEMERAL_TWO, "x")
EPHEMERAL_CLAIM_Y = ephemeral_claim(EPHEMERAL_TWO, "y")


def storage_for(drivers: list[str], va_count: int) -> list[StorageObject]:
    """The PVs, claims, class and VolumeAttachments of upstream's fake listers."""
    out: list[StorageObject] = []
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            wrapper = make_pv(name)
            if driver == EBS_IN_TREE:
                wrapper.source("awsElasticBlockStore", {"volumeID": name})
            elif driver == HOSTPATH_IN_TREE:
                wrapper.source("hostPath", {"path": "/tmp"})
            else:
                wrapper.csi(driver, name)
            out.append(wrapper.obj())
            out.append(make_pvc(name).volume_name(name).obj())
        for j in range(va_count):
            out.append(
                make_volume_attachment(f"va-{driver}-{j}", driver, NODE, f"csi-{driver}-{j}")
            )
    out.append(make_pvc("csi-4").storage_class(SC).obj())
    out.append(make_pvc("csi-5").obj())
    out.append(make_pvc("csi-6").storage_class(SC).volume_name("missing-in-action").obj())
    out.append(make_storage_class(SC, drivers[0]).obj())
    return out


def csi_node_for(limit_source: str, limit: int, drivers: list[str]) -> Any:
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    wrapper = make_csi_node(NODE)
    if limit_source != "no-csi-driver":
        for driver in drivers:
            wrapper.driver(driver, limit if limit_source == "csinode" else None, node_id=NODE)
    return wrapper.migrated(EBS_IN_TREE).obj()


@dataclass
class Case:
    test: str
    new_pod: Pod
    drivers: list[str]
    existing: list[Pod] = field(default_factory=list)
    max_vols: int = 0
    va_count: int = 0
    limit_source: str = ""
    extra_claims: list[Any] = field(default_factory=list)
    want: Status | None = None
    want_pre_filter: Status | None = None


CASES = [
    Case("should count VolumeAttachments towards volume limit when no pods exist", CSI_EBS_ONE_VOL, [EBS], max_vols=2, va_count=2, limit_source="csinode", want=EXCEEDED),
    Case("should schedule pod when VolumeAttachments count does not exceed limit", CSI_EBS_ONE_VOL, [EBS], max_vols=2, va_count=1, limit_source="csinode"),
    Case("fits when node volume limit >= new pods CSI volume", CSI_EBS_ONE_VOL, [EBS], [RUNNING, CSI_EBS_TWO_VOL], 4, limit_source="csinode"),
    Case("doesn't when node volume limit <= pods CSI volume", CSI_EBS_ONE_VOL, [EBS], [RUNNING, CSI_EBS_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("should when driver does not support volume limits", CSI_EBS_ONE_VOL, [EBS], [RUNNING, CSI_EBS_TWO_VOL], 2, limit_source="csinode-with-no-limit"),
    Case("count pending PVCs towards volume limit <= pods CSI volume", CSI_EBS_ONE_VOL, [EBS], [PENDING_VOLUME, CSI_EBS_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("count multiple pending pvcs towards volume limit >= pods CSI volume", CSI_EBS_ONE_VOL, [EBS], [PENDING_VOLUME, UNBOUND_PVC_2, CSI_EBS_TWO_VOL], 4, limit_source="csinode"),
    Case("should count PVCs with invalid PV name but valid SC", CSI_EBS_ONE_VOL, [EBS], [MISSING_PV, CSI_EBS_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("don't count pvcs with missing SC towards volume limit", CSI_EBS_ONE_VOL, [EBS], [RUNNING, NO_SC_PVC], 2, limit_source="csinode"),
    Case("count pvcs with the same type towards volume limit", CSI_EBS_ONE_VOL, [EBS, GCE], [GCE_TWO_VOL, CSI_EBS_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("don't count pvcs with different type towards volume limit", GCE_TWO_VOL, [EBS, GCE], [CSI_EBS_TWO_VOL, RUNNING], 2, limit_source="csinode"),
    Case("should count in-tree volumes if migration is enabled", IN_TREE_ONE_VOL, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("nil csi node", IN_TREE_INLINE, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL]),
    Case("should count unbound in-tree volumes if migration is enabled", PENDING_VOLUME, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("should not limit pod if volume used does not report limits", IN_TREE_ONE_VOL, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode-with-no-limit"),
    Case("should not count non-migratable in-tree volumes", IN_TREE_NON_MIGRATABLE, [HOSTPATH_IN_TREE, EBS], [CSI_EBS_TWO_VOL], 2, limit_source="csinode"),
    Case("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_ONE_VOL, [EBS_IN_TREE, EBS], [CSI_EBS_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE, [EBS_IN_TREE, EBS], [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], 3, limit_source="csinode", want=EXCEEDED),
    Case("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_INLINE_SAME_ID, [EBS_IN_TREE, EBS], [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], 3, limit_source="csinode"),
    Case("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", CSI_EBS_ONE_VOL, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
    Case("ephemeral volume missing", EPHEMERAL, [EBS], limit_source="csinode-with-no-limit", want=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',))),
    Case("ephemeral volume not owned", EPHEMERAL, [EBS], limit_source="csinode-with-no-limit", extra_claims=[CONFLICTING_CLAIM], want=Status(Code.ERROR, ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",))),
    Case("ephemeral volume unbound", EPHEMERAL, [EBS], limit_source="csinode-with-no-limit", extra_claims=[EPHEMERAL_CLAIM]),
    Case("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL, [EBS], [RUNNING, CSI_EBS_TWO_VOL], 2, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM], want=EXCEEDED),
    Case("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", CSI_EBS_ONE_VOL, [EBS], [RUNNING, EPHEMERAL_TWO], 2, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], want=EXCEEDED),
    Case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL, [EBS], [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], 3, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM], want=EXCEEDED),
    Case("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", CSI_EBS_ONE_VOL, [EBS], [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], 5, limit_source="csinode", extra_claims=[EPHEMERAL_CLAIM]),
    Case("skip Filter when the pod only uses secrets and configmaps", ONLY_CONFIGMAP_AND_SECRET, [EBS], max_vols=2, limit_source="csinode", want_pre_filter=SKIP),
    Case("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_AND_SECRET, [EBS], max_vols=2, limit_source="csinode"),
    Case("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_WITH_CONFIGMAP_AND_SECRET, [EBS], limit_source="csinode-with-no-limit", want=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',))),
    Case("don't skip Filter when the pod has inline migratable volumes", INLINE_MIGRATABLE_WITH_CONFIGMAP_AND_SECRET, [EBS_IN_TREE, EBS], [IN_TREE_TWO_VOL], 2, limit_source="csinode", want=EXCEEDED),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.test for c in CASES])
@pytest.mark.parametrize("columnar", [False, True], ids=["per-node", "node-table"])
def test_csi_limits(case: Case, columnar: bool) -> None:
    storage = storage_for(case.drivers, case.va_count) + case.extra_claims
    csi_node = csi_node_for(case.limit_source, case.max_vols, case.drivers)
    if csi_node is not None:
        storage.append(csi_node)
    existing = [p.evolve(node_name=NODE) for p in case.existing]
    node = make_node(NODE).obj()
    handle = PluginHandle(nodes=[node], pods=existing, storage=storage, columnar=columnar)
    plugin = csi.new(None, handle)
    state = CycleState()
    _, pre = plugin.pre_filter(state, case.new_pod, [])
    assert pre == case.want_pre_filter
    if pre is not None:
        return
    if not columnar:
        got = plugin.filter(state, case.new_pod, handle.snapshot.get(NODE))
    else:
        assert handle.snapshot.table is not None
        rows = np.array([0], dtype=np.int64)
        verdicts = plugin.filter_nodes(state, case.new_pod, handle.snapshot.table, rows)
        got = None if verdicts is None else verdicts.statuses[int(verdicts.codes[0]) - 1]
    assert got == case.want


# --- queueing hints ------------------------------------------------------------------------

POD_EBS = pod("csi-ebs.csi.aws.com-2")


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(pod("placeholder"), QueueingHint.QUEUE, id="queue-deleted-pod-has-a-pvc"),
        pytest.param(
            pod(volumes=({"name": "a", "awsElasticBlockStore": {"volumeID": "v"}},)),
            QueueingHint.QUEUE,
            id="queue-deleted-pod-has-an-inline-migratable-volume",
        ),
        pytest.param(pod(), QueueingHint.QUEUE_SKIP, id="skip-deleted-pod-has-no-volume"),
    ],
)
def test_pod_deleted_hint(deleted: Pod, want: QueueingHint) -> None:
    assert is_schedulable_after_pod_deleted(POD_EBS, deleted.evolve(node_name=NODE), None) is want


def test_pod_deleted_hint_skips_a_pod_that_was_not_scheduled() -> None:
    deleted = pod("csi-ebs.csi.aws.com-0")
    assert is_schedulable_after_pod_deleted(POD_EBS, deleted, None) is QueueingHint.QUEUE_SKIP


@pytest.mark.parametrize(
    ("new_pod", "claim", "want"),
    [
        pytest.param(
            pod(namespace="ns1"), make_pvc("pvc").namespace("ns2").obj(), QueueingHint.QUEUE_SKIP,
            id="a-pod-isnt-in-the-same-namespace-as-an-added-pvc",
        ),
        pytest.param(
            pod("pvc1", namespace="ns1"), make_pvc("pvc1").namespace("ns1").obj(),
            QueueingHint.QUEUE, id="a-pod-is-in-the-same-namespace-as-an-added-pvc",
        ),
        pytest.param(
            pod(volumes=(ephemeral("ephemeral"),), name="pod1", namespace="ns1"),
            make_pvc("pod1-ephemeral").namespace("ns1").obj(),
            QueueingHint.QUEUE, id="a-pod-has-an-ephemeral-volume-related-to-an-added-pvc",
        ),
        pytest.param(
            pod("pvc1", namespace="ns1"), make_pvc("pvc2").namespace("ns1").obj(),
            QueueingHint.QUEUE_SKIP, id="a-pod-doesnt-have-the-same-pvc-as-an-added-pvc",
        ),
        pytest.param(
            pod(namespace="ns1"), make_pvc("pvc2").namespace("ns1").obj(),
            QueueingHint.QUEUE_SKIP, id="a-pod-doesnt-have-any-pvc-attached",
        ),
    ],
)  # fmt: skip
def test_pvc_added_hint(new_pod: Pod, claim: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_pvc_added(new_pod, None, claim) is want


GKE_VA = make_volume_attachment("volumeattachment1", "test.storage.gke.io", "fake-node", "pv1")
EBS_INLINE_VA = make_volume_attachment("volumeattachment1", EBS, "fake-node")


@pytest.mark.parametrize(
    ("new_pod", "claims", "deleted", "want"),
    [
        pytest.param(
            pod("pvc1", namespace="ns1"), [make_pvc("pvc1").namespace("ns1").volume_name("pv1").obj()],
            GKE_VA, QueueingHint.QUEUE, id="a-pod-has-pvc-when-volumeattachment-is-deleting",
        ),
        pytest.param(
            pod(volumes=({"name": "a", "awsElasticBlockStore": {"volumeID": "test"}},), namespace="ns1"),
            [], EBS_INLINE_VA, QueueingHint.QUEUE, id="inline-ebs-and-ebs-attachment-match",
        ),
        pytest.param(
            pod(volumes=({"name": "a", "gcePersistentDisk": {"pdName": "test"}},), namespace="ns1"),
            [], EBS_INLINE_VA, QueueingHint.QUEUE_SKIP, id="inline-gce-and-ebs-attachment-no-match",
        ),
        pytest.param(
            pod("pvc1", volumes=({"name": "a", "awsElasticBlockStore": {"volumeID": "test"}},), namespace="ns1"),
            [make_pvc("pvc1").namespace("ns1").volume_name("pv1").obj()],
            EBS_INLINE_VA, QueueingHint.QUEUE, id="inline-ebs-and-pvc-with-ebs-attachment",
        ),
        pytest.param(
            pod("pvc1", volumes=({"name": "a", "awsElasticBlockStore": {"volumeID": "test"}},), namespace="ns1"),
            [make_pvc("pvc1").namespace("ns1").volume_name("pv1").obj()],
            GKE_VA, QueueingHint.QUEUE, id="inline-ebs-and-pvc-with-gke-attachment",
        ),
        pytest.param(
            pod(namespace="ns1"), [], GKE_VA, QueueingHint.QUEUE_SKIP,
            id="a-pod-has-no-pvc-when-volumeattachment-is-deleting",
        ),
    ],
)  # fmt: skip
def test_volume_attachment_deleted_hint(
    new_pod: Pod, claims: list[Any], deleted: Any, want: QueueingHint
) -> None:
    plugin = csi.new(None, PluginHandle(storage=claims))
    assert plugin.is_schedulable_after_volume_attachment_deleted(new_pod, deleted, None) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, make_csi_node("n").driver(EBS, 1).obj(), QueueingHint.QUEUE, id="added"),
        pytest.param(
            make_csi_node("n").driver(EBS, 1).obj(), make_csi_node("n").driver(EBS, 2).obj(),
            QueueingHint.QUEUE, id="queue-limit-raised",
        ),
        pytest.param(
            make_csi_node("n").driver(EBS, 2).obj(), make_csi_node("n").driver(EBS, 1).obj(),
            QueueingHint.QUEUE_SKIP, id="skip-limit-lowered",
        ),
        pytest.param(
            make_csi_node("n").driver(EBS, 2).obj(), make_csi_node("n").driver(EBS).obj(),
            QueueingHint.QUEUE, id="queue-limit-no-longer-reported",
        ),
        pytest.param(
            make_csi_node("n").driver(EBS, 2).obj(), make_csi_node("n").driver(EBS, 2).driver(GCE, 1).obj(),
            QueueingHint.QUEUE_SKIP, id="skip-driver-added",
        ),
    ],
)  # fmt: skip
def test_csi_node_updated_hint(old: Any, new: Any, want: QueueingHint) -> None:
    assert is_schedulable_after_csi_node_updated(POD_EBS, old, new) is want


def test_node_table_counts_follow_pods_and_storage_changes() -> None:
    """The node table's kept counts move with pods coming and going and with storage
    changes, as the per-node Filter's recomputation does."""
    storage = [*storage_for([EBS], 0), make_csi_node(NODE).driver(EBS, 2).obj()]
    node = make_node(NODE).obj()
    handle = PluginHandle(nodes=[node], pods=[], storage=storage, columnar=True)
    plugin = csi.new(None, handle)
    snapshot: Snapshot = handle.snapshot
    table = snapshot.table
    assert table is not None
    rows = np.array([0], dtype=np.int64)

    def both() -> tuple[Status | None, Status | None]:
        per_node = plugin.filter(CycleState(), CSI_EBS_ONE_VOL, snapshot.get(NODE))
        verdicts = plugin.filter_nodes(CycleState(), CSI_EBS_ONE_VOL, table, rows)
        vector = None if verdicts is None else verdicts.statuses[int(verdicts.codes[0]) - 1]
        return per_node, vector

    assert both() == (None, None)
    snapshot.add_pod(CSI_EBS_TWO_VOL.evolve(node_name=NODE))
    assert both() == (EXCEEDED, EXCEEDED)
    snapshot.remove_pod(CSI_EBS_TWO_VOL.evolve(node_name=NODE))
    assert both() == (None, None)
    # A VolumeAttachment still holding two volumes counts until it goes.
    handle.cluster.put(make_volume_attachment("va-1", EBS, NODE, "csi-ebs.csi.aws.com-1"))
    handle.cluster.put(make_volume_attachment("va-2", EBS, NODE, "csi-ebs.csi.aws.com-2"))
    assert both() == (EXCEEDED, EXCEEDED)
    handle.cluster.put(make_csi_node(NODE).driver(EBS, 3).obj())
    assert both() == (None, None)
