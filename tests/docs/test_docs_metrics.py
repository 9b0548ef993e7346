"""docs/metrics.md lists exactly the metric families kubesched exposes, with their
types and labels: a metric added without a line in the reference, or a line left behind
by a removed metric, fails here."""

from __future__ import annotations

import re
from pathlib import Path

from kubesched.extender.metrics import ExtenderMetrics
from kubesched.scheduler.metrics import SchedulerMetrics

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
_ROW = re.compile(r"^\| `(\w+)` \| (\w+) \| ([^|]*) \|")
_SAMPLE = re.compile(r"^(\w+?)(?:_bucket|_sum|_count)?\{([^}]*)\} ")


def documented(section: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """name → (type, labels) from the tables under the ``## section`` heading."""
    text = DOC.read_text(encoding="utf-8")
    part = text.split(f"\n## {section}", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in part.splitlines():
        if match := _ROW.match(line):
            labels = tuple(re.findall(r"`(\w+)`", match[3]))
            rows[match[1]] = (match[2], labels)
    return rows


def test_every_scheduler_metric_is_documented_with_its_type_and_labels() -> None:
    exposed = {m.name: (m.kind, m.label_names) for m in SchedulerMetrics().registry.metrics}
    assert documented("Scheduler") == exposed


def test_every_extender_metric_is_documented_with_its_type_and_labels() -> None:
    metrics = ExtenderMetrics()
    metrics.observe("filter", 200, 0.002)
    exposed: dict[str, tuple[str, tuple[str, ...]]] = {}
    kinds = dict(re.findall(r"^# TYPE (\w+) (\w+)$", metrics.render(), re.M))
    for line in metrics.render().splitlines():
        if match := _SAMPLE.match(line):
            name = next(n for n in kinds if match[1].startswith(n))
            labels = tuple(p.split("=")[0] for p in match[2].split(",") if p[:3] != "le=")
            exposed[name] = (kinds[name], labels)
    assert documented("Extender server") == exposed
