"""The pod garbage collector: orphaned pods (their node gone, even before the controllers
started), terminated pods beyond the threshold, unscheduled terminating pods — against the
embedded API server with the controller beside it, read with the ``kubernetes`` client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli.cluster import ControllersHandle, start_controllers
from kubesched.controllers import ControllerOptions
from kubesched.controllers.podgc import NAME


def _wait(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.03)


@pytest.fixture
def server(tmp_path: Any) -> Iterator[ApiServerHandle]:
    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=1) as handle:
        yield handle


@pytest.fixture
def core(server: ApiServerHandle) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield client.CoreV1Api(api)
    api.close()


def _podgc(server: ApiServerHandle, **options: Any) -> ControllersHandle:
    settings = ControllerOptions(gc_delay=0.1, pod_gc_interval=0.2, **options)
    return start_controllers(server.kubeconfig_path, settings, [NAME])


def _pod(name: str, node: str | None = None, finalizer: bool = False) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name, finalizers=["example.com/hold"] if finalizer else None
        ),
        spec=client.V1PodSpec(
            node_name=node, containers=[client.V1Container(name="c", image="pause")]
        ),
    )


def _names(core: client.CoreV1Api) -> set[str]:
    return {p.metadata.name for p in core.list_namespaced_pod("default").items}


def test_pods_of_a_node_gone_before_the_controllers_started_are_collected(
    server: ApiServerHandle, core: client.CoreV1Api
) -> None:
    core.create_namespaced_pod("default", _pod("stranded", "ghost-node"))
    core.create_namespaced_pod("default", _pod("housed", "node-0"))
    controllers = _podgc(server)
    try:
        _wait(lambda: "stranded" not in _names(core))
        time.sleep(0.3)  # a pass or more later, the pod on a live node is still there
        assert "housed" in _names(core)
    finally:
        controllers.stop()


def test_an_orphan_is_marked_failed_before_it_is_deleted(
    server: ApiServerHandle, core: client.CoreV1Api
) -> None:
    # A finalizer keeps the pod after the delete, so the Failed mark can be read.
    core.create_namespaced_pod("default", _pod("held", "ghost-node", finalizer=True))
    controllers = _podgc(server)
    try:
        pod = _wait(
            lambda: (
                (p := core.read_namespaced_pod("held", "default")).metadata.deletion_timestamp and p
            )
        )
        assert pod.status.phase == "Failed"
        target = next(c for c in pod.status.conditions if c.type == "DisruptionTarget")
        assert (target.status, target.reason, target.message) == (
            "True",
            "DeletionByPodGC",
            "PodGC: node no longer exists",
        )
        assert pod.metadata.deletion_grace_period_seconds == 0
    finally:
        controllers.stop()
        core.patch_namespaced_pod("held", "default", {"metadata": {"finalizers": None}})


def test_terminated_pods_beyond_the_threshold_go_oldest_first(
    server: ApiServerHandle, core: client.CoreV1Api
) -> None:
    for i in range(4):
        core.create_namespaced_pod("default", _pod(f"done-{i}", "node-0"))
        pod = core.read_namespaced_pod(f"done-{i}", "default")
        pod.status.phase = "Succeeded"
        core.replace_namespaced_pod_status(f"done-{i}", "default", pod)
    core.create_namespaced_pod("default", _pod("running", "node-0"))
    controllers = _podgc(server, terminated_pod_gc_threshold=2)
    try:
        # Same creation second: names break the tie, so done-0 and done-1 are the oldest.
        _wait(lambda: _names(core) == {"done-2", "done-3", "running"})
    finally:
        controllers.stop()


def test_an_unscheduled_terminating_pod_is_marked_failed(
    server: ApiServerHandle, core: client.CoreV1Api
) -> None:
    core.create_namespaced_pod("default", _pod("unscheduled", None, finalizer=True))
    core.delete_namespaced_pod("unscheduled", "default")
    controllers = _podgc(server)
    try:
        _wait(lambda: core.read_namespaced_pod("unscheduled", "default").status.phase == "Failed")
    finally:
        controllers.stop()
        core.patch_namespaced_pod("unscheduled", "default", {"metadata": {"finalizers": None}})
