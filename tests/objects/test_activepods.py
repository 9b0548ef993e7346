"""Pod states the controllers count, and the order in which a scale-down deletes pods
(``ActivePodsWithRanks``, ``controller_utils_test.go``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubesched.objects.activepods import (
    is_pod_active,
    is_pod_available,
    pods_to_delete,
    rank_by_related_pods_on_same_node,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()


def stamp(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(
    name,
    node="n1",
    phase="Running",
    ready_for=None,
    created_ago=1000,
    restarts=0,
    cost=None,
    deleting=False,
):
    meta = {"name": name, "uid": name, "creationTimestamp": stamp(created_ago)}
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    if deleting:
        meta["deletionTimestamp"] = stamp(0)
    conditions = []
    if ready_for is not None:
        conditions.append(
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp(ready_for)}
        )
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {
            "phase": phase,
            "conditions": conditions,
            "containerStatuses": [{"name": "c", "restartCount": restarts}],
        },
    }


@pytest.mark.parametrize(
    ("pods", "first"),
    [
        ([pod("a", ready_for=10), pod("b", node="")], "b"),
        ([pod("a", ready_for=10), pod("b", phase="Pending")], "b"),
        ([pod("a", ready_for=10), pod("b", phase="Unknown"), pod("c", phase="Pending")], "c"),
        ([pod("a", ready_for=10), pod("b")], "b"),
        ([pod("a", ready_for=10, cost=5), pod("b", ready_for=10, cost=-1)], "b"),
        ([pod("a", ready_for=4000), pod("b", ready_for=10)], "b"),
        ([pod("a", ready_for=10, restarts=1), pod("b", ready_for=10, restarts=3)], "b"),
        ([pod("a", ready_for=10, created_ago=4000), pod("b", ready_for=10, created_ago=20)], "b"),
    ],
    ids=[
        "unassigned-before-assigned",
        "pending-before-running",
        "pending-before-unknown-before-running",
        "not-ready-before-ready",
        "lower-deletion-cost-first",
        "ready-for-less-time-first",
        "more-restarts-first",
        "newer-first",
    ],
)
def test_scale_down_order(pods, first):
    assert [p["metadata"]["name"] for p in pods_to_delete(pods, pods, 1, NOW)] == [first]


def test_pods_doubled_up_on_a_node_go_before_lonely_ones():
    pods = [pod("lonely", node="n1", ready_for=10), pod("crowded", node="n2", ready_for=10)]
    related = [*pods, pod("sibling", node="n2", ready_for=10)]
    assert rank_by_related_pods_on_same_node(pods, related) == [1, 2]
    assert pods_to_delete(pods, related, 1, NOW)[0]["metadata"]["name"] == "crowded"


def test_ready_times_in_the_same_power_of_two_fall_back_to_uid_order():
    # 100 s and 101 s are both in [2^36, 2^37) ns: equal rank, so "a" < "b" by UID.
    pods = [pod("b", ready_for=100), pod("a", ready_for=101)]
    assert pods_to_delete(pods, pods, 1, NOW)[0]["metadata"]["name"] == "a"


@pytest.mark.parametrize(
    ("obj", "active"),
    [(pod("a"), True), (pod("a", phase="Succeeded"), False), (pod("a", deleting=True), False)],
    ids=["running-is-active", "succeeded-is-not", "being-deleted-is-not"],
)
def test_is_pod_active(obj, active):
    assert is_pod_active(obj) is active


@pytest.mark.parametrize(
    ("obj", "min_ready", "available"),
    [
        (pod("a", ready_for=10), 0, True),
        (pod("a", ready_for=10), 5, True),
        (pod("a", ready_for=10), 30, False),
        (pod("a"), 0, False),
    ],
    ids=["ready-without-min-ready", "ready-long-enough", "ready-too-recently", "not-ready"],
)
def test_is_pod_available(obj, min_ready, available):
    assert is_pod_available(obj, min_ready, NOW) is available
