"""The storage views (decoding, defaults, errors with their paths) and claim-to-volume
matching (upstream's FindMatchingVolume and the PV controller's access-mode index)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.storage import (
    CSINode,
    CSISource,
    DiskSource,
    PersistentVolume,
    PersistentVolumeClaim,
    RBDSource,
    StorageClass,
    claim_is_for_pod,
    find_best_match_for_claim,
    find_matching_volume,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    pod_claim_names,
    volume_node_affinity_matches,
)
from kubesched.testing.storage_wrappers import (
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
)
from kubesched.testing.wrappers import make_pod

# --- decoding --------------------------------------------------------------------------


def test_pod_volumes_keep_claims_ephemeral_disks_and_other_sources_by_name() -> None:
    pod = (
        make_pod("web")
        .pvc("data", name="v1", read_only=True)
        .ephemeral("scratch")
        .volume({"name": "pd", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": True}})
        .volume({"name": "ceph", "rbd": {"monitors": ["m1"], "image": "img"}})
        .volume({"name": "inline", "csi": {"driver": "csi.example.com"}})
        .volume({"name": "s", "secret": {"secretName": "token"}})
        .obj()
    )
    kinds = [(v.name, v.kind) for v in pod.volumes]
    assert kinds == [
        ("v1", "persistentVolumeClaim"),
        ("scratch", "ephemeral"),
        ("pd", "gcePersistentDisk"),
        ("ceph", "rbd"),
        ("inline", "csi"),
        ("s", "secret"),
    ]
    assert pod.volumes[0].claim_name == "data" and pod.volumes[0].read_only
    assert pod.volumes[2].source == DiskSource("kubernetes.io/gce-pd", "disk-1", read_only=True)
    # The API server defaults an RBD volume's pool to "rbd".
    assert pod.volumes[3].source == RBDSource(("m1",), "img", "rbd")
    assert pod.volumes[4].source == CSISource("csi.example.com")
    assert pod.volumes[5].source is None
    assert pod_claim_names(pod.name, pod.volumes) == ["data", "web-scratch"]


def test_a_claim_volume_without_a_claim_name_is_refused_with_its_path() -> None:
    raw = make_pod("p").volume({"name": "v", "persistentVolumeClaim": {}}).dict()
    with pytest.raises(ObjectError) as err:
        from kubesched.objects.pod import Pod

        Pod.from_dict(raw)
    assert err.value.path == "spec.volumes[0].persistentVolumeClaim.claimName"


def test_persistent_volume_fields_and_defaults() -> None:
    pv = (
        make_pv("pv-1")
        .capacity("10Gi")
        .access_modes("ReadWriteOnce", "ReadOnlyMany")
        .storage_class("fast")
        .claim_ref("data", "prod", uid="u-1")
        .node_affinity_in("topology.kubernetes.io/zone", "a")
        .csi("ebs.csi.aws.com", "vol-1")
        .obj()
    )
    assert pv.capacity == make_pv().capacity("10240Mi").obj().capacity
    assert pv.access_modes == ("ReadWriteOnce", "ReadOnlyMany")
    assert pv.volume_mode == "Filesystem" and pv.reclaim_policy == "Retain"
    assert pv.claim_ref is not None and pv.claim_ref.key == "prod/data"
    assert pv.source_kind == "csi"
    assert pv.source == CSISource("ebs.csi.aws.com", "vol-1")
    assert volume_node_affinity_matches(pv, {"topology.kubernetes.io/zone": "a"})
    assert not volume_node_affinity_matches(pv, {"topology.kubernetes.io/zone": "b"})


def test_the_beta_class_annotation_wins_over_the_spec_field() -> None:
    pv = (
        make_pv()
        .storage_class("spec-class")
        .annotation("volume.beta.kubernetes.io/storage-class", "")
        .obj()
    )
    assert pv.storage_class_name == ""
    pvc = make_pvc().storage_class("spec-class").obj()
    assert pvc.storage_class_name == "spec-class"
    assert make_pvc().obj().spec_storage_class_name is None
    assert make_pvc().obj().storage_class_name == ""


def test_claim_fields() -> None:
    pvc = (
        make_pvc("data")
        .namespace("prod")
        .request("5Gi")
        .access_modes("ReadWriteOncePod")
        .selector({"tier": "gold"})
        .volume_name("pv-1")
        .annotation("pv.kubernetes.io/bind-completed", "yes")
        .annotation("volume.kubernetes.io/selected-node", "n1")
        .obj()
    )
    assert pvc.key == "prod/data" and pvc.is_bound and pvc.is_fully_bound
    assert pvc.selected_node == "n1"
    assert pvc.selector is not None and pvc.selector.matches({"tier": "gold"})
    assert not make_pvc().volume_name("pv-1").obj().is_fully_bound


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (make_pv().dict() | {"spec": {"capacity": {"storage": "ten"}}}, "spec.capacity.storage"),
        (make_pv().dict() | {"spec": {"accessModes": "ReadWriteOnce"}}, "spec.accessModes"),
        (make_pvc().dict() | {"spec": {"storageClassName": 3}}, "spec.storageClassName"),
        (
            make_pvc().dict() | {"spec": {"selector": {"matchLabels": {"a": 1}}}},
            "spec.selector.matchLabels[a]",
        ),
    ],
    ids=["bad-capacity", "modes-not-a-list", "class-not-a-string", "bad-selector"],
)
def test_decoding_errors_name_the_object_and_field(raw: dict[str, Any], path: str) -> None:
    decode = PersistentVolume if raw["kind"] == "PersistentVolume" else PersistentVolumeClaim
    with pytest.raises(ObjectError) as err:
        decode.from_dict(raw)
    assert err.value.path == path
    assert err.value.where.startswith(raw["kind"])


def test_storage_class_and_csi_node_defaults() -> None:
    sc = StorageClass.from_dict({"metadata": {"name": "std"}, "provisioner": "p"})
    # The binding mode stays unset (the API server would have set it; VolumeZone says so).
    assert (sc.volume_binding_mode, sc.reclaim_policy, sc.is_default) == ("", "Delete", False)
    assert not sc.waits_for_first_consumer
    wffc = make_storage_class("wffc").binding_mode("WaitForFirstConsumer").default()
    wffc = wffc.allowed_topology("zone", "a", "b")
    cls = wffc.obj()
    assert cls.waits_for_first_consumer and cls.is_default
    assert cls.allowed_topologies[0].matches({"zone": "b"})
    assert not cls.allowed_topologies[0].matches({"zone": "c"})
    node = make_csi_node("n1").driver("ebs", 25).driver("efs").migrated("kubernetes.io/aws-ebs")
    csi_node: CSINode = node.obj()
    ebs, efs = csi_node.driver("ebs"), csi_node.driver("efs")
    assert ebs is not None and ebs.allocatable_count == 25
    assert efs is not None and efs.allocatable_count is None
    assert csi_node.migrated_plugins == {"kubernetes.io/aws-ebs"}


# --- matching --------------------------------------------------------------------------

ZONE = "topology.kubernetes.io/zone"


def _pv(name: str, size: str, **kw: Any) -> PersistentVolume:
    w = make_pv(name).capacity(size).access_modes(*kw.get("modes", ("ReadWriteOnce",)))
    if "cls" in kw:
        w.storage_class(kw["cls"])
    if "label" in kw:
        w.label(*kw["label"])
    if "mode" in kw:
        w.volume_mode(kw["mode"])
    if "ref" in kw:
        w.claim_ref(*kw["ref"])
    if "zone" in kw:
        w.node_affinity_in(ZONE, kw["zone"])
    if "phase" in kw:
        w.phase(kw["phase"])
    if kw.get("deleting"):
        w.terminating()
    return w.obj()


def _claim(size: str = "1Gi", **kw: Any) -> PersistentVolumeClaim:
    w = make_pvc("data").request(size).access_modes(*kw.get("modes", ("ReadWriteOnce",)))
    if "cls" in kw:
        w.storage_class(kw["cls"])
    if "selector" in kw:
        w.selector(kw["selector"])
    if "mode" in kw:
        w.volume_mode(kw["mode"])
    return w.obj()


MATCH_CASES = [
    (
        "smallest-fitting-volume",
        _claim("2Gi"),
        [_pv("big", "10Gi"), _pv("fit", "3Gi"), _pv("small", "1Gi")],
        None,
        "fit",
    ),
    ("first-of-equal-sizes", _claim("1Gi"), [_pv("a", "2Gi"), _pv("b", "2Gi")], None, "a"),
    ("too-small-for-any", _claim("20Gi"), [_pv("a", "10Gi")], None, None),
    (
        "class-must-match",
        _claim(cls="gold"),
        [_pv("plain", "1Gi"), _pv("gold", "5Gi", cls="gold")],
        None,
        "gold",
    ),
    ("no-class-wants-no-class", _claim(), [_pv("gold", "1Gi", cls="gold")], None, None),
    (
        "selector-must-match",
        _claim(selector={"t": "x"}),
        [_pv("a", "1Gi"), _pv("b", "9Gi", label=("t", "x"))],
        None,
        "b",
    ),
    (
        "volume-mode-must-match",
        _claim(mode="Block"),
        [_pv("fs", "1Gi"), _pv("blk", "5Gi", mode="Block")],
        None,
        "blk",
    ),
    (
        "bound-elsewhere-is-skipped",
        _claim(),
        [_pv("a", "1Gi", ref=("other",)), _pv("b", "5Gi")],
        None,
        "b",
    ),
    (
        "prebound-wins-over-smaller",
        _claim(),
        [_pv("small", "1Gi"), _pv("mine", "9Gi", ref=("data",), phase="Bound")],
        None,
        "mine",
    ),
    (
        "not-available-is-skipped",
        _claim(),
        [_pv("a", "1Gi", phase="Released"), _pv("b", "5Gi")],
        None,
        "b",
    ),
    ("deleting-is-skipped", _claim(), [_pv("a", "1Gi", deleting=True)], None, None),
    (
        "node-affinity-on-scheduler-path",
        _claim(),
        [_pv("za", "1Gi", zone="a"), _pv("zb", "5Gi", zone="b")],
        {ZONE: "b"},
        "zb",
    ),
    (
        "prebound-unreachable-means-none",
        _claim(),
        [_pv("mine", "1Gi", ref=("data",), zone="a"), _pv("zb", "5Gi", zone="b")],
        {ZONE: "b"},
        None,
    ),
    (
        "access-modes-on-scheduler-path",
        _claim(modes=("ReadWriteMany",)),
        [_pv("rwo", "1Gi"), _pv("rwx", "5Gi", modes=("ReadWriteMany",))],
        {},
        "rwx",
    ),
    (
        "access-modes-not-checked-without-node",
        _claim(modes=("ReadWriteMany",)),
        [_pv("rwo", "1Gi")],
        None,
        "rwo",
    ),
]


@pytest.mark.parametrize(
    ("claim", "volumes", "node", "want"),
    [c[1:] for c in MATCH_CASES],
    ids=[c[0] for c in MATCH_CASES],
)
def test_find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: list[PersistentVolume],
    node: dict[str, str] | None,
    want: str | None,
) -> None:
    found = find_matching_volume(claim, volumes, node)
    assert (found.name if found else None) == want


def test_excluded_volumes_and_delay_binding() -> None:
    vols = [_pv("a", "1Gi"), _pv("b", "2Gi"), _pv("mine", "5Gi", ref=("data",))]
    claim = _claim()
    found = find_matching_volume(claim, vols[:2], {}, excluded={"a"})
    assert found is not None and found.name == "b"
    # The PV controller leaves unbound volumes of a delayed claim to the scheduler, but
    # still honours a pre-bound one.
    assert find_matching_volume(claim, vols[:2], delay_binding=True) is None
    found = find_matching_volume(claim, vols, delay_binding=True)
    assert found is not None and found.name == "mine"


def test_the_pv_controller_searches_the_fewest_access_modes_first() -> None:
    claim = _claim("1Gi")
    vols = [
        _pv("rwo-rox-small", "1Gi", modes=("ReadWriteOnce", "ReadOnlyMany")),
        _pv("rwo-big", "8Gi"),
        _pv("rwx-only", "1Gi", modes=("ReadWriteMany",)),
    ]
    found = find_best_match_for_claim(claim, vols)
    assert found is not None and found.name == "rwo-big"
    assert find_best_match_for_claim(_claim(modes=("ReadWriteOncePod",)), vols) is None


def test_bound_to_claim_checks_the_uid_only_when_the_ref_has_one() -> None:
    claim = make_pvc("data").uid("u-1").obj()
    assert is_volume_bound_to_claim(make_pv().claim_ref("data").obj(), claim)
    assert is_volume_bound_to_claim(make_pv().claim_ref("data", uid="u-1").obj(), claim)
    assert not is_volume_bound_to_claim(make_pv().claim_ref("data", uid="u-2").obj(), claim)
    assert not is_volume_bound_to_claim(make_pv().claim_ref("data", "other").obj(), claim)


def test_delay_binding_mode_reads_the_class() -> None:
    classes = {
        "wffc": make_storage_class("wffc").binding_mode("WaitForFirstConsumer").obj(),
        "now": make_storage_class("now").obj(),
    }
    assert is_delay_binding_mode(_claim(cls="wffc"), classes.get)
    assert not is_delay_binding_mode(_claim(cls="now"), classes.get)
    assert not is_delay_binding_mode(_claim(cls="missing"), classes.get)
    assert not is_delay_binding_mode(_claim(), classes.get)


def test_an_ephemeral_claim_must_be_controlled_by_its_pod() -> None:
    owned = make_pvc("web-scratch").owner("Pod", "web", "pod-uid").obj()
    assert claim_is_for_pod("default", "web", "pod-uid", owned) is None
    stranger = make_pvc("web-scratch").obj()
    assert claim_is_for_pod("default", "web", "pod-uid", stranger) == (
        "PVC default/web-scratch was not created for pod default/web (pod is not owner)"
    )


def test_the_change_log_names_what_changed_and_forgets_what_is_too_old() -> None:
    from kubesched.objects.storage.changes import ChangeLog, change_key
    from kubesched.testing.storage_wrappers import make_volume_attachment

    log = ChangeLog(limit=3)
    assert log.since(0) == ()
    log.record(change_key(make_pvc("data").obj()))
    log.record(change_key(make_pv("pv-1").obj()))
    log.record(change_key(make_volume_attachment("va", "d", "node-1")))
    assert log.since(1) == ["PersistentVolume/pv-1", "VolumeAttachment@node-1"]
    assert log.since(0) == [
        "PersistentVolumeClaim/default/data",
        "PersistentVolume/pv-1",
        "VolumeAttachment@node-1",
    ]
    log.record(change_key(make_storage_class("fast").obj()), "StorageClass/slow")
    assert log.since(3) == ["StorageClass/fast", "StorageClass/slow"]
    # Four changes, three remembered: version 0 is out of reach.
    assert log.since(0) is None
    assert log.since(log.version) == ()
