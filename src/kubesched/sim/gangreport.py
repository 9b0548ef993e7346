"""The report's gang and quota sections: per PodGroup, how many members were placed of how
many, against ``minMember``, and the phase its controller would report; per ElasticQuota,
what its namespace uses at the end of the run against ``min`` and ``max``.

The phase is the PodGroup controller's (:mod:`kubesched.objects.podgroupstatus`), reached
by reconciling until nothing changes, with placed members counted as Running (the kubelet
would run them) and the rest as Pending: ``Running`` once ``minMember`` members are
placed, ``Scheduling`` while fewer are, ``Pending`` while fewer than ``minMember``
members exist at all. Pods that name a group no PodGroup defines are reported under that
name with no ``minMember`` and no phase.

Amounts are the scheduler's integers: cpu in millicores, memory and the rest in units; a
resource's use is the requests of the namespace's pods on nodes at the end (what the
CapacityScheduling plugin counts, overhead included). An absent ``max`` is ``null``: no
limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kubesched.framework.snapshot import Snapshot
from kubesched.objects.elasticquota import ElasticQuota
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import PodGroup, pod_group_key
from kubesched.objects.podgroupstatus import compute_status
from kubesched.objects.resources import Resource

__all__ = ["gangs", "quotas"]

#: Reconciles at most (the phase moves one step each; four steps reach any phase).
_MAX_RECONCILES = 8


def _phase(min_member: int, placed: int, members: int) -> str:
    group: dict[str, Any] = {"spec": {"minMember": min_member}, "status": {}}
    pods = [
        {"metadata": {"name": f"m{i}"}, "status": {"phase": "Running" if i < placed else "Pending"}}
        for i in range(members)
    ]
    for _ in range(_MAX_RECONCILES):
        status = compute_status(group, pods)
        if status == group["status"]:
            break
        group["status"] = status
    return str(group["status"].get("phase", ""))


def gangs(
    groups: Iterable[PodGroup], snapshot: Snapshot, unplaced: Sequence[Pod]
) -> list[dict[str, Any]]:
    """One entry per PodGroup, and per group name pods carry that no PodGroup defines,
    sorted by ``namespace/name``."""
    placed: dict[str, int] = {}
    members: dict[str, int] = {}
    for info in snapshot.list():
        for pinfo in info.pods:
            key = pod_group_key(pinfo.pod)
            if key is not None:
                placed[key] = placed.get(key, 0) + 1
                members[key] = members.get(key, 0) + 1
    for pod in unplaced:
        key = pod_group_key(pod)
        if key is not None:
            members[key] = members.get(key, 0) + 1
    known = {g.key: g for g in groups}
    out = []
    for key in sorted(set(known) | set(members)):
        group = known.get(key)
        count, bound = members.get(key, 0), placed.get(key, 0)
        out.append(
            {
                "podGroup": key,
                "minMember": group.min_member if group else None,
                "members": count,
                "placed": bound,
                "pending": count - bound,
                "phase": _phase(group.min_member, bound, count) if group else None,
            }
        )
    return out


def _amounts(resource: Resource | None) -> dict[str, int] | None:
    if resource is None:
        return None
    return {name: resource.get(name) for name in sorted(resource.names())}


def quotas(elastic_quotas: Iterable[ElasticQuota], snapshot: Snapshot) -> list[dict[str, Any]]:
    """One entry per ElasticQuota, sorted by ``namespace/name``: ``used`` lists every
    resource its ``min`` or ``max`` names and every one its namespace's pods request."""
    used_by_namespace: dict[str, Resource] = {}
    for info in snapshot.list():
        for pinfo in info.pods:
            pod = pinfo.pod
            used_by_namespace.setdefault(pod.namespace, Resource()).add(pod.requests)
    out = []
    for quota in sorted(elastic_quotas, key=lambda q: q.key):
        used = used_by_namespace.get(quota.namespace, Resource())
        names = set(used.names())
        for bound in (quota.min, quota.max):
            if bound is not None:
                names.update(bound.names())
        out.append(
            {
                "elasticQuota": quota.key,
                "namespace": quota.namespace,
                "used": {name: used.get(name) for name in sorted(names)},
                "min": _amounts(quota.min),
                "max": _amounts(quota.max),
            }
        )
    return out
