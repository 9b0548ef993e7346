"""Validation of Deployments, Jobs and Secrets on create and update, with kube-apiserver
1.34's messages word for word (422 Invalid, nothing stored)."""

from __future__ import annotations

import base64

import pytest
from apiserver_builders import call, deployment, job

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
SECRETS = "/api/v1/namespaces/default/secrets"
MERGE = "application/merge-patch+json"
MUST_BE_NONNEGATIVE = "must be greater than or equal to 0"


def _mismatched(body):
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    return body


def _long_indexed_job():
    body = job("x" * 62).spec(completionMode="Indexed", completions=10).obj()
    return body


CREATE_CASES = [
    pytest.param(
        DEPLOYMENTS,
        _mismatched(deployment("d1").obj()),
        'Deployment.apps "d1" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"other"}: `selector` does not match template `labels`',
        id="deployment-selector-must-match-template",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d2").no_selector().obj(),
        'Deployment.apps "d2" is invalid: [spec.selector: Required value, '
        'spec.template.metadata.labels: Invalid value: {"app":"d2"}: `selector` does not '
        "match template `labels`]",
        id="deployment-selector-required",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d3").spec(selector={}).obj(),
        'Deployment.apps "d3" is invalid: spec.selector: Invalid value: {}: empty selector is '
        "invalid for deployment",
        id="deployment-empty-selector",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d4").spec(replicas=-1).obj(),
        f'Deployment.apps "d4" is invalid: spec.replicas: Invalid value: -1: {MUST_BE_NONNEGATIVE}',
        id="deployment-replicas-nonnegative",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d5")
        .spec(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})
        .obj(),
        'Deployment.apps "d5" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid '
        "value: 0: may not be 0 when `maxSurge` is 0",
        id="deployment-surge-and-unavailable-not-both-zero",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d6")
        .spec(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})
        .obj(),
        'Deployment.apps "d6" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be '
        "specified when strategy `type` is 'Recreate'",
        id="deployment-recreate-takes-no-rolling-update",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d7").spec(strategy={"rollingUpdate": {"maxUnavailable": "120%"}}).obj(),
        'Deployment.apps "d7" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid '
        'value: "120%": must not be greater than 100%',
        id="deployment-unavailable-at-most-100-percent",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d8").spec(strategy={"rollingUpdate": {"maxSurge": "lots"}}).obj(),
        'Deployment.apps "d8" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: '
        "\"lots\": a valid percent string must be a numeric string followed by an ending '%' "
        "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        id="deployment-surge-is-a-percent",
    ),
    pytest.param(
        DEPLOYMENTS,
        deployment("d9").spec(minReadySeconds=30, progressDeadlineSeconds=30).obj(),
        'Deployment.apps "d9" is invalid: spec.progressDeadlineSeconds: Invalid value: 30: must '
        "be greater than minReadySeconds",
        id="deployment-deadline-after-min-ready",
    ),
    pytest.param(
        JOBS,
        job("j1").restart_policy("Always").obj(),
        'Job.batch "j1" is invalid: spec.template.spec.restartPolicy: Required value: valid '
        'values: "OnFailure", "Never"',
        id="job-restart-policy-always",
    ),
    pytest.param(
        JOBS,
        job("j2").restart_policy("Sometimes").obj(),
        # ValidatePodSpec's rule and the Job's own both report it, as upstream does.
        'Job.batch "j2" is invalid: [spec.template.spec.restartPolicy: Unsupported value: '
        '"Sometimes": supported values: "Always", "OnFailure", "Never", '
        "spec.template.spec.restartPolicy: Unsupported value: "
        '"Sometimes": supported values: "OnFailure", "Never"]',
        id="job-restart-policy-unknown",
    ),
    pytest.param(
        JOBS,
        job("j3").spec(parallelism=-1, completions=-2, backoffLimit=-3).obj(),
        f'Job.batch "j3" is invalid: [spec.parallelism: Invalid value: -1: {MUST_BE_NONNEGATIVE}, '
        f"spec.completions: Invalid value: -2: {MUST_BE_NONNEGATIVE}, "
        f"spec.backoffLimit: Invalid value: -3: {MUST_BE_NONNEGATIVE}]",
        id="job-counts-nonnegative",
    ),
    pytest.param(
        JOBS,
        job("j4").spec(activeDeadlineSeconds=-5).obj(),
        f'Job.batch "j4" is invalid: spec.activeDeadlineSeconds: Invalid value: -5: '
        f"{MUST_BE_NONNEGATIVE}",
        id="job-deadline-nonnegative",
    ),
    pytest.param(
        JOBS,
        job("j5").spec(completionMode="Sometimes").obj(),
        'Job.batch "j5" is invalid: spec.completionMode: Unsupported value: "Sometimes": '
        'supported values: "NonIndexed", "Indexed"',
        id="job-completion-mode-values",
    ),
    pytest.param(
        JOBS,
        job("j6").spec(backoffLimitPerIndex=1).obj(),
        'Job.batch "j6" is invalid: spec.backoffLimitPerIndex: Invalid value: 1: requires '
        "indexed completion mode",
        id="job-backoff-per-index-needs-indexed",
    ),
    pytest.param(
        JOBS,
        job("j7").spec(manualSelector=True, selector={"matchLabels": {"app": "x"}}).obj(),
        'Job.batch "j7" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"j7"}: `selector` does not match template `labels`',
        id="job-manual-selector-must-match",
    ),
    pytest.param(
        JOBS,
        _long_indexed_job(),
        f'Job.batch "{"x" * 62}" is invalid: metadata.name: Invalid value: "{"x" * 62}": will '
        f"not able to create pod with invalid DNS label: {'x' * 62}-9",
        id="job-indexed-hostname-too-long",
    ),
    pytest.param(
        JOBS,
        job("pf1")
        .spec(
            podFailurePolicy={
                "rules": [{"action": "Retry", "onExitCodes": {"operator": "In", "values": [1]}}]
            }
        )
        .obj(),
        'Job.batch "pf1" is invalid: spec.podFailurePolicy.rules[0].action: Unsupported value: '
        '"Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
        id="pod-failure-policy-action",
    ),
    pytest.param(
        JOBS,
        job("pf2").spec(podFailurePolicy={"rules": [{"action": "FailJob"}]}).obj(),
        'Job.batch "pf2" is invalid: spec.podFailurePolicy.rules[0]: Invalid value: specifying '
        "one of OnExitCodes and OnPodConditions is required",
        id="pod-failure-policy-rule-needs-a-matcher",
    ),
    pytest.param(
        JOBS,
        job("pf3")
        .spec(
            podFailurePolicy={
                "rules": [
                    {
                        "action": "Ignore",
                        "onExitCodes": {
                            "containerName": "x",
                            "operator": "In",
                            "values": [3, 0, 3],
                        },
                    }
                ]
            }
        )
        .obj(),
        'Job.batch "pf3" is invalid: [spec.podFailurePolicy.rules[0].onExitCodes.containerName: '
        'Invalid value: "x": must be one of the container or initContainer names in the pod '
        "template, spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must "
        "not be 0 for the In operator, spec.podFailurePolicy.rules[0].onExitCodes.values[2]: "
        "Duplicate value: 3, spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: "
        "[3,0,3]: must be ordered]",
        id="pod-failure-policy-exit-codes",
    ),
    pytest.param(
        JOBS,
        job("pf4")
        .restart_policy("OnFailure")
        .spec(
            podFailurePolicy={
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            }
        )
        .obj(),
        'Job.batch "pf4" is invalid: spec.template.spec.restartPolicy: Invalid value: '
        '"OnFailure": only "Never" is supported when podFailurePolicy is specified',
        id="pod-failure-policy-needs-restart-never",
    ),
    pytest.param(
        JOBS,
        job("sp1").spec(successPolicy={"rules": [{"succeededCount": 1}]}).obj(),
        'Job.batch "sp1" is invalid: spec.successPolicy: Invalid value: '
        '{"rules":[{"succeededCount":1}]}: requires indexed completion mode',
        id="success-policy-needs-indexed",
    ),
    pytest.param(
        JOBS,
        job("sp2")
        .spec(
            completionMode="Indexed",
            completions=5,
            successPolicy={"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 4}, {}]},
        )
        .obj(),
        'Job.batch "sp2" is invalid: [spec.successPolicy.rules[0].succeededCount: Invalid '
        "value: 4: must be less than or equal to 3 (the number of indexes in the specified "
        "succeededIndexes field), spec.successPolicy.rules[1]: Required value: at least one of "
        "succeededCount or succeededIndexes must be specified]",
        id="success-policy-rules",
    ),
    pytest.param(
        JOBS,
        job("sp3")
        .spec(
            completionMode="Indexed",
            completions=5,
            successPolicy={"rules": [{"succeededIndexes": "3,1"}]},
        )
        .obj(),
        'Job.batch "sp3" is invalid: spec.successPolicy.rules[0].succeededIndexes: Invalid '
        'value: "3,1": error parsing succeededIndexes: non-increasing order, previous: 3, '
        "current: 1",
        id="success-policy-indexes",
    ),
    pytest.param(
        SECRETS,
        {"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {}},
        'Secret "tls" is invalid: [data[tls.crt]: Required value, data[tls.key]: Required value]',
        id="secret-tls-needs-its-keys",
    ),
    pytest.param(
        SECRETS,
        {"metadata": {"name": "keys"}, "data": {"a b": "eA=="}},
        'Secret "keys" is invalid: data[a b]: Invalid value: "a b": a valid config key must '
        "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
        "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        id="secret-keys-like-configmap-keys",
    ),
]


@pytest.mark.parametrize(("path", "body", "message"), CREATE_CASES)
def test_invalid_on_create(apiserver, path, body, message):
    code, status = call(apiserver, "POST", path, body)
    assert (code, status["reason"]) == (422, "Invalid"), status
    assert status["message"] == message
    name = body["metadata"]["name"]
    assert call(apiserver, "GET", f"{path}/{name}")[0] == 404


def test_secret_data_must_be_base64(apiserver):
    body = {"metadata": {"name": "b64"}, "data": {"a": "not base64!"}}
    code, status = call(apiserver, "POST", SECRETS, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "illegal base64 data at input byte 3" in status["message"]


UPDATE_CASES = [
    pytest.param(
        DEPLOYMENTS,
        deployment("u-d1").obj(),
        {
            "spec": {
                "selector": {"matchLabels": {"app": "new"}},
                "template": {"metadata": {"labels": {"app": "new"}}},
            }
        },
        'Deployment.apps "u-d1" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"new"}}: field is immutable',
        id="deployment-selector-immutable",
    ),
    pytest.param(
        "/apis/apps/v1/namespaces/default/statefulsets",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "u-sts"},
            "spec": {
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": {
                    "metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "db"}]},
                },
            },
        },
        {"spec": {"serviceName": "other", "replicas": 3}},
        'StatefulSet.apps "u-sts" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
        "are forbidden",
        id="statefulset-service-name-immutable",
    ),
    pytest.param(
        JOBS,
        job("u-j1").obj(),
        {"spec": {"completions": 3}},
        'Job.batch "u-j1" is invalid: spec.completions: Invalid value: 3: field is immutable',
        id="job-completions-immutable-when-not-indexed",
    ),
    pytest.param(
        JOBS,
        job("u-j2").spec(completionMode="Indexed", completions=2, parallelism=2).obj(),
        {"spec": {"completions": 4}},
        'Job.batch "u-j2" is invalid: spec.completions: Invalid value: 4: can only be modified '
        "in tandem with spec.parallelism",
        id="job-indexed-completions-move-with-parallelism",
    ),
    pytest.param(
        SECRETS,
        {"metadata": {"name": "u-s1"}, "immutable": True, "data": {"a": "eA=="}},
        {"data": {"a": "eQ=="}},
        'Secret "u-s1" is invalid: data: Forbidden: field is immutable when `immutable` is set',
        id="secret-immutable-data",
    ),
    pytest.param(
        SECRETS,
        {"metadata": {"name": "u-s2"}, "data": {"a": "eA=="}},
        {"type": "kubernetes.io/basic-auth"},
        # ValidateSecretUpdate validates the new secret too.
        'Secret "u-s2" is invalid: [type: Invalid value: "kubernetes.io/basic-auth": field is '
        "immutable, data[username]: Required value, data[password]: Required value]",
        id="secret-type-immutable",
    ),
]


@pytest.mark.parametrize(("path", "body", "patch", "message"), UPDATE_CASES)
def test_invalid_on_update(apiserver, path, body, patch, message):
    code, created = call(apiserver, "POST", path, body)
    assert code == 201, created
    name = body["metadata"]["name"]
    code, status = call(apiserver, "PATCH", f"{path}/{name}", patch, MERGE)
    assert (code, status["reason"]) == (422, "Invalid"), status
    assert status["message"] == message
    _, got = call(apiserver, "GET", f"{path}/{name}")
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_indexed_job_scales_completions_with_parallelism(apiserver):
    body = job("elastic").spec(completionMode="Indexed", completions=2, parallelism=2).obj()
    assert call(apiserver, "POST", JOBS, body)[0] == 201
    code, got = call(
        apiserver, "PATCH", f"{JOBS}/elastic", {"spec": {"completions": 4, "parallelism": 4}}, MERGE
    )
    assert code == 200, got
    assert (got["spec"]["completions"], got["metadata"]["generation"]) == (4, 2)


def test_a_job_template_label_set_by_hand_must_be_the_generated_one(apiserver):
    body = job("handmade").obj()
    body["spec"]["template"]["metadata"]["labels"]["controller-uid"] = "mine"
    code, status = call(apiserver, "POST", JOBS, body)
    assert code == 422
    [cause] = status["details"]["causes"]
    assert cause["field"] == "spec.template.metadata.labels[controller-uid]"
    assert cause["message"].startswith('Invalid value: "mine": must be \'')


def test_a_secret_with_data_key_in_base64_round_trips(apiserver):
    raw = base64.b64encode(b"\x00\xffbinary").decode()
    body = {"metadata": {"name": "bin"}, "data": {"blob": raw}}
    code, created = call(apiserver, "POST", SECRETS, body)
    assert (code, created["data"]) == (201, {"blob": raw})


@pytest.mark.parametrize(
    ("status", "message"),
    [
        pytest.param(
            {"replicas": 1, "readyReplicas": 2},
            'Deployment.apps "st" is invalid: status.readyReplicas: Invalid value: 2: cannot be '
            "greater than status.replicas",
            id="ready-above-replicas",
        ),
        pytest.param(
            {"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
            'Deployment.apps "st" is invalid: status.availableReplicas: Invalid value: 2: cannot '
            "be greater than readyReplicas",
            id="available-above-ready",
        ),
        pytest.param(
            {"replicas": 2, "collisionCount": -1},
            f'Deployment.apps "st" is invalid: status.collisionCount: Invalid value: -1: '
            f"{MUST_BE_NONNEGATIVE}",
            id="negative-count",
        ),
    ],
)
def test_deployment_status_writes_are_validated(apiserver, status, message):
    call(apiserver, "POST", DEPLOYMENTS, deployment("st").obj())
    code, body = call(apiserver, "PATCH", f"{DEPLOYMENTS}/st/status", {"status": status}, MERGE)
    assert (code, body["message"]) == (422, message)


def test_a_suspended_job_that_never_started_may_change_where_it_runs(apiserver):
    assert call(apiserver, "POST", JOBS, job("queued").spec(suspend=True).obj())[0] == 201
    directives = {
        "spec": {
            "template": {
                "metadata": {"annotations": {"queue": "a"}},
                "spec": {
                    "nodeSelector": {"pool": "gpu"},
                    "tolerations": [{"key": "gpu", "operator": "Exists"}],
                },
            }
        }
    }
    code, got = call(apiserver, "PATCH", f"{JOBS}/queued", directives, MERGE)
    assert code == 200, got
    assert got["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "gpu"}
    # Anything else in the template stays immutable.
    image = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "other"}]}}}}
    code, refused = call(apiserver, "PATCH", f"{JOBS}/queued", image, MERGE)
    assert code == 422
    assert [c["field"] for c in refused["details"]["causes"]] == ["spec.template"]
    # Once started, the directives are frozen too.
    started = {"status": {"startTime": "2026-01-01T00:00:00Z"}}
    assert call(apiserver, "PATCH", f"{JOBS}/queued/status", started, MERGE)[0] == 200
    moved = {"spec": {"template": {"spec": {"nodeSelector": {"pool": "cpu"}}}}}
    assert call(apiserver, "PATCH", f"{JOBS}/queued", moved, MERGE)[0] == 422


def test_job_status_counts_are_not_negative(apiserver):
    assert call(apiserver, "POST", JOBS, job("counted").obj())[0] == 201
    code, body = call(
        apiserver, "PATCH", f"{JOBS}/counted/status", {"status": {"failed": -1}}, MERGE
    )
    assert (code, body["message"]) == (
        422,
        f'Job.batch "counted" is invalid: status.failed: Invalid value: -1: {MUST_BE_NONNEGATIVE}',
    )


def test_a_statefulset_may_change_replicas_and_template(apiserver):
    path = "/apis/apps/v1/namespaces/default/statefulsets"
    body = {
        "metadata": {"name": "ok-sts"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "db:1"}]},
            },
        },
    }
    assert call(apiserver, "POST", path, body)[0] == 201
    change = {
        "spec": {
            "replicas": 2,
            "template": {"spec": {"containers": [{"name": "c", "image": "db:2"}]}},
            "updateStrategy": {"type": "OnDelete", "rollingUpdate": None},
        }
    }
    code, got = call(apiserver, "PATCH", f"{path}/ok-sts", change, MERGE)
    assert code == 200, got
    assert got["spec"]["replicas"] == 2
