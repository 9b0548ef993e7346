"""The pod statuses the simulated kubelet writes, upstream-shaped: pure functions of a pod.

* :func:`running` — what the kubelet reports once the containers started: phase Running,
  the conditions PodReadyToStartContainers, Initialized, Ready, ContainersReady (True)
  and PodScheduled, ``hostIP(s)``, ``podIP(s)``, ``startTime``, running container
  statuses (init containers terminated, Completed).
  Ready is True unless a readiness gate's condition is missing or not True
  (:func:`ready_changed` follows the gates afterwards).
* :func:`terminated` — every container exited (one exit code for all, or one per
  container name): phase Succeeded (all exit codes 0) or
  Failed, each container ``terminated`` with reason Completed (0) or Error and its
  exitCode, Ready / ContainersReady False with reason PodCompleted or PodFailed,
  Initialized True (reason PodCompleted when Succeeded) and PodReadyToStartContainers
  False, as ``pkg/kubelet/status/generate.go`` makes them.
* :func:`killed` — the kubelet stopped the pod because it is being deleted: its running
  containers end with exit code 137 (SIGKILL) and the pod is Failed, as the kubelet
  reports a deleted pod that had not finished before it goes.
* :func:`restarted` — the containers exited and were restarted in place (restartPolicy
  OnFailure or Always): ``restartCount`` grows, ``lastState`` holds the exit, the pod
  stays Running and Ready.
* :func:`failed_by_pod_gc` — the pod GC's mark on a pod whose node is gone.

Each returns a new status dict (the pod is not changed); times are seconds-precision
RFC 3339, as the API serialises metav1.Time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "container_started_at",
    "exit_code_of",
    "failed_by_pod_gc",
    "killed",
    "now",
    "ready_changed",
    "restarted",
    "running",
    "terminated",
]

RawObject = dict[str, Any]
#: The exit code of a container killed by SIGKILL (128 + 9).
KILLED_EXIT_CODE = 137
_READY_KINDS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def now() -> str:
    """The current time as metav1.Time serialises (``2024-01-02T03:04:05Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _copy(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    return obj


def _status_copy(pod: RawObject) -> RawObject:
    status = pod.get("status")
    return _copy(status) if isinstance(status, dict) else {}


def _container_id(uid: str, name: str) -> str:
    return "kubesched://" + hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()


def _condition(kind: str, value: str, stamp: str, reason: str = "") -> RawObject:
    cond: RawObject = {
        "type": kind,
        "status": value,
        "lastProbeTime": None,
        "lastTransitionTime": stamp,
    }
    if reason:
        cond["reason"] = reason
    return cond


def _conditions(status: RawObject, wanted: list[RawObject], stamp: str) -> list[RawObject]:
    """``wanted`` conditions (keeping the transition time of those whose status did not
    change), PodScheduled as it was (True if missing), then every other condition."""
    old = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
    out = []
    for cond in wanted:
        before = old.get(cond["type"])
        if before is not None and before.get("status") == cond["status"]:
            cond["lastTransitionTime"] = before.get("lastTransitionTime", stamp)
        out.append(cond)
    out.append(dict(old.get("PodScheduled") or _condition("PodScheduled", "True", stamp)))
    named = {c["type"] for c in out}
    out.extend(dict(c) for t, c in old.items() if t not in named)
    return out


def _statuses(pod: RawObject, key: str, state: RawObject, ready: bool) -> list[RawObject]:
    meta, spec = pod["metadata"], pod.get("spec") or {}
    out = []
    for c in spec.get(key) or ():
        if not isinstance(c, dict):
            continue
        name = str(c.get("name", ""))
        out.append(
            {
                "name": name,
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": _container_id(str(meta.get("uid", "")), name),
                "ready": ready,
                "started": ready,
                "restartCount": 0,
                "state": _copy(state),
                "lastState": {},
            }
        )
    return out


def running(pod: RawObject, host_ip: str, pod_ip: str) -> RawObject:
    """The status of ``pod`` once its containers run (see the module docstring)."""
    stamp = now()
    status = _status_copy(pod)
    status["phase"] = "Running"
    wanted = [_condition(kind, "True", stamp) for kind in _READY_KINDS]
    wanted[2] = _ready(pod, status, stamp)
    status["conditions"] = _conditions(status, wanted, stamp)
    if host_ip:
        status["hostIP"] = host_ip
        status["hostIPs"] = [{"ip": host_ip}]
    if pod_ip:
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    status.setdefault("startTime", stamp)
    completed = {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": stamp,
            "finishedAt": stamp,
        }
    }
    init = _statuses(pod, "initContainers", completed, False)
    if init:
        status["initContainerStatuses"] = init
    status["containerStatuses"] = _statuses(
        pod, "containers", {"running": {"startedAt": stamp}}, True
    )
    return status


def _ready(pod: RawObject, status: RawObject, stamp: str) -> RawObject:
    """The Ready condition of a pod whose containers are ready: True unless a readiness
    gate's condition is missing or not True (``GeneratePodReadyCondition``)."""
    conditions = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
    unready = []
    for gate in (pod.get("spec") or {}).get("readinessGates") or ():
        kind = str((gate or {}).get("conditionType", ""))
        cond = conditions.get(kind)
        if cond is None:
            unready.append(
                f'corresponding condition of pod readiness gate "{kind}" does not exist.'
            )
        elif cond.get("status") != "True":
            unready.append(
                f'the status of pod readiness gate "{kind}" is not "True", but {cond.get("status")}'
            )
    if not unready:
        return _condition("Ready", "True", stamp)
    ready = _condition("Ready", "False", stamp, "ReadinessGatesNotReady")
    ready["message"] = ", ".join(unready)
    return ready


def ready_changed(pod: RawObject) -> RawObject | None:
    """For a running pod with readiness gates: its status with the Ready condition its
    gates now give, or None if Ready already says that."""
    if not (pod.get("spec") or {}).get("readinessGates"):
        return None
    status = _status_copy(pod)
    stamp = now()
    ready = _ready(pod, status, stamp)
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    for i, cond in enumerate(conditions):
        if cond.get("type") == "Ready":
            same = all(cond.get(k) == ready.get(k) for k in ("status", "reason", "message"))
            if same:
                return None
            if cond.get("status") == ready["status"]:
                ready["lastTransitionTime"] = cond.get("lastTransitionTime", stamp)
            conditions[i] = ready
            break
    else:
        conditions.append(ready)
    status["conditions"] = conditions
    return status


def _exit(code: int, started: str, finished: str, container_id: str) -> RawObject:
    return {
        "terminated": {
            "exitCode": code,
            "reason": "Completed" if code == 0 else "Error",
            "startedAt": started,
            "finishedAt": finished,
            "containerID": container_id,
        }
    }


def exit_code_of(exit_codes: int | Mapping[str, int], container: RawObject) -> int:
    """The exit code of ``container``: ``exit_codes`` itself, or its entry for the
    container's name (0 when it has none)."""
    if isinstance(exit_codes, int):
        return exit_codes
    return exit_codes.get(str(container.get("name", "")), 0)


def terminated(pod: RawObject, exit_codes: int | Mapping[str, int]) -> RawObject:
    """The status of ``pod`` once every container exited — all with ``exit_codes``, or
    each with its entry in it by name — and none restarts (restartPolicy Never, or
    OnFailure with exit code 0)."""
    stamp = now()
    status = _status_copy(pod)
    containers = status.get("containerStatuses") or ()
    succeeded = all(exit_code_of(exit_codes, c) == 0 for c in containers)
    phase = "Succeeded" if succeeded else "Failed"
    reason = "PodCompleted" if succeeded else "PodFailed"
    status["phase"] = phase
    status["conditions"] = _conditions(
        status,
        [
            _condition("PodReadyToStartContainers", "False", stamp),
            # Upstream's GeneratePodInitializedCondition: reason PodCompleted once Succeeded.
            _condition("Initialized", "True", stamp, "PodCompleted" if succeeded else ""),
            _condition("Ready", "False", stamp, reason),
            _condition("ContainersReady", "False", stamp, reason),
        ],
        stamp,
    )
    out = []
    for c in containers:
        code = exit_code_of(exit_codes, c)
        started = str(((c.get("state") or {}).get("running") or {}).get("startedAt") or stamp)
        c = dict(c, ready=False, started=False)
        c["state"] = _exit(code, started, stamp, str(c.get("containerID", "")))
        out.append(c)
    status["containerStatuses"] = out
    return status


def killed(pod: RawObject) -> RawObject:
    """The status of ``pod``, being deleted and not finished, once the kubelet stopped
    it: every container ended with :data:`KILLED_EXIT_CODE`, phase Failed."""
    status = terminated(pod, KILLED_EXIT_CODE)
    if status["phase"] != "Failed":
        # No container had started (a pending pod): none exited, and the pod failed.
        status["phase"] = "Failed"
        for cond in status["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond["reason"] = "PodFailed"
            elif cond["type"] == "Initialized":
                cond.pop("reason", None)
    return status


def restarted(pod: RawObject, exit_codes: int | Mapping[str, int]) -> RawObject:
    """The status of ``pod`` after its containers exited (with ``exit_codes``, as
    :func:`terminated` reads it) and the kubelet started them again in place."""
    stamp = now()
    status = _status_copy(pod)
    out = []
    for c in status.get("containerStatuses") or ():
        code = exit_code_of(exit_codes, c)
        started = str(((c.get("state") or {}).get("running") or {}).get("startedAt") or stamp)
        c = dict(c)
        c["lastState"] = _exit(code, started, stamp, str(c.get("containerID", "")))
        c["state"] = {"running": {"startedAt": stamp}}
        c["restartCount"] = int(c.get("restartCount") or 0) + 1
        out.append(c)
    status["containerStatuses"] = out
    return status


def container_started_at(pod: RawObject) -> str | None:
    """When the pod's running containers started (the latest), or None if none runs."""
    latest: str | None = None
    for c in (pod.get("status") or {}).get("containerStatuses") or ():
        started = ((c.get("state") or {}).get("running") or {}).get("startedAt")
        if not isinstance(started, str):
            return None
        latest = started if latest is None or started > latest else latest
    return latest


def failed_by_pod_gc(pod: RawObject) -> RawObject:
    """The status the pod GC writes before deleting a pod whose node no longer exists:
    phase Failed with the condition DisruptionTarget (reason DeletionByPodGC)."""
    status = _status_copy(pod)
    status["phase"] = "Failed"
    conditions = [
        c
        for c in status.get("conditions") or ()
        if isinstance(c, dict) and c.get("type") != "DisruptionTarget"
    ]
    target = _condition("DisruptionTarget", "True", now(), "DeletionByPodGC")
    target["message"] = "PodGC: node no longer exists"
    conditions.append(target)
    status["conditions"] = conditions
    return status
