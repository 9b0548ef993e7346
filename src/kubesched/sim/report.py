"""Human-readable tables for the policy lab's results (the JSON is the contract)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    return "\n".join(lines) + "\n"


def _pct(used: int, total: int) -> str:
    return f"{100 * used / total:.0f}%" if total else "-"


def _mem(value: int) -> str:
    for unit, size in (("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def simulation_table(data: dict[str, Any]) -> str:
    """Where each pod went (or why not), then per-node utilisation and totals."""
    rows = []
    for p in data["placements"]:
        outcome = p["node"] if p["node"] is not None else "-"
        note = p["message"] or ""
        if p["preempted"]:
            note = ("preempted " + ", ".join(p["preempted"]) + " " + note).strip()
        rows.append([p["pod"], outcome, note])
    out = _table(["POD", "NODE", "NOTE"], rows)
    node_rows = []
    for n in data["summary"]["nodes"]:
        cpu, mem = n["cpu"], n["memory"]
        node_rows.append(
            [
                n["name"],
                f"{n['pods']}/{n['allowedPods']}",
                f"{cpu['requested']}m/{cpu['allocatable']}m",
                _pct(cpu["requested"], cpu["allocatable"]),
                f"{_mem(mem['requested'])}/{_mem(mem['allocatable'])}",
                _pct(mem["requested"], mem["allocatable"]),
            ]
        )
    out += "\n" + _table(["NODE", "PODS", "CPU", "CPU%", "MEMORY", "MEM%"], node_rows)
    out += _gangs_and_quotas(data)
    s = data["summary"]
    out += (
        f"\n{s['scheduled']} scheduled, {s['unschedulable']} unschedulable, "
        f"{s['preempted']} preempted, of {s['pods']} pods\n"
    )
    return out


def _amount(name: str, value: int | None) -> str:
    if value is None:
        return "-"
    if name == "cpu":
        return f"{value}m"
    if name in ("memory", "ephemeral-storage"):
        return _mem(value)
    return str(value)


#: A ``max`` that is set but does not name one of these allows none of it (upstream
#: compares them field by field); an extended resource it does not name is unlimited.
_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods")


def _max_of(maximum: dict[str, int] | None, name: str) -> int | None:
    if maximum is None:
        return None  # no max: no limit
    if name in maximum:
        return maximum[name]
    return 0 if name in _NATIVE else None


def _gangs_and_quotas(data: dict[str, Any]) -> str:
    """The PodGroups (placed of members, against minMember) and the ElasticQuotas (use
    against min and max, one row per resource), when the run had any."""
    out = ""
    gangs = data.get("gangs") or []
    if gangs:
        rows = [
            [
                g["podGroup"],
                str(g["placed"]),
                "-" if g["minMember"] is None else str(g["minMember"]),
                str(g["members"]),
                g["phase"] or "no PodGroup",
            ]
            for g in gangs
        ]
        out += "\n" + _table(["POD GROUP", "PLACED", "MIN", "MEMBERS", "PHASE"], rows)
    quotas = data.get("quotas") or []
    if quotas:
        rows = []
        for q in quotas:
            for name, used in q["used"].items():
                low = (q["min"] or {}).get(name, 0)
                high = _max_of(q["max"], name)
                rows.append(
                    [
                        q["elasticQuota"],
                        name,
                        _amount(name, used),
                        _amount(name, low),
                        _amount(name, high),
                    ]
                )
        out += "\n" + _table(["ELASTIC QUOTA", "RESOURCE", "USED", "MIN", "MAX"], rows)
    return out


def explain_table(data: dict[str, Any]) -> str:
    """Per node: feasible or the rejecting plugin and reason; scores and total."""
    plugins: list[str] = []
    for n in data["nodes"]:
        for name in n["scores"]:
            if name not in plugins:
                plugins.append(name)
    rows = []
    for n in data["nodes"]:
        verdict = "feasible" if n["feasible"] else f"{n['rejectedBy'] or '-'}: {n['reason'] or ''}"
        if n.get("detail"):
            verdict += f" ({n['detail']})"
        scores = [str(n["scores"].get(p, "")) for p in plugins]
        total = "" if n["score"] is None else str(n["score"])
        chosen = "*" if n["name"] == data["node"] else ""
        rows.append([chosen + n["name"], *scores, total, verdict])
    out = f"pod {data['pod']}: "
    out += f"goes to {data['node']}\n" if data["node"] else f"pending\n  {data['message']}\n"
    if data.get("podGroup"):
        out += f"  {data['podGroup']['note']}\n"
    out += "\n"
    out += _table(["NODE", *plugins, "TOTAL", "VERDICT"], rows)
    return out


def bench_text(data: dict[str, Any]) -> str:
    """The benchmark's figures, one per line."""
    gangs = ""
    if data.get("gangs"):
        gangs = f"  {data['gangs_per_second']} gangs/s ({data['gangs']} gangs)\n"
    return (
        f"workload {data['workload']}: {data['nodes']} nodes, {data['init_pods']} initial pods, "
        f"{data['pods']} measured pods ({data['scheduled']} scheduled)\n"
        f"  {data['pods_per_second']} pods/s over {data['seconds']} s "
        f"(percentageOfNodesToScore 100)\n"
        f"{gangs}"
        f"  per-pod latency p50 {data['p50_ms']} ms, p99 {data['p99_ms']} ms\n"
        f"  set-up {data['setup_seconds']} s, peak RSS {data['peak_rss_mb']} MiB\n"
    )


def comparison_table(data: dict[str, Any]) -> str:
    """KPIs of runs A and B with deltas, the pods placed differently, the profile
    differences, and the nodes whose load changed."""
    a, b = data["configs"]
    out = f"A: {a['path'] or 'default profile'}\nB: {b['path'] or 'default profile'}\n\n"
    rows = [[k["name"], _figure(k["a"]), _figure(k["b"]), _delta(k["delta"])] for k in data["kpis"]]
    out += _table(["KPI", "A", "B", "B-A"], rows)
    deltas = data["placementDeltas"]
    out += f"\n{len(deltas)} pod(s) placed differently"
    ties = sum(1 for d in deltas if d["tieOnly"])
    out += f" ({ties} by a tie only)\n" if ties else "\n"
    if deltas:
        out += _table(
            ["POD", "A", "B", "WHY"],
            [
                [
                    d["pod"],
                    d["nodeA"] or "-",
                    d["nodeB"] or "-",
                    "tie" if d["tieOnly"] else "policy",
                ]
                for d in deltas
            ],
        )
    if data["profileDiff"]:
        out += "\nprofile differences\n"
        out += _table(
            ["FIELD", "A", "B"],
            [[d["path"], _plain(d["a"]), _plain(d["b"])] for d in data["profileDiff"]],
        )
    changed = [
        d for d in data["nodeDeltas"] if any(d["delta"][k] for k in ("pods", "cpu", "memory"))
    ]
    if changed:
        out += "\nnodes whose load changed\n"
        out += _table(
            ["NODE", "PODS A", "PODS B", "CPU A", "CPU B", "MEM A", "MEM B"],
            [
                [
                    d["node"],
                    str(d["a"]["pods"]),
                    str(d["b"]["pods"]),
                    f"{d['a']['cpu']}m",
                    f"{d['b']['cpu']}m",
                    _mem(d["a"]["memory"]),
                    _mem(d["b"]["memory"]),
                ]
                for d in changed
            ],
        )
    return out


def _figure(value: float) -> str:
    return f"{value:g}"


def _delta(value: float) -> str:
    return f"{value:+g}" if value else "0"


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def capacity_table(data: dict[str, Any]) -> str:
    """cluster-capacity's sentence per shape, its per-node counts and limits; the mix."""
    out = ""
    for shape in data["shapes"]:
        out += f"{shape['sentence']}\nStop reason: {shape['stopReason']}\n"
        rows = [[n["node"], str(n["count"]), n["limit"]] for n in shape["perNode"]]
        out += _table(["NODE", "INSTANCES", "LIMIT"], rows) + "\n"
    mix = data["mix"]
    if mix:
        names = mix["order"]
        counts = ", ".join(f"{mix['perShape'][n]} {n}" for n in names)
        out += f"Round-robin mix of {', '.join(names)}: {mix['count']} pods ({counts})\n"
        out += f"Stop reason: {mix['stopReason']}\n"
        rows = [
            [n["node"], *(str(n["counts"][name]) for name in names), n["limit"]]
            for n in mix["perNode"]
        ]
        out += _table(["NODE", *(name.upper() for name in names), "LIMIT"], rows)
    return out
