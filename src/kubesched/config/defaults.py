"""The default plugins of a v1 profile and how a profile's own plugins are merged into them.

Follows ``getDefaultPlugins``/``mergePlugins`` of kube-scheduler's
``pkg/scheduler/apis/config/v1/default_plugins.go``.
"""

from __future__ import annotations

import dataclasses

from kubesched.config.types import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)

__all__ = ["default_config", "default_plugins", "merge_plugin_set", "merge_plugins"]

# Upstream's multiPoint list, in upstream order, with its weights (DynamicResources is in
# it because DynamicResourceAllocation is GA and on in 1.34).
_DEFAULT_MULTI_POINT = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources"),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)


def default_plugins() -> Plugins:
    """The plugins of a profile that configures none: everything through ``multiPoint``."""
    return Plugins(multi_point=PluginSet(enabled=_DEFAULT_MULTI_POINT))


def merge_plugin_set(defaults: PluginSet, custom: PluginSet) -> PluginSet:
    """``custom`` applied on top of ``defaults`` for one extension point.

    Defaults named in ``custom.disabled`` (all of them for ``"*"``) are dropped; a custom
    enabled plugin with a default's name takes that default's place, keeping the order;
    the other custom plugins follow the defaults. The disabled list is kept (custom names
    first) because multiPoint expansion later needs to see it.
    """
    # Disabled entries keep only their name, as upstream does: a weight means nothing there.
    disabled = tuple(PluginRef(p.name) for p in (*custom.disabled, *defaults.disabled))
    disabled_names = {p.name for p in disabled}
    # When a name is enabled twice, the last entry replaces the default and the earlier
    # one is appended like any other plugin; the framework later rejects the duplicate.
    custom_index = {plugin.name: i for i, plugin in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for plugin in defaults.enabled:
            if plugin.name in disabled_names:
                continue
            index = custom_index.get(plugin.name)
            if index is not None:
                plugin = custom.enabled[index]
                replaced.add(index)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=tuple(enabled), disabled=disabled)


def merge_plugins(defaults: Plugins, custom: Plugins | None) -> Plugins:
    """``custom`` applied on top of ``defaults`` at every extension point (``None``: defaults)."""
    if custom is None:
        return defaults
    merged = {
        point: merge_plugin_set(defaults.point(point), custom.point(point))
        for point in EXTENSION_POINTS
    }
    return dataclasses.replace(defaults, **merged)


def default_config() -> KubeSchedulerConfiguration:
    """The configuration used without a file: one "default-scheduler" profile, all defaults."""
    profile = Profile(
        scheduler_name=DEFAULT_SCHEDULER_NAME,
        plugins=merge_plugins(default_plugins(), None),
        path="profiles[0]",
    )
    return KubeSchedulerConfiguration(profiles=(profile,))
