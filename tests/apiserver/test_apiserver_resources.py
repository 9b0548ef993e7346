"""The second slice's resources: priorityclasses, poddisruptionbudgets (+status),
configmaps, services, replicationcontrollers, replicasets, statefulsets — stored, listed,
watched and discovered with the same machinery as pods; the system priority classes."""

from __future__ import annotations

import pytest
from apiserver_builders import call
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.apiserver.resources import PODDISRUPTIONBUDGETS, PRIORITYCLASSES
from kubesched.apiserver.runner import new_store


@pytest.fixture(scope="module")
def api(apiserver):
    api_client = config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    yield api_client
    api_client.close()


@pytest.mark.parametrize(
    ("group_version", "names"),
    [
        pytest.param(
            "/api/v1",
            {"configmaps", "services", "services/status", "replicationcontrollers"},
            id="core",
        ),
        pytest.param(
            "/apis/apps/v1",
            {"replicasets", "replicasets/status", "statefulsets", "statefulsets/status"},
            id="apps",
        ),
        pytest.param(
            "/apis/policy/v1",
            {"poddisruptionbudgets", "poddisruptionbudgets/status"},
            id="policy",
        ),
        pytest.param("/apis/scheduling.k8s.io/v1", {"priorityclasses"}, id="scheduling"),
        pytest.param("/apis/events.k8s.io/v1", {"events"}, id="events"),
    ],
)
def test_discovery_lists_the_new_resources(apiserver, group_version, names):
    code, body = call(apiserver, "GET", group_version)
    assert code == 200
    assert names <= {r["name"] for r in body["resources"]}
    code, groups = call(apiserver, "GET", "/apis")
    served = {g["name"] for g in groups["groups"]}
    assert {"apps", "policy", "scheduling.k8s.io", "events.k8s.io"} <= served


def test_system_priority_classes_exist_from_the_start():
    store = new_store()
    values = {pc["metadata"]["name"]: pc["value"] for pc in store.list(PRIORITYCLASSES).items}
    assert values == {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


@pytest.mark.parametrize("name", ["system-cluster-critical", "system-node-critical"])
def test_system_priority_classes_cannot_be_deleted(apiserver, name):
    code, body = call(apiserver, "DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
    assert code == 403
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system '
        "priority class and cannot be deleted",
        "reason": "Forbidden",
        "details": {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"},
        "code": 403,
    }
    assert call(apiserver, "GET", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")[0] == 200


def test_priority_classes_through_the_client(api):
    scheduling = client.SchedulingV1Api(api)
    created = scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name="high"), value=1000)
    )
    assert created.preemption_policy == "PreemptLowerPriority"
    names = {pc.metadata.name for pc in scheduling.list_priority_class().items}
    assert {"high", "system-cluster-critical", "system-node-critical"} <= names
    scheduling.delete_priority_class("high")
    with pytest.raises(ApiException) as caught:
        scheduling.read_priority_class("high")
    assert caught.value.status == 404


def test_user_priority_class_above_the_ceiling_is_invalid(apiserver):
    body = {"metadata": {"name": "too-high"}, "value": 1000000001}
    code, status = call(apiserver, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body)
    assert code == 422
    assert status["message"] == (
        'PriorityClass.scheduling.k8s.io "too-high" is invalid: value: Forbidden: maximum '
        "allowed value of a user defined priority is 1000000000"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: maximum allowed value of a user defined priority is 1000000000",
            "field": "value",
        }
    ]


def test_only_one_global_default_priority_class(apiserver):
    path = "/apis/scheduling.k8s.io/v1/priorityclasses"
    first = {"metadata": {"name": "default-a"}, "value": 5, "globalDefault": True}
    assert call(apiserver, "POST", path, first)[0] == 201
    second = {"metadata": {"name": "default-b"}, "value": 6, "globalDefault": True}
    code, status = call(apiserver, "POST", path, second)
    assert code == 403
    assert status["message"] == (
        'priorityclasses.scheduling.k8s.io "default-b" is forbidden: PriorityClass default-a '
        "is already marked as default. Only one default can exist"
    )
    # The default itself may be updated.
    patched = call(
        apiserver,
        "PATCH",
        f"{path}/default-a",
        {"description": "d"},
        "application/merge-patch+json",
    )
    assert patched[0] == 200
    assert call(apiserver, "DELETE", f"{path}/default-a")[0] == 200


def _pdb(name):
    return client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=1, selector=client.V1LabelSelector(match_labels={"app": "web"})
        ),
    )


def test_pod_disruption_budgets_and_their_status(api):
    policy = client.PolicyV1Api(api)
    created = policy.create_namespaced_pod_disruption_budget("default", _pdb("web"))
    assert created.spec.min_available == 1
    status = client.V1PodDisruptionBudgetStatus(
        current_healthy=2,
        desired_healthy=1,
        disruptions_allowed=1,
        expected_pods=2,
        observed_generation=1,
    )
    created.status = status
    updated = policy.replace_namespaced_pod_disruption_budget_status("web", "default", created)
    assert updated.status.disruptions_allowed == 1
    # A main-resource update keeps the stored status.
    updated.status = None
    updated.spec.min_available = 2
    again = policy.replace_namespaced_pod_disruption_budget("web", "default", updated)
    assert again.status.disruptions_allowed == 1
    assert again.metadata.generation == 2
    listed = policy.list_pod_disruption_budget_for_all_namespaces().items
    assert [p.metadata.name for p in listed] == ["web"]
    policy.delete_namespaced_pod_disruption_budget("web", "default")


def test_pdb_not_found_status_names_the_group(apiserver):
    code, body = call(
        apiserver, "GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/nope"
    )
    assert code == 404
    assert body["message"] == 'poddisruptionbudgets.policy "nope" not found'
    assert body["details"] == {"name": "nope", "group": "policy", "kind": "poddisruptionbudgets"}
    assert PODDISRUPTIONBUDGETS.short_names == ("pdb",)


def test_core_workload_resources_through_the_client(api):
    core = client.CoreV1Api(api)
    cm = core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cfg"), data={"k": "v"})
    )
    assert cm.data == {"k": "v"}
    svc = core.create_namespaced_service(
        "default",
        client.V1Service(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1ServiceSpec(
                selector={"app": "web"}, ports=[client.V1ServicePort(port=80)]
            ),
        ),
    )
    assert svc.spec.ports[0].port == 80
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "web"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="pause")]),
    )
    rc = core.create_namespaced_replication_controller(
        "default",
        client.V1ReplicationController(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1ReplicationControllerSpec(
                replicas=2, selector={"app": "web"}, template=template
            ),
        ),
    )
    assert rc.spec.replicas == 2
    assert [c.metadata.name for c in core.list_namespaced_config_map("default").items] == ["cfg"]
    core.delete_namespaced_config_map("cfg", "default")
    core.delete_namespaced_service("web", "default")
    core.delete_namespaced_replication_controller("web", "default")
    assert core.list_namespaced_service("default").items == []


def test_apps_resources_through_the_client(api):
    apps = client.AppsV1Api(api)
    selector = client.V1LabelSelector(match_labels={"app": "db"})
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "db"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="pause")]),
    )
    rs = apps.create_namespaced_replica_set(
        "default",
        client.V1ReplicaSet(
            metadata=client.V1ObjectMeta(name="db"),
            spec=client.V1ReplicaSetSpec(replicas=3, selector=selector, template=template),
        ),
    )
    assert rs.spec.replicas == 3
    sts = apps.create_namespaced_stateful_set(
        "default",
        client.V1StatefulSet(
            metadata=client.V1ObjectMeta(name="db"),
            spec=client.V1StatefulSetSpec(
                replicas=1, selector=selector, service_name="db", template=template
            ),
        ),
    )
    sts.status = client.V1StatefulSetStatus(replicas=1, ready_replicas=1)
    updated = apps.replace_namespaced_stateful_set_status("db", "default", sts)
    assert updated.status.ready_replicas == 1
    listed = apps.list_replica_set_for_all_namespaces(field_selector="status.replicas=0")
    # PrepareForCreate gave the new ReplicaSet its empty status: status.replicas is 0.
    assert "db" in [r.metadata.name for r in listed.items]
    apps.delete_namespaced_replica_set("db", "default")
    apps.delete_namespaced_stateful_set("db", "default")
    assert apps.list_namespaced_stateful_set("default").items == []


def test_new_resources_are_watched(apiserver):
    import json
    import urllib.request

    path = "/api/v1/namespaces/default/configmaps"
    _code, listed = call(apiserver, "GET", path)
    rv = listed["metadata"]["resourceVersion"]
    call(apiserver, "POST", path, {"metadata": {"name": "w"}, "data": {"a": "b"}})
    call(apiserver, "DELETE", f"{path}/w")
    url = f"{apiserver.url}{path}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    with urllib.request.urlopen(url, timeout=10) as response:
        events = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "w"),
        ("DELETED", "w"),
    ]
