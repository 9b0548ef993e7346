"""What if the training Jobs had used kube-scheduler's defaults? ``kubesched demo`` asks
the policy lab (:mod:`kubesched.sim`, the engine of ``kubesched simulate``): it schedules
the pods those Jobs made again, in-process, under the default profile, onto the cluster
as the API server holds it once the demo is done, without them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.simulator import Simulator

__all__ = ["replays", "what_if"]

#: Phases of a pod whose containers have finished: it holds nothing on its node.
_FINISHED = ("Succeeded", "Failed")


def what_if(
    nodes: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    profile: str,
    config: KubeSchedulerConfiguration,
    seed: int,
) -> list[dict[str, Any]]:
    """Where the pods ``names`` of ``pods`` would go under ``profile`` (one of
    ``config``'s), the other bound pods that still run staying where they are:
    ``[{"name", "node", "message"}]`` in the order their scheduling ended (``node`` None
    when pending)."""
    chosen = set(names)
    by_name = {p["metadata"]["name"]: p for p in pods}
    staying = [
        Pod.from_dict(dict(p))
        for p in pods
        if (p.get("spec") or {}).get("nodeName")
        and p["metadata"]["name"] not in chosen
        and (p.get("status") or {}).get("phase") not in _FINISHED
    ]
    again = []
    for name in names:
        raw = copy.deepcopy(dict(by_name[name]))
        raw["spec"]["schedulerName"] = profile
        raw["spec"].pop("nodeName", None)
        raw.pop("status", None)
        again.append(Pod.from_dict(raw))
    simulator = Simulator(
        [Node.from_dict(dict(n)) for n in nodes], staying, config, in_tree_registry(), seed=seed
    )
    return [
        {"name": p.pod.name, "node": p.node, "message": p.message} for p in simulator.run(again)
    ]


def replays(
    nodes: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    groups: Mapping[str, Sequence[str]],
    owners: Mapping[str, Sequence[str]],
    config: KubeSchedulerConfiguration,
    seed: int,
) -> list[dict[str, Any]]:
    """:func:`what_if` for each profile of ``groups`` (profile → the pods to schedule
    again with it, in the order they were made; ``owners``: profile → their owners):
    ``[{"profile", "owners", "pods": [{"name", "node", "message", "live"}]}]``, where
    ``live`` is the node the live scheduler chose (None if it left the pod pending)."""
    live = {p["metadata"]["name"]: (p.get("spec") or {}).get("nodeName") or None for p in pods}
    results = []
    for profile, names in groups.items():
        if not names:
            continue
        placements = what_if(nodes, pods, names, profile, config, seed)
        for placement in placements:
            placement["live"] = live.get(placement["name"])
        results.append({"profile": profile, "owners": list(owners[profile]), "pods": placements})
    return results
