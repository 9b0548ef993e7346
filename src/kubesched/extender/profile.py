"""A scheduling profile served as an extender of a stock kube-scheduler.

The filter verb runs the profile's PreFilter and Filter plugins over the nodes of the
request; the prioritize verb runs PreScore, Score and NormalizeScore and scales the
result to the extender range. The snapshot holds the request's nodes and **no pods**:
kube-scheduler sends no pods in full-Nodes mode, and an extender never sees its
assumed or nominated pods anyway. Plugins that count pods (InterPodAffinity,
PodTopologySpread, NodeResourcesFit, tenant spread) therefore see empty nodes until
the server gets a node and pod cache of its own (nodeCacheCapable mode, with ``kube``
informers). Serve the plugins kube-scheduler lacks, not copies of its default ones.

Bind is not served: binding needs cluster access. Preempt accepts every candidate
kube-scheduler proposes, victims unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubesched.config import Profile
from kubesched.extender.backend import Candidates, decode_candidates, decode_pod
from kubesched.extender.errors import ExtenderError
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
    MetaPod,
    MetaVictims,
    NodeList,
    filter_result,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeScore

#: kube-scheduler multiplies an extender's score by this (and the extender's weight).
SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY


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


class ProfileExtender:
    """Answers filter, prioritize and preempt with one profile's plugins."""

    verbs = frozenset({"filter", "prioritize", "preempt"})

    def __init__(self, framework: Framework) -> None:
        self.framework = framework

    @classmethod
    def from_profile(cls, profile: Profile, registry: Registry) -> ProfileExtender:
        """Build the profile's plugins (raises ProfileError when it cannot)."""
        return cls(Framework(profile, registry))

    def _prepare(self, args: ExtenderArgs) -> tuple[Candidates, list[NodeInfo], CycleState]:
        candidates = decode_candidates(args)
        snapshot = Snapshot.from_objects(candidates.nodes, ())
        # Requests are answered one at a time on the event loop, so pointing the shared
        # framework at this request's snapshot cannot race with another request.
        self.framework.set_snapshot(snapshot)
        infos = [snapshot.get(n.name) for n in candidates.nodes]
        return candidates, infos, CycleState()

    async def filter(self, args: ExtenderArgs) -> ExtenderFilterResult:
        """Run PreFilter and Filter over the request's nodes.

        Rejections go to FailedNodes (Unschedulable: preemption may help) or to
        FailedAndUnresolvableNodes (UnschedulableAndUnresolvable), keyed by node, with
        the plugin's reasons; an Error status fails the whole call through ``Error``.
        """
        candidates, infos, state = self._prepare(args)
        fwk = self.framework
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        pre_result, status, narrowing = fwk.run_pre_filter_plugins(state, candidates.pod)
        if status is not None and status.code is not Code.SUCCESS:
            if not status.is_rejected():
                return filter_result(error=status.message)
            target = unresolvable if _unresolvable(status) else failed
            target.update((info.name, status.message) for info in infos)
            return _answer(candidates, [], failed, unresolvable)
        allowed = pre_result.node_names if pre_result is not None else None
        passed: list[str] = []
        for info in infos:
            if allowed is not None and info.name not in allowed:
                names = " ".join(sorted(narrowing))
                unresolvable[info.name] = f"node(s) didn't satisfy plugin(s) [{names}]"
                continue
            status = fwk.run_filter_plugins(state, candidates.pod, info)
            if status is None or status.code is Code.SUCCESS:
                passed.append(info.name)
            elif not status.is_rejected():
                return filter_result(error=status.message)
            elif _unresolvable(status):
                unresolvable[info.name] = status.message
            else:
                failed[info.name] = status.message
        return _answer(candidates, passed, failed, unresolvable)

    async def prioritize(self, args: ExtenderArgs) -> HostPriorityList:
        """Run PreScore, Score and NormalizeScore; each node gets the weighted mean of
        the plugins' scores scaled to 0..10 (see ``to_extender_score``).

        PreFilter runs first, as in a scheduling cycle, since PreScore may read what it
        wrote; a pod PreFilter rejects scores 0 everywhere (kube-scheduler only asks to
        prioritize nodes that passed every filter, so it does not happen in practice).
        """
        candidates, infos, state = self._prepare(args)
        fwk = self.framework
        zero = [HostPriority(Host=info.name, Score=0) for info in infos]
        _, status, _ = fwk.run_pre_filter_plugins(state, candidates.pod)
        if status is not None and status.code is not Code.SUCCESS:
            if status.is_rejected():
                return zero
            raise PluginFault(status.message)
        if not fwk.has_score_plugins() or not infos:
            return zero
        status = fwk.run_pre_score_plugins(state, candidates.pod, infos)
        if status is not None:
            raise PluginFault(status.message)
        scores, status = fwk.run_score_plugins(state, candidates.pod, infos)
        if status is not None:
            raise PluginFault(status.message)
        return _combine(infos, scores, fwk.score_weights)

    async def bind(self, args: ExtenderBindingArgs) -> ExtenderBindingResult:
        """Not served (see ``verbs``): binding needs cluster access."""
        raise NotImplementedError("bind needs cluster access")

    async def preempt(self, args: ExtenderPreemptionArgs) -> ExtenderPreemptionResult:
        """Accept every candidate node with its victims, as UIDs."""
        decode_pod(args["Pod"], "ExtenderPreemptionArgs.Pod")
        if args["NodeNameToMetaVictims"] is not None:
            return ExtenderPreemptionResult(NodeNameToMetaVictims=args["NodeNameToMetaVictims"])
        out: dict[str, MetaVictims | None] = {}
        for node, victims in (args["NodeNameToVictims"] or {}).items():
            if victims is None:
                out[node] = None
                continue
            pods = victims["Pods"]
            metas: list[MetaPod | None] | None = None
            if pods is not None:
                metas = [
                    None if p is None else MetaPod(UID=str(p.get("metadata", {}).get("uid", "")))
                    for p in pods
                ]
            out[node] = MetaVictims(Pods=metas, NumPDBViolations=victims["NumPDBViolations"])
        return ExtenderPreemptionResult(NodeNameToMetaVictims=out)


def _unresolvable(status: Status) -> bool:
    return status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _answer(
    candidates: Candidates,
    passed: Sequence[str],
    failed: dict[str, str],
    unresolvable: dict[str, str],
) -> ExtenderFilterResult:
    items = [candidates.raw[name] for name in passed]
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
