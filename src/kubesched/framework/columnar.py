"""Filter and Score over the node table: the fast path of a scheduling attempt.

Plugins run one after the other, as in the per-node path, but each judges every node
still feasible at once: a vector plugin over arrays, any other plugin node by node over
what is left. A node's status is therefore the first rejection in plugin order, exactly as
when each node runs all its filters in turn. Nodes with nominated pods take the per-node
path, since those pods must be counted on them.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.runtime import (
    Framework,
    filter_status,
    normalize_error,
    range_error,
    score_error,
)
from kubesched.framework.types import NodeScore
from kubesched.framework.vector import (
    NodeInfoView,
    VectorFilterPlugin,
    VectorScoreExtensions,
    VectorScorePlugin,
)
from kubesched.objects.pod import Pod

if TYPE_CHECKING:
    from kubesched.framework.schedule import Diagnosis

IntArray = npt.NDArray[np.int64]


class ColumnarError(Exception):
    """A plugin fault in the fast path; carries the Error status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class _Kinds:
    """Which of a profile's plugins have vector forms; worked out once per Framework,
    since a Protocol isinstance check per plugin per pod costs more than the filter."""

    __slots__ = ("filters", "normalizers", "scorers")

    def __init__(self, fwk: Framework) -> None:
        self.filters = [isinstance(p, VectorFilterPlugin) for p in fwk.points["filter"]]
        self.scorers = [isinstance(p, VectorScorePlugin) for p in fwk.points["score"]]
        self.normalizers = [
            isinstance(p.score_extensions(), VectorScoreExtensions) for p in fwk.points["score"]
        ]


def _kinds(fwk: Framework) -> _Kinds:
    kinds = fwk.columnar_kinds
    if not isinstance(kinds, _Kinds):
        kinds = fwk.columnar_kinds = _Kinds(fwk)
    return kinds


def _nominated_rows(fwk: Framework, pod: Pod, table: NodeTable) -> set[int]:
    """Rows whose nodes hold nominated pods that this pod must count (priority >= its)."""
    rows: set[int] = set()
    nominator = fwk.nominator
    for name in nominator.nominated_nodes():
        row = table.rows.get(name)
        if row is None:
            continue
        for info in nominator.nominated_pods_for_node(name):
            if info.pod.priority >= pod.priority and info.pod.key != pod.key:
                rows.add(row)
                break
    return rows


def pass_filters(
    fwk: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    order: IntArray,
    diagnosis: Diagnosis,
    to_find: int,
) -> IntArray:
    """The feasible rows among ``order`` (in that order, at most ``to_find``), recording
    the rejected ones in ``diagnosis`` as the per-node path would."""
    if not fwk.has_filter_plugins():
        return order[:to_find]
    infos = fwk.snapshot.list()
    nominated = _nominated_rows(fwk, pod, table)
    remaining = order
    if nominated:
        remaining = order[~np.isin(order, list(nominated))]
    rejected: list[tuple[IntArray, npt.NDArray[np.integer], tuple[Status, ...]]] = []
    skip = state.skip_filter_plugins
    vector = _kinds(fwk).filters
    sampled = fwk.recorder if state.record_plugin_metrics else None
    for index, plugin in enumerate(fwk.points["filter"]):
        if not len(remaining):
            break
        if skip and plugin.name in skip:
            continue
        if vector[index]:
            started = time.perf_counter() if sampled is not None else 0.0
            try:
                verdicts = plugin.filter_nodes(state, pod, table, remaining)
            except Exception as err:
                raise ColumnarError(
                    filter_status(plugin.name, Status.error(f"{type(err).__name__}: {err}"))
                ) from err
            if sampled is not None:
                # One call judges every node: timed once, as one Filter execution.
                sampled.plugin_execution(plugin.name, "Filter", None, _since(started))
            if verdicts is None:
                continue
            codes = verdicts.codes
            failed = codes != 0
            if not failed.any():
                continue
            statuses = tuple(filter_status(plugin.name, st) for st in verdicts.statuses)
            for st in statuses:
                if st.code is Code.ERROR and np.any(codes[failed] == statuses.index(st) + 1):
                    raise ColumnarError(st)
            rejected.append((remaining[failed], codes[failed], statuses))
            remaining = remaining[~failed]
        else:
            keep = np.ones(len(remaining), dtype=np.bool_)
            codes_out = np.zeros(len(remaining), dtype=np.int32)
            seen: dict[Status, int] = {}
            for i, row in enumerate(remaining.tolist()):
                status = fwk.run_filter_plugin(plugin, state, pod, infos[row])
                if status is None:
                    continue
                if status.code is Code.ERROR:
                    raise ColumnarError(status)
                keep[i] = False
                codes_out[i] = seen.setdefault(status, len(seen) + 1)
            if not keep.all():
                rejected.append((remaining[~keep], codes_out[~keep], tuple(seen)))
                remaining = remaining[keep]
    feasible = remaining
    per_node: dict[int, Status] = {}
    if nominated:
        extra = []
        for row in sorted(nominated):
            status = fwk.run_filter_plugins_with_nominated_pods(state, pod, infos[row])
            if status is None or status.code is Code.SUCCESS:
                extra.append(row)
            elif status.code is Code.ERROR:
                raise ColumnarError(status)
            else:
                per_node[row] = status
        position = np.empty(table.size, dtype=np.int64)
        position[order] = np.arange(len(order))
        feasible = np.concatenate([remaining, np.array(extra, dtype=np.int64)])
        feasible = feasible[np.argsort(position[feasible], kind="stable")]
    cutoff: int | None = None
    if len(feasible) > to_find:
        position = np.empty(table.size, dtype=np.int64)
        position[order] = np.arange(len(order))
        cutoff = int(position[feasible[to_find - 1]])
        feasible = feasible[:to_find]
    _record(diagnosis, table, rejected, per_node, cutoff, order)
    return feasible


def _record(
    diagnosis: Diagnosis,
    table: NodeTable,
    rejected: list[tuple[IntArray, npt.NDArray[np.integer], tuple[Status, ...]]],
    per_node: dict[int, Status],
    cutoff: int | None,
    order: IntArray,
) -> None:
    position = None
    limit = 0 if cutoff is None else int(cutoff)
    if cutoff is not None:
        position = np.empty(table.size, dtype=np.int64)
        position[order] = np.arange(len(order))
    for rows, codes, statuses in rejected:
        if position is not None:
            kept = position[rows] <= limit
            rows, codes = rows[kept], codes[kept]
            if not len(rows):
                continue
        diagnosis.node_to_status.add_bulk(table.names, rows, codes, statuses)
        for code in np.unique(codes).tolist():
            diagnosis.add_plugin_status(statuses[code - 1])
    for row, status in per_node.items():
        if position is not None and position[row] > limit:
            continue
        diagnosis.node_to_status.set(table.names[row], status)
        diagnosis.add_plugin_status(status)


def prioritize(
    fwk: Framework, state: CycleState, pod: Pod, table: NodeTable, nodes: NodeInfoView
) -> tuple[dict[str, IntArray], IntArray]:
    """Each score plugin's normalized scores over ``nodes`` and the weighted totals."""
    rows = nodes.rows
    if not fwk.has_score_plugins():
        return {}, np.ones(len(rows), dtype=np.int64)
    status = fwk.run_pre_score_plugins(state, pod, nodes)
    if status is not None and status.code is not Code.SUCCESS:
        raise ColumnarError(status)
    recorder = fwk.recorder
    if recorder is None:
        return _score(fwk, state, pod, table, nodes)
    started = time.perf_counter()
    failure: Status | None = None
    try:
        return _score(fwk, state, pod, table, nodes)
    except ColumnarError as err:
        failure = err.status
        raise
    finally:
        recorder.extension_point("Score", failure, fwk.profile_name, _since(started))


def _since(started: float) -> float:
    return time.perf_counter() - started


def _score(
    fwk: Framework, state: CycleState, pod: Pod, table: NodeTable, nodes: NodeInfoView
) -> tuple[dict[str, IntArray], IntArray]:
    """Score (and normalize) with every score plugin; the Score extension point."""
    rows = nodes.rows
    sampled = fwk.recorder if state.record_plugin_metrics else None
    skip = state.skip_score_plugins
    totals = np.zeros(len(rows), dtype=np.int64)
    out: dict[str, IntArray] = {}
    kinds = _kinds(fwk)
    for index, plugin in enumerate(fwk.points["score"]):
        if skip and plugin.name in skip:
            continue
        started = time.perf_counter() if sampled is not None else 0.0
        if kinds.scorers[index]:
            try:
                scores = np.asarray(plugin.score_nodes(state, pod, table, rows), dtype=np.int64)
            except Exception as err:  # a plugin fault is an Error status, as per node
                failure = Status.error(f"{type(err).__name__}: {err}")
                raise ColumnarError(score_error(plugin.name, failure)) from err
        else:
            values = []
            for info in nodes:
                value, st = plugin.score(state, pod, info)
                if st is not None and st.code is not Code.SUCCESS:
                    raise ColumnarError(score_error(plugin.name, st))
                values.append(value)
            scores = np.array(values, dtype=np.int64)
        ext = plugin.score_extensions()
        if ext is not None:
            if kinds.normalizers[index]:
                try:
                    scores = np.asarray(ext.normalize_scores(state, pod, scores), dtype=np.int64)
                except Exception as err:
                    failure = Status.error(f"{type(err).__name__}: {err}")
                    raise ColumnarError(normalize_error(plugin.name, failure)) from err
            else:
                listed = [
                    NodeScore(table.names[r], v)
                    for r, v in zip(rows.tolist(), scores.tolist(), strict=True)
                ]
                st = ext.normalize_score(state, pod, listed)
                if st is not None and st.code is not Code.SUCCESS:
                    raise ColumnarError(normalize_error(plugin.name, st))
                scores = np.array([s.score for s in listed], dtype=np.int64)
        if len(scores) and (scores.min() < 0 or scores.max() > 100):
            bad = scores[(scores < 0) | (scores > 100)][0]
            raise ColumnarError(range_error(plugin.name, int(bad)))
        if sampled is not None:
            sampled.plugin_execution(plugin.name, "Score", None, _since(started))
        out[plugin.name] = scores
        totals += scores * fwk.score_weights.get(plugin.name, 1)
    return out, totals
