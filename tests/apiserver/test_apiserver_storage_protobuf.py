"""Protobuf bodies of the storage kinds, as client-go's typed clients send them (a CSI
provisioner creating a PersistentVolume, an attacher writing a VolumeAttachment's status).

The bodies are written byte by byte here from release-1.34's ``generated.proto`` field
numbers, independently of the server's tables, so a wrong number in a table fails."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: bytes | str) -> bytes:
    """A length-delimited field (a string or an embedded message)."""
    raw = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(raw)) + raw


def flag(number: int, value: bool) -> bytes:
    """A varint field holding a bool."""
    return _varint(number << 3) + _varint(int(value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """runtime.Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2} after the magic prefix."""
    type_meta = field(1, api_version) + field(2, kind)
    return MAGIC + field(1, type_meta) + field(2, raw)


def meta(name: str) -> bytes:
    return field(1, field(1, name))  # ObjectMeta.name = 1


def send(server, method, path, raw):
    request = urllib.request.Request(server.url + path, data=raw, method=method)
    request.add_header("Content-Type", PROTOBUF)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_a_csi_persistent_volume_created_from_protobuf(apiserver):
    capacity = field(1, field(1, "storage") + field(2, field(1, "5Gi")))  # map entry, Quantity
    csi = field(22, field(1, "hostpath.csi.k8s.io") + field(2, "vol-1") + field(4, "ext4"))
    requirement = field(1, "topology.kubernetes.io/zone") + field(2, "In") + field(3, "zone-a")
    affinity = field(9, field(1, field(1, field(1, requirement))))
    spec = (
        capacity
        + field(2, csi)  # the inlined PersistentVolumeSource
        + field(3, "ReadWriteOnce")
        + field(4, field(1, "PersistentVolumeClaim") + field(2, "default") + field(3, "data"))
        + field(5, "Delete")
        + field(6, "standard")
        + field(8, "Block")
        + affinity
    )
    body = envelope("v1", "PersistentVolume", meta("pv-from-proto") + field(2, spec))
    code, obj = send(apiserver, "POST", "/api/v1/persistentvolumes", body)
    assert code == 201, obj
    spec = obj["spec"]
    assert spec["capacity"] == {"storage": "5Gi"}
    assert spec["csi"] == {
        "driver": "hostpath.csi.k8s.io",
        "volumeHandle": "vol-1",
        "fsType": "ext4",
    }
    assert spec["accessModes"] == ["ReadWriteOnce"]
    assert spec["claimRef"] == {
        "kind": "PersistentVolumeClaim",
        "namespace": "default",
        "name": "data",
    }
    assert (spec["persistentVolumeReclaimPolicy"], spec["storageClassName"]) == (
        "Delete",
        "standard",
    )
    assert spec["volumeMode"] == "Block"
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}
            ]
        }
    ]
    assert obj["status"]["phase"] == "Pending"


def test_a_claim_and_a_storage_class_from_protobuf(apiserver):
    topology = field(1, field(1, "topology.kubernetes.io/zone") + field(2, "a") + field(2, "b"))
    storage_class = (
        meta("proto-class")
        + field(2, "example.com/disk")
        + field(3, field(1, "type") + field(2, "ssd"))
        + field(4, "Retain")
        + flag(6, True)
        + field(7, "WaitForFirstConsumer")
        + field(8, topology)
    )
    body = envelope("storage.k8s.io/v1", "StorageClass", storage_class)
    code, obj = send(apiserver, "POST", "/apis/storage.k8s.io/v1/storageclasses", body)
    assert code == 201, obj
    assert obj["parameters"] == {"type": "ssd"}
    assert (obj["reclaimPolicy"], obj["volumeBindingMode"]) == ("Retain", "WaitForFirstConsumer")
    assert obj["allowVolumeExpansion"] is True
    assert obj["allowedTopologies"] == [
        {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}
    ]
    requests = field(2, field(1, "storage") + field(2, field(1, "1Gi")))  # requests = 2
    claim_spec = field(1, "ReadWriteOnce") + field(2, requests) + field(5, "proto-class")
    body = envelope("v1", "PersistentVolumeClaim", meta("proto-claim") + field(2, claim_spec))
    code, obj = send(apiserver, "POST", "/api/v1/namespaces/default/persistentvolumeclaims", body)
    assert code == 201, obj
    assert obj["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert obj["spec"]["storageClassName"] == "proto-class"


def test_csi_node_driver_and_attachment_status_from_protobuf(apiserver):
    node_driver = (
        field(1, "hostpath.csi.k8s.io")
        + field(2, "node-1")
        + field(3, "topology.kubernetes.io/zone")
        + field(4, _varint(1 << 3) + _varint(16))  # allocatable.count = 16
    )
    body = envelope(
        "storage.k8s.io/v1", "CSINode", meta("node-1") + field(2, field(1, node_driver))
    )
    code, obj = send(apiserver, "POST", "/apis/storage.k8s.io/v1/csinodes", body)
    assert code == 201, obj
    assert obj["spec"]["drivers"] == [
        {
            "name": "hostpath.csi.k8s.io",
            "nodeID": "node-1",
            "topologyKeys": ["topology.kubernetes.io/zone"],
            "allocatable": {"count": 16},
        }
    ]
    driver_spec = flag(1, False) + flag(2, True) + field(3, "Persistent") + field(3, "Ephemeral")
    body = envelope("storage.k8s.io/v1", "CSIDriver", meta("proto.csi") + field(2, driver_spec))
    code, obj = send(apiserver, "POST", "/apis/storage.k8s.io/v1/csidrivers", body)
    assert code == 201, obj
    assert (obj["spec"]["attachRequired"], obj["spec"]["podInfoOnMount"]) == (False, True)
    assert obj["spec"]["volumeLifecycleModes"] == ["Persistent", "Ephemeral"]

    spec = (
        field(1, "hostpath.csi.k8s.io") + field(2, field(1, "pv-from-proto")) + field(3, "node-1")
    )
    body = envelope("storage.k8s.io/v1", "VolumeAttachment", meta("va-proto") + field(2, spec))
    code, obj = send(apiserver, "POST", "/apis/storage.k8s.io/v1/volumeattachments", body)
    assert code == 201, obj
    assert obj["spec"]["source"] == {"persistentVolumeName": "pv-from-proto"}
    resource_version = obj["metadata"]["resourceVersion"]
    metadata = field(1, "va-proto") + field(6, resource_version)  # ObjectMeta.resourceVersion = 6
    status = flag(1, True) + field(2, field(1, "devicePath") + field(2, "/dev/sdb"))
    body = envelope(
        "storage.k8s.io/v1",
        "VolumeAttachment",
        field(1, metadata) + field(2, spec) + field(3, status),
    )
    code, obj = send(
        apiserver, "PUT", "/apis/storage.k8s.io/v1/volumeattachments/va-proto/status", body
    )
    assert code == 200, obj
    assert obj["status"] == {"attached": True, "attachmentMetadata": {"devicePath": "/dev/sdb"}}
