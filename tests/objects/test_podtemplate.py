"""Pods from a pod template (``GetPodFromTemplate``) and controller references."""

from __future__ import annotations

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.podtemplate import (
    controller_of,
    controller_ref,
    pod_from_template,
    pod_name_prefix,
)

OWNER = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "prod", "uid": "u-1"},
}
TEMPLATE = {
    "metadata": {
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
        "finalizers": ["example.com/keep"],
    },
    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2"}]},
}


def test_pod_carries_the_templates_metadata_spec_and_the_controller_reference():
    ref = controller_ref(OWNER, "apps/v1", "ReplicaSet")
    pod = pod_from_template(TEMPLATE, OWNER, ref)
    assert pod == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "web-",
            "namespace": "prod",
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "finalizers": ["example.com/keep"],
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web",
                    "uid": "u-1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2"}]},
    }
    assert controller_of(pod) == ref
    # A copy: changing the pod leaves the template alone.
    pod["spec"]["containers"][0]["image"] = "other"
    pod["metadata"]["labels"]["extra"] = "1"
    assert TEMPLATE["spec"]["containers"][0]["image"] == "nginx:1.14.2"
    assert TEMPLATE["metadata"]["labels"] == {"app": "web"}


@pytest.mark.parametrize(
    ("template", "path"),
    [
        ({"metadata": {}, "spec": {}}, "spec.template.metadata.labels"),
        ({"metadata": {"labels": {"a": "b"}}}, "spec.template.spec"),
    ],
    ids=["no-labels-is-refused-as-upstream", "no-spec-is-refused"],
)
def test_unusable_templates_are_refused_with_their_path(template, path):
    with pytest.raises(ObjectError) as err:
        pod_from_template(template, OWNER)
    assert err.value.path == path


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("web", "web-"), ("a" * 252, "a" * 252 + "-"), ("a" * 253, "a" * 253)],
    ids=["dash-appended", "dash-fits-at-253", "no-room-for-the-dash"],
)
def test_pod_name_prefix(name, prefix):
    assert pod_name_prefix(name) == prefix


def test_controller_of_ignores_non_controller_references():
    obj = {"metadata": {"ownerReferences": [{"uid": "a"}, {"uid": "b", "controller": False}]}}
    assert controller_of(obj) is None
