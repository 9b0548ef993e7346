"""The PodGroup and ElasticQuota controllers (scheduler-plugins v0.34.7's), against the
embedded API server with only them beside it: they install the CRDs at start, then keep
PodGroup phases and counters and ElasticQuota ``status.used`` as pods come, run and
finish. Pods' phases are written through ``/status`` by the test, as a kubelet would."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.controllers import elasticquota, podgroup
from kubesched.testing.scheduling_wrappers import make_elastic_quota, make_pod_group

GROUP = ("scheduling.x-k8s.io", "v1alpha1")


def wait(what: str, check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("podgroups") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, controllers=[podgroup.NAME, elasticquota.NAME])
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def api(cluster: ClusterHandle) -> Iterator[client.ApiClient]:
    made = config.new_client_from_config(config_file=str(cluster.kubeconfig_path))
    yield made
    made.close()


def kubectl(cluster: ClusterHandle, *args: str) -> str:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(cluster.kubeconfig_path), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def namespace(api: client.ApiClient, name: str) -> None:
    body = client.V1Namespace(metadata=client.V1ObjectMeta(name=name))
    client.CoreV1Api(api).create_namespace(body)


def pod(
    api: client.ApiClient, ns: str, name: str, group: str = "", cpu: str = "100m", **extra: Any
) -> None:
    labels = {"scheduling.x-k8s.io/pod-group": group} if group else {}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, **extra},
        "spec": {
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }
    client.CoreV1Api(api).create_namespaced_pod(ns, body)


def set_phase(api: client.ApiClient, ns: str, name: str, phase: str) -> None:
    client.CoreV1Api(api).patch_namespaced_pod_status(name, ns, {"status": {"phase": phase}})


def custom(api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api)


def group_status(api: client.ApiClient, ns: str, name: str) -> dict[str, Any]:
    obj = custom(api).get_namespaced_custom_object(*GROUP, ns, "podgroups", name)
    return dict(obj.get("status") or {})


def phase_is(api: client.ApiClient, ns: str, name: str, phase: str) -> Callable[[], Any]:
    return lambda: (s := group_status(api, ns, name)).get("phase") == phase and s


def test_the_controllers_install_the_crds_and_run(cluster: ClusterHandle) -> None:
    assert cluster.controllers is not None
    assert sorted(cluster.controllers.manager.controllers) == [elasticquota.NAME, podgroup.NAME]
    crds = json.loads(kubectl(cluster, "get", "crd", "-o", "json"))["items"]
    assert {c["metadata"]["name"] for c in crds} >= {
        "podgroups.scheduling.x-k8s.io",
        "elasticquotas.scheduling.x-k8s.io",
    }


def test_a_group_goes_pending_scheduling_running_then_failed(api: client.ApiClient) -> None:
    namespace(api, "train")
    body = make_pod_group("gang").namespace("train").min_member(2).dict()
    custom(api).create_namespaced_custom_object(*GROUP, "train", "podgroups", body)
    wait("Pending", phase_is(api, "train", "gang", "Pending"))

    # A pod of another namespace with the same label is not a member.
    namespace(api, "other")
    pod(api, "other", "stranger", "gang")
    pod(api, "train", "w-0", "gang", ownerReferences=[_owner("job-b"), _owner("job-a")])
    time.sleep(0.2)
    assert group_status(api, "train", "gang")["phase"] == "Pending"

    pod(api, "train", "w-1", "gang")
    status = wait("Scheduling", phase_is(api, "train", "gang", "Scheduling"))
    assert status["occupiedBy"] == "train/job-a,train/job-b"

    set_phase(api, "train", "w-0", "Running")
    set_phase(api, "train", "w-1", "Running")
    status = wait("Running", phase_is(api, "train", "gang", "Running"))
    assert status["running"] == 2

    set_phase(api, "train", "w-0", "Succeeded")
    set_phase(api, "train", "w-1", "Failed")
    status = wait("Failed", phase_is(api, "train", "gang", "Failed"))
    assert (status.get("succeeded"), status.get("failed"), status.get("running")) == (1, 1, None)

    # Failed is final: a new member changes nothing.
    pod(api, "train", "w-2", "gang")
    time.sleep(0.2)
    assert group_status(api, "train", "gang")["phase"] == "Failed"


def test_a_group_whose_members_succeed_finishes(api: client.ApiClient) -> None:
    namespace(api, "batch")
    body = make_pod_group("done").namespace("batch").min_member(2).dict()
    custom(api).create_namespaced_custom_object(*GROUP, "batch", "podgroups", body)
    for name in ("d-0", "d-1", "d-2"):
        pod(api, "batch", name, "done")
    wait("Scheduling", phase_is(api, "batch", "done", "Scheduling"))
    set_phase(api, "batch", "d-0", "Succeeded")
    set_phase(api, "batch", "d-1", "Succeeded")
    status = wait("Finished", phase_is(api, "batch", "done", "Finished"))
    assert status["succeeded"] == 2


def test_a_group_that_loses_members_goes_back_to_pending(api: client.ApiClient) -> None:
    namespace(api, "shrink")
    body = make_pod_group("g").namespace("shrink").min_member(2).dict()
    custom(api).create_namespaced_custom_object(*GROUP, "shrink", "podgroups", body)
    pod(api, "shrink", "a", "g")
    pod(api, "shrink", "b", "g")
    wait("Scheduling", phase_is(api, "shrink", "g", "Scheduling"))
    client.CoreV1Api(api).delete_namespaced_pod("b", "shrink", grace_period_seconds=0)
    wait("Pending", phase_is(api, "shrink", "g", "Pending"))


def _owner(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": f"uid-{name}"}


def quota_used(api: client.ApiClient, ns: str) -> dict[str, str] | None:
    obj = custom(api).get_namespaced_custom_object(*GROUP, ns, "elasticquotas", "quota")
    return (obj.get("status") or {}).get("used")


def test_quota_used_sums_the_running_pods_requests(
    api: client.ApiClient, cluster: ClusterHandle
) -> None:
    namespace(api, "team-a")
    body = make_elastic_quota("team-a").min(cpu="1").max(cpu="2", memory="4Gi").dict()
    custom(api).create_namespaced_custom_object(*GROUP, "team-a", "elasticquotas", body)
    assert wait("zero use", lambda: quota_used(api, "team-a")) == {"cpu": "0", "memory": "0"}

    pod(api, "team-a", "web", cpu="500m")
    pod(api, "team-a", "pending", cpu="1")  # not Running: counts nothing
    set_phase(api, "team-a", "web", "Running")
    wait("web counted", lambda: quota_used(api, "team-a") == {"cpu": "500m", "memory": "0"})

    pod(api, "team-a", "api", cpu="250m")
    set_phase(api, "team-a", "api", "Running")
    wait("api counted", lambda: quota_used(api, "team-a") == {"cpu": "750m", "memory": "0"})
    table = kubectl(cluster, "get", "eq", "-n", "team-a")
    assert "750m" in table

    set_phase(api, "team-a", "web", "Succeeded")
    wait("web released", lambda: quota_used(api, "team-a") == {"cpu": "250m", "memory": "0"})
