"""The scale subresource (autoscaling/v1 Scale) of ReplicationControllers, ReplicaSets,
StatefulSets and custom resources: with the official client, kubectl scale, and raw HTTP
for the error bodies."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request

import pytest
from crd_builders import GROUP, crd, crontab
from kubectl_helpers import kubectl_runner
from kubernetes import client, config
from kubernetes.client.rest import ApiException

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
TEMPLATE = {
    "metadata": {"labels": {"app": "web", "tier": "front"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def kubectl(apiserver, tmp_path_factory):
    run = kubectl_runner(apiserver.kubeconfig_path, tmp_path_factory.mktemp("kubectl-cache"))
    return lambda *args, stdin=None: run(*args, stdin=stdin).stdout


def _raw(apiserver, method, path, body=None, content_type="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        apiserver.url + path, data=data, headers={"Content-Type": content_type}, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@needs_kubectl
def test_kubectl_scales_a_replication_controller(api, kubectl):
    core = client.CoreV1Api(api)
    rc = {
        "metadata": {"name": "web-rc"},
        "spec": {"replicas": 1, "selector": {"tier": "front", "app": "web"}, "template": TEMPLATE},
    }
    core.create_namespaced_replication_controller("default", rc)
    assert kubectl("scale", "rc/web-rc", "--replicas=3").strip() == (
        "replicationcontroller/web-rc scaled"
    )
    scale = core.read_namespaced_replication_controller_scale("web-rc", "default")
    assert scale.spec.replicas == 3
    assert (scale.status.replicas, scale.status.selector) == (0, "app=web,tier=front")
    stored = core.read_namespaced_replication_controller("web-rc", "default")
    assert stored.spec.replicas == 3 and stored.metadata.generation == 2
    assert scale.metadata.resource_version == stored.metadata.resource_version
    assert scale.metadata.uid == stored.metadata.uid
    # --current-replicas is a precondition kubectl checks against the Scale it reads.
    kubectl("scale", "rc/web-rc", "--current-replicas=3", "--replicas=0")
    assert core.read_namespaced_replication_controller("web-rc", "default").spec.replicas == 0
    # kube-apiserver's Scale printer, for kubectl get --subresource=scale.
    printed = kubectl("get", "rc", "web-rc", "--subresource=scale").splitlines()
    assert printed[0].split() == ["NAME", "DESIRED", "AVAILABLE", "AGE"]
    assert printed[1].split()[:3] == ["web-rc", "0", "0"]


def test_replica_set_scale_with_the_apps_client(api):
    apps = client.AppsV1Api(api)
    selector = {
        "matchLabels": {"tier": "front"},
        "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web", "api"]},
            {"key": "canary", "operator": "DoesNotExist"},
        ],
    }
    rs = {
        "metadata": {"name": "web-rs"},
        "spec": {"replicas": 2, "selector": selector, "template": TEMPLATE},
    }
    apps.create_namespaced_replica_set("default", rs)
    scale = apps.read_namespaced_replica_set_scale("web-rs", "default")
    assert (scale.kind, scale.api_version) == ("Scale", "autoscaling/v1")
    assert scale.spec.replicas == 2
    assert scale.status.selector == "app in (api,web),!canary,tier=front"
    old_version = scale.metadata.resource_version

    scale.spec.replicas = 5
    written = apps.replace_namespaced_replica_set_scale("web-rs", "default", scale)
    assert written.spec.replicas == 5
    assert written.metadata.resource_version != old_version
    assert apps.read_namespaced_replica_set("web-rs", "default").metadata.generation == 2

    # The Scale's resourceVersion is a precondition on the ReplicaSet.
    scale.metadata.resource_version = old_version
    scale.spec.replicas = 7
    with pytest.raises(ApiException) as stale:
        apps.replace_namespaced_replica_set_scale("web-rs", "default", scale)
    body = json.loads(stale.value.body)
    assert stale.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"].startswith('Operation cannot be fulfilled on replicasets.apps "web-rs"')
    assert apps.read_namespaced_replica_set("web-rs", "default").spec.replicas == 5


def test_stateful_set_scale_patches(api, apiserver):
    apps = client.AppsV1Api(api)
    sts = {
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
        },
    }
    apps.create_namespaced_stateful_set("default", sts)
    patched = apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 4}})
    assert patched.spec.replicas == 4 and patched.status.selector == "app=web"
    path = "/apis/apps/v1/namespaces/default/statefulsets/db/scale"
    for content_type, body, want in (
        ("application/merge-patch+json", {"spec": {"replicas": 2}}, 2),
        (
            "application/json-patch+json",
            [{"op": "replace", "path": "/spec/replicas", "value": 6}],
            6,
        ),
        ("application/strategic-merge-patch+json", {"spec": {"replicas": 3}}, 3),
    ):
        status, scale = _raw(apiserver, "PATCH", path, body, content_type)
        assert (status, scale["spec"]["replicas"]) == (200, want)
    assert apps.read_namespaced_stateful_set("db", "default").spec.replicas == 3
    # Replicas of zero: Go's omitempty leaves spec.replicas out.
    status, scale = _raw(
        apiserver, "PATCH", path, {"spec": {"replicas": 0}}, "application/merge-patch+json"
    )
    assert (status, scale["spec"], scale["status"]["replicas"]) == (200, {}, 0)


@needs_kubectl
def test_kubectl_scales_a_stateful_set(api, kubectl):
    apps = client.AppsV1Api(api)
    sts = {
        "metadata": {"name": "cache"},
        "spec": {
            "replicas": 1,
            "serviceName": "cache",
            "selector": {"matchLabels": {"app": "web"}},
            "template": TEMPLATE,
        },
    }
    apps.create_namespaced_stateful_set("default", sts)
    assert kubectl("scale", "statefulset", "cache", "--replicas=2").strip() == (
        "statefulset.apps/cache scaled"
    )
    assert apps.read_namespaced_stateful_set("cache", "default").spec.replicas == 2


def test_scale_errors(api, apiserver):
    status, body = _raw(apiserver, "GET", "/apis/apps/v1/namespaces/default/replicasets/nope/scale")
    assert (status, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'replicasets/scale.apps "nope" not found',
    )
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "replicasets/scale"}
    status, body = _raw(
        apiserver, "GET", "/api/v1/namespaces/default/replicationcontrollers/nope/scale"
    )
    assert (status, body["message"]) == (
        404,
        'replicationcontrollers/scale.autoscaling "nope" not found',
    )
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "nope"},
        "spec": {"replicas": 1},
    }
    status, body = _raw(
        apiserver, "PUT", "/apis/apps/v1/namespaces/default/statefulsets/nope/scale", scale
    )
    assert (status, body["message"]) == (404, 'statefulsets.apps "nope" not found')

    client.AppsV1Api(api).create_namespaced_replica_set(
        "default",
        {
            "metadata": {"name": "err-rs"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": TEMPLATE,
            },
        },
    )
    path = "/apis/apps/v1/namespaces/default/replicasets/err-rs/scale"
    status, body = _raw(
        apiserver, "PUT", path, dict(scale, metadata={"name": "err-rs"}, spec={"replicas": -1})
    )
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'Scale.autoscaling "err-rs" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    )
    status, body = _raw(apiserver, "PUT", path, dict(scale, metadata={"name": "other"}))
    assert (status, body["message"]) == (
        400,
        "the name of the object (other) does not match the name on the URL (err-rs)",
    )
    status, body = _raw(
        apiserver,
        "PUT",
        path,
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "err-rs"}},
    )
    assert status == 400 and "cannot be handled as a Scale" in body["message"]
    status, body = _raw(
        apiserver, "PATCH", path, {"spec": {"replicas": "two"}}, "application/merge-patch+json"
    )
    assert (
        status == 400
        and "cannot unmarshal string into Go struct field ScaleSpec.spec.replicas"
        in body["message"]
    )
    status, body = _raw(apiserver, "DELETE", path)
    assert (status, body["reason"]) == (405, "MethodNotAllowed")
    status, body = _raw(apiserver, "GET", "/api/v1/namespaces/default/pods/x/scale")
    assert status == 404
    status, body = _raw(
        apiserver, "GET", "/apis/apps/v1/watch/namespaces/default/replicasets/err-rs/scale"
    )
    assert (status, body["reason"]) == (404, "NotFound")
    assert client.AppsV1Api(api).read_namespaced_replica_set("err-rs", "default").spec.replicas == 1


def _scaled_crd(plural="scaledtabs", kind="ScaledTab", **scale):
    definition = crd(plural=plural, kind=kind, short_names=())
    version = definition["spec"]["versions"][0]
    properties = version["schema"]["openAPIV3Schema"]["properties"]
    properties["status"]["properties"]["selector"] = {"type": "string"}
    del properties["spec"]["properties"]["replicas"]["default"]
    version["subresources"]["scale"] = scale or {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.count",
        "labelSelectorPath": ".status.selector",
    }
    return definition


@needs_kubectl
def test_custom_resource_scale(api, apiserver, kubectl):
    ext = client.ApiextensionsV1Api(api)
    objects = client.CustomObjectsApi(api)
    ext.create_custom_resource_definition(_scaled_crd())
    tab = dict(crontab("t1"), kind="ScaledTab")
    tab["spec"]["replicas"] = 2
    objects.create_namespaced_custom_object(GROUP, "v1", "default", "scaledtabs", tab)
    objects.patch_namespaced_custom_object_status(
        GROUP, "v1", "default", "scaledtabs", "t1", {"status": {"count": 2, "selector": "app=t"}}
    )
    scale = objects.get_namespaced_custom_object_scale(GROUP, "v1", "default", "scaledtabs", "t1")
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=t"}
    assert kubectl("scale", f"scaledtabs.{GROUP}/t1", "--replicas=5").strip() == (
        f"scaledtab.{GROUP}/t1 scaled"
    )
    stored = objects.get_namespaced_custom_object(GROUP, "v1", "default", "scaledtabs", "t1")
    assert stored["spec"]["replicas"] == 5 and stored["metadata"]["generation"] == 2

    path = f"/apis/{GROUP}/v1/namespaces/default/scaledtabs/t1/scale"
    # The custom resource's own schema still applies (replicas: minimum 1, maximum 10).
    status, body = _raw(
        apiserver, "PATCH", path, {"spec": {"replicas": 11}}, "application/merge-patch+json"
    )
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "spec.replicas"
    status, body = _raw(
        apiserver,
        "PATCH",
        path,
        {"spec": {"replicas": 3}},
        "application/strategic-merge-patch+json",
    )
    assert status == 415
    status, body = _raw(
        apiserver, "GET", f"/apis/{GROUP}/v1/namespaces/default/scaledtabs/none/scale"
    )
    assert (status, body["message"]) == (404, f'scaledtabs.{GROUP} "none" not found')

    # A custom resource without the spec replicas field: GET is an internal error, and
    # an update that does not set it is refused.
    bare = dict(crontab("t2"), kind="ScaledTab")
    objects.create_namespaced_custom_object(GROUP, "v1", "default", "scaledtabs", bare)
    path = f"/apis/{GROUP}/v1/namespaces/default/scaledtabs/t2/scale"
    status, body = _raw(apiserver, "GET", path)
    assert (status, body["reason"]) == (500, "InternalError")
    assert 'the spec replicas field ".spec.replicas" does not exist' in body["message"]
    status, body = _raw(apiserver, "PUT", path, {"metadata": {"name": "t2"}})
    assert (status, body["message"]) == (
        400,
        'the spec replicas field ".spec.replicas" cannot be empty',
    )

    # ValidateScaleStatus on every write of the custom resource.
    status, body = _raw(
        apiserver,
        "PATCH",
        f"/apis/{GROUP}/v1/namespaces/default/scaledtabs/t1/status",
        {"status": {"count": -1}},
        "application/merge-patch+json",
    )
    assert status == 422
    assert (body["details"]["causes"][0]["field"], body["details"]["causes"][0]["message"]) == (
        ".status.count",
        "Invalid value: -1: should be a non-negative integer",
    )

    # Served in both discovery documents, and gone with the CRD.
    listing = _raw(apiserver, "GET", f"/apis/{GROUP}/v1")[1]
    entry = next(r for r in listing["resources"] if r["name"] == "scaledtabs/scale")
    assert (entry["group"], entry["version"], entry["kind"]) == ("autoscaling", "v1", "Scale")
    ext.delete_custom_resource_definition(f"scaledtabs.{GROUP}")
    assert _raw(apiserver, "GET", path)[0] == 404


@pytest.mark.parametrize(
    ("scale", "field", "message"),
    [
        ({"statusReplicasPath": ".status.count"}, "specReplicasPath", "Required value"),
        (
            {"specReplicasPath": ".status.x", "statusReplicasPath": ".status.count"},
            "specReplicasPath",
            'Invalid value: ".status.x": should be a json path under .spec',
        ),
        (
            {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".status.count"},
            "specReplicasPath",
            'Invalid value: "spec.replicas": must be a simple json path starting with .',
        ),
        (
            {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".spec.count"},
            "statusReplicasPath",
            'Invalid value: ".spec.count": should be a json path under .status',
        ),
        (
            {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.count",
                "labelSelectorPath": ".metadata.labels",
            },
            "labelSelectorPath",
            'Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
        ),
    ],
)
def test_a_crd_scale_subresource_needs_paths_under_spec_and_status(
    apiserver, scale, field, message
):
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    status, body = _raw(apiserver, "POST", path, _scaled_crd("badtabs", "BadTab", **scale))
    assert (status, body["reason"]) == (422, "Invalid")
    causes = [(c["field"], c["message"]) for c in body["details"]["causes"]]
    assert causes == [(f"spec.versions[0].subresources.scale.{field}", message)]
