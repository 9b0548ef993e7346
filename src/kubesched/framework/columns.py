"""Columnar node state: the whole cluster as arrays, for plugins that judge every node
at once.

A Python loop over thousands of NodeInfos for every pod is what makes a scheduler in
Python slow; kube-scheduler samples nodes for the same reason. The ``NodeTable`` keeps
what the in-tree plugins read — allocatable and requested resources, pod counts, label
values, taints, images, and an index of the pods on each node by label set — as numpy
arrays in the snapshot's node order, updated in place when a pod is added or removed.
Nodes change rarely: the table is rebuilt when they do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubesched.framework.types import NodeInfo
from kubesched.objects.affinity import PodAffinityTerm
from kubesched.objects.pod import Pod
from kubesched.objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from kubesched.objects.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    parse_int64,
)
from kubesched.objects.storage.sources import has_storage_volumes
from kubesched.objects.taints import Taint

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

#: Fixed resource columns; scalar resources get columns after them as they appear.
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
ABSENT = -1  # label code of a node without the label
TERM_REQUIRED_AFFINITY = "requiredAffinity"
TERM_REQUIRED_ANTI_AFFINITY = "requiredAntiAffinity"
TERM_PREFERRED_AFFINITY = "preferredAffinity"
TERM_PREFERRED_ANTI_AFFINITY = "preferredAntiAffinity"


@dataclass
class LabelColumn:
    """One label key over all nodes: a code per node (ABSENT when unset)."""

    codes: npt.NDArray[np.int32]
    values: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    _ints: tuple[IntArray, BoolArray] | None = None

    def code(self, value: str) -> int:
        """The code of ``value`` (ABSENT if no node has it)."""
        return self.index.get(value, ABSENT)

    def ints(self) -> tuple[IntArray, BoolArray]:
        """Each node's value as an int64 and whether it is one (for Gt/Lt), parsed as
        upstream parses it (strconv.ParseInt); unset or non-integer values are invalid."""
        if self._ints is None or len(self._ints[0]) != len(self.values):
            parsed = [parse_int64(v) for v in self.values]
            self._ints = (
                np.array([0 if p is None else p for p in parsed], dtype=np.int64),
                np.array([p is not None for p in parsed], dtype=np.bool_),
            )
        values, valid = self._ints
        present = self.codes >= 0
        codes = np.where(present, self.codes, 0)
        if not len(values):
            return np.zeros(self.codes.shape, dtype=np.int64), np.zeros(
                self.codes.shape, dtype=np.bool_
            )
        return values[codes], present & valid[codes]


class PodGroup:
    """Pods of one namespace with one label set (and one terminating state): how many of
    them each node holds."""

    __slots__ = ("counts", "deleting", "labels", "namespace", "total")

    def __init__(self, namespace: str, labels: Mapping[str, str], deleting: bool, size: int):
        self.namespace = namespace
        self.labels = labels
        self.deleting = deleting
        self.counts = np.zeros(size, dtype=np.int64)
        self.total = 0


class NodeTable:
    """The columns; row ``i`` is ``node_infos[i]`` of the snapshot that built it."""

    def __init__(self, node_infos: Sequence[NodeInfo]) -> None:
        n = len(node_infos)
        self.size = n
        self.names = [ni.name for ni in node_infos]
        self.rows = {name: i for i, name in enumerate(self.names)}
        self.resources: list[str] = list(BASE_RESOURCES)
        self.resource_index = {r: i for i, r in enumerate(self.resources)}
        for ni in node_infos:
            for name in (*ni.allocatable.scalar, *ni.requested.scalar):
                self._resource_column(name)
        r = len(self.resources)
        self.allocatable = np.zeros((n, r), dtype=np.int64)
        self.requested = np.zeros((n, r), dtype=np.int64)
        self.allowed_pods = np.zeros(n, dtype=np.int64)
        self.pod_count = np.zeros(n, dtype=np.int64)
        self.non_zero_cpu = np.zeros(n, dtype=np.int64)
        self.non_zero_memory = np.zeros(n, dtype=np.int64)
        self.unschedulable = np.zeros(n, dtype=np.bool_)
        self.labels: dict[str, LabelColumn] = {}
        self.taints: list[Taint] = []
        self.taint_index: dict[Taint, int] = {}
        self.node_taints: list[tuple[int, ...]] = []
        self.host_ports = np.zeros(n, dtype=np.int64)  # used host ports per node
        #: Per node, how many of its pods have storage volumes (claims, ephemeral claims,
        #: disks, CSI), and a version bumped whenever one of those comes or goes: the
        #: volume plugins recompute only the nodes whose version moved.
        self.disk_pods = np.zeros(n, dtype=np.int64)
        self.volume_versions = np.zeros(n, dtype=np.int64)
        #: image name → (rows of the nodes that have it, its size, how many nodes have it)
        self.images: dict[str, tuple[IntArray, int, int]] = {}
        #: (kind, term, weight) → per node, how many of its pods carry that affinity term;
        #: kinds are the TERM_* constants.
        self.terms: dict[tuple[str, PodAffinityTerm, int], IntArray] = {}
        self.groups: dict[tuple[str, frozenset[tuple[str, str]], bool], PodGroup] = {}
        self._groups_by_label: dict[tuple[str, str], list[PodGroup]] = {}
        #: Bumped on every pod change, so plugins can cache per-version results.
        self.version = 0
        for i, ni in enumerate(node_infos):
            node = ni.node
            for name in self.resources:
                self.allocatable[i, self.resource_index[name]] = node.allocatable.get(name)
            self.allowed_pods[i] = node.allocatable.allowed_pod_number
            self.unschedulable[i] = node.unschedulable
            self.node_taints.append(tuple(self._taint_id(t) for t in node.taints))
            for key, value in node.labels.items():
                self._label(key).codes[i] = self._value_code(key, value)
            for info in ni.pods:
                self.add_pod(i, info.pod)
        image_rows: dict[str, list[int]] = {}
        image_state: dict[str, tuple[int, int]] = {}
        for i, ni in enumerate(node_infos):
            for name, summary in ni.image_states.items():
                image_rows.setdefault(name, []).append(i)
                image_state[name] = (summary.size, summary.num_nodes)
        self.images = {
            name: (np.array(rows, dtype=np.int64), *image_state[name])
            for name, rows in image_rows.items()
        }
        self._taint_matrix: BoolArray | None = None

    # --- building ---------------------------------------------------------------------

    def _resource_column(self, name: str) -> int:
        index = self.resource_index.get(name)
        if index is None:
            index = len(self.resources)
            self.resources.append(name)
            self.resource_index[name] = index
            if hasattr(self, "allocatable"):
                pad = np.zeros((self.size, 1), dtype=np.int64)
                self.allocatable = np.hstack([self.allocatable, pad])
                self.requested = np.hstack([self.requested, pad.copy()])
        return index

    def _label(self, key: str) -> LabelColumn:
        column = self.labels.get(key)
        if column is None:
            column = LabelColumn(np.full(self.size, ABSENT, dtype=np.int32))
            self.labels[key] = column
        return column

    def _value_code(self, key: str, value: str) -> int:
        column = self.labels[key] if key in self.labels else self._label(key)
        code = column.index.get(value)
        if code is None:
            code = len(column.values)
            column.values.append(value)
            column.index[value] = code
        return code

    def _taint_id(self, taint: Taint) -> int:
        tid = self.taint_index.get(taint)
        if tid is None:
            tid = len(self.taints)
            self.taints.append(taint)
            self.taint_index[taint] = tid
        return tid

    # --- reading ----------------------------------------------------------------------

    def label(self, key: str) -> LabelColumn | None:
        """The column of label ``key`` (None if no node has it)."""
        return self.labels.get(key)

    def resource(self, name: str) -> int | None:
        """The column index of resource ``name`` (None if no node or pod has it)."""
        return self.resource_index.get(name)

    def taint_matrix(self) -> BoolArray:
        """``[node, taint id]``: which distinct taints each node carries."""
        if self._taint_matrix is None:
            m = np.zeros((self.size, len(self.taints)), dtype=np.bool_)
            for i, ids in enumerate(self.node_taints):
                if ids:
                    m[i, list(ids)] = True
            self._taint_matrix = m
        return self._taint_matrix

    def pods_matching(
        self,
        selector: LabelSelector | None,
        namespaces: Iterable[str] | None = None,
        *,
        include_deleting: bool = True,
    ) -> IntArray:
        """Per node, how many of its pods ``selector`` selects, in ``namespaces`` (None: any).

        A None selector selects nothing, as upstream's nil selector.
        """
        out = np.zeros(self.size, dtype=np.int64)
        if selector is None:
            return out
        wanted = None if namespaces is None else set(namespaces)
        for group in self._candidate_groups(selector):
            if group.total == 0 or (group.deleting and not include_deleting):
                continue
            if wanted is not None and group.namespace not in wanted:
                continue
            if selector.matches(group.labels):
                out += group.counts
        return out

    def _candidate_groups(self, selector: LabelSelector) -> Iterable[PodGroup]:
        # An In requirement narrows the search to groups having one of its values; other
        # selectors look at every group (few: pods of one workload share a label set).
        best: list[PodGroup] | None = None
        for req in selector.requirements:
            if req.operator != "In":
                continue
            found: list[PodGroup] = []
            for value in req.values:
                found.extend(self._groups_by_label.get((req.key, value), ()))
            if best is None or len(found) < len(best):
                best = found
        return self.groups.values() if best is None else best

    # --- pods -------------------------------------------------------------------------

    def add_pod(self, row: int, pod: Pod) -> None:
        """Account for ``pod`` on node ``row``."""
        self._update(row, pod, 1)

    def remove_pod(self, row: int, pod: Pod) -> None:
        """Stop accounting for ``pod`` on node ``row``."""
        self._update(row, pod, -1)

    def _update(self, row: int, pod: Pod, sign: int) -> None:
        req = pod.requests
        r = self.requested[row]
        r[0] += sign * req.milli_cpu
        r[1] += sign * req.memory
        r[2] += sign * req.ephemeral_storage
        for name, value in req.scalar.items():
            # A resource no node had yet grows the matrices first, then is counted.
            column = self._resource_column(name)
            self.requested[row, column] += sign * value
        self.pod_count[row] += sign
        self.non_zero_cpu[row] += sign * pod.non_zero_milli_cpu
        self.non_zero_memory[row] += sign * pod.non_zero_memory
        ports = len(pod.host_ports)
        if ports:
            self.host_ports[row] += sign * ports
        if pod.volumes and has_storage_volumes(pod):
            self.disk_pods[row] += sign
            self.volume_versions[row] += 1
        if pod.has_affinity:
            self._update_terms(row, pod, sign)
        key = (pod.namespace, frozenset(pod.labels.items()), pod.deleting)
        group = self.groups.get(key)
        if group is None:
            group = PodGroup(pod.namespace, pod.labels, pod.deleting, self.size)
            self.groups[key] = group
            for item in pod.labels.items():
                self._groups_by_label.setdefault(item, []).append(group)
        group.counts[row] += sign
        group.total += sign
        self.version += 1

    def _update_terms(self, row: int, pod: Pod, sign: int) -> None:
        entries: list[tuple[str, PodAffinityTerm, int]] = [
            *((TERM_REQUIRED_AFFINITY, t, 0) for t in pod.required_affinity),
            *((TERM_REQUIRED_ANTI_AFFINITY, t, 0) for t in pod.required_anti_affinity),
            *((TERM_PREFERRED_AFFINITY, w.term, w.weight) for w in pod.preferred_affinity),
            *(
                (TERM_PREFERRED_ANTI_AFFINITY, w.term, w.weight)
                for w in pod.preferred_anti_affinity
            ),
        ]
        for key in entries:
            counts = self.terms.get(key)
            if counts is None:
                counts = self.terms[key] = np.zeros(self.size, dtype=np.int64)
            counts[row] += sign

    def terms_of(self, kind: str) -> list[tuple[PodAffinityTerm, int, IntArray]]:
        """The (term, weight, per-node count) of existing pods' terms of ``kind``."""
        return [
            (term, weight, counts)
            for (k, term, weight), counts in self.terms.items()
            if k == kind and counts.any()
        ]


def rows_of(table: NodeTable, names: Iterable[str]) -> IntArray:
    """Row indices of ``names`` (unknown names skipped)."""
    return np.fromiter((table.rows[n] for n in names if n in table.rows), dtype=np.int64)


def requirement_mask(table: NodeTable, req: Requirement) -> BoolArray:
    """Which nodes' labels satisfy ``req`` (vectorized ``Requirement.matches``)."""
    column = table.labels.get(req.key)
    op = req.operator
    if column is None:
        value = op in ("NotIn", "DoesNotExist")
        return np.full(table.size, value, dtype=np.bool_)
    codes = column.codes
    if op == "Exists":
        return codes >= 0
    if op == "DoesNotExist":
        return codes < 0
    if op in ("In", "NotIn"):
        wanted = [column.index[v] for v in req.values if v in column.index]
        hit = np.isin(codes, wanted) if wanted else np.zeros(table.size, dtype=np.bool_)
        return hit if op == "In" else ~hit
    bound = parse_int64(req.values[0]) if len(req.values) == 1 else None
    if bound is None:
        return np.zeros(table.size, dtype=np.bool_)
    values, valid = column.ints()
    return valid & (values > bound if op == "Gt" else values < bound)


def term_mask(table: NodeTable, term: NodeSelectorTerm) -> BoolArray:
    """Which nodes satisfy a node selector term (an empty term matches none)."""
    if not term.match_expressions and not term.match_fields:
        return np.zeros(table.size, dtype=np.bool_)
    mask = np.ones(table.size, dtype=np.bool_)
    for req in term.match_expressions:
        mask &= requirement_mask(table, req)
    for req in term.match_fields:
        # metadata.name is the only field: In/NotIn over node names.
        hit = np.zeros(table.size, dtype=np.bool_)
        hit[rows_of(table, req.values)] = True
        mask &= hit if req.operator == "In" else ~hit
    return mask


def node_selector_mask(table: NodeTable, selector: NodeSelector) -> BoolArray:
    """Which nodes satisfy any term of ``selector``."""
    mask = np.zeros(table.size, dtype=np.bool_)
    for term in selector.terms:
        mask |= term_mask(table, term)
    return mask


def match_labels_mask(table: NodeTable, labels: Mapping[str, str]) -> BoolArray:
    """Which nodes carry every ``key: value`` of ``labels`` (``spec.nodeSelector``)."""
    mask = np.ones(table.size, dtype=np.bool_)
    for key, value in labels.items():
        column = table.labels.get(key)
        if column is None or value not in column.index:
            return np.zeros(table.size, dtype=np.bool_)
        mask &= column.codes == column.index[value]
    return mask
