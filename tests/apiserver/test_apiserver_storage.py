"""Served storage kinds (issue 15): PersistentVolumes, PersistentVolumeClaims and
StorageClasses — the documentation's example applied with kubectl and read back with the
official client, defaults, validation with upstream's paths and messages, update rules,
Tables and field selectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from apiserver_builders import SUBDOMAIN, call
from kubernetes import client, config

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
#: The Kubernetes documentation's "Configure a Pod to Use a PersistentVolume for Storage"
#: (k8s.io/examples: pods/storage/pv-volume.yaml, pv-claim.yaml, pv-pod.yaml).
MANIFESTS = Path(__file__).parent / "manifests"
PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = "application/merge-patch+json"
ACCESS_MODES = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
IMMUTABLE_SPEC = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


def pv(name, **spec):
    body = {
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
        "hostPath": {"path": "/mnt/" + name},
    }
    body.update(spec)
    return {"metadata": {"name": name}, "spec": {k: v for k, v in body.items() if v is not None}}


def pvc(name, **spec):
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    return {"metadata": {"name": name}, "spec": {k: v for k, v in body.items() if v is not None}}


def storage_class(name, **fields):
    return {"metadata": {"name": name}, "provisioner": "example.com/disk", **fields}


def refused(server, method, path, body, content_type="application/json"):
    """The 422's message and causes, as (reason, field, message) triples."""
    code, status = call(server, method, path, body, content_type)
    assert (code, status.get("reason")) == (422, "Invalid"), status
    causes = [(c["reason"], c.get("field"), c["message"]) for c in status["details"]["causes"]]
    return status["message"], causes


# -- the documentation's example ------------------------------------------------------------


@needs_kubectl
def test_documentation_volume_claim_and_pod_apply_and_read_back(kubectl, api):
    for manifest in ("pv-volume.yaml", "pv-claim.yaml", "pv-pod.yaml"):
        kubectl("apply", "-f", str(MANIFESTS / manifest))
    core = client.CoreV1Api(api)
    volume = core.read_persistent_volume("task-pv-volume")
    assert volume.spec.persistent_volume_reclaim_policy == "Retain"
    assert volume.spec.volume_mode == "Filesystem"
    assert volume.spec.host_path.type == ""
    assert volume.status.phase == "Pending"
    assert volume.status.last_phase_transition_time is not None
    assert volume.metadata.finalizers == ["kubernetes.io/pv-protection"]
    claim = core.read_namespaced_persistent_volume_claim("task-pv-claim", "default")
    assert (claim.spec.storage_class_name, claim.spec.volume_mode) == ("manual", "Filesystem")
    assert claim.status.phase == "Pending"
    assert claim.metadata.finalizers == ["kubernetes.io/pvc-protection"]
    pod = core.read_namespaced_pod("task-pv-pod", "default")
    assert pod.spec.volumes[0].persistent_volume_claim.claim_name == "task-pv-claim"

    out = kubectl("get", "pv", "task-pv-volume", "-o", "wide").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "RECLAIM",
        "POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
        "VOLUMEMODE",
    ]
    cells = out[1].split()
    assert cells[:5] == ["task-pv-volume", "10Gi", "RWO", "Retain", "Pending"]
    assert cells[5:7] == ["manual", "<unset>"] and cells[-1] == "Filesystem"
    out = kubectl("get", "pvc", "task-pv-claim").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
    ]
    assert out[1].split()[:4] == ["task-pv-claim", "Pending", "manual", "<unset>"]
    # Short names, as discovery lists them.
    assert "task-pv-claim" in kubectl("get", "pvc", "-o", "name").stdout
    assert "task-pv-volume" in kubectl("get", "pv", "-o", "name").stdout


@needs_kubectl
def test_statefulset_claim_templates_and_storage_kinds_are_in_discovery(kubectl):
    out = kubectl("api-resources", "--api-group=storage.k8s.io").stdout.splitlines()
    kinds = {line.split()[0]: line.split()[-1] for line in out[1:]}
    assert kinds == {
        "csidrivers": "CSIDriver",
        "csinodes": "CSINode",
        "csistoragecapacities": "CSIStorageCapacity",
        "storageclasses": "StorageClass",
        "volumeattachments": "VolumeAttachment",
        "volumeattributesclasses": "VolumeAttributesClass",
    }
    out = kubectl("api-resources", "--api-group=").stdout
    assert "persistentvolumeclaims" in out and " pvc " in out and " pv " in out
    explained = kubectl("explain", "pvc.spec.resources.requests").stdout
    assert "FIELD: requests" in explained


# -- validation -----------------------------------------------------------------------------


def test_persistent_volume_validation_names_each_field(apiserver):
    body = pv(
        "bad-pv",
        accessModes=["ReadWriteOncePod", "ReadWriteMany", "Sometimes"],
        capacity={"storage": "0", "cpu": "1"},
        persistentVolumeReclaimPolicy="Keep",
        nfs={"server": "nfs.example.com", "path": "/export"},
        volumeMode="Disk",
    )
    message, causes = refused(apiserver, "POST", PVS, body)
    assert causes == [
        (
            "FieldValueNotSupported",
            "spec.accessModes",
            f'Unsupported value: "Sometimes": supported values: {ACCESS_MODES}',
        ),
        (
            "FieldValueForbidden",
            "spec.accessModes",
            "Forbidden: may not use ReadWriteOncePod with other access modes",
        ),
        (
            "FieldValueNotSupported",
            "spec.capacity",
            'Unsupported value: core.ResourceList{"cpu":"1", "storage":"0"}: supported values: '
            '"storage"',
        ),
        (
            "FieldValueInvalid",
            "spec.capacity[storage]",
            'Invalid value: "0": must be greater than zero',
        ),
        (
            "FieldValueNotSupported",
            "spec.persistentVolumeReclaimPolicy",
            'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
        ),
        ("FieldValueForbidden", "spec.nfs", "Forbidden: may not specify more than 1 volume type"),
        (
            "FieldValueNotSupported",
            "spec.volumeMode",
            'Unsupported value: "Disk": supported values: "Block", "Filesystem"',
        ),
    ]
    assert message.startswith('PersistentVolume "bad-pv" is invalid: [spec.accessModes: ')
    assert call(apiserver, "GET", f"{PVS}/bad-pv")[0] == 404


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"accessModes": None, "capacity": None, "hostPath": None},
            [
                ("FieldValueRequired", "spec.accessModes", "Required value"),
                ("FieldValueRequired", "spec.capacity", "Required value"),
                (
                    "FieldValueNotSupported",
                    "spec.capacity",
                    'Unsupported value: core.ResourceList{}: supported values: "storage"',
                ),
                ("FieldValueRequired", "spec", "Required value: must specify a volume type"),
            ],
            id="no-modes-capacity-or-source",
        ),
        pytest.param(
            {"hostPath": None, "local": {"path": "/mnt/../etc"}},
            [
                (
                    "FieldValueInvalid",
                    "spec.local.path",
                    "Invalid value: \"/mnt/../etc\": must not contain '..'",
                ),
                (
                    "FieldValueRequired",
                    "spec.nodeAffinity",
                    "Required value: Local volume requires node affinity",
                ),
            ],
            id="local-volume-needs-node-affinity",
        ),
        pytest.param(
            {"nodeAffinity": {"required": {"nodeSelectorTerms": []}}},
            [
                (
                    "FieldValueRequired",
                    "spec.nodeAffinity.required.nodeSelectorTerms",
                    "Required value: must have at least one node selector term",
                )
            ],
            id="node-affinity-without-terms",
        ),
        pytest.param(
            {"nodeAffinity": {}},
            [
                (
                    "FieldValueRequired",
                    "spec.nodeAffinity.required",
                    "Required value: must specify required node constraints",
                )
            ],
            id="node-affinity-without-required",
        ),
        pytest.param(
            {"hostPath": None, "csi": {"driver": "Bad_Driver"}},
            [
                (
                    "FieldValueInvalid",
                    "spec.csi.driver",
                    f'Invalid value: "Bad_Driver": {SUBDOMAIN}',
                ),
                ("FieldValueRequired", "spec.csi.volumeHandle", "Required value"),
            ],
            id="csi-driver-name-and-handle",
        ),
        pytest.param(
            {
                "storageClassName": "Fast",
                "persistentVolumeReclaimPolicy": "Recycle",
                "hostPath": {"path": "/"},
            },
            [
                (
                    "FieldValueForbidden",
                    "spec.persistentVolumeReclaimPolicy",
                    "Forbidden: may not be 'recycle' for a hostPath mount of '/'",
                ),
                (
                    "FieldValueInvalid",
                    "spec.storageClassName",
                    f'Invalid value: "Fast": {SUBDOMAIN}',
                ),
            ],
            id="recycled-root-host-path-and-class-name",
        ),
    ],
)
def test_persistent_volume_spec_rules(apiserver, spec, expected):
    _, causes = refused(apiserver, "POST", PVS, pv("rules", **spec))
    assert causes == expected


def test_mount_options_annotation_only_for_volume_types_that_mount_with_options(apiserver):
    body = pv("mount-opts")
    body["metadata"]["annotations"] = {"volume.beta.kubernetes.io/mount-options": "ro"}
    _, causes = refused(apiserver, "POST", PVS, body)
    assert causes == [
        (
            "FieldValueForbidden",
            "metadata.annotations.volume.beta.kubernetes.io/mount-options",
            "Forbidden: may not specify mount options for this volume type",
        )
    ]
    del body["spec"]["hostPath"]
    body["spec"]["nfs"] = {"server": "nfs.example.com", "path": "/export"}
    assert call(apiserver, "POST", PVS, body)[0] == 201


def test_persistent_volume_claim_validation(apiserver):
    body = pvc(
        "bad-claim",
        accessModes=[],
        resources={"requests": {}},
        storageClassName="Fast",
        selector={"matchLabels": {"a": "b c"}},
        dataSourceRef={"kind": "Snapshot", "name": "snap"},
    )
    message, causes = refused(apiserver, "POST", PVCS, body)
    # The dataSourceRef is copied into dataSource first (NormalizeDataSources).
    assert [c[:2] for c in causes] == [
        ("FieldValueRequired", "spec.accessModes"),
        ("FieldValueInvalid", "spec.selector.matchLabels"),
        ("FieldValueRequired", "spec.resources[storage]"),
        ("FieldValueInvalid", "spec.storageClassName"),
        ("FieldValueInvalid", "spec.dataSource"),
        ("FieldValueInvalid", "spec.dataSourceRef"),
    ]
    assert causes[0][2] == "Required value: at least 1 access mode is required"
    assert causes[4][2] == (
        "Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the "
        "default apiGroup"
    )
    assert message.startswith('PersistentVolumeClaim "bad-claim" is invalid: [')


def test_claim_data_sources_are_normalized(apiserver):
    # A dataSource of another kind without a dataSourceRef is dropped, as for old clients.
    code, obj = call(
        apiserver, "POST", PVCS, pvc("dropped", dataSource={"kind": "Snapshot", "name": "s"})
    )
    assert code == 201, obj
    assert "dataSource" not in obj["spec"] and "dataSourceRef" not in obj["spec"]
    # A claim source fills dataSourceRef; a populator's dataSourceRef fills dataSource.
    code, obj = call(
        apiserver,
        "POST",
        PVCS,
        pvc("cloned", dataSource={"kind": "PersistentVolumeClaim", "name": "dropped"}),
    )
    assert code == 201, obj
    assert obj["spec"]["dataSourceRef"] == {"kind": "PersistentVolumeClaim", "name": "dropped"}
    populated = {"apiGroup": "example.com", "kind": "Image", "name": "img"}
    code, obj = call(apiserver, "POST", PVCS, pvc("populated", dataSourceRef=populated))
    assert code == 201, obj
    assert obj["spec"]["dataSource"] == populated


def test_claim_quantities_are_decoded(apiserver):
    # A request that is no quantity is the decoder's 400, before validation.
    code, status = call(
        apiserver, "POST", PVCS, pvc("nan", resources={"requests": {"storage": "lots"}})
    )
    assert (code, status["reason"]) == (400, "BadRequest")


def test_claim_spec_is_immutable_but_volume_name_is_set_once(apiserver):
    assert call(apiserver, "POST", PVCS, pvc("frozen"))[0] == 201
    path = f"{PVCS}/frozen"
    _, causes = refused(
        apiserver, "PATCH", path, {"spec": {"accessModes": ["ReadWriteMany"]}}, MERGE
    )
    assert causes[0][:2] == ("FieldValueForbidden", "spec")
    assert causes[0][2].startswith(f"Forbidden: {IMMUTABLE_SPEC}\n")
    assert '- accessModes: ["ReadWriteOnce"]' in causes[0][2]
    # The PV controller binds a claim by naming its volume: once.
    code, bound = call(apiserver, "PATCH", path, {"spec": {"volumeName": "pv-1"}}, MERGE)
    assert (code, bound["spec"]["volumeName"]) == (200, "pv-1")
    _, causes = refused(apiserver, "PATCH", path, {"spec": {"volumeName": "pv-2"}}, MERGE)
    assert causes[0][:2] == ("FieldValueForbidden", "spec")
    _, causes = refused(apiserver, "PATCH", path, {"spec": {"volumeMode": "Block"}}, MERGE)
    assert (
        "FieldValueInvalid",
        "volumeMode",
        'Invalid value: "Block": field is immutable',
    ) in causes
    # A claim without a class may get one (validateStorageClassUpgradeFromNil)...
    code, classed = call(apiserver, "PATCH", path, {"spec": {"storageClassName": "gold"}}, MERGE)
    assert (code, classed["spec"]["storageClassName"]) == (200, "gold")
    # ...but not change it.
    _, causes = refused(apiserver, "PATCH", path, {"spec": {"storageClassName": "silver"}}, MERGE)
    assert causes[0][:2] == ("FieldValueForbidden", "spec")


def test_status_writes_keep_the_spec_and_stamp_the_volume_phase(apiserver):
    assert call(apiserver, "POST", PVS, pv("phased"))[0] == 201
    code, current = call(apiserver, "GET", f"{PVS}/phased")
    first = current["status"]["lastPhaseTransitionTime"]
    current["status"] = {"phase": "Available"}
    current["spec"]["capacity"] = {"storage": "5Gi"}  # ignored by a status write
    code, written = call(apiserver, "PUT", f"{PVS}/phased/status", current)
    assert code == 200
    assert written["status"]["phase"] == "Available"
    assert written["status"]["lastPhaseTransitionTime"] >= first
    assert written["spec"]["capacity"] == {"storage": "1Gi"}
    # The main resource ignores status.
    code, written = call(
        apiserver, "PATCH", f"{PVS}/phased", {"status": {"phase": "Failed"}}, MERGE
    )
    assert (code, written["status"]["phase"]) == (200, "Available")
    _, causes = refused(
        apiserver, "PATCH", f"{PVS}/phased", {"spec": {"hostPath": {"path": "/elsewhere"}}}, MERGE
    )
    assert causes[0][:2] == ("FieldValueForbidden", "spec.persistentvolumesource")
    assert causes[0][2].startswith(
        "Forbidden: spec.persistentvolumesource is immutable after creation\n"
    )


def test_field_selectors_take_upstreams_legacy_name_label(apiserver):
    assert call(apiserver, "POST", PVS, pv("selected"))[0] == 201
    code, listed = call(apiserver, "GET", f"{PVS}?fieldSelector=name%3Dselected")
    assert code == 200
    assert [item["metadata"]["name"] for item in listed["items"]] == ["selected"]
    code, status = call(apiserver, "GET", f"{PVS}?fieldSelector=spec.volumeMode%3DBlock")
    assert code == 400, status


# -- StorageClass ---------------------------------------------------------------------------


def test_storage_class_defaults_validation_and_immutability(apiserver, api):
    storage = client.StorageV1Api(api)
    created = storage.create_storage_class(
        client.V1StorageClass(
            metadata=client.V1ObjectMeta(name="plain"),
            provisioner="example.com/disk",
            parameters={"type": "ssd"},
        )
    )
    assert (created.reclaim_policy, created.volume_binding_mode) == ("Delete", "Immediate")
    message, causes = refused(
        apiserver,
        "POST",
        CLASSES,
        storage_class(
            "bad-class",
            provisioner="",
            reclaimPolicy="Recycle",
            volumeBindingMode="Later",
            allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}],
        ),
    )
    assert causes == [
        ("FieldValueRequired", "provisioner", "Required value"),
        (
            "FieldValueNotSupported",
            "reclaimPolicy",
            'Unsupported value: "Recycle": supported values: "Delete", "Retain"',
        ),
        (
            "FieldValueNotSupported",
            "volumeBindingMode",
            'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
        ),
        (
            "FieldValueRequired",
            "allowedTopologies[0].matchLabelExpressions[0].values",
            "Required value",
        ),
    ]
    assert message.startswith('StorageClass.storage.k8s.io "bad-class" is invalid: [')
    _, causes = refused(
        apiserver,
        "PATCH",
        f"{CLASSES}/plain",
        {
            "provisioner": "example.com/other",
            "parameters": {"type": "hdd"},
            "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        MERGE,
    )
    assert causes == [
        ("FieldValueForbidden", "parameters", "Forbidden: updates to parameters are forbidden."),
        ("FieldValueForbidden", "provisioner", "Forbidden: updates to provisioner are forbidden."),
        (
            "FieldValueForbidden",
            "reclaimPolicy",
            "Forbidden: updates to reclaimPolicy are forbidden.",
        ),
        (
            "FieldValueInvalid",
            "volumeBindingMode",
            'Invalid value: "WaitForFirstConsumer": field is immutable',
        ),
    ]
    # allowVolumeExpansion and the annotations may change.
    code, patched = call(
        apiserver, "PATCH", f"{CLASSES}/plain", {"allowVolumeExpansion": True}, MERGE
    )
    assert (code, patched["allowVolumeExpansion"]) == (200, True)


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        pytest.param(
            PVCS,
            {"metadata": {"name": "t1"}, "spec": {"accessModes": "ReadWriteOnce"}},
            "json: cannot unmarshal string into Go struct field "
            "PersistentVolumeClaimSpec.spec.accessModes of type []v1.PersistentVolumeAccessMode",
            id="claim-access-modes-not-a-list",
        ),
        pytest.param(
            PVS,
            {"metadata": {"name": "t2"}, "spec": {"capacity": ["1Gi"]}},
            "json: cannot unmarshal array into Go struct field "
            "PersistentVolumeSpec.spec.capacity of type v1.ResourceList",
            id="volume-capacity-not-a-map",
        ),
        pytest.param(
            CLASSES,
            {"metadata": {"name": "t3"}, "provisioner": "a.b/c", "allowVolumeExpansion": "yes"},
            "json: cannot unmarshal string into Go struct field "
            "StorageClass.allowVolumeExpansion of type bool",
            id="class-expansion-not-a-bool",
        ),
    ],
)
def test_wrong_json_types_are_the_decoders_400(apiserver, path, body, message):
    code, status = call(apiserver, "POST", path, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"].endswith(message)


@needs_kubectl
def test_kubectl_apply_leaves_field_validation_to_the_server(kubectl):
    misspelt = (
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: typo\nspec:\n"
        "  accesModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
    )
    result = kubectl("apply", "-f", "-", stdin=misspelt, check=False)
    assert result.returncode != 0
    assert 'strict decoding error: unknown field "spec.accesModes"' in result.stderr
    result = kubectl("apply", "-f", "-", stdin=misspelt.replace("accesModes", "accessModes"))
    assert "persistentvolumeclaim/typo created" in result.stdout
    # A second apply of a changed claim is a strategic merge patch the server refuses.
    grown = misspelt.replace("accesModes", "accessModes").replace("1Gi", "2Gi")
    result = kubectl("apply", "-f", "-", stdin=grown, check=False)
    assert result.returncode != 0
    assert "spec is immutable after creation" in result.stderr


def test_a_pods_ephemeral_claim_template_is_checked_as_a_claim(apiserver):
    template = {
        "metadata": {"name": "fixed", "labels": {"tier": "scratch"}},
        "spec": {"accessModes": [], "resources": {"requests": {"storage": "0"}}},
    }
    pod = {
        "metadata": {"name": "scratch"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "volumes": [{"name": "tmp", "ephemeral": {"volumeClaimTemplate": template}}],
        },
    }
    _, causes = refused(apiserver, "POST", "/api/v1/namespaces/default/pods", pod)
    at = "spec.volumes[0].ephemeral.volumeClaimTemplate"
    assert causes == [
        ("FieldValueForbidden", f"{at}.metadata.name", "Forbidden: cannot be set"),
        (
            "FieldValueRequired",
            f"{at}.spec.accessModes",
            "Required value: at least 1 access mode is required",
        ),
        (
            "FieldValueInvalid",
            f"{at}.spec.resources[storage]",
            'Invalid value: "0": must be greater than zero',
        ),
    ]
    pod["spec"]["volumes"][0]["ephemeral"] = {}
    _, causes = refused(apiserver, "POST", "/api/v1/namespaces/default/pods", pod)
    assert causes == [
        (
            "FieldValueRequired",
            "spec.volumes[0].ephemeral.volumeClaimTemplate",
            "Required value",
        )
    ]
