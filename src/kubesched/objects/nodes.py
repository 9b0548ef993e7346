"""Simulated nodes, in the manner of KWOK: Ready Node objects that no kubelet stands behind.

:func:`make_nodes` builds N nodes from a template (a Node manifest whose ``metadata.name``
is a prefix: copies are ``<prefix>-0``, ``<prefix>-1``, ...; the default template is a
32-CPU, 256Gi node named ``node``). Each copy gets the labels a real node has
(``kubernetes.io/hostname``, ``kubernetes.io/os``, ``kubernetes.io/arch``,
``node.kubernetes.io/instance-type``, ``topology.kubernetes.io/region`` and
``topology.kubernetes.io/zone`` — zones spread round-robin over three,
``<region>-a/b/c``), an InternalIP and a ``spec.podCIDR`` of its own, Ready conditions,
``nodeInfo``, and the annotation :data:`SIMULATED_ANNOTATION` that tells the simulated
kubelet (:mod:`kubesched.controllers.kubelet`) to act as the node's kubelet. Taints and
GPUs come from the template or from :func:`make_nodes`'s arguments.

**Attach limit.** How many volumes of each simulated CSI driver a node may have attached
(what its CSINode reports as ``allocatable.count``, and the scheduler's NodeVolumeLimits
counts against) is the node's :data:`ATTACH_LIMIT_ANNOTATION`: the template's value, or
:data:`DEFAULT_ATTACH_LIMIT` when the template has none.

Shared by whatever creates nodes (``kubesched apiserver --nodes``, the demo, the
simulator) and the kubelet that runs them.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import yaml

from kubesched.objects import jsontext

__all__ = [
    "ATTACH_LIMIT_ANNOTATION",
    "DEFAULT_ATTACH_LIMIT",
    "DEFAULT_INSTANCE_TYPE",
    "DEFAULT_REGION",
    "GPU_RESOURCE",
    "HOSTNAME_LABEL",
    "INSTANCE_TYPE_LABEL",
    "KUBELET_VERSION",
    "MAX_NODES",
    "REGION_LABEL",
    "SIMULATED_ANNOTATION",
    "ZONE_LABEL",
    "NodeTemplateError",
    "check_template",
    "default_template",
    "is_simulated",
    "load_template",
    "make_nodes",
    "node_attach_limit",
]

Object = dict[str, Any]

#: Nodes with this annotation set to "true" are run by the simulated kubelet (KWOK's
#: ``kwok.x-k8s.io/node: fake``).
SIMULATED_ANNOTATION = "kubesched.io/simulated-node"
#: The number of volumes of each simulated CSI driver the node may have attached (a
#: non-negative integer; its CSINode's ``allocatable.count``).
ATTACH_LIMIT_ANNOTATION = "kubesched.io/csi-attach-limit"
#: The attach limit of nodes whose template sets none: kube-scheduler's historical
#: default for AWS EBS volumes (``DefaultMaxEBSVolumes``).
DEFAULT_ATTACH_LIMIT = 39
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_REGION = "sim-region"
DEFAULT_INSTANCE_TYPE = "sim.standard-32"
#: Node InternalIPs count up from here; pod CIDRs (/24 each) from _POD_NET.
_NODE_NET = ipaddress.IPv4Address("10.0.0.1")
_POD_NET = ipaddress.IPv4Address("10.128.0.0")
#: Enough /24s in 10.128.0.0/9 for this many nodes.
MAX_NODES = 32768
#: What simulated nodes report as their kubelet's version (the API server's ``/version``).
KUBELET_VERSION = "v1.34.0-kubesched"


class NodeTemplateError(ValueError):
    """A node template that cannot be used (the message says why)."""


def is_simulated(node: Object) -> bool:
    """Whether the simulated kubelet runs ``node`` (:data:`SIMULATED_ANNOTATION` "true")."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return bool(annotations.get(SIMULATED_ANNOTATION) == "true")


def node_attach_limit(node: Object) -> int:
    """The node's attach limit (:data:`ATTACH_LIMIT_ANNOTATION`), or
    :data:`DEFAULT_ATTACH_LIMIT` if it has none; raises :class:`NodeTemplateError` naming
    the annotation when its value is not a non-negative integer."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(ATTACH_LIMIT_ANNOTATION)
    if text is None:
        return DEFAULT_ATTACH_LIMIT
    value = str(text).strip()
    if not value.isdigit():
        name = (node.get("metadata") or {}).get("name") or "node"
        raise NodeTemplateError(
            f"{name}: metadata.annotations[{ATTACH_LIMIT_ANNOTATION}]: {text!r} is not a "
            "number of volumes (an integer >= 0)"
        )
    return int(value)


def _copy(obj: Any) -> Any:
    # A deep copy of a JSON value (faster than copy.deepcopy for JSON).
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_copy(v) for v in obj]
    return obj


def default_template() -> Object:
    """The node :func:`make_nodes` copies when given no template."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node", "labels": {INSTANCE_TYPE_LABEL: DEFAULT_INSTANCE_TYPE}},
        "status": {
            "capacity": {
                "cpu": "32",
                "memory": "256Gi",
                "pods": "110",
                "ephemeral-storage": "100Gi",
            }
        },
    }


def load_template(path: str | os.PathLike[str]) -> Object:
    """Read a node template (YAML or JSON, one Node); raises :class:`NodeTemplateError`."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
        jsontext.check_yaml(data)
    except OSError as exc:
        raise NodeTemplateError(f"cannot read node template {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise NodeTemplateError(
            f"node template {path}: byte {exc.start}: invalid UTF-8 (0x{exc.object[exc.start]:02x})"
        ) from None
    except (yaml.YAMLError, jsontext.JSONTextError) as exc:
        raise NodeTemplateError(f"node template {path} is not valid YAML: {exc}") from None
    return check_template(data, str(path))


def check_template(data: Any, where: str = "node template") -> Object:
    """``data`` if it is a usable Node template, else :class:`NodeTemplateError`."""
    if not isinstance(data, dict):
        raise NodeTemplateError(f"{where}: expected a Node manifest (a mapping)")
    if data.get("kind", "Node") != "Node" or data.get("apiVersion", "v1") != "v1":
        raise NodeTemplateError(
            f"{where}: expected kind Node, apiVersion v1, got kind {data.get('kind')!r}, "
            f"apiVersion {data.get('apiVersion')!r}"
        )
    meta = data.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise NodeTemplateError(f"{where}: metadata must be a mapping")
    for part in ("spec", "status"):
        if not isinstance(data.get(part, {}), dict):
            raise NodeTemplateError(f"{where}: {part} must be a mapping")
    if not isinstance(meta.get("annotations") or {}, dict):
        raise NodeTemplateError(f"{where}: metadata.annotations must be a mapping")
    try:
        node_attach_limit(data)
    except NodeTemplateError as exc:
        raise NodeTemplateError(f"{where}: {exc}") from None
    return data


def _conditions(now: str) -> list[Object]:
    def cond(kind: str, status: str, reason: str, message: str) -> Object:
        return {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }

    return [
        cond(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]


def make_nodes(
    count: int,
    template: Object | None = None,
    gpus: int = 0,
    taints: Sequence[Object] = (),
    start: int = 0,
    attach_limit: int | None = None,
) -> list[Object]:
    """``count`` simulated nodes copied from ``template`` (default :func:`default_template`).

    The template's name (or generateName, else ``node``) is the prefix of the names.
    **gpus**: add ``nvidia.com/gpu`` capacity; **taints**: added to the template's.
    **start**: the index of the first copy (for names, addresses and zones).
    **attach_limit**: the nodes' :data:`ATTACH_LIMIT_ANNOTATION` (default: the
    template's, else :data:`DEFAULT_ATTACH_LIMIT`).
    """
    if attach_limit is not None and attach_limit < 0:
        raise ValueError(f"the attach limit must not be negative, got {attach_limit}")
    if count < 0 or start < 0 or start + count > MAX_NODES:
        raise ValueError(f"the number of simulated nodes must be within 0..{MAX_NODES}")
    base = check_template(_copy(template) if template else default_template())
    meta = base.get("metadata") or {}
    prefix = str(meta.get("name") or meta.get("generateName") or "node").rstrip("-")
    labels = dict(meta.get("labels") or {})
    region = str(labels.get(REGION_LABEL) or DEFAULT_REGION)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    nodes = []
    for i in range(start, start + count):
        node = _copy(base)
        name = f"{prefix}-{i}"
        nmeta = node.setdefault("metadata", {}) or {}
        node["metadata"] = nmeta
        nmeta.pop("generateName", None)
        nmeta["name"] = name
        nlabels = dict(labels)
        nlabels.setdefault(INSTANCE_TYPE_LABEL, DEFAULT_INSTANCE_TYPE)
        nlabels.update(
            {
                HOSTNAME_LABEL: name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                REGION_LABEL: region,
                ZONE_LABEL: f"{region}-{'abc'[i % 3]}",
            }
        )
        nmeta["labels"] = nlabels
        annotations = dict(nmeta.get("annotations") or {})
        annotations[SIMULATED_ANNOTATION] = "true"
        if attach_limit is not None:
            annotations[ATTACH_LIMIT_ANNOTATION] = str(attach_limit)
        annotations.setdefault(ATTACH_LIMIT_ANNOTATION, str(DEFAULT_ATTACH_LIMIT))
        nmeta["annotations"] = annotations
        spec = node.get("spec") or {}
        node["spec"] = spec
        spec["podCIDR"] = f"{_POD_NET + 256 * i}/24"
        spec["podCIDRs"] = [spec["podCIDR"]]
        if taints:
            spec["taints"] = [*(spec.get("taints") or []), *map(_copy, taints)]
        status = node.get("status") or {}
        node["status"] = status
        capacity = dict(status.get("capacity") or default_template()["status"]["capacity"])
        if gpus:
            capacity[GPU_RESOURCE] = str(gpus)
        status["capacity"] = capacity
        allocatable = dict(status.get("allocatable") or capacity)
        if gpus:
            allocatable[GPU_RESOURCE] = str(gpus)
        status["allocatable"] = allocatable
        status["conditions"] = _conditions(now)
        status["addresses"] = [
            {"type": "InternalIP", "address": str(_NODE_NET + i)},
            {"type": "Hostname", "address": name},
        ]
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
        status["nodeInfo"] = {
            "machineID": f"{i:032x}",
            "systemUUID": f"{i:032x}",
            "bootID": f"{i:032x}",
            "kernelVersion": "6.1.0-kubesched",
            "osImage": "kubesched simulated node",
            "containerRuntimeVersion": "kubesched://1.0",
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": "amd64",
        }
        status.setdefault("phase", "Running")
        nodes.append(node)
    return nodes
