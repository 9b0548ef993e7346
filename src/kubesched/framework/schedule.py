"""One scheduling attempt: find the feasible nodes, score them, pick one.

Mirrors ``schedulePod`` / ``findNodesThatFitPod`` / ``prioritizeNodes`` / ``selectHost``
of upstream's ``pkg/scheduler/schedule_one.go``. It lives in ``framework`` (not in the
live scheduler) because the simulator and ``explain`` run exactly the same algorithm.

With extenders (``framework.extender``), an attempt is ``await schedule(...)``: the
extenders filter the nodes the Filter plugins kept (their rejections go into the
diagnosis with their reasons), and their weighted scores are added to the plugins'
totals, as upstream. ``schedule_pod`` is the synchronous attempt without extenders.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework import columnar
from kubesched.framework.columns import NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import EXTENDER_NAME, Extenders
from kubesched.framework.handle import ClusterClient, ClusterLister, PodNominator
from kubesched.framework.interface import Code, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, ProfileError
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.framework.vector import NodeInfoView
from kubesched.framework.waiting_pods import WaitingPodsMap
from kubesched.objects.pod import Pod

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
#: Below this many nodes every node is evaluated (upstream minFeasibleNodesToFind).
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (upstream's adaptive rule:
    50% minus 1% per 125 nodes, at least 5%, at least 100 nodes; 100 means all)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * pct // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Diagnosis:
    """Why an attempt failed (or what it saw): per node, the rejecting status."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)
        if status.code is Code.PENDING:
            self.pending_plugins.add(status.plugin)


class SchedulingError(Exception):
    """An attempt that failed for a reason other than fit (a plugin error)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class NoNodesAvailableError(SchedulingError):
    """The cluster has no nodes."""

    def __init__(self) -> None:
        super().__init__(Status.unresolvable(NO_NODES_AVAILABLE))


class FitError(Exception):
    """No node fits the pod. ``str()`` is upstream's FailedScheduling message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    @classmethod
    def on_node(cls, pod: Pod, node_name: str, status: Status) -> FitError:
        """A rejection after the node was chosen (Reserve, Permit, waiting on permit), as
        upstream reports it: one node tried (``0/1 nodes are available: 1 ...``)."""
        diagnosis = Diagnosis()
        diagnosis.node_to_status.set(node_name, status)
        diagnosis.add_plugin_status(status)
        return cls(pod, 1, diagnosis)

    def __str__(self) -> str:
        d = self.diagnosis
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            # PreFilter rejected the pod: every node got that same status, so counting
            # them would only repeat it.
            msg += f" {d.pre_filter_msg}."
        else:
            counts = d.node_to_status.reason_counts()
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0:
                for reason in d.node_to_status.absent.reasons:
                    counts[reason] = counts.get(reason, 0) + absent
            histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
            if histogram:
                msg += f" {', '.join(histogram)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


@dataclass
class ScheduleResult:
    """The chosen node and what the attempt evaluated."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    diagnosis: Diagnosis
    #: Per score plugin, each feasible node's normalized score (when recorded).
    plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Each feasible node's weighted total (when recorded).
    totals: dict[str, int] = field(default_factory=dict)
    #: The best-scored nodes, sorted, when several tied and a ``tie_breaker`` chose.
    tied: tuple[str, ...] = ()


#: Picks one of the tied best nodes (given sorted by name) for a pod.
TieBreaker = Callable[[Pod, Sequence[str]], str]


class SchedulingAlgorithm:
    """Runs attempts for one profile, keeping upstream's rotating start index."""

    def __init__(
        self,
        framework: Framework,
        *,
        percentage_of_nodes_to_score: int | None = None,
        rng: random.Random | None = None,
        columnar: bool = True,
    ) -> None:
        self.framework = framework
        # The profile's own setting wins over the configuration's global one.
        pct = framework.percentage_of_nodes_to_score
        self.percentage = pct if pct is not None else percentage_of_nodes_to_score
        self.rng = rng or framework.rng
        self.next_start_node_index = 0
        #: Use the snapshot's node table (when it has one) for vector plugins.
        self.columnar = columnar
        #: When set, ties among the best nodes are broken by it instead of the shared
        #: random source (the lab's per-pod tie-break); the live scheduler leaves it unset.
        self.tie_breaker: TieBreaker | None = None

    @property
    def extenders(self) -> Extenders | None:
        """The scheduler's extenders (the framework's), if any are configured."""
        return self.framework.extenders

    def schedule_pod(self, state: CycleState, pod: Pod, *, explain: bool = False) -> ScheduleResult:
        """Pick a node for ``pod`` in the framework's current snapshot.

        With ``explain``, every node is evaluated and every score recorded, even when one
        node is feasible. Raises FitError when no node fits, SchedulingError on faults.
        """
        if self.framework.extenders is not None:
            raise RuntimeError("a profile with extenders schedules with `await schedule()`")
        fwk = self.framework
        all_nodes = fwk.snapshot.list()
        if not all_nodes:
            raise NoNodesAvailableError()
        table = fwk.snapshot.table if self.columnar else None
        try:
            return self._schedule(state, pod, all_nodes, explain, table)
        except columnar.ColumnarError as err:
            raise SchedulingError(err.status) from None

    async def schedule(self, state: CycleState, pod: Pod) -> ScheduleResult:
        """Pick a node for ``pod``, asking the extenders when there are any (otherwise
        exactly ``schedule_pod``). Raises FitError or SchedulingError; a failed
        non-ignorable extender is a SchedulingError with its message."""
        extenders = self.framework.extenders
        if extenders is None:
            return self.schedule_pod(state, pod)
        fwk = self.framework
        all_nodes = fwk.snapshot.list()
        if not all_nodes:
            raise NoNodesAvailableError()
        table = fwk.snapshot.table if self.columnar else None
        try:
            narrowed, diagnosis, rejected = self._pre_filter(state, pod)
            if rejected:
                raise FitError(pod, len(all_nodes), diagnosis)
            found: Sequence[NodeInfo] = []
            if pod.nominated_node_name:
                found = self._evaluate_nominated_node(state, pod, diagnosis)
                if found:
                    found = await self._pass_extenders(extenders, pod, found, diagnosis)
            if not found:
                found = self._filter(state, pod, all_nodes, narrowed, diagnosis, False, table)
                found = await self._pass_extenders(extenders, pod, found, diagnosis)
            if not len(found):
                raise FitError(pod, len(all_nodes), diagnosis)
            evaluated = len(found) + len(diagnosis.node_to_status)
            if len(found) == 1:
                return ScheduleResult(found[0].name, evaluated, 1, diagnosis)
            if table is not None and isinstance(found, NodeInfoView):
                _, weighted = columnar.prioritize(fwk, state, pod, table, found)
                names = [table.names[r] for r in found.rows.tolist()]
                totals = dict(zip(names, weighted.tolist(), strict=True))
                await extenders.prioritize(pod, found, totals)
                weighted = np.fromiter((totals[n] for n in names), np.int64, len(names))
                host = names[self._pick(weighted)]
            else:
                _, totals = self._prioritize(state, pod, found, with_extenders=True)
                await extenders.prioritize(pod, found, totals)
                host = self._select_host(found, totals)
            return ScheduleResult(host, evaluated, len(found), diagnosis)
        except columnar.ColumnarError as err:
            raise SchedulingError(err.status) from None

    async def _pass_extenders(
        self, extenders: Extenders, pod: Pod, feasible: Sequence[NodeInfo], diagnosis: Diagnosis
    ) -> Sequence[NodeInfo]:
        """The nodes the extenders keep; a view stays a view (of the kept rows)."""
        if not len(feasible):
            return feasible
        try:
            kept = await extenders.filter(pod, feasible, diagnosis.node_to_status)
        except Exception as err:  # a failed required extender fails the attempt
            raise SchedulingError(Status.error(str(err) or type(err).__name__)) from err
        if len(kept) != len(feasible):
            # Extenders register no events: any cluster change may help the pod.
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        table = self.framework.snapshot.table
        if isinstance(feasible, NodeInfoView) and table is not None:
            rows = np.fromiter((table.rows[n.name] for n in kept), np.int64, len(kept))
            return NodeInfoView(self.framework.snapshot.list(), rows)
        return kept

    def _schedule(
        self,
        state: CycleState,
        pod: Pod,
        all_nodes: list[NodeInfo],
        explain: bool,
        table: NodeTable | None,
    ) -> ScheduleResult:
        fwk = self.framework
        feasible, diagnosis = self._find_nodes_that_fit(state, pod, all_nodes, explain, table)
        if not len(feasible):
            raise FitError(pod, len(all_nodes), diagnosis)
        evaluated = len(feasible) + len(diagnosis.node_to_status)
        if len(feasible) == 1 and not explain:
            return ScheduleResult(feasible[0].name, evaluated, 1, diagnosis)
        if table is not None and isinstance(feasible, NodeInfoView):
            scores, weighted = columnar.prioritize(fwk, state, pod, table, feasible)
            tied: tuple[str, ...] = ()
            if self.tie_breaker is not None:
                best = np.flatnonzero(weighted == weighted.max()).tolist()
                tied = tuple(sorted(table.names[int(feasible.rows[i])] for i in best))
            if len(tied) > 1 and self.tie_breaker is not None:
                host = self.tie_breaker(pod, tied)
            else:
                host = table.names[int(feasible.rows[self._pick(weighted)])]
            result = ScheduleResult(host, evaluated, len(feasible), diagnosis)
            result.tied = tied if len(tied) > 1 else ()
            if explain:
                names = [table.names[r] for r in feasible.rows.tolist()]
                result.plugin_scores = {
                    plugin: dict(zip(names, values.tolist(), strict=True))
                    for plugin, values in scores.items()
                }
                result.totals = dict(zip(names, weighted.tolist(), strict=True))
            return result
        plugin_scores, totals = self._prioritize(state, pod, feasible)
        tied = ()
        if self.tie_breaker is not None:
            top = max(totals[info.name] for info in feasible)
            tied = tuple(sorted(info.name for info in feasible if totals[info.name] == top))
        if len(tied) > 1 and self.tie_breaker is not None:
            host = self.tie_breaker(pod, tied)
        else:
            host = self._select_host(feasible, totals)
        result = ScheduleResult(host, evaluated, len(feasible), diagnosis)
        result.tied = tied if len(tied) > 1 else ()
        if explain:
            result.plugin_scores = plugin_scores
            result.totals = totals
        return result

    def _pick(self, totals: npt.NDArray[np.int64]) -> int:
        """Index of the best total; ties broken uniformly at random in evaluation order
        (one draw, the same rule as ``_select_host``)."""
        best = np.flatnonzero(totals == totals.max())
        if len(best) == 1:
            return int(best[0])
        return int(best[self.rng.randrange(len(best))])

    def _find_nodes_that_fit(
        self,
        state: CycleState,
        pod: Pod,
        all_nodes: list[NodeInfo],
        explain: bool,
        table: NodeTable | None,
    ) -> tuple[Sequence[NodeInfo], Diagnosis]:
        narrowed, diagnosis, rejected = self._pre_filter(state, pod)
        if rejected:
            return [], diagnosis
        if pod.nominated_node_name and not explain:
            found = self._evaluate_nominated_node(state, pod, diagnosis)
            if found:
                return found, diagnosis
        feasible = self._filter(state, pod, all_nodes, narrowed, diagnosis, explain, table)
        return feasible, diagnosis

    def _pre_filter(self, state: CycleState, pod: Pod) -> tuple[set[str] | None, Diagnosis, bool]:
        """Run PreFilter: the node names it narrowed the search to (None: all), the
        diagnosis so far, and whether it rejected the pod."""
        diagnosis = Diagnosis()
        pre_res, status, narrowing = self.framework.run_pre_filter_plugins(state, pod)
        # As upstream, the plugins that narrowed the nodes count among the rejectors: the
        # events they register (a node added or relabelled, for NodeAffinity) are what
        # may bring the nodes they left out back.
        diagnosis.unschedulable_plugins.update(narrowing)
        if status is not None and status.code is not Code.SUCCESS:
            if not status.is_rejected():
                raise SchedulingError(status)
            diagnosis.node_to_status.absent = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin_status(status)
            return None, diagnosis, True
        if pre_res is None or pre_res.node_names is None:
            return None, diagnosis, False
        names = sorted(narrowing)
        # Upstream leaves the plugin unset here; naming it (when it is one) lets
        # `explain` say which plugin ruled the node out.
        diagnosis.node_to_status.absent = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"node(s) didn't satisfy plugin(s) [{' '.join(names)}]",),
            names[0] if len(names) == 1 else "",
        )
        return set(pre_res.node_names), diagnosis, False

    def _evaluate_nominated_node(
        self, state: CycleState, pod: Pod, diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        """The pod's nominated node, if it passes the filters (upstream tries it first)."""
        nominated = self.framework.snapshot.find(pod.nominated_node_name)
        if nominated is None:
            return []
        return self._pass_filters(state, pod, [nominated], diagnosis, 1)

    def _filter(
        self,
        state: CycleState,
        pod: Pod,
        all_nodes: list[NodeInfo],
        narrowed: set[str] | None,
        diagnosis: Diagnosis,
        explain: bool,
        table: NodeTable | None,
    ) -> Sequence[NodeInfo]:
        """The feasible nodes among ``narrowed`` (None: all), from the rotating start."""
        fwk = self.framework
        # A PreFilterResult's nodes are looked up by name, in node-tree order (upstream
        # walks its set, in no order): the nodes it leaves out cost nothing. Names of
        # nodes that do not exist are dropped, as upstream drops them.
        positions = None if narrowed is None else fwk.snapshot.positions_of(narrowed)
        count = len(all_nodes) if positions is None else len(positions)
        if not count:
            return []
        to_find = count if explain else num_feasible_nodes_to_find(self.percentage, count)
        feasible: Sequence[NodeInfo]
        if table is not None:
            rows = (
                np.arange(table.size, dtype=np.int64)
                if positions is None
                else np.array(positions, dtype=np.int64)
            )
            start = self.next_start_node_index % len(rows)
            order = np.roll(rows, -start) if start else rows
            found_rows = columnar.pass_filters(fwk, state, pod, table, order, diagnosis, to_find)
            feasible = NodeInfoView(all_nodes, found_rows)
        else:
            nodes = all_nodes if positions is None else [all_nodes[p] for p in positions]
            feasible = self._pass_filters(state, pod, nodes, diagnosis, to_find)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible

    def _pass_filters(
        self,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        diagnosis: Diagnosis,
        to_find: int,
    ) -> list[NodeInfo]:
        fwk = self.framework
        n = len(nodes)
        start = self.next_start_node_index % n if n else 0
        order = nodes[start:] + nodes[:start] if start else nodes
        if not fwk.has_filter_plugins():
            return order[:to_find]
        feasible: list[NodeInfo] = []
        for info in order:
            status = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
            if status is None or status.code is Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
            elif status.code is Code.ERROR:
                raise SchedulingError(status)
            else:
                diagnosis.node_to_status.set(info.name, status)
                diagnosis.add_plugin_status(status)
        return feasible

    def _prioritize(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        with_extenders: bool = False,
    ) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
        fwk = self.framework
        if not fwk.has_score_plugins():
            # Upstream: every node scores 1 only when neither plugins nor extenders score.
            return {}, {n.name: 0 if with_extenders else 1 for n in nodes}
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if status is not None and status.code is not Code.SUCCESS:
            raise SchedulingError(status)
        scores, status = fwk.run_score_plugins(state, pod, nodes)
        if status is not None:
            raise SchedulingError(status)
        totals = {n.name: 0 for n in nodes}
        plugin_scores: dict[str, dict[str, int]] = {}
        for plugin, node_scores in scores.items():
            weight = fwk.score_weights.get(plugin, 1)
            per_node = plugin_scores[plugin] = {}
            for ns in node_scores:
                per_node[ns.name] = ns.score
                totals[ns.name] += ns.score * weight
        return plugin_scores, totals

    def _select_host(self, nodes: Sequence[NodeInfo], totals: dict[str, int]) -> str:
        """The best-scored node; ties broken uniformly at random among the best nodes in
        evaluation order. Upstream's selectHost samples a reservoir, one draw per tie;
        one draw over the ties gives the same distribution at a fraction of the cost."""
        best_score = max(totals[info.name] for info in nodes)
        best = [info.name for info in nodes if totals[info.name] == best_score]
        if len(best) == 1:
            return best[0]
        return best[self.rng.randrange(len(best))]


def build_profiles(
    config: KubeSchedulerConfiguration,
    registry: Registry,
    *,
    cluster: ClusterLister,
    client: ClusterClient,
    nominator: PodNominator,
    rng: random.Random,
    columnar: bool = True,
    waiting_pods: WaitingPodsMap | None = None,
) -> tuple[dict[str, Framework], dict[str, SchedulingAlgorithm]]:
    """One Framework and SchedulingAlgorithm per profile, keyed by schedulerName, all
    sharing the cluster view, client, nominator, random source and waiting pods.

    Raises ProfileError with every profile's problems at once.
    """
    frameworks: dict[str, Framework] = {}
    algorithms: dict[str, SchedulingAlgorithm] = {}
    errors = []
    waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
    for profile in config.profiles:
        try:
            fwk = Framework(
                profile,
                registry,
                cluster=cluster,
                client=client,
                nominator=nominator,
                rng=rng,
                waiting_pods=waiting_pods,
            )
        except ProfileError as err:
            errors.extend(err.errors)
            continue
        frameworks[profile.scheduler_name] = fwk
        algorithms[profile.scheduler_name] = SchedulingAlgorithm(
            fwk,
            percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
            columnar=columnar,
        )
    if errors:
        raise ProfileError(errors)
    return frameworks, algorithms
