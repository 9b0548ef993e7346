"""The cache's view for scheduling cycles: one ``framework.snapshot.Snapshot``.

Upstream copies changed NodeInfos into a new snapshot at the start of every cycle
(``UpdateSnapshot``). Here the cache keeps a single Snapshot, with its columnar
NodeTable, and applies pod events to it in place (``Snapshot.add_pod`` /
``remove_pod``), so a cycle pays nothing to get it. Nodes change rarely: any node add,
remove or real change marks the snapshot stale, and it is rebuilt once, from the
cache's NodeInfos, when the next cycle asks for it. The NodeInfos are shared between
the cache and the snapshot; only nodes the cache has seen appear in it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.framework.snapshot import Snapshot, node_tree_order
from kubesched.framework.types import ImageStateSummary, NodeInfo


def set_image_states(infos: Iterable[NodeInfo]) -> None:
    """Give each NodeInfo the summary of its images: size, and on how many nodes
    (upstream's ``imageStates`` in the cache; a name listed twice counts one node)."""
    infos = list(infos)
    totals: dict[str, list[int]] = {}
    for info in infos:
        names_on_node: dict[str, int] = {}
        for image in info.node.images:
            for name in image.names:
                names_on_node.setdefault(name, image.size_bytes)
        for name, size in names_on_node.items():
            entry = totals.setdefault(name, [size, 0])
            entry[1] += 1
    states = {name: ImageStateSummary(size, count) for name, (size, count) in totals.items()}
    for info in infos:
        info.image_states = {
            name: states[name] for image in info.node.images for name in image.names
        }


def build_snapshot(infos: Iterable[NodeInfo], *, columnar: bool) -> Snapshot:
    """A Snapshot of the NodeInfos that have a node, in node-tree order (zones
    interleaved), sharing them; image summaries are refreshed first."""
    with_node = {info.name: info for info in infos if info.has_node}
    set_image_states(with_node.values())
    ordered = node_tree_order([info.node for info in with_node.values()])
    return Snapshot((with_node[node.name] for node in ordered), columnar=columnar)
