"""Served kinds of issue 14: apps/v1 DaemonSet and ControllerRevision, batch/v1 CronJob and
the StatefulSet fixes — the documentation's examples applied with kubectl and read back with
the official client, defaults, validation, Tables, status, protobuf create and patches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from apiserver_builders import call
from kubernetes import client, config

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH: install kubectl >= 1.27"
)
#: The Kubernetes documentation's examples (k8s.io/examples: application/web/web.yaml,
#: application/zookeeper/zookeeper.yaml, controllers/daemonset.yaml,
#: application/job/cronjob.yaml).
MANIFESTS = Path(__file__).parent / "manifests"
DAEMONSETS = "/apis/apps/v1/namespaces/default/daemonsets"
REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"
CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
STATEFULSETS = "/apis/apps/v1/namespaces/default/statefulsets"


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


def _template(labels, restart="Always", **spec):
    return {
        "metadata": {"labels": labels},
        "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "pause"}], **spec},
    }


def daemon_set(name, **spec):
    body = {
        "selector": {"matchLabels": {"app": name}},
        "template": _template({"app": name}),
    }
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": body}


def cron_job(name, **spec):
    body = {
        "schedule": "*/5 * * * *",
        "jobTemplate": {"spec": {"template": _template({"app": name}, "OnFailure")}},
    }
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": body}


def stateful_set(name, **spec):
    body = {
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": _template({"app": name}),
    }
    body.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": body,
    }


def _causes(reply):
    return [(c["field"], c["message"]) for c in reply["details"]["causes"]]


# -- the documentation's examples -------------------------------------------------------------


@needs_kubectl
@pytest.mark.parametrize("manifest", ["web.yaml", "zookeeper.yaml"])
def test_documentation_statefulsets_apply_with_mounts_naming_claim_templates(
    kubectl, api, manifest
):
    kubectl("apply", "-f", str(MANIFESTS / manifest))
    name = "web" if manifest == "web.yaml" else "zk"
    sts = client.AppsV1Api(api).read_namespaced_stateful_set(name, "default")
    claim = sts.spec.volume_claim_templates[0]
    mount = sts.spec.template.spec.containers[0].volume_mounts[0]
    assert mount.name == claim.metadata.name
    assert claim.spec.volume_mode == "Filesystem"
    assert sts.spec.pod_management_policy == "OrderedReady"
    assert sts.spec.update_strategy.type == "RollingUpdate"
    rolling = sts.spec.update_strategy.rolling_update
    if manifest == "web.yaml":
        assert rolling.partition == 0
    else:  # a type given without rollingUpdate gets none (SetDefaults_StatefulSet)
        assert rolling is None
    assert sts.spec.revision_history_limit == 10
    retention = sts.spec.persistent_volume_claim_retention_policy
    assert (retention.when_deleted, retention.when_scaled) == ("Retain", "Retain")
    out = kubectl("get", "statefulset", name).stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "AGE"]
    assert out[1].split()[:2] == [name, f"0/{sts.spec.replicas}"]


@needs_kubectl
def test_documentation_daemonset_applies_and_reads_back(kubectl, api):
    kubectl("create", "namespace", "logging")
    text = (MANIFESTS / "fluentd-elasticsearch.yaml").read_text().replace("kube-system", "logging")
    # kubectl create sends protobuf.
    kubectl("create", "-f", "-", stdin=text)
    ds = client.AppsV1Api(api).read_namespaced_daemon_set("fluentd-elasticsearch", "logging")
    assert ds.spec.update_strategy.type == "RollingUpdate"
    rolling = ds.spec.update_strategy.rolling_update
    assert (rolling.max_unavailable, rolling.max_surge) == (1, 0)
    assert ds.spec.revision_history_limit == 10
    assert ds.spec.template.spec.volumes[0].host_path.type == ""
    assert ds.metadata.annotations["deprecated.daemonset.template.generation"] == "1"
    status = ds.status
    assert (status.desired_number_scheduled, status.current_number_scheduled) == (0, 0)
    out = kubectl("get", "ds", "-n", "logging", "-o", "wide").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "NODE",
        "SELECTOR",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    row = out[1].split()
    assert row[:7] == ["fluentd-elasticsearch", "0", "0", "0", "0", "0", "<none>"]
    assert row[-1] == "name=fluentd-elasticsearch"
    # kubectl apply of a changed copy: its strategic merge patch keeps the rest.
    changed = text.replace("memory: 200Mi\n          requests", "memory: 300Mi\n          requests")
    kubectl("apply", "-f", "-", stdin=changed)
    ds = client.AppsV1Api(api).read_namespaced_daemon_set("fluentd-elasticsearch", "logging")
    container = ds.spec.template.spec.containers[0]
    assert container.resources.limits == {"memory": "300Mi"}
    assert container.volume_mounts[0].name == "varlog"
    assert ds.metadata.annotations["deprecated.daemonset.template.generation"] == "2"


@needs_kubectl
def test_documentation_cronjob_applies_and_reads_back(kubectl, api):
    kubectl("create", "-f", str(MANIFESTS / "cronjob.yaml"))
    cj = client.BatchV1Api(api).read_namespaced_cron_job("hello", "default")
    assert cj.spec.schedule == "* * * * *"
    assert (cj.spec.concurrency_policy, cj.spec.suspend) == ("Allow", False)
    assert (cj.spec.successful_jobs_history_limit, cj.spec.failed_jobs_history_limit) == (3, 1)
    # The pod template inside the Job template is defaulted; the Job spec is not (yet).
    job_spec = cj.spec.job_template.spec
    assert job_spec.template.spec.scheduler_name == "default-scheduler"
    assert job_spec.backoff_limit is None
    out = kubectl("get", "cronjob", "hello").stdout.splitlines()
    assert out[0].split() == [
        "NAME",
        "SCHEDULE",
        "TIMEZONE",
        "SUSPEND",
        "ACTIVE",
        "LAST",
        "SCHEDULE",
        "AGE",
    ]
    assert out[1].split()[:9] == ["hello", "*", "*", "*", "*", "*", "<none>", "False", "0"]
    assert out[1].split()[9] == "<none>"


# -- DaemonSet --------------------------------------------------------------------------------


def test_daemon_set_template_generation_moves_with_the_template_only(api):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_daemon_set("default", daemon_set("ds-gen"))

    def generations():
        ds = apps.read_namespaced_daemon_set("ds-gen", "default")
        template_generation = ds.metadata.annotations["deprecated.daemonset.template.generation"]
        return ds.metadata.generation, template_generation

    assert generations() == (1, "1")
    apps.patch_namespaced_daemon_set("ds-gen", "default", {"spec": {"minReadySeconds": 5}})
    assert generations() == (2, "1")
    patch = {"spec": {"template": {"metadata": {"labels": {"app": "ds-gen", "v": "2"}}}}}
    apps.patch_namespaced_daemon_set("ds-gen", "default", patch)
    assert generations() == (3, "2")
    # The annotation is the server's: a client cannot set it back.
    apps.patch_namespaced_daemon_set(
        "ds-gen",
        "default",
        {"metadata": {"annotations": {"deprecated.daemonset.template.generation": "9"}}},
    )
    assert generations() == (3, "2")
    apps.patch_namespaced_daemon_set_status(
        "ds-gen",
        "default",
        {"status": {"desiredNumberScheduled": 2, "numberReady": 1, "observedGeneration": 3}},
    )
    got = apps.read_namespaced_daemon_set("ds-gen", "default")
    assert (got.status.desired_number_scheduled, got.status.number_ready) == (2, 1)
    assert got.metadata.generation == 3


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"template": _template({"app": "x"}, "Never")},
            [
                (
                    "spec.template.metadata.labels",
                    'Invalid value: {"app":"x"}: `selector` does not match template `labels`',
                ),
                (
                    "spec.template.spec.restartPolicy",
                    'Unsupported value: "Never": supported values: "Always"',
                ),
            ],
            id="restart-never-and-labels",
        ),
        pytest.param(
            {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}},
            [
                (
                    "spec.updateStrategy.rollingUpdate.maxUnavailable",
                    "Required value: cannot be 0 when maxSurge is 0",
                )
            ],
            id="max-unavailable-zero",
        ),
        pytest.param(
            {
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"},
                }
            },
            [
                (
                    "spec.updateStrategy.rollingUpdate.maxSurge",
                    'Invalid value: "10%": may not be set when maxUnavailable is non-zero',
                )
            ],
            id="surge-and-unavailable",
        ),
        pytest.param(
            {"updateStrategy": {"type": "Replace"}},
            [
                (
                    "spec.updateStrategy",
                    'Unsupported value: {"type":"Replace"}: supported values: "RollingUpdate", '
                    '"OnDelete"',
                )
            ],
            id="unknown-strategy",
        ),
        pytest.param(
            {"revisionHistoryLimit": -1},
            [
                (
                    "spec.revisionHistoryLimit",
                    "Invalid value: -1: must be greater than or equal to 0",
                )
            ],
            id="negative-history",
        ),
    ],
)
def test_daemon_set_validation(apiserver, spec, expected):
    code, reply = call(apiserver, "POST", DAEMONSETS, daemon_set("ds-bad", **spec))
    assert code == 422, reply
    assert _causes(reply) == [(f, f"{m}") for f, m in expected]


def test_daemon_set_selector_is_immutable(apiserver):
    code, _ = call(apiserver, "POST", DAEMONSETS, daemon_set("ds-sel"))
    assert code == 201
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "ds-sel", "x": "y"}},
            "template": _template({"app": "ds-sel", "x": "y"}),
        }
    }
    code, reply = call(
        apiserver, "PATCH", DAEMONSETS + "/ds-sel", patch, "application/merge-patch+json"
    )
    assert code == 422
    assert [f for f, _ in _causes(reply)] == ["spec.selector"]


# -- ControllerRevision -----------------------------------------------------------------------


@needs_kubectl
def test_controller_revision_serves_data_revision_and_its_table(apiserver, api, kubectl):
    apps = client.AppsV1Api(api)
    owner = apps.create_namespaced_daemon_set("default", daemon_set("ds-owner"))
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": "ds-owner-5b8c",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "ds-owner",
                    "uid": owner.metadata.uid,
                    "controller": True,
                }
            ],
        },
        "data": {"spec": {"template": {"$patch": "replace"}}},
        "revision": 3,
    }
    import yaml

    kubectl("create", "-f", "-", stdin=yaml.safe_dump(revision))  # protobuf
    got = apps.read_namespaced_controller_revision("ds-owner-5b8c", "default")
    assert (got.revision, got.data) == (3, {"spec": {"template": {"$patch": "replace"}}})
    out = kubectl("get", "controllerrevisions", "ds-owner-5b8c").stdout.splitlines()
    assert out[0].split() == ["NAME", "CONTROLLER", "REVISION", "AGE"]
    assert out[1].split()[:3] == ["ds-owner-5b8c", "daemonset.apps/ds-owner", "3"]
    # data never changes; revision may (the history controller renumbers).
    code, reply = call(
        apiserver,
        "PATCH",
        REVISIONS + "/ds-owner-5b8c",
        {"data": {"other": 1}},
        "application/merge-patch+json",
    )
    assert code == 422
    assert [f for f, _ in _causes(reply)] == ["data"]
    code, reply = call(
        apiserver,
        "PATCH",
        REVISIONS + "/ds-owner-5b8c",
        {"revision": 4},
        "application/merge-patch+json",
    )
    assert (code, reply["revision"]) == (200, 4)
    code, reply = call(
        apiserver,
        "POST",
        REVISIONS,
        {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"}},
    )
    assert code == 422
    assert _causes(reply) == [("data", "Required value: data is mandatory")]


# -- CronJob ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field", "fragment"),
    [
        pytest.param({"schedule": "61 * * * *"}, "spec.schedule", '"61 * * * *"', id="range"),
        pytest.param(
            {"schedule": "* * * * * *"},
            "spec.schedule",
            "expected exactly 5 fields, found 6",
            id="six-fields",
        ),
        pytest.param(
            {"schedule": "@every 1h"}, "spec.schedule", "unrecognized descriptor", id="every"
        ),
        pytest.param(
            {"schedule": "TZ=UTC 0 * * * *"},
            "spec.schedule",
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            id="tz-in-schedule",
        ),
        pytest.param(
            {"timeZone": "Mars/Olympus"},
            "spec.timeZone",
            "unknown time zone Mars/Olympus",
            id="unknown-zone",
        ),
        pytest.param(
            {"timeZone": "Local"},
            "spec.timeZone",
            "timeZone must be an explicit time zone",
            id="local-zone",
        ),
        pytest.param(
            {"concurrencyPolicy": "Sometimes"},
            "spec.concurrencyPolicy",
            'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
            id="policy",
        ),
        pytest.param(
            {"jobTemplate": {"spec": {"template": _template({"a": "b"}, "Always")}}},
            "spec.jobTemplate.spec.template.spec.restartPolicy",
            'Required value: valid values: "OnFailure", "Never"',
            id="job-template-restart-policy",
        ),
        pytest.param(
            {
                "jobTemplate": {
                    "spec": {
                        "selector": {"matchLabels": {"a": "b"}},
                        "template": _template({"a": "b"}, "Never"),
                    }
                }
            },
            "spec.jobTemplate.spec.selector",
            "`selector` will be auto-generated",
            id="job-template-selector",
        ),
        pytest.param(
            {"startingDeadlineSeconds": -5},
            "spec.startingDeadlineSeconds",
            "must be greater than or equal to 0",
            id="deadline",
        ),
    ],
)
def test_cron_job_validation(apiserver, spec, field, fragment):
    code, reply = call(apiserver, "POST", CRONJOBS, cron_job("cj-bad", **spec))
    assert code == 422, reply
    causes = _causes(reply)
    assert [f for f, _ in causes] == [field], causes
    assert fragment in causes[0][1]


def test_cron_job_name_leaves_room_for_the_job_suffix(apiserver):
    code, reply = call(apiserver, "POST", CRONJOBS, cron_job("c" * 53))
    assert code == 422
    assert _causes(reply) == [
        ("metadata.name", f'Invalid value: "{"c" * 53}": must be no more than 52 characters')
    ]
    code, _ = call(apiserver, "POST", CRONJOBS, cron_job("c" * 52))
    assert code == 201


def test_cron_job_with_a_time_zone_and_descriptor_and_status(api):
    batch = client.BatchV1Api(api)
    body = cron_job("cj-zone", schedule="@hourly", timeZone="Europe/Riga")
    batch.create_namespaced_cron_job("default", body)
    batch.patch_namespaced_cron_job_status(
        "cj-zone",
        "default",
        {
            "status": {
                "active": [{"kind": "Job", "name": "cj-zone-1", "namespace": "default"}],
                "lastScheduleTime": "2026-01-01T10:00:00Z",
            }
        },
    )
    got = batch.read_namespaced_cron_job("cj-zone", "default")
    assert got.spec.time_zone == "Europe/Riga"
    assert [ref.name for ref in got.status.active] == ["cj-zone-1"]
    assert got.status.last_schedule_time.year == 2026
    # A spec write never changes the status, and moves the generation.
    batch.patch_namespaced_cron_job("cj-zone", "default", {"spec": {"suspend": True}})
    got = batch.read_namespaced_cron_job("cj-zone", "default")
    assert (got.spec.suspend, len(got.status.active), got.metadata.generation) == (True, 1, 2)


# -- StatefulSet ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"podManagementPolicy": "Random"},
            [
                (
                    "spec.podManagementPolicy",
                    "Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
                )
            ],
            id="pod-management-policy",
        ),
        pytest.param(
            {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
            [
                (
                    "spec.updateStrategy.rollingUpdate",
                    'Invalid value: {"partition":1}: only allowed for updateStrategy '
                    "'RollingUpdate'",
                )
            ],
            id="on-delete-with-rolling-update",
        ),
        pytest.param(
            {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
            [
                (
                    "spec.updateStrategy.rollingUpdate.partition",
                    "Invalid value: -1: must be greater than or equal to 0",
                )
            ],
            id="negative-partition",
        ),
        pytest.param(
            {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
            [
                (
                    "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
                    'Unsupported value: "Keep": supported values: "Retain", "Delete"',
                )
            ],
            id="retention-policy",
        ),
        pytest.param(
            {
                "template": _template(
                    {"app": "sts-bad"},
                    containers=[
                        {
                            "name": "c",
                            "image": "pause",
                            "volumeMounts": [{"name": "data", "mountPath": "/d"}],
                        }
                    ],
                )
            },
            [("spec.template.spec.containers[0].volumeMounts[0].name", 'Not found: "data"')],
            id="mount-of-neither-volume-nor-claim",
        ),
    ],
)
def test_stateful_set_validation(apiserver, spec, expected):
    code, reply = call(apiserver, "POST", STATEFULSETS, stateful_set("sts-bad", **spec))
    assert code == 422, reply
    assert _causes(reply) == expected


def test_stateful_set_scale_subresource(api):
    apps = client.AppsV1Api(api)
    apps.create_namespaced_stateful_set("default", stateful_set("sts-scale"))
    apps.patch_namespaced_stateful_set_scale("sts-scale", "default", {"spec": {"replicas": 4}})
    scale = apps.read_namespaced_stateful_set_scale("sts-scale", "default")
    assert (scale.spec.replicas, scale.status.selector) == (4, "app=sts-scale")
    assert apps.read_namespaced_stateful_set("sts-scale", "default").spec.replicas == 4
