"""The ServiceAccounts controller (issue 13, item 3): a ``default`` ServiceAccount in every
active namespace, made again when deleted — against the embedded API server with the
controller beside it, read with the ``kubernetes`` client and kubectl."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.controllers.serviceaccount import NAME


def _wait(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.03)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("sa") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, controllers=[NAME])
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def core(cluster: ClusterHandle) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig_path))
    yield client.CoreV1Api(api)
    api.close()


def _account(core: client.CoreV1Api, namespace: str) -> client.V1ServiceAccount | None:
    try:
        return core.read_namespaced_service_account("default", namespace)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_the_controller_runs(cluster: ClusterHandle) -> None:
    assert cluster.controllers is not None
    assert list(cluster.controllers.manager.controllers) == [NAME]


@pytest.mark.parametrize("namespace", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_system_namespaces_get_a_default_service_account(
    core: client.CoreV1Api, namespace: str
) -> None:
    _wait(lambda: _account(core, namespace))


def test_a_new_namespace_gets_one(core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    account = _wait(lambda: _account(core, "team-a"))
    assert account.metadata.namespace == "team-a"


def test_a_deleted_default_service_account_comes_back(core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-b")))
    first = _wait(lambda: _account(core, "team-b"))
    core.delete_namespaced_service_account("default", "team-b")
    again = _wait(
        lambda: (a := _account(core, "team-b")) is not None and a.metadata.uid != first.metadata.uid
    )
    assert again


def test_other_service_accounts_are_left_alone(core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-c")))
    _wait(lambda: _account(core, "team-c"))
    body = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="builder"))
    core.create_namespaced_service_account("team-c", body)
    core.delete_namespaced_service_account("builder", "team-c")
    time.sleep(0.3)
    names = [a.metadata.name for a in core.list_namespaced_service_account("team-c").items]
    assert names == ["default"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not on PATH")
def test_kubectl_sees_it(cluster: ClusterHandle, core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-d")))
    _wait(lambda: _account(core, "team-d"))
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(cluster.kubeconfig_path), "get", "sa", "-n", "team-d"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert out.split("\n")[1].split()[0] == "default"
