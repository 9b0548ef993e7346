"""Pod create admission: the Priority plugin (class → spec.priority and preemptionPolicy,
the global default, 403 for unknown classes and conflicting values) and pod defaulting
(qosClass, requests from limits, terminationGracePeriodSeconds)."""

from __future__ import annotations

import pytest
from apiserver_builders import PodBuilder, call
from kubernetes import client, config
from kubernetes.client.rest import ApiException

PODS = "/api/v1/namespaces/default/pods"
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


def _pod(name, **spec):
    obj = PodBuilder(name).obj()
    obj["spec"].update(spec)
    return obj


def _forbidden(message, name):
    details = {"name": name, "kind": "pods"} if name else {"kind": "pods"}
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


@pytest.fixture(scope="module")
def classes(apiserver):
    for name, value, policy in (("gold", 1000, None), ("bronze", 10, "Never")):
        body = {"metadata": {"name": name}, "value": value}
        if policy:
            body["preemptionPolicy"] = policy
        assert call(apiserver, "POST", CLASSES, body)[0] == 201
    yield
    for name in ("gold", "bronze"):
        call(apiserver, "DELETE", f"{CLASSES}/{name}")


@pytest.mark.parametrize(
    ("class_name", "priority", "policy"),
    [
        pytest.param("gold", 1000, "PreemptLowerPriority", id="user-class"),
        pytest.param("bronze", 10, "Never", id="non-preempting"),
        pytest.param("system-node-critical", 2000001000, "PreemptLowerPriority", id="system"),
        pytest.param(None, 0, "PreemptLowerPriority", id="no-class-no-default"),
    ],
)
def test_priority_from_the_class(apiserver, classes, class_name, priority, policy):
    name = f"p-{class_name or 'none'}"
    spec = {"priorityClassName": class_name} if class_name else {}
    code, pod = call(apiserver, "POST", PODS, _pod(name, **spec))
    assert code == 201, pod
    assert pod["spec"]["priority"] == priority
    assert pod["spec"]["preemptionPolicy"] == policy
    assert pod["spec"].get("priorityClassName") == class_name
    call(apiserver, "DELETE", f"{PODS}/{name}")


def test_global_default_class_applies_when_none_is_named(apiserver, classes):
    body = {"metadata": {"name": "everyone"}, "value": 7, "globalDefault": True}
    assert call(apiserver, "POST", CLASSES, body)[0] == 201
    try:
        code, pod = call(apiserver, "POST", PODS, _pod("defaulted"))
        assert code == 201
        assert pod["spec"]["priority"] == 7
        assert pod["spec"]["priorityClassName"] == "everyone"
        call(apiserver, "DELETE", f"{PODS}/defaulted")
    finally:
        call(apiserver, "DELETE", f"{CLASSES}/everyone")


def test_unknown_class_is_forbidden(apiserver):
    code, body = call(apiserver, "POST", PODS, _pod("lost", priorityClassName="missing"))
    assert code == 403
    assert body == _forbidden(
        'pods "lost" is forbidden: no PriorityClass with name missing was found', "lost"
    )
    assert call(apiserver, "GET", f"{PODS}/lost")[0] == 404


def test_unknown_class_with_generate_name(apiserver):
    pod = PodBuilder().generate_name("gen-").obj()
    pod["spec"]["priorityClassName"] = "missing"
    code, body = call(apiserver, "POST", PODS, pod)
    assert code == 403
    assert body == _forbidden("pods is forbidden: no PriorityClass with name missing was found", "")


def test_priority_differing_from_the_class_is_forbidden(apiserver, classes):
    code, body = call(apiserver, "POST", PODS, _pod("cheat", priorityClassName="gold", priority=5))
    assert code == 403
    assert body["message"] == (
        'pods "cheat" is forbidden: the integer value of priority (5) must not be provided in '
        "pod spec; priority admission controller computed 1000 from the given PriorityClass name"
    )
    same = _pod("honest", priorityClassName="gold", priority=1000)
    assert call(apiserver, "POST", PODS, same)[0] == 201
    call(apiserver, "DELETE", f"{PODS}/honest")


def test_preemption_policy_differing_from_the_class_is_forbidden(apiserver, classes):
    pod = _pod("pushy", priorityClassName="bronze", preemptionPolicy="PreemptLowerPriority")
    code, body = call(apiserver, "POST", PODS, pod)
    assert code == 403
    assert body["message"] == (
        'pods "pushy" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) '
        "must not be provided in pod spec; priority admission controller computed Never from "
        "the given PriorityClass name"
    )


def test_priority_through_the_client(apiserver, classes):
    api = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    try:
        core = client.CoreV1Api(api)
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="cp"),
            spec=client.V1PodSpec(
                priority_class_name="gold",
                containers=[client.V1Container(name="c", image="pause")],
            ),
        )
        assert core.create_namespaced_pod("default", pod).spec.priority == 1000
        core.delete_namespaced_pod("cp", "default")
        pod.metadata.name = "cq"
        pod.spec.priority_class_name = "nope"
        with pytest.raises(ApiException) as caught:
            core.create_namespaced_pod("default", pod)
        assert caught.value.status == 403
        assert "no PriorityClass with name nope was found" in caught.value.body
    finally:
        api.close()


def _resources(requests=None, limits=None):
    res = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return res


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        pytest.param({}, "BestEffort", id="best-effort"),
        pytest.param(_resources(requests={"cpu": "100m"}), "Burstable", id="burstable"),
        pytest.param(
            _resources(limits={"cpu": "1", "memory": "1Gi"}), "Guaranteed", id="limits-only"
        ),
        pytest.param(
            _resources(requests={"cpu": "500m"}, limits={"cpu": "1", "memory": "1Gi"}),
            "Burstable",
            id="requests-below-limits",
        ),
    ],
)
def test_qos_class_and_requests_defaulted_from_limits(apiserver, resources, qos):
    pod = PodBuilder("q").obj()
    pod["spec"]["containers"][0]["resources"] = resources
    code, created = call(apiserver, "POST", PODS, pod)
    assert code == 201
    assert created["status"]["qosClass"] == qos
    stored = created["spec"]["containers"][0].get("resources", {})
    limits = resources.get("limits", {})
    expected_requests = {**limits, **resources.get("requests", {})}
    assert stored.get("requests", {}) == expected_requests
    assert created["spec"]["terminationGracePeriodSeconds"] == 30
    call(apiserver, "DELETE", f"{PODS}/q")


def test_update_without_priority_keeps_it(apiserver, classes):
    code, pod = call(apiserver, "POST", PODS, _pod("keep", priorityClassName="gold"))
    assert code == 201
    del pod["spec"]["priority"]
    del pod["spec"]["preemptionPolicy"]
    pod["metadata"]["labels"] = {"updated": "yes"}
    code, updated = call(apiserver, "PUT", f"{PODS}/keep", pod)
    assert code == 200
    assert updated["spec"]["priority"] == 1000
    assert updated["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert updated["metadata"]["labels"] == {"updated": "yes"}
    call(apiserver, "DELETE", f"{PODS}/keep")
