"""``kubesched report``: a lab report document rendered as one self-contained HTML page.

The page carries its CSS, script and charts inline (SVG drawn here, details filled by a
small inline script from the embedded document), fetches nothing and opens from
``file://``. The document itself is embedded as
``<script type="application/json" id="kubesched-report-data">`` so that a reader (or a
test) can check the page against it.

Names come from users' files, so everything is rendered through Jinja2 with
autoescaping, and the embedded JSON escapes ``<``, ``>`` and ``&`` so that no name can
close the script element. The same document gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from kubesched.sim import document

#: The resources always shown first, in this order; extended resources follow by name.
BASE_RESOURCES = ("cpu", "memory", "pods")

#: An explained pod's score table shows at most this many feasible nodes (the best
#: totals, the chosen node always among them); the document keeps them all.
MAX_SCORE_ROWS = 100

#: How ``compare``'s KPIs are titled in the page.
KPI_TITLES = {
    "placed": "pods placed",
    "pending": "pods pending",
    "nodesUsed": "nodes used",
    "cpu.mean": "cpu of allocatable, mean",
    "cpu.max": "cpu of allocatable, max",
    "cpu.stddev": "cpu of allocatable, std. dev.",
    "memory.mean": "memory of allocatable, mean",
    "memory.max": "memory of allocatable, max",
    "memory.stddev": "memory of allocatable, std. dev.",
    "zoneSkew": "zone skew of placed pods",
}


class ReportError(Exception):
    """The input is not a report document this version can render."""


def load_document(path: Path) -> dict[str, Any]:
    """Read and validate a report document; ReportError names the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ReportError(f"{path}: cannot read: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise ReportError(f"{path}: not JSON: {err}") from None
    check_document(data, str(path))
    return data  # type: ignore[no-any-return]


def check_document(data: object, where: str) -> None:
    """Raise ReportError unless ``data`` is valid against the published schema."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(document.schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    if isinstance(data, dict) and data.get("apiVersion") != document.API_VERSION:
        raise ReportError(
            f"{where}: apiVersion: Unsupported value: {data.get('apiVersion')!r}: "
            f"this kubesched reads {document.API_VERSION!r}"
        )
    best = jsonschema.exceptions.best_match(errors)
    path = ".".join(str(p) for p in best.absolute_path) or "(document)"
    raise ReportError(f"{where}: {path}: {best.message}")


def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("kubesched.cli", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        pct=_pct,
        amount=_amount,
        heat=_heat,
        resources=_resources,
        kebab=_kebab,
        kpi=_kpi,
    )
    env.globals["kpi_titles"] = KPI_TITLES
    env.globals["score_rows"] = score_rows
    return env


def render_html(data: Mapping[str, Any]) -> str:
    """The page for one report document."""
    template = _environment().get_template("report.html.j2")
    return str(
        template.render(
            doc=data,
            data_json=embed_json(data),
            resources=_resources([*_usages(data)]),
            zones=_zones,
            verdict_total=_verdict_total,
        )
    )


def write_html(data: Mapping[str, Any], path: Path) -> None:
    """Render ``data`` into ``path`` (UTF-8); ReportError names the file when it cannot
    be written."""
    page = render_html(data).encode("utf-8")
    try:
        path.write_bytes(page)
    except OSError as err:
        raise ReportError(f"{path}: cannot write: {err.strerror or err}") from None


def embed_json(data: Mapping[str, Any]) -> Markup:
    """The document as JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` are written
    as ``\\u003c``, ``\\u003e``, ``\\u0026``, which JSON.parse reads back unchanged."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _usages(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every node-usage entry of the document (compare has one list per run)."""
    out: list[Mapping[str, Any]] = list(data.get("nodeUsage", ()))
    for run in data.get("runs", ()):
        out.extend(run.get("nodeUsage", ()))
    return out


def _resources(usage: Sequence[Mapping[str, Any]]) -> list[str]:
    """The resources to show: cpu, memory, pods, then extended resources by name."""
    extended = sorted({r for n in usage for r in n["resources"]} - set(BASE_RESOURCES))
    return [*BASE_RESOURCES, *extended]


def _zones(usage: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Nodes grouped by zone, zones sorted by name (nodes without one first, as "")."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for node in usage:
        groups.setdefault(node["zone"], []).append(node)
    return sorted(groups.items())


def score_rows(item: Mapping[str, Any], limit: int = MAX_SCORE_ROWS) -> dict[str, Any]:
    """An explained pod's table: the feasible nodes by total (best first, then by name),
    at most ``limit`` of them with the chosen node always shown; how many more there are;
    and the rejected nodes grouped by verdict."""
    feasible = sorted(
        (n for n in item["nodes"] if n["feasible"]),
        key=lambda n: (-(n["score"] or 0), n["name"]),
    )
    shown = feasible[:limit]
    chosen = next((n for n in feasible if n["name"] == item["node"]), None)
    if chosen is not None and chosen not in shown:
        shown = [*shown[: limit - 1], chosen]
    rejected: dict[str, list[str]] = {}
    for n in item["nodes"]:
        if not n["feasible"]:
            verdict = f"{n['rejectedBy'] or '-'}: {n['reason'] or ''}"
            rejected.setdefault(verdict, []).append(n["name"])
    return {
        "rows": shown,
        "hidden": len(feasible) - len(shown),
        "rejected": sorted(rejected.items()),
    }


def _verdict_total(verdicts: Mapping[str, Sequence[str]]) -> int:
    return sum(len(nodes) for nodes in verdicts.values())


def _kebab(name: str) -> str:
    """``nodesUsed`` -> ``nodes-used``, ``cpu.mean`` -> ``cpu-mean`` (test ids)."""
    out = "".join(f"-{c.lower()}" if c.isupper() else c for c in name)
    return out.replace(".", "-")


def _pct(amount: Mapping[str, int] | None) -> str:
    if not amount or not amount["allocatable"]:
        return "-"
    return f"{100 * amount['requested'] / amount['allocatable']:.0f}%"


def _heat(amount: Mapping[str, int] | None) -> str:
    """A fill colour for a utilisation: pale green when empty to dark red when full."""
    if not amount or not amount["allocatable"]:
        return "#e5e7eb"
    ratio = min(amount["requested"] / amount["allocatable"], 1.0)
    hue = round(120 * (1 - ratio))
    light = round(88 - 40 * ratio)
    return f"hsl({hue},70%,{light}%)"


def _kpi(value: float, name: str) -> str:
    """A KPI as people read it: utilisations (``cpu.mean``) as percentages."""
    if name.startswith(("cpu.", "memory.")):
        return f"{100 * value:.1f}%"
    return f"{value:g}"


def _amount(value: int, resource: str) -> str:
    """A resource amount as people read it: cores, GiB / MiB, or a plain count."""
    if value < 0:
        return "-" + _amount(-value, resource)
    if resource == "cpu":
        return f"{value / 1000:g}" if value % 10 == 0 else f"{value}m"
    if resource == "memory" or resource.endswith("storage"):
        for unit, size in (("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
            if value >= size:
                return f"{value / size:.1f}{unit}"
    return str(value)
