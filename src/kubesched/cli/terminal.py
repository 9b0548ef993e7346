"""What the lab commands print on a terminal: rich tables on a TTY, plain text otherwise.

Plain text (``kubesched.sim.report``) is printed when stdout is not a terminal (a pipe,
a file), when ``NO_COLOR`` is set to anything non-empty (https://no-color.org), or when
``TERM`` is ``dumb``: scripts and logs get the same columns as before. A progress bar
goes to stderr, only when stderr is a terminal and the run is long.

Every cell is a ``rich.text.Text``: names from users' files are never read as rich
markup (``[bold]`` in a label stays as written).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

#: Runs that schedule at least this many pods show a progress bar (on a terminal).
PROGRESS_MIN_PODS = 200


def fancy(stream: TextIO) -> bool:
    """Whether ``stream`` gets rich output: a terminal, no NO_COLOR, not TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def show(data: Mapping[str, Any], plain: Callable[[], str], stream: TextIO | None = None) -> None:
    """Print a lab document for people: rich on a terminal, else ``plain()``."""
    out = stream or sys.stdout
    render = _RENDERERS.get(str(data.get("kind")))
    if render is None or not fancy(out):
        out.write(plain())
        return
    console = Console(file=out, highlight=False, soft_wrap=False)
    for item in render(data):
        console.print(item)


@contextlib.contextmanager
def progress(total: int | None, label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for a long run: yields ``advance(done)`` (the count so
    far), or None when stderr is no terminal or the run is short."""
    if not fancy(sys.stderr) or (total is not None and total < PROGRESS_MIN_PODS):
        yield None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(label, total=total)
    with bar:
        yield lambda done: bar.update(task, completed=done)


def _t(value: object, style: str = "") -> Text:
    return Text("" if value is None else str(value), style=style)


def _pct(amount: Mapping[str, int]) -> Text:
    if not amount["allocatable"]:
        return _t("-")
    ratio = amount["requested"] / amount["allocatable"]
    style = "red" if ratio >= 0.9 else "yellow" if ratio >= 0.7 else "green"
    return _t(f"{100 * ratio:.0f}%", style)


def _mem(value: int) -> str:
    for unit, size in (("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def _simulation(data: Mapping[str, Any]) -> list[Any]:
    placements = Table(title="Placements", title_justify="left")
    for header in ("POD", "NODE", "NOTE"):
        placements.add_column(header, overflow="fold")
    for p in data["placements"]:
        note = p["message"] or ""
        if p["preempted"]:
            note = ("preempted " + ", ".join(p["preempted"]) + " " + note).strip()
        node = _t(p["node"], "bold") if p["node"] else _t("pending", "red")
        placements.add_row(_t(p["pod"]), node, _t(note))
    return [placements, _usage(data["nodeUsage"]), _summary_line(data)]


def _usage(usage: Any) -> Table:
    nodes = Table(title="Nodes (requested / allocatable)", title_justify="left")
    for header in ("NODE", "ZONE", "PODS", "CPU", "CPU%", "MEMORY", "MEM%"):
        nodes.add_column(header, justify="left" if header in ("NODE", "ZONE") else "right")
    for n in usage:
        r = n["resources"]
        cpu, mem, pods = r["cpu"], r["memory"], r["pods"]
        nodes.add_row(
            _t(n["name"]),
            _t(n["zone"]),
            _t(f"{pods['requested']}/{pods['allocatable']}"),
            _t(f"{cpu['requested']}m/{cpu['allocatable']}m"),
            _pct(cpu),
            _t(f"{_mem(mem['requested'])}/{_mem(mem['allocatable'])}"),
            _pct(mem),
        )
    return nodes


def _summary_line(data: Mapping[str, Any]) -> Text:
    s = data["summary"]
    line = Text()
    line.append(f"{s['scheduled']} scheduled", "green")
    line.append(", ")
    line.append(f"{s['unschedulable']} unschedulable", "red" if s["unschedulable"] else "")
    line.append(f", {s['preempted']} preempted, of {s['pods']} pods")
    return line


def _explanation(data: Mapping[str, Any]) -> list[Any]:
    plugins = list(data["weights"])
    head = Text("pod ")
    head.append(data["pod"], "bold")
    if data["node"]:
        head.append(": goes to ")
        head.append(data["node"], "bold green")
    else:
        head.append(": pending\n  ")
        head.append(data["message"] or "", "red")
    table = Table()
    table.add_column("NODE", overflow="fold")
    for plugin in plugins:
        table.add_column(Text(f"{plugin} ×{data['weights'][plugin]}"), justify="right")
    table.add_column("TOTAL", justify="right")
    table.add_column("VERDICT")
    for n in data["nodes"]:
        chosen = n["name"] == data["node"]
        name = _t(("★ " if chosen else "") + n["name"], "bold green" if chosen else "")
        scores = [_t(n["scores"].get(p, "")) for p in plugins]
        verdict = (
            _t("feasible", "green")
            if n["feasible"]
            else _t(f"{n['rejectedBy'] or '-'}: {n['reason'] or ''}", "red")
        )
        table.add_row(name, *scores, _t(n["score"], "bold"), verdict)
    return [head, table]


def _comparison(data: Mapping[str, Any]) -> list[Any]:
    a, b = data["configs"]
    out: list[Any] = [
        Text(f"A: {a['path'] or 'default profile'}\nB: {b['path'] or 'default profile'}")
    ]
    kpis = Table(title="KPIs", title_justify="left")
    for header in ("KPI", "A", "B", "B-A"):
        kpis.add_column(header, justify="left" if header == "KPI" else "right")
    for k in data["kpis"]:
        delta = k["delta"]
        kpis.add_row(
            _t(k["name"]),
            _t(f"{k['a']:g}"),
            _t(f"{k['b']:g}"),
            _t(f"{delta:+g}" if delta else "0", "bold" if delta else "dim"),
        )
    out.append(kpis)
    deltas = Table(
        title=f"{len(data['placementDeltas'])} pod(s) placed differently", title_justify="left"
    )
    for header in ("POD", "A", "B", "WHY"):
        deltas.add_column(header, overflow="fold")
    for d in data["placementDeltas"]:
        why = _t("tie", "yellow") if d["tieOnly"] else _t("policy", "bold")
        deltas.add_row(_t(d["pod"]), _t(d["nodeA"] or "-"), _t(d["nodeB"] or "-"), why)
    out.append(deltas)
    if data["profileDiff"]:
        diff = Table(title="Profile differences", title_justify="left")
        for header in ("FIELD", "A", "B"):
            diff.add_column(header, overflow="fold")
        for d in data["profileDiff"]:
            diff.add_row(
                _t(d["path"]),
                _t(d["a"] if d["a"] is not None else "-"),
                _t(d["b"] if d["b"] is not None else "-"),
            )
        out.append(diff)
    return out


def _capacity(data: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for shape in data["shapes"]:
        out.append(_t(shape["sentence"], "bold"))
        table = Table(caption=Text(f"stop reason: {shape['stopReason']}"), caption_justify="left")
        for header in ("NODE", "INSTANCES", "LIMIT"):
            table.add_column(header, justify="right" if header == "INSTANCES" else "left")
        for n in shape["perNode"]:
            table.add_row(_t(n["node"]), _t(n["count"]), _t(n["limit"]))
        out.append(table)
    mix = data["mix"]
    if mix:
        names = mix["order"]
        counts = ", ".join(f"{mix['perShape'][n]} {n}" for n in names)
        out.append(
            _t(f"Round-robin mix of {', '.join(names)}: {mix['count']} pods ({counts})", "bold")
        )
        table = Table(caption=Text(f"stop reason: {mix['stopReason']}"), caption_justify="left")
        table.add_column("NODE", overflow="fold")
        for name in names:
            table.add_column(Text(name), justify="right")
        table.add_column("LIMIT", overflow="fold")
        for n in mix["perNode"]:
            table.add_row(_t(n["node"]), *(_t(n["counts"][name]) for name in names), _t(n["limit"]))
        out.append(table)
    return out


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], list[Any]]] = {
    "SimulationReport": _simulation,
    "ExplainReport": _explanation,
    "ComparisonReport": _comparison,
    "CapacityReport": _capacity,
}
