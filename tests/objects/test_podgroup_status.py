"""The PodGroup controller's reconcile step and the ElasticQuota controller's ``used``,
as pure functions of API objects (scheduler-plugins v0.34.7's rules), one case a row."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.elasticquotastatus import compute_used, pod_request, same_resource_list
from kubesched.objects.podgroupstatus import compute_status, schedule_timed_out


def group(min_member: int, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "g", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"minMember": min_member},
        "status": status,
    }


def pods(*phases: str, owners: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    refs = [{"kind": "Job", "name": o, "uid": o} for o in owners]
    return [
        {
            "metadata": {"name": f"p{i}", "namespace": "ns", "ownerReferences": refs},
            "status": {"phase": phase},
        }
        for i, phase in enumerate(phases)
    ]


@pytest.mark.parametrize(
    ("before", "members", "after"),
    [
        pytest.param(group(2), pods(), {"phase": "Pending"}, id="new-group-goes-pending"),
        pytest.param(
            group(2, phase="Pending"),
            pods("Pending"),
            {"phase": "Pending"},
            id="pending-until-min-member-pods-exist",
        ),
        pytest.param(
            group(2, phase="Pending"),
            pods("Pending", "Running", owners=("b", "a")),
            {"phase": "Scheduling", "occupiedBy": "ns/a,ns/b"},
            id="pending-to-scheduling-counters-untouched",
        ),
        pytest.param(
            group(2, phase="Scheduling"),
            pods("Running", "Pending"),
            {"phase": "Scheduling", "running": 1},
            id="scheduling-while-too-few-run",
        ),
        pytest.param(
            group(2, phase="Scheduling"),
            pods("Running", "Succeeded"),
            {"phase": "Running", "running": 1, "succeeded": 1},
            id="running-once-min-member-run-or-succeeded",
        ),
        pytest.param(
            group(2, phase="Running", running=2),
            pods("Running"),
            {"phase": "Pending", "running": 1},
            id="back-to-pending-with-too-few-members",
        ),
        pytest.param(
            group(2, phase="Running", running=2),
            pods("Failed", "Running"),
            {"phase": "Failed", "running": 1, "failed": 1},
            id="failed-when-a-member-failed",
        ),
        pytest.param(
            group(3, phase="Running"),
            pods("Failed", "Pending", "Pending"),
            {"phase": "Scheduling", "failed": 1},
            id="a-failure-below-min-member-is-not-failed",
        ),
        pytest.param(
            group(2, phase="Running"),
            pods("Succeeded", "Succeeded", "Failed"),
            {"phase": "Finished", "succeeded": 2, "failed": 1},
            id="finished-wins-over-failed",
        ),
        pytest.param(
            group(2, phase="Finished", succeeded=2),
            pods(),
            {"phase": "Finished", "succeeded": 2},
            id="finished-is-final",
        ),
        pytest.param(
            group(1, phase="Unknown"),
            pods("Running"),
            {"phase": "Running", "running": 1},
            id="unknown-phase-recounts",
        ),
    ],
)
def test_compute_status(
    before: dict[str, Any], members: list[dict[str, Any]], after: dict[str, Any]
) -> None:
    assert compute_status(before, members) == after


@pytest.mark.parametrize(
    ("status", "timed_out"),
    [
        pytest.param({"phase": "Pending"}, False, id="no-start-time"),
        pytest.param(
            {"phase": "Pending", "scheduleStartTime": "2026-01-03T00:00:01Z"},
            True,
            id="started-more-than-48h-after-creation",
        ),
        pytest.param(
            {"phase": "Pending", "scheduleStartTime": "2026-01-02T00:00:00Z"},
            False,
            id="started-within-48h",
        ),
        pytest.param(
            {"phase": "Scheduling", "running": 1, "scheduleStartTime": "2026-01-05T00:00:00Z"},
            False,
            id="something-runs",
        ),
    ],
)
def test_schedule_timed_out(status: dict[str, Any], timed_out: bool) -> None:
    assert schedule_timed_out(group(1, **status)) is timed_out


def running(phase: str = "Running", **requests: str) -> dict[str, Any]:
    return {
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
        "status": {"phase": phase},
    }


def test_pod_request_sums_containers_and_raises_to_init() -> None:
    pod = {
        "spec": {
            "initContainers": [
                {"resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                {"resources": {"requests": {"cpu": "2", "memory": "3G"}}},
            ],
            "containers": [
                {"resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                {"resources": {"requests": {"cpu": "1", "memory": "1G"}}},
            ],
            "overhead": {"cpu": "1"},
        }
    }
    assert {k: str(v) for k, v in pod_request(pod).items()} == {"cpu": "3", "memory": "3G"}


@pytest.mark.parametrize(
    ("spec", "members", "used"),
    [
        pytest.param({}, [], {}, id="no-bounds-no-pods"),
        pytest.param(
            {"min": {"cpu": "1"}, "max": {"memory": "1Gi"}},
            [],
            {"cpu": "0", "memory": "0"},
            id="bounds-listed-at-zero",
        ),
        pytest.param(
            {"max": {"cpu": "4"}},
            [running(cpu="500m", memory="1Gi"), running(cpu="1500m", memory="512Mi")],
            {"cpu": "2", "memory": "1536Mi"},
            id="running-pods-summed-other-resources-too",
        ),
        pytest.param(
            {"max": {"cpu": "4"}},
            [running("Pending", cpu="1"), running("Succeeded", cpu="1"), running(cpu="1")],
            {"cpu": "1"},
            id="only-running-pods-count",
        ),
    ],
)
def test_compute_used(
    spec: dict[str, Any], members: list[dict[str, Any]], used: dict[str, str]
) -> None:
    assert compute_used({"spec": spec}, members) == used


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param({"memory": "1Gi"}, {"memory": "1073741824"}, True, id="equal-quantities"),
        pytest.param({}, None, True, id="empty-is-absent"),
        pytest.param({"cpu": "0"}, {}, False, id="names-differ"),
        pytest.param({"cpu": "1"}, {"cpu": "999m"}, False, id="values-differ"),
    ],
)
def test_same_resource_list(a: object, b: object, same: bool) -> None:
    assert same_resource_list(a, b) is same
