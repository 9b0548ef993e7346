"""Served kinds for workloads: apps/v1 Deployment, batch/v1 Job, core/v1 Secret and
ServiceAccount — defaulting, the strategies' create and update rules, the status and scale
subresources — with the official client, kubectl and raw HTTP."""

from __future__ import annotations

import base64
import shutil

import pytest
from apiserver_builders import call, deployment, job
from kubernetes import client, config

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
SECRETS = "/api/v1/namespaces/default/secrets"
MERGE = "application/merge-patch+json"


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


def _create(apiserver, path, body):
    code, created = call(apiserver, "POST", path, body)
    assert code == 201, created
    return created


# -- Deployment -----------------------------------------------------------------------------


def test_deployment_gets_apps_v1_defaults_and_pod_template_defaults(apiserver):
    created = _create(apiserver, DEPLOYMENTS, deployment("d-defaults").obj())
    spec = created["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    pod_spec = spec["template"]["spec"]
    assert {k: pod_spec[k] for k in pod_spec if k != "containers"} == {
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }
    assert pod_spec["containers"][0] == {
        "name": "c",
        "image": "nginx:1.27",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    assert created["status"] == {}


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        pytest.param(
            {"type": "Recreate"}, {"type": "Recreate"}, id="recreate-gets-no-rolling-update"
        ),
        pytest.param(
            {"rollingUpdate": {"maxSurge": 2}},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": "25%"}},
            id="rolling-update-keeps-a-given-surge",
        ),
    ],
)
def test_deployment_strategy_defaults(apiserver, strategy, expected):
    name = "d-strategy-" + str(len(strategy.get("type", "")))
    created = _create(apiserver, DEPLOYMENTS, deployment(name).spec(strategy=strategy).obj())
    assert created["spec"]["strategy"] == expected


def test_deployment_generation_follows_spec_and_annotations_not_labels_or_status(api):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment("default", deployment("d-gen").obj())

    def generation():
        return apps.read_namespaced_deployment("d-gen", "default").metadata.generation

    assert generation() == 1
    apps.patch_namespaced_deployment("d-gen", "default", {"metadata": {"labels": {"x": "y"}}})
    assert generation() == 1
    apps.patch_namespaced_deployment("d-gen", "default", {"spec": {"replicas": 2}})
    assert generation() == 2
    # Annotations are copied to the ReplicaSets: a change of them is a new generation.
    apps.patch_namespaced_deployment(
        "d-gen", "default", {"metadata": {"annotations": {"note": "a"}}}
    )
    assert generation() == 3
    # Status goes through /status only, and never moves the generation.
    apps.patch_namespaced_deployment_status(
        "d-gen", "default", {"status": {"observedGeneration": 3, "replicas": 2}}
    )
    got = apps.read_namespaced_deployment("d-gen", "default")
    assert (got.metadata.generation, got.status.observed_generation, got.status.replicas) == (
        3,
        3,
        2,
    )
    apps.patch_namespaced_deployment("d-gen", "default", {"status": {"replicas": 9}})
    assert apps.read_namespaced_deployment("d-gen", "default").status.replicas == 2


def test_deployment_scale_subresource(api):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_deployment("default", deployment("d-scale").spec(replicas=2).obj())
    scale = apps.read_namespaced_deployment_scale("d-scale", "default")
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=d-scale")
    apps.patch_namespaced_deployment_scale("d-scale", "default", {"spec": {"replicas": 4}})
    got = apps.read_namespaced_deployment("d-scale", "default")
    assert (got.spec.replicas, got.metadata.generation) == (4, 2)


@pytest.mark.parametrize(
    ("path", "kind", "empty"),
    [
        pytest.param(DEPLOYMENTS, "Deployment", {}, id="deployment"),
        pytest.param(
            "/apis/apps/v1/namespaces/default/replicasets",
            "ReplicaSet",
            {"replicas": 0},
            id="replicaset",
        ),
        pytest.param(
            "/apis/apps/v1/namespaces/default/statefulsets",
            "StatefulSet",
            {"replicas": 0, "availableReplicas": 0},
            id="statefulset",
        ),
    ],
)
def test_a_new_workload_starts_with_an_empty_status(apiserver, path, kind, empty):
    body = deployment(f"empty-{kind.lower()}").obj()
    body["kind"] = kind
    if kind != "Deployment":
        body["spec"] = {k: body["spec"][k] for k in ("selector", "template")}
    if kind == "StatefulSet":
        body["spec"]["serviceName"] = "svc"
    body["status"] = {"replicas": 5, "readyReplicas": 5, "observedGeneration": 9}
    assert _create(apiserver, path, body)["status"] == empty


def test_replica_set_gets_its_replica_default(apiserver):
    body = deployment("rs-defaults").obj()
    body.update(apiVersion="apps/v1", kind="ReplicaSet")
    for key in ("strategy", "revisionHistoryLimit", "progressDeadlineSeconds"):
        body["spec"].pop(key, None)
    created = _create(apiserver, "/apis/apps/v1/namespaces/default/replicasets", body)
    assert created["spec"]["replicas"] == 1
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"


# -- Job ------------------------------------------------------------------------------------


def test_job_gets_a_generated_selector_on_its_uid(apiserver):
    created = _create(apiserver, JOBS, job("j-gen").obj())
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": uid}
    }
    assert created["spec"]["template"]["metadata"]["labels"] == {
        "app": "j-gen",
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "j-gen",
        "controller-uid": uid,
        "job-name": "j-gen",
    }
    # SetDefaults_Job: the Job's own labels are its template's (as given).
    assert created["metadata"]["labels"] == {"app": "j-gen"}
    spec = created["spec"]
    assert {k: spec[k] for k in spec if k not in ("selector", "template")} == {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False,
    }
    assert created["status"] == {}


def test_job_with_manual_selector_keeps_it(apiserver):
    body = job("j-manual").spec(manualSelector=True, selector={"matchLabels": {"app": "j-manual"}})
    created = _create(apiserver, JOBS, body.obj())
    assert created["spec"]["selector"] == {"matchLabels": {"app": "j-manual"}}
    assert created["spec"]["template"]["metadata"]["labels"] == {"app": "j-manual"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(
            {"parallelism": 3},
            {"parallelism": 3, "backoffLimit": 6},
            id="work-queue-gets-no-completions",
        ),
        pytest.param(
            {"completions": 5, "completionMode": "Indexed", "backoffLimitPerIndex": 1},
            {"completions": 5, "parallelism": 1, "backoffLimit": 2**31 - 1},
            id="backoff-per-index-lifts-the-global-limit",
        ),
        pytest.param(
            {
                "podFailurePolicy": {
                    "rules": [
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
                    ]
                }
            },
            {
                "podReplacementPolicy": "Failed",
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "Ignore",
                            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                        }
                    ]
                },
            },
            id="pod-failure-policy-means-replace-failed-pods-only",
        ),
    ],
)
def test_job_spec_defaults(apiserver, given, expected):
    name = f"j-defaults-{len(str(given))}"
    created = _create(apiserver, JOBS, job(name).spec(**given).obj())
    assert {k: created["spec"].get(k) for k in expected} == expected
    if "parallelism" in given and "completions" not in given:
        assert "completions" not in created["spec"]


def test_jobs_are_selected_by_succeeded_count(apiserver, api):
    batch = client.BatchV1Api(api)
    batch.create_namespaced_job("default", job("j-count").obj())
    batch.create_namespaced_job("default", job("j-zero").obj())
    batch.patch_namespaced_job_status("j-count", "default", {"status": {"succeeded": 1}})
    found = batch.list_namespaced_job("default", field_selector="status.successful=1")
    assert [j.metadata.name for j in found.items] == ["j-count"]
    none_yet = batch.list_namespaced_job("default", field_selector="status.successful=0")
    names = [j.metadata.name for j in none_yet.items]
    assert "j-zero" in names
    assert "j-count" not in names


def test_job_has_no_scale_subresource(apiserver):
    _create(apiserver, JOBS, job("j-noscale").obj())
    code, _ = call(apiserver, "GET", f"{JOBS}/j-noscale/scale")
    assert code == 404


# -- Secret and ServiceAccount ---------------------------------------------------------------


def test_secret_string_data_is_merged_into_data(apiserver):
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s-merge"},
        "data": {"a": base64.b64encode(b"old").decode(), "b": base64.b64encode(b"kept").decode()},
        "stringData": {"a": "new", "c": "plain"},
    }
    created = _create(apiserver, SECRETS, body)
    assert created["type"] == "Opaque"
    assert "stringData" not in created
    decoded = {k: base64.b64decode(v).decode() for k, v in created["data"].items()}
    assert decoded == {"a": "new", "b": "kept", "c": "plain"}
    # A patch's stringData is merged the same way (write-only, never stored).
    code, patched = call(
        apiserver, "PATCH", f"{SECRETS}/s-merge", {"stringData": {"b": "changed"}}, MERGE
    )
    assert code == 200, patched
    assert base64.b64decode(patched["data"]["b"]) == b"changed"
    assert "stringData" not in patched


@needs_kubectl
def test_kubectl_creates_and_prints_the_workload_kinds(kubectl):
    kubectl("create", "deployment", "k-web", "--image=nginx", "--replicas=3")
    kubectl("create", "job", "k-pi", "--image=perl", "--", "perl", "-e", "1")
    kubectl("create", "secret", "generic", "k-secret", "--from-literal=a=1", "--from-literal=b=2")
    kubectl("create", "serviceaccount", "k-robot")
    out = kubectl("get", "deploy/k-web", "-o", "wide").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    row = out[1].split()
    assert row[:4] + row[5:] == ["k-web", "0/3", "0", "0", "nginx", "nginx", "app=k-web"]
    out = kubectl("get", "job/k-pi").stdout.splitlines()
    assert out[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert out[1].split()[:3] == ["k-pi", "Running", "0/1"]
    out = kubectl("get", "secret/k-secret").stdout.splitlines()
    assert out[0].split() == ["NAME", "TYPE", "DATA", "AGE"]
    assert out[1].split()[:3] == ["k-secret", "Opaque", "2"]
    out = kubectl("get", "sa/k-robot").stdout.splitlines()
    assert out[0].split() == ["NAME", "SECRETS", "AGE"]
    assert out[1].split()[:2] == ["k-robot", "0"]


@needs_kubectl
def test_kubectl_apply_scale_and_rollout_restart_a_deployment(kubectl):
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: k-apply
  labels: {app: k-apply}
spec:
  replicas: 3
  selector:
    matchLabels: {app: k-apply}
  template:
    metadata:
      labels: {app: k-apply}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
"""
    assert kubectl("apply", "-f", "-", stdin=manifest).stdout.strip() == (
        "deployment.apps/k-apply created"
    )
    assert kubectl("apply", "-f", "-", stdin=manifest).stdout.strip() == (
        "deployment.apps/k-apply unchanged"
    )
    assert kubectl("scale", "deployment/k-apply", "--replicas=5").stdout.strip() == (
        "deployment.apps/k-apply scaled"
    )
    kubectl("rollout", "restart", "deployment/k-apply")
    got = kubectl(
        "get",
        "deployment/k-apply",
        "-o",
        "jsonpath={.spec.replicas} {.metadata.generation} {.spec.template.spec.containers[0].ports[0].protocol}",
    ).stdout
    assert got == "5 3 TCP"
    annotations = kubectl(
        "get", "deployment/k-apply", "-o", "jsonpath={.spec.template.metadata.annotations}"
    ).stdout
    assert "kubectl.kubernetes.io/restartedAt" in annotations
    # A changed manifest is a strategic merge patch: containers merge by name, so what
    # the manifest does not change (the port) stays.
    changed = manifest.replace("nginx:1.14.2", "nginx:1.16.1").replace("replicas: 3", "")
    assert kubectl("apply", "-f", "-", stdin=changed).stdout.strip() == (
        "deployment.apps/k-apply configured"
    )
    got = kubectl(
        "get",
        "deployment/k-apply",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image} "
        "{.spec.template.spec.containers[0].ports[0].containerPort}",
    ).stdout
    assert got == "nginx:1.16.1 80"


@needs_kubectl
def test_kubectl_explain_describes_the_new_kinds(kubectl):
    out = kubectl("explain", "deployment.spec.strategy").stdout
    assert "KIND:       Deployment" in out
    assert "rollingUpdate" in out
    out = kubectl("explain", "job.spec.backoffLimitPerIndex").stdout
    assert "KIND:       Job" in out


@needs_kubectl
def test_kubectl_apply_of_a_kind_not_served_says_so(kubectl):
    # kubectl looks up a kind missing from /openapi/v3 in /openapi/v2; an empty v2 document
    # lets it go on to the error a real cluster gives, not "failed to download openapi".
    manifest = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: k-ingress}
spec:
  defaultBackend:
    service: {name: web, port: {number: 80}}
"""
    result = kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode == 1
    assert 'no matches for kind "Ingress" in version "networking.k8s.io/v1"' in result.stderr


def test_openapi_v2_lists_no_definitions(apiserver):
    code, body = call(apiserver, "GET", "/openapi/v2")
    assert code == 200
    assert (body["swagger"], body["paths"], body["definitions"]) == ("2.0", {}, {})


def test_openapi_v3_patch_takes_strategic_merge_patches_for_builtin_kinds(apiserver):
    # kubectl apply builds its strategic merge patch from these schemas when it may.
    _, doc = call(apiserver, "GET", "/openapi/v3/apis/apps/v1")
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert sorted(patch["requestBody"]["content"]) == [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ]
    spec = doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["properties"]["strategy"]["x-kubernetes-patch-strategy"] == "retainKeys"
