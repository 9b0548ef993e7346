"""Cost of decoding a protobuf request body (issue 4), per object, beside json.loads.

Builds the bodies Go clients send (kubectl's ``create`` generators, a kube-scheduler's
Binding, Event and Lease, a kubelet-sized Node) with the protobuf runtime, then times
:func:`kubesched.apiserver.protobuf.decode_body` on each, and ``json.loads`` of the JSON
the same object would have been sent as. Also times building the descriptor pool (once
per process, on the first protobuf body). Prints one line per figure.

    .venv/bin/python bench/protobuf_bench.py [--number 2000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from kubesched.apiserver.protobuf import decode_body
from kubesched.apiserver.protobuf.schema import schema


def _envelope(api_version: str, kind: str, message: Any) -> bytes:
    unknown = schema().classes["runtime.Unknown"](raw=message.SerializeToString())
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return b"k8s\x00" + unknown.SerializeToString()


def _meta(message: Any, name: str, namespace: str = "") -> None:
    message.metadata.name = name
    message.metadata.namespace = namespace
    message.metadata.creationTimestamp.seconds = -62135596800  # Go's zero time


def _pod() -> Any:
    pod = schema().classes["core.Pod"]()
    _meta(pod, "web-7d4b9c6f5-x2x9k", "default")
    pod.metadata.labels.update({"app": "web", "pod-template-hash": "7d4b9c6f5"})
    owner = pod.metadata.ownerReferences.add(apiVersion="apps/v1", kind="ReplicaSet")
    owner.name, owner.uid, owner.controller = "web-7d4b9c6f5", "0b6c-41a2", True
    for name in ("app", "sidecar"):
        c = pod.spec.containers.add(name=name, image=f"registry.example/{name}:1.2.3")
        c.resources.requests["cpu"].string = "100m"
        c.resources.requests["memory"].string = "128Mi"
        c.resources.limits["memory"].string = "256Mi"
        c.ports.add(containerPort=8080, protocol="TCP")
        c.env.add(name="MODE", value="production")
        c.volumeMounts.add(name="config", mountPath="/etc/config")
        c.terminationMessagePath, c.imagePullPolicy = "/dev/termination-log", "IfNotPresent"
    volume = pod.spec.volumes.add(name="config")
    volume.volumeSource.configMap.localObjectReference.name = "web-config"
    pod.spec.restartPolicy, pod.spec.dnsPolicy = "Always", "ClusterFirst"
    pod.spec.schedulerName, pod.spec.terminationGracePeriodSeconds = "default-scheduler", 30
    pod.spec.tolerations.add(
        key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"
    )
    term = pod.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.add(
        weight=100
    )
    term.podAffinityTerm.topologyKey = "kubernetes.io/hostname"
    term.podAffinityTerm.labelSelector.matchLabels["app"] = "web"
    pod.status.phase, pod.status.qosClass = "Pending", "Burstable"
    return pod


def _node() -> Any:
    node = schema().classes["core.Node"]()
    _meta(node, "node-0042")
    node.metadata.labels.update(
        {"kubernetes.io/hostname": "node-0042", "topology.kubernetes.io/zone": "zone-a"}
    )
    node.spec.podCIDR = "10.244.42.0/24"
    for resources in (node.status.capacity, node.status.allocatable):
        for name, value in (("cpu", "8"), ("memory", "32Gi"), ("pods", "110")):
            resources[name].string = value
    for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready"):
        condition = node.status.conditions.add(type=kind, status="False", reason=kind)
        condition.lastHeartbeatTime.seconds = condition.lastTransitionTime.seconds = 1700000000
    node.status.addresses.add(type="InternalIP", address="10.0.0.42")
    node.status.nodeInfo.kubeletVersion, node.status.nodeInfo.osImage = "v1.34.0", "Linux"
    for i in range(10):
        node.status.images.add(names=[f"registry.example/image-{i}:1.0"], sizeBytes=10**8)
    return node


def _configmap() -> Any:
    configmap = schema().classes["core.ConfigMap"]()
    _meta(configmap, "web-config", "default")
    configmap.data.update({f"key-{i}": "value " * 20 for i in range(10)})
    configmap.binaryData["blob"] = bytes(range(256))
    return configmap


def _binding() -> Any:
    binding = schema().classes["core.Binding"]()
    _meta(binding, "web-7d4b9c6f5-x2x9k", "default")
    binding.metadata.uid = "0b6c-41a2"
    binding.target.kind, binding.target.name = "Node", "node-0042"
    return binding


def _event() -> Any:
    event = schema().classes["events.Event"]()
    _meta(event, "web-7d4b9c6f5-x2x9k.17f0", "default")
    event.eventTime.seconds, event.eventTime.nanos = 1700000000, 123456000
    event.reportingController, event.reportingInstance = "default-scheduler", "scheduler-1"
    event.action, event.reason, event.type = "Binding", "Scheduled", "Normal"
    event.note = "Successfully assigned default/web-7d4b9c6f5-x2x9k to node-0042"
    event.regarding.kind, event.regarding.name = "Pod", "web-7d4b9c6f5-x2x9k"
    return event


def _lease() -> Any:
    lease = schema().classes["coordination.Lease"]()
    _meta(lease, "kube-scheduler", "kube-system")
    lease.spec.holderIdentity, lease.spec.leaseDurationSeconds = "scheduler-1_0b6c", 15
    lease.spec.renewTime.seconds, lease.spec.renewTime.nanos = 1700000000, 5000
    return lease


CASES: list[tuple[str, str, str, Callable[[], Any]]] = [
    ("Pod (2 containers)", "v1", "Pod", _pod),
    ("Node (status, 10 images)", "v1", "Node", _node),
    ("ConfigMap (10 keys + 256 B binary)", "v1", "ConfigMap", _configmap),
    ("Binding", "v1", "Binding", _binding),
    ("Event (events.k8s.io/v1)", "events.k8s.io/v1", "Event", _event),
    ("Lease", "coordination.k8s.io/v1", "Lease", _lease),
]


def _per_call_us(fn: Callable[[], Any], number: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, time.perf_counter() - start)
    return best / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000)
    opts = parser.parse_args()

    start = time.perf_counter()
    schema()
    built = time.perf_counter() - start
    print(
        f"descriptor pool + {len(schema().classes)} message classes built in {built * 1e3:.1f} ms"
    )
    for label, api_version, kind, make in CASES:
        raw = _envelope(api_version, kind, make())
        body = decode_body(raw, api_version, kind)
        text = json.dumps(body).encode()
        pb_us = _per_call_us(
            lambda raw=raw, v=api_version, k=kind: decode_body(raw, v, k), opts.number
        )
        json_us = _per_call_us(lambda text=text: json.loads(text), opts.number)
        print(
            f"{label:36} protobuf {len(raw):5d} B {pb_us:7.1f} us/object   "
            f"json {len(text):5d} B {json_us:6.1f} us/object"
        )


if __name__ == "__main__":
    main()
