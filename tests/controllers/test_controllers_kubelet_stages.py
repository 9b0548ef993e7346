"""The simulated kubelet finishes pods (issue 13, item 5): restartPolicy Never / OnFailure /
Always with the run-seconds and exit-code annotations, and its "may start" hook; each case
an input pod and the status the kubelet leaves it in, read with the ``kubernetes`` client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client, config

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.controllers import ControllerOptions
from kubesched.controllers.kubelet import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION

HOLD_ANNOTATION = "test.kubesched.io/hold"


def _wait(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.03)


def _held(ctx: object) -> Callable[[dict[str, Any]], str | None]:
    # A "may start" hook: pods annotated with HOLD_ANNOTATION wait.
    def may_start(pod: dict[str, Any]) -> str | None:
        annotations = pod["metadata"].get("annotations") or {}
        return "held by the test" if HOLD_ANNOTATION in annotations else None

    return may_start


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    options = ControllerOptions(
        run_delay=0.05, pod_run_seconds=0.3, node_lease_interval=0, may_start=(_held,)
    )
    path = tmp_path_factory.mktemp("stages") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, nodes=2, options=options)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def core(cluster: ClusterHandle) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(cluster.kubeconfig_path))
    yield client.CoreV1Api(api)
    api.close()


def _pod(
    name: str, policy: str | None, annotations: dict[str, str], containers: int = 1
) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, annotations=annotations or None),
        spec=client.V1PodSpec(
            node_name="node-0",
            restart_policy=policy,
            containers=[
                client.V1Container(name=f"c{i}", image="busybox") for i in range(containers)
            ],
        ),
    )


@dataclass
class Case:
    id: str
    policy: str | None
    annotations: dict[str, str] = field(default_factory=dict)
    phase: str = "Running"
    reason: str = ""  # the containers' terminated reason (final state or lastState)
    exit_code: int = 0
    restarted: bool = False
    containers: int = 1


CASES = [
    Case("never-succeeds-after-the-default-run-time", "Never", {}, "Succeeded", "Completed", 0),
    Case(
        "never-fails-with-the-annotated-exit-code",
        "Never",
        {RUN_SECONDS_ANNOTATION: "0.1", EXIT_CODE_ANNOTATION: "7"},
        "Failed",
        "Error",
        7,
    ),
    Case(
        "never-with-two-containers-ends-both",
        "Never",
        {RUN_SECONDS_ANNOTATION: "0"},
        "Succeeded",
        "Completed",
        0,
        containers=2,
    ),
    Case("onfailure-succeeds-with-exit-code-zero", "OnFailure", {}, "Succeeded", "Completed", 0),
    Case(
        "onfailure-restarts-a-failing-container-in-place",
        "OnFailure",
        {RUN_SECONDS_ANNOTATION: "0.1", EXIT_CODE_ANNOTATION: "2"},
        "Running",
        "Error",
        2,
        restarted=True,
    ),
    Case(
        "always-restarts-even-after-exit-code-zero",
        "Always",
        {RUN_SECONDS_ANNOTATION: "0.1"},
        "Running",
        "Completed",
        0,
        restarted=True,
    ),
    Case(
        "bad-exit-code-annotation-counts-as-one",
        "Never",
        {RUN_SECONDS_ANNOTATION: "0", EXIT_CODE_ANNOTATION: "lots"},
        "Failed",
        "Error",
        1,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_pods_finish_as_their_restart_policy_says(core: client.CoreV1Api, case: Case) -> None:
    name = case.id[:60]
    core.create_namespaced_pod(
        "default", _pod(name, case.policy, case.annotations, case.containers)
    )

    def settled() -> client.V1Pod | None:
        pod = core.read_namespaced_pod(name, "default")
        statuses = pod.status.container_statuses or []
        if case.restarted:
            return pod if statuses and statuses[0].restart_count >= 2 else None
        return pod if pod.status.phase == case.phase else None

    pod = _wait(settled)
    assert pod.status.phase == case.phase
    statuses = pod.status.container_statuses
    assert len(statuses) == case.containers
    conditions = {c.type: c for c in pod.status.conditions}
    for status in statuses:
        if case.restarted:
            assert status.state.running is not None
            assert status.ready
            ended = status.last_state.terminated
        else:
            assert status.state.running is None
            assert not status.ready and not status.started
            ended = status.state.terminated
            assert status.restart_count == 0
        assert (ended.reason, ended.exit_code) == (case.reason, case.exit_code)
        assert ended.finished_at >= ended.started_at
    if case.restarted:
        assert conditions["Ready"].status == "True"
    else:
        expected = "PodCompleted" if case.phase == "Succeeded" else "PodFailed"
        assert (conditions["Ready"].status, conditions["Ready"].reason) == ("False", expected)
        assert conditions["ContainersReady"].reason == expected
        assert conditions["PodReadyToStartContainers"].status == "False"
        initialized = conditions["Initialized"]
        assert (initialized.status, initialized.reason) == (
            "True",
            "PodCompleted" if case.phase == "Succeeded" else None,
        )
        assert pod.status.pod_ip  # kept from when it ran


def test_always_pods_run_forever_by_default(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("forever", None, {}))
    _wait(lambda: core.read_namespaced_pod("forever", "default").status.phase == "Running")
    time.sleep(0.8)  # longer than the cluster's default run time (0.3 s)
    pod = core.read_namespaced_pod("forever", "default")
    assert pod.status.phase == "Running"
    assert pod.status.container_statuses[0].restart_count == 0


def test_may_start_hook_holds_a_pod_until_it_agrees(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("held", None, {HOLD_ANNOTATION: "yes"}))
    time.sleep(0.5)  # the run delay is 0.05 s
    assert core.read_namespaced_pod("held", "default").status.phase == "Pending"
    core.patch_namespaced_pod(
        "held", "default", {"metadata": {"annotations": {HOLD_ANNOTATION: None}}}
    )
    _wait(lambda: core.read_namespaced_pod("held", "default").status.phase == "Running")


def test_finished_pods_are_deleted_promptly(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("done", "Never", {RUN_SECONDS_ANNOTATION: "0"}))
    _wait(lambda: core.read_namespaced_pod("done", "default").status.phase == "Succeeded")
    core.delete_namespaced_pod("done", "default")

    def gone() -> bool:
        return "done" not in {p.metadata.name for p in core.list_namespaced_pod("default").items}

    _wait(gone, timeout=5)


def test_readiness_gates_hold_ready_until_their_condition_is_true(core: client.CoreV1Api) -> None:
    pod = _pod("gated", None, {})
    pod.spec.readiness_gates = [client.V1PodReadinessGate(condition_type="example.com/lb")]
    core.create_namespaced_pod("default", pod)

    def ready() -> client.V1PodCondition | None:
        got = core.read_namespaced_pod("gated", "default")
        if got.status.phase != "Running":
            return None
        return next(c for c in got.status.conditions if c.type == "Ready")

    condition = _wait(ready)
    assert (condition.status, condition.reason, condition.message) == (
        "False",
        "ReadinessGatesNotReady",
        'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    )
    gate = {"type": "example.com/lb", "status": "True"}
    core.patch_namespaced_pod_status("gated", "default", {"status": {"conditions": [gate]}})
    _wait(lambda: (c := ready()) is not None and c.status == "True")
    gate["status"] = "False"
    core.patch_namespaced_pod_status("gated", "default", {"status": {"conditions": [gate]}})
    condition = _wait(lambda: (c := ready()) is not None and c.status == "False" and c)
    assert condition.message == (
        'the status of pod readiness gate "example.com/lb" is not "True", but False'
    )
