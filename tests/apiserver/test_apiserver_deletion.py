"""Graceful pod deletion and finalizers.

With no kubelet to confirm, a bound, unfinished pod deleted with a grace period keeps
``deletionTimestamp`` and ``deletionGracePeriodSeconds`` until the grace is over (the
server's reaper then removes it) or until a ``gracePeriodSeconds=0`` delete; unbound or
finished pods go at once. Any object with finalizers stays, marked, until they are gone."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from apiserver_builders import PodBuilder, call
from kubernetes import client, config

from kubesched.apiserver.resources import CONFIGMAPS, PODS
from kubesched.apiserver.runner import new_store

PODS_PATH = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"


def _create(apiserver, pod):
    code, body = call(apiserver, "POST", PODS_PATH, pod)
    assert code == 201, body
    return body


def test_bound_pod_gets_a_deletion_timestamp_and_stays(apiserver):
    _create(apiserver, PodBuilder("g1").node("n1").obj())
    code, body = call(apiserver, "DELETE", f"{PODS_PATH}/g1")
    assert code == 200
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    stamp = datetime.fromisoformat(body["metadata"]["deletionTimestamp"].replace("Z", "+00:00"))
    assert timedelta(seconds=28) < stamp - datetime.now(UTC) <= timedelta(seconds=30)
    code, got = call(apiserver, "GET", f"{PODS_PATH}/g1")
    assert code == 200
    assert got["metadata"]["deletionTimestamp"] == body["metadata"]["deletionTimestamp"]
    # Binding a pod that is being deleted is refused; a longer grace does not extend it.
    binding = {"metadata": {"name": "g1"}, "target": {"kind": "Node", "name": "n2"}}
    code, refused = call(apiserver, "POST", f"{PODS_PATH}/g1/binding", binding)
    assert code == 409
    assert refused["message"] == (
        'Operation cannot be fulfilled on pods/binding "g1": pod g1 is being deleted, cannot be '
        "assigned to a host"
    )
    code, again = call(apiserver, "DELETE", f"{PODS_PATH}/g1", {"gracePeriodSeconds": 60})
    assert again["metadata"]["deletionTimestamp"] == body["metadata"]["deletionTimestamp"]
    # A zero grace period removes it now.
    code, _gone = call(apiserver, "DELETE", f"{PODS_PATH}/g1?gracePeriodSeconds=0")
    assert code == 200
    assert call(apiserver, "GET", f"{PODS_PATH}/g1")[0] == 404


def test_grace_period_expiry_removes_the_pod(apiserver):
    _create(apiserver, PodBuilder("g2").node("n1").obj())
    _code, body = call(apiserver, "DELETE", f"{PODS_PATH}/g2", {"gracePeriodSeconds": 1})
    assert body["metadata"]["deletionGracePeriodSeconds"] == 1
    deadline = time.monotonic() + 5
    while call(apiserver, "GET", f"{PODS_PATH}/g2")[0] == 200:
        assert time.monotonic() < deadline, "the pod outlived its grace period"
        time.sleep(0.1)


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(PodBuilder("g3").obj(), id="unbound"),
        pytest.param(PodBuilder("g3").node("n1").phase("Succeeded").obj(), id="finished"),
    ],
)
def test_unbound_or_finished_pods_go_at_once(apiserver, pod):
    _create(apiserver, pod)
    code, body = call(apiserver, "DELETE", f"{PODS_PATH}/g3")
    assert code == 200
    assert "deletionTimestamp" not in body["metadata"]
    assert call(apiserver, "GET", f"{PODS_PATH}/g3")[0] == 404


def test_finalizers_hold_an_object_until_removed(apiserver):
    path = "/api/v1/namespaces/default/configmaps"
    body = {"metadata": {"name": "held", "finalizers": ["example.com/keep"]}}
    assert call(apiserver, "POST", path, body)[0] == 201
    code, marked = call(apiserver, "DELETE", f"{path}/held")
    assert code == 200
    assert marked["kind"] == "ConfigMap"  # still there: the object, not a Status
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert marked["metadata"]["deletionTimestamp"]
    time.sleep(0.7)  # longer than the reaper's interval
    assert call(apiserver, "GET", f"{path}/held")[0] == 200
    code, _ = call(apiserver, "PATCH", f"{path}/held", {"metadata": {"finalizers": None}}, MERGE)
    assert code == 200
    assert call(apiserver, "GET", f"{path}/held")[0] == 404


def test_finalizers_on_a_pod_outlast_its_grace_period(apiserver):
    pod = PodBuilder("g4").node("n1").obj()
    pod["metadata"]["finalizers"] = ["example.com/keep"]
    _create(apiserver, pod)
    call(apiserver, "DELETE", f"{PODS_PATH}/g4?gracePeriodSeconds=0")
    code, got = call(apiserver, "GET", f"{PODS_PATH}/g4")
    assert code == 200
    assert got["metadata"]["deletionTimestamp"]
    call(apiserver, "PATCH", f"{PODS_PATH}/g4", {"metadata": {"finalizers": []}}, MERGE)
    assert call(apiserver, "GET", f"{PODS_PATH}/g4")[0] == 404


def test_deletion_through_the_client(apiserver):
    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    try:
        core = client.CoreV1Api(api)
        _create(apiserver, PodBuilder("g5").node("n1").obj())
        marked = core.delete_namespaced_pod("g5", "default", grace_period_seconds=5)
        assert marked.metadata.deletion_grace_period_seconds == 5
        assert core.read_namespaced_pod("g5", "default").metadata.deletion_timestamp
        core.delete_namespaced_pod("g5", "default", grace_period_seconds=0)
        assert core.list_namespaced_pod("default", field_selector="metadata.name=g5").items == []
    finally:
        api.close()


def test_store_reap_and_watch_events():
    store = new_store()
    pod = PodBuilder("w").node("n1").obj()
    store.create(PODS, pod)
    watcher = store.watch(PODS, "default", str(store.resource_version))
    _marked, removed = store.delete_gracefully(PODS, "default", "w", 10)
    assert not removed
    assert store.reap() == []  # the grace is not over
    later = datetime.now(UTC) + timedelta(seconds=11)
    assert [o["metadata"]["name"] for o in store.reap(later)] == ["w"]
    assert [e.type for e in watcher.take()] == ["MODIFIED", "DELETED"]
    cm = {"metadata": {"name": "c", "finalizers": ["f"]}}
    store.create(CONFIGMAPS, cm, "default")
    _, removed = store.delete_gracefully(CONFIGMAPS, "default", "c")
    assert not removed
    assert store.reap(later) == []


def test_bad_grace_period_is_a_bad_request(apiserver):
    _create(apiserver, PodBuilder("g6").obj())
    code, body = call(apiserver, "DELETE", f"{PODS_PATH}/g6", {"gracePeriodSeconds": "soon"})
    assert code == 400
    assert body["message"] == (
        "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds "
        "of type int64"
    )
    assert call(apiserver, "DELETE", f"{PODS_PATH}/g6")[0] == 200


def test_delete_collection_is_graceful_for_bound_pods(apiserver):
    _create(apiserver, PodBuilder("g7").label("batch", "x").node("n1").obj())
    _create(apiserver, PodBuilder("g8").label("batch", "x").obj())
    code, body = call(apiserver, "DELETE", f"{PODS_PATH}?labelSelector=batch%3Dx")
    assert code == 200
    assert sorted(p["metadata"]["name"] for p in body["items"]) == ["g7", "g8"]
    assert call(apiserver, "GET", f"{PODS_PATH}/g8")[0] == 404
    code, still = call(apiserver, "GET", f"{PODS_PATH}/g7")
    assert code == 200
    assert still["metadata"]["deletionGracePeriodSeconds"] == 30
    call(apiserver, "DELETE", f"{PODS_PATH}/g7?gracePeriodSeconds=0")
