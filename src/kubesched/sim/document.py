"""The lab's report document: one versioned JSON shape for every lab command.

``simulate``, ``explain``, ``compare`` and ``capacity`` print it with ``--output json``
and ``kubesched report`` renders it as HTML. The shape is published as a JSON Schema
(``kubesched/sim/report.schema.json``, copied to ``docs/report.schema.json``); ``kind``
says which command made it. Documents are plain data built from the simulator's state,
so that the same inputs and seed give the same bytes: no clock but
``SOURCE_DATE_EPOCH``, no unordered containers.
"""

from __future__ import annotations

import datetime
import importlib.resources
import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeToStatus
from kubesched.objects.node import LABEL_ZONE
from kubesched.objects.pod import Pod
from kubesched.objects.resources import CPU, MEMORY, PODS

#: The document's group and version; a change that removes or retypes a field bumps it.
API_VERSION = "lab.kubesched.io/v1alpha1"
SIMULATION = "SimulationReport"
EXPLANATION = "ExplainReport"
COMPARISON = "ComparisonReport"
CAPACITY = "CapacityReport"
KINDS = (SIMULATION, EXPLANATION, COMPARISON, CAPACITY)

#: Nodes without the zone label are grouped under this name (an empty string would be
#: ambiguous in the HTML, and upstream's spreading ignores such nodes for zones).
NO_ZONE = ""

#: At most this many distinct per-node verdict tables are kept for pending pods; pods
#: past it keep their message only (``pending.truncated``). 100 tables of 500 nodes stay
#: well under a megabyte.
MAX_VERDICT_SETS = 100


def schema() -> dict[str, Any]:
    """The published JSON Schema of every kind of document."""
    text = importlib.resources.files(__package__).joinpath("report.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def header(kind: str, command: str, seed: int | None, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The fields every document starts with."""
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {
            "command": command,
            "generatedAt": generated_at(),
            "seed": seed,
            "inputs": dict(inputs),
        },
    }


def generated_at() -> str | None:
    """``SOURCE_DATE_EPOCH`` as an RFC 3339 time, or None when it is unset, so that a
    rerun gives identical bytes unless the caller asks for a time."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if not raw:
        return None
    try:
        seconds = int(raw)
    except ValueError:
        raise ValueError(f"SOURCE_DATE_EPOCH: Invalid value: {raw!r}: must be an integer") from None
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def zone_of(info: NodeInfo) -> str:
    """The node's ``topology.kubernetes.io/zone`` label, or NO_ZONE."""
    return info.node.labels.get(LABEL_ZONE, NO_ZONE)


def node_usage(snapshot: Snapshot, order: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Per node, what its pods request of what it can allocate: cpu (millicores), memory
    (bytes), pods, and every extended resource the node offers or a pod requests. Nodes
    come in ``order`` (the cluster file's), then any others in the snapshot's order."""
    out = []
    for info in ordered(snapshot, order):
        alloc, req = info.allocatable, info.requested
        resources: dict[str, dict[str, int]] = {
            CPU: {"requested": req.milli_cpu, "allocatable": alloc.milli_cpu},
            MEMORY: {"requested": req.memory, "allocatable": alloc.memory},
            PODS: {"requested": len(info.pods), "allocatable": alloc.allowed_pod_number},
        }
        for name in sorted(set(alloc.scalar) | set(req.scalar)):
            resources[name] = {"requested": req.scalar.get(name, 0), "allocatable": alloc.get(name)}
        out.append({"name": info.name, "zone": zone_of(info), "resources": resources})
    return out


def ordered(snapshot: Snapshot, order: Sequence[str]) -> list[NodeInfo]:
    """The snapshot's nodes in ``order`` first (the snapshot interleaves zones, as
    upstream's node tree does; people read nodes in the order they wrote them)."""
    infos = snapshot.list()
    rank = {name: i for i, name in enumerate(order)}
    return sorted(infos, key=lambda info: rank.get(info.name, len(rank)))


def utilisation(usage: Sequence[Mapping[str, Any]], resource: str) -> list[float]:
    """Requested / allocatable of ``resource`` per node (nodes that offer none left out)."""
    values = []
    for node in usage:
        amounts = node["resources"].get(resource)
        if amounts and amounts["allocatable"] > 0:
            values.append(amounts["requested"] / amounts["allocatable"])
    return values


def stats(values: Sequence[float]) -> dict[str, float]:
    """Mean, max and population standard deviation, rounded to 4 places (0 when empty)."""
    if not values:
        return {"mean": 0.0, "max": 0.0, "stddev": 0.0}
    return {
        "mean": round(statistics.fmean(values), 4),
        "max": round(max(values), 4),
        "stddev": round(statistics.pstdev(values), 4),
    }


def workload_of(pod: Pod, owners: Mapping[str, tuple[str, str, str]]) -> str | None:
    """The workload a pod belongs to: its controller (``Kind/name``), else its label set
    (``k=v,k=v``), else None for a bare pod without labels."""
    owner = owners.get(pod.key)
    if owner:
        return f"{owner[0]}/{owner[1]}"
    if pod.labels:
        return ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
    return None


def spread(
    snapshot: Snapshot, owners: Mapping[str, tuple[str, str, str]], order: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Per workload, how its pods lie over zones and nodes, with the skew (max - min)
    over every zone and every node of the cluster, as PodTopologySpread counts it."""
    infos = ordered(snapshot, order)
    zones = sorted({zone_of(i) for i in infos})
    groups: dict[str, dict[str, Any]] = {}
    for info in infos:
        zone = zone_of(info)
        for pinfo in info.pods:
            name = workload_of(pinfo.pod, owners)
            if name is None:
                continue
            group = groups.setdefault(
                name,
                {
                    "workload": name,
                    "namespace": pinfo.pod.namespace,
                    "labels": dict(sorted(pinfo.pod.labels.items())),
                    "perZone": dict.fromkeys(zones, 0),
                    "perNode": {},
                },
            )
            group["perZone"][zone] += 1
            group["perNode"][info.name] = group["perNode"].get(info.name, 0) + 1
    out = []
    for name in sorted(groups):
        group = groups[name]
        per_node = [group["perNode"].get(i.name, 0) for i in infos]
        group["perNode"] = {
            i.name: group["perNode"][i.name] for i in infos if i.name in group["perNode"]
        }
        group["zoneSkew"] = max(group["perZone"].values()) - min(group["perZone"].values())
        group["nodeSkew"] = max(per_node) - min(per_node)
        group["pods"] = sum(per_node)
        out.append(group)
    return out


def node_verdicts(statuses: NodeToStatus, node_names: Iterable[str]) -> dict[str, list[str]]:
    """Every node's verdict in the scheduler's words, grouped: verdict -> nodes."""
    verdicts: dict[str, list[str]] = {}
    for name in node_names:
        verdict = statuses.get(name).message or "rejected"
        verdicts.setdefault(verdict, []).append(name)
    return dict(sorted(verdicts.items()))


def pending_section(
    pending: Sequence[tuple[str, str | None, NodeToStatus | None]], node_names: Sequence[str]
) -> dict[str, Any]:
    """Pending pods grouped by each reason a node gave (a pod with several reasons is
    counted under each), every pod with its message and a reference to the table of
    every node's verdict (tables shared by pods that got the same verdicts)."""
    reasons: dict[str, list[str]] = {}
    pods = []
    tables: list[dict[str, list[str]]] = []
    index: dict[str, int] = {}
    truncated = False
    for key, message, statuses in pending:
        ref: int | None = None
        if statuses is not None and len(statuses):
            seen: set[str] = set()
            for name in node_names:
                seen.update(statuses.get(name).reasons)
            for reason in sorted(seen) or [message or "pending"]:
                reasons.setdefault(reason, []).append(key)
            verdicts = node_verdicts(statuses, node_names)
            fingerprint = repr(verdicts)
            ref = index.get(fingerprint)
            if ref is None and len(tables) < MAX_VERDICT_SETS:
                ref = index[fingerprint] = len(tables)
                tables.append(verdicts)
            elif ref is None:
                truncated = True
        else:
            reasons.setdefault(message or "pending", []).append(key)
        pods.append({"pod": key, "message": message, "verdicts": ref})
    return {
        "reasons": [
            {"reason": reason, "count": len(keys), "pods": keys}
            for reason, keys in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ],
        "pods": pods,
        "verdictSets": tables,
        "truncated": truncated,
    }


def kpis(
    placed: Sequence[tuple[str, str | None]], usage: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The figures ``compare`` sets side by side: pods placed and pending (of the pods this
    run scheduled), nodes running at least one pod, cpu and memory utilisation of
    allocatable over all nodes, and the zone skew of the pods this run placed (max - min
    of pods per zone, over every zone of the cluster)."""
    zone_of_node = {n["name"]: n["zone"] for n in usage}
    per_zone = dict.fromkeys(sorted(set(zone_of_node.values())), 0)
    for _, node in placed:
        if node is not None:
            per_zone[zone_of_node[node]] += 1
    return {
        "placed": sum(1 for _, node in placed if node is not None),
        "pending": sum(1 for _, node in placed if node is None),
        "nodesUsed": sum(1 for n in usage if n["resources"][PODS]["requested"] > 0),
        "cpu": stats(utilisation(usage, CPU)),
        "memory": stats(utilisation(usage, MEMORY)),
        "zoneSkew": max(per_zone.values()) - min(per_zone.values()) if per_zone else 0,
    }
