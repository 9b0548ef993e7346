"""The CSI kinds of storage.k8s.io/v1 served (issue 15): CSINode, CSIDriver,
CSIStorageCapacity, VolumeAttachment (with its status) and VolumeAttributesClass —
defaults, validation and update rules with upstream's paths and messages, read back with
the official client, and their Tables through kubectl."""

from __future__ import annotations

import shutil

import pytest
from apiserver_builders import SUBDOMAIN, call
from kubectl_helpers import kubectl_runner
from kubernetes import client, config

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
GROUP = "/apis/storage.k8s.io/v1"
NODES = f"{GROUP}/csinodes"
DRIVERS = f"{GROUP}/csidrivers"
CAPACITIES = f"{GROUP}/namespaces/default/csistoragecapacities"
ATTACHMENTS = f"{GROUP}/volumeattachments"
ATTRIBUTES = f"{GROUP}/volumeattributesclasses"
MERGE = "application/merge-patch+json"


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def kubectl(apiserver, tmp_path_factory):
    run = kubectl_runner(apiserver.kubeconfig_path, tmp_path_factory.mktemp("kubectl-cache"))
    return lambda *args: run(*args).stdout.splitlines()


def causes_of(server, method, path, body, content_type="application/json"):
    code, status = call(server, method, path, body, content_type)
    assert (code, status.get("reason")) == (422, "Invalid"), status
    return [(c["reason"], c.get("field"), c["message"]) for c in status["details"]["causes"]]


def driver(name, node_id="node-1", **fields):
    return {"name": name, "nodeID": node_id, **fields}


# -- CSINode --------------------------------------------------------------------------------


def test_csi_node_drivers_are_validated(apiserver):
    body = {
        "metadata": {"name": "node-bad"},
        "spec": {
            "drivers": [
                driver("example.com", topologyKeys=["zone", "zone", "bad key"]),
                driver("example.com", node_id="", allocatable={"count": -1}),
            ]
        },
    }
    causes = causes_of(apiserver, "POST", NODES, body)
    assert [c[:2] for c in causes] == [
        ("FieldValueDuplicate", "spec.drivers[0]"),
        ("FieldValueInvalid", "spec.drivers[0]"),
        ("FieldValueRequired", "spec.drivers[1].nodeID"),
        ("FieldValueInvalid", "spec.drivers[1].allocatable.count"),
        ("FieldValueDuplicate", "spec.drivers[1].name"),
    ]
    assert causes[0][2] == 'Duplicate value: "zone"'
    assert causes[3][2] == "Invalid value: -1: must be greater than or equal to 0"


def test_csi_node_drivers_keep_all_but_their_allocatable_count(apiserver, api, kubectl):
    body = {
        "metadata": {"name": "node-1"},
        "spec": {"drivers": [driver("hostpath.csi.k8s.io", allocatable={"count": 4})]},
    }
    assert call(apiserver, "POST", NODES, body)[0] == 201
    node = client.StorageV1Api(api).read_csi_node("node-1")
    assert node.spec.drivers[0].allocatable.count == 4
    body["spec"]["drivers"][0]["allocatable"] = {"count": 8}
    body["spec"]["drivers"].append(driver("disk.example.com"))
    code, obj = call(apiserver, "PUT", f"{NODES}/node-1", body)
    assert (code, obj["spec"]["drivers"][0]["allocatable"]) == (200, {"count": 8})
    body["spec"]["drivers"][0]["nodeID"] = "node-2"
    causes = causes_of(apiserver, "PUT", f"{NODES}/node-1", body)
    assert [c[:2] for c in causes] == [("FieldValueInvalid", "spec.drivers")]
    assert causes[0][2].endswith(": field is immutable")
    out = kubectl("get", "csinode", "node-1")
    assert out[0].split() == ["NAME", "DRIVERS", "AGE"]
    assert out[1].split()[:2] == ["node-1", "2"]


# -- CSIDriver ------------------------------------------------------------------------------


def test_csi_driver_defaults_table_and_immutable_fields(apiserver, api, kubectl):
    storage = client.StorageV1Api(api)
    created = storage.create_csi_driver(
        client.V1CSIDriver(metadata=client.V1ObjectMeta(name="hostpath.csi.k8s.io"), spec={})
    )
    spec = created.spec
    assert (spec.attach_required, spec.pod_info_on_mount, spec.storage_capacity) == (
        True,
        False,
        False,
    )
    assert (spec.fs_group_policy, spec.volume_lifecycle_modes) == (
        "ReadWriteOnceWithFSType",
        ["Persistent"],
    )
    assert (spec.requires_republish, spec.se_linux_mount) == (False, False)
    out = kubectl("get", "csidriver", "hostpath.csi.k8s.io")
    assert out[0].split() == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
        "AGE",
    ]
    assert out[1].split()[:7] == [
        "hostpath.csi.k8s.io",
        "true",
        "false",
        "false",
        "<unset>",
        "false",
        "Persistent",
    ]
    causes = causes_of(
        apiserver,
        "PATCH",
        f"{DRIVERS}/hostpath.csi.k8s.io",
        {"spec": {"attachRequired": False, "volumeLifecycleModes": ["Ephemeral"]}},
        MERGE,
    )
    assert causes == [
        ("FieldValueInvalid", "spec.attachedRequired", "Invalid value: false: field is immutable"),
        (
            "FieldValueInvalid",
            "spec.volumeLifecycleModes",
            'Invalid value: ["Ephemeral"]: field is immutable',
        ),
    ]
    code, patched = call(
        apiserver,
        "PATCH",
        f"{DRIVERS}/hostpath.csi.k8s.io",
        {"spec": {"storageCapacity": True}},
        MERGE,
    )
    assert (code, patched["spec"]["storageCapacity"]) == (200, True)


def test_csi_driver_spec_rules(apiserver):
    body = {
        "metadata": {"name": "bad.example.com"},
        "spec": {
            "fsGroupPolicy": "Sometimes",
            "volumeLifecycleModes": ["Forever"],
            "tokenRequests": [
                {"audience": "a", "expirationSeconds": 60},
                {"audience": "a"},
            ],
            "nodeAllocatableUpdatePeriodSeconds": 5,
        },
    }
    causes = causes_of(apiserver, "POST", DRIVERS, body)
    assert causes == [
        (
            "FieldValueNotSupported",
            "spec.fsGroupPolicy",
            'Unsupported value: "Sometimes": supported values: "File", "None", '
            '"ReadWriteOnceWithFSType"',
        ),
        (
            "FieldValueInvalid",
            "spec.tokenRequests[0].expirationSeconds",
            "Invalid value: 60: may not specify a duration less than 10 minutes",
        ),
        ("FieldValueDuplicate", "spec.tokenRequests[1].audience", 'Duplicate value: "a"'),
        (
            "FieldValueNotSupported",
            "spec.volumeLifecycleModes",
            'Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
        ),
        (
            "FieldValueInvalid",
            "spec.nodeAllocatableUpdatePeriodSeconds",
            "Invalid value: 5: must be greater than or equal to 10 seconds",
        ),
    ]


# -- CSIStorageCapacity ---------------------------------------------------------------------


def test_csi_storage_capacity_rules_and_table(apiserver, kubectl):
    body = {
        "metadata": {"name": "cap-a"},
        "storageClassName": "standard",
        "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
        "capacity": "100Gi",
    }
    code, obj = call(apiserver, "POST", CAPACITIES, body)
    assert (code, obj["capacity"]) == (201, "100Gi")
    out = kubectl("get", "csistoragecapacities", "cap-a")
    assert out[0].split() == ["NAME", "STORAGECLASSNAME", "CAPACITY"]
    assert out[1].split() == ["cap-a", "standard", "100Gi"]
    causes = causes_of(
        apiserver,
        "PATCH",
        f"{CAPACITIES}/cap-a",
        {"storageClassName": "fast", "nodeTopology": {"matchLabels": {"zone": "b"}}},
        MERGE,
    )
    assert [c[:2] for c in causes] == [
        ("FieldValueInvalid", "nodeTopology"),
        ("FieldValueInvalid", "storageClassName"),
    ]
    assert causes[1][2] == 'Invalid value: "fast": field is immutable'
    code, obj = call(apiserver, "PATCH", f"{CAPACITIES}/cap-a", {"capacity": "50Gi"}, MERGE)
    assert (code, obj["capacity"]) == (200, "50Gi")
    causes = causes_of(
        apiserver,
        "POST",
        CAPACITIES,
        {"metadata": {"name": "cap-b"}, "storageClassName": "", "capacity": "-1"},
    )
    assert causes == [
        ("FieldValueInvalid", "storageClassName", f'Invalid value: "": {SUBDOMAIN}'),
        (
            "FieldValueInvalid",
            "capacity",
            'Invalid value: "-1": must be greater than or equal to 0',
        ),
    ]


# -- VolumeAttachment -----------------------------------------------------------------------


def attachment(name, **spec):
    body = {
        "attacher": "hostpath.csi.k8s.io",
        "nodeName": "node-1",
        "source": {"persistentVolumeName": "pv-1"},
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": body}


def test_volume_attachment_status_and_immutable_spec(apiserver, api, kubectl):
    body = attachment("va-1")
    body["status"] = {"attached": True}  # the attacher's to say, not the creator's
    code, obj = call(apiserver, "POST", ATTACHMENTS, body)
    assert (code, obj["status"]) == (201, {"attached": False})
    storage = client.StorageV1Api(api)
    storage.patch_volume_attachment_status(
        "va-1", {"status": {"attached": True, "attachmentMetadata": {"devicePath": "/dev/x"}}}
    )
    read = storage.read_volume_attachment("va-1")
    assert (read.status.attached, read.status.attachment_metadata) == (
        True,
        {"devicePath": "/dev/x"},
    )
    out = kubectl("get", "volumeattachment", "va-1")
    assert out[0].split() == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert out[1].split()[:5] == ["va-1", "hostpath.csi.k8s.io", "pv-1", "node-1", "true"]
    causes = causes_of(
        apiserver, "PATCH", f"{ATTACHMENTS}/va-1", {"spec": {"nodeName": "node-2"}}, MERGE
    )
    assert [c[:2] for c in causes] == [("FieldValueInvalid", "spec")]
    assert causes[0][2].endswith(": field is immutable")
    code, status = call(
        apiserver,
        "PATCH",
        f"{ATTACHMENTS}/va-1/status",
        {"status": {"attachError": {"message": "x", "errorCode": -1}}},
        MERGE,
    )
    assert code == 422
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be between 0 and 2147483647, inclusive",
            "field": "status.attachError.errorCode",
        }
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"source": {}},
            [
                (
                    "FieldValueRequired",
                    "spec.source",
                    "Required value: must specify exactly one of inlineVolumeSpec and "
                    "persistentVolumeName",
                )
            ],
            id="no-source",
        ),
        pytest.param(
            {"source": {"persistentVolumeName": "pv-1", "inlineVolumeSpec": {}}},
            [
                (
                    "FieldValueForbidden",
                    "spec.source",
                    "Forbidden: must specify exactly one of inlineVolumeSpec and "
                    "persistentVolumeName",
                )
            ],
            id="two-sources",
        ),
        pytest.param(
            {"attacher": "", "nodeName": "Node_1"},
            [
                ("FieldValueRequired", "spec.attacher", "Required value"),
                ("FieldValueInvalid", "spec.nodeName", f'Invalid value: "Node_1": {SUBDOMAIN}'),
                ("FieldValueRequired", "spec.attacher", "Required value"),
                ("FieldValueInvalid", "spec.attacher", f'Invalid value: "": {SUBDOMAIN}'),
            ],
            id="attacher-and-node-name",
        ),
        pytest.param(
            {
                "source": {
                    "inlineVolumeSpec": {
                        "accessModes": ["ReadWriteOnce"],
                        "capacity": {"storage": "1Gi"},
                        "persistentVolumeReclaimPolicy": "Delete",
                        "hostPath": {"path": "/mnt"},
                    }
                }
            },
            [
                (
                    "FieldValueForbidden",
                    "spec.source.inlineVolumeSpec.capacity",
                    "Forbidden: may not be specified in the context of inline volumes",
                ),
                (
                    "FieldValueRequired",
                    "spec.source.inlineVolumeSpec.csi",
                    "Required value: has to be specified in the context of inline volumes",
                ),
                (
                    "FieldValueForbidden",
                    "spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy",
                    "Forbidden: may only be Retain in the context of inline volumes",
                ),
            ],
            id="inline-volume-rules",
        ),
    ],
)
def test_volume_attachment_spec_rules(apiserver, spec, expected):
    assert causes_of(apiserver, "POST", ATTACHMENTS, attachment("va-bad", **spec)) == expected


# -- VolumeAttributesClass ------------------------------------------------------------------


def test_volume_attributes_class_needs_parameters_and_keeps_them(apiserver, kubectl):
    causes = causes_of(
        apiserver, "POST", ATTRIBUTES, {"metadata": {"name": "gold"}, "driverName": "pd.csi"}
    )
    assert causes == [
        (
            "FieldValueRequired",
            "parameters",
            "Required value: must contain at least one key/value pair",
        )
    ]
    body = {"metadata": {"name": "gold"}, "driverName": "pd.csi", "parameters": {"iops": "3000"}}
    assert call(apiserver, "POST", ATTRIBUTES, body)[0] == 201
    causes = causes_of(
        apiserver,
        "PATCH",
        f"{ATTRIBUTES}/gold",
        {"driverName": "other.csi", "parameters": {"iops": "9000"}},
        MERGE,
    )
    assert causes == [
        ("FieldValueForbidden", "driverName", "Forbidden: updates to driverName are forbidden."),
        ("FieldValueForbidden", "parameters", "Forbidden: updates to parameters are forbidden."),
    ]
    out = kubectl("get", "vac", "gold")
    assert out[0].split() == ["NAME", "DRIVERNAME", "AGE"]
    assert out[1].split()[:2] == ["gold", "pd.csi"]
