"""Server-side validation, spoken over HTTP: kube-apiserver's 422 Invalid bodies (message,
causes) for bad names, labels, quantities, pod specs, selectors and priority classes, the
pod update rules of ``ValidatePodUpdate``, and nothing stored or changed on a refusal."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess

import pytest
from apiserver_builders import LABEL, QNAME, SUBDOMAIN, PodBuilder, call

PODS = "/api/v1/namespaces/default/pods"
UPDATABLE = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def pod(name="p", **spec):
    obj = PodBuilder(name).obj()
    obj["spec"].update(spec)
    return obj


def container(name="c", image="pause", **fields):
    return {"name": name, "image": image, **fields}


def cause(reason, field, message):
    return {"reason": reason, "message": message, "field": field}


CREATE = [
    pytest.param(
        PODS,
        pod("Web_1"),
        'Pod "Web_1" is invalid: metadata.name: Invalid value: "Web_1": ' + SUBDOMAIN,
        [cause("FieldValueInvalid", "metadata.name", 'Invalid value: "Web_1": ' + SUBDOMAIN)],
        id="pod-name",
    ),
    pytest.param(
        PODS,
        PodBuilder().generate_name("Web-").obj(),
        'Pod "" is invalid: metadata.generateName: Invalid value: "Web-": ' + SUBDOMAIN,
        [
            cause(
                "FieldValueInvalid", "metadata.generateName", 'Invalid value: "Web-": ' + SUBDOMAIN
            )
        ],
        id="generate-name",
    ),
    pytest.param(
        PODS,
        pod(containers=[]),
        'Pod "p" is invalid: spec.containers: Required value',
        [cause("FieldValueRequired", "spec.containers", "Required value")],
        id="no-containers",
    ),
    pytest.param(
        PODS,
        pod(containers=[container(), container(image="")]),
        'Pod "p" is invalid: [spec.containers[1].image: Required value, '
        'spec.containers[1].name: Duplicate value: "c"]',
        [
            cause("FieldValueRequired", "spec.containers[1].image", "Required value"),
            cause("FieldValueDuplicate", "spec.containers[1].name", 'Duplicate value: "c"'),
        ],
        id="duplicate-container-and-no-image",
    ),
    pytest.param(
        PODS,
        pod(containers=[container("Web")]),
        'Pod "p" is invalid: spec.containers[0].name: Invalid value: "Web": ' + LABEL,
        [cause("FieldValueInvalid", "spec.containers[0].name", 'Invalid value: "Web": ' + LABEL)],
        id="container-name",
    ),
    pytest.param(
        PODS,
        pod(containers=[container()], initContainers=[container()]),
        'Pod "p" is invalid: spec.initContainers[0].name: Duplicate value: "c"',
        [cause("FieldValueDuplicate", "spec.initContainers[0].name", 'Duplicate value: "c"')],
        id="init-container-same-name",
    ),
    pytest.param(
        PODS,
        {**pod(), "metadata": {"name": "p", "labels": {"-bad": "ok"}}},
        'Pod "p" is invalid: metadata.labels: Invalid value: "-bad": ' + QNAME,
        [cause("FieldValueInvalid", "metadata.labels", 'Invalid value: "-bad": ' + QNAME)],
        id="label-key",
    ),
    pytest.param(
        PODS,
        {**pod(), "metadata": {"name": "p", "labels": {"app": "x" * 64}}},
        f'Pod "p" is invalid: metadata.labels: Invalid value: "{"x" * 64}": must be no more '
        "than 63 characters",
        [
            cause(
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "{"x" * 64}": must be no more than 63 characters',
            )
        ],
        id="label-value-length",
    ),
    pytest.param(
        PODS,
        {**pod(), "metadata": {"name": "p", "annotations": {"a": "x" * 262144}}},
        'Pod "p" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes',
        [
            cause(
                "FieldValueTooLong",
                "metadata.annotations",
                "Too long: may not be more than 262144 bytes",
            )
        ],
        id="annotations-size",
    ),
    pytest.param(
        PODS,
        pod(containers=[container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]),
        'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be '
        "less than or equal to cpu limit of 1",
        [
            cause(
                "FieldValueInvalid",
                "spec.containers[0].resources.requests",
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
        id="requests-above-limits",
    ),
    pytest.param(
        PODS,
        pod(containers=[container(resources={"requests": {"memory": "-1Gi"}})]),
        'Pod "p" is invalid: spec.containers[0].resources.requests[memory]: Invalid value: '
        '"-1Gi": must be greater than or equal to 0',
        [
            cause(
                "FieldValueInvalid",
                "spec.containers[0].resources.requests[memory]",
                'Invalid value: "-1Gi": must be greater than or equal to 0',
            )
        ],
        id="negative-request",
    ),
    pytest.param(
        PODS,
        pod(containers=[container(resources={"requests": {"example.com/gpu": "1"}})]),
        'Pod "p" is invalid: spec.containers[0].resources.limits: Required value: Limit must be '
        "set for non overcommitable resources",
        [
            cause(
                "FieldValueRequired",
                "spec.containers[0].resources.limits",
                "Required value: Limit must be set for non overcommitable resources",
            )
        ],
        id="extended-resource-without-limit",
    ),
    pytest.param(
        PODS,
        pod(overhead={"cpu": "-250m"}),
        'Pod "p" is invalid: spec.overhead[cpu]: Invalid value: "-250m": must be greater than '
        "or equal to 0",
        [
            cause(
                "FieldValueInvalid",
                "spec.overhead[cpu]",
                'Invalid value: "-250m": must be greater than or equal to 0',
            )
        ],
        id="negative-overhead",
    ),
    pytest.param(
        PODS,
        pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}]),
        'Pod "p" is invalid: spec.tolerations[0].effect: Unsupported value: "Sometimes": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        [
            cause(
                "FieldValueNotSupported",
                "spec.tolerations[0].effect",
                'Unsupported value: "Sometimes": supported values: "NoSchedule", '
                '"PreferNoSchedule", "NoExecute"',
            )
        ],
        id="toleration-effect",
    ),
    pytest.param(
        "/api/v1/namespaces",
        {"metadata": {"name": "a.b"}},
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": ' + LABEL,
        [cause("FieldValueInvalid", "metadata.name", 'Invalid value: "a.b": ' + LABEL)],
        id="namespace-name-is-a-label",
    ),
    pytest.param(
        "/api/v1/namespaces/default/services",
        {"metadata": {"name": "1web"}, "spec": {"ports": [{"port": 80}]}},
        'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label must '
        "consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        None,
        id="service-name-is-a-dns1035-label",
    ),
    pytest.param(
        "/api/v1/nodes",
        {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "-1"}}},
        'Node "n1" is invalid: [status.capacity.cpu: Invalid value: "-1": must be greater than '
        'or equal to 0, status.allocatable.cpu: Invalid value: "-1": must be greater than or '
        "equal to 0]",
        None,
        id="node-capacity",
    ),
    pytest.param(
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {
            "metadata": {"name": "b"},
            "spec": {
                "minAvailable": 1,
                "selector": {"matchExpressions": [{"key": "app", "operator": "Is"}]},
            },
        },
        'PodDisruptionBudget.policy "b" is invalid: spec.selector.matchExpressions[0].operator: '
        'Invalid value: "Is": not a valid selector operator',
        [
            cause(
                "FieldValueInvalid",
                "spec.selector.matchExpressions[0].operator",
                'Invalid value: "Is": not a valid selector operator',
            )
        ],
        id="pdb-selector",
    ),
    pytest.param(
        "/apis/apps/v1/namespaces/default/replicasets",
        {
            "metadata": {"name": "rs"},
            "spec": {
                "selector": {"matchLabels": {"app": "a"}},
                "template": {
                    "metadata": {"labels": {"app": "b"}},
                    "spec": {"containers": [container()]},
                },
            },
        },
        'ReplicaSet.apps "rs" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"b"}: `selector` does not match template `labels`',
        None,
        id="replicaset-template-labels",
    ),
    pytest.param(
        "/apis/apps/v1/namespaces/default/statefulsets",
        {
            "metadata": {"name": "ss"},
            "spec": {
                "selector": {"matchLabels": {"app": "a"}},
                "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}},
            },
        },
        'StatefulSet.apps "ss" is invalid: spec.template.spec.containers: Required value',
        None,
        id="statefulset-template-spec",
    ),
    pytest.param(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"metadata": {"name": "pc"}, "value": 10, "preemptionPolicy": "Sometimes"},
        'PriorityClass.scheduling.k8s.io "pc" is invalid: preemptionPolicy: Unsupported value: '
        '"Sometimes": supported values: "Never", "PreemptLowerPriority"',
        None,
        id="priorityclass-policy",
    ),
]


@pytest.mark.parametrize(("path", "body", "message", "causes"), CREATE)
def test_invalid_create_is_422_and_nothing_is_stored(apiserver, path, body, message, causes):
    code, status = call(apiserver, "POST", path, body)
    assert (code, status["reason"], status["code"]) == (422, "Invalid", 422)
    assert status["message"] == message
    if causes is not None:
        assert status["details"]["causes"] == causes
    name = body["metadata"].get("name")
    assert status["details"].get("name", "") == (name or "")
    if name:
        assert call(apiserver, "GET", f"{path}/{name}")[0] == 404


def test_unparseable_quantity_is_a_decode_error(apiserver):
    body = pod(containers=[container(resources={"requests": {"cpu": "lots"}})])
    code, status = call(apiserver, "POST", PODS, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_valid_objects_are_accepted(apiserver):
    gpu = {"example.com/gpu": "2"}
    body = pod(
        "ok",
        containers=[container(resources={"requests": gpu, "limits": gpu})],
        initContainers=[container("init")],
        tolerations=[{"operator": "Exists"}],
    )
    body["metadata"]["labels"] = {"example.com/app": "My_Value-1", "empty": ""}
    assert call(apiserver, "POST", PODS, body)[0] == 201
    assert call(apiserver, "POST", PODS, PodBuilder().generate_name("web-").obj())[0] == 201


# -- updates ------------------------------------------------------------------------------

GATED = {"schedulingGates": [{"name": "example.com/a"}], "nodeSelector": {"zone": "a"}}
UPDATES = [
    pytest.param({}, {"spec": {"nodeName": "n1"}}, None, id="node-name-only-by-binding"),
    pytest.param(
        {},
        {"spec": {"containers": [container(), container("d")]}},
        'Pod "u" is invalid: spec.containers: Forbidden: pod updates may not add or remove '
        "containers",
        id="add-container",
    ),
    pytest.param(
        {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]},
        {"spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]}},
        'Pod "u" is invalid: spec.tolerations: Forbidden: existing toleration can not be '
        "modified except its tolerationSeconds",
        id="change-toleration",
    ),
    pytest.param(
        GATED,
        {"spec": {"schedulingGates": [{"name": "example.com/a"}, {"name": "example.com/b"}]}},
        'Pod "u" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, '
        "but found new scheduling gate 'example.com/b'",
        id="add-scheduling-gate",
    ),
    pytest.param(
        GATED,
        {"spec": {"nodeSelector": {"zone": "b"}}},
        'Pod "u" is invalid: spec.nodeSelector: Invalid value: map[string]string{"zone":"b"}: '
        "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
        id="gated-node-selector-mutation",
    ),
    pytest.param(
        {"nodeSelector": {"zone": "a"}},
        {"spec": {"nodeSelector": {"zone": "a", "disk": "ssd"}}},
        None,
        id="ungated-node-selector-addition",
    ),
    pytest.param(
        {"activeDeadlineSeconds": 10},
        {"spec": {"activeDeadlineSeconds": 20}},
        'Pod "u" is invalid: spec.activeDeadlineSeconds: Invalid value: 20: must be less than or '
        "equal to previous value",
        id="deadline-raised",
    ),
    pytest.param(
        {},
        {"metadata": {"labels": {"a": "-"}}},
        'Pod "u" is invalid: metadata.labels: Invalid value: "-": a valid label must be an empty '
        "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        id="bad-label-on-update",
    ),
]


@pytest.mark.parametrize(("spec", "patch", "message"), UPDATES)
@pytest.mark.parametrize("verb", ["patch", "put"])
def test_refused_pod_updates_change_nothing(apiserver, spec, patch, message, verb):
    call(apiserver, "DELETE", f"{PODS}/u?gracePeriodSeconds=0")
    assert call(apiserver, "POST", PODS, pod("u", **copy.deepcopy(spec)))[0] == 201
    before = call(apiserver, "GET", f"{PODS}/u")[1]
    if verb == "patch":
        code, status = call(apiserver, "PATCH", f"{PODS}/u", patch, "application/merge-patch+json")
    else:
        body = copy.deepcopy(before)
        body["spec"].update(patch.get("spec", {}))
        body["metadata"].update(patch.get("metadata", {}))
        code, status = call(apiserver, "PUT", f"{PODS}/u", body)
    assert code == 422
    assert status["reason"] == "Invalid"
    if message is None:
        assert status["message"].startswith('Pod "u" is invalid: spec: Forbidden: ' + UPDATABLE)
        assert status["details"]["causes"][0]["field"] == "spec"
    else:
        assert status["message"] == message
    assert call(apiserver, "GET", f"{PODS}/u")[1] == before


ALLOWED = [
    pytest.param({}, {"spec": {"containers": [container(image="nginx:2")]}}, id="image"),
    pytest.param(
        {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]},
        {
            "spec": {
                "tolerations": [
                    {
                        "key": "k",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 5,
                    },
                    {"key": "j", "operator": "Exists"},
                ]
            }
        },
        id="toleration-added-and-seconds-changed",
    ),
    pytest.param(
        {"activeDeadlineSeconds": 20}, {"spec": {"activeDeadlineSeconds": 10}}, id="deadline"
    ),
    pytest.param(GATED, {"spec": {"schedulingGates": None}}, id="gate-removed"),
    pytest.param(
        GATED,
        {
            "spec": {
                "nodeSelector": {"zone": "a", "disk": "ssd"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "k", "operator": "Exists"}]}
                            ]
                        }
                    }
                },
            }
        },
        id="gated-pod-gains-node-constraints",
    ),
]


@pytest.mark.parametrize(("spec", "patch"), ALLOWED)
def test_allowed_pod_updates(apiserver, spec, patch):
    call(apiserver, "DELETE", f"{PODS}/a?gracePeriodSeconds=0")
    assert call(apiserver, "POST", PODS, pod("a", **copy.deepcopy(spec)))[0] == 201
    code, body = call(apiserver, "PATCH", f"{PODS}/a", patch, "application/merge-patch+json")
    assert code == 200, body
    for key, value in patch["spec"].items():
        assert body["spec"].get(key) == value


def test_binding_still_sets_node_name(apiserver):
    call(apiserver, "DELETE", f"{PODS}/b?gracePeriodSeconds=0")
    assert call(apiserver, "POST", PODS, pod("b"))[0] == 201
    binding = {"metadata": {"name": "b"}, "target": {"kind": "Node", "name": "n1"}}
    assert call(apiserver, "POST", f"{PODS}/b/binding", binding)[0] == 201
    assert call(apiserver, "GET", f"{PODS}/b")[1]["spec"]["nodeName"] == "n1"


def test_priority_class_value_is_immutable(apiserver):
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    assert call(apiserver, "POST", path, {"metadata": {"name": "imm"}, "value": 5})[0] == 201
    code, status = call(
        apiserver, "PATCH", f"{path}/imm", {"value": 6}, "application/merge-patch+json"
    )
    assert code == 422
    assert status["message"] == (
        'PriorityClass.scheduling.k8s.io "imm" is invalid: value: Forbidden: may not be changed '
        "in an update."
    )
    assert status["details"]["group"] == "scheduling.k8s.io"
    assert call(apiserver, "GET", f"{path}/imm")[1]["value"] == 5


def test_official_client_sees_the_causes(apiserver):
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = client.CoreV1Api(config.new_client_from_config(str(apiserver.kubeconfig_path)))
    with pytest.raises(ApiException) as caught:
        api.create_namespaced_pod("default", pod("Bad_Name"))
    assert caught.value.status == 422
    status = json.loads(caught.value.body)
    assert status["details"]["causes"][0]["field"] == "metadata.name"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_shows_the_invalid_message(apiserver):
    manifest = json.dumps(pod("Bad_Name", containers=[container(image="")]))
    result = subprocess.run(
        ["kubectl", "--kubeconfig", str(apiserver.kubeconfig_path), "create", "-f", "-"],
        input=manifest,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode != 0
    assert result.stderr.strip() == (
        'The Pod "Bad_Name" is invalid: \n* metadata.name: Invalid value: "Bad_Name": '
        + SUBDOMAIN
        + "\n* spec.containers[0].image: Required value"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            pod(containers=1),
            "json: cannot unmarshal number into Go struct field PodSpec.spec.containers of "
            "type []v1.Container",
            id="containers-not-a-list",
        ),
        pytest.param(
            pod(containers=[container(image=["x"])]),
            "json: cannot unmarshal array into Go struct field Container.spec.containers.image "
            "of type string",
            id="image-not-a-string",
        ),
        pytest.param(
            {**pod(), "metadata": {"name": "p", "labels": {"a": 1}}},
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
            "type string",
            id="label-value-not-a-string",
        ),
    ],
)
def test_wrong_json_types_are_decode_errors(apiserver, body, message):
    code, status = call(apiserver, "POST", PODS, body)
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == f'Pod in version "v1" cannot be handled as a Pod: {message}'
