"""The official ``kubernetes`` Python client against the embedded API server, unchanged."""

from __future__ import annotations

import json
import threading

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


def _pod(name, **labels):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or None),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="pause")]),
    )


def _node(name):
    return client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels={"zone": "a"}),
        status=client.V1NodeStatus(capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
    )


def test_create_get_list_pods_and_nodes(core):
    created = core.create_namespaced_pod("default", _pod("c1", app="web"))
    assert created.spec.scheduler_name == "default-scheduler"
    assert created.status.phase == "Pending"
    assert core.read_namespaced_pod("c1", "default").metadata.uid == created.metadata.uid
    node = core.create_node(_node("cn1"))
    assert node.status.allocatable == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    names = [
        p.metadata.name for p in core.list_namespaced_pod("default", label_selector="app=web").items
    ]
    assert names == ["c1"]
    unassigned = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=").items
    assert "c1" in [p.metadata.name for p in unassigned]
    assert [n.metadata.name for n in core.list_node(label_selector="zone=a").items] == ["cn1"]


def test_errors_are_api_exceptions_with_status_bodies(core):
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("missing", "default")
    assert caught.value.status == 404
    assert json.loads(caught.value.body)["message"] == 'pods "missing" not found'
    core.create_namespaced_pod("default", _pod("dup"))
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("default", _pod("dup"))
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "AlreadyExists"


def test_stale_replace_is_conflict(core):
    pod = core.create_namespaced_pod("default", _pod("stale"))
    pod.metadata.labels = {"v": "1"}
    core.replace_namespaced_pod("stale", "default", pod)
    pod.metadata.labels = {"v": "2"}
    with pytest.raises(ApiException) as caught:
        core.replace_namespaced_pod("stale", "default", pod)
    assert caught.value.status == 409
    assert core.read_namespaced_pod("stale", "default").metadata.labels == {"v": "1"}


def test_patch_pod_and_node_status(core):
    core.create_namespaced_pod("default", _pod("p1"))
    patched = core.patch_namespaced_pod("p1", "default", {"metadata": {"labels": {"x": "y"}}})
    assert patched.metadata.labels == {"x": "y"}
    status = core.patch_namespaced_pod_status("p1", "default", {"status": {"phase": "Running"}})
    assert status.status.phase == "Running"
    core.create_node(_node("pn1"))
    node = core.patch_node_status(
        "pn1", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    )
    assert node.status.conditions[0].type == "Ready"


def test_binding_through_both_endpoints(core):
    core.create_namespaced_pod("default", _pod("b1"))
    core.create_namespaced_pod("default", _pod("b2"))
    body = client.V1Binding(
        metadata=client.V1ObjectMeta(name="b1"),
        target=client.V1ObjectReference(kind="Node", name="n1"),
    )
    response = core.create_namespaced_binding("default", body, _preload_content=False)
    assert response.status == 201
    assert json.loads(response.data)["status"] == "Success"
    body.metadata.name = "b2"
    response = core.create_namespaced_pod_binding("b2", "default", body, _preload_content=False)
    assert response.status == 201
    assert core.read_namespaced_pod("b2", "default").spec.node_name == "n1"
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_binding("default", body, _preload_content=False)
    assert caught.value.status == 409


def test_watch_sees_changes_and_resumes(core):
    listed = core.list_namespaced_pod("default")
    rv = listed.metadata.resource_version
    seen = []
    started = threading.Event()

    def follow():
        w = watch.Watch()
        started.set()
        for event in w.stream(
            core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=3
        ):
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                w.stop()

    thread = threading.Thread(target=follow)
    thread.start()
    started.wait()
    core.create_namespaced_pod("default", _pod("w1"))
    core.patch_namespaced_pod("w1", "default", {"metadata": {"labels": {"a": "b"}}})
    core.delete_namespaced_pod("w1", "default")
    thread.join(timeout=10)
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


def test_delete_pods_and_nodes(core):
    core.create_namespaced_pod("default", _pod("d1"))
    deleted = core.delete_namespaced_pod("d1", "default")
    assert deleted.metadata.name == "d1"
    core.create_node(_node("dn1"))
    status = core.delete_node("dn1")
    assert status["status"] == "Success"  # the client types this response as a plain object
    with pytest.raises(ApiException) as caught:
        core.read_node("dn1")
    assert caught.value.status == 404


def test_events(core):
    core.create_namespaced_event(
        "default",
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="ev1"),
            involved_object=client.V1ObjectReference(kind="Pod", name="c1", namespace="default"),
            reason="Scheduled",
            message="Successfully assigned default/c1 to n1",
            type="Normal",
        ),
    )
    found = core.list_namespaced_event(
        "default", field_selector="involvedObject.name=c1,involvedObject.kind=Pod"
    )
    assert [e.reason for e in found.items] == ["Scheduled"]


def test_leases(api):
    coord = client.CoordinationV1Api(api)
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name="kube-scheduler"),
        spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15),
    )
    created = coord.create_namespaced_lease("kube-system", lease)
    created.spec.holder_identity = "b"
    replaced = coord.replace_namespaced_lease("kube-scheduler", "kube-system", created)
    assert replaced.spec.holder_identity == "b"
    with pytest.raises(ApiException) as caught:
        coord.replace_namespaced_lease("kube-scheduler", "kube-system", created)  # stale now
    assert caught.value.status == 409
    assert [x.metadata.name for x in coord.list_namespaced_lease("kube-system").items] == [
        "kube-scheduler"
    ]
    coord.delete_namespaced_lease("kube-scheduler", "kube-system")
    with pytest.raises(ApiException) as caught:
        coord.read_namespaced_lease("kube-scheduler", "kube-system")
    assert (
        json.loads(caught.value.body)["message"]
        == 'leases.coordination.k8s.io "kube-scheduler" not found'
    )


def test_watch_bookmarks_reach_the_client(core):
    rv = core.list_node().metadata.resource_version
    w = watch.Watch()
    kinds = []
    for event in w.stream(
        core.list_node, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=1
    ):
        kinds.append(event["type"])
        if event["type"] == "BOOKMARK":
            assert int(event["raw_object"]["metadata"]["resourceVersion"]) >= int(rv)
            w.stop()
    assert "BOOKMARK" in kinds
