"""The storage admission plugins of kube-apiserver, against the embedded server:
DefaultStorageClass (a new claim with no class gets the default one, the newest of several),
StorageObjectInUseProtection (the protection finalizers) and PersistentVolumeClaimResize (a
bigger request only for a bound claim whose class allows expansion, 403 otherwise). Its own
module: default classes change what every later claim gets."""

from __future__ import annotations

import shutil
import time

import pytest
from apiserver_builders import call

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = "application/merge-patch+json"
DEFAULT = "storageclass.kubernetes.io/is-default-class"
NO_RESIZE = (
    "only dynamically provisioned pvc can be resized and the storageclass that provisions "
    "the pvc must support resize"
)


def claim(name, annotations=None, **spec):
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    body.update(spec)
    meta = {"name": name, "annotations": annotations} if annotations else {"name": name}
    return {"metadata": meta, "spec": body}


def storage_class(name, default=None, **fields):
    meta = {"name": name}
    if default is not None:
        meta["annotations"] = {DEFAULT: default}
    return {"metadata": meta, "provisioner": "example.com/disk", **fields}


def created_class(server, name):
    code, obj = call(server, "POST", PVCS, claim(name))
    assert code == 201, obj
    return obj["spec"].get("storageClassName")


def test_default_storage_class_fills_only_claims_without_a_class(apiserver):
    # No default class: the claim keeps no class.
    assert created_class(apiserver, "before-any-default") is None
    assert call(apiserver, "POST", CLASSES, storage_class("not-default", "false"))[0] == 201
    assert created_class(apiserver, "still-none") is None
    assert call(apiserver, "POST", CLASSES, storage_class("zeta", "true"))[0] == 201
    assert created_class(apiserver, "gets-zeta") == "zeta"
    # "" asks for no class, and the beta annotation is a class: both are kept.
    code, obj = call(apiserver, "POST", PVCS, claim("explicitly-none", storageClassName=""))
    assert (code, obj["spec"]["storageClassName"]) == (201, "")
    annotated = claim("annotated", {"volume.beta.kubernetes.io/storage-class": "gold"})
    code, obj = call(apiserver, "POST", PVCS, annotated)
    assert (code, obj["spec"].get("storageClassName")) == (201, None)
    # An update never defaults (the plugin admits creates only).
    code, obj = call(
        apiserver, "PATCH", f"{PVCS}/still-none", {"metadata": {"labels": {"a": "b"}}}, MERGE
    )
    assert (code, obj["spec"].get("storageClassName")) == (200, None)


def test_of_several_default_classes_the_newest_wins_then_the_first_name(apiserver):
    # Created in the same second: names decide (alpha before zeta).
    assert call(apiserver, "POST", CLASSES, storage_class("alpha", "true"))[0] == 201
    assert created_class(apiserver, "tie") == "alpha"
    # Timestamps have second resolution: a class made in a later second is newer.
    time.sleep(1.1)
    assert call(apiserver, "POST", CLASSES, storage_class("omega", "true"))[0] == 201
    assert created_class(apiserver, "newest") == "omega"
    # The beta annotation marks a default too.
    beta = storage_class("beta-marked")
    beta["metadata"]["annotations"] = {"storageclass.beta.kubernetes.io/is-default-class": "true"}
    time.sleep(1.1)
    assert call(apiserver, "POST", CLASSES, beta)[0] == 201
    assert created_class(apiserver, "by-beta") == "beta-marked"


def test_protection_finalizers_are_added_once_on_create(apiserver):
    volume = {
        "metadata": {"name": "protected", "finalizers": ["example.com/keep"]},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"},
            "csi": {"driver": "example.com", "volumeHandle": "h1"},
        },
    }
    code, obj = call(apiserver, "POST", PVS, volume)
    assert (code, obj["metadata"]["finalizers"]) == (
        201,
        ["example.com/keep", "kubernetes.io/pv-protection"],
    )
    body = claim("protected", storageClassName="")
    body["metadata"]["finalizers"] = ["kubernetes.io/pvc-protection"]
    code, obj = call(apiserver, "POST", PVCS, body)
    assert (code, obj["metadata"]["finalizers"]) == (201, ["kubernetes.io/pvc-protection"])
    # A claim being deleted stays, Terminating, until the protection controller lets go.
    code, obj = call(apiserver, "DELETE", f"{PVCS}/protected")
    assert code == 200 and obj["metadata"]["deletionTimestamp"]
    table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    code, rows = call(apiserver, "GET", f"{PVCS}/protected", headers={"Accept": table})
    assert (code, rows["rows"][0]["cells"][:2]) == (200, ["protected", "Terminating"])
    code, obj = call(
        apiserver, "PATCH", f"{PVCS}/protected", {"metadata": {"finalizers": None}}, MERGE
    )
    assert code == 200
    assert call(apiserver, "GET", f"{PVCS}/protected")[0] == 404


def _bound(server, name, class_name):
    code, obj = call(server, "POST", PVCS, claim(name, storageClassName=class_name))
    assert code == 201, obj
    obj["status"] = {
        "phase": "Bound",
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
    }
    code, obj = call(server, "PUT", f"{PVCS}/{name}/status", obj)
    assert (code, obj["status"]["phase"]) == (200, "Bound"), obj


@pytest.mark.parametrize(
    ("name", "class_fields", "expected"),
    [
        pytest.param("expandable", {"allowVolumeExpansion": True}, 200, id="expandable-grows"),
        pytest.param("fixed", {"allowVolumeExpansion": False}, 403, id="fixed-class-refuses"),
        pytest.param("silent", {}, 403, id="class-silent-on-expansion-refuses"),
        pytest.param("missing", None, 403, id="missing-class-refuses"),
    ],
)
def test_resize_needs_a_bound_claim_and_an_expandable_class(
    apiserver, name, class_fields, expected
):
    if class_fields is not None:
        code, obj = call(apiserver, "POST", CLASSES, storage_class(name, **class_fields))
        assert code == 201, obj
    _bound(apiserver, name, name)
    code, obj = call(
        apiserver,
        "PATCH",
        f"{PVCS}/{name}",
        {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
        MERGE,
    )
    assert code == expected, obj
    if expected == 403:
        assert obj["reason"] == "Forbidden"
        assert obj["message"] == f'persistentvolumeclaims "{name}" is forbidden: {NO_RESIZE}'
    else:
        assert obj["spec"]["resources"]["requests"]["storage"] == "2Gi"


def test_shrinking_a_bound_claim_stops_at_its_capacity(apiserver):
    assert (
        call(apiserver, "POST", CLASSES, storage_class("grows", allowVolumeExpansion=True))[0]
        == 201
    )
    _bound(apiserver, "shrinks", "grows")
    path = f"{PVCS}/shrinks"
    grow = {"spec": {"resources": {"requests": {"storage": "3Gi"}}}}
    assert call(apiserver, "PATCH", path, grow, MERGE)[0] == 200
    # RecoverVolumeExpansionFailure: back down, but not to the capacity already there.
    shrink = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    assert call(apiserver, "PATCH", path, shrink, MERGE)[0] == 200
    code, status = call(
        apiserver, "PATCH", path, {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}, MERGE
    )
    assert code == 422
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: field can not be less than status.capacity",
            "field": "spec.resources.requests.storage",
        }
    ]


def test_a_pending_claim_cannot_grow(apiserver):
    assert call(apiserver, "POST", PVCS, claim("pending-grow", storageClassName="grows"))[0] == 201
    code, status = call(
        apiserver,
        "PATCH",
        f"{PVCS}/pending-grow",
        {"spec": {"resources": {"requests": {"storage": "5Gi"}}}},
        MERGE,
    )
    # Validation answers first: only a bound claim's request may change at all.
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "spec"


@needs_kubectl
def test_storage_class_table_names_the_default(kubectl):
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=(
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: marked\n"
            '  annotations:\n    storageclass.kubernetes.io/is-default-class: "true"\n'
            "provisioner: rancher.io/local-path\nvolumeBindingMode: WaitForFirstConsumer\n"
            "allowVolumeExpansion: true\n"
        ),
    )
    out = kubectl("get", "sc", "marked").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert out[1].split()[:6] == [
        "marked",
        "(default)",
        "rancher.io/local-path",
        "Delete",
        "WaitForFirstConsumer",
        "true",
    ]
