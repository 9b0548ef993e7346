"""The scoring core shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Mirrors upstream's ``noderesources/resource_allocation.go``: for each configured resource,
find what the node can give (allocatable) and what it would hold with the pod on it
(requested), then hand both lists to a strategy function that turns them into a score.

Two upstream rules matter for the numbers:

* Fit scores cpu and memory with the *non-zero* requests (a container without a request
  counts as 100m / 200Mi, on the node and for the pod), so that pods without requests
  still spread. BalancedAllocation uses the real requests (``use_requested``).
* An extended (scalar) resource the pod does not request is left out of the score, as is
  any resource the node does not have: both come out as allocatable 0, which every
  strategy skips.

``score_nodes`` does the same for all nodes of a ``NodeTable`` at once, handing a vector
strategy one column per resource instead of lists per node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from kubesched.framework.args import ArgsReader, FieldError
from kubesched.framework.columns import NodeTable
from kubesched.framework.interface import Status
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from kubesched.plugins.noderesources.vectorized import (
    AllocCache,
    AllocColumn,
    IntArray,
    ScoredColumn,
    VectorScorer,
    gather_first,
)

#: ``scorer(requested, allocatable) -> score``; entries with allocatable 0 are to be skipped.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource taken into a score, with its weight (upstream ``config.ResourceSpec``)."""

    name: str
    weight: int = 1


#: cpu and memory with weight 1: what both plugins score when no resources are configured.
DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def decode_resource_specs(
    raw: object, path: str, errors: list[FieldError]
) -> tuple[ResourceSpec, ...]:
    """Decode ``[{name, weight}]`` with the v1 defaulting: an absent or empty list means
    ``DEFAULT_RESOURCES``, an absent or zero weight means 1. Problems go to ``errors``."""
    if raw is None:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        errors.append(FieldError.invalid(path, raw, "must be a list"))
        return DEFAULT_RESOURCES
    specs: list[ResourceSpec] = []
    for i, item in enumerate(raw):
        item_path = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            errors.append(FieldError.invalid(item_path, item, "must be an object"))
            continue
        reader = ArgsReader(item, ("name", "weight"))
        name = reader.get("name", str, "")
        weight = reader.get("weight", int, 0)
        nested_errors(reader, item_path, errors)
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs) or DEFAULT_RESOURCES


def nested_errors(reader: ArgsReader, path: str, errors: list[FieldError]) -> None:
    """Move the errors of ``reader`` (over a nested object) into ``errors``, with their
    paths rooted at ``path``: ArgsReader only knows the keys it read."""
    errors.extend(replace(e, path=f"{path}.{e.path}") for e in reader.errors)


_CPU, _MEMORY, _EPHEMERAL, _OTHER = range(4)


def _kind(name: str) -> int:
    if name == CPU:
        return _CPU
    if name == MEMORY:
        return _MEMORY
    if name == EPHEMERAL_STORAGE:
        return _EPHEMERAL
    return _OTHER


class ResourceAllocationScorer:
    """Computes per-resource (requested, allocatable) for a node and scores them."""

    __slots__ = (
        "_kinds",
        "_plan",
        "name",
        "resources",
        "scorer",
        "use_requested",
        "vector_scorer",
    )

    def __init__(
        self,
        name: str,
        resources: Sequence[ResourceSpec],
        scorer: Scorer,
        *,
        use_requested: bool = False,
        vector_scorer: VectorScorer | None = None,
    ) -> None:
        self.name = name
        self.resources = tuple(resources)
        self.scorer = scorer
        #: The same strategy over arrays, for ``score_nodes``.
        self.vector_scorer = vector_scorer
        self._plan: _Plan | None = None
        #: True: score cpu/memory with the real requests; False: with the non-zero ones.
        self.use_requested = use_requested
        # Resolved once: Score runs for every node, and string dispatch there adds up.
        self._kinds = tuple(
            (_kind(r.name), r.name, is_scalar_resource_name(r.name)) for r in self.resources
        )

    def pod_requests(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request for each configured resource, in configuration order."""
        return tuple(self._pod_request(pod, kind, name) for kind, name, _ in self._kinds)

    def _pod_request(self, pod: Pod, kind: int, name: str) -> int:
        if kind == _CPU:
            return pod.requests.milli_cpu if self.use_requested else pod.non_zero_milli_cpu
        if kind == _MEMORY:
            return pod.requests.memory if self.use_requested else pod.non_zero_memory
        return pod.requests.get(name)

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        """The node's score for a pod with ``pod_requests`` (from ``pod_requests()``)."""
        kinds = self._kinds
        if not kinds:
            return 0, Status.error("resources not found")
        allocatable = node_info.allocatable
        requested = node_info.requested
        used = requested if self.use_requested else node_info.non_zero_requested
        req_list = [0] * len(kinds)
        alloc_list = [0] * len(kinds)
        for i, (kind, name, scalar) in enumerate(kinds):
            pod_request = pod_requests[i]
            if kind == _CPU:
                alloc, total = allocatable.milli_cpu, used.milli_cpu + pod_request
            elif kind == _MEMORY:
                alloc, total = allocatable.memory, used.memory + pod_request
            elif kind == _EPHEMERAL:
                # Upstream keeps no non-zero figure for ephemeral storage.
                alloc = allocatable.ephemeral_storage
                total = requested.ephemeral_storage + pod_request
            else:
                if pod_request == 0 and scalar:
                    # An extended resource the pod does not ask for must not pull the
                    # score of the nodes that have it down (or up).
                    continue
                node_alloc = allocatable.scalar.get(name)
                if node_alloc is None:
                    continue
                alloc, total = node_alloc, requested.scalar.get(name, 0) + pod_request
            if alloc == 0:
                continue
            alloc_list[i] = alloc
            req_list[i] = total
        return self.scorer(req_list, alloc_list), None

    def score_nodes(
        self, table: NodeTable, rows: IntArray, pod_requests: Sequence[int]
    ) -> IntArray:
        """``score`` for the nodes at ``rows`` of ``table`` at once, the same numbers.

        Raises ValueError without resources (``score`` answers an Error status then; the
        factories never build such a scorer) or without a vector strategy.
        """
        if not self._kinds or self.vector_scorer is None:
            raise ValueError("resources not found")
        plan = self._plan
        if plan is None or plan.table is not table or plan.matrix is not table.allocatable:
            plan = self._plan = _Plan(self, table)
        columns: list[ScoredColumn] = [
            (index, alloc, used, pod_requests[index])
            for index, alloc, used, optional in plan.entries
            if not optional or pod_requests[index] != 0
        ]
        if gather_first(table, rows):
            gathered = [(i, alloc.take(rows), used[rows], p) for i, alloc, used, p in columns]
            return self.vector_scorer(gathered, len(rows))
        return self.vector_scorer(columns, table.size)[rows]


class _Plan:
    """Where each configured resource lives in one table: built once per table (and per
    allocatable matrix, which a new scalar resource replaces along with ``requested``)."""

    __slots__ = ("entries", "matrix", "table")

    def __init__(self, scorer: ResourceAllocationScorer, table: NodeTable) -> None:
        self.table = table
        self.matrix = table.allocatable
        alloc = AllocCache()
        #: (configured index, allocatable, used — a live view —, skipped when the pod
        #: does not request it)
        self.entries: list[tuple[int, AllocColumn, IntArray, bool]] = []
        for i, (kind, name, scalar) in enumerate(scorer._kinds):
            optional = False
            if kind == _CPU:
                column = 0
                used = table.requested[:, 0] if scorer.use_requested else table.non_zero_cpu
            elif kind == _MEMORY:
                column = 1
                used = table.requested[:, 1] if scorer.use_requested else table.non_zero_memory
            elif kind == _EPHEMERAL:
                column = 2
                used = table.requested[:, 2]
            else:
                # Not a resource a node can have, or one no node or pod has (no column):
                # skipped on every node, as in score. An extended resource the pod does
                # not request is skipped too.
                found = table.resource(name)
                if not scalar or found is None:
                    continue
                column, optional = found, True
                used = table.requested[:, column]
            self.entries.append((i, alloc.column(table, column), used, optional))


def is_best_effort(pod_requests: Sequence[int]) -> bool:
    """Whether the pod requests none of the scored resources."""
    return not any(pod_requests)
