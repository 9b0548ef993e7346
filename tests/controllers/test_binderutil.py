"""The PersistentVolume binder's pure steps (``GetBindVolumeToClaim``, ``GetDefaultClass``,
``PersistentVolumeClaimHasClass``), table-driven."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.controllers.volume.binderutil import (
    bind_volume_to_claim,
    claim_has_class,
    default_class,
)

BOUND_BY = "pv.kubernetes.io/bound-by-controller"


def claim(uid: str = "u1", name: str = "data", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "shop", "uid": uid, "resourceVersion": "7"},
        "spec": spec,
    }


def volume(claim_ref: dict[str, Any] | None = None, **annotations: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"capacity": {"storage": "1Gi"}}
    if claim_ref is not None:
        spec["claimRef"] = claim_ref
    return {"metadata": {"name": "pv1", "annotations": dict(annotations)}, "spec": spec}


@pytest.mark.parametrize(
    ("before", "dirty", "by_controller"),
    [
        pytest.param(volume(), True, True, id="unbound-volume-is-bound-by-the-controller"),
        pytest.param(
            volume({"namespace": "shop", "name": "data"}),
            True,
            False,
            id="pre-bound-volume-gets-the-uid-not-the-annotation",
        ),
        pytest.param(
            volume({"namespace": "shop", "name": "data", "uid": "u1"}),
            False,
            False,
            id="bound-volume-is-left-alone",
        ),
        pytest.param(
            volume({"namespace": "shop", "name": "data", "uid": "old"}),
            True,
            True,
            id="volume-of-a-deleted-namesake-is-rebound",
        ),
        pytest.param(
            volume({"namespace": "shop", "name": "data", "uid": "u1"}, **{BOUND_BY: "yes"}),
            False,
            True,
            id="annotation-kept-when-already-there",
        ),
    ],
)
def test_bind_volume_to_claim(before: dict[str, Any], dirty: bool, by_controller: bool) -> None:
    original = copy.deepcopy(before)
    after, changed = bind_volume_to_claim(before, claim())
    assert changed is dirty
    assert before == original  # the informer's copy is never changed
    ref = after["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == ("shop", "data", "u1")
    assert (BOUND_BY in after["metadata"]["annotations"]) is by_controller


def storage_class(name: str, created: str, default: str | None = "true") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if default is not None:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": default}
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        pytest.param([], None, id="no-classes"),
        pytest.param([storage_class("a", "2024-01-01T00:00:00Z", None)], None, id="none-default"),
        pytest.param(
            [storage_class("a", "2024-01-01T00:00:00Z", "false")], None, id="false-is-not-default"
        ),
        pytest.param(
            [
                storage_class("old", "2024-01-01T00:00:00Z"),
                storage_class("new", "2024-06-01T00:00:00Z"),
            ],
            "new",
            id="newest-default-wins",
        ),
        pytest.param(
            [
                storage_class("b", "2024-06-01T00:00:00Z"),
                storage_class("a", "2024-06-01T00:00:00Z"),
            ],
            "a",
            id="same-age-first-name-wins",
        ),
        pytest.param(
            [
                {
                    "metadata": {
                        "name": "beta",
                        "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"},
                    }
                }
            ],
            "beta",
            id="beta-annotation-counts",
        ),
    ],
)
def test_default_class(classes: list[dict[str, Any]], expected: str | None) -> None:
    assert default_class(classes) == expected


@pytest.mark.parametrize(
    ("spec", "annotations", "has"),
    [
        pytest.param({}, {}, False, id="unset-may-get-the-default"),
        pytest.param({"storageClassName": ""}, {}, True, id="empty-means-no-class"),
        pytest.param({"storageClassName": "fast"}, {}, True, id="named"),
        pytest.param(
            {}, {"volume.beta.kubernetes.io/storage-class": "fast"}, True, id="beta-annotation"
        ),
    ],
)
def test_claim_has_class(spec: dict[str, Any], annotations: dict[str, str], has: bool) -> None:
    found = claim(**spec)
    found["metadata"]["annotations"] = annotations
    assert claim_has_class(found) is has
