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

:class:`ExtenderSet` gathers them behind ``framework.extender.Extenders``, the face the
scheduling algorithm, DefaultPreemption and the binding cycle call.
:func:`with_ignored_extended_resources` is ``buildExtenders``' change to the profiles.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from kubesched.config import KubeSchedulerConfiguration
from kubesched.config.types import Extender, PluginConfig
from kubesched.extender.client import (
    Binding,
    ExtenderCallError,
    HTTPExtender,
    NodeInfoLister,
    RawObjects,
    Victims,
)
from kubesched.extender.types import MAX_EXTENDER_PRIORITY
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.framework.interface import MAX_NODE_SCORE, Code, Status
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.pod import Pod
from kubesched.plugins.names import NODE_RESOURCES_FIT

__all__ = [
    "EXTENDER_NAME",
    "ExtenderSet",
    "build_extenders",
    "call_extenders_for_preemption",
    "extenders_binding",
    "find_nodes_that_pass_extenders",
    "ignored_extended_resources",
    "prioritize_with_extenders",
    "with_ignored_extended_resources",
]

log = logging.getLogger(__name__)

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


def with_ignored_extended_resources(
    config: KubeSchedulerConfiguration,
) -> KubeSchedulerConfiguration:
    """``config`` with every profile's NodeResourcesFit args' ``ignoredResources`` set to
    the extenders' managed resources with ignoredByScheduler, as upstream's
    ``buildExtenders`` does: they replace what the profile listed (the extenders'
    setting takes precedence); ``ignoredResourceGroups`` is untouched. Unchanged when no
    such resource is configured."""
    ignored = ignored_extended_resources(config.extenders)
    if not ignored:
        return config
    profiles = []
    for i, profile in enumerate(config.profiles):
        entries = list(profile.plugin_config)
        for k, entry in enumerate(entries):
            if entry.name == NODE_RESOURCES_FIT:
                args = {**entry.args, "ignoredResources": list(ignored)}
                entries[k] = replace(entry, args=MappingProxyType(args))
                break
        else:
            # Upstream's defaulting always gives the plugin its args; ours adds none.
            path = f"profiles[{i}].pluginConfig[{len(entries)}].args"
            args = {"ignoredResources": list(ignored)}
            entries.append(PluginConfig(NODE_RESOURCES_FIT, MappingProxyType(args), path))
        profiles.append(replace(profile, plugin_config=tuple(entries)))
    return replace(config, profiles=tuple(profiles))


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


class ExtenderSet:
    """The configured extenders, as ``framework.extender.Extenders``: what the
    scheduling algorithm, preemption and the binding cycle call, with the rules above.
    ``async with`` (or ``close()``) releases their connections."""

    def __init__(self, extenders: Sequence[HTTPExtender]) -> None:
        self.extenders = list(extenders)

    @classmethod
    def from_config(cls, configs: Iterable[Extender], raw: RawObjects) -> ExtenderSet:
        """Clients for ``configs`` in upstream's order; raises ExtenderConfigError."""
        return cls(build_extenders(configs, raw))

    async def filter(
        self, pod: Pod, feasible: Sequence[NodeInfo], statuses: NodeToStatus
    ) -> list[NodeInfo]:
        return await find_nodes_that_pass_extenders(self.extenders, pod, feasible, statuses)

    async def prioritize(
        self, pod: Pod, nodes: Sequence[NodeInfo], totals: dict[str, int]
    ) -> dict[str, dict[str, int]]:
        return await prioritize_with_extenders(self.extenders, pod, nodes, totals)

    def preempts_for(self, pod: Pod) -> bool:
        return any(e.supports_preemption() and e.is_interested(pod) for e in self.extenders)

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], nodes: NodeInfoLister
    ) -> dict[str, Victims]:
        return await call_extenders_for_preemption(self.extenders, pod, victims, nodes)

    async def bind(self, pod: Pod, node_name: str) -> bool:
        return await extenders_binding(self.extenders, pod, node_name)

    async def close(self) -> None:
        """Close every extender's HTTP session."""
        for extender in self.extenders:
            await extender.close()

    async def __aenter__(self) -> ExtenderSet:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __len__(self) -> int:
        return len(self.extenders)

    def __repr__(self) -> str:
        return f"ExtenderSet({[e.name for e in self.extenders]!r})"
