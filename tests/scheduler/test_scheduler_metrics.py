"""``/healthz``, ``/readyz`` and ``/metrics`` of a live scheduler on the embedded API
server, and the hand-written Prometheus text exposition, parsed strictly."""

from __future__ import annotations

import asyncio
import math
import random
import re
import socket
from collections.abc import Iterator

import aiohttp
import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.cli import build_parser, main, scheduler_config
from kubesched.scheduler.endpoints import Endpoints
from kubesched.scheduler.metrics import (
    CONTENT_TYPE,
    Counter,
    Histogram,
    SchedulerMetrics,
    exponential_buckets,
    format_value,
)
from kubesched.scheduler.scheduler import Scheduler
from tests.scheduler.test_scheduler_live import (
    make_node,
    make_pod,
    node_of,
    pod_raw,
    running,
    until,
)


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


# --- a strict parser of the text exposition format 0.0.4 -------------------------------

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"'
SAMPLE = re.compile(
    rf"^(?P<name>{NAME})(?:\{{(?P<labels>{LABEL}(?:,{LABEL})*)\}})? (?P<value>\S+)$"
)
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"')
VALUE = re.compile(r"^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$")

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> tuple[dict[str, str], Series]:
    """Families' types and every sample; fails on anything the format does not allow."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    helps: set[str] = set()
    samples: Series = {}
    family = ""
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            name = line.split(" ", 3)[2]
            assert re.fullmatch(NAME, name) and name not in helps, line
            helps.add(name)
            family = name
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name == family and name not in types, line
            assert kind in ("counter", "gauge", "histogram"), line
            types[name] = kind
            continue
        match = SAMPLE.match(line)
        assert match, f"bad sample line {line!r}"
        name, value = match["name"], match["value"]
        assert VALUE.match(value), line
        kind = types[family]
        suffixes = ("_bucket", "_sum", "_count") if kind == "histogram" else ("",)
        assert any(name == family + s for s in suffixes), f"{name} outside {family}"
        labels = tuple(LABEL_RE.findall(match["labels"] or ""))
        names = [k for k, _ in labels]
        assert len(set(names)) == len(names), line
        key = (name, labels)
        assert key not in samples, f"duplicate {line}"
        samples[key] = float(value)
    assert helps == set(types)
    for name, kind in types.items():
        if kind == "histogram":
            check_histogram(name, samples)
    return types, samples


def check_histogram(name: str, samples: Series) -> None:
    """Buckets cumulative, ``le`` increasing, ``+Inf`` equal to ``_count``."""
    groups: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    for (sample, labels), value in samples.items():
        if sample == f"{name}_bucket":
            rest = tuple(kv for kv in labels if kv[0] != "le")
            le = dict(labels)["le"]
            groups.setdefault(rest, []).append((float(le), value))
    for rest, buckets in groups.items():
        bounds = [b for b, _ in buckets]
        assert bounds == sorted(bounds) and bounds[-1] == math.inf
        counts = [c for _, c in buckets]
        assert counts == sorted(counts)
        assert samples[(f"{name}_count", rest)] == counts[-1]
        assert (f"{name}_sum", rest) in samples


def value(samples: Series, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(labels.items())))


def series_with(samples: Series, name: str, **labels: str) -> list[float]:
    """Values of ``name`` whose labels include ``labels`` (le and others free)."""
    return [
        v
        for (n, ls), v in samples.items()
        if n == name and all(dict(ls).get(k) == w for k, w in labels.items())
    ]


# --- the exposition itself --------------------------------------------------------------


def test_upstream_buckets_and_number_format():
    assert exponential_buckets(0.001, 2, 15)[-1] == pytest.approx(16.384)
    assert [format_value(b) for b in exponential_buckets(0.001, 2, 4)] == [
        "0.001",
        "0.002",
        "0.004",
        "0.008",
    ]
    assert format_value(math.inf) == "+Inf"
    assert format_value(3.0) == "3"
    assert format_value(1e-05) == "1e-05"


def test_histogram_counters_gauges_render_strictly():
    metrics = SchedulerMetrics(lambda: {"active": 2, "backoff": 0, "unschedulable": 1, "gated": 0})
    metrics.attempt("scheduled", "p", 0.001)  # on a bound: le is inclusive
    metrics.attempt("scheduled", "p", 100.0)
    metrics.attempt("unschedulable", 'we"ird\\', 0.0)
    types, samples = parse(metrics.render())
    assert types["scheduler_schedule_attempts_total"] == "counter"
    assert types["scheduler_pending_pods"] == "gauge"
    assert types["scheduler_framework_extension_point_duration_seconds"] == "histogram"
    name = "scheduler_scheduling_attempt_duration_seconds"
    assert value(samples, f"{name}_bucket", result="scheduled", profile="p", le="0.001") == 1
    assert value(samples, f"{name}_bucket", result="scheduled", profile="p", le="16.384") == 1
    assert value(samples, f"{name}_bucket", result="scheduled", profile="p", le="+Inf") == 2
    assert value(samples, f"{name}_sum", result="scheduled", profile="p") == pytest.approx(100.001)
    assert len(series_with(samples, f"{name}_bucket", result="scheduled")) == 16
    text = metrics.render()
    assert 'profile="we\\"ird\\\\"' in text
    assert value(samples, "scheduler_pending_pods", queue="active") == 2
    assert value(samples, "scheduler_pending_pods", queue="unschedulable") == 1
    # Families with no observation yet keep their HELP and TYPE lines only.
    assert "# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\n" in text
    assert not series_with(samples, "scheduler_pod_scheduling_sli_duration_seconds_count")


def test_metric_objects_reject_misuse():
    counter = Counter("c_total", "help", ("a",))
    with pytest.raises(ValueError):
        counter.inc("x", "y")
    with pytest.raises(ValueError):
        counter.inc("x", amount=-1)
    with pytest.raises(ValueError):
        Histogram("h", "help", (1.0, 0.5))


def test_run_exits_1_when_the_port_is_taken(apiserver: ApiServerHandle, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        argv = ["--kubeconfig", str(apiserver.kubeconfig_path), "--secure-port", port]
        assert main([*argv, "--bind-address", "127.0.0.1"]) == 1
    assert "kubesched run: /healthz, /readyz, /metrics: cannot serve" in capsys.readouterr().err


def test_run_flags_default_to_kube_schedulers_port_number():
    args = build_parser().parse_args([])
    assert (args.secure_port, args.bind_address) == (10259, "0.0.0.0")
    args = build_parser().parse_args(["--metrics-port", "0", "--bind-address", "127.0.0.1"])
    assert (args.secure_port, args.bind_address) == (0, "127.0.0.1")


# --- a live scheduler -------------------------------------------------------------------


async def get(port: int, path: str) -> tuple[int, str, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}{path}") as response,
    ):
        return response.status, response.headers["Content-Type"], await response.text()


def test_metrics_after_scheduling_three_pods_and_failing_one(apiserver: ApiServerHandle):
    async def main() -> None:
        async with (
            running(apiserver) as (client, scheduler),
            Endpoints(scheduler, "127.0.0.1", 0) as endpoints,
        ):
            await body(client, scheduler, endpoints.port)

    async def body(client: Client, scheduler: Scheduler, port: int) -> None:
        for n in ("node-a", "node-b"):
            await client.create(NODES.raw, make_node(n))
        await until(lambda: scheduler.cache.node_count() == 2)
        names = ["p0", "p1", "p2"]
        for name in names:
            await client.create(PODS.raw, make_pod(name).req("500m").raw)

        async def all_bound() -> bool:
            return all([node_of(await pod_raw(client, n)) for n in names])

        await until(all_bound, what="pods bound")
        await client.create(PODS.raw, make_pod("huge").req("64").raw)
        await until(lambda: scheduler.queue.counts()["unschedulable"] == 1, what="huge rejected")

        status, ctype, text = await get(port, "/metrics")
        assert status == 200 and ctype == CONTENT_TYPE
        _, samples = parse(text)
        attempts = "scheduler_schedule_attempts_total"
        assert value(samples, attempts, result="scheduled", profile="kubesched") == 3
        assert value(samples, attempts, result="unschedulable", profile="kubesched") == 1
        assert value(samples, attempts, result="error", profile="kubesched") is None
        duration = "scheduler_scheduling_attempt_duration_seconds"
        assert value(samples, f"{duration}_count", result="scheduled", profile="kubesched") == 3
        assert value(samples, f"{duration}_count", result="unschedulable", profile="kubesched") == 1
        for queue, n in (("active", 0), ("backoff", 0), ("unschedulable", 1), ("gated", 0)):
            assert value(samples, "scheduler_pending_pods", queue=queue) == n, queue
        assert (
            value(samples, "scheduler_pod_scheduling_sli_duration_seconds_count", attempts="1") == 3
        )
        assert value(samples, "scheduler_pod_scheduling_attempts_bucket", le="1") == 3
        assert value(samples, "scheduler_pod_scheduling_attempts_count") == 3
        assert value(samples, "scheduler_scheduling_algorithm_duration_seconds_count") == 3
        assert value(samples, "scheduler_preemption_attempts_total") == 1
        point = "scheduler_framework_extension_point_duration_seconds_count"
        for ext in ("Reserve", "Permit", "PreBind", "Bind", "PostBind"):
            got = value(samples, point, extension_point=ext, status="Success", profile="kubesched")
            assert got == 3, ext
        post_filter = series_with(samples, point, extension_point="PostFilter")
        assert post_filter == [1]
        assert not series_with(samples, point, extension_point="Unreserve")

        assert (await get(port, "/healthz"))[::2] == (200, "ok")
        assert (await get(port, "/readyz"))[::2] == (200, "ok")

    asyncio.run(asyncio.wait_for(main(), 15.0))


def test_healthz_and_readyz_follow_the_run_loop(apiserver: ApiServerHandle):
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection) as client:
            scheduler = Scheduler(
                scheduler_config(None), in_tree_registry(), client, rng=random.Random(0)
            )
            async with Endpoints(scheduler, "127.0.0.1", 0) as endpoints:
                port = endpoints.port
                assert (await get(port, "/healthz"))[0] == 503
                assert (await get(port, "/readyz"))[0] == 503
                task = asyncio.create_task(scheduler.run())

                async def ready() -> bool:
                    return (await get(port, "/readyz"))[0] == 200

                await until(ready, what="readyz 200")
                assert (await get(port, "/healthz"))[0] == 200
                scheduler.stop()
                await task
                assert (await get(port, "/healthz"))[0] == 503
                assert (await get(port, "/readyz"))[0] == 503

    asyncio.run(asyncio.wait_for(main(), 15.0))
