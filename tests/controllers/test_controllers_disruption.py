"""PodDisruptionBudget status and pods/eviction (issue 4, item 6), with the ``kubernetes``
client and raw HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from apiserver_builders import PodBuilder, call
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.apiserver.runner import start_apiserver
from kubesched.cli.cluster import ClusterHandle, start_cluster


def _wait(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("disruption") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, nodes=2, run_delay=0.05)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def api(server: ClusterHandle) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield api
    api.close()


@pytest.fixture
def ns(request: pytest.FixtureRequest, api: client.ApiClient) -> str:
    name = request.node.name.replace("_", "-")[:60].strip("-").lower()
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata={"name": name}))
    return name


def _pods(server: ClusterHandle, ns: str, count: int, app: str = "web", node: bool = True) -> None:
    for i in range(count):
        pod = PodBuilder(f"{app}-{i}", ns).label("app", app)
        if node:
            pod = pod.node(f"node-{i % 2}")
        body = pod.obj()
        body["spec"]["terminationGracePeriodSeconds"] = 30
        code, _ = call(server, "POST", f"/api/v1/namespaces/{ns}/pods", body)
        assert code == 201


def _running(server: ClusterHandle, ns: str, count: int) -> None:
    def check() -> bool:
        _, body = call(
            server, "GET", f"/api/v1/namespaces/{ns}/pods?fieldSelector=status.phase=Running"
        )
        return len(body["items"]) == count

    _wait(check)


def _pdb(ns: str, name: str = "budget", app: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": app}}, **spec},
    }


def _create_pdb(server: ClusterHandle, ns: str, **kw: Any) -> None:
    code, body = call(
        server, "POST", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", _pdb(ns, **kw)
    )
    assert code == 201, body


def _status(server: ClusterHandle, ns: str, name: str = "budget") -> dict[str, Any]:
    _, body = call(server, "GET", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}")
    status: dict[str, Any] = body.get("status") or {}
    return status


def _settled(server: ClusterHandle, ns: str, **expected: int) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        status = _status(server, ns)
        ok = all(status.get(k) == v for k, v in expected.items())
        return status if ok else None

    result: dict[str, Any] = _wait(check)
    return result


def _evict_raw(server: ClusterHandle, ns: str, pod: str, **extra: Any) -> tuple[int, Any]:
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": ns},
        **extra,
    }
    return call(server, "POST", f"/api/v1/namespaces/{ns}/pods/{pod}/eviction", body)


def test_status_min_available_int(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 3)
    _running(server, ns, 3)
    _create_pdb(server, ns, minAvailable=2)
    status = _settled(server, ns, currentHealthy=3)
    assert status["desiredHealthy"] == 2
    assert status["expectedPods"] == 3
    assert status["disruptionsAllowed"] == 1
    assert status["observedGeneration"] == 1
    cond = status["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )


def test_status_percentages_and_max_unavailable(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 4)
    _running(server, ns, 4)
    _create_pdb(server, ns, name="budget", maxUnavailable="30%")  # ceil(1.2) = 2
    status = _settled(server, ns, currentHealthy=4)
    assert (status["expectedPods"], status["desiredHealthy"], status["disruptionsAllowed"]) == (
        4,
        2,
        2,
    )
    # A spec change bumps generation; the controller follows it.
    code, _ = call(
        server,
        "PATCH",
        f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/budget",
        {"spec": {"maxUnavailable": None, "minAvailable": "60%"}},  # ceil(2.4) = 3
        content_type="application/merge-patch+json",
    )
    assert code == 200
    status = _settled(server, ns, observedGeneration=2)
    assert (status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 1)


def test_pending_pods_are_not_healthy(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 2, node=False)
    _create_pdb(server, ns, minAvailable=1)
    status = _settled(server, ns, expectedPods=2)
    assert (status["currentHealthy"], status["disruptionsAllowed"]) == (0, 0)
    assert status["conditions"][0]["reason"] == "InsufficientPods"


def test_eviction_with_the_client_spends_the_budget_then_429(
    server: ClusterHandle, api: client.ApiClient, ns: str
) -> None:
    core, policy = client.CoreV1Api(api), client.PolicyV1Api(api)
    _pods(server, ns, 3)
    _running(server, ns, 3)
    policy.create_namespaced_pod_disruption_budget(
        ns,
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="budget"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=2, selector=client.V1LabelSelector(match_labels={"app": "web"})
            ),
        ),
    )
    _settled(server, ns, disruptionsAllowed=1)
    core.create_namespaced_pod_eviction(
        "web-0", ns, client.V1Eviction(metadata=client.V1ObjectMeta(name="web-0", namespace=ns))
    )
    pdb = policy.read_namespaced_pod_disruption_budget("budget", ns)
    assert pdb.status.disruptions_allowed == 0
    # The pod was deleted gracefully; the kubelet finishes the deletion.
    _wait(lambda: _gone(core, ns, "web-0"))
    status = _settled(server, ns, currentHealthy=2, disruptionsAllowed=0)
    assert "disruptedPods" not in status
    with pytest.raises(ApiException) as info:
        core.create_namespaced_pod_eviction(
            "web-1", ns, client.V1Eviction(metadata=client.V1ObjectMeta(name="web-1"))
        )
    assert info.value.status == 429
    body = json.loads(info.value.body)
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget budget needs 2 healthy pods and has 2 currently",
        }
    ]
    assert core.read_namespaced_pod("web-1", ns).metadata.deletion_timestamp is None


def _gone(core: client.CoreV1Api, ns: str, name: str) -> bool:
    try:
        core.read_namespaced_pod(name, ns)
    except ApiException as exc:
        return exc.status == 404
    return False


def test_eviction_records_disrupted_pod_and_honours_grace(server: ClusterHandle, ns: str) -> None:
    # No kubelet stop for foreign nodes: bind to a node the kubelet does not run.
    code, _ = call(
        server, "POST", "/api/v1/nodes", {"kind": "Node", "metadata": {"name": f"real-{ns}"}}
    )
    assert code == 201
    for i in range(2):
        body = PodBuilder(f"web-{i}", ns).label("app", "web").node(f"real-{ns}").obj()
        body["status"] = {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        assert call(server, "POST", f"/api/v1/namespaces/{ns}/pods", body)[0] == 201
        pod_path = f"/api/v1/namespaces/{ns}/pods/web-{i}"
        _, pod = call(server, "GET", pod_path)
        pod["status"] = body["status"]
        assert call(server, "PUT", pod_path + "/status", pod)[0] == 200
    _create_pdb(server, ns, maxUnavailable=1)
    _settled(server, ns, currentHealthy=2, disruptionsAllowed=1)
    code, body = _evict_raw(server, ns, "web-0", deleteOptions={"gracePeriodSeconds": 20})
    assert code == 201, body
    assert body["status"] == "Success"
    _, pod = call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0")
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 20
    status = _status(server, ns)
    assert "web-0" in status.get("disruptedPods", {}) or status["disruptionsAllowed"] == 0
    # Being deleted now: the controller drops it from disruptedPods and does not count it.
    # (A pass that has not yet seen the deletion also counts 1 healthy, since a pod in
    # disruptedPods is not counted either, so wait for the entry to go as well.)
    _settled(server, ns, currentHealthy=1, disruptionsAllowed=0)
    _wait(lambda: "disruptedPods" not in _status(server, ns) or None)
    code, body = _evict_raw(server, ns, "web-1")
    assert code == 429
    assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    # A pod already being deleted is evictable without the budget.
    code, _ = _evict_raw(server, ns, "web-0")
    assert code == 201


def test_pods_not_running_are_evicted_without_the_budget(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 2, node=False)  # Pending
    _create_pdb(server, ns, minAvailable=5)
    _settled(server, ns, expectedPods=2, disruptionsAllowed=0)
    code, body = _evict_raw(server, ns, "web-0")
    assert code == 201, body
    assert call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0")[0] == 404  # not bound
    _settled(server, ns, expectedPods=1)


def test_pod_without_budget_is_evicted(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 1)
    _running(server, ns, 1)
    code, body = _evict_raw(server, ns, "web-0")
    assert code == 201, body
    _, pod = call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0")
    assert pod.get("code") == 404 or pod["metadata"].get("deletionTimestamp")


def test_two_budgets_are_an_internal_error(server: ClusterHandle, ns: str) -> None:
    _pods(server, ns, 2)
    _running(server, ns, 2)
    _create_pdb(server, ns, name="budget", minAvailable=0)
    _create_pdb(server, ns, name="other", maxUnavailable=1)
    _settled(server, ns, currentHealthy=2)
    code, body = _evict_raw(server, ns, "web-0")
    assert code == 500
    assert body["reason"] == "InternalError"
    assert body["message"] == (
        "Internal error occurred: This pod has more than one PodDisruptionBudget, which the "
        "eviction subresource does not support."
    )
    assert call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0")[0] == 200


def test_eviction_errors(server: ClusterHandle, ns: str) -> None:
    code, body = _evict_raw(server, ns, "missing")
    assert code == 404
    assert body["message"] == 'pods "missing" not found'
    _pods(server, ns, 1, node=False)
    code, body = call(
        server,
        "POST",
        f"/api/v1/namespaces/{ns}/pods/web-0/eviction",
        {"kind": "Eviction", "metadata": {"name": "other"}},
    )
    assert code == 400
    assert body["message"] == "name in URL does not match name in Eviction object"
    code, _ = call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0/eviction")
    assert code == 405
    assert call(server, "GET", f"/api/v1/namespaces/{ns}/pods/web-0")[0] == 200


def test_unready_pod_with_always_allow_policy(server: ClusterHandle, ns: str) -> None:
    code, _ = call(
        server, "POST", "/api/v1/nodes", {"kind": "Node", "metadata": {"name": f"real-{ns}"}}
    )
    assert code == 201
    for i, ready in enumerate(("True", "False")):
        body = PodBuilder(f"web-{i}", ns).label("app", "web").node(f"real-{ns}").obj()
        assert call(server, "POST", f"/api/v1/namespaces/{ns}/pods", body)[0] == 201
        pod_path = f"/api/v1/namespaces/{ns}/pods/web-{i}"
        _, pod = call(server, "GET", pod_path)
        pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]}
        assert call(server, "PUT", pod_path + "/status", pod)[0] == 200
    _create_pdb(server, ns, minAvailable=1, unhealthyPodEvictionPolicy="AlwaysAllow")
    _settled(server, ns, currentHealthy=1, disruptionsAllowed=0, expectedPods=2)
    code, body = _evict_raw(server, ns, "web-1")  # not ready: allowed
    assert code == 201, body
    assert _evict_raw(server, ns, "web-0")[0] == 429


def test_controller_can_be_switched_off(tmp_path: Any) -> None:
    handle = start_cluster(
        kubeconfig_path=tmp_path / "kc", nodes=1, controllers=["*", "-disruption-controller"]
    )
    try:
        _create_pdb(handle, "default", minAvailable=1)
        time.sleep(0.3)
        assert _status(handle, "default") == {}
    finally:
        handle.stop()
    with start_apiserver(kubeconfig_path=tmp_path / "kc1") as server:  # a bare server
        _create_pdb(server, "default", minAvailable=1)
        time.sleep(0.3)
        assert _status(server, "default") == {}
    bare = start_cluster(kubeconfig_path=tmp_path / "kc2", controllers=["disruption-controller"])
    try:
        _create_pdb(bare, "default", minAvailable=1)
        _settled(bare, "default", expectedPods=0, desiredHealthy=1, disruptionsAllowed=0)
    finally:
        bare.stop()


def test_concurrent_evictions_spend_the_budget_exactly(server: ClusterHandle, ns: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    _pods(server, ns, 6)
    _running(server, ns, 6)
    # minAvailable: with maxUnavailable, pods that are gone lower expectedPods here (no
    # controller scale to count them), which would free budget while the test runs.
    _create_pdb(server, ns, minAvailable=4)
    _settled(server, ns, currentHealthy=6, disruptionsAllowed=2)
    with ThreadPoolExecutor(6) as pool:
        codes = sorted(pool.map(lambda i: _evict_raw(server, ns, f"web-{i}")[0], range(6)))
    assert codes == [201, 201, 429, 429, 429, 429]
