"""The summary of ``kubesched demo``: built from what the API server holds once the
workload has settled (workloads, pods, nodes, claims and volumes, the scheduler's and the
controllers' events), pods counted by owner, printed as tables or JSON; each pod with the
volumes its claims are bound to (and their zones) and the devices its ResourceClaims
were given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.cli.demo_owners import OwnerIndex, desired_pods, owner_entry, owner_key
from kubesched.cli.demo_story import zone_of
from kubesched.cli.demo_track import pod_scheduled_condition
from kubesched.cli.demo_workloads import RULE_ANNOTATION
from kubesched.objects.node import Node
from kubesched.objects.nodes import GPU_RESOURCE, HOSTNAME_LABEL, ZONE_LABEL

__all__ = ["summary", "summary_text"]

RawObject = dict[str, Any]
#: Phases of a pod whose containers have all finished.
FINISHED = ("Succeeded", "Failed")


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
        involved = event.get("involvedObject") or {}
        if involved.get("kind", "Pod") != "Pod":
            continue
        name = involved.get("name", "")
        by_pod.setdefault(name, []).append(event)
    return by_pod


def _messages(events: Sequence[RawObject], reason: str) -> list[str]:
    return [str(e.get("message", "")) for e in events if e.get("reason") == reason]


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _occupies(entry: Mapping[str, Any]) -> bool:
    """A bound pod whose containers have not finished holds its node's resources."""
    return bool(entry["node"]) and entry["phase"] not in FINISHED


def _topology(volume: Mapping[str, Any], key: str) -> str:
    """The values the volume's required node affinity allows for node label ``key``."""
    affinity = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}
    values: list[str] = []
    for term in affinity.get("nodeSelectorTerms") or []:
        for expression in term.get("matchExpressions") or []:
            if expression.get("key") == key and expression.get("operator") == "In":
                values.extend(str(v) for v in expression.get("values") or [])
    return ",".join(values)


def _volumes(
    pod: Mapping[str, Any],
    claims: Mapping[str, RawObject],
    volumes: Mapping[str, RawObject],
    pod_zone: str,
) -> list[dict[str, Any]]:
    """The pod's claims, each with the volume it is bound to and where that volume is."""
    found = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not name:
            continue
        claim = claims.get(str(name)) or {}
        spec = claim.get("spec") or {}
        bound = volumes.get(str(spec.get("volumeName") or "")) or {}
        zone = _topology(bound, ZONE_LABEL)
        found.append(
            {
                "claim": str(name),
                "phase": str((claim.get("status") or {}).get("phase") or "Missing"),
                "storageClass": str(spec.get("storageClassName") or ""),
                "volume": str((bound.get("metadata") or {}).get("name") or ""),
                "zone": zone,
                "node": _topology(bound, HOSTNAME_LABEL),
                "inPodsZone": bool(zone) and pod_zone in zone.split(","),
            }
        )
    return found


def _models(slices: Sequence[RawObject]) -> dict[tuple[str, str, str], str]:
    """Each published device's ``model`` attribute, by (driver, pool, device)."""
    models = {}
    for s in slices:
        spec = s.get("spec") or {}
        driver, pool = str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", ""))
        for device in spec.get("devices") or []:
            model = ((device.get("attributes") or {}).get("model") or {}).get("string")
            if model is not None:
                models[(driver, pool, str(device.get("name", "")))] = str(model)
    return models


def summary(
    workloads: Sequence[RawObject],
    pods: Sequence[RawObject],
    replica_sets: Sequence[RawObject],
    nodes: Sequence[RawObject],
    events: Sequence[RawObject],
    watched: Mapping[str, Any],
    timings: Mapping[str, Any],
    api_server: str,
    storage: Mapping[str, Sequence[RawObject]] | None = None,
) -> dict[str, Any]:
    """The demo's result: every workload with its pods counted by owner, every pod with
    its node (or why it has none), its volumes and devices, the preempted pods with the
    Preempted event's message and the pod made in their place, counts of running pods per
    zone and node.

    ``workloads``: the demo's workloads as the server holds them, in the order they were
    submitted; ``watched``: what the watch saw (``firstSeen``: pod name → the order it
    appeared in, ``replaces``: new pod → the pod it was made for, ``gone``: deleted pods
    as last seen, ``devices``: pod name → the devices its claims were given);
    ``storage``: the server's ``claims`` (PersistentVolumeClaims), ``volumes``
    (PersistentVolumes) and ``slices`` (ResourceSlices)."""
    first_seen: Mapping[str, int] = watched.get("firstSeen", {})
    replaces: Mapping[str, str] = watched.get("replaces", {})
    gone: Mapping[str, RawObject] = watched.get("gone", {})
    devices: Mapping[str, Sequence[Mapping[str, str]]] = watched.get("devices", {})
    storage = storage or {}
    claims = {c["metadata"]["name"]: c for c in storage.get("claims", ())}
    volumes = {v["metadata"]["name"]: v for v in storage.get("volumes", ())}
    models = _models(storage.get("slices", ()))
    index = OwnerIndex(replica_sets)
    node_views = [Node.from_dict(dict(n)) for n in nodes]
    zones = {n["metadata"]["name"]: zone_of(n) for n in nodes}
    by_pod = _events_by_pod(events)
    ordered = sorted(pods, key=lambda p: first_seen.get(p["metadata"]["name"], 0))
    victims = sorted(
        {name for name, evs in by_pod.items() if _messages(evs, "Preempted")}
        - set(p["metadata"]["name"] for p in pods),
        key=lambda n: first_seen.get(n, 0),
    )
    preempted: list[dict[str, Any]] = []
    for name in victims:
        last = gone.get(name) or {}
        made_again = [new for new, old in replaces.items() if old == name]
        preempted.append(
            {
                "name": name,
                "message": " ".join(_messages(by_pod[name], "Preempted")),
                "owner": index.owner(last) if last else None,
                "replacement": made_again[0] if made_again else None,
            }
        )
    entries, pending = [], []
    for raw in ordered:
        name = raw["metadata"]["name"]
        pod_events = by_pod.get(name, [])
        spec = raw.get("spec") or {}
        node = spec.get("nodeName") or ""
        entry = {
            "name": name,
            "owner": index.owner(raw),
            "controller": index.controller(raw),
            "profile": spec.get("schedulerName", ""),
            "priorityClass": spec.get("priorityClassName", ""),
            "priority": spec.get("priority", 0),
            "node": node,
            "zone": zones.get(node, ""),
            "phase": _phase(raw),
            "rule": ((raw["metadata"].get("annotations") or {}).get(RULE_ANNOTATION, "")),
            "events": [str(e.get("reason")) for e in pod_events],
            "volumes": _volumes(raw, claims, volumes, zones.get(node, "")),
            "devices": [
                {**d, "model": models.get((d["driver"], d["pool"], d["device"]), "")}
                for d in devices.get(name, ())
            ],
        }
        if name in replaces:
            entry["replaces"] = replaces[name]
        entries.append(entry)
        if not node:
            condition = pod_scheduled_condition(raw) or {}
            failed = _messages(pod_events, "FailedScheduling")
            pending.append(
                {
                    "name": name,
                    "owner": entry["owner"],
                    "reason": condition.get("reason", ""),
                    "message": condition.get("message", ""),
                    "event": failed[-1] if failed else "",
                }
            )
    _credit_preemptors(entries, preempted)
    owners = []
    for workload in workloads:
        key = owner_key(str(workload["kind"]), workload["metadata"]["name"])
        owned = [r for r in ordered if index.owner(r) == key]
        owners.append(
            owner_entry(
                workload,
                owned,
                desired_pods(workload, node_views),
                str((workload["metadata"].get("annotations") or {}).get(RULE_ANNOTATION, "")),
                [v["name"] for v in preempted if v["owner"] == key],
            )
        )
    # Owners first in the order they were submitted, pods of an owner in the order made.
    rank = {o["owner"]: i for i, o in enumerate(owners)}
    entries.sort(key=lambda e: rank.get(e["owner"], len(rank)))
    pods_on = Counter(str(e["node"]) for e in entries if _occupies(e))
    per_zone = Counter(str(e["zone"]) for e in entries if _occupies(e))
    return {
        "apiServer": api_server,
        "podGroups": [_pod_group_entry(g) for g in storage.get("podGroups", ())],
        "elasticQuotas": [_quota_entry(q) for q in storage.get("elasticQuotas", ())],
        "nodes": [_node_entry(n, pods_on) for n in nodes],
        "owners": owners,
        "pods": entries,
        "pending": pending,
        "preempted": preempted,
        "perZone": dict(sorted(per_zone.items())),
        "perNode": {n["metadata"]["name"]: pods_on[n["metadata"]["name"]] for n in nodes},
        "timings": dict(timings),
    }


def _pod_group_entry(group: RawObject) -> dict[str, Any]:
    meta, spec = group["metadata"], group.get("spec") or {}
    status = group.get("status") or {}
    return {
        "name": f"{meta.get('namespace')}/{meta['name']}",
        "minMember": int(spec.get("minMember") or 0),
        "phase": str(status.get("phase") or ""),
        "running": int(status.get("running") or 0),
    }


def _quota_entry(quota: RawObject) -> dict[str, Any]:
    meta, spec = quota["metadata"], quota.get("spec") or {}
    return {
        "name": f"{meta.get('namespace')}/{meta['name']}",
        "min": dict(spec.get("min") or {}),
        "max": dict(spec.get("max") or {}),
        "used": dict((quota.get("status") or {}).get("used") or {}),
    }


def _credit_preemptors(entries: list[dict[str, Any]], preempted: list[dict[str, Any]]) -> None:
    """Name the victims beside each pod that preempted: a pod that failed (and was
    nominated) before it was scheduled, on the node its victims were on."""
    for victim in preempted:
        # Both our message and upstream's end in "on node <name>".
        node = (
            victim["message"].rsplit(" on node ", 1)[-1] if " on node " in victim["message"] else ""
        )
        victim["node"] = node
        for entry in entries:
            if entry["node"] == node and entry["node"] and "FailedScheduling" in entry["events"]:
                entry["preempted"] = [*entry.get("preempted", []), victim["name"]]


def _table(header: Sequence[str], rows: Sequence[Sequence[str] | str]) -> str:
    """Rows of cells under ``header``, columns aligned; a row that is a string is a
    heading of the rows after it (it sets no column's width)."""
    cells = [r for r in rows if not isinstance(r, str)]
    widths = [max(len(str(row[i])) for row in (header, *cells)) for i in range(len(header))]
    lines = []
    for row in (header, *rows):
        if isinstance(row, str):
            lines.append(row)
            continue
        text = "  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True))
        lines.append(text.rstrip())
    return "\n".join(lines) + "\n"


def _owner_list(owners: Sequence[str]) -> str:
    """``Kind/a, Kind/b`` as ``Kinds a, b`` (one kind), else ``Kind a, Other b``."""
    split = [o.split("/", 1) for o in owners]
    kinds = {kind for kind, _ in split}
    if len(kinds) == 1 and len(split) > 1:
        return f"{split[0][0]}s {', '.join(name for _, name in split)}"
    return ", ".join(f"{kind} {name}" for kind, name in split)


def _what_if_text(replay: Mapping[str, Any]) -> str:
    pods = replay["pods"]
    profile = replay["profile"]
    lines = [
        f"\nWhat if the pods of {_owner_list(replay['owners'])} had named {profile}? "
        "The policy lab (the engine of kubesched simulate)\nschedules them again, "
        "in-process, onto the cluster as it is now without them:\n"
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


def _note(pod: Mapping[str, Any]) -> str:
    notes = []
    if pod.get("preempted"):
        notes.append(f"preempted {', '.join(pod['preempted'])}")
    if pod.get("replaces"):
        notes.append(f"made for {pod['replaces']}")
    return "; ".join(notes)


def _placement_rows(data: Mapping[str, Any]) -> list[Sequence[str] | str]:
    rows: list[Sequence[str] | str] = []
    by_owner: dict[str | None, list[Mapping[str, Any]]] = {}
    for p in data["pods"]:
        by_owner.setdefault(p["owner"], []).append(p)
    headings = {o["owner"]: f"{o['kind']} {o['name']}  {o['text']}" for o in data["owners"]}
    rules = {o["owner"]: o["rule"] for o in data["owners"]}
    for owner, pods in by_owner.items():
        heading = headings.get(owner or "", owner or "pods of no controller")
        rule = rules.get(owner or "")
        rows.append(f"{heading}   [{rule}]" if rule else heading)
        for p in pods:
            rows.append(
                (
                    f"  {p['name']}",
                    p["profile"],
                    p["priorityClass"],
                    p["node"] or "<pending>",
                    p["zone"],
                    p["phase"],
                    _note(p),
                )
            )
            rows.extend(_volume_line(v) for v in p.get("volumes", ()))
            rows.extend(_device_line(d) for d in p.get("devices", ()))
    return rows


def _volume_line(volume: Mapping[str, Any]) -> str:
    where = volume["zone"] or volume["node"] or "no topology"
    bound = f"volume {volume['volume']} in {where}" if volume["volume"] else "no volume"
    return (
        f"      claim {volume['claim']} ({volume['storageClass'] or 'no class'}, "
        f"{volume['phase']}) → {bound}"
    )


def _device_line(device: Mapping[str, Any]) -> str:
    model = f" ({device['model']})" if device.get("model") else ""
    return (
        f"      claim {device['claim']} request {device['request']} → {device['driver']} "
        f"{device['pool']}/{device['device']}{model}"
    )


def summary_text(data: Mapping[str, Any]) -> str:
    """The summary as the terminal shows it."""
    out = ["\nPlacements, by owner (read back from the API server)\n"]
    out.append(
        _table(
            ("POD", "PROFILE", "PRIORITY", "NODE", "ZONE", "PHASE", "NOTE"),
            _placement_rows(data),
        )
    )
    out.append(
        "\nRunning pods per zone:  " + ", ".join(f"{z} {n}" for z, n in data["perZone"].items())
    )
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
        out.append("\nPreempted (Preempted event), and made again by its owner\n")
        for p in data["preempted"]:
            out.append(f"  {p['name']}: {p['message']}\n")
            if p.get("replacement"):
                out.append(f"    {p['owner']} made {p['replacement']} in its place\n")
    if data["pending"]:
        out.append("\nPending (the pod's PodScheduled condition, as the scheduler wrote it)\n")
        for p in data["pending"]:
            owner = f" ({p['owner']})" if p.get("owner") else ""
            out.append(
                f"  {p['name']}{owner}: PodScheduled=False {p['reason']}\n    {p['message']}\n"
            )
    if data.get("podGroups") or data.get("elasticQuotas"):
        out.append("\nGangs and quotas (read back from the API server)\n")
        for g in data.get("podGroups", []):
            out.append(
                f"  PodGroup {g['name']}: minMember {g['minMember']}, phase "
                f"{g['phase'] or '-'}, {g['running']} running\n"
            )
        for q in data.get("elasticQuotas", []):
            used = ", ".join(
                f"{name} {q['used'].get(name, '0')} of max {limit} (min {q['min'].get(name, '0')})"
                for name, limit in q["max"].items()
            )
            out.append(f"  ElasticQuota {q['name']}: {used}\n")
    for replay in data.get("whatIf", []):
        out.append(_what_if_text(replay))
    out.append("\nWorkloads (pods counted by owner)\n")
    width = max((len(o["kind"]) for o in data["owners"]), default=0)
    name_width = max((len(o["name"]) for o in data["owners"]), default=0)
    out.extend(
        f"  {o['kind']:<{width}}  {o['name']:<{name_width}}  {o['text']}\n" for o in data["owners"]
    )
    t = data["timings"]
    bound = sum(1 for p in data["pods"] if p["node"])
    claims = [v for p in data["pods"] for v in p.get("volumes", ())]
    bound_claims = sum(1 for v in claims if v["phase"] == "Bound")
    in_zone = sum(1 for v in claims if v["inPodsZone"])
    devices = sum(len(p.get("devices", ())) for p in data["pods"])
    out.append(
        f"\n{bound} pods bound, {len(data['pending'])} pending, {len(data['preempted'])} "
        f"preempted, {bound_claims} claims bound ({in_zone} to a volume in its pod's zone), "
        f"{devices} devices allocated through DRA in {t['total']:.2f} s (API server up in "
        f"{t['apiServerStart']:.2f} s, "
        f"scheduler synced in {t['schedulerSync']:.2f} s, every wave settled in "
        f"{t['settled']:.2f} s, then Jobs ran to the end; creation to binding: "
        f"median {t['bindMedianMs']:.0f} ms, max {t['bindMaxMs']:.0f} ms)\n"
    )
    return "".join(out)
