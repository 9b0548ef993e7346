"""The summary of ``kubesched demo``: built from what the API server holds once the
workload has settled (pods, nodes, the scheduler's events), printed as tables or JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.cli.demo_story import RULE_ANNOTATION, zone_of
from kubesched.cli.demo_track import pod_scheduled_condition
from kubesched.objects.nodes import GPU_RESOURCE

__all__ = ["summary", "summary_text"]

RawObject = dict[str, Any]


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key')}{value}:{taint.get('effect')}"


def _node_entry(node: RawObject, pods_on: Counter[str]) -> dict[str, Any]:
    name = node["metadata"]["name"]
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return {
        "name": name,
        "zone": zone_of(node),
        "cpu": allocatable.get("cpu", ""),
        "memory": allocatable.get("memory", ""),
        "gpus": int(allocatable.get(GPU_RESOURCE, 0)),
        "taints": [dict(t) for t in (node.get("spec") or {}).get("taints") or []],
        "pods": pods_on[name],
    }


def _events_by_pod(events: Sequence[RawObject]) -> dict[str, list[RawObject]]:
    by_pod: dict[str, list[RawObject]] = {}
    for event in events:
        name = (event.get("involvedObject") or {}).get("name", "")
        by_pod.setdefault(name, []).append(event)
    return by_pod


def _messages(events: Sequence[RawObject], reason: str) -> list[str]:
    return [str(e.get("message", "")) for e in events if e.get("reason") == reason]


def summary(
    submitted: Sequence[str],
    pods: Sequence[RawObject],
    nodes: Sequence[RawObject],
    events: Sequence[RawObject],
    timings: Mapping[str, Any],
    api_server: str,
) -> dict[str, Any]:
    """The demo's result: every submitted pod with its node (or why it has none), the
    preempted pods with the Preempted event's message, counts per zone and node."""
    by_name = {p["metadata"]["name"]: p for p in pods}
    zones = {n["metadata"]["name"]: zone_of(n) for n in nodes}
    by_pod = _events_by_pod(events)
    entries, pending, preempted = [], [], []
    for name in submitted:
        pod_events = by_pod.get(name, [])
        raw = by_name.get(name)
        if raw is None:
            preempted.append(
                {"name": name, "message": " ".join(_messages(pod_events, "Preempted"))}
            )
            continue
        spec = raw.get("spec") or {}
        node = spec.get("nodeName") or ""
        entry = {
            "name": name,
            "profile": spec.get("schedulerName", ""),
            "priorityClass": spec.get("priorityClassName", ""),
            "priority": spec.get("priority", 0),
            "node": node,
            "zone": zones.get(node, ""),
            "phase": (raw.get("status") or {}).get("phase", ""),
            "rule": ((raw["metadata"].get("annotations") or {}).get(RULE_ANNOTATION, "")),
            "events": [str(e.get("reason")) for e in pod_events],
        }
        entries.append(entry)
        if not node:
            condition = pod_scheduled_condition(raw) or {}
            failed = _messages(pod_events, "FailedScheduling")
            pending.append(
                {
                    "name": name,
                    "reason": condition.get("reason", ""),
                    "message": condition.get("message", ""),
                    "event": failed[-1] if failed else "",
                }
            )
    _credit_preemptors(entries, preempted)
    pods_on = Counter(str(e["node"]) for e in entries if e["node"])
    per_zone = Counter(str(e["zone"]) for e in entries if e["node"])
    return {
        "apiServer": api_server,
        "nodes": [_node_entry(n, pods_on) for n in nodes],
        "pods": entries,
        "pending": pending,
        "preempted": preempted,
        "perZone": dict(sorted(per_zone.items())),
        "perNode": {n["metadata"]["name"]: pods_on[n["metadata"]["name"]] for n in nodes},
        "timings": dict(timings),
    }


def _credit_preemptors(entries: list[dict[str, Any]], preempted: list[dict[str, Any]]) -> None:
    """Name the victims in the rule of each pod that preempted: a pod that failed (and
    was nominated) before it was scheduled, on the node its victims were on."""
    for victim in preempted:
        # Both our message and upstream's end in "on node <name>".
        node = (
            victim["message"].rsplit(" on node ", 1)[-1] if " on node " in victim["message"] else ""
        )
        victim["node"] = node
        for entry in entries:
            if entry["node"] == node and entry["node"] and "FailedScheduling" in entry["events"]:
                entry["preempted"] = [*entry.get("preempted", []), victim["name"]]
    for entry in entries:
        if entry.get("preempted"):
            entry["rule"] += f" ({', '.join(entry['preempted'])})"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in (header, *rows)
    ]
    return "\n".join(lines) + "\n"


def _what_if_text(replay: Mapping[str, Any]) -> str:
    pods = replay["pods"]
    profile = replay["profile"]
    names = ", ".join(p["name"] for p in pods)
    lines = [
        f"\nWhat if {names} had named {profile}? The policy lab (the engine of kubesched "
        "simulate)\nschedules them again, in-process, onto the cluster as it is now without "
        "them:\n"
    ]
    width = max(len(p["name"]) for p in pods)
    for p in pods:
        where = p["node"] or f"<pending>: {p['message']}"
        lines.append(f"  {p['name']:<{width}}  {where}   (live: {p['live'] or '<pending>'})\n")
    lost = sum(1 for p in pods if p["live"] and not p["node"])
    if lost:
        lines.append(
            f"  With {profile}, {lost} of them would stay pending that the live scheduler placed.\n"
        )
    return "".join(lines)


def summary_text(data: Mapping[str, Any]) -> str:
    """The summary as the terminal shows it."""
    out = ["\nPlacements (read back from the API server)\n"]
    rows = [
        (
            p["name"],
            p["profile"],
            p["priorityClass"],
            p["node"] or "<pending>",
            p["zone"],
            p["phase"],
            p["rule"],
        )
        for p in data["pods"]
    ]
    out.append(_table(("POD", "PROFILE", "PRIORITY", "NODE", "ZONE", "PHASE", "WHY"), rows))
    out.append("\nPods per zone:  " + ", ".join(f"{z} {n}" for z, n in data["perZone"].items()))
    node_rows = [
        (
            n["name"],
            n["zone"],
            n["cpu"],
            n["memory"],
            str(n["gpus"]) if n["gpus"] else "-",
            ", ".join(map(_taint_text, n["taints"])) or "-",
            str(n["pods"]),
        )
        for n in data["nodes"]
    ]
    out.append("\n\nNodes\n")
    out.append(_table(("NODE", "ZONE", "CPU", "MEMORY", "GPUS", "TAINTS", "PODS"), node_rows))
    if data["preempted"]:
        out.append("\nPreempted (Preempted event)\n")
        out.extend(f"  {p['name']}: {p['message']}\n" for p in data["preempted"])
    if data["pending"]:
        out.append("\nPending (the pod's PodScheduled condition, as the scheduler wrote it)\n")
        for p in data["pending"]:
            out.append(f"  {p['name']}: PodScheduled=False {p['reason']}\n    {p['message']}\n")
    for replay in data.get("whatIf", []):
        out.append(_what_if_text(replay))
    t = data["timings"]
    bound = sum(1 for p in data["pods"] if p["node"])
    out.append(
        f"\n{bound} pods bound, {len(data['pending'])} pending, {len(data['preempted'])} "
        f"preempted in {t['total']:.2f} s (API server up in {t['apiServerStart']:.2f} s, "
        f"scheduler synced in {t['schedulerSync']:.2f} s; creation to binding: "
        f"median {t['bindMedianMs']:.0f} ms, max {t['bindMaxMs']:.0f} ms)\n"
    )
    return "".join(out)
