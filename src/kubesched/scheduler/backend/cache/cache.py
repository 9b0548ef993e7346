"""The scheduler's cache: nodes and the pods on them, as upstream's
``pkg/scheduler/backend/cache/cache.go``.

The informers feed it nodes and assigned pods; the scheduling cycle adds the pods it has
placed but not yet bound (``assume_pod`` at Reserve), so the next cycle already counts
them. A pod's life here: assumed → binding finished → confirmed when the informer
delivers it bound (``add_pod``), or forgotten when binding fails (``forget_pod``), or
expired if it is never confirmed within the TTL after its binding finished. Upstream's
scheduler passes a TTL of 0 (``durationToExpireAssumedPod``, kubernetes#106361), which
means assumed pods never expire; a TTL > 0 turns expiry on.

Pods can arrive before their node (the watches are separate): they are kept on a
NodeInfo without a node, and attached when the node arrives. A node removed while pods
remain keeps that placeholder until its last pod goes.

Informer events are applied leniently where upstream returns an error the informer can
only log (updating or removing a pod the cache never saw): the end state is the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache.snapshot import build_snapshot


class CacheError(Exception):
    """An operation the cache's state does not allow (assume twice, forget a bound pod)."""


@dataclass(slots=True)
class _PodState:
    pod: Pod
    binding_finished: bool = False
    #: When an assumed pod whose binding finished expires (None: never).
    deadline: float | None = None


class Cache:
    """Nodes and assigned or assumed pods, with one incrementally kept Snapshot."""

    def __init__(
        self,
        *,
        ttl: float = 0.0,
        columnar: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.columnar = columnar
        self.clock = clock
        #: NodeInfo per node name, placeholders (pods of a node not seen) included.
        self._nodes: dict[str, NodeInfo] = {}
        #: Names of the nodes seen, in the order they arrived (upstream's node tree).
        self._order: dict[str, None] = {}
        self._pods: dict[str, _PodState] = {}
        self._assumed: set[str] = set()
        self._snapshot: Snapshot | None = None
        #: How many times the snapshot was rebuilt (nodes changed); for tests and metrics.
        self.rebuilds = 0
        #: Told ``(pod, True)`` when a pod is counted on a node (assumed or added) and
        #: ``(pod, False)`` when it stops being counted (the gangs' placed members).
        self.on_pod: Callable[[Pod, bool], None] | None = None

    # --- queries ----------------------------------------------------------------------

    def node_count(self) -> int:
        """How many nodes the cache has seen (placeholders not counted)."""
        return len(self._order)

    def pod_count(self) -> int:
        """How many pods are assigned or assumed."""
        return len(self._pods)

    def assumed_count(self) -> int:
        """How many pods are assumed and not yet confirmed."""
        return len(self._assumed)

    def node_info(self, name: str) -> NodeInfo | None:
        """The NodeInfo of ``name`` (a placeholder if only its pods are known)."""
        return self._nodes.get(name)

    def get_pod(self, pod: Pod) -> Pod | None:
        """The cached version of ``pod`` (by key), if any."""
        state = self._pods.get(pod.key)
        return state.pod if state is not None else None

    def is_assumed_pod(self, pod: Pod) -> bool:
        """Whether ``pod`` is assumed and not yet confirmed by the informer."""
        return pod.key in self._assumed

    def snapshot(self) -> Snapshot:
        """The snapshot for the next scheduling cycle, rebuilt only if nodes changed.

        The same object is updated in place by later pod events: call this at the start
        of each cycle and apply no events while the cycle runs.
        """
        if self._snapshot is None:
            infos = (self._nodes[name] for name in self._order)
            self._snapshot = build_snapshot(infos, columnar=self.columnar)
            self.rebuilds += 1
        return self._snapshot

    # --- assumed pods -----------------------------------------------------------------

    def assume_pod(self, pod: Pod) -> None:
        """Count ``pod`` (with ``node_name`` set) on its node before it is bound."""
        if pod.key in self._pods:
            raise CacheError(f'pod "{pod.key}" is in the cache, so cannot be assumed')
        self._add(pod)
        self._assumed.add(pod.key)

    def finish_binding(self, pod: Pod) -> None:
        """The bind call for an assumed pod returned; its expiry clock starts."""
        state = self._pods.get(pod.key)
        if state is not None and pod.key in self._assumed:
            state.binding_finished = True
            state.deadline = self.clock() + self.ttl

    def forget_pod(self, pod: Pod) -> None:
        """Undo ``assume_pod`` after a failure in the binding cycle."""
        state = self._pods.get(pod.key)
        if state is not None and state.pod.node_name != pod.node_name:
            raise CacheError(
                f'pod "{pod.key}" was assumed on "{pod.node_name}" '
                f'but assigned to "{state.pod.node_name}"'
            )
        if state is None or pod.key not in self._assumed:
            raise CacheError(f'pod "{pod.key}" was not assumed, so cannot be forgotten')
        self._remove(state.pod)

    def cleanup_assumed_pods(self) -> list[Pod]:
        """Remove the assumed pods whose binding finished longer than the TTL ago
        (upstream runs this every second); the pods removed. A TTL of 0 never expires."""
        if self.ttl <= 0:
            return []
        now = self.clock()
        expired = [
            state.pod
            for key in self._assumed
            if (state := self._pods[key]).binding_finished
            and state.deadline is not None
            and now > state.deadline
        ]
        for pod in expired:
            self._remove(pod)
        return expired

    # --- informer events: pods --------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod arrived: confirms an assumed pod (wherever it was bound),
        re-adds an expired one, or adds a pod bound by someone else."""
        if not pod.is_assigned or pod.is_terminal:
            return
        state = self._pods.get(pod.key)
        if state is not None:
            if state.pod == pod:
                # The usual confirmation: the pod bound as assumed (equal, and cheap to
                # compare: the informer's version shares the decoded parts). Nothing on
                # its node changes; it is just no longer assumed.
                self._assumed.discard(pod.key)
                state.binding_finished = False
                state.deadline = None
                return
            # Assumed elsewhere or changed meanwhile, or already added (a relist):
            # either way the informer's version replaces ours.
            self._remove(state.pod)
        self._add(pod)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """An assigned pod changed; a pod turning terminal leaves its node."""
        state = self._pods.get(new.key)
        if new.is_terminal or not new.is_assigned:
            if state is not None:
                self._remove(state.pod)
            return
        if state is not None:
            self._remove(state.pod)
        self._add(new)

    def remove_pod(self, pod: Pod) -> bool:
        """An assigned pod was deleted; False if the cache did not hold it."""
        state = self._pods.get(pod.key)
        if state is None:
            return False
        self._remove(state.pod)
        return True

    # --- informer events: nodes -------------------------------------------------------

    def add_node(self, node: Node) -> NodeInfo:
        """A node arrived (or a relist repeated it); pods seen before it are attached."""
        info = self._nodes.get(node.name)
        if info is None:
            info = self._nodes[node.name] = NodeInfo(node)
        elif info.has_node and info.node == node:
            return info
        else:
            info.set_node(node)
        self._order[node.name] = None
        self._snapshot = None
        return info

    def update_node(self, old: Node, new: Node) -> NodeInfo:
        """A node changed; an update that changes nothing the scheduler reads is free."""
        return self.add_node(new)

    def remove_node(self, node: Node) -> None:
        """A node was deleted; its pods (deleted by their own watch, maybe later) stay
        on a placeholder until they go."""
        info = self._nodes.get(node.name)
        if info is None:
            return
        self._order.pop(node.name, None)
        if info.pods:
            placeholder = NodeInfo()
            for pod_info in info.pods:
                placeholder.add_pod_info(pod_info)
            self._nodes[node.name] = placeholder
        else:
            del self._nodes[node.name]
        self._snapshot = None

    # --- bookkeeping ------------------------------------------------------------------

    def _add(self, pod: Pod) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            info = self._nodes[pod.node_name] = NodeInfo()
        if self._snapshot is not None and info.has_node:
            self._snapshot.add_pod(pod)  # the NodeInfo is shared: this updates both
        else:
            info.add_pod(pod)
        self._pods[pod.key] = _PodState(pod)
        if self.on_pod is not None:
            self.on_pod(pod, True)

    def _remove(self, pod: Pod) -> None:
        self._pods.pop(pod.key, None)
        self._assumed.discard(pod.key)
        if self.on_pod is not None:
            self.on_pod(pod, False)
        info = self._nodes.get(pod.node_name)
        if info is None:
            return
        if self._snapshot is not None and info.has_node:
            self._snapshot.remove_pod(pod)
        else:
            info.remove_pod(pod)
        if not info.has_node and not info.pods:
            del self._nodes[pod.node_name]
