"""The pods nominated to nodes by preemption.

Mirrors upstream's ``backend/queue/nominator.go`` (upstream keeps it in the scheduling
queue; it lives here so that the simulator and the live scheduler's queue share it). A
nomination comes either from the pod's ``status.nominatedNodeName`` (the API's record) or
from preemption in this process, before the API has it; an update that carries no
nomination keeps the in-memory one, so that the node stays reserved while the status
patch is on its way. It is the framework's ``PodNominator``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubesched.framework.types import PodInfo
from kubesched.objects.pod import Pod


class Nominator:
    """Nominated pods per node, keyed by ``pod.key``."""

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """The pods nominated to ``node_name``, in nomination order."""
        return list(self._by_node.get(node_name, ()))

    def nominated_node(self, pod: Pod) -> str:
        """The node ``pod`` is nominated to, or ""."""
        return self._node_of.get(pod.key, "")

    def nominated_nodes(self) -> Iterable[str]:
        """The nodes that have nominated pods."""
        return list(self._by_node)

    def add_nominated_pod(self, pod: Pod, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name``; with None, to its ``status.nominatedNodeName``.

        Any previous nomination of the pod is dropped first; "" clears it.
        """
        self.delete_nominated_pod(pod)
        node = pod.nominated_node_name if node_name is None else node_name
        if not node:
            return
        self._node_of[pod.key] = node
        self._by_node.setdefault(node, []).append(PodInfo(pod))

    def delete_nominated_pod(self, pod: Pod) -> None:
        """Drop the nomination of ``pod``, if any."""
        node = self._node_of.pop(pod.key, None)
        if node is None:
            return
        infos = [i for i in self._by_node.get(node, []) if i.pod.key != pod.key]
        if infos:
            self._by_node[node] = infos
        else:
            self._by_node.pop(node, None)

    def update_nominated_pod(self, old: Pod, new: Pod) -> None:
        """Point the nomination at ``new``; keep an in-memory node when neither version
        names one (upstream's ``UpdateNominatedPod``)."""
        keep: str | None = None
        if not old.nominated_node_name and not new.nominated_node_name:
            keep = self._node_of.get(old.key)
        self.delete_nominated_pod(old)
        self.add_nominated_pod(new, keep)
