"""The scheduler's events through events.k8s.io/v1: written in the background by the
broadcaster, aggregated into series as upstream's, dropped (and counted) when the queue
is full, and shown by ``kubectl describe pod``."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.objects.pod import Pod
from kubesched.scheduler.events import (
    EVENTS_V1,
    NOTE_LENGTH_LIMIT,
    EventBroadcaster,
    truncate_note,
)
from tests.scheduler.test_scheduler_live import make_node, make_pod, running, until


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


async def v1_events(client: Client, pod: str, reason: str) -> list[dict[str, Any]]:
    items = (await client.list(EVENTS_V1, "default")).items
    return [e for e in items if e["regarding"]["name"] == pod and e["reason"] == reason]


def test_repeats_become_a_series_and_kubectl_describe_shows_it(apiserver: ApiServerHandle):
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection) as client:
            raw = await client.create(PODS.raw, make_pod("p").raw)
            pod = Pod.from_dict(raw)
            events = EventBroadcaster(client, hostname="host-1", finish_after=3600.0)
            writer = asyncio.create_task(events.run())
            try:
                for _ in range(3):
                    events.eventf(pod, "Warning", "FailedScheduling", "Scheduling", "no", "prof")
                # The first is created, the second patches it into a series of 2; the
                # third only counts until the series is written again.
                got = await until(lambda: v1_events(client, "p", "FailedScheduling"))
                await until(
                    lambda: _count(v1_events(client, "p", "FailedScheduling"), 2),
                    what="the series started",
                )
                got = await v1_events(client, "p", "FailedScheduling")
                assert len(got) == 1
                event = got[0]
                assert event["reportingController"] == "prof"
                assert event["reportingInstance"] == "prof-host-1"
                assert (event["action"], event["type"], event["note"]) == (
                    "Scheduling",
                    "Warning",
                    "no",
                )
                assert event["regarding"]["uid"] == pod.uid
                assert event["metadata"]["name"].startswith("p.")
                # A series that has gone quiet gets its final count.
                events.finish_after = 0.0
                await events.maintain()
                got = await v1_events(client, "p", "FailedScheduling")
                assert got[0]["series"]["count"] == 3
                # A different note is another event.
                events.eventf(pod, "Warning", "FailedScheduling", "Scheduling", "other", "prof")
                await until(lambda: _count_events(v1_events(client, "p", "FailedScheduling"), 2))
            finally:
                writer.cancel()
        if shutil.which("kubectl") is None:
            return
        described = await asyncio.to_thread(
            subprocess.run,
            ["kubectl", "--kubeconfig", str(apiserver.kubeconfig_path), "describe", "pod", "p"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        lines = described.stdout.split("Events:", 1)[1].splitlines()
        line = next(line for line in lines if "FailedScheduling" in line and "(x3 over" in line)
        assert line.rstrip().endswith("prof  no")

    asyncio.run(asyncio.wait_for(main(), 40.0))


async def _count(events: Any, count: int) -> bool:
    got = await events
    return bool(got) and got[0].get("series", {}).get("count") == count


async def _count_events(events: Any, n: int) -> bool:
    return len(await events) == n


def test_a_full_queue_drops_and_counts_instead_of_blocking(apiserver: ApiServerHandle):
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection) as client:
            events = EventBroadcaster(client, capacity=2)
            pod = Pod.from_dict(await client.create(PODS.raw, make_pod("q").raw))
            for i in range(5):
                events.eventf(pod, "Normal", "Scheduled", "Binding", f"n{i}", "prof")
            assert events.dropped == 3
            await events.drain()
            got = (await client.list(EVENTS_V1, "default")).items
            assert sorted(e["note"] for e in got) == ["n0", "n1"]

    asyncio.run(asyncio.wait_for(main(), 20.0))


def test_repeats_of_a_started_series_take_no_place_in_the_queue(apiserver: ApiServerHandle):
    """A pod retried a thousand times does not fill the queue that other pods' events
    need: once its series is written, a repeat only counts."""

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection) as client:
            events = EventBroadcaster(client, capacity=3, finish_after=3600.0)
            pod = Pod.from_dict(await client.create(PODS.raw, make_pod("r").raw))
            other = Pod.from_dict(await client.create(PODS.raw, make_pod("s").raw))
            for _ in range(2):
                events.eventf(pod, "Warning", "FailedScheduling", "Scheduling", "no", "prof")
            await events.drain()  # created, then patched into a series of 2
            for _ in range(1000):
                events.eventf(pod, "Warning", "FailedScheduling", "Scheduling", "no", "prof")
            events.eventf(other, "Warning", "FailedScheduling", "Scheduling", "no", "prof")
            assert events.dropped == 0
            await events.drain()
            events.finish_after = 0.0
            await events.maintain()
            got = (await client.list(EVENTS_V1, "default")).items
            counts = {e["regarding"]["name"]: (e.get("series") or {}).get("count") for e in got}
            assert counts == {"r": 1002, "s": None}
            # Two writes for the 1002 occurrences, the final count a third.
            assert client.requests["create", "events", "201"] == 2
            assert client.requests["patch", "events", "200"] == 2

    asyncio.run(asyncio.wait_for(main(), 20.0))


def test_notes_are_truncated_as_upstream():
    assert truncate_note("x" * NOTE_LENGTH_LIMIT) == "x" * NOTE_LENGTH_LIMIT
    long = truncate_note("y" * (NOTE_LENGTH_LIMIT + 1))
    assert len(long) == NOTE_LENGTH_LIMIT and long.endswith("y ...")


def test_the_live_scheduler_writes_its_events_through_events_v1(apiserver: ApiServerHandle):
    async def main() -> None:
        async with running(apiserver) as (client, scheduler):
            await client.create(NODES.raw, make_node("n", cpu="1"))
            await until(lambda: scheduler.cache.node_count() == 1)
            await client.create(PODS.raw, make_pod("fits").req("500m").raw)
            await client.create(PODS.raw, make_pod("huge").req("8").raw)
            scheduled = await until(lambda: v1_events(client, "fits", "Scheduled"))
            failed = await until(lambda: v1_events(client, "huge", "FailedScheduling"))
            host = socket.gethostname()
            assert scheduled[0]["note"] == "Successfully assigned default/fits to n"
            assert (scheduled[0]["action"], scheduled[0]["type"]) == ("Binding", "Normal")
            assert failed[0]["note"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
            assert (failed[0]["action"], failed[0]["type"]) == ("Scheduling", "Warning")
            for event in (scheduled[0], failed[0]):
                assert event["reportingController"] == "kubesched"
                assert event["reportingInstance"] == f"kubesched-{host}"
            assert scheduler.events.dropped == 0

    asyncio.run(asyncio.wait_for(main(), 30.0))
