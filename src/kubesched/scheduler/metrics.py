"""The scheduler's Prometheus metrics, as upstream's ``pkg/scheduler/metrics/metrics.go``
(names, labels, help texts and buckets), written in the text exposition format 0.0.4 by
hand: counters, gauges and histograms, no client library.

One :class:`SchedulerMetrics` per :class:`~kubesched.scheduler.scheduler.Scheduler`
(not a process-wide registry), so that several schedulers in one process (tests) do not
mix their counts. ``scheduler_pending_pods`` is read from the queue at scrape time.

Numbers are written as Python's shortest round-trip form (``repr``), integers without a
fraction: ``0.001``, ``1e-05``, ``3``; Prometheus parses them as Go's ``'g'`` form.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from kubesched.framework.interface import Code, Status

__all__ = [
    "CONTENT_TYPE",
    "Counter",
    "Gauge",
    "Histogram",
    "Registry",
    "SchedulerMetrics",
    "attempts_label",
    "exponential_buckets",
    "format_value",
    "status_label",
]

#: The Content-Type of the text exposition format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: ``result`` label values of the attempt metrics.
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"

#: The queue's names (``SchedulingQueue.counts()``) to upstream's ``queue`` label values.
QUEUE_LABELS = {"activeQ": "active", "backoffQ": "backoff"}


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Upstream's ``ExponentialBuckets``: ``count`` upper bounds, multiplying as Go does."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


def format_value(value: float) -> str:
    """A sample value or ``le`` bound in the exposition format."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape_label(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


class _Metric:
    kind = ""

    def __init__(self, name: str, help_text: str, label_names: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_text
        self.label_names = tuple(label_names)

    def _key(self, labels: Sequence[str]) -> tuple[str, ...]:
        if len(labels) != len(self.label_names):
            raise ValueError(f"{self.name} takes labels {self.label_names}, got {labels}")
        return tuple(labels)

    def samples(self) -> Iterable[str]:
        raise NotImplementedError

    def render(self) -> str:
        lines = [f"# HELP {self.name} {_escape_help(self.help)}", f"# TYPE {self.name} {self.kind}"]
        lines.extend(self.samples())
        return "\n".join(lines) + "\n"


class Counter(_Metric):
    """A monotonically increasing count per label set; counts kept elsewhere (an API
    client's) are read from ``source`` at scrape time."""

    kind = "counter"

    def __init__(
        self,
        name: str,
        help_text: str,
        label_names: Sequence[str] = (),
        source: Callable[[], Mapping[tuple[str, ...], float]] | None = None,
    ) -> None:
        super().__init__(name, help_text, label_names)
        self.values: dict[tuple[str, ...], float] = {}
        self.source = source

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        key = self._key(labels)
        self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, *labels: str) -> float:
        return self.values.get(self._key(labels), 0.0)

    def samples(self) -> Iterable[str]:
        values = dict(self.values)
        if self.source is not None:
            values.update({self._key(k): v for k, v in self.source().items()})
        for key in sorted(values):
            yield f"{self.name}{_labels(self.label_names, key)} {format_value(values[key])}"


class Gauge(_Metric):
    """A value per label set, set directly or read from ``source`` at scrape time."""

    kind = "gauge"

    def __init__(
        self,
        name: str,
        help_text: str,
        label_names: Sequence[str] = (),
        source: Callable[[], Mapping[tuple[str, ...], float]] | None = None,
    ) -> None:
        super().__init__(name, help_text, label_names)
        self.values: dict[tuple[str, ...], float] = {}
        self.source = source

    def set(self, value: float, *labels: str) -> None:
        self.values[self._key(labels)] = value

    def samples(self) -> Iterable[str]:
        values = dict(self.values)
        if self.source is not None:
            values.update({self._key(k): v for k, v in self.source().items()})
        for key in sorted(values):
            yield f"{self.name}{_labels(self.label_names, key)} {format_value(values[key])}"


class _Series:
    __slots__ = ("counts", "sum")

    def __init__(self, size: int) -> None:
        self.counts = [0] * size  # per bucket, not cumulative; the last is +Inf
        self.sum = 0.0


class Histogram(_Metric):
    """Observations counted in fixed buckets (cumulative ``le`` in the output)."""

    kind = "histogram"

    def __init__(
        self,
        name: str,
        help_text: str,
        buckets: Sequence[float],
        label_names: Sequence[str] = (),
    ) -> None:
        super().__init__(name, help_text, label_names)
        self.buckets = tuple(buckets)
        if list(self.buckets) != sorted(set(self.buckets)):
            raise ValueError("buckets must increase")
        self.series: dict[tuple[str, ...], _Series] = {}

    def observe(self, value: float, *labels: str) -> None:
        key = self._key(labels)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = _Series(len(self.buckets) + 1)
        # ``le`` is inclusive: a value equal to a bound falls in that bucket.
        series.counts[bisect.bisect_left(self.buckets, value)] += 1
        series.sum += value

    def count(self, *labels: str) -> int:
        series = self.series.get(self._key(labels))
        return sum(series.counts) if series is not None else 0

    def samples(self) -> Iterable[str]:
        for key in sorted(self.series):
            series = self.series[key]
            running = 0
            for bound, n in zip((*self.buckets, math.inf), series.counts, strict=True):
                running += n
                le = f'le="{format_value(bound)}"'
                yield f"{self.name}_bucket{_labels(self.label_names, key, le)} {running}"
            labels = _labels(self.label_names, key)
            yield f"{self.name}_sum{labels} {format_value(series.sum)}"
            yield f"{self.name}_count{labels} {running}"


M = TypeVar("M", bound=_Metric)


class Registry:
    """Metrics in registration order, rendered together."""

    def __init__(self) -> None:
        self.metrics: list[_Metric] = []

    def register(self, metric: M) -> M:
        if any(m.name == metric.name for m in self.metrics):
            raise ValueError(f"metric {metric.name} registered twice")
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        return "".join(m.render() for m in self.metrics)


def attempts_label(attempts: int) -> str:
    """Upstream's ``getAttemptsLabel``: the count, or ``15+``."""
    return "15+" if attempts >= 15 else str(attempts)


def status_label(status: Status | None) -> str:
    """The ``status`` label of upstream's extension point metrics (``Code.String()``)."""
    return str(Code.SUCCESS if status is None else status.code)


class SchedulerMetrics:
    """Upstream's scheduler metrics that kubesched records (see the module docstring)."""

    def __init__(self, pending: Callable[[], Mapping[str, int]] | None = None) -> None:
        r = self.registry = Registry()
        self.schedule_attempts = r.register(
            Counter(
                "scheduler_schedule_attempts_total",
                "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
                "could not be scheduled, while 'error' means an internal scheduler problem.",
                ("result", "profile"),
            )
        )
        self.scheduling_attempt_duration = r.register(
            Histogram(
                "scheduler_scheduling_attempt_duration_seconds",
                "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                exponential_buckets(0.001, 2, 15),
                ("result", "profile"),
            )
        )
        self.scheduling_algorithm_duration = r.register(
            Histogram(
                "scheduler_scheduling_algorithm_duration_seconds",
                "Scheduling algorithm latency in seconds",
                exponential_buckets(0.001, 2, 15),
            )
        )
        self.preemption_attempts = r.register(
            Counter(
                "scheduler_preemption_attempts_total",
                "Total preemption attempts in the cluster till now",
            )
        )
        self.pending_pods = r.register(
            Gauge(
                "scheduler_pending_pods",
                "Number of pending pods, by the queue type. 'active' means number of pods in "
                "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
                "number of pods in unschedulablePods that the scheduler attempted to schedule "
                "and failed; 'gated' is the number of unschedulable pods that the scheduler "
                "never attempted to schedule because they are gated.",
                ("queue",),
                source=(
                    (lambda: {(QUEUE_LABELS.get(q, q),): n for q, n in pending().items()})
                    if pending
                    else None
                ),
            )
        )
        self.pod_scheduling_sli_duration = r.register(
            Histogram(
                "scheduler_pod_scheduling_sli_duration_seconds",
                "E2e latency for a pod being scheduled, from the time the pod enters the "
                "scheduling queue an d might involve multiple scheduling attempts.",
                exponential_buckets(0.01, 2, 20),
                ("attempts",),
            )
        )
        self.pod_scheduling_attempts = r.register(
            Histogram(
                "scheduler_pod_scheduling_attempts",
                "Number of attempts to successfully schedule a pod.",
                exponential_buckets(1, 2, 5),
            )
        )
        self.preemption_victims = r.register(
            Histogram(
                "scheduler_preemption_victims",
                "Number of selected preemption victims",
                exponential_buckets(1, 2, 7),
            )
        )
        self.extension_point_duration = r.register(
            Histogram(
                "scheduler_framework_extension_point_duration_seconds",
                "Latency for running all plugins of a specific extension point.",
                exponential_buckets(0.0001, 2, 12),
                ("extension_point", "status", "profile"),
            )
        )

        self.plugin_execution_duration = r.register(
            Histogram(
                "scheduler_plugin_execution_duration_seconds",
                "Duration for running a plugin at a specific extension point.",
                exponential_buckets(0.00001, 1.5, 20),
                ("plugin", "extension_point", "status"),
            )
        )
        self.queue_incoming_pods = r.register(
            Counter(
                "scheduler_queue_incoming_pods_total",
                "Number of pods added to scheduling queues by event and queue type.",
                ("queue", "event"),
            )
        )
        self.permit_wait_duration = r.register(
            Histogram(
                "scheduler_permit_wait_duration_seconds",
                "Duration of waiting on permit.",
                exponential_buckets(0.001, 2, 15),
                ("result",),
            )
        )
        self.cache_size = r.register(
            Gauge(
                "scheduler_scheduler_cache_size",
                "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
                ("type",),
            )
        )
        self.unschedulable_pods = r.register(
            Gauge(
                "scheduler_unschedulable_pods",
                "The number of unschedulable pods broken down by plugin name. A pod will "
                "increment the gauge for all plugins that caused it to not schedule and so "
                "this metric have meaning only when broken down by plugin.",
                ("plugin", "profile"),
            )
        )
        # client-go's metrics, as kube-scheduler exposes them.
        self.leader_status = r.register(
            Gauge(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 "
                "indicates backup, 1 indicates master. 'name' is the string used to identify "
                "the lease. Please make sure to group by name.",
                ("name",),
            )
        )
        self.rest_client_requests = r.register(
            Counter(
                "rest_client_requests_total",
                "Number of HTTP requests, partitioned by status code, method, and host.",
                ("code", "method", "host"),
            )
        )
        # kubesched's: the same requests by what they do, per client.
        self.api_requests = r.register(
            Counter(
                "kubesched_api_requests_total",
                "API requests sent by the scheduler's clients (scheduler, events, "
                "leader-election), by verb, resource and HTTP status code.",
                ("client", "verb", "resource", "code"),
            )
        )

    # --- recording, as upstream's helpers ---------------------------------------------

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt ended (upstream ``PodScheduled`` / ``PodUnschedulable``
        / ``PodScheduleError``)."""
        self.schedule_attempts.inc(result, profile)
        self.scheduling_attempt_duration.observe(seconds, result, profile)

    def extension_point(
        self, point: str, status: Status | None, profile: str, seconds: float
    ) -> None:
        self.extension_point_duration.observe(seconds, point, status_label(status), profile)

    def plugin_execution(
        self, plugin: str, point: str, status: Status | None, seconds: float
    ) -> None:
        self.plugin_execution_duration.observe(seconds, plugin, point, status_label(status))

    def incoming(self, queue: str, event: str) -> None:
        """A pod entered ``queue`` (the queue's name) because of ``event``."""
        self.queue_incoming_pods.inc(QUEUE_LABELS.get(queue, queue), event)

    def render(self) -> str:
        return self.registry.render()
