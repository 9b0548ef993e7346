"""Where the scheduler calls its extenders, with kube-scheduler's rules.

Mirrors the extender parts of upstream's ``pkg/scheduler/schedule_one.go``
(``findNodesThatPassExtenders``, the extender half of ``prioritizeNodes``,
``extendersBinding``), ``callExtenders`` of ``framework/preemption/preemption.go`` and
the ordering of ``buildExtenders`` in ``scheduler.go``:

* an extender is called only for pods it ``is_interested`` in;
* filter, preempt and bind failures fail the attempt (``ExtenderCallError`` propagates)
  unless the extender is ignorable, in which case it is skipped;
* prioritize failures are ignored for every extender;
* an extender's score (0..10) counts as ``score × weight × 10`` beside the plugins'
  weighted scores (MaxNodeScore / MaxExtenderPriority = 10).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence

from kubesched.config.types import Extender
from kubesched.extender.client import (
    Binding,
    ExtenderCallError,
    HTTPExtender,
    NodeInfoLister,
    RawObjects,
    Victims,
)
from kubesched.extender.types import MAX_EXTENDER_PRIORITY
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.pod import Pod

__all__ = [
    "EXTENDER_NAME",
    "build_extenders",
    "call_extenders_for_preemption",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
    "ignored_extended_resources",
    "prioritize_with_extenders",
]

log = logging.getLogger(__name__)

#: The name recorded among a diagnosis' unschedulable plugins when extenders rejected
#: nodes (upstream ``framework.ExtenderName``), so any cluster event requeues the pod.
EXTENDER_NAME = "Extender"

#: How much one point of extender score weighs against a plugin's 0..100.
EXTENDER_SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY


def build_extenders(configs: Iterable[Extender], raw: RawObjects) -> list[HTTPExtender]:
    """One client per configured extender, ignorable ones last (upstream places them at
    the tail so that a flaky optional extender never shadows a required one)."""
    extenders = [HTTPExtender(config, raw) for config in configs]
    return [e for e in extenders if not e.is_ignorable()] + [
        e for e in extenders if e.is_ignorable()
    ]


def ignored_extended_resources(configs: Iterable[Extender]) -> tuple[str, ...]:
    """The managed resources with ignoredByScheduler: NodeResourcesFit must not check
    them (upstream sets them as the plugin's ``ignoredResources`` in every profile)."""
    return tuple(r.name for c in configs for r in c.managed_resources if r.ignored_by_scheduler)


async def find_nodes_that_pass_extenders(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    feasible: Sequence[NodeInfo],
    statuses: NodeToStatus,
) -> list[NodeInfo]:
    """The feasible nodes that every interested extender keeps, filtering in turn.

    Rejected nodes are recorded in ``statuses``: Unschedulable with the extender's
    reason, or UnschedulableAndUnresolvable (which wins when a node is in both maps).
    An ignorable extender that fails is skipped; any other failure raises
    ExtenderCallError. The caller adds ``EXTENDER_NAME`` to the diagnosis'
    unschedulable plugins when the result is shorter than ``feasible``.
    """
    nodes = list(feasible)
    for extender in extenders:
        if not nodes:
            break
        if not extender.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = await extender.filter(pod, nodes)
        except ExtenderCallError as err:
            if extender.is_ignorable():
                log.info("skipping ignorable extender %s that failed: %s", extender.name, err)
                continue
            raise
        for name, reason in unresolvable.items():
            statuses.set(name, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,)))
        for name, reason in failed.items():
            if name not in unresolvable:
                statuses.set(name, Status(Code.UNSCHEDULABLE, (reason,)))
        nodes = kept
    return nodes


async def prioritize_with_extenders(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    nodes: Sequence[NodeInfo],
    totals: dict[str, int],
) -> dict[str, dict[str, int]]:
    """Add the interested extenders' weighted scores to ``totals`` (node → total).

    Extenders are called concurrently. Each score becomes ``score × weight × 10`` for
    the nodes in ``nodes``; hosts that were not asked about are ignored, and an
    extender that fails gives no score. Returns, per extender name, each node's
    scaled score (for ``explain``).
    """
    interested = [e for e in extenders if e.is_interested(pod)]
    if not interested or not nodes:
        return {}
    results = await asyncio.gather(
        *(e.prioritize(pod, nodes) for e in interested), return_exceptions=True
    )
    wanted = {info.name for info in nodes}
    per_extender: dict[str, dict[str, int]] = {}
    for extender, result in zip(interested, results, strict=True):
        if isinstance(result, ExtenderCallError):
            log.debug("extender %s gave no scores: %s", extender.name, result)
            continue
        if isinstance(result, BaseException):
            raise result
        scores, weight = result
        mine = per_extender.setdefault(extender.name, {})
        for host, score in scores:
            if host not in wanted:
                continue
            final = score * weight * EXTENDER_SCORE_SCALE
            mine[host] = mine.get(host, 0) + final
            totals[host] = totals.get(host, 0) + final
    return per_extender


async def extenders_binding(extenders: Sequence[HTTPExtender], pod: Pod, node: str) -> bool:
    """Bind through the first interested binder; False if there is none (the Bind
    plugins bind then). A failing ignorable binder is skipped; any other failure
    raises ExtenderCallError."""
    for extender in extenders:
        if not extender.is_binder() or not extender.is_interested(pod):
            continue
        try:
            await extender.bind(Binding.of(pod, node))
        except ExtenderCallError as err:
            if extender.is_ignorable():
                log.info("skipping ignorable extender %s in bind: %s", extender.name, err)
                continue
            raise
        return True
    return False


async def call_extenders_for_preemption(
    extenders: Sequence[HTTPExtender],
    pod: Pod,
    victims: Mapping[str, Victims],
    nodes: NodeInfoLister,
) -> dict[str, Victims]:
    """The preemption candidates (node → victims) that every interested preempting
    extender accepts, each narrowing the previous answer.

    A candidate without victims in an answer is an error, or dropped when the extender
    is ignorable; so is a failed call. Raises ExtenderCallError otherwise.
    """
    current = dict(victims)
    if not current:
        return current
    for extender in extenders:
        if not extender.supports_preemption() or not extender.is_interested(pod):
            continue
        try:
            answer = await extender.process_preemption(pod, current, nodes)
        except ExtenderCallError as err:
            if extender.is_ignorable():
                log.info("skipping ignorable extender %s in preemption: %s", extender.name, err)
                continue
            raise
        for name, node_victims in list(answer.items()):
            if node_victims.pods:
                continue
            if extender.is_ignorable():
                del answer[name]
                continue
            raise ExtenderCallError(
                extender.name,
                extender.config.preempt_verb,
                f"expected at least one victim pod on node {name!r}",
            )
        current = answer
        if not current:
            break
    return current
