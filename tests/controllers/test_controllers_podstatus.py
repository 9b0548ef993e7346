"""The statuses the simulated kubelet writes, as input pod / output status pairs (KWOK tests
its stages so: ``kustomize/stage/pod/general/testdata``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from kubesched.controllers import podstatus


def pod(
    *,
    policy: str = "Always",
    containers: tuple[str, ...] = ("app",),
    init: tuple[str, ...] = (),
    gates: tuple[str, ...] = (),
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": policy,
        "nodeName": "node-0",
        "containers": [{"name": n, "image": f"{n}:1"} for n in containers],
    }
    if init:
        spec["initContainers"] = [{"name": n, "image": f"{n}:1"} for n in init]
    if gates:
        spec["readinessGates"] = [{"conditionType": g} for g in gates]
    return {
        "metadata": {"name": "p", "namespace": "default", "uid": "u-1"},
        "spec": spec,
        "status": status if status is not None else {"phase": "Pending", "qosClass": "BestEffort"},
    }


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c.get("reason", "")) for c in status["conditions"]}


@dataclass
class RunningCase:
    id: str
    pod: dict[str, Any]
    host_ip: str
    pod_ip: str
    ready: tuple[str, str]
    init_states: list[str]


RUNNING = [
    RunningCase("plain-pod-runs-ready", pod(), "10.0.0.1", "10.128.0.2", ("True", ""), []),
    RunningCase(
        "init-containers-are-completed",
        pod(init=("setup", "migrate")),
        "10.0.0.1",
        "10.128.0.2",
        ("True", ""),
        ["Completed", "Completed"],
    ),
    RunningCase(
        "missing-readiness-gate-holds-ready",
        pod(gates=("example.com/lb",)),
        "10.0.0.1",
        "10.128.0.3",
        ("False", "ReadinessGatesNotReady"),
        [],
    ),
    RunningCase("no-pod-ip-without-a-pod-cidr", pod(), "10.0.0.1", "", ("True", ""), []),
]


@pytest.mark.parametrize("case", RUNNING, ids=[c.id for c in RUNNING])
def test_running(case: RunningCase) -> None:
    status = podstatus.running(case.pod, case.host_ip, case.pod_ip)
    assert status["phase"] == "Running"
    assert status["qosClass"] == "BestEffort"  # what the server set is kept
    got = conditions(status)
    assert got["Ready"] == case.ready
    for kind in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "PodScheduled"):
        assert got[kind] == ("True", ""), kind
    assert status["hostIPs"] == [{"ip": case.host_ip}]
    assert status.get("podIP", "") == case.pod_ip
    assert [
        c["state"]["terminated"]["reason"] for c in status.get("initContainerStatuses", [])
    ] == (case.init_states)
    (app,) = status["containerStatuses"]
    assert (app["name"], app["image"], app["ready"], app["restartCount"]) == (
        "app",
        "app:1",
        True,
        0,
    )
    assert app["containerID"].startswith("kubesched://")
    assert set(app["state"]) == {"running"}
    assert case.pod["status"]["phase"] == "Pending"  # the input is not changed


def started(policy: str = "Never", containers: tuple[str, ...] = ("app",)) -> dict[str, Any]:
    before = pod(policy=policy, containers=containers)
    before["status"] = podstatus.running(before, "10.0.0.1", "10.128.0.2")
    return before


@dataclass
class EndCase:
    id: str
    pod: dict[str, Any]
    exit_code: int
    phase: str
    reason: str
    ready_reason: str


ENDS = [
    EndCase("exit-zero-completes", started(), 0, "Succeeded", "Completed", "PodCompleted"),
    EndCase("exit-code-fails", started(), 137, "Failed", "Error", "PodFailed"),
    EndCase(
        "every-container-ends",
        started(containers=("a", "b")),
        0,
        "Succeeded",
        "Completed",
        "PodCompleted",
    ),
]


@pytest.mark.parametrize("case", ENDS, ids=[c.id for c in ENDS])
def test_terminated(case: EndCase) -> None:
    status = podstatus.terminated(case.pod, case.exit_code)
    assert status["phase"] == case.phase
    got = conditions(status)
    assert got["Ready"] == ("False", case.ready_reason)
    assert got["ContainersReady"] == ("False", case.ready_reason)
    assert got["PodReadyToStartContainers"] == ("False", "")
    initialized = "PodCompleted" if case.phase == "Succeeded" else ""
    assert got["Initialized"] == ("True", initialized)
    for container in status["containerStatuses"]:
        ended = container["state"]["terminated"]
        assert (ended["reason"], ended["exitCode"]) == (case.reason, case.exit_code)
        assert ended["containerID"] == container["containerID"]
        assert (container["ready"], container["started"]) == (False, False)
    assert status["podIP"] == "10.128.0.2"


@pytest.mark.parametrize("code", [0, 2], ids=["restart-after-success", "restart-after-failure"])
def test_restarted(code: int) -> None:
    before = started(policy="OnFailure")
    once = podstatus.restarted(before, code)
    twice = podstatus.restarted(dict(before, status=once), code)
    (app,) = twice["containerStatuses"]
    assert twice["phase"] == "Running"
    assert app["restartCount"] == 2
    assert app["lastState"]["terminated"]["exitCode"] == code
    assert app["lastState"]["terminated"]["reason"] == ("Completed" if code == 0 else "Error")
    assert set(app["state"]) == {"running"}
    assert app["ready"] is True


@pytest.mark.parametrize(
    ("gate_status", "expected"),
    [
        (None, None),
        ("True", ("True", "", None)),
        (
            "False",
            (
                "False",
                "ReadinessGatesNotReady",
                'the status of pod readiness gate "example.com/lb" is not "True", but False',
            ),
        ),
    ],
    ids=["gate-still-missing-nothing-to-write", "gate-true-makes-ready", "gate-false-says-why"],
)
def test_ready_changed(
    gate_status: str | None, expected: tuple[str, str, str | None] | None
) -> None:
    before = pod(gates=("example.com/lb",))
    before["status"] = podstatus.running(before, "10.0.0.1", "10.128.0.2")
    if gate_status is not None:
        before["status"]["conditions"].append({"type": "example.com/lb", "status": gate_status})
    after = podstatus.ready_changed(before)
    if expected is None:
        assert after is None
        return
    assert after is not None
    ready = next(c for c in after["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready.get("reason", ""), ready.get("message")) == expected


def test_failed_by_pod_gc() -> None:
    status = podstatus.failed_by_pod_gc(started(policy="Always"))
    assert status["phase"] == "Failed"
    target = next(c for c in status["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "DeletionByPodGC",
        "PodGC: node no longer exists",
    )


def test_terminated_with_an_exit_code_per_container() -> None:
    before = started(containers=("main", "sidecar", "other"))
    status = podstatus.terminated(before, {"main": 42, "sidecar": 0})
    assert status["phase"] == "Failed"
    codes = {c["name"]: c["state"]["terminated"]["exitCode"] for c in status["containerStatuses"]}
    # A container the mapping does not name exits with 0.
    assert codes == {"main": 42, "sidecar": 0, "other": 0}
    assert podstatus.terminated(before, {"main": 0})["phase"] == "Succeeded"


@pytest.mark.parametrize("running", [True, False], ids=["running-pod", "pod-never-started"])
def test_killed_pod_fails(running: bool) -> None:
    before = started() if running else pod()
    status = podstatus.killed(before)
    assert status["phase"] == "Failed"
    assert conditions(status)["Ready"] == ("False", "PodFailed")
    for container in status.get("containerStatuses") or []:
        ended = container["state"]["terminated"]
        assert (ended["exitCode"], ended["reason"]) == (podstatus.KILLED_EXIT_CODE, "Error")
    assert bool(status.get("containerStatuses")) == running
