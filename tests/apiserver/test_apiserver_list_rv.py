"""LIST with ``resourceVersion`` and ``resourceVersionMatch`` as kube-apiserver answers it:
validation (422 on ListOptions), the state as of an exact version (and 410 once it left
the window), not-older-than reads, the wait for a version not reached yet (504 Too large
resource version), and every page of a paged list showing the first page's state."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import kubernetes
import pytest

from kubesched.apiserver.runner import new_store, start_apiserver


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("rv") / "kubeconfig"
    with start_apiserver(kubeconfig_path=path) as handle:
        yield handle


def call(server, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _namespace(server, name):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert call(server, "POST", "/api/v1/namespaces", body)[0] == 201


def _configmap(server, namespace, name, value):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    body["data"] = {"v": value}
    code, created = call(server, "POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert code == 201, created
    return int(created["metadata"]["resourceVersion"])


def _list(server, namespace, query):
    return call(server, "GET", f"/api/v1/namespaces/{namespace}/configmaps?{query}")


def _contents(body):
    return {cm["metadata"]["name"]: cm["data"]["v"] for cm in body["items"]}


@pytest.fixture(scope="module")
def history(server):
    """Namespace ``h``: a=1, b=1 created; a changed to 2; b deleted; c created. Returns the
    versions after each step."""
    _namespace(server, "h")
    after_a = _configmap(server, "h", "a", "1")
    after_b = _configmap(server, "h", "b", "1")
    code, a = call(server, "GET", "/api/v1/namespaces/h/configmaps/a")
    a["data"]["v"] = "2"
    code, changed = call(server, "PUT", "/api/v1/namespaces/h/configmaps/a", a)
    assert code == 200
    after_change = int(changed["metadata"]["resourceVersion"])
    assert call(server, "DELETE", "/api/v1/namespaces/h/configmaps/b")[0] == 200
    after_c = _configmap(server, "h", "c", "1")
    return {"a": after_a, "b": after_b, "change": after_change, "c": after_c}


INVALID_CASES = [
    pytest.param(
        "resourceVersionMatch=NotOlderThan",
        [
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        ],
        id="match-without-version",
    ),
    pytest.param(
        "resourceVersion=0&resourceVersionMatch=Exact",
        [
            'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
        ],
        id="exact-zero",
    ),
    pytest.param(
        "resourceVersion=1&resourceVersionMatch=Latest",
        [
            'resourceVersionMatch: Unsupported value: "Latest": supported values: "Exact", "NotOlderThan", ""'
        ],
        id="unknown-match",
    ),
    pytest.param(
        "resourceVersionMatch=Exact&continue=abc",
        [
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
        ],
        id="match-with-continue",
    ),
]


@pytest.mark.parametrize(("query", "errors"), INVALID_CASES)
def test_bad_list_options_are_422_on_listoptions(server, query, errors):
    code, status = call(server, "GET", f"/api/v1/configmaps?{query}")
    summary = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    assert code == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {summary}'
    assert status["details"]["kind"] == "ListOptions"
    assert status["details"]["group"] == "meta.k8s.io"
    assert [f"{c['field']}: {c['message']}" for c in status["details"]["causes"]] == errors


UNSUPPORTED_WATCH = (
    'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"'
)
FORBIDDEN_MATCH = (
    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
    "sendInitialEvents is provided"
)
NEEDS_NOT_OLDER_THAN = (
    "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
    "resourceVersionMatch to NotOlderThan"
)


@pytest.mark.parametrize(
    ("query", "errors"),
    [
        ("resourceVersion=1&resourceVersionMatch=Exact", [FORBIDDEN_MATCH, UNSUPPORTED_WATCH]),
        ("resourceVersion=1&resourceVersionMatch=NotOlderThan", [FORBIDDEN_MATCH]),
        ("resourceVersion=1&sendInitialEvents=true", [NEEDS_NOT_OLDER_THAN]),
        ("sendInitialEvents=false", [NEEDS_NOT_OLDER_THAN]),
        (
            "sendInitialEvents=true&resourceVersionMatch=Exact",
            [
                NEEDS_NOT_OLDER_THAN,
                'resourceVersionMatch: Unsupported value: "Exact": '
                'supported values: "NotOlderThan"',
            ],
        ),
    ],
)
def test_bad_watch_options_are_422_as_validate_watch_options(server, query, errors):
    # With WatchList on (1.34) and SetListOptionsDefaults applied first.
    code, status = call(server, "GET", f"/api/v1/configmaps?watch=1&{query}")
    summary = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {summary}'


def test_resource_version_beside_continue_is_a_bad_request(server):
    code, first = call(server, "GET", "/api/v1/namespaces?limit=1")
    token = first["metadata"]["continue"]
    code, status = call(
        server, "GET", f"/api/v1/namespaces?limit=1&continue={token}&resourceVersion=3"
    )
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == "specifying resource version is not allowed when using continue"


def test_exact_shows_the_state_at_that_version(server, history):
    code, body = _list(server, "h", f"resourceVersion={history['b']}&resourceVersionMatch=Exact")
    assert code == 200
    assert body["metadata"]["resourceVersion"] == str(history["b"])
    assert _contents(body) == {"a": "1", "b": "1"}
    assert [cm["metadata"]["resourceVersion"] for cm in body["items"]] == [
        str(history["a"]),
        str(history["b"]),
    ]
    code, body = _list(
        server, "h", f"resourceVersion={history['change']}&resourceVersionMatch=Exact"
    )
    assert _contents(body) == {"a": "2", "b": "1"}
    code, body = _list(server, "h", f"resourceVersion={history['a']}&resourceVersionMatch=Exact")
    assert _contents(body) == {"a": "1"}


def test_a_version_with_a_limit_and_no_match_is_exact_as_upstreams_legacy_rule(server, history):
    code, body = _list(server, "h", f"resourceVersion={history['b']}&limit=10")
    assert code == 200
    assert body["metadata"]["resourceVersion"] == str(history["b"])
    assert _contents(body) == {"a": "1", "b": "1"}


@pytest.mark.parametrize(
    "query",
    [
        "resourceVersion={v}",
        "resourceVersion={v}&resourceVersionMatch=NotOlderThan",
        "resourceVersion=0",
        "",
    ],
)
def test_not_older_than_unset_and_zero_show_the_newest_state(server, history, query):
    code, body = _list(server, "h", query.format(v=history["a"]))
    assert code == 200
    assert _contents(body) == {"a": "2", "c": "1"}
    assert int(body["metadata"]["resourceVersion"]) >= history["c"]


def test_pages_of_a_list_show_the_state_of_the_first_page(server, history):
    _namespace(server, "pages")
    for name in ("p1", "p2", "p3"):
        _configmap(server, "pages", name, "old")
    code, first = _list(server, "pages", "limit=1")
    version = first["metadata"]["resourceVersion"]
    assert _contents(first) == {"p1": "old"}
    assert call(server, "DELETE", "/api/v1/namespaces/pages/configmaps/p2")[0] == 200
    code, p3 = call(server, "GET", "/api/v1/namespaces/pages/configmaps/p3")
    p3["data"]["v"] = "new"
    assert call(server, "PUT", "/api/v1/namespaces/pages/configmaps/p3", p3)[0] == 200
    seen = {}
    token = first["metadata"]["continue"]
    while token:
        code, page = _list(server, "pages", f"limit=1&continue={token}")
        assert code == 200
        assert page["metadata"]["resourceVersion"] == version
        seen.update(_contents(page))
        token = page["metadata"].get("continue")
    assert seen == {"p2": "old", "p3": "old"}
    assert _contents(_list(server, "pages", "")[1]) == {"p1": "old", "p3": "new"}


def test_a_version_not_reached_yet_is_waited_for(server):
    _namespace(server, "later")
    target = _configmap(server, "later", "x", "1") + 1
    answer = {}

    def list_at_target():
        answer["reply"] = _list(
            server, "later", f"resourceVersion={target}&resourceVersionMatch=NotOlderThan"
        )

    waiting = threading.Thread(target=list_at_target)
    waiting.start()
    _configmap(server, "later", "y", "1")  # reaches target, whether the list waits yet or not
    waiting.join(timeout=10)
    code, body = answer["reply"]
    assert code == 200
    assert _contents(body) == {"x": "1", "y": "1"}
    assert int(body["metadata"]["resourceVersion"]) >= target


def test_a_version_never_reached_is_504_too_large_with_retry_after(server):
    current = int(call(server, "GET", "/api/v1/namespaces")[1]["metadata"]["resourceVersion"])
    request = urllib.request.Request(
        server.url
        + f"/api/v1/configmaps?resourceVersion={current + 1000}&resourceVersionMatch=Exact"
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 504
    assert refused.value.headers["Retry-After"] == "1"
    status = json.loads(refused.value.read())
    assert status["reason"] == "Timeout"
    assert status["message"].startswith(
        f"Timeout: Too large resource version: {current + 1000}, current: "
    )
    assert status["details"] == {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }


def test_exact_older_than_the_window_is_410_expired(tmp_path):
    store = new_store(window=3)
    with start_apiserver(kubeconfig_path=tmp_path / "kc", store=store) as small:
        _namespace(small, "w")
        first = _configmap(small, "w", "a", "1")
        for name in ("b", "c", "d", "e"):
            _configmap(small, "w", name, "1")
        code, status = _list(small, "w", f"resourceVersion={first}&resourceVersionMatch=Exact")
        assert (code, status["reason"]) == (410, "Expired")
        assert status["message"] == "The resourceVersion for the provided list is too old."
        code, body = _list(small, "w", f"resourceVersion={first}&resourceVersionMatch=NotOlderThan")
        assert code == 200
        assert len(body["items"]) == 5


def test_exact_reads_across_a_restart_with_data(tmp_path):
    data = tmp_path / "cluster.db"
    with start_apiserver(kubeconfig_path=tmp_path / "kc", data=data) as first:
        _namespace(first, "r")
        kept = _configmap(first, "r", "gone", "was-here")
        assert call(first, "DELETE", "/api/v1/namespaces/r/configmaps/gone")[0] == 200
    with start_apiserver(kubeconfig_path=tmp_path / "kc2", data=data) as second:
        code, body = _list(second, "r", f"resourceVersion={kept}&resourceVersionMatch=Exact")
        assert code == 200
        assert _contents(body) == {"gone": "was-here"}
        assert body["items"][0]["metadata"]["resourceVersion"] == str(kept)
        assert _list(second, "r", "")[1]["items"] == []


def test_kubernetes_client_lists_at_an_exact_version(server, history):
    api = kubernetes.config.new_client_from_config(config_file=str(server.kubeconfig_path))
    try:
        listed = kubernetes.client.CoreV1Api(api).list_namespaced_config_map(
            "h", resource_version=str(history["b"]), resource_version_match="Exact"
        )
    finally:
        api.close()
    assert {cm.metadata.name: cm.data["v"] for cm in listed.items} == {"a": "1", "b": "1"}
    assert listed.metadata.resource_version == str(history["b"])
