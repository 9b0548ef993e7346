"""``?fieldValidation=Ignore|Warn|Strict`` on create, update and patch, as kube-apiserver
answers it: raw HTTP (status bodies, ``Warning`` headers, what is stored), the official
client, custom resources, and kubectl (whose default is Strict)."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from crd_builders import crd, crontab
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

KUBECTL = shutil.which("kubectl")
PODS = "/api/v1/namespaces/default/pods"


def _send(server, method, path, body, content_type="application/json"):
    """(status, decoded body, Warning headers) of one request; ``body`` bytes go as they are."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return (
                response.status,
                json.loads(response.read()),
                response.headers.get_all("Warning") or [],
            )
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), err.headers.get_all("Warning") or []


def _read(server, path):
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _pod(name, **extra):
    container = {"name": "c", "image": "busybox"}
    container.update(extra.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], **extra},
    }


def test_strict_refuses_unknown_and_duplicate_fields_and_stores_nothing(apiserver):
    # Duplicates are only expressible in raw JSON. Problems come in document order.
    raw = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"strict","labels":{"app":"a","app":"b"}},'
        b'"spec":{"foo":{"bar":1},"containers":[{"name":"c","image":"x"},'
        b'{"name":"d","image":"y","imagePullPolicyy":"Always"}],"schedulerName":"a","schedulerName":"b"}}'
    )
    code, status, warnings = _send(apiserver, "POST", PODS + "?fieldValidation=Strict", raw)
    assert code == 400
    assert status["reason"] == "BadRequest"
    assert status["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'duplicate field "metadata.labels.app", unknown field "spec.foo", '
        'unknown field "spec.containers[1].imagePullPolicyy", duplicate field "spec.schedulerName"'
    )
    assert warnings == []
    assert _read(apiserver, PODS + "/strict")[0] == 404


def test_warn_is_the_default_one_header_per_problem_and_the_fields_are_dropped(apiserver):
    body = _pod("warned", container={"imagePullPolicyy": "Always"}, foo=1)
    body["metadata"]["bogus"] = "x"
    code, made, warnings = _send(apiserver, "POST", PODS, body)
    assert code == 201
    assert warnings == [
        '299 - "unknown field \\"metadata.bogus\\""',
        '299 - "unknown field \\"spec.containers[0].imagePullPolicyy\\""',
        '299 - "unknown field \\"spec.foo\\""',
    ]
    assert "bogus" not in made["metadata"] and "foo" not in made["spec"]
    stored = _read(apiserver, PODS + "/warned")[1]
    assert "imagePullPolicyy" not in stored["spec"]["containers"][0]
    code, made, warnings = _send(apiserver, "POST", PODS + "?fieldValidation=Warn", _pod("w2", x=1))
    assert (code, warnings) == (201, ['299 - "unknown field \\"spec.x\\""'])


def test_warnings_past_4096_runes_are_cut_as_the_warning_recorder_cuts_them(apiserver):
    # Found by tests/fuzz: an unknown field named with 70,000 characters made a Warning
    # header line that Python's http.client refuses to read (the kubernetes client too).
    # Upstream's recorder: past 4096 runes in all, each warning is cut to 256 runes and
    # those past the total are left out.
    body = _pod("long-warnings")
    body["metadata"]["x" * 70_000] = 1
    for i in range(30):
        body["spec"][f"unknown{i:02d}" + "y" * 300] = i
    code, _, warnings = _send(apiserver, "POST", PODS, body)
    assert code == 201
    assert (
        warnings[0]
        == '299 - "unknown field \\"metadata.' + "x" * (256 - len('unknown field "metadata.')) + '"'
    )
    assert all(len(w) <= len('299 - ""') + 256 + 2 for w in warnings)
    assert len(warnings) == 16  # 16 x 256 runes reach 4096
    code, _, warnings = _send(apiserver, "POST", PODS, _pod("short-warnings", a=1, b=2))
    assert warnings == ['299 - "unknown field \\"spec.a\\""', '299 - "unknown field \\"spec.b\\""']


def test_ignore_drops_silently_and_a_clean_body_gets_no_warning(apiserver):
    code, made, warnings = _send(
        apiserver, "POST", PODS + "?fieldValidation=Ignore", _pod("ign", foo=1)
    )
    assert (code, warnings) == (201, [])
    assert "foo" not in made["spec"]
    code, _, warnings = _send(apiserver, "POST", PODS + "?fieldValidation=Strict", _pod("clean"))
    assert (code, warnings) == (201, [])


@pytest.mark.parametrize(
    ("method", "path", "content_type", "options"),
    [
        ("POST", PODS, "application/json", "CreateOptions"),
        ("PUT", PODS + "/clean", "application/json", "UpdateOptions"),
        ("PATCH", PODS + "/clean", "application/merge-patch+json", "PatchOptions"),
    ],
)
def test_an_unknown_directive_is_invalid_options(apiserver, method, path, content_type, options):
    code, status, _ = _send(apiserver, method, path + "?fieldValidation=strict", {}, content_type)
    assert code == 422
    assert status["message"] == (
        f'{options}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    assert status["details"] == {
        "group": "meta.k8s.io",
        "kind": options,
        "causes": [
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
                "field": "fieldValidation",
            }
        ],
    }


def test_update_is_checked_like_create(apiserver):
    _send(apiserver, "POST", "/api/v1/namespaces", {"metadata": {"name": "fv-upd"}})
    path = "/api/v1/namespaces/fv-upd/configmaps"
    assert (
        _send(apiserver, "POST", path, {"metadata": {"name": "cm"}, "data": {"a": "1"}})[0] == 201
    )
    current = _read(apiserver, path + "/cm")[1]
    changed = dict(current, data={"a": "2"}, extra=True)
    code, status, _ = _send(apiserver, "PUT", path + "/cm?fieldValidation=Strict", changed)
    assert (code, status["message"]) == (
        400,
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "extra"',
    )
    assert _read(apiserver, path + "/cm")[1]["data"] == {"a": "1"}
    code, updated, warnings = _send(apiserver, "PUT", path + "/cm", changed)
    assert (code, warnings, updated["data"]) == (
        200,
        ['299 - "unknown field \\"extra\\""'],
        {"a": "2"},
    )
    assert "extra" not in _read(apiserver, path + "/cm")[1]


def test_patches_check_the_patched_object(apiserver):
    assert _send(apiserver, "POST", PODS, _pod("patched"))[0] == 201
    path = PODS + "/patched"
    merge = "application/merge-patch+json"
    code, status, _ = _send(
        apiserver, "PATCH", path + "?fieldValidation=Strict", {"spec": {"foo": 1}}, merge
    )
    assert code == 422 and status["reason"] == "Invalid"
    (cause,) = status["details"]["causes"]
    assert cause["field"] == "patch"
    assert cause["message"].startswith('Invalid value: "{\\"apiVersion\\":\\"v1\\"')
    assert cause["message"].endswith('": strict decoding error: unknown field "spec.foo"')
    assert status["message"] == ' "" is invalid: patch: ' + cause["message"]
    assert "foo" not in _read(apiserver, path)[1]["spec"]
    # A strategic merge patch shows the patch as Go prints a map.
    smp = "application/strategic-merge-patch+json"
    patch = {"metadata": {"labels": {"a": "b"}}, "spec": {"bar": 2}}
    code, status, _ = _send(apiserver, "PATCH", path + "?fieldValidation=Strict", patch, smp)
    assert status["message"] == (
        ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:b]] spec:map[bar:2]]": '
        'strict decoding error: unknown field "spec.bar"'
    )
    assert _read(apiserver, path)[1]["metadata"].get("labels") is None
    # Warn (the default) applies the patch without the unknown field.
    code, made, warnings = _send(apiserver, "PATCH", path, patch, smp)
    assert (code, warnings) == (200, ['299 - "unknown field \\"spec.bar\\""'])
    assert made["metadata"]["labels"] == {"a": "b"} and "bar" not in made["spec"]
    # A JSON patch's own unknown fields and a merge patch's duplicates come first.
    ops = [{"op": "add", "path": "/metadata/labels/c", "value": "d", "valu": 1}]
    code, _, warnings = _send(apiserver, "PATCH", path, ops, "application/json-patch+json")
    assert (code, warnings) == (200, ['299 - "json patch unknown field \\"[0].valu\\""'])
    raw = b'{"metadata":{"labels":{"e":"1","e":"2"}},"spec":{"baz":1}}'
    code, made, warnings = _send(apiserver, "PATCH", path, raw, merge)
    assert warnings == [
        '299 - "duplicate field \\"metadata.labels.e\\""',
        '299 - "unknown field \\"spec.baz\\""',
    ]
    assert made["metadata"]["labels"]["e"] == "2"


def test_events_v1_bodies_are_checked_in_their_own_version(apiserver):
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "ev1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "x/y",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default", "bogus": 1},
    }
    path = "/apis/events.k8s.io/v1/namespaces/default/events"
    code, status, _ = _send(apiserver, "POST", path + "?fieldValidation=Strict", event)
    assert (code, status["message"]) == (
        400,
        'Event in version "v1" cannot be handled as a Event: strict decoding error: '
        'unknown field "regarding.bogus"',
    )


def test_custom_resources_report_what_pruning_drops(apiserver):
    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    try:
        client.ApiextensionsV1Api(api).create_custom_resource_definition(
            crd(group="fv.example.com")
        )
        objects = client.CustomObjectsApi(api)
        body = crontab("cr", api_version="fv.example.com/v1", extra={"free": 1},
                       hosts=[{"name": "h", "junk": True}], unknown="x")  # fmt: skip
        body["metadata"]["bogus"] = 1
        args = ("fv.example.com", "v1", "default", "crontabs")
        with pytest.raises(ApiException) as raised:
            objects.create_namespaced_custom_object(*args, body, field_validation="Strict")
        assert raised.value.status == 400
        assert json.loads(raised.value.body)["message"] == (
            'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: '
            'unknown field "metadata.bogus", unknown field "spec.hosts[0].junk", '
            'unknown field "spec.unknown"'
        )
        with pytest.raises(ApiException):
            objects.get_namespaced_custom_object(*args, "cr")
        path = "/apis/fv.example.com/v1/namespaces/default/crontabs"
        code, made, warnings = _send(apiserver, "POST", path, body)
        assert code == 201
        assert warnings == [
            '299 - "unknown field \\"metadata.bogus\\""',
            '299 - "unknown field \\"spec.hosts[0].junk\\""',
            '299 - "unknown field \\"spec.unknown\\""',
        ]
        assert made["spec"]["extra"] == {"free": 1} and made["spec"]["hosts"] == [{"name": "h"}]
        code, status, _ = _send(apiserver, "PATCH", path + "/cr?fieldValidation=Strict",
                                {"spec": {"nope": 1}}, "application/merge-patch+json")  # fmt: skip
        assert code == 422
        assert status["details"]["causes"][0]["message"].endswith(
            ': strict decoding error: unknown field "spec.nope"'
        )
    finally:
        api.close()


def test_the_dynamic_client_writes_with_the_default_warn(apiserver):
    # The typed client refuses unknown fields itself; the dynamic one sends what it is given
    # and no fieldValidation, so the server's default (Warn) drops the field.
    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    try:
        nodes = DynamicClient(api).resources.get(api_version="v1", kind="Node")
        made = nodes.create(body={"metadata": {"name": "n-fv"}, "spec": {"unschedulabel": True}})
        assert made.to_dict()["spec"] == {}
        assert "unschedulabel" not in nodes.get(name="n-fv").to_dict()["spec"]
    finally:
        api.close()


TYPO = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: default
dataa:
  key: value
"""


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27")
def test_kubectl_apply_strict_by_default_warn_and_false(apiserver, tmp_path):
    def kubectl(*args, stdin):
        return subprocess.run(
            [KUBECTL, "--kubeconfig", str(apiserver.kubeconfig_path), "--cache-dir", str(tmp_path), *args],
            input=stdin, capture_output=True, text=True, timeout=30,
        )  # fmt: skip

    result = kubectl("apply", "-f", "-", stdin=TYPO.format(name="typo"))
    assert result.returncode == 1
    assert (
        'Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" '
        'cannot be handled as a ConfigMap: strict decoding error: unknown field "dataa"'
    ) in result.stderr
    assert _read(apiserver, "/api/v1/namespaces/default/configmaps/typo")[0] == 404
    result = kubectl("apply", "--validate=warn", "-f", "-", stdin=TYPO.format(name="warned"))
    assert result.returncode == 0, result.stderr
    assert 'Warning: unknown field "dataa"' in result.stderr
    assert "configmap/warned created" in result.stdout
    result = kubectl("apply", "--validate=false", "-f", "-", stdin=TYPO.format(name="quiet"))
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr
    assert _read(apiserver, "/api/v1/namespaces/default/configmaps/quiet")[1].get("dataa") is None


def test_binding_and_eviction_bodies_are_checked_too(apiserver):
    assert _send(apiserver, "POST", PODS, _pod("bound"))[0] == 201
    assert _send(apiserver, "POST", "/api/v1/nodes", {"metadata": {"name": "n-bind"}})[0] == 201
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "bound"},
        "target": {"kind": "Node", "name": "n-bind", "nodeName": "n-bind"},
    }
    code, status, _ = _send(
        apiserver, "POST", PODS + "/bound/binding?fieldValidation=Strict", binding
    )
    assert (code, status["message"]) == (
        400,
        'Binding in version "v1" cannot be handled as a Binding: strict decoding error: '
        'unknown field "target.nodeName"',
    )
    assert "nodeName" not in _read(apiserver, PODS + "/bound")[1]["spec"]
    code, _, warnings = _send(apiserver, "POST", PODS + "/bound/binding", binding)
    assert (code, warnings) == (201, ['299 - "unknown field \\"target.nodeName\\""'])
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "bound"},
        "deleteOption": {"gracePeriodSeconds": 0},
    }
    code, status, _ = _send(
        apiserver, "POST", PODS + "/bound/eviction?fieldValidation=Strict", eviction
    )
    assert (code, status["message"]) == (
        400,
        'Eviction in version "v1" cannot be handled as a Eviction: strict decoding error: '
        'unknown field "deleteOption"',
    )
    assert _read(apiserver, PODS + "/bound")[0] == 200


def test_a_scale_body_is_checked_too(apiserver):
    template = {
        "metadata": {"labels": {"app": "sc"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    rs = {
        "metadata": {"name": "sc"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "sc"}}, "template": template},
    }
    path = "/apis/apps/v1/namespaces/default/replicasets"
    assert _send(apiserver, "POST", path, rs)[0] == 201
    current = _read(apiserver, path + "/sc/scale")[1]
    typo = dict(current, spec={"replica": 3})
    code, status, _ = _send(apiserver, "PUT", path + "/sc/scale?fieldValidation=Strict", typo)
    assert (code, status["message"]) == (
        400,
        'Scale in version "v1" cannot be handled as a Scale: strict decoding error: unknown field "spec.replica"',
    )
    assert _read(apiserver, path + "/sc")[1]["spec"]["replicas"] == 1
