"""Gang workloads for ``kubesched bench``, in the shape of scheduler_perf's gang cases.

- ``gang`` — gangs of 3 pods (scheduler_perf's small-gang case): every 3 measured pods
  name one PodGroup of ``minMember`` 3 through the ``scheduling.x-k8s.io/pod-group``
  label; 1,000 gangs by default (``--pods 9000`` for 3,000).
- ``gang-large`` — gangs of 1,000 pods: 3 by default.

The pods are the basic workload's (100m cpu, 500Mi), on 5,000 nodes of scheduler_perf's
shape, every node evaluated. The profile is the given one with ``Coscheduling`` added
(multiPoint, and as the QueueSort plugin), as scheduler-plugins' configuration enables
it. The bench reports gangs/s besides pods/s.
"""

from __future__ import annotations

import dataclasses

from kubesched.config import KubeSchedulerConfiguration
from kubesched.config.types import PluginRef, PluginSet
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import POD_GROUP_LABEL, PodGroup

__all__ = ["GANG_SIZES", "GANG_WORKLOADS", "gang_config", "pod_groups", "with_group"]

GANG_WORKLOADS = ("gang", "gang-large")
#: Members per gang, by workload.
GANG_SIZES = {"gang": 3, "gang-large": 1000}
COSCHEDULING = "Coscheduling"


def group_name(prefix: str, workload: str, i: int) -> str:
    """The PodGroup of the ``i``-th pod named ``<prefix>-<i>``."""
    return f"{prefix}-gang-{i // GANG_SIZES[workload]}"


def with_group(workload: str, template: Pod, prefix: str, i: int) -> Pod:
    """Pod ``<prefix>-<i>``, a member of its gang."""
    name = f"{prefix}-{i}"
    labels = {**template.labels, POD_GROUP_LABEL: group_name(prefix, workload, i)}
    return template.evolve(name=name, uid=name, labels=labels)


def pod_groups(workload: str, prefixes: dict[str, int]) -> list[PodGroup]:
    """The PodGroups of ``prefix: count`` pods of ``workload`` (a last, partial gang
    has as many members as pods)."""
    size = GANG_SIZES[workload]
    out = []
    for prefix, count in prefixes.items():
        for start in range(0, count, size):
            name = group_name(prefix, workload, start)
            members = min(size, count - start)
            out.append(PodGroup(namespace="default", name=name, uid=name, min_member=members))
    return out


def gang_config(config: KubeSchedulerConfiguration) -> KubeSchedulerConfiguration:
    """``config`` with Coscheduling enabled in every profile that has no gang plugin of
    its own: in multiPoint, and as the only QueueSort plugin."""
    profiles = []
    for profile in config.profiles:
        plugins = profile.plugins
        named = {ref.name for ref in plugins.multi_point.enabled}
        if COSCHEDULING not in named:
            multi = PluginSet(
                (*plugins.multi_point.enabled, PluginRef(COSCHEDULING)),
                plugins.multi_point.disabled,
            )
            sort = PluginSet((PluginRef(COSCHEDULING),), (PluginRef("*"),))
            plugins = dataclasses.replace(plugins, multi_point=multi, queue_sort=sort)
        profiles.append(dataclasses.replace(profile, plugins=plugins))
    return dataclasses.replace(config, profiles=tuple(profiles))
