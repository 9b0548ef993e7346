"""Table responses (server-side printing) for pods and nodes, raw and through kubectl:
the columns ``kubectl get`` shows against a real cluster, wide columns included."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest
from apiserver_builders import NodeBuilder, PodBuilder, call

from kubesched.apiserver import tables

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
KUBECTL = shutil.which("kubectl")


def _node():
    node = NodeBuilder("tn1").capacity(cpu="4").label("node-role.kubernetes.io/worker", "").obj()
    node["status"].update(
        conditions=[{"type": "Ready", "status": "True"}],
        addresses=[
            {"type": "InternalIP", "address": "10.0.0.1"},
            {"type": "Hostname", "address": "tn1"},
        ],
        nodeInfo={
            "kubeletVersion": "v1.32.0",
            "osImage": "Debian GNU/Linux 12",
            "kernelVersion": "6.1.0",
            "containerRuntimeVersion": "containerd://1.7.0",
        },
    )
    node["spec"]["unschedulable"] = True
    return node


@pytest.fixture(scope="module")
def objects(apiserver):
    assert call(apiserver, "POST", "/api/v1/nodes", _node())[0] == 201
    pod = PodBuilder("tp").node("tn1").obj()
    assert call(apiserver, "POST", "/api/v1/namespaces/default/pods", pod)[0] == 201
    status = {
        "phase": "Running",
        "podIP": "10.1.0.5",
        "podIPs": [{"ip": "10.1.0.5"}],
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {"name": "c", "ready": True, "restartCount": 0, "state": {"running": {}}}
        ],
    }
    code, _ = call(
        apiserver,
        "PATCH",
        "/api/v1/namespaces/default/pods/tp/status",
        {"status": status},
        "application/merge-patch+json",
    )
    assert code == 200
    yield
    call(apiserver, "DELETE", "/api/v1/namespaces/default/pods/tp?gracePeriodSeconds=0")
    call(apiserver, "DELETE", "/api/v1/nodes/tn1")


def test_pod_table(apiserver, objects):
    code, body = call(
        apiserver, "GET", "/api/v1/namespaces/default/pods", headers={"Accept": TABLE}
    )
    assert code == 200
    assert body["kind"] == "Table"
    assert body["apiVersion"] == "meta.k8s.io/v1"
    assert [(c["name"], c["priority"]) for c in body["columnDefinitions"]] == [
        ("Name", 0),
        ("Ready", 0),
        ("Status", 0),
        ("Restarts", 0),
        ("Age", 0),
        ("IP", 1),
        ("Node", 1),
        ("Nominated Node", 1),
        ("Readiness Gates", 1),
    ]
    row = next(r for r in body["rows"] if r["cells"][0] == "tp")
    name, ready, status, restarts, _age, ip, node, nominated, gates = row["cells"]
    assert (name, ready, status, restarts, ip, node, nominated, gates) == (
        "tp",
        "1/1",
        "Running",
        "0",
        "10.1.0.5",
        "tn1",
        "<none>",
        "<none>",
    )
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "tp"
    assert body["metadata"]["resourceVersion"]


def test_node_table_of_one_object(apiserver, objects):
    code, body = call(apiserver, "GET", "/api/v1/nodes/tn1", headers={"Accept": TABLE})
    assert code == 200
    assert [c["name"] for c in body["columnDefinitions"]] == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "Internal-IP",
        "External-IP",
        "OS-Image",
        "Kernel-Version",
        "Container-Runtime",
    ]
    cells = body["rows"][0]["cells"]
    assert cells[:3] == ["tn1", "Ready,SchedulingDisabled", "worker"]
    assert cells[4:] == [
        "v1.32.0",
        "10.0.0.1",
        "<none>",
        "Debian GNU/Linux 12",
        "6.1.0",
        "containerd://1.7.0",
    ]


def test_include_object_and_plain_json_without_accept(apiserver, objects):
    code, body = call(
        apiserver,
        "GET",
        "/api/v1/nodes?includeObject=Object",
        headers={"Accept": TABLE},
    )
    assert code == 200
    assert body["rows"][0]["object"]["kind"] == "Node"
    code, body = call(
        apiserver, "GET", "/api/v1/nodes?includeObject=None", headers={"Accept": TABLE}
    )
    assert code == 200
    assert "object" not in body["rows"][0]
    code, body = call(apiserver, "GET", "/api/v1/nodes")
    assert code == 200
    assert body["kind"] == "NodeList"
    code, body = call(
        apiserver, "GET", "/api/v1/nodes?includeObject=All", headers={"Accept": TABLE}
    )
    assert code == 400
    assert body["reason"] == "BadRequest"


def test_other_resources_get_the_default_table(apiserver):
    # CustomResourceDefinitions have no printer upstream either.
    code, body = call(
        apiserver,
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        headers={"Accept": TABLE},
    )
    assert code == 200
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Created At"]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (0, "0s"),
        (119, "119s"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (10 * 3600, "10h"),
        (3 * 86400 + 3600, "3d1h"),
        (30 * 86400, "30d"),
        (3 * 365 * 86400 + 86400, "3y1d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds, text):
    assert tables.human_duration(seconds) == text


def test_pod_status_column():
    now = datetime(2024, 1, 1, tzinfo=UTC)
    created = (now - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    pod = {
        "metadata": {"name": "p", "creationTimestamp": created, "deletionTimestamp": created},
        "spec": {
            "containers": [{"name": "a"}, {"name": "b"}],
            "readinessGates": [{"conditionType": "X"}],
        },
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {
                    "name": "a",
                    "restartCount": 2,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                },
                {"name": "b", "ready": True, "restartCount": 1, "state": {"running": {}}},
            ],
        },
    }
    assert tables.pod_cells(pod, now) == [
        "p", "1/2", "Terminating", "3", "5m", "<none>", "<none>", "<none>", "0/1"
    ]  # fmt: skip
    pod["metadata"].pop("deletionTimestamp")
    assert tables.pod_cells(pod, now)[2] == "CrashLoopBackOff"


@pytest.mark.parametrize(
    ("accept", "wanted"),
    [
        (TABLE, True),
        ("application/json", False),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", False),
        ("", False),
    ],
)
def test_wants_table(accept, wanted):
    assert tables.wants_table(accept) is wanted


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")
def test_kubectl_get_prints_the_server_columns(apiserver, objects):
    def kubectl(*args):
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(apiserver.kubeconfig_path), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return [line.split() for line in result.stdout.splitlines()]

    pods = kubectl("get", "pods")
    assert pods[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[1][:4] == ["tp", "1/1", "Running", "0"]
    wide = kubectl("get", "pods", "-o", "wide")
    assert wide[0] == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
        "READINESS", "GATES",
    ]  # fmt: skip
    assert wide[1][5:] == ["10.1.0.5", "tn1", "<none>", "<none>"]
    nodes = kubectl("get", "nodes")
    assert nodes[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [nodes[1][i] for i in (0, 1, 2, 4)] == [
        "tn1", "Ready,SchedulingDisabled", "worker", "v1.32.0"
    ]  # fmt: skip
    wide_nodes = kubectl("get", "nodes", "-o", "wide")
    assert wide_nodes[0] == [
        "NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
        "KERNEL-VERSION", "CONTAINER-RUNTIME",
    ]  # fmt: skip
    assert wide_nodes[1][5:7] == ["10.0.0.1", "<none>"]


def test_watch_as_table_sends_one_row_tables(apiserver, objects):
    import json
    import urllib.request

    request = urllib.request.Request(
        f"{apiserver.url}/api/v1/nodes?watch=1&timeoutSeconds=1", headers={"Accept": TABLE}
    )
    request2 = urllib.request.Request(
        f"{apiserver.url}/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1",
        headers={"Accept": TABLE},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        events = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert events[0]["type"] == "ADDED"
    assert events[0]["object"]["kind"] == "Table"
    assert events[0]["object"]["columnDefinitions"][0]["name"] == "Name"
    assert events[0]["object"]["rows"][0]["cells"][0] == "tn1"
    with urllib.request.urlopen(request2, timeout=10) as response:
        events = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert [e["object"]["rows"][0]["cells"][0] for e in events] == ["tp"]


def test_event_cells():
    now = datetime(2024, 1, 1, 0, 10, tzinfo=UTC)
    core = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{c}"},
        "reason": "Scheduled",
        "type": "Normal",
        "message": " assigned \n",
        "source": {"component": "default-scheduler"},
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:09:00Z",
        "count": 4,
    }
    assert tables.event_cells(core, now) == [
        "60s", "Normal", "Scheduled", "pod/web", "spec.containers{c}", "default-scheduler",
        "assigned", "10m", 4, "e1",
    ]  # fmt: skip
    new_api = {
        "metadata": {"name": "e2"},
        "involvedObject": {"kind": "Node"},
        "eventTime": "2024-01-01T00:05:00.000000Z",
        "series": {"count": 3, "lastObservedTime": "2024-01-01T00:08:00.000000Z"},
        "reportingComponent": "kubesched",
        "reportingInstance": "kubesched-1",
        "type": "Warning",
        "reason": "R",
        "message": "m",
    }
    assert tables.event_cells(new_api, now) == [
        "2m", "Warning", "R", "node", "", "kubesched, kubesched-1", "m", "5m", 3, "e2",
    ]  # fmt: skip


def test_events_table_through_both_apis(apiserver):
    event = {
        "metadata": {"name": "te"},
        "involvedObject": {"kind": "Pod", "name": "tp", "namespace": "default"},
        "reason": "Scheduled",
        "type": "Normal",
        "message": "hi",
    }
    assert call(apiserver, "POST", "/api/v1/namespaces/default/events", event)[0] == 201
    for path, kind in (
        ("/api/v1/namespaces/default/events", "v1"),
        ("/apis/events.k8s.io/v1/namespaces/default/events", "events.k8s.io/v1"),
    ):
        code, body = call(
            apiserver, "GET", f"{path}?includeObject=Object", headers={"Accept": TABLE}
        )
        assert code == 200
        assert [c["name"] for c in body["columnDefinitions"]][:4] == [
            "Last Seen", "Type", "Reason", "Object"
        ]  # fmt: skip
        row = next(r for r in body["rows"] if r["cells"][-1] == "te")
        assert row["cells"][1:4] == ["Normal", "Scheduled", "pod/tp"]
        assert row["cells"][6] == "hi"
        assert row["object"]["apiVersion"] == kind
