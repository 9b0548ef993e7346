"""Helpers for the extender tests: Kubernetes objects shaped as kube-scheduler's
Go code encodes them, and a way to talk to a real server over HTTP.

``go_node`` and ``go_pod`` write v1.Node / v1.Pod JSON with the fields and zero values
Go's encoder emits (``creationTimestamp``, ``daemonEndpoints``, ``nodeInfo``, ...), so
that requests look like what a stock kube-scheduler sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kubesched.extender import types as t


def go_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A full v1.Node as Go's encoding/json writes it."""
    resources = {"cpu": cpu, "ephemeral-storage": "100Gi", "memory": memory, "pods": pods}
    spec: dict[str, Any] = {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]}
    if taints:
        spec["taints"] = [dict(taint) for taint in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "1234",
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                **(labels or {}),
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2024-05-01T10:05:00Z",
                    "lastTransitionTime": "2024-05-01T10:00:10Z",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [
                {"type": "InternalIP", "address": "172.18.0.2"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.1.0",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.13",
                "kubeletVersion": "v1.30.0",
                "kubeProxyVersion": "v1.30.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [{"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 321520}],
        },
    }


def go_pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str = "500m",
    memory: str = "512Mi",
    labels: Mapping[str, str] | None = None,
    tolerations: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A pending v1.Pod as Go's encoding/json writes it."""
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "resourceVersion": "99",
            "creationTimestamp": "2024-05-01T11:00:00Z",
            "labels": dict(labels or {"app": name}),
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.25",
                    "resources": {
                        "limits": {"cpu": cpu, "memory": memory},
                        "requests": {"cpu": cpu, "memory": memory},
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "tolerations": [dict(x) for x in tolerations],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {"phase": "Pending", "qosClass": "Guaranteed"},
    }


def filter_args(pod: dict[str, Any] | None, nodes: Sequence[dict[str, Any]]) -> bytes:
    """The body kube-scheduler posts to a non-nodeCacheCapable extender."""
    return t.encode_extender_args(
        t.ExtenderArgs(Pod=pod, Nodes={"metadata": {}, "items": list(nodes)}, NodeNames=None)
    )


def names_args(pod: dict[str, Any], names: Sequence[str]) -> bytes:
    """The body kube-scheduler posts to a nodeCacheCapable extender."""
    return t.encode_extender_args(t.ExtenderArgs(Pod=pod, Nodes=None, NodeNames=list(names)))


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str

    def json(self) -> Any:
        return t.loads(self.body, "reply")


def exchange(app: web.Application, *requests: tuple[str, str, bytes | None]) -> list[Reply]:
    """Send ``(method, path, body)`` requests in order to one running server."""

    async def run() -> list[Reply]:
        async with TestClient(TestServer(app)) as client:
            replies = []
            for method, path, body in requests:
                headers = {"Content-Type": "application/json"} if body is not None else {}
                async with client.request(method, path, data=body, headers=headers) as response:
                    replies.append(
                        Reply(response.status, await response.read(), response.content_type)
                    )
            return replies

    return asyncio.run(run())


def post(app: web.Application, path: str, body: bytes) -> Reply:
    """One POST to a fresh server."""
    return exchange(app, ("POST", path, body))[0]
