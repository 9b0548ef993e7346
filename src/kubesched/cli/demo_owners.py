"""Pods by owner, for ``kubesched demo``: which workload each pod belongs to, how many
pods a workload should have, and what its pods came to.

A pod's owner is read from the objects, as ``kubectl`` does it: the pod's controller
reference, and for a ReplicaSet the Deployment that controls it. How many pods a
workload should have is what its controller makes first: ``spec.replicas``; one per
node that should run a DaemonSet's pod (``objects.daemonset.node_should_run_daemon_pod``);
``min(parallelism, completions)`` for a Job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.objects.daemonset import node_should_run_daemon_pod
from kubesched.objects.node import Node
from kubesched.objects.podtemplate import controller_of

__all__ = ["OwnerIndex", "desired_pods", "owner_entry", "owner_key", "workload_condition"]

RawObject = dict[str, Any]


def owner_key(kind: str, name: str) -> str:
    """How the demo names an owner: ``Kind/name``."""
    return f"{kind}/{name}"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


class OwnerIndex:
    """Resolves pods to workloads, through the ReplicaSets given (a Deployment's pods are
    controlled by its ReplicaSets)."""

    def __init__(self, replica_sets: Iterable[Mapping[str, Any]] = ()) -> None:
        self._replica_sets: dict[str, Mapping[str, Any]] = {}
        for rs in replica_sets:
            self._replica_sets[str(_meta(rs).get("uid", ""))] = rs

    def controller(self, pod: Mapping[str, Any]) -> str | None:
        """The pod's controller as ``Kind/name`` (a ReplicaSet for a Deployment's pod)."""
        ref = controller_of(pod)
        return owner_key(str(ref.get("kind")), str(ref.get("name"))) if ref else None

    def owner(self, pod: Mapping[str, Any]) -> str | None:
        """The workload the pod belongs to, ``Kind/name``: its controller, or the
        Deployment controlling its ReplicaSet; None for a pod of no controller."""
        ref = controller_of(pod)
        if ref is None:
            return None
        if ref.get("kind") == "ReplicaSet":
            rs = self._replica_sets.get(str(ref.get("uid", "")))
            above = controller_of(rs) if rs is not None else None
            if above is not None and above.get("kind") == "Deployment":
                return owner_key("Deployment", str(above.get("name")))
        return owner_key(str(ref.get("kind")), str(ref.get("name")))


def desired_pods(workload: Mapping[str, Any], nodes: Sequence[Node]) -> int:
    """How many pods the workload's controller makes first: ``spec.replicas`` (default
    1), a DaemonSet's eligible nodes among ``nodes``, ``min(parallelism, completions)``
    for a Job (its parallelism when completions is unset)."""
    spec = workload.get("spec") or {}
    kind = workload.get("kind")
    if kind == "DaemonSet":
        return sum(1 for node in nodes if node_should_run_daemon_pod(node, workload)[0])
    if kind == "Job":
        parallelism = spec.get("parallelism")
        parallelism = 1 if parallelism is None else int(parallelism)
        completions = spec.get("completions")
        return parallelism if completions is None else min(parallelism, int(completions))
    replicas = spec.get("replicas")
    return 1 if replicas is None else int(replicas)


def workload_condition(workload: Mapping[str, Any]) -> str:
    """A Job's terminal condition that is True (``Complete`` / ``Failed``), else ""."""
    for condition in (workload.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return ""


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def owner_entry(
    workload: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    desired: int,
    rule: str,
    preempted: Sequence[str] = (),
) -> dict[str, Any]:
    """What one workload's pods came to: ``{"owner", "kind", "name", "rule", "desired",
    "pods", "phases", "nodes", "condition", "preempted", "text"}``, ``pods`` in the order
    given (the order they were made), ``text`` the report's one-line count."""
    kind = str(workload.get("kind"))
    name = str(_meta(workload).get("name"))
    phases = Counter(_phase(p) for p in pods)
    bound = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
    nodes = len({p["spec"]["nodeName"] for p in bound})
    names = [str(_meta(p).get("name")) for p in pods]
    condition = workload_condition(workload) if kind == "Job" else ""
    others = ", ".join(
        f"{n} {phase}" for phase, n in sorted(phases.items()) if phase not in ("Running",)
    )
    if kind == "DaemonSet":
        text = f"{len(bound)} pods on {nodes} nodes ({desired} eligible)"
    elif kind == "Job":
        succeeded = phases.get("Succeeded", 0)
        completions = (workload.get("spec") or {}).get("completions") or desired
        text = f"{condition or 'not complete'}: {succeeded}/{completions} succeeded"
        if phases.get("Running"):
            text += f", {phases['Running']} Running"
        if phases.get("Pending"):
            text += f", {phases['Pending']} Pending"
    elif kind == "StatefulSet":
        text = f"{phases.get('Running', 0)}/{desired} Running"
        if names:
            text = f"{names[0]}..{names[-1]} {text}, made in the order {', '.join(names)}"
    else:
        text = f"{phases.get('Running', 0)}/{desired} Running"
        if others:
            text += f", {others}"
    if preempted:
        text += f"; {len(preempted)} preempted and made again ({', '.join(preempted)})"
    return {
        "owner": owner_key(kind, name),
        "kind": kind,
        "name": name,
        "rule": rule,
        "desired": desired,
        "pods": names,
        "phases": dict(sorted(phases.items())),
        "nodes": nodes,
        "condition": condition,
        "preempted": list(preempted),
        "text": text,
    }
