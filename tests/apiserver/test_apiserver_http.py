"""The HTTP layer, spoken raw: discovery, Status bodies for bad input (and nothing changed),
bindings, patches, and watch streams (expiry, bookmarks, timeouts)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from apiserver_builders import NodeBuilder, PodBuilder


def call(server, method, path, body=None, content_type="application/json", raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(server.url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def watch_lines(server, path):
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        assert response.status == 200
        return [json.loads(line) for line in response.read().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        pytest.param("/version", None, id="version"),
        pytest.param("/api", "APIVersions", id="core-versions"),
        pytest.param("/apis", "APIGroupList", id="group-list"),
        pytest.param("/apis/coordination.k8s.io", "APIGroup", id="one-group"),
        pytest.param("/api/v1", "APIResourceList", id="core-resources"),
        pytest.param("/apis/coordination.k8s.io/v1", "APIResourceList", id="lease-resources"),
    ],
)
def test_discovery(apiserver, path, kind):
    code, body = call(apiserver, "GET", path)
    assert code == 200
    assert body.get("kind") == kind
    if path == "/api/v1":
        names = {r["name"] for r in body["resources"]}
        assert {
            "pods",
            "pods/status",
            "pods/binding",
            "nodes",
            "nodes/status",
            "bindings",
            "events",
            "namespaces",
        } <= names


# Each bad request: (method, path, body or raw bytes, content type) → code, reason, message part.
BAD = [
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        b"{not json",
        "application/json",
        400,
        "BadRequest",
        "json parse error",
        id="malformed-json",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        NodeBuilder("x").obj(),
        "application/json",
        400,
        "BadRequest",
        "cannot be handled as a Pod",
        id="wrong-kind",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        {**PodBuilder("x").obj(), "apiVersion": "apps/v1"},
        "application/json",
        400,
        "BadRequest",
        "does not match the expected API version",
        id="wrong-api-version",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        [1, 2],
        "application/json",
        400,
        "BadRequest",
        "not a JSON object",
        id="body-not-an-object",
    ),
    pytest.param(
        "GET",
        "/api/v1/widgets",
        None,
        "",
        404,
        "NotFound",
        "could not find the requested resource",
        id="unknown-resource",
    ),
    pytest.param(
        "GET",
        "/apis/nope.io/v1/things",
        None,
        "",
        404,
        "NotFound",
        "could not find the requested resource",
        id="unknown-group",
    ),
    pytest.param(
        "GET",
        "/api/v1/namespaces/default/pods?watch=true&fieldSelector=spec.bogus=1",
        None,
        "",
        400,
        "BadRequest",
        "field label not supported: spec.bogus",
        id="watch-bad-field",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/nowhere/pods",
        PodBuilder("x", "nowhere").obj(),
        "application/json",
        404,
        "NotFound",
        'namespaces "nowhere" not found',
        id="missing-namespace",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        PodBuilder("Bad_Name").obj(),
        "application/json",
        422,
        "Invalid",
        'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
        id="invalid-name",
    ),
    pytest.param(
        "PATCH",
        "/api/v1/namespaces/default/pods/keep",
        {"metadata": {}},
        "text/plain",
        415,
        "UnsupportedMediaType",
        "accepted media types include: application/json-patch+json",
        id="patch-media-type",
    ),
    pytest.param(
        "PUT",
        "/api/v1/namespaces/default/pods/keep",
        PodBuilder("other").obj(),
        "application/json",
        400,
        "BadRequest",
        "does not match the name on the URL",
        id="put-name-mismatch",
    ),
    pytest.param(
        "PUT",
        "/api/v1/namespaces/default/pods/keep",
        {**PodBuilder("keep").obj(), "metadata": {"name": "keep", "resourceVersion": "1"}},
        "application/json",
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods "keep": the object has been modified',
        id="stale-put",
    ),
    pytest.param(
        "PATCH",
        "/api/v1/namespaces/default/pods/keep",
        [{"op": "remove", "path": "/spec/nope"}],
        "application/json-patch+json",
        422,
        "Invalid",
        "doc is missing path",
        id="json-patch-bad-path",
    ),
    pytest.param(
        "PUT",
        "/api/v1/namespaces/default/bindings/x",
        {},
        "application/json",
        405,
        "MethodNotAllowed",
        'put is not supported on resources of kind "bindings"',
        id="put-binding-not-allowed",
    ),
    pytest.param(
        "GET",
        "/api/v1/namespaces/default/pods?limit=x",
        None,
        "",
        400,
        "BadRequest",
        "invalid limit",
        id="bad-limit",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        None,
        "application/json",
        400,
        "BadRequest",
        "not a JSON object",
        id="empty-body",
    ),
    pytest.param(
        "POST",
        "/api/v1/namespaces/default/pods",
        b"\xd9\xd9\xf7\xa1dkindcPod",
        "application/cbor",
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json",
        id="cbor-body",
    ),
]


@pytest.fixture(scope="module")
def keep(apiserver):
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("keep").obj())
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("keep2").obj())
    return apiserver


@pytest.mark.parametrize(("method", "path", "body", "ctype", "code", "reason", "message"), BAD)
def test_bad_input_is_a_status_and_changes_nothing(
    keep, method, path, body, ctype, code, reason, message
):
    _, before = call(keep, "GET", "/api/v1/pods")
    raw = body if isinstance(body, bytes) else None
    got_code, status = call(
        keep, method, path, None if raw else body, ctype or "application/json", raw
    )
    assert got_code == code
    assert status["kind"] == "Status"
    assert status["status"] == "Failure"
    assert (status["code"], status["reason"]) == (code, reason)
    assert message in status["message"]
    _, after = call(keep, "GET", "/api/v1/pods")
    assert after == before, "nothing stored changed"


def test_oversized_body_is_refused(keep):
    big = PodBuilder("big").obj()
    big["metadata"]["annotations"] = {"a": "x" * (4 * 1024 * 1024)}
    code, status = call(keep, "POST", "/api/v1/namespaces/default/pods", big)
    assert code == 413
    assert status["reason"] == "RequestEntityTooLarge"


def test_pod_defaults_and_node_allocatable(apiserver):
    _, pod = call(
        apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("defaults").obj()
    )
    assert pod["spec"]["schedulerName"] == "default-scheduler"
    assert pod["status"]["phase"] == "Pending"
    _, node = call(
        apiserver, "POST", "/api/v1/nodes", NodeBuilder("alloc").capacity(cpu="4", pods="110").obj()
    )
    assert node["status"]["allocatable"] == {"cpu": "4", "pods": "110"}


def test_binding_sets_node_once(apiserver):
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("bind-me").obj())
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "bind-me"},
        "target": {"kind": "Node", "name": "n1"},
    }
    code, status = call(
        apiserver, "POST", "/api/v1/namespaces/default/pods/bind-me/binding", binding
    )
    assert (code, status) == (
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
    _, pod = call(apiserver, "GET", "/api/v1/namespaces/default/pods/bind-me")
    assert pod["spec"]["nodeName"] == "n1"
    assert {"type": "PodScheduled", "status": "True"}.items() <= pod["status"]["conditions"][
        0
    ].items()
    code, status = call(
        apiserver,
        "POST",
        "/api/v1/namespaces/default/bindings",
        {**binding, "target": {"name": "n2"}},
    )
    assert code == 409
    assert (
        status["message"]
        == 'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "n1"'
    )
    code, status = call(
        apiserver,
        "POST",
        "/api/v1/namespaces/default/pods/gone/binding",
        {**binding, "metadata": {"name": "gone"}},
    )
    assert (code, status["message"]) == (404, 'pods "gone" not found')


@pytest.mark.parametrize(
    ("ctype", "patch", "expected_labels"),
    [
        pytest.param(
            "application/merge-patch+json",
            {"metadata": {"labels": {"b": "2", "a": None}}},
            {"b": "2"},
            id="merge-patch-adds-and-removes",
        ),
        pytest.param(
            "application/strategic-merge-patch+json",
            {"metadata": {"labels": {"c": "3"}}},
            {"a": "1", "c": "3"},
            id="strategic-as-merge",
        ),
        pytest.param(
            "application/json-patch+json",
            [
                {"op": "add", "path": "/metadata/labels/d", "value": "4"},
                {"op": "test", "path": "/metadata/labels/a", "value": "1"},
            ],
            {"a": "1", "d": "4"},
            id="json-patch",
        ),
    ],
)
def test_patch_types(apiserver, ctype, patch, expected_labels):
    name = f"patch-{ctype.split('/')[1].split('-')[0]}"
    call(
        apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder(name).label("a", "1").obj()
    )
    code, pod = call(apiserver, "PATCH", f"/api/v1/namespaces/default/pods/{name}", patch, ctype)
    assert code == 200
    assert pod["metadata"]["labels"] == expected_labels


def test_status_patch_leaves_spec_and_spec_patch_leaves_status(apiserver):
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("st").obj())
    ctype = "application/merge-patch+json"
    _, pod = call(
        apiserver,
        "PATCH",
        "/api/v1/namespaces/default/pods/st/status",
        {"status": {"phase": "Running"}, "spec": {"nodeName": "x"}},
        ctype,
    )
    assert pod["status"]["phase"] == "Running" and "nodeName" not in pod["spec"]
    _, pod = call(
        apiserver,
        "PATCH",
        "/api/v1/namespaces/default/pods/st",
        {"status": {"phase": "Failed"}},
        ctype,
    )
    assert pod["status"]["phase"] == "Running"


def test_delete_returns_pod_but_status_for_nodes(apiserver):
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("del").obj())
    code, body = call(apiserver, "DELETE", "/api/v1/namespaces/default/pods/del")
    assert (code, body["kind"]) == (200, "Pod")
    call(apiserver, "POST", "/api/v1/nodes", NodeBuilder("del-node").obj())
    code, body = call(apiserver, "DELETE", "/api/v1/nodes/del-node")
    assert (code, body["kind"], body["status"], body["details"]["name"]) == (
        200,
        "Status",
        "Success",
        "del-node",
    )


def test_watch_replays_from_version_and_times_out(apiserver):
    _, listed = call(apiserver, "GET", "/api/v1/namespaces/default/pods")
    rv = listed["metadata"]["resourceVersion"]
    call(apiserver, "POST", "/api/v1/namespaces/default/pods", PodBuilder("w1").obj())
    call(apiserver, "DELETE", "/api/v1/namespaces/default/pods/w1")
    events = watch_lines(
        apiserver, f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "w1"),
        ("DELETED", "w1"),
    ]


def test_watch_legacy_path_and_bookmarks(apiserver):
    _, listed = call(apiserver, "GET", "/api/v1/nodes")
    rv = listed["metadata"]["resourceVersion"]
    events = watch_lines(
        apiserver,
        f"/api/v1/watch/nodes?resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=1",
    )
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, "bookmarks arrive when asked for"
    assert bookmarks[0]["object"]["kind"] == "Node"
    assert int(bookmarks[-1]["object"]["metadata"]["resourceVersion"]) >= int(rv)


def test_watch_from_expired_version_is_one_error_event():
    from kubesched.apiserver.runner import new_store, start_apiserver

    store = new_store(window=2)
    with start_apiserver(store=store) as server:
        for i in range(5):
            call(server, "POST", "/api/v1/nodes", NodeBuilder(f"n{i}").obj())
        events = watch_lines(server, "/api/v1/nodes?watch=true&resourceVersion=1")
        assert len(events) == 1
        assert events[0]["type"] == "ERROR"
        assert events[0]["object"]["code"] == 410
        assert events[0]["object"]["reason"] == "Expired"
        code, status = call(server, "GET", "/api/v1/nodes?limit=1&continue=" + _old_token())
        assert (code, status["reason"]) == (410, "Expired")


def _old_token():
    import base64

    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": 1, "start": ["", "n0"]}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
def test_system_namespaces_cannot_be_deleted(apiserver, name):
    code, status = call(apiserver, "DELETE", f"/api/v1/namespaces/{name}")
    assert (code, status["reason"]) == (403, "Forbidden")
    assert (
        status["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    )
    assert call(apiserver, "GET", f"/api/v1/namespaces/{name}")[0] == 200


def test_deleting_a_namespace_deletes_what_is_in_it(apiserver):
    call(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "scratch"}})
    call(apiserver, "POST", "/api/v1/namespaces/scratch/pods", PodBuilder("p", "scratch").obj())
    code, ns = call(apiserver, "DELETE", "/api/v1/namespaces/scratch")
    assert (code, ns["kind"]) == (200, "Namespace")
    assert call(apiserver, "GET", "/api/v1/namespaces/scratch/pods/p")[0] == 404


def test_stop_ends_open_watches_promptly():
    import threading
    import time

    from kubesched.apiserver.runner import start_apiserver

    server = start_apiserver()
    lines = []
    reader = threading.Thread(
        target=lambda: lines.extend(watch_lines(server, "/api/v1/pods?watch=true"))
    )
    reader.start()
    time.sleep(0.2)
    started = time.monotonic()
    server.stop()
    reader.join(timeout=5)
    assert not reader.is_alive()
    assert time.monotonic() - started < 3
