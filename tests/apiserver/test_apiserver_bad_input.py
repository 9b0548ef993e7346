"""Malformed input refused at the decoding boundary, with nothing deleted or stored.

DELETE options (one object and a collection) that are not JSON, not an object, of the
wrong types, in a format with no decoder or with an unknown propagation policy; bodies and
patches (JSON, merge and strategic: server-side apply is not served) holding values of the wrong JSON type; JSON nested too deeply;
lone surrogates (replaced with U+FFFD, as Go's decoder does)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from apiserver_builders import PodBuilder, call

CM_PATH = "/api/v1/namespaces/default/configmaps"
PODS_PATH = "/api/v1/namespaces/default/pods"


def raw_call(server, method, path, data: bytes, content_type="application/json"):
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _configmap(server, name, labels=None):
    body = {"metadata": {"name": name, "labels": labels or {"set": "bad-input"}}}
    code, got = call(server, "POST", CM_PATH, dict(body, data={"k": "v"}))
    assert code == 201, got
    return got


def _names(server):
    code, body = call(server, "GET", f"{CM_PATH}?labelSelector=set%3Dbad-input")
    assert code == 200
    return sorted(item["metadata"]["name"] for item in body["items"])


BAD_DELETE_BODIES = [
    pytest.param(b"{", "application/json", 400, "json parse error", id="not-json"),
    pytest.param(
        b"[1]", "application/json", 400, "into Go value of type v1.DeleteOptions", id="array"
    ),
    pytest.param(
        b"5", "application/json", 400, "into Go value of type v1.DeleteOptions", id="number"
    ),
    pytest.param(
        b'{"gracePeriodSeconds":"abc"}',
        "application/json",
        400,
        "cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
        id="grace-string",
    ),
    pytest.param(
        b'{"orphanDependents":"yes"}', "application/json", 400, "of type bool", id="orphan-string"
    ),
    pytest.param(
        b'{"preconditions":5}', "application/json", 400, "v1.Preconditions", id="preconditions"
    ),
    pytest.param(b'{"dryRun":"All"}', "application/json", 400, "of type []string", id="dry-run"),
    pytest.param(
        b'{"kind":"Pod"}',
        "application/json",
        400,
        "cannot be converted to DeleteOptions",
        id="kind",
    ),
    pytest.param(b"{}", "text/plain", 415, "unknown format", id="text-plain"),
    pytest.param(
        b'{"propagationPolicy":"Sometimes"}',
        "application/json",
        422,
        'Unsupported value: "Sometimes"',
        id="policy",
    ),
]


@pytest.mark.parametrize(("data", "content_type", "code", "words"), BAD_DELETE_BODIES)
def test_malformed_delete_body_deletes_nothing(apiserver, data, content_type, code, words):
    _configmap(apiserver, "one")
    _configmap(apiserver, "two")
    got_code, status = raw_call(apiserver, "DELETE", f"{CM_PATH}/one", data, content_type)
    assert (got_code, status["kind"]) == (code, "Status")
    assert words in status["message"]
    got_code, status = raw_call(apiserver, "DELETE", CM_PATH, data, content_type)
    assert (got_code, status["kind"]) == (code, "Status")
    assert words in status["message"]
    assert _names(apiserver) == ["one", "two"]
    assert call(apiserver, "DELETE", f"{CM_PATH}?labelSelector=set%3Dbad-input")[0] == 200
    assert _names(apiserver) == []


@pytest.mark.parametrize(
    ("query", "code", "words"),
    [
        ("gracePeriodSeconds=abc", 400, 'parsing "abc"'),
        ("orphanDependents=maybe", 400, 'parsing "maybe"'),
        ("propagationPolicy=Sometimes", 422, 'Unsupported value: "Sometimes"'),
        ("orphanDependents=true&propagationPolicy=Orphan", 422, "cannot be both set"),
    ],
)
def test_malformed_delete_query_deletes_nothing(apiserver, query, code, words):
    _configmap(apiserver, "one")
    for path in (f"{CM_PATH}/one?{query}", f"{CM_PATH}?{query}"):
        got_code, status = call(apiserver, "DELETE", path)
        assert (got_code, status["kind"]) == (code, "Status")
        assert words in status["message"]
    assert _names(apiserver) == ["one"]
    assert call(apiserver, "DELETE", f"{CM_PATH}/one")[0] == 200


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            {"metadata": {"name": "x", "labels": 5}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
            "type map[string]string",
        ),
        ({"metadata": {"name": True}}, "bool into Go struct field ObjectMeta.metadata.name"),
        (
            {"metadata": {"name": "x", "labels": {"a": 1}}},
            "ObjectMeta.metadata.labels of type string",
        ),
        ({"metadata": {"name": "x"}, "spec": 5}, "Go struct field Pod.spec of type v1.PodSpec"),
        (
            {"metadata": {"name": "x"}, "spec": {"containers": [{"name": 5, "image": "i"}]}},
            "Go struct field Container.spec.containers.name of type string",
        ),
        (
            {"metadata": {"name": "x"}, "spec": {"containers": "c"}},
            "field PodSpec.spec.containers of type []v1.Container",
        ),
        (
            {"metadata": {"name": "x"}, "spec": {"priority": 1.5, "containers": []}},
            "number 1.5 into Go struct field PodSpec.spec.priority of type int32",
        ),
        (
            {"metadata": {"name": "x"}, "spec": {"hostNetwork": "yes", "containers": []}},
            "PodSpec.spec.hostNetwork of type bool",
        ),
    ],
)
def test_wrong_json_types_in_a_body_are_a_bad_request(apiserver, body, words):
    code, status = call(apiserver, "POST", PODS_PATH, body)
    assert (code, status["kind"], status["reason"]) == (400, "Status", "BadRequest")
    assert status["message"].startswith('Pod in version "v1" cannot be handled as a Pod: ')
    assert words in status["message"]
    assert call(apiserver, "GET", f"{PODS_PATH}/x")[0] == 404


def test_wrong_json_types_in_an_update_are_a_bad_request(apiserver):
    stored = _configmap(apiserver, "upd")
    stored["data"] = {"k": ["v"]}
    code, status = call(apiserver, "PUT", f"{CM_PATH}/upd", stored)
    assert code == 400
    assert "ConfigMap.data of type string" in status["message"]
    assert call(apiserver, "GET", f"{CM_PATH}/upd")[1]["data"] == {"k": "v"}
    call(apiserver, "DELETE", f"{CM_PATH}/upd")


@pytest.mark.parametrize(
    ("content_type", "patch", "words"),
    [
        ("application/merge-patch+json", {"metadata": {"labels": 5}}, "metadata.labels"),
        ("application/strategic-merge-patch+json", {"metadata": {"labels": [[1]]}}, "labels"),
        ("application/merge-patch+json", {"metadata": {"name": True}}, "metadata.name"),
        (
            "application/merge-patch+json",
            {"data": {"k": {"x": 1}}},
            "ConfigMap.data of type string",
        ),
        (
            "application/json-patch+json",
            [{"op": "add", "path": "/metadata/labels", "value": 5}],
            "metadata.labels",
        ),
    ],
)
def test_wrong_json_types_in_a_patch_are_invalid_and_not_stored(
    apiserver, content_type, patch, words
):
    before = _configmap(apiserver, "pat")
    path = f"{CM_PATH}/pat"
    code, status = call(apiserver, "PATCH", path, patch, content_type)
    assert status["kind"] == "Status"
    assert code in (400, 422), status
    assert words in status["message"]
    assert "cannot unmarshal" in status["message"]
    after = call(apiserver, "GET", f"{CM_PATH}/pat")[1]
    assert after["metadata"]["labels"] == before["metadata"]["labels"]
    assert after["data"] == before["data"]
    call(apiserver, "DELETE", f"{CM_PATH}/pat")


@pytest.mark.parametrize(
    ("method", "path", "content_type"),
    [
        ("POST", CM_PATH, "application/json"),
        ("PUT", f"{CM_PATH}/deep", "application/json"),
        ("PATCH", f"{CM_PATH}/deep", "application/merge-patch+json"),
        ("PATCH", f"{CM_PATH}/deep", "application/strategic-merge-patch+json"),
        ("PATCH", f"{CM_PATH}/deep", "application/json-patch+json"),
        ("DELETE", f"{CM_PATH}/deep", "application/json"),
    ],
)
def test_json_nested_5000_deep_is_a_bad_request(apiserver, method, path, content_type):
    _configmap(apiserver, "deep")
    deep = b'{"metadata":{"name":"deep","annotations":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    code, status = raw_call(apiserver, method, path, deep, content_type)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "exceeded max depth" in status["message"]
    assert call(apiserver, "GET", f"{CM_PATH}/deep")[0] == 200
    call(apiserver, "DELETE", f"{CM_PATH}/deep")


def test_lone_surrogates_become_replacement_characters(apiserver):
    raw = b'{"metadata":{"name":"sur","labels":{"set":"bad-input"}},"data":{"k":"a\\ud800b"}}'
    code, created = raw_call(apiserver, "POST", CM_PATH, raw)
    assert code == 201, created
    assert created["data"] == {"k": "a\ufffdb"}
    patch = b'{"data":{"k2":"\\ud83d\\ude00\\udfff"}}'
    code, patched = raw_call(
        apiserver, "PATCH", f"{CM_PATH}/sur", patch, "application/merge-patch+json"
    )
    assert code == 200, patched
    assert patched["data"] == {"k": "a\ufffdb", "k2": "\U0001f600\ufffd"}
    assert call(apiserver, "GET", f"{CM_PATH}/sur")[0] == 200
    call(apiserver, "DELETE", f"{CM_PATH}/sur")


def test_lone_surrogates_written_as_raw_bytes_become_replacement_characters(apiserver):
    # Found by tests/fuzz: a surrogate's three UTF-8 bytes (ED A0 80), not escaped, got past
    # the check for escaped ones (json.loads decodes bytes with "surrogatepass") and
    # failed every later write of the object: a 500.
    raw = b'{"metadata":{"name":"raw-sur","labels":{"set":"bad-input"}},"data":{"k":"a\xed\xa0\x80b"}}'
    code, created = raw_call(apiserver, "POST", CM_PATH, raw)
    assert code == 201, created
    assert created["data"] == {"k": "a\ufffdb"}
    assert call(apiserver, "DELETE", f"{CM_PATH}/raw-sur")[0] == 200


def test_a_good_pod_still_goes_through(apiserver):
    pod = PodBuilder("fine").obj()
    code, body = call(apiserver, "POST", PODS_PATH, pod)
    assert code == 201, body
    assert call(apiserver, "DELETE", f"{PODS_PATH}/fine?gracePeriodSeconds=0")[0] == 200


@pytest.mark.parametrize("field", ["a\nb", "a\x00b", "a\rb\tc"])
def test_unknown_field_with_a_control_character_gets_an_answer(apiserver, field):
    # apimachinery's NewWarningHeader refuses control characters: that warning is dropped,
    # the others are sent, and the answer arrives.
    body = {"metadata": {"name": "ctl"}, "data": {"k": "v"}, field: 1, "plainUnknown": 2}
    request = urllib.request.Request(
        apiserver.url + CM_PATH, data=json.dumps(body).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201
        warnings = response.headers.get_all("Warning")
        assert json.loads(response.read())["data"] == {"k": "v"}
    assert warnings == ['299 - "unknown field \\"plainUnknown\\""']
    code, status = call(apiserver, "POST", f"{CM_PATH}?fieldValidation=Strict", body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert json.dumps(field)[1:-1] in json.dumps(status["message"])
    assert call(apiserver, "DELETE", f"{CM_PATH}/ctl")[0] == 200


def _get_status(server, path):
    try:
        with urllib.request.urlopen(server.url + path, timeout=30) as response:
            return response.status, response.headers.get_content_type()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get_content_type()


@pytest.mark.parametrize("size", [100_000, 1_000_000])
def test_query_strings_up_to_a_mebibyte_are_served(apiserver, size):
    assert _get_status(apiserver, f"{CM_PATH}?unused={'x' * size}") == (200, "application/json")
    names = ",".join(f"n{i}" for i in range(size // 8))
    code, body = call(apiserver, "GET", f"{CM_PATH}?labelSelector=set%20in%20({names})")
    assert (code, body["kind"]) == (200, "ConfigMapList")


def test_a_query_string_beyond_a_mebibyte_is_refused_and_the_server_serves_on(apiserver):
    code, _ = _get_status(apiserver, f"{CM_PATH}?unused={'x' * (1 << 20)}")
    assert 400 <= code < 500
    assert _get_status(apiserver, CM_PATH) == (200, "application/json")


@pytest.mark.parametrize(
    ("subpath", "body", "words"),
    [
        ("pods/bound/binding", {"metadata": True, "target": {"name": "n1"}}, "Binding.metadata"),
        (
            "bindings",
            {"metadata": {"name": 1.5}, "target": {"name": "n1"}},
            "ObjectMeta.metadata.name of type string",
        ),
        ("pods/bound/binding", {"metadata": {"name": "bound"}, "target": 5}, "Binding.target"),
        (
            "pods/bound/eviction",
            {"metadata": {"name": "bound"}, "deleteOptions": {"gracePeriodSeconds": "x"}},
            "DeleteOptions.deleteOptions.gracePeriodSeconds of type int64",
        ),
    ],
)
def test_wrong_json_types_in_bindings_and_evictions_are_a_bad_request(
    apiserver, subpath, body, words
):
    code, created = call(apiserver, "POST", PODS_PATH, PodBuilder("bound").obj())
    assert code == 201, created
    code, status = call(apiserver, "POST", f"/api/v1/namespaces/default/{subpath}", body)
    assert (code, status["reason"]) == (400, "BadRequest"), status
    assert words in status["message"]
    code, pod = call(apiserver, "GET", f"{PODS_PATH}/bound")
    assert code == 200
    assert not pod["spec"].get("nodeName")
    assert call(apiserver, "DELETE", f"{PODS_PATH}/bound?gracePeriodSeconds=0")[0] == 200


@pytest.mark.parametrize(
    ("patch", "words"),
    [
        ({"metadata": {"ownerReferences": [{"a": 1}]}}, "does not contain declared merge key: uid"),
        ({"metadata": {"ownerReferences": [[1]]}}, "for the key uid"),
    ],
)
def test_a_strategic_list_item_without_its_merge_key_is_a_bad_request(apiserver, patch, words):
    # Upstream answers these with a 500 (mergepatch's plain errors); here a 400.
    before = _configmap(apiserver, "smp")
    code, status = call(
        apiserver, "PATCH", f"{CM_PATH}/smp", patch, "application/strategic-merge-patch+json"
    )
    assert (code, status["reason"]) == (400, "BadRequest")
    assert words in status["message"]
    after = call(apiserver, "GET", f"{CM_PATH}/smp")[1]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    call(apiserver, "DELETE", f"{CM_PATH}/smp")


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/namespaces/default/configmaps/%0A",
        "/api/v1/namespaces/%0A/configmaps/x",
        "/api/v1/namespaces/default/configmaps/a%0Ab/status",
    ],
)
def test_a_newline_in_the_path_is_a_status_not_found(apiserver, path):
    # Found by tests/fuzz: aiohttp's route pattern did not match a decoded newline, and
    # its own 404 is plain text.
    code, status = call(apiserver, "GET", path)
    assert (code, status["kind"], status["reason"]) == (404, "Status", "NotFound")


@pytest.mark.parametrize("version", ["9" * 30, str(2**64), " 1", "1_0", "+1", "١"])
def test_a_resource_version_go_cannot_parse_is_a_bad_request(apiserver, version):
    # Found by tests/fuzz: int() took these, and a list waited 3 s for a version that
    # never comes (then 504); kube-apiserver's ParseUint refuses them at once.
    from urllib.parse import quote

    for path in (
        f"{CM_PATH}?resourceVersion={quote(version)}",
        f"{CM_PATH}?watch=1&resourceVersion={quote(version)}",
    ):
        code, status = call(apiserver, "GET", path)
        assert (code, status["reason"]) == (400, "BadRequest"), path
        assert "invalid resource version" in status["message"]


def test_nulls_are_stored_as_go_decodes_them(apiserver):
    # Found by tests/fuzz: a claim created with "volumeName": null stored the null, and
    # sending the stored claim back was refused ("spec is immutable"). Go decodes null
    # into the zero value: a struct field is left out, a map's string is "".
    path = "/api/v1/namespaces/default/persistentvolumeclaims"
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
        "volumeName": None,
    }
    code, claim = call(
        apiserver,
        "POST",
        path,
        {"metadata": {"name": "nulls", "labels": None, "annotations": {"a": None}}, "spec": spec},
    )
    assert code == 201, claim
    assert "volumeName" not in claim["spec"] and "labels" not in claim["metadata"]
    assert claim["metadata"]["annotations"] == {"a": ""}
    code, again = call(apiserver, "PUT", f"{path}/nulls", claim)
    assert code == 200, again
    code, status = call(
        apiserver,
        "POST",
        path,
        {"metadata": {"name": "n2"}, "spec": dict(spec, accessModes=["ReadWriteOnce", None])},
    )
    assert (code, status["reason"]) == (422, "Invalid")
    assert 'Unsupported value: ""' in status["message"]
    assert call(apiserver, "DELETE", f"{path}/nulls")[0] == 200
    # A null in a key that is also repeated (the duplicate check reads the keys as sent).
    raw = b'{"kind":"ConfigMap","apiVersion":null,"apiVersion":null,"metadata":{"name":"dup-null"}}'
    code, made = raw_call(apiserver, "POST", CM_PATH, raw)
    assert code == 201, made
    assert call(apiserver, "DELETE", f"{CM_PATH}/dup-null")[0] == 200


@pytest.mark.parametrize(
    ("token", "words"),
    [
        ("NaN", "'N' looking for beginning of value"),
        ("Infinity", "'I' looking for beginning of value"),
        ("-Infinity", "'I' in numeric literal"),
    ],
)
def test_nan_and_infinity_are_not_json(apiserver, token, words):
    # Found by tests/fuzz (in the extender first): Python's parser takes them, Go's does
    # not, and a stored NaN would make later answers invalid JSON.
    raw = b'{"metadata":{"name":"nan"},"data":{"k":"v"},"x":' + token.encode() + b"}"
    for query in ("", "?fieldValidation=Ignore"):
        code, status = raw_call(apiserver, "POST", CM_PATH + query, raw)
        assert (code, status["reason"]) == (400, "BadRequest")
        assert f"json parse error: invalid character {words}" in status["message"]
    assert call(apiserver, "GET", f"{CM_PATH}/nan")[0] == 404


def test_a_quantity_that_does_not_parse_is_refused_on_create_as_on_update(apiserver):
    # Found by tests/fuzz: a claim's resources.limits {"x": ""} was stored on create, then
    # refused when sent back (quantities are parsed as they are decoded, by Go's
    # Quantity.UnmarshalJSON, so both are the decoder's 400).
    path = "/api/v1/namespaces/default/persistentvolumeclaims"
    spec = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}, "limits": {"x": ""}},
    }
    code, status = call(
        apiserver, "POST", path, {"metadata": {"name": "empty-quantity"}, "spec": spec}
    )
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"].startswith(
        'PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: quantities must match the regular expression'
    )
    assert call(apiserver, "GET", f"{path}/empty-quantity")[0] == 404
