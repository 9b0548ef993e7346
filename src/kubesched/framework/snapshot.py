"""A consistent view of the cluster for one scheduling cycle.

Upstream takes a snapshot of its cache at the start of every cycle, so that plugins see
one state throughout. Nodes are listed in the order of upstream's node tree: round robin
over zones, so that a sample of nodes (percentageOfNodesToScore) spans every zone.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence

from kubesched.framework.columns import NodeTable
from kubesched.framework.types import ImageStateSummary, NodeInfo
from kubesched.objects.node import LABEL_REGION, LABEL_ZONE, Node
from kubesched.objects.pod import Pod


def zone_key(node: Node) -> str:
    """Upstream's ``utilnode.GetZoneKey``: region and zone, or "" when unlabeled."""
    region = node.labels.get(LABEL_REGION, "")
    zone = node.labels.get(LABEL_ZONE, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(nodes: Sequence[Node]) -> list[Node]:
    """Nodes interleaved by zone, zones in order of first appearance (upstream NodeTree)."""
    zones: dict[str, list[Node]] = {}
    for node in nodes:
        zones.setdefault(zone_key(node), []).append(node)
    ordered: list[Node] = []
    columns = list(zones.values())
    for i in range(max((len(c) for c in columns), default=0)):
        ordered.extend(c[i] for c in columns if i < len(c))
    return ordered


class Snapshot:
    """Node infos for one cycle, in node-tree order, with lookups plugins need."""

    def __init__(self, node_infos: Iterable[NodeInfo], *, columnar: bool = False) -> None:
        self._list = list(node_infos)
        self._map = {ni.name: ni for ni in self._list}
        self._with_affinity = [ni for ni in self._list if ni.pods_with_affinity]
        self._with_required_anti_affinity = [
            ni for ni in self._list if ni.pods_with_required_anti_affinity
        ]
        self._affinity_dirty = False
        self._positions: dict[str, int] | None = None
        #: ``namespace/claim`` → how many assigned pods use it (upstream's usedPVCSet).
        self._used_pvcs: dict[str, int] = {}
        for ni in self._list:
            for key, count in ni.pvc_ref_counts.items():
                self._used_pvcs[key] = self._used_pvcs.get(key, 0) + count
        #: The columnar view of the same nodes (None: plugins take the per-node path).
        self.table: NodeTable | None = NodeTable(self._list) if columnar else None

    def add_pod(self, pod: Pod) -> None:
        """Account for ``pod`` on its node (``pod.node_name``), in every view."""
        info = self._map[pod.node_name]
        info.add_pod(pod)
        if pod.volumes:
            self._count_pvcs(pod, 1)
        if self.table is not None:
            self.table.add_pod(self.table.rows[pod.node_name], pod)
        if pod.has_affinity:
            self._affinity_dirty = True

    def remove_pod(self, pod: Pod) -> bool:
        """Stop accounting for ``pod`` on its node; False if it was not there."""
        info = self._map.get(pod.node_name)
        if info is None:
            return False
        stored = next((p.pod for p in info.pods if p.pod.key == pod.key), None)
        if stored is None or not info.remove_pod(stored):
            return False
        if stored.volumes:
            self._count_pvcs(stored, -1)
        if self.table is not None:
            self.table.remove_pod(self.table.rows[pod.node_name], stored)
        if stored.has_affinity:
            self._affinity_dirty = True
        return True

    def _count_pvcs(self, pod: Pod, sign: int) -> None:
        for volume in pod.volumes:
            if volume.kind == "persistentVolumeClaim":
                key = f"{pod.namespace}/{volume.claim_name}"
                count = self._used_pvcs.get(key, 0) + sign
                if count > 0:
                    self._used_pvcs[key] = count
                else:
                    self._used_pvcs.pop(key, None)

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether an assigned (or assumed) pod uses the claim ``namespace/name``
        (upstream's ``StorageInfos().IsPVCUsedByPods``)."""
        return key in self._used_pvcs

    @classmethod
    def from_objects(
        cls, nodes: Sequence[Node], pods: Iterable[Pod], *, columnar: bool = False
    ) -> Snapshot:
        """Build a snapshot of ``nodes`` with the assigned, non-terminal ``pods`` on them.

        Pods bound to nodes not in the list are ignored, as the cache ignores them until
        their node appears.
        """
        infos = {n.name: NodeInfo(n) for n in node_tree_order(nodes)}
        for pod in pods:
            if pod.node_name and not pod.is_terminal:
                info = infos.get(pod.node_name)
                if info is not None:
                    info.add_pod(pod)
        image_nodes: dict[str, list[int]] = {}
        for node in nodes:
            # A name listed twice on one node still counts that node once.
            names_on_node: dict[str, int] = {}
            for image in node.images:
                for name in image.names:
                    names_on_node.setdefault(name, image.size_bytes)
            for name, size in names_on_node.items():
                entry = image_nodes.setdefault(name, [size, 0])
                entry[1] += 1
        states = {
            name: ImageStateSummary(size, count) for name, (size, count) in image_nodes.items()
        }
        for info in infos.values():
            info.image_states = {
                name: states[name] for image in info.node.images for name in image.names
            }
        return cls(infos.values(), columnar=columnar)

    def get(self, node_name: str) -> NodeInfo:
        """The node info of ``node_name``; raises KeyError if absent."""
        return self._map[node_name]

    def find(self, node_name: str) -> NodeInfo | None:
        return self._map.get(node_name)

    def position(self, node_name: str) -> int | None:
        """Where ``node_name`` is in :meth:`list` (None if absent)."""
        positions = self._positions
        if positions is None:
            # Built once per snapshot, on first use: nodes do not change within one.
            positions = self._positions = {ni.name: i for i, ni in enumerate(self._list)}
        return positions.get(node_name)

    def positions_of(self, node_names: Iterable[str]) -> builtins.list[int]:
        """The sorted positions in :meth:`list` of those ``node_names`` that exist: a
        PreFilterResult's nodes in node-tree order, at a cost in their number, not in
        the cluster's."""
        table = self.table
        if table is not None:
            rows = table.rows
            return sorted(rows[name] for name in node_names if name in rows)
        found = (self.position(name) for name in node_names)
        return sorted(p for p in found if p is not None)

    def have_pods_with_affinity_list(self) -> list[NodeInfo]:
        if self._affinity_dirty:
            self.refresh_affinity_lists()
        return self._with_affinity

    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]:
        if self._affinity_dirty:
            self.refresh_affinity_lists()
        return self._with_required_anti_affinity

    def __len__(self) -> int:
        return len(self._list)

    def refresh_affinity_lists(self) -> None:
        """Recompute the affinity lists after pods were added or removed in place."""
        self._with_affinity = [ni for ni in self._list if ni.pods_with_affinity]
        self._with_required_anti_affinity = [
            ni for ni in self._list if ni.pods_with_required_anti_affinity
        ]
        self._affinity_dirty = False

    def list(self) -> builtins.list[NodeInfo]:
        """All node infos, in node-tree order."""
        return self._list
