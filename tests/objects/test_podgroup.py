"""PodGroup and ElasticQuota views: decoding, errors naming the field, quota bounds."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.elasticquota import UPPER_BOUND_OF_MAX, ElasticQuota
from kubesched.objects.errors import ObjectError
from kubesched.objects.podgroup import (
    POD_GROUP_LABEL,
    PodGroup,
    pod_group_key,
    pod_group_name,
)
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group
from kubesched.testing.wrappers import make_pod


def _pod_group(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
        "spec": spec,
        "status": status or {},
    }


@pytest.mark.parametrize(
    ("labels", "name", "key"),
    [
        pytest.param({POD_GROUP_LABEL: "train"}, "train", "default/train", id="labelled-member"),
        pytest.param({}, None, None, id="no-label-no-group"),
        pytest.param({POD_GROUP_LABEL: ""}, None, None, id="empty-label-no-group"),
        pytest.param({"app": "train"}, None, None, id="other-labels-no-group"),
    ],
)
def test_pod_group_name_reads_the_label(
    labels: dict[str, str], name: str | None, key: str | None
) -> None:
    pod = make_pod("p").labels(labels).obj()
    assert pod_group_name(pod) == name
    assert pod_group_key(pod) == key


def test_pod_wrapper_pod_group_sets_the_label() -> None:
    assert pod_group_name(make_pod("p").pod_group("g").obj()) == "g"


def test_pod_group_decodes_spec_and_status() -> None:
    group = PodGroup.from_dict(
        _pod_group(
            {
                "minMember": 3,
                "minResources": {"cpu": "3", "memory": "3Gi", "nvidia.com/gpu": 3},
                "scheduleTimeoutSeconds": 10,
            },
            {
                "phase": "Running",
                "running": 2,
                "succeeded": 1,
                "failed": 0,
                "occupiedBy": "ml/job-a",
                "scheduleStartTime": "2026-01-01T00:00:00Z",
            },
        )
    )
    assert (group.namespace, group.name, group.uid, group.key) == ("ml", "train", "u1", "ml/train")
    assert group.min_member == 3
    assert group.min_resources.to_dict() == {
        "cpu": 3000,
        "memory": 3 * 2**30,
        "nvidia.com/gpu": 3,
    }
    assert group.schedule_timeout_seconds == 10
    assert group.wait_seconds() == 10
    assert (group.phase, group.running, group.succeeded, group.failed) == ("Running", 2, 1, 0)
    assert group.scheduled == 0
    assert group.occupied_by == "ml/job-a"
    assert group.schedule_start_time == "2026-01-01T00:00:00Z"


def test_pod_group_without_status_or_timeout() -> None:
    group = make_pod_group("g").min_member(2).obj()
    assert group.phase == ""
    assert group.schedule_timeout_seconds is None
    assert group.wait_seconds() == 60
    assert group.wait_seconds(default=30) == 30
    assert group.min_resources.to_dict() == {}


@pytest.mark.parametrize(
    ("spec", "status", "message"),
    [
        pytest.param(
            {"minMember": 0},
            None,
            "PodGroup ml/train: spec.minMember: Invalid value: 0",
            id="minmember-zero",
        ),
        pytest.param(
            {"minMember": "3"},
            None,
            "PodGroup ml/train: spec.minMember: expected an integer",
            id="minmember-string",
        ),
        pytest.param(
            {"minMember": 2**31},
            None,
            "PodGroup ml/train: spec.minMember: Invalid value: 2147483648: out of range",
            id="minmember-over-int32",
        ),
        pytest.param(
            {"minMember": 1, "minResources": {"cpu": "lots"}},
            None,
            "PodGroup ml/train: spec.minResources.cpu:",
            id="minresources-bad-quantity",
        ),
        pytest.param(
            {"minMember": 1, "scheduleTimeoutSeconds": 1.5},
            None,
            "PodGroup ml/train: spec.scheduleTimeoutSeconds: expected an integer",
            id="timeout-float",
        ),
        pytest.param(
            {"minMember": 1},
            {"running": "2"},
            "PodGroup ml/train: status.running: expected an integer",
            id="status-running-string",
        ),
        pytest.param(
            {"minMember": 1},
            {"phase": 3},
            "PodGroup ml/train: status.phase: expected a string",
            id="status-phase-number",
        ),
    ],
)
def test_pod_group_errors_name_the_field(
    spec: dict[str, Any], status: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(ObjectError) as err:
        PodGroup.from_dict(_pod_group(spec, status))
    assert str(err.value).startswith(message)


def test_an_omitted_min_member_reads_as_upstream_reads_it() -> None:
    # The CRD lets it through; Go's int32 zero value: no quorum.
    assert PodGroup.from_dict(_pod_group({})).min_member == 0


def test_pod_group_without_name_is_refused() -> None:
    with pytest.raises(ObjectError, match=r"metadata\.name: Required value"):
        PodGroup.from_dict({"kind": "PodGroup", "metadata": {}, "spec": {"minMember": 1}})


def test_elastic_quota_decodes_min_max_used() -> None:
    quota = (
        make_elastic_quota("team-a")
        .min(cpu="2", memory="4Gi")
        .max(cpu="4", memory="8Gi", **{"nvidia.com/gpu": "2"})
        .used(cpu="500m")
        .obj()
    )
    assert quota.key == "team-a/quota"
    assert quota.min is not None and quota.min.to_dict() == {"cpu": 2000, "memory": 4 * 2**30}
    assert quota.max is not None and quota.max.get("nvidia.com/gpu") == 2
    assert quota.used.to_dict() == {"cpu": 500}


@pytest.mark.parametrize(
    ("min_", "max_", "resource", "expected_min", "expected_max"),
    [
        pytest.param(None, None, "cpu", 0, UPPER_BOUND_OF_MAX, id="absent-min-max-cpu-unbounded"),
        pytest.param(
            None, None, "memory", 0, UPPER_BOUND_OF_MAX, id="absent-min-max-memory-unbounded"
        ),
        pytest.param(
            None, None, "nvidia.com/gpu", 0, UPPER_BOUND_OF_MAX, id="absent-max-gpu-unbounded"
        ),
        pytest.param(
            {"cpu": "1"},
            {"cpu": "2"},
            "cpu",
            1000,
            2000,
            id="set-cpu-bounds",
        ),
        pytest.param(
            {"cpu": "1"},
            {"cpu": "2"},
            "memory",
            0,
            0,
            id="max-without-memory-allows-none-as-upstream",
        ),
        pytest.param(
            {"cpu": "1"},
            {"cpu": "2"},
            "nvidia.com/gpu",
            0,
            UPPER_BOUND_OF_MAX,
            id="max-without-extended-resource-leaves-it-unlimited",
        ),
        pytest.param(
            {"nvidia.com/gpu": "1"},
            {"nvidia.com/gpu": "4"},
            "nvidia.com/gpu",
            1,
            4,
            id="set-extended-bounds",
        ),
    ],
)
def test_elastic_quota_bounds_follow_upstream(
    min_: dict[str, str] | None,
    max_: dict[str, str] | None,
    resource: str,
    expected_min: int,
    expected_max: int,
) -> None:
    spec: dict[str, Any] = {}
    if min_ is not None:
        spec["min"] = min_
    if max_ is not None:
        spec["max"] = max_
    quota = ElasticQuota.from_dict(
        {"kind": "ElasticQuota", "metadata": {"name": "q", "namespace": "a"}, "spec": spec}
    )
    assert quota.min_of(resource) == expected_min
    assert quota.max_of(resource) == expected_max


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            {"spec": {"max": {"cpu": "x"}}},
            "ElasticQuota a/q: spec.max.cpu:",
            id="bad-max-quantity",
        ),
        pytest.param(
            {"spec": {"min": ["cpu"]}},
            "ElasticQuota a/q: spec.min: expected an object",
            id="min-not-a-map",
        ),
        pytest.param(
            {"spec": {}, "status": {"used": {"memory": "1Q"}}},
            "ElasticQuota a/q: status.used.memory:",
            id="bad-used-quantity",
        ),
    ],
)
def test_elastic_quota_errors_name_the_field(obj: dict[str, Any], message: str) -> None:
    raw = {"kind": "ElasticQuota", "metadata": {"name": "q", "namespace": "a"}, **obj}
    with pytest.raises(ObjectError) as err:
        ElasticQuota.from_dict(raw)
    assert str(err.value).startswith(message)
