"""Request metrics of the extender server, in the Prometheus text format.

Two families, per verb (filter, prioritize, bind, preempt) and HTTP status code:
``kubesched_extender_requests_total`` and the histogram
``kubesched_extender_request_duration_seconds``. Written by hand (a dozen lines of text
format) so that the server needs no client library.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

#: Latency buckets in seconds: an extender answer is worth milliseconds, not seconds.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_REQUESTS = "kubesched_extender_requests_total"
_DURATION = "kubesched_extender_request_duration_seconds"


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    total: int = 0
    sum: float = 0.0

    def observe(self, seconds: float) -> None:
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1
        self.total += 1
        self.sum += seconds


class ExtenderMetrics:
    """Counts and latencies of the requests served, by verb and status code."""

    def __init__(self) -> None:
        self._requests: dict[tuple[str, int], int] = defaultdict(int)
        self._latency: dict[str, _Histogram] = defaultdict(_Histogram)

    def observe(self, verb: str, code: int, seconds: float) -> None:
        """Record one answered request."""
        self._requests[(verb, code)] += 1
        self._latency[verb].observe(seconds)

    def requests(self, verb: str, code: int) -> int:
        """How many ``verb`` requests were answered with ``code``."""
        return self._requests.get((verb, code), 0)

    def render(self) -> str:
        """Both families in the Prometheus text exposition format."""
        lines = [
            f"# HELP {_REQUESTS} Extender requests served, by verb and HTTP status code.",
            f"# TYPE {_REQUESTS} counter",
        ]
        for (verb, code), n in sorted(self._requests.items()):
            lines.append(f'{_REQUESTS}{{verb="{verb}",code="{code}"}} {n}')
        lines += [
            f"# HELP {_DURATION} Time to answer an extender request, by verb.",
            f"# TYPE {_DURATION} histogram",
        ]
        for verb, h in sorted(self._latency.items()):
            for bound, n in zip(BUCKETS, h.counts, strict=True):
                lines.append(f'{_DURATION}_bucket{{verb="{verb}",le="{bound}"}} {n}')
            lines.append(f'{_DURATION}_bucket{{verb="{verb}",le="+Inf"}} {h.total}')
            lines.append(f'{_DURATION}_sum{{verb="{verb}"}} {h.sum!r}')
            lines.append(f'{_DURATION}_count{{verb="{verb}"}} {h.total}')
        return "\n".join(lines) + "\n"
