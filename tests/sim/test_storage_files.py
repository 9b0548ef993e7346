"""Cluster files carry the storage objects: PersistentVolumes, claims, StorageClasses and
the CSI objects load into typed views (defaulted, validated, decoded once), reach the
plugins through the simulator's lister, and are named in errors like every other kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.framework.handle import StaticClusterLister
from kubesched.objects.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.sim.files import InputError, load_objects
from kubesched.testing import make_node
from kubesched.testing.storage_wrappers import (
    make_csi_driver,
    make_csi_node,
    make_csi_storage_capacity,
    make_pv,
    make_pvc,
    make_storage_class,
    make_volume_attachment,
)


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def storage_objects() -> list[dict[str, Any]]:
    return [
        make_storage_class("zonal").binding_mode("WaitForFirstConsumer").dict(),
        make_csi_driver("ebs.csi.aws.com").dict(),
        make_csi_node("n1").driver("ebs.csi.aws.com", 25).dict(),
        make_pv("pv-1")
        .capacity("10Gi")
        .access_modes("ReadWriteOnce")
        .csi("ebs.csi.aws.com", "v1")
        .dict(),
        make_pvc("data").request("1Gi").access_modes("ReadWriteOnce").storage_class("zonal").dict(),
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIStorageCapacity",
            "metadata": {"name": "cap", "namespace": "kube-system"},
            "storageClassName": "zonal",
            "capacity": "100Gi",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "VolumeAttachment",
            "metadata": {"name": "va-1"},
            "spec": {
                "attacher": "ebs.csi.aws.com",
                "nodeName": "n1",
                "source": {"persistentVolumeName": "pv-1"},
            },
        },
    ]


def test_storage_kinds_load_and_reach_the_lister(tmp_path: Path) -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").dict()
    path = write(tmp_path / "cluster.yaml", node, *storage_objects())
    objects = load_objects(path)
    assert not objects.warnings and not objects.ignored_kinds
    assert [type(o).__name__ for o in objects.storage] == [
        "StorageClass",
        "CSIDriver",
        "CSINode",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "CSIStorageCapacity",
        "VolumeAttachment",
    ]
    lister = StaticClusterLister(storage=objects.storage)
    pvc = lister.persistent_volume_claim("default", "data")
    assert isinstance(pvc, PersistentVolumeClaim) and pvc.storage_class_name == "zonal"
    cls = lister.storage_class("zonal")
    assert isinstance(cls, StorageClass) and cls.waits_for_first_consumer
    pv = lister.persistent_volume("pv-1")
    assert isinstance(pv, PersistentVolume) and pv.source_kind == "csi"
    csi_node = lister.csi_node("n1")
    assert csi_node is not None and csi_node.drivers[0].allocatable_count == 25
    assert lister.csi_driver("ebs.csi.aws.com") is not None
    assert [c.namespace for c in lister.csi_storage_capacities()] == ["kube-system"]
    assert [a.persistent_volume_name for a in lister.volume_attachments("n1")] == ["pv-1"]
    assert lister.volume_attachments("n2") == []


def valid_claim(name: str) -> dict[str, Any]:
    return make_pvc(name).request("1Gi").access_modes("ReadWriteOnce").dict()


def test_a_bad_storage_object_is_named_with_its_field(tmp_path: Path) -> None:
    bad_pv = make_pv("pv-1").access_modes("ReadWriteOnce").csi("csi.example.com", "h").dict()
    bad_pv["spec"]["capacity"] = {"storage": "lots"}
    path = write(tmp_path / "cluster.yaml", valid_claim("data"), bad_pv)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{path}: documents[1]: ")
    assert "PersistentVolume" in problem and "spec.capacity" in problem


def test_duplicate_storage_objects_are_refused(tmp_path: Path) -> None:
    claim = valid_claim("data")
    path = write(tmp_path / "cluster.yaml", claim, claim)
    with pytest.raises(InputError) as caught:
        load_objects(path)
    assert caught.value.problems == (
        f'{path}: PersistentVolumeClaim "default/data": Duplicate value: '
        "a PersistentVolumeClaim of that name",
    )


def test_the_simulators_lister_replaces_and_deletes_by_name() -> None:
    lister = StaticClusterLister(storage=[make_pvc("data").obj()])
    bound = make_pvc("data").volume_name("pv-1").obj()
    lister.put(bound)
    assert lister.persistent_volume_claim("default", "data") == bound
    assert len(lister.persistent_volume_claims()) == 1
    lister.put(make_pv("pv-1").obj())
    lister.put(make_csi_storage_capacity("c", "zonal", "1Gi", {"zone": "a"}))
    lister.put(make_volume_attachment("va", "d", "n1", "pv-1"))
    lister.delete(bound)
    assert lister.persistent_volume_claim("default", "data") is None
    assert [pv.name for pv in lister.persistent_volumes()] == ["pv-1"]
    capacity = lister.csi_storage_capacities()[0]
    assert capacity.node_topology is not None and capacity.node_topology.matches({"zone": "a"})
