"""NodeVolumeLimits over the node table: per-node attach counts kept between pods.

The per-node Filter resolves the volumes of every pod on a node, for every node, for every
pod scheduled — upstream's cost, and too much in Python at thousands of nodes. Here the
volumes attached to each node (by its pods, and by VolumeAttachments) are resolved once
and kept, per driver, as count columns; a node is resolved again only when a pod with
storage volumes comes to it or leaves it (``NodeTable.volume_versions``), or when a
storage object its resolution read changes (``ClusterLister.storage_changes``); every node
when a CSINode changes, when the log of changes no longer reaches back, or when the nodes
change (a new table). The pod being scheduled is resolved once per kind of CSINode (none, or its
migrated plugins), which is all its resolution depends on. The test suite holds the
answers to the per-node Filter's.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.handle import ClusterLister
from kubesched.framework.interface import Status
from kubesched.framework.types import NodeInfo
from kubesched.framework.vector import NodeVerdicts
from kubesched.objects.pod import Pod
from kubesched.objects.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from kubesched.objects.storage.changes import (
    attachments_key,
    claim_key,
    class_key,
    csi_node_key,
    volume_key,
)
from kubesched.plugins.nodevolumelimits.volumes import (
    StorageReader,
    attachable_volumes,
    attachment_volumes,
    volume_limits,
)

IntArray = npt.NDArray[np.int64]

_EXCEEDED = Status.unschedulable("node(s) exceed max volume count")
_CSI_NODE = csi_node_key("")
_ATTACHMENTS = attachments_key("")


class _RecordingReader:
    """A StorageReader that remembers the change key of every lookup (found or not: a
    claim missing now counts once it is created)."""

    def __init__(self, reader: StorageReader) -> None:
        self._reader = reader
        self.keys: set[str] = set()

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        self.keys.add(volume_key(name))
        return self._reader.persistent_volume(name)

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        self.keys.add(claim_key(namespace, name))
        return self._reader.persistent_volume_claim(namespace, name)

    def storage_class(self, name: str) -> StorageClass | None:
        self.keys.add(class_key(name))
        return self._reader.storage_class(name)

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        # Changes of a node's attachments are matched to the node's row directly.
        return self._reader.volume_attachments(node_name)


class NodeAttachments:
    """What is attached to each node of one node table, kept in step with it."""

    def __init__(self) -> None:
        self._table: NodeTable | None = None
        self._storage_version = -1
        self._versions: IntArray = np.zeros(0, dtype=np.int64)
        self._csi_nodes: list[CSINode | None] = []
        #: Per row, the id of its kind of CSINode (see ``_signatures``).
        self._signature: IntArray = np.zeros(0, dtype=np.int64)
        #: One representative CSINode (or None) per signature id.
        self._signatures: list[CSINode | None] = []
        #: Driver → per row its limit (-1: none).
        self._limits: dict[str, IntArray] = {}
        #: Per row, whether its CSINode reports any limit.
        self._has_limits: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        #: Per row: the volumes of its pods (unique name → driver) and of its
        #: VolumeAttachments, and the error resolving its pods gave.
        self._pod_volumes: dict[int, dict[str, str]] = {}
        self._va_volumes: dict[int, dict[str, str]] = {}
        self._errors: dict[int, Status] = {}
        #: Driver → per row how many volumes are attached (pods ∪ VolumeAttachments).
        self._attached: dict[str, IntArray] = {}
        #: Unique volume name → rows whose pods use it.
        self._rows_of: dict[str, set[int]] = {}
        self._names: list[str] = []
        #: Per row, the change keys of the storage objects its resolution read, and the
        #: reverse: a change of one of them resolves those rows again.
        self._row_deps: dict[int, set[str]] = {}
        self._dependents: dict[str, set[int]] = {}

    # --- keeping in step ---------------------------------------------------------------

    def sync(
        self,
        table: NodeTable,
        infos: Sequence[NodeInfo],
        cluster: ClusterLister,
        prefix: str,
    ) -> None:
        """Bring the counts up to date with ``table`` (whose rows are ``infos``)."""
        version = cluster.storage_version()
        if table is not self._table:
            self._rebuild(table, infos, cluster, prefix, version)
            return
        stale: set[int] = set()
        if version != self._storage_version:
            changes = cluster.storage_changes(self._storage_version)
            if changes is None or any(k.startswith(_CSI_NODE) for k in changes):
                # Limits and migrations come from the CSINodes: start over.
                self._rebuild(table, infos, cluster, prefix, version)
                return
            self._storage_version = version
            for key in changes:
                stale |= self._dependents.get(key, set())
                if key.startswith(_ATTACHMENTS):
                    row = table.rows.get(key[len(_ATTACHMENTS) :])
                    if row is not None:
                        stale.add(row)
        changed = np.flatnonzero(table.volume_versions != self._versions)
        if len(changed):
            stale.update(changed.tolist())
            self._versions[changed] = table.volume_versions[changed]
        for row in sorted(stale):
            self._resolve_row(row, infos[row], cluster, prefix)

    def _rebuild(
        self,
        table: NodeTable,
        infos: Sequence[NodeInfo],
        cluster: ClusterLister,
        prefix: str,
        version: int,
    ) -> None:
        n = table.size
        self._table = table
        self._names = table.names
        self._storage_version = version
        self._versions = table.volume_versions.copy()
        self._csi_nodes = [cluster.csi_node(name) for name in table.names]
        ids: dict[Hashable, int] = {}
        self._signatures = []
        signature = np.zeros(n, dtype=np.int64)
        self._limits = {}
        self._has_limits = np.zeros(n, dtype=np.bool_)
        for row, csi_node in enumerate(self._csi_nodes):
            key = None if csi_node is None else csi_node.migrated_plugins
            sig = ids.get(key)
            if sig is None:
                sig = ids[key] = len(self._signatures)
                self._signatures.append(csi_node)
            signature[row] = sig
            limits = volume_limits(csi_node)
            if limits:
                self._has_limits[row] = True
                for driver, limit in limits.items():
                    column = self._limits.get(driver)
                    if column is None:
                        column = self._limits[driver] = np.full(n, -1, dtype=np.int64)
                    column[row] = limit
        self._signature = signature
        self._pod_volumes = {}
        self._va_volumes = {}
        self._errors = {}
        self._attached = {}
        self._rows_of = {}
        self._row_deps = {}
        self._dependents = {}
        rows = set(np.flatnonzero(table.disk_pods).tolist())
        rows.update(row for row, name in enumerate(table.names) if cluster.volume_attachments(name))
        for row in sorted(rows):
            self._resolve_row(row, infos[row], cluster, prefix)

    def _resolve_row(self, row: int, info: NodeInfo, cluster: StorageReader, prefix: str) -> None:
        """Resolve the volumes of node ``row`` (its pods', its VolumeAttachments') again,
        its counts, and which storage objects they were read from."""
        old = self._pod_volumes.pop(row, {})
        for unique in old:
            rows = self._rows_of.get(unique)
            if rows is not None:
                rows.discard(row)
                if not rows:
                    del self._rows_of[unique]
        for key in self._row_deps.pop(row, ()):
            dependents = self._dependents.get(key)
            if dependents is not None:
                dependents.discard(row)
                if not dependents:
                    del self._dependents[key]
        self._errors.pop(row, None)
        for column in self._attached.values():
            column[row] = 0
        reader = _RecordingReader(cluster)
        csi_node = self._csi_nodes[row]
        volumes: dict[str, str] = {}
        for pod_info in info.pods:
            status = attachable_volumes(pod_info.pod, csi_node, reader, False, prefix, volumes)
            if status is not None:
                self._errors[row] = status
                break
        va = attachment_volumes(self._names[row], reader)
        if va:
            self._va_volumes[row] = va
        else:
            self._va_volumes.pop(row, None)
        if reader.keys:
            self._row_deps[row] = reader.keys
            for key in reader.keys:
                self._dependents.setdefault(key, set()).add(row)
        if volumes:
            self._pod_volumes[row] = volumes
            for unique in volumes:
                self._rows_of.setdefault(unique, set()).add(row)
        counts: dict[str, int] = {}
        for driver in volumes.values():
            counts[driver] = counts.get(driver, 0) + 1
        for unique, driver in self._va_volumes.get(row, {}).items():
            if unique not in volumes:
                counts[driver] = counts.get(driver, 0) + 1
        for driver, count in counts.items():
            counted = self._attached.get(driver)
            if counted is None:
                counted = self._attached[driver] = np.zeros(len(self._versions), dtype=np.int64)
            counted[row] = count

    # --- Filter -----------------------------------------------------------------------

    def filter(
        self,
        pod: Pod,
        table: NodeTable,
        rows: IntArray,
        infos: Sequence[NodeInfo],
        cluster: ClusterLister,
        prefix: str,
    ) -> NodeVerdicts | None:
        """The per-node Filter's verdicts for the nodes at ``rows``."""
        self.sync(table, infos, cluster, prefix)
        codes = np.zeros(len(rows), dtype=np.int8)
        statuses: list[Status] = []
        signatures = self._signature[rows]
        for sig in np.unique(signatures).tolist():
            at: IntArray | None = None
            sig_rows = rows
            if len(self._signatures) > 1:
                at = np.flatnonzero(signatures == sig)
                sig_rows = rows[at]
            new: dict[str, str] = {}
            status = attachable_volumes(pod, self._signatures[sig], cluster, True, prefix, new)
            if status is not None:
                statuses.append(status)
                _mark(codes, at, len(statuses))
                continue
            if not new:
                continue
            rejected = self._exceeded(new, sig_rows)
            errors = self._row_errors(sig_rows)
            for status, mask in errors:
                statuses.append(status)
                _mark(codes, _select(at, mask), len(statuses))
                rejected &= ~mask
            if rejected.any():
                statuses.append(_EXCEEDED)
                _mark(codes, _select(at, rejected), len(statuses))
        if not statuses or not np.count_nonzero(codes):
            return None
        return NodeVerdicts(codes, tuple(statuses))

    def _exceeded(self, new: dict[str, str], rows: IntArray) -> npt.NDArray[np.bool_]:
        """Which of ``rows`` the pod's new volumes would push past a driver's limit."""
        rejected = np.zeros(len(rows), dtype=np.bool_)
        by_driver: dict[str, list[str]] = {}
        for unique, driver in new.items():
            by_driver.setdefault(driver, []).append(unique)
        for driver, uniques in by_driver.items():
            limits = self._limits.get(driver)
            if limits is None:
                continue
            limit = limits[rows]
            has_limit = limit >= 0
            if not has_limit.any():
                continue
            # A volume already attached for another pod of the node is not new there.
            count = np.full(len(rows), len(uniques), dtype=np.int64)
            for unique in uniques:
                holders = self._rows_of.get(unique)
                if holders:
                    count -= np.isin(rows, np.fromiter(holders, dtype=np.int64))
            attached = self._attached.get(driver)
            total = count if attached is None else attached[rows] + count
            # As upstream, only a driver that still has new volumes on the node is checked.
            rejected |= has_limit & (count > 0) & (total > limit)
        return rejected

    def _row_errors(self, rows: IntArray) -> list[tuple[Status, npt.NDArray[np.bool_]]]:
        """The errors of resolving the pods of ``rows``, where the node has limits (as
        upstream, which resolves a node's pods only then)."""
        if not self._errors:
            return []
        out = []
        for row, status in self._errors.items():
            mask = (rows == row) & self._has_limits[rows]
            if mask.any():
                out.append((status, mask))
        return out


def _select(at: IntArray | None, mask: npt.NDArray[np.bool_]) -> IntArray:
    positions = np.flatnonzero(mask)
    return positions if at is None else at[positions]


def _mark(codes: npt.NDArray[np.int8], at: IntArray | None, code: int) -> None:
    if at is None:
        codes[:] = code
    else:
        codes[at] = code


__all__ = ["NodeAttachments"]
