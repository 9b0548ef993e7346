"""Deployment arithmetic (``deployment_util_test.go``): surge and unavailability from ints
and percents, the new ReplicaSet's size, proportional scaling, revision annotations, and
the template hash."""

from __future__ import annotations

import pytest

from kubesched.objects import deployment as du
from kubesched.objects.errors import ObjectError


def deployment(replicas=10, surge="25%", unavailable="25%", strategy="RollingUpdate"):
    spec = {"replicas": replicas, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "d", "generation": 1}, "spec": spec, "status": {}}


def rs(name, replicas, created="2026-01-01T00:00:00Z", annotations=None):
    return {
        "metadata": {"name": name, "creationTimestamp": created, "annotations": annotations or {}},
        "spec": {"replicas": replicas},
    }


@pytest.mark.parametrize(
    ("surge", "unavailable", "desired", "expected"),
    [
        ("25%", "25%", 10, (3, 2)),
        (0, 0, 10, (0, 1)),
        (1, 0, 3, (1, 0)),
        ("0%", "0%", 3, (0, 1)),
        ("50%", "50%", 1, (1, 0)),
    ],
    ids=[
        "percents-round-surge-up-and-unavailable-down",
        "both-zero-makes-unavailable-one",
        "ints-as-given",
        "zero-percents-too",
        "half-of-one",
    ],
)
def test_resolve_fenceposts(surge, unavailable, desired, expected):
    assert du.resolve_fenceposts(surge, unavailable, desired) == expected


def test_a_string_that_is_not_a_percentage_is_refused_with_its_path():
    with pytest.raises(ObjectError) as err:
        du.max_surge(deployment(surge="3"))
    assert err.value.path == "spec.strategy.rollingUpdate.maxSurge"


@pytest.mark.parametrize(
    ("d", "surge", "unavailable"),
    [
        (deployment(10), 3, 2),
        (deployment(3, unavailable=5), 1, 3),
        (deployment(0), 0, 0),
        (deployment(10, strategy="Recreate"), 0, 0),
    ],
    ids=["rolling", "unavailable-capped-at-replicas", "no-replicas", "recreate-has-neither"],
)
def test_max_surge_and_unavailable(d, surge, unavailable):
    assert (du.max_surge(d), du.max_unavailable(d)) == (surge, unavailable)


@pytest.mark.parametrize(
    ("d", "others", "new", "expected"),
    [
        (deployment(10), [rs("old", 10)], rs("new", 0), 3),
        (deployment(10), [rs("old", 8)], rs("new", 3), 5),
        (deployment(10), [rs("old", 10)], rs("new", 3), 3),
        (deployment(10), [], rs("new", 0), 10),
        (deployment(10, strategy="Recreate"), [rs("old", 10)], rs("new", 0), 10),
    ],
    ids=[
        "surge-allows-three-more",
        "old-scaled-down-leaves-room",
        "at-max-total-stays",
        "capped-by-replicas",
        "recreate-takes-all",
    ],
)
def test_new_rs_new_replicas(d, others, new, expected):
    assert du.new_rs_new_replicas(d, [*others, new], new) == expected


def test_proportion_scales_each_replica_set_by_its_share():
    # 10 -> 20 replicas with maxSurge 25%: max from 13 to 25; a ReplicaSet of 6 gets 6*25/13.
    d = deployment(20)
    d["status"]["replicas"] = 13
    old = rs("old", 6, annotations={du.MAX_REPLICAS_ANNOTATION: "13"})
    assert du.proportion(old, d, 12, 0) == round(6 * 25 / 13) - 6
    assert du.proportion(old, d, 2, 0) == 2  # never more than is left to add
    assert du.proportion(rs("empty", 0), d, 12, 0) == 0


def test_new_replica_set_annotations_and_revision_history():
    d = deployment(3)
    d["metadata"]["annotations"] = {
        "team": "web",
        du.LAST_APPLIED_ANNOTATION: "{}",
        du.REVISION_ANNOTATION: "9",
    }
    new = rs("new", 0)
    assert du.set_new_rs_annotations(d, new, "4", False)
    assert new["metadata"]["annotations"] == {
        "team": "web",
        du.REVISION_ANNOTATION: "4",
        du.DESIRED_REPLICAS_ANNOTATION: "3",
        du.MAX_REPLICAS_ANNOTATION: "4",
    }
    assert not du.set_new_rs_annotations(d, new, "4", True)
    # A rollback to it: its old revision joins the history.
    assert du.set_new_rs_annotations(d, new, "6", True)
    assert new["metadata"]["annotations"][du.REVISION_HISTORY_ANNOTATION] == "4"
    assert du.set_new_rs_annotations(d, new, "8", True)
    assert new["metadata"]["annotations"][du.REVISION_HISTORY_ANNOTATION] == "4,6"
    assert not du.set_new_rs_annotations(d, new, "7", True)  # never lowered


def test_template_hash_is_stable_safe_and_changes_with_collisions():
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
    first = du.compute_hash(template, None)
    assert first == du.compute_hash({"spec": {"containers": []}, **template}, None)
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert du.compute_hash(template, 1) != first
    assert du.compute_hash(template, 1) != du.compute_hash(template, 2)


def test_equal_ignore_hash():
    a = {"metadata": {"labels": {"app": "w", "pod-template-hash": "abc"}}, "spec": {"x": 1}}
    b = {"metadata": {"labels": {"app": "w"}, "annotations": {}}, "spec": {"x": 1}}
    assert du.equal_ignore_hash(a, b)
    assert not du.equal_ignore_hash(a, {**b, "spec": {"x": 2}})


@pytest.mark.parametrize(
    ("status", "complete"),
    [
        (
            {"updatedReplicas": 3, "replicas": 3, "availableReplicas": 3, "observedGeneration": 1},
            True,
        ),
        (
            {"updatedReplicas": 3, "replicas": 4, "availableReplicas": 3, "observedGeneration": 1},
            False,
        ),
        (
            {"updatedReplicas": 3, "replicas": 3, "availableReplicas": 3, "observedGeneration": 0},
            False,
        ),
    ],
    ids=["complete", "old-replicas-left", "generation-not-observed"],
)
def test_deployment_complete(status, complete):
    assert du.deployment_complete(deployment(3), status) is complete


def test_set_condition_keeps_the_transition_time_when_only_the_reason_changes():
    status: dict = {}
    du.set_condition(status, du.new_condition("Progressing", "True", "A", "m", 100.0))
    du.set_condition(status, du.new_condition("Progressing", "True", "A", "other", 200.0))
    assert status["conditions"][0]["message"] == "m"  # same status and reason: unchanged
    du.set_condition(status, du.new_condition("Progressing", "True", "B", "n", 300.0))
    cond = status["conditions"][0]
    assert (cond["reason"], cond["lastTransitionTime"]) == ("B", du.now_rfc3339(100.0))
    assert cond["lastUpdateTime"] == du.now_rfc3339(300.0)
