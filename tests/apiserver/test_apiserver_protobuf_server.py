"""Protobuf request bodies against the real server: kubectl's ``create`` generators (which
send protobuf) store what the JSON path stores for the same object, and hand-encoded
Binding, Lease, events.k8s.io Event, Pod and DeleteOptions bodies do what their JSON does."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

from kubesched.apiserver.protobuf.schema import schema

KUBECTL = shutil.which("kubectl")
PROTOBUF = "application/vnd.kubernetes.protobuf"
S = schema()


def call(server, method, path, raw=None, content_type=PROTOBUF):
    request = urllib.request.Request(server.url + path, data=raw, method=method)
    if raw is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def encode(api_version, kind, message):
    unknown = S.classes["runtime.Unknown"](raw=message.SerializeToString())
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    return b"k8s\x00" + unknown.SerializeToString()


def post_json(server, path, body):
    return call(server, "POST", path, json.dumps(body).encode(), "application/json")


# -- kubectl create: protobuf in, the same object stored as from JSON ----------------------


@pytest.fixture(scope="module")
def kubectl(apiserver):
    if KUBECTL is None:
        pytest.skip("kubectl is not on PATH: install kubectl >= 1.27 to run the kubectl tests")

    def run(*args, stdin=None):
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(apiserver.kubeconfig_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)} failed: {result.stderr}"
        return result

    return run


CREATES = [
    pytest.param("namespace", lambda n, files: ["namespace", n], id="namespace"),
    pytest.param(
        "configmap",
        lambda n, files: ["configmap", n, "--from-literal=a=b", *files],
        id="configmap-literal-files-binary",
    ),
    pytest.param(
        "service",
        lambda n, files: ["service", "clusterip", n, "--tcp=80:8080", "--tcp=443"],
        id="service-clusterip",
    ),
    pytest.param(
        "priorityclass",
        lambda n, files: [
            "priorityclass",
            n,
            "--value=1000",
            "--global-default",
            "--preemption-policy=Never",
            "--description=batch",
        ],
        id="priorityclass",
    ),
    pytest.param(
        "pdb",
        lambda n, files: ["pdb", n, "--min-available=50%", "--selector=app=web"],
        id="pdb-min-available",
    ),
    pytest.param(
        "pdb",
        lambda n, files: ["pdb", n, "--max-unavailable=1", "--selector=app=web,tier in (a,b)"],
        id="pdb-max-unavailable",
    ),
]


def comparable(obj, name):
    """``obj`` without what differs between two creations, its name written NAME."""
    obj = json.loads(json.dumps(obj).replace(name, "NAME"))
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        del obj["metadata"][key]
    return obj


@pytest.mark.parametrize(("resource", "args"), CREATES)
def test_kubectl_create_stores_what_json_stores(kubectl, tmp_path, request, resource, args):
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    (tmp_path / "notes.txt").write_text("hello\n")
    files = [f"--from-file={tmp_path / 'blob.bin'}", f"--from-file={tmp_path / 'notes.txt'}"]
    case = request.node.callspec.id
    pb_name, json_name = f"pb-{case}", f"js-{case}"

    sent = kubectl("create", *args(pb_name, files), "-v=8").stderr
    assert f"Content-Type: {PROTOBUF}" in sent, "kubectl sent protobuf"
    stored_pb = json.loads(kubectl("get", resource, pb_name, "-o", "json").stdout)
    if resource != "namespace":
        kubectl("delete", resource, pb_name)  # one global default PriorityClass at a time

    generated = kubectl("create", *args(json_name, files), "--dry-run=client", "-o", "json").stdout
    sent = kubectl("create", "-f", "-", "-v=8", stdin=generated).stderr
    assert "Content-Type: application/json" in sent
    stored_json = json.loads(kubectl("get", resource, json_name, "-o", "json").stdout)
    kubectl("delete", resource, json_name, "--wait=false")

    assert comparable(stored_pb, pb_name) == comparable(stored_json, json_name)
    if resource == "configmap":
        assert stored_pb["binaryData"]["blob.bin"] == generated_binary(generated)


def generated_binary(generated):
    return json.loads(generated)["binaryData"]["blob.bin"]


# -- hand-encoded bodies of the kinds Go clients write ------------------------------------


def test_pod_binding_lease_and_events_v1(apiserver):
    pod_json = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "json-pod", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}
            ],
            "enableServiceLinks": False,
            "priority": 0,
        },
    }
    pod = S.classes["core.Pod"]()
    pod.metadata.name = "pb-pod"
    pod.metadata.labels["app"] = "web"
    container = pod.spec.containers.add(name="c", image="nginx")
    container.resources.requests["cpu"].string = "100m"
    pod.spec.enableServiceLinks = False
    pod.spec.priority = 0
    code, created = call(
        apiserver, "POST", "/api/v1/namespaces/default/pods", encode("v1", "Pod", pod)
    )
    assert code == 201, created
    _, from_json = post_json(apiserver, "/api/v1/namespaces/default/pods", pod_json)
    assert comparable(created, "pb-pod") == comparable(from_json, "json-pod")

    binding = S.classes["core.Binding"]()
    binding.metadata.name = "pb-pod"
    binding.target.kind, binding.target.name = "Node", "n1"
    path = "/api/v1/namespaces/default/pods/pb-pod/binding"
    code, _ = call(apiserver, "POST", path, encode("v1", "Binding", binding))
    assert code == 201
    assert (
        call(apiserver, "GET", "/api/v1/namespaces/default/pods/pb-pod")[1]["spec"]["nodeName"]
        == "n1"
    )

    lease = S.classes["coordination.Lease"]()
    lease.metadata.name = "kube-scheduler"
    lease.spec.holderIdentity = "me"
    lease.spec.leaseDurationSeconds = 15
    lease.spec.leaseTransitions = 0
    lease.spec.renewTime.seconds, lease.spec.renewTime.nanos = 1700000000, 250000000
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    code, stored = call(apiserver, "POST", path, encode("coordination.k8s.io/v1", "Lease", lease))
    assert code == 201, stored
    assert stored["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "leaseTransitions": 0,
        "renewTime": "2023-11-14T22:13:20.250000Z",
    }

    event = S.classes["events.Event"]()
    event.metadata.name = "pb-pod.1"
    event.eventTime.seconds = 1700000000
    event.reportingController, event.reportingInstance = "default-scheduler", "me"
    event.action, event.reason, event.type = "Binding", "Scheduled", "Normal"
    event.note = "Successfully assigned default/pb-pod to n1"
    event.regarding.kind, event.regarding.name = "Pod", "pb-pod"
    event.regarding.namespace = "default"
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    code, stored = call(apiserver, "POST", path, encode("events.k8s.io/v1", "Event", event))
    assert code == 201, stored
    assert (stored["reason"], stored["note"], stored["regarding"]["name"]) == (
        "Scheduled",
        "Successfully assigned default/pb-pod to n1",
        "pb-pod",
    )
    core = call(apiserver, "GET", "/api/v1/namespaces/default/events/pb-pod.1")[1]
    assert core["message"] == "Successfully assigned default/pb-pod to n1"


def test_delete_options_in_protobuf(apiserver):
    pod_json = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "doomed"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    _, pod = post_json(apiserver, "/api/v1/namespaces/default/pods", pod_json)
    options = S.classes["meta.DeleteOptions"]()
    options.preconditions.uid = "not-" + pod["metadata"]["uid"]
    path = "/api/v1/namespaces/default/pods/doomed"
    code, status = call(apiserver, "DELETE", path, encode("v1", "DeleteOptions", options))
    assert (code, status["reason"]) == (409, "Conflict")
    options = S.classes["meta.DeleteOptions"](gracePeriodSeconds=0)
    options.preconditions.uid = pod["metadata"]["uid"]
    code, _ = call(apiserver, "DELETE", path, encode("v1", "DeleteOptions", options))
    assert code == 200
    assert call(apiserver, "GET", path)[0] == 404


def test_bad_bodies_store_nothing(apiserver):
    path = "/api/v1/namespaces/default/configmaps"
    _, before = call(apiserver, "GET", path)
    configmap = S.classes["core.ConfigMap"]()
    configmap.metadata.name = "never"
    good = encode("v1", "ConfigMap", configmap)
    for raw, code in [
        (b"{}" + good, 400),  # bad magic
        (good[:-3], 400),  # truncated
        (encode("v1", "Widget", configmap), 400),  # a kind kube-apiserver does not know
        (encode("apiextensions.k8s.io/v1", "CustomResourceDefinition", configmap), 415),
    ]:
        got, status = call(apiserver, "POST", path, raw)
        assert (got, status["kind"], status["code"]) == (code, "Status", code)
    _, after = call(apiserver, "GET", path)
    assert [i["metadata"]["name"] for i in after["items"]] == [
        i["metadata"]["name"] for i in before["items"]
    ]


def test_scale_subresource_takes_a_protobuf_scale(apiserver):
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "pb-rs"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "pb-rs"}},
            "template": {
                "metadata": {"labels": {"app": "pb-rs"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert post_json(apiserver, "/apis/apps/v1/namespaces/default/replicasets", rs)[0] == 201
    scale = S.classes["autoscaling.Scale"]()
    scale.metadata.name, scale.metadata.namespace = "pb-rs", "default"
    scale.spec.replicas = 3
    path = "/apis/apps/v1/namespaces/default/replicasets/pb-rs"
    code, body = call(apiserver, "PUT", path + "/scale", encode("autoscaling/v1", "Scale", scale))
    assert (code, body["spec"]) == (200, {"replicas": 3})
    assert call(apiserver, "GET", path)[1]["spec"]["replicas"] == 3
