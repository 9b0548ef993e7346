"""events.k8s.io/v1 as a second view of the core/v1 events: one store, two schemas; an
event written through either API reads through both, lists and watches included."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request

import pytest
from apiserver_builders import PodBuilder, call, event
from kubernetes import client, config

from kubesched.apiserver import eventsv1

CORE = "/api/v1/namespaces/default/events"
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
REGARDING = {"kind": "Pod", "name": "web", "namespace": "default", "uid": "u1"}


def _v1_event(name):
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2024-01-02T03:04:05.000000Z",
        "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-host",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": REGARDING,
        "note": "Successfully assigned default/web to n1",
        "type": "Normal",
        "series": {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"},
    }


def test_written_as_events_v1_read_as_core(apiserver):
    code, created = call(apiserver, "POST", V1, _v1_event("a"))
    assert code == 201
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["note"] == "Successfully assigned default/web to n1"
    code, core = call(apiserver, "GET", f"{CORE}/a")
    assert code == 200
    assert core["apiVersion"] == "v1"
    assert core["message"] == "Successfully assigned default/web to n1"
    assert core["involvedObject"] == REGARDING
    assert core["reportingComponent"] == "default-scheduler"
    assert core["reportingInstance"] == "default-scheduler-host"
    assert core["reason"] == "Scheduled"
    assert core["eventTime"] == "2024-01-02T03:04:05.000000Z"
    assert core["series"] == {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"}
    assert core["type"] == "Normal"
    assert "note" not in core and "regarding" not in core
    assert core["metadata"]["uid"] == created["metadata"]["uid"]


def test_written_as_core_read_as_events_v1(apiserver):
    body = event("b", REGARDING)
    body.update(source={"component": "kubelet", "host": "n1"}, count=3)
    body["firstTimestamp"] = body["lastTimestamp"] = "2024-01-02T03:04:05Z"
    assert call(apiserver, "POST", CORE, body)[0] == 201
    code, got = call(apiserver, "GET", f"{V1}/b")
    assert code == 200
    assert got["apiVersion"] == "events.k8s.io/v1"
    assert got["regarding"] == REGARDING
    assert got["note"] == "m"
    assert got["deprecatedSource"] == {"component": "kubelet", "host": "n1"}
    assert got["deprecatedCount"] == 3
    assert got["deprecatedFirstTimestamp"] == "2024-01-02T03:04:05Z"
    assert got["deprecatedLastTimestamp"] == "2024-01-02T03:04:05Z"
    assert "message" not in got and "involvedObject" not in got


def test_lists_and_field_selectors_through_both(apiserver):
    call(apiserver, "POST", V1, _v1_event("c"))
    code, listed = call(apiserver, "GET", f"{V1}?fieldSelector=regarding.name%3Dweb")
    assert code == 200
    assert listed["kind"] == "EventList"
    assert listed["apiVersion"] == "events.k8s.io/v1"
    assert all(item["apiVersion"] == "events.k8s.io/v1" for item in listed["items"])
    names = {item["metadata"]["name"] for item in listed["items"]}
    assert "c" in names
    code, core = call(apiserver, "GET", f"{CORE}?fieldSelector=involvedObject.name%3Dweb")
    assert names == {item["metadata"]["name"] for item in core["items"]}


def test_watch_through_events_v1_sees_core_writes(apiserver):
    _, listed = call(apiserver, "GET", V1)
    rv = listed["metadata"]["resourceVersion"]
    call(apiserver, "POST", CORE, event("d", REGARDING))
    url = f"{apiserver.url}{V1}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    with urllib.request.urlopen(url, timeout=10) as response:
        lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "d")]
    assert lines[0]["object"]["apiVersion"] == "events.k8s.io/v1"
    assert lines[0]["object"]["note"] == "m"


def test_patch_and_delete_through_events_v1(apiserver):
    call(apiserver, "POST", V1, _v1_event("e"))
    series = {"series": {"count": 3, "lastObservedTime": "2024-01-02T03:04:07.000000Z"}}
    code, patched = call(apiserver, "PATCH", f"{V1}/e", series, "application/merge-patch+json")
    assert code == 200
    assert patched["series"]["count"] == 3
    assert call(apiserver, "GET", f"{CORE}/e")[1]["series"]["count"] == 3
    # Through events.k8s.io/v1 the note is immutable (ValidateEventUpdate), named by its
    # internal name.
    code, status = call(
        apiserver, "PATCH", f"{V1}/e", {"note": "changed"}, "application/merge-patch+json"
    )
    assert (code, status["details"]["causes"][0]["field"]) == (422, "message")
    code, status = call(apiserver, "DELETE", f"{V1}/e")
    assert code == 200
    assert status["status"] == "Success"
    assert status["details"]["group"] == "events.k8s.io"
    assert call(apiserver, "GET", f"{CORE}/e")[0] == 404


def test_errors_name_the_events_k8s_io_group(apiserver):
    code, body = call(apiserver, "GET", f"{V1}/nope")
    assert code == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'events.events.k8s.io "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "group": "events.k8s.io", "kind": "events"},
        "code": 404,
    }
    call(apiserver, "POST", V1, _v1_event("dup"))
    code, body = call(apiserver, "POST", V1, _v1_event("dup"))
    assert code == 409
    assert body["message"] == 'events.events.k8s.io "dup" already exists'
    wrong = dict(_v1_event("w"), apiVersion="events.k8s.io/v1beta1")
    code, body = call(apiserver, "POST", V1, wrong)
    assert code == 400


def test_events_v1_api_of_the_client(apiserver):
    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    try:
        events = client.EventsV1Api(api)
        created = events.create_namespaced_event(
            "default",
            client.EventsV1Event(
                metadata=client.V1ObjectMeta(name="f"),
                event_time="2024-01-02T03:04:05.000000Z",
                reporting_controller="kubesched",
                reporting_instance="kubesched-1",
                action="Binding",
                reason="Scheduled",
                note="hello",
                type="Normal",
                regarding=client.V1ObjectReference(kind="Pod", name="web", namespace="default"),
            ),
        )
        assert created.note == "hello"
        core = client.CoreV1Api(api).read_namespaced_event("f", "default")
        assert core.message == "hello"
        assert core.reporting_component == "kubesched"
        assert core.involved_object.name == "web"
        # Only events with an eventTime: the client's model requires one, and core/v1
        # events written without it read back with none (as from kube-apiserver).
        listed = events.list_namespaced_event("default", field_selector="metadata.name=f")
        assert [e.metadata.name for e in listed.items] == ["f"]
    finally:
        api.close()


@pytest.mark.parametrize(("v1", "core"), sorted(eventsv1.RENAMED.items()))
def test_field_mapping_round_trips(v1, core):
    assert eventsv1.to_core({v1: "x"})[core] == "x"
    assert eventsv1.to_v1({core: "x"})[v1] == "x"


def test_json_patch_paths_use_events_v1_names(apiserver):
    call(apiserver, "POST", V1, _v1_event("g"))
    ops = [{"op": "replace", "path": "/note", "value": "jp"}]
    code, status = call(apiserver, "PATCH", f"{V1}/g", ops, "application/json-patch+json")
    # /note reached the stored message, which events.k8s.io/v1 may not change.
    assert code == 422
    assert status["details"]["causes"][0]["message"] == 'Invalid value: "jp": field is immutable'
    assert status["details"]["causes"][0]["field"] == "message"
    ops = [{"op": "replace", "path": "/series/count", "value": 5}]
    code, patched = call(apiserver, "PATCH", f"{V1}/g", ops, "application/json-patch+json")
    assert (code, patched["series"]["count"]) == (200, 5)
    assert call(apiserver, "GET", f"{CORE}/g")[1]["series"]["count"] == 5


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_describe_shows_events_written_through_events_v1(apiserver):
    code, pod = call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("dp").obj())
    assert code == 201
    body = _v1_event("dp.1")
    body.update(reason="FailedScheduling", type="Warning", note="0/3 nodes are available.")
    body["regarding"] = {
        "kind": "Pod",
        "name": "dp",
        "namespace": "default",
        "uid": pod["metadata"]["uid"],
        "apiVersion": "v1",
    }
    assert call(apiserver, "POST", V1, body)[0] == 201
    result = subprocess.run(
        ["kubectl", "--kubeconfig", str(apiserver.kubeconfig_path), "describe", "pod", "dp"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    events = result.stdout.split("Events:", 1)[1].splitlines()
    line = next(line for line in events if "FailedScheduling" in line)
    assert line.split()[:2] == ["Warning", "FailedScheduling"]
    assert "(x2 over" in line  # series.count
    assert line.rstrip().endswith("default-scheduler  0/3 nodes are available.")
