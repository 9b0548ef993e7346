"""The in-tree plugins, by their upstream names (``plugins/registry.go``)."""

from __future__ import annotations

from kubesched.framework.registry import PluginFactory, Registry
from kubesched.plugins import (
    coscheduling,
    defaultbinder,
    imagelocality,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumerestrictions,
    volumezone,
)
from kubesched.plugins import names as n
from kubesched.plugins.capacityscheduling import plugin as capacityscheduling
from kubesched.plugins.defaultpreemption import plugin as defaultpreemption
from kubesched.plugins.dynamicresources import plugin as dynamicresources
from kubesched.plugins.interpodaffinity import plugin as interpodaffinity
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.plugins.nodevolumelimits import csi as nodevolumelimits
from kubesched.plugins.podtopologyspread import plugin as podtopologyspread
from kubesched.plugins.volumebinding import plugin as volumebinding

IN_TREE: dict[str, PluginFactory] = {
    n.PRIORITY_SORT: queuesort.new,
    n.SCHEDULING_GATES: schedulinggates.new,
    n.NODE_UNSCHEDULABLE: nodeunschedulable.new,
    n.NODE_NAME: nodename.new,
    n.TAINT_TOLERATION: tainttoleration.new,
    n.NODE_AFFINITY: nodeaffinity.new,
    n.NODE_PORTS: nodeports.new,
    n.NODE_RESOURCES_FIT: fit.new,
    n.NODE_RESOURCES_BALANCED_ALLOCATION: balanced_allocation.new,
    n.VOLUME_RESTRICTIONS: volumerestrictions.new,
    n.NODE_VOLUME_LIMITS: nodevolumelimits.new,
    n.VOLUME_ZONE: volumezone.new,
    n.POD_TOPOLOGY_SPREAD: podtopologyspread.new,
    n.INTER_POD_AFFINITY: interpodaffinity.new,
    n.VOLUME_BINDING: volumebinding.new,
    n.IMAGE_LOCALITY: imagelocality.new,
    n.DYNAMIC_RESOURCES: dynamicresources.new,
    n.DEFAULT_PREEMPTION: defaultpreemption.new,
    n.DEFAULT_BINDER: defaultbinder.new,
    # Beyond upstream's in-tree plugins: scheduler-plugins' names, enabled by
    # configuration only.
    coscheduling.NAME: coscheduling.new,
    n.CAPACITY_SCHEDULING: capacityscheduling.new,
}


def in_tree_registry() -> Registry:
    """A new registry holding every in-tree plugin (add out-of-tree ones with ``merged``)."""
    return Registry(IN_TREE)
