"""Strategic merge patch: lists merged by their patch-merge keys, the ``$patch``,
``$retainKeys``, ``$deleteFromPrimitiveList`` and ``$setElementOrder`` directives, upstream's
errors; ``kubectl patch`` and ``kubectl apply`` against the server; and the property that no
refused patch (merge, strategic or JSON) changes what is stored."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from apiserver_builders import call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.apiserver import errors, rest
from kubesched.apiserver.patch import JSON_PATCH, MERGE, STRATEGIC
from kubesched.apiserver.patch_strategic import strategic_merge
from kubesched.apiserver.resources import PODS
from kubesched.apiserver.runner import new_store
from kubesched.apiserver.store import copy_object


def c(name, image="pause", **fields):
    return {"name": name, "image": image, **fields}


def pod_spec(**spec):
    return {"metadata": {"name": "p"}, "spec": spec}


SMP = [
    pytest.param(
        pod_spec(containers=[c("a"), c("b")]),
        {"spec": {"containers": [{"name": "b", "image": "new"}]}},
        pod_spec(containers=[c("a"), c("b", "new")]),
        id="containers-merge-by-name",
    ),
    pytest.param(
        pod_spec(containers=[c("a")]),
        {"spec": {"containers": [c("b")]}},
        pod_spec(containers=[c("a"), c("b")]),
        id="new-container-appended",
    ),
    pytest.param(
        pod_spec(containers=[c("a"), c("b")]),
        {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}},
        pod_spec(containers=[c("b")]),
        id="delete-element",
    ),
    pytest.param(
        pod_spec(containers=[c("a"), c("b")]),
        {"spec": {"containers": [c("z"), {"$patch": "replace"}]}},
        pod_spec(containers=[c("z")]),
        id="replace-list",
    ),
    pytest.param(
        pod_spec(
            containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}])]
        ),
        {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}]}]}},
        pod_spec(
            containers=[c("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "3"}])]
        ),
        id="env-by-name-inside-container",
    ),
    pytest.param(
        pod_spec(containers=[c("a", ports=[{"containerPort": 80}])]),
        {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}]}},
        pod_spec(containers=[c("a", ports=[{"containerPort": 80, "name": "http"}])]),
        id="ports-by-container-port",
    ),
    pytest.param(
        pod_spec(tolerations=[{"key": "a", "operator": "Exists"}]),
        {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
        pod_spec(tolerations=[{"key": "b", "operator": "Exists"}]),
        id="tolerations-replaced",
    ),
    pytest.param(
        pod_spec(nodeSelector={"a": "1", "b": "2"}),
        {"spec": {"nodeSelector": {"$patch": "replace", "c": "3"}}},
        pod_spec(nodeSelector={"c": "3"}),
        id="replace-map",
    ),
    pytest.param(
        pod_spec(nodeSelector={"a": "1"}),
        {"spec": {"nodeSelector": {"$patch": "delete"}}},
        pod_spec(nodeSelector={}),
        id="delete-map",
    ),
    pytest.param(
        pod_spec(nodeSelector={"a": "1"}, hostname="h"),
        {"spec": {"hostname": None, "nodeSelector": {"a": None, "b": "2"}}},
        pod_spec(nodeSelector={"b": "2"}),
        id="null-deletes",
    ),
    pytest.param(
        {"metadata": {"name": "p", "finalizers": ["x/a"]}},
        {"metadata": {"finalizers": ["x/b", "x/a"]}},
        {"metadata": {"name": "p", "finalizers": ["x/a", "x/b"]}},
        id="finalizers-union",
    ),
    pytest.param(
        {"metadata": {"name": "p", "finalizers": ["x/a", "x/b"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/a"]}},
        {"metadata": {"name": "p", "finalizers": ["x/b"]}},
        id="delete-from-primitive-list",
    ),
    pytest.param(
        {"metadata": {"name": "p", "ownerReferences": [{"uid": "1", "name": "a"}]}},
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}]}},
        {
            "metadata": {
                "name": "p",
                "ownerReferences": [{"uid": "1", "name": "b"}, {"uid": "2", "name": "c"}],
            }
        },
        id="owner-references-by-uid",
    ),
    pytest.param(
        pod_spec(containers=[c("a"), c("b"), c("c")]),
        {
            "spec": {
                "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
                "containers": [{"name": "c", "image": "new"}],
            }
        },
        pod_spec(containers=[c("b"), c("c", "new"), c("a")]),
        id="set-element-order-keeps-server-only-in-place",
    ),
    pytest.param(
        pod_spec(volumes=[{"name": "v", "emptyDir": {}}]),
        {
            "spec": {
                "volumes": [
                    {"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}
                ]
            }
        },
        pod_spec(volumes=[{"name": "v", "hostPath": {"path": "/x"}}]),
        id="retain-keys",
    ),
    pytest.param(
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "False"},
                    {"type": "PodScheduled", "status": "True"},
                ]
            }
        },
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "PodScheduled", "status": "True"},
                ]
            }
        },
        id="pod-conditions-by-type",
    ),
    pytest.param(
        pod_spec(),
        {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "$patch": "delete"}]}]}},
        pod_spec(containers=[{"name": "a", "env": []}]),
        id="directives-in-new-values-applied-to-nothing",
    ),
]


@pytest.mark.parametrize(("target", "patch", "expected"), SMP)
def test_strategic_merge(target, patch, expected):
    before = copy_object(target)
    assert strategic_merge(target, patch, "Pod") == expected
    assert target == before


def test_node_addresses_merge_by_type_and_unknown_kinds_replace_lists():
    node = {"status": {"addresses": [{"type": "InternalIP", "address": "1"}]}}
    patch = {"status": {"addresses": [{"type": "Hostname", "address": "h"}]}}
    assert strategic_merge(node, patch, "Node")["status"]["addresses"] == [
        {"type": "InternalIP", "address": "1"},
        {"type": "Hostname", "address": "h"},
    ]
    assert strategic_merge(node, patch, "Widget")["status"]["addresses"] == [
        {"type": "Hostname", "address": "h"}
    ]


ERRORS = [
    pytest.param(
        {"spec": {"containers": [{"image": "x"}]}},
        400,  # upstream: 500 (a plain error); never a 500 here
        "map: map[image:x] does not contain declared merge key: name",
        id="missing-merge-key",
    ),
    pytest.param(
        {"spec": {"nodeSelector": {"$patch": "sideways"}}},
        400,  # upstream: 500 (a plain error); never a 500 here
        "unknown patch type: sideways in map: map[$patch:sideways]",
        id="unknown-directive",
    ),
    pytest.param(
        {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
        400,
        "invalid patch format of primitive list",
        id="delete-from-primitive-list-not-a-list",
    ),
    pytest.param(
        {"spec": {"$setElementOrder/containers": {"name": "a"}}},
        400,
        "invalid patch type of setElementOrder list",
        id="set-element-order-not-a-list",
    ),
    pytest.param(
        {"spec": {"$retainKeys": ["containers"], "hostname": "h"}},
        422,
        "the server rejected our request due to an error in our request",
        id="retain-keys-mismatch",
    ),
]


@pytest.mark.parametrize(("patch", "code", "message"), ERRORS)
def test_strategic_merge_errors(patch, code, message):
    with pytest.raises(errors.ApiError) as caught:
        strategic_merge(pod_spec(containers=[c("a")]), patch, "Pod")
    assert (caught.value.code, caught.value.status["message"]) == (code, message)


# -- over HTTP -------------------------------------------------------------------------------

PODS_PATH = "/api/v1/namespaces/default/pods"


def test_status_conditions_merge_over_http(apiserver):
    body = {"metadata": {"name": "s"}, "spec": {"containers": [c("a")]}}
    assert call(apiserver, "POST", PODS_PATH, body)[0] == 201
    for condition in (
        {"type": "Ready", "status": "False"},
        {"type": "Initialized", "status": "True"},
    ):
        patch = {"status": {"conditions": [condition]}}
        code, _ = call(apiserver, "PATCH", f"{PODS_PATH}/s/status", patch, STRATEGIC)
        assert code == 200
    stored = call(apiserver, "GET", f"{PODS_PATH}/s")[1]
    assert [x["type"] for x in stored["status"]["conditions"]] == ["Ready", "Initialized"]


KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")


def kubectl(server, *args, stdin=None):
    result = subprocess.run(
        [KUBECTL or "kubectl", "--kubeconfig", str(server.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result


@needs_kubectl
def test_kubectl_strategic_patch_on_containers(apiserver):
    body = {"metadata": {"name": "k"}, "spec": {"containers": [c("a"), c("b", "busybox")]}}
    assert call(apiserver, "POST", PODS_PATH, body)[0] == 201
    patch = '{"spec":{"containers":[{"name":"b","image":"busybox:2"}]}}'
    result = kubectl(apiserver, "patch", "pod", "k", "--type", "strategic", "-p", patch)
    assert result.returncode == 0, result.stderr
    stored = call(apiserver, "GET", f"{PODS_PATH}/k")[1]
    assert [(x["name"], x["image"]) for x in stored["spec"]["containers"]] == [
        ("a", "pause"),
        ("b", "busybox:2"),
    ]
    result = kubectl(apiserver, "patch", "pod", "k", "-p", '{"spec":{"nodeName":"n1"}}')
    assert result.returncode != 0
    assert 'The Pod "k" is invalid: spec: Forbidden: pod updates may not change fields' in (
        result.stderr
    )


RS = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
%s
"""


@needs_kubectl
def test_kubectl_apply_twice_with_a_changed_container_list(apiserver):
    first = RS % "      - {name: a, image: pause}\n      - {name: b, image: busybox}"
    second = RS % "      - {name: c, image: nginx}\n      - {name: a, image: pause:2}"
    assert kubectl(apiserver, "apply", "-f", "-", stdin=first).returncode == 0
    result = kubectl(apiserver, "apply", "-f", "-", stdin=second)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "replicaset.apps/web configured"
    stored = call(apiserver, "GET", "/apis/apps/v1/namespaces/default/replicasets/web")[1]
    containers = stored["spec"]["template"]["spec"]["containers"]
    assert [(x["name"], x["image"]) for x in containers] == [("c", "nginx"), ("a", "pause:2")]
    assert kubectl(apiserver, "apply", "-f", "-", stdin=second).stdout.strip() == (
        "replicaset.apps/web unchanged"
    )


# -- refused writes change nothing --------------------------------------------------------

_value = st.one_of(
    st.none(),
    st.text(alphabet="aZ-_./ 0", max_size=5),
    st.integers(-3, 3),
    st.just({"$patch": "delete"}),
    st.just([{"$patch": "replace"}]),
)
_fields = st.sampled_from(
    [
        ("metadata", "labels"),
        ("metadata", "name"),
        ("spec", "nodeName"),
        ("spec", "containers"),
        ("spec", "tolerations"),
        ("spec", "activeDeadlineSeconds"),
        ("spec", "schedulingGates"),
        ("spec", "overhead"),
        ("metadata", "finalizers"),
    ]
)


@st.composite
def _patches(draw):
    kind = draw(st.sampled_from([MERGE, STRATEGIC, JSON_PATCH]))
    edits = draw(st.lists(st.tuples(_fields, _value), min_size=1, max_size=3))
    if kind == JSON_PATCH:
        ops = [
            {
                "op": draw(st.sampled_from(["add", "replace", "remove"])),
                "path": f"/{a}/{b}",
                "value": v,
            }
            for (a, b), v in edits
        ]
        return kind, ops
    patch: dict = {}
    for (a, b), v in edits:
        patch.setdefault(a, {})[b] = v
    return kind, patch


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_patches())
def test_refused_patches_never_change_the_stored_pod(patch):
    kind, body = patch
    store = new_store()
    pod = {
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [c("a")], "schedulingGates": [{"name": "g"}]},
    }
    rest.create(store, PODS, "default", pod)
    before = copy_object(store.get(PODS, "default", "p"))
    try:
        rest.patch(store, PODS, "default", "p", body, kind)
    except errors.ApiError:
        assert store.get(PODS, "default", "p") == before
        assert store.resource_version == int(before["metadata"]["resourceVersion"])
    else:
        stored = store.get(PODS, "default", "p")
        assert stored["spec"]["containers"][0]["name"] == "a"
        assert stored["metadata"]["name"] == "p"
        assert not stored["spec"].get("nodeName")
