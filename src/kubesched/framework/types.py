"""What plugins read: pods and nodes as the scheduler's cache holds them.

``NodeInfo`` aggregates a node and the pods on it (requested resources, used host ports,
pods with affinity), as upstream's ``framework.NodeInfo``; ``NodeToStatus`` records why
nodes were rejected, for the FailedScheduling message and for preemption.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kubesched.framework.interface import Code, Status
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource

_generation = itertools.count(1)

#: Host IP meaning "every address" for host ports.
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


@dataclass(slots=True)
class PodInfo:
    """A pod in the cache. Wraps the immutable Pod so the cache can swap it on update."""

    pod: Pod

    @property
    def key(self) -> str:
        return self.pod.key


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with what QueueSort and backoff need."""

    pod: Pod
    #: When the pod was added to the queue (seconds; the simulator uses file order).
    timestamp: float = 0.0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    gated: bool = False
    #: Not before this time (queue clock) may the pod leave backoffQ, whatever its
    #: attempts say: its gang failed a cycle and backs off as a whole (0: unset).
    backoff_until: float = 0.0


@dataclass(slots=True)
class NodeScore:
    """One node's score from one plugin (mutable: NormalizeScore rewrites it)."""

    name: str
    score: int


@dataclass(frozen=True, slots=True)
class ImageStateSummary:
    """An image on a node, with how many nodes in the cluster have it (ImageLocality)."""

    size: int
    num_nodes: int


class HostPortInfo:
    """Host ports in use on a node: ip → {(protocol, port)}. 0.0.0.0 conflicts with all."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, set[tuple[str, int]]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        self._ports.setdefault(ip or DEFAULT_BIND_ALL_HOST_IP, set()).add((protocol or "TCP", port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ports = self._ports.get(ip or DEFAULT_BIND_ALL_HOST_IP)
        if ports is not None:
            ports.discard((protocol or "TCP", port))
            if not ports:
                del self._ports[ip or DEFAULT_BIND_ALL_HOST_IP]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Whether (ip, protocol, port) collides with a port in use."""
        if port <= 0:
            return False
        entry = (protocol or "TCP", port)
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(entry in ports for ports in self._ports.values())
        return entry in self._ports.get(ip, ()) or entry in self._ports.get(
            DEFAULT_BIND_ALL_HOST_IP, ()
        )

    def __len__(self) -> int:
        return sum(len(p) for p in self._ports.values())

    def copy(self) -> HostPortInfo:
        out = HostPortInfo()
        out._ports = {ip: set(p) for ip, p in self._ports.items()}
        return out


class NodeInfo:
    """A node and the pods assigned (or assumed) to it, with their totals."""

    __slots__ = (
        "_node",
        "generation",
        "image_states",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: tuple[Pod, ...] = ()) -> None:
        self._node = node
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.used_ports = HostPortInfo()
        self.image_states: dict[str, ImageStateSummary] = {}
        #: ``namespace/claim`` → how many of the node's pods use the claim (upstream's
        #: PVCRefCounts; persistentVolumeClaim volumes only, as upstream counts them).
        self.pvc_ref_counts: dict[str, int] = {}
        self.generation = next(_generation)
        for pod in pods:
            self.add_pod(pod)

    @property
    def node(self) -> Node:
        """The node; raises if the NodeInfo only holds pods of a node not yet seen."""
        if self._node is None:
            raise LookupError("node not found")
        return self._node

    @property
    def has_node(self) -> bool:
        return self._node is not None

    @property
    def name(self) -> str:
        return self._node.name if self._node is not None else ""

    @property
    def allocatable(self) -> Resource:
        return self.node.allocatable

    def set_node(self, node: Node) -> None:
        self._node = node
        self.generation = next(_generation)

    def add_pod(self, pod: Pod) -> None:
        """Account for ``pod`` on this node."""
        self.add_pod_info(PodInfo(pod))

    def add_pod_info(self, info: PodInfo) -> None:
        pod = info.pod
        self.pods.append(info)
        if pod.has_affinity:
            self.pods_with_affinity.append(info)
        if pod.required_anti_affinity:
            self.pods_with_required_anti_affinity.append(info)
        self._update(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Stop accounting for the pod with ``pod``'s key; False if it was not here."""
        key = pod.key
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            for i, info in enumerate(lst):
                if info.pod.key == key:
                    del lst[i]
                    break
        for i, info in enumerate(self.pods):
            if info.pod.key == key:
                del self.pods[i]
                self._update(info.pod, -1)
                return True
        return False

    def _update(self, pod: Pod, sign: int) -> None:
        req = pod.requests
        r = self.requested
        r.milli_cpu += sign * req.milli_cpu
        r.memory += sign * req.memory
        r.ephemeral_storage += sign * req.ephemeral_storage
        for name, value in req.scalar.items():
            r.scalar[name] = r.scalar.get(name, 0) + sign * value
        self.non_zero_requested.milli_cpu += sign * pod.non_zero_milli_cpu
        self.non_zero_requested.memory += sign * pod.non_zero_memory
        for port in pod.host_ports:
            if sign > 0:
                self.used_ports.add(port.host_ip, port.protocol, port.host_port)
            else:
                self.used_ports.remove(port.host_ip, port.protocol, port.host_port)
        if pod.volumes:
            _update_pvc_ref_counts(self.pvc_ref_counts, pod, sign)
        self.generation = next(_generation)

    def clone(self) -> NodeInfo:
        """An independent copy (pods lists copied; Pod objects are immutable)."""
        out = NodeInfo.__new__(NodeInfo)
        out._node = self._node
        out.pods = list(self.pods)
        out.pods_with_affinity = list(self.pods_with_affinity)
        out.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        out.requested = self.requested.copy()
        out.non_zero_requested = self.non_zero_requested.copy()
        out.used_ports = self.used_ports.copy()
        out.pvc_ref_counts = dict(self.pvc_ref_counts)
        out.image_states = self.image_states
        out.generation = self.generation
        return out

    def __repr__(self) -> str:
        return f"NodeInfo({self.name!r}, pods={len(self.pods)})"


def _update_pvc_ref_counts(counts: dict[str, int], pod: Pod, sign: int) -> None:
    for volume in pod.volumes:
        if volume.kind != "persistentVolumeClaim":
            continue
        key = f"{pod.namespace}/{volume.claim_name}"
        value = counts.get(key, 0) + sign
        if value > 0:
            counts[key] = value
        else:
            counts.pop(key, None)


class NodeToStatus:
    """Why each node was rejected, plus one status for nodes not listed (upstream's
    ``NodeToStatus`` with its absent-nodes status, e.g. for a PreFilterResult).

    The columnar path adds rejections in bulk (rows of a node table with status codes);
    they are turned into per-node entries only when someone asks for them, so that an
    attempt that rejects thousands of nodes pays nothing for reasons nobody reads.
    """

    __slots__ = ("_bulk", "_bulk_len", "absent", "statuses")

    def __init__(
        self, statuses: dict[str, Status] | None = None, absent: Status | None = None
    ) -> None:
        self.statuses: dict[str, Status] = statuses if statuses is not None else {}
        self.absent = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        self._bulk: list[tuple[Sequence[str], Any, Any, tuple[Status, ...]]] = []
        self._bulk_len = 0

    def add_bulk(
        self, names: Sequence[str], rows: Any, codes: Any, statuses: tuple[Status, ...]
    ) -> None:
        """Record ``statuses[codes[i] - 1]`` for node ``names[rows[i]]``, lazily."""
        if len(rows):
            self._bulk.append((names, rows, codes, statuses))
            self._bulk_len += len(rows)

    def _materialize(self) -> None:
        for names, rows, codes, statuses in self._bulk:
            for row, code in zip(rows.tolist(), codes.tolist(), strict=True):
                self.statuses[names[row]] = statuses[code - 1]
        self._bulk.clear()
        self._bulk_len = 0

    def get(self, node_name: str) -> Status:
        if self._bulk:
            self._materialize()
        return self.statuses.get(node_name, self.absent)

    def set(self, node_name: str, status: Status) -> None:
        if self._bulk:
            self._materialize()
        self.statuses[node_name] = status

    def __len__(self) -> int:
        return len(self.statuses) + self._bulk_len

    def items(self) -> Iterator[tuple[str, Status]]:
        if self._bulk:
            self._materialize()
        return iter(self.statuses.items())

    def reason_counts(self) -> dict[str, int]:
        """How many listed nodes give each reason (absent nodes not included)."""
        counts: dict[str, int] = {}
        for status in self.statuses.values():
            for reason in status.reasons:
                counts[reason] = counts.get(reason, 0) + 1
        for _, _, codes, statuses in self._bulk:
            values, numbers = np.unique(codes, return_counts=True)
            for code, number in zip(values.tolist(), numbers.tolist(), strict=True):
                for reason in statuses[code - 1].reasons:
                    counts[reason] = counts.get(reason, 0) + number
        return counts

    def nodes_for_code(
        self,
        code: Code,
        all_nodes: Sequence[NodeInfo],
        position: Callable[[str], int | None] | None = None,
    ) -> list[NodeInfo]:
        """The nodes whose status has ``code``, absent nodes included via ``absent``, in
        ``all_nodes`` order.

        With ``position`` (where a node name is in ``all_nodes``, None if absent) and an
        absent status of another code, only the listed nodes are looked at, as upstream's
        ``NodesForStatusCode`` does: a PreFilterResult that named one node of thousands
        costs one lookup, not a walk over every node.
        """
        if position is None or self.absent.code is code:
            return [n for n in all_nodes if self.get(n.name).code is code]
        found = (position(name) for name, status in self.items() if status.code is code)
        return [all_nodes[p] for p in sorted(p for p in found if p is not None)]
