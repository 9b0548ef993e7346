"""A scheduling profile served as an extender of a stock kube-scheduler.

The filter verb runs the profile's PreFilter and Filter plugins over the request's
nodes; the prioritize verb runs PreScore, Score and NormalizeScore and scales the
result to the extender range; the preempt verb keeps the candidate nodes where the pod
passes the filters once the proposed victims are gone.

**Without cluster access** the snapshot holds the request's nodes and no pods:
kube-scheduler sends no pods, so plugins that count pods (InterPodAffinity,
PodTopologySpread, NodeResourcesFit, tenant spread) see empty nodes, and NodeNames-only
(nodeCacheCapable) requests and preempt get a clear error. **With a** ``ClusterCache``
(``--kubeconfig``/``--in-cluster``) the snapshot holds every cached node and its bound
pods, in both modes, and the nodes of a full-Nodes request replace their cached copies.

Either way an extender never sees kube-scheduler's assumed or nominated pods (a pod
bound a moment ago may be missing): serve the plugins kube-scheduler lacks, not copies
of its default ones. Bind is not served.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kubesched.config import Profile
from kubesched.extender.backend import (
    CACHE_NOT_SYNCED,
    NO_NODE_CACHE,
    NoNodeCache,
    decode_candidates,
    decode_pod,
)
from kubesched.extender.cache import ClusterCache
from kubesched.extender.errors import BadRequest, ExtenderError
from kubesched.extender.types import (
    MAX_EXTENDER_PRIORITY,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    HostPriorityList,
    JSONObject,
    MetaPod,
    MetaVictims,
    NodeList,
    Victims,
    filter_result,
)
from kubesched.framework import columnar
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import Diagnosis
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeScore
from kubesched.framework.vector import NodeInfoView
from kubesched.objects.pod import Pod

log = logging.getLogger(__name__)

#: kube-scheduler multiplies an extender's score by this (and the extender's weight).
SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY

#: Why preempt cannot be judged without cluster access.
PREEMPT_NEEDS_CACHE = (
    "kubesched extender: preempt needs the nodes and their pods, and this server has no "
    "cluster access; run it with --kubeconfig or --in-cluster, or remove preemptVerb "
    "from kube-scheduler's extender configuration"
)


def unknown_node(name: str) -> str:
    """The FailedNodes reason for a node name the cache does not hold."""
    return (
        f"node {name!r} is not in the extender's node cache (created a moment ago, or "
        "deleted); the extender cannot judge it"
    )


class PluginFault(ExtenderError):
    """A plugin answered Error (a bug or fault, not a verdict on a node)."""


def to_extender_score(weighted_total: int, weight_sum: int) -> int:
    """The inverse of kube-scheduler's ``score * (MaxNodeScore / MaxExtenderPriority)``.

    ``weighted_total`` is the sum of weight × normalized score (0..100) of the profile's
    score plugins; divided by the weights it is their weighted mean, 0..100, which is
    mapped to 0..10 by Go's integer division (floor), so that kube-scheduler's ×10
    never gives a node more than the plugins did.
    """
    if weight_sum <= 0:
        return 0
    return weighted_total // (weight_sum * SCORE_SCALE)


@dataclass(frozen=True, slots=True)
class _Request:
    """A filter or prioritize call, resolved against a snapshot.

    ``infos`` are the known candidates in request order; ``unknown`` the names the
    cache does not hold; ``raw`` each node's JSON by name in full-Nodes mode (answered
    back as given), None in NodeNames mode (answered with names).
    """

    pod: Pod
    infos: list[NodeInfo]
    unknown: list[str]
    raw: dict[str, JSONObject] | None


class ProfileExtender:
    """Answers filter, prioritize and preempt with one profile's plugins."""

    verbs = frozenset({"filter", "prioritize", "preempt"})

    def __init__(self, framework: Framework, cache: ClusterCache | None = None) -> None:
        self.framework = framework
        self.cache = cache
        #: The last full node list without a cache: its JSON, snapshot and names.
        self._last: tuple[list[JSONObject], Snapshot, list[str]] | None = None

    @classmethod
    def from_profile(
        cls, profile: Profile, registry: Registry, cache: ClusterCache | None = None
    ) -> ProfileExtender:
        """Build the profile's plugins (raises ProfileError when it cannot); with a
        cache, the plugins' cluster lister is the cache."""
        return cls(Framework(profile, registry, cluster=cache), cache)

    def _synced_cache(self, message: str) -> ClusterCache:
        if self.cache is None:
            raise NoNodeCache(message)
        if not self.cache.synced:
            raise NoNodeCache(CACHE_NOT_SYNCED, status=503)
        return self.cache

    def _use(self, snapshot: Snapshot) -> None:
        # Requests are answered one at a time on the event loop and plugins never await,
        # so pointing the shared framework at this request's snapshot cannot race.
        self.framework.set_snapshot(snapshot)

    def _prepare(self, args: ExtenderArgs) -> _Request:
        if args["Nodes"] is None and args["NodeNames"] is not None:
            pod = decode_pod(args["Pod"], "ExtenderArgs.Pod")
            snapshot = self._synced_cache(NO_NODE_CACHE).snapshot()
            self._use(snapshot)
            infos: list[NodeInfo] = []
            unknown: list[str] = []
            seen: set[str] = set()
            for i, name in enumerate(args["NodeNames"]):
                if name in seen:
                    raise BadRequest(f"ExtenderArgs.NodeNames[{i}]: Duplicate value: {name!r}")
                seen.add(name)
                info = snapshot.find(name)
                if info is None:
                    unknown.append(name)
                else:
                    infos.append(info)
            return _Request(pod, infos, unknown, None)
        if self.cache is not None and self.cache.synced:
            candidates = decode_candidates(args)
            snapshot = self.cache.snapshot()
            # Usually the request's nodes are the cached ones; only a node that differs
            # (kube-scheduler saw a newer version) needs a snapshot of its own.
            for node in candidates.nodes:
                info = snapshot.find(node.name)
                if info is None or info.node != node:
                    snapshot = self.cache.snapshot_with(candidates.nodes)
                    break
            self._use(snapshot)
            infos = [snapshot.get(n.name) for n in candidates.nodes]
            return _Request(candidates.pod, infos, [], candidates.raw)
        return self._prepare_without_cache(args)

    def _prepare_without_cache(self, args: ExtenderArgs) -> _Request:
        """Full Nodes, no pods. kube-scheduler sends the same nodes for pod after pod,
        so the snapshot of the last node list is kept and reused when the request's
        list equals it (comparing the decoded JSON is far cheaper than decoding a
        thousand nodes again)."""
        items = args["Nodes"]["items"] if args["Nodes"] is not None else None
        if items and self._last is not None and items == self._last[0]:
            _, snapshot, names = self._last
            pod = decode_pod(args["Pod"], "ExtenderArgs.Pod")
            raw = dict(zip(names, items, strict=True))
        else:
            candidates = decode_candidates(args)
            snapshot = Snapshot.from_objects(candidates.nodes, ())
            pod, raw = candidates.pod, candidates.raw
            names = [n.name for n in candidates.nodes]
            self._last = (list(items or ()), snapshot, names) if items else None
        self._use(snapshot)
        return _Request(pod, [snapshot.get(name) for name in names], [], raw)

    async def filter(self, args: ExtenderArgs) -> ExtenderFilterResult:
        """Run PreFilter and Filter over the request's nodes.

        Rejections go to FailedNodes (Unschedulable: preemption may help) or to
        FailedAndUnresolvableNodes (UnschedulableAndUnresolvable), keyed by node, with
        the plugin's reasons; a node the cache does not know goes to FailedNodes, so
        that kube-scheduler drops that node and not the whole attempt; an Error status
        fails the whole call through ``Error``.
        """
        request = self._prepare(args)
        fwk = self.framework
        failed = {name: unknown_node(name) for name in request.unknown}
        unresolvable: dict[str, str] = {}
        state = CycleState()
        pre_result, status, narrowing = fwk.run_pre_filter_plugins(state, request.pod)
        if status is not None and status.code is not Code.SUCCESS:
            if not status.is_rejected():
                return filter_result(error=status.message)
            target = unresolvable if _unresolvable(status) else failed
            target.update((info.name, status.message) for info in request.infos)
            return _answer(request, [], failed, unresolvable)
        allowed = pre_result.node_names if pre_result is not None else None
        judged: list[NodeInfo] = []
        for info in request.infos:
            if allowed is not None and info.name not in allowed:
                names = " ".join(sorted(narrowing))
                unresolvable[info.name] = f"node(s) didn't satisfy plugin(s) [{names}]"
            else:
                judged.append(info)
        try:
            passed, rejected = self._run_filters(state, request.pod, judged)
        except PluginFault as err:
            return filter_result(error=str(err))
        for name, status in rejected:
            (unresolvable if _unresolvable(status) else failed)[name] = status.message
        return _answer(request, passed, failed, unresolvable)

    def _run_filters(
        self, state: CycleState, pod: Pod, infos: list[NodeInfo]
    ) -> tuple[list[str], list[tuple[str, Status]]]:
        """The nodes that pass every filter, and the others with the rejecting status;
        over the node table when the snapshot has one (the fast path), else per node."""
        fwk = self.framework
        table = fwk.snapshot.table
        if table is not None:
            order = np.fromiter((table.rows[i.name] for i in infos), np.int64, len(infos))
            diagnosis = Diagnosis()
            try:
                rows = columnar.pass_filters(fwk, state, pod, table, order, diagnosis, len(order))
            except columnar.ColumnarError as err:
                raise PluginFault(err.status.message) from None
            return [table.names[r] for r in rows.tolist()], list(diagnosis.node_to_status.items())
        passed: list[str] = []
        rejected: list[tuple[str, Status]] = []
        for info in infos:
            status = fwk.run_filter_plugins(state, pod, info)
            if status is None or status.code is Code.SUCCESS:
                passed.append(info.name)
            elif not status.is_rejected():
                raise PluginFault(status.message)
            else:
                rejected.append((info.name, status))
        return passed, rejected

    async def prioritize(self, args: ExtenderArgs) -> HostPriorityList:
        """Run PreScore, Score and NormalizeScore; each node gets the weighted mean of
        the plugins' scores scaled to 0..10 (see ``to_extender_score``); a node the
        cache does not know scores 0.

        PreFilter runs first, as in a scheduling cycle, since PreScore may read what it
        wrote; a pod PreFilter rejects scores 0 everywhere (kube-scheduler only asks to
        prioritize nodes that passed every filter, so it does not happen in practice).
        """
        request = self._prepare(args)
        fwk = self.framework
        infos = request.infos
        zero = [HostPriority(Host=info.name, Score=0) for info in infos]
        zero_unknown = [HostPriority(Host=name, Score=0) for name in request.unknown]
        state = CycleState()
        _, status, _ = fwk.run_pre_filter_plugins(state, request.pod)
        if status is not None and status.code is not Code.SUCCESS:
            if status.is_rejected():
                return zero + zero_unknown
            raise PluginFault(status.message)
        if not fwk.has_score_plugins() or not infos:
            return zero + zero_unknown
        table = fwk.snapshot.table
        if table is not None:
            rows = np.fromiter((table.rows[i.name] for i in infos), np.int64, len(infos))
            view = NodeInfoView(fwk.snapshot.list(), rows)
            try:
                by_plugin, totals = columnar.prioritize(fwk, state, request.pod, table, view)
            except columnar.ColumnarError as err:
                raise PluginFault(err.status.message) from None
            weight_sum = sum(fwk.score_weights.get(name, 1) for name in by_plugin)
            return [
                HostPriority(Host=info.name, Score=to_extender_score(int(total), weight_sum))
                for info, total in zip(infos, totals.tolist(), strict=True)
            ] + zero_unknown
        status = fwk.run_pre_score_plugins(state, request.pod, infos)
        if status is not None:
            raise PluginFault(status.message)
        scores, status = fwk.run_score_plugins(state, request.pod, infos)
        if status is not None:
            raise PluginFault(status.message)
        return _combine(infos, scores, fwk.score_weights) + zero_unknown

    async def bind(self, args: ExtenderBindingArgs) -> ExtenderBindingResult:
        """Not served (see ``verbs``): binding needs cluster access."""
        raise NotImplementedError("bind needs cluster access")

    async def preempt(self, args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult:
        """Keep the candidate nodes where the pod passes the profile's filters once the
        proposed victims are removed, victims unchanged, answered as
        NodeNameToMetaVictims (all kube-scheduler reads).

        kube-scheduler sends victims as UIDs when nodeCacheCapable, as full pods
        otherwise; either way the node and the pods that stay on it come from the cache.
        A victim the cache does not hold on that node takes no room in its view, so
        there is nothing to remove. A node the cache does not know is dropped.
        """
        pod = decode_pod(args["Pod"], "ExtenderPreemptionArgs.Pod")
        proposed = _proposed_victims(args)
        snapshot = self._synced_cache(PREEMPT_NEEDS_CACHE).snapshot()
        self._use(snapshot)
        fwk = self.framework
        state = CycleState()
        pre_result, status, _ = fwk.run_pre_filter_plugins(state, pod)
        if status is not None and status.code is not Code.SUCCESS:
            if status.is_rejected():
                # The pod itself is rejected, whatever runs on the nodes.
                return ExtenderPreemptionResult(NodeNameToMetaVictims={})
            raise PluginFault(status.message)
        allowed = pre_result.node_names if pre_result is not None else None
        kept: dict[str, MetaVictims | None] = {}
        for node_name, (uids, meta) in proposed.items():
            info = snapshot.find(node_name)
            if info is None:
                log.info("preempt: dropping node %s: %s", node_name, unknown_node(node_name))
                continue
            if allowed is not None and node_name not in allowed:
                continue
            status = _filter_without(fwk, state.clone(), pod, info.clone(), uids)
            if status is None or status.code is Code.SUCCESS:
                kept[node_name] = meta
            elif not status.is_rejected():
                raise PluginFault(status.message)
        return ExtenderPreemptionResult(NodeNameToMetaVictims=kept)


def _proposed_victims(
    args: ExtenderPreemptionArgs,
) -> dict[str, tuple[set[str], MetaVictims | None]]:
    """Each candidate node's victim UIDs, and its victims as MetaVictims to answer."""
    out: dict[str, tuple[set[str], MetaVictims | None]] = {}
    metas = args["NodeNameToMetaVictims"]
    if metas is not None:
        for node, meta in metas.items():
            pods = meta["Pods"] if meta is not None else None
            uids = {p["UID"] for p in pods or () if p is not None}
            out[node] = (uids, meta)
        return out
    for node, victims in (args["NodeNameToVictims"] or {}).items():
        out[node] = (_uids(victims, node), _as_meta(victims))
    return out


def _uids(victims: Victims | None, node: str) -> set[str]:
    uids: set[str] = set()
    pods = victims["Pods"] if victims is not None else None
    for i, raw in enumerate(pods or ()):
        if raw is None:
            continue
        uid = (raw.get("metadata") or {}).get("uid")
        if not isinstance(uid, str) or not uid:
            path = f"ExtenderPreemptionArgs.NodeNameToVictims[{node}].Pods[{i}].metadata.uid"
            raise BadRequest(f"{path}: Required value: a victim is named by its UID")
        uids.add(uid)
    return uids


def _as_meta(victims: Victims | None) -> MetaVictims | None:
    if victims is None:
        return None
    pods = victims["Pods"]
    metas: list[MetaPod | None] | None = None
    if pods is not None:
        metas = [
            None if p is None else MetaPod(UID=str((p.get("metadata") or {}).get("uid", "")))
            for p in pods
        ]
    return MetaVictims(Pods=metas, NumPDBViolations=victims["NumPDBViolations"])


def _filter_without(
    fwk: Framework, state: CycleState, pod: Pod, info: NodeInfo, uids: Iterable[str]
) -> Status | None:
    """The filters' verdict on ``info`` (a copy) with the victims ``uids`` removed, the
    PreFilter state told of each removal as upstream's SelectVictimsOnNode does."""
    wanted = set(uids)
    for victim in [p for p in info.pods if p.pod.uid in wanted]:
        info.remove_pod(victim.pod)
        status = fwk.run_pre_filter_extension_remove_pod(state, pod, victim, info)
        if status is not None and not status.is_success():
            return status
    return fwk.run_filter_plugins(state, pod, info)


def _unresolvable(status: Status) -> bool:
    return status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _answer(
    request: _Request,
    passed: Sequence[str],
    failed: dict[str, str],
    unresolvable: dict[str, str],
) -> ExtenderFilterResult:
    if request.raw is None:
        return filter_result(node_names=list(passed), failed=failed, unresolvable=unresolvable)
    items = [request.raw[name] for name in passed]
    return filter_result(
        nodes=NodeList(metadata={}, items=items), failed=failed, unresolvable=unresolvable
    )


def _combine(
    infos: Sequence[NodeInfo], scores: dict[str, list[NodeScore]], weights: dict[str, int]
) -> list[HostPriority]:
    totals = dict.fromkeys((info.name for info in infos), 0)
    weight_sum = 0
    for plugin, node_scores in scores.items():
        weight = weights.get(plugin, 1)
        weight_sum += weight
        for ns in node_scores:
            totals[ns.name] += ns.score * weight
    return [
        HostPriority(Host=name, Score=to_extender_score(total, weight_sum))
        for name, total in totals.items()
    ]
