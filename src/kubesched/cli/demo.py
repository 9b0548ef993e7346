"""``kubesched demo``: the whole product in under a minute, on one machine.

It starts the embedded API server with simulated nodes (three zones, GPU nodes, a tainted
node; :mod:`kubesched.cli.demo_story`), starts the live scheduler on it with two profiles,
submits a mixed workload in waves over HTTP, prints each event the scheduler writes as it
comes, then reads everything back from the API server and prints where each pod went and
why, and the reason each pending pod gave. The scheduler is the one ``kubesched run``
runs, in this process, and it talks to the API server only over HTTP, as the demo does.

``--keep-running`` leaves both up and prints a kubeconfig for ``kubectl``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kubesched.cli import demo_story as story
from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.cli.demo_report import summary, summary_text
from kubesched.cli.demo_track import PodTracker
from kubesched.cli.demo_whatif import replays
from kubesched.config import loads_config
from kubesched.kube import Client, KubeError, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, PODS, PRIORITY_CLASSES
from kubesched.objects.nodes import GPU_RESOURCE
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.endpoints import Endpoints
from kubesched.scheduler.scheduler import Scheduler

__all__ = ["DemoError", "build_parser", "main", "run_demo"]

#: Seconds the simulated kubelet waits before a bound pod is Running.
RUN_DELAY = 0.2


class DemoError(Exception):
    """The demo could not complete (what did not happen, and which pods)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kubesched demo``."""
    parser = argparse.ArgumentParser(
        prog="kubesched demo",
        description="Start an API server with simulated nodes and the scheduler on it, "
        "schedule a mixed workload, and show where every pod went and why.",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed for tie-breaking (default 1)")
    parser.add_argument(
        "--quiet",
        "--no-progress",
        dest="quiet",
        action="store_true",
        help="no line per scheduler event, only the summary",
    )
    parser.add_argument(
        "--keep-running",
        action="store_true",
        help="leave the API server and the scheduler up (Ctrl-C stops them) and print a "
        "kubeconfig for kubectl",
    )
    parser.add_argument("--output", "-o", choices=("table", "json"), default="table")
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=60.0,
        help="seconds to wait for each wave to settle (default 60)",
    )
    return parser


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"invalid value: {text!r}: must be greater than 0")
    return value


async def run_demo(args: argparse.Namespace, out: TextIO) -> dict[str, Any]:
    """Run the demo; print to ``out``; return the summary (see ``demo_report``)."""
    started = time.monotonic()
    config = loads_config(json.dumps(story.CONFIG), "kubesched demo", is_json=True)
    with tempfile.TemporaryDirectory(prefix="kubesched-demo-") as folder:
        server = start_cluster(
            kubeconfig_path=Path(folder) / "kubeconfig",
            run_delay=RUN_DELAY,
            bookmark_interval=1.0,
        )
        try:
            return await _run_on(server, config, args, out, started)
        finally:
            server.stop()


async def _run_on(
    server: ClusterHandle,
    config: Any,
    args: argparse.Namespace,
    out: TextIO,
    started: float,
) -> dict[str, Any]:
    text = args.output == "table"
    say = out if text else None
    timings: dict[str, Any] = {"apiServerStart": time.monotonic() - started}
    node_manifests = story.nodes()
    zones = {n["metadata"]["name"]: story.zone_of(n) for n in node_manifests}
    if say:
        _intro(say, server, node_manifests)
    connection = load_kubeconfig([server.kubeconfig_path])
    # Two connections, as two processes would have: the scheduler's and the user's.
    async with (
        Client(connection, qps=1000, burst=1000, user_agent="kubesched-demo") as client,
        Client(connection, qps=1000, burst=1000, user_agent="kubesched-scheduler") as own,
    ):
        for pc in story.priority_classes():
            await client.create(PRIORITY_CLASSES.raw, pc)
        for node in node_manifests:
            await client.create(NODES.raw, node)
        scheduler = Scheduler(config, in_tree_registry(), own, rng=random.Random(args.seed))
        scheduling = asyncio.create_task(scheduler.run(), name="scheduler")
        progress = say if not args.quiet else None
        tracker = PodTracker(client, story.NAMESPACE, progress, lambda n: zones.get(n, ""), started)
        try:
            await tracker.start(args.timeout)
            await asyncio.wait_for(_synced(scheduler, scheduling), args.timeout)
            timings["schedulerSync"] = time.monotonic() - started
            submitted = await _submit(client, tracker, progress, args.timeout)
            bound = [n for n in submitted if (tracker.pod(n) or {}).get("spec", {}).get("nodeName")]
            left = await tracker.wait(lambda: tracker.not_running(bound), args.timeout)
            if left:
                raise DemoError(
                    f"pods bound but not Running after {args.timeout:g} s: {', '.join(left)}"
                )
            latencies = tracker.bind_latencies()
            timings["bindMedianMs"] = 1000 * statistics.median(latencies) if latencies else 0.0
            timings["bindMaxMs"] = 1000 * max(latencies, default=0.0)
            timings["total"] = time.monotonic() - started
            pods = (await client.list(PODS.raw, story.NAMESPACE)).items
            nodes = (await client.list(NODES.raw)).items
            events = (await client.list(EVENTS, story.NAMESPACE)).items
            result = summary(submitted, pods, nodes, events, timings, server.url)
            # The policy lab's contrast: the same pods under another profile.
            result["whatIf"] = replays(nodes, pods, config, args.seed)
            if text:
                out.write(summary_text(result))
            else:
                json.dump(result, out, indent=2)
                out.write("\n")
            out.flush()
            if args.keep_running:
                await _keep_running(scheduler, server, out if text else sys.stderr)
            return result
        finally:
            scheduler.stop()
            await scheduling
            await tracker.stop()


async def _synced(scheduler: Scheduler, task: asyncio.Task[None]) -> None:
    while not scheduler.synced:
        if task.done():
            task.result()  # its error, if any
            raise DemoError("the scheduler stopped before its informers synced")
        await asyncio.sleep(0.01)


async def _submit(
    client: Client, tracker: PodTracker, say: TextIO | None, timeout: float
) -> list[str]:
    """Create each wave's pods, waiting for each wave to settle; the names, in order."""
    names: list[str] = []
    waves = story.waves()
    for number, wave in enumerate(waves, 1):
        if say:
            say.write(f"\n[{number}/{len(waves)}] {wave.title}\n")
            say.flush()
        wave_names = []
        for manifest in wave.pods:
            name = manifest["metadata"]["name"]
            await client.create(PODS.raw, manifest)
            tracker.created_at[name] = time.monotonic()
            wave_names.append(name)
        names.extend(wave_names)
        # Earlier waves too: a preemption victim belongs to one.
        left = await tracker.wait(lambda: tracker.unsettled(names), timeout)
        if left:
            raise DemoError(f"wave {number}: not settled after {timeout:g} s: {', '.join(left)}")
    return names


def _intro(out: TextIO, server: ClusterHandle, nodes: Sequence[dict[str, Any]]) -> None:
    out.write(
        "kubesched demo: the embedded API server with simulated nodes, and the live scheduler\n"
        f"  API server  {server.url} ({len(nodes)} simulated nodes in 3 zones of "
        f"{story.REGION}; pods are created and watched over HTTP)\n"
    )
    for group in story.NODE_GROUPS:
        extra = f", {group.gpus} × {GPU_RESOURCE}" if group.gpus else ""
        taints = "".join(f", taint {t['key']}={t['value']}:{t['effect']}" for t in group.taints)
        out.write(
            f"  {group.kind:<5} nodes  {', '.join(group.names)} "
            f"({group.cpu} CPU, {group.memory}{extra}{taints})\n"
        )
    out.write(
        f"  profiles    {story.DEFAULT_PROFILE} (kube-scheduler's defaults), "
        f"{story.GPU_PROFILE} (NodeResourcesFit MostAllocated, {GPU_RESOURCE} weight 5)\n"
    )
    out.flush()


async def _keep_running(scheduler: Scheduler, server: ClusterHandle, out: TextIO) -> None:
    """Serve until SIGINT or SIGTERM, with the scheduler's endpoints on a free port."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with Endpoints(scheduler, "127.0.0.1", 0) as endpoints:
            config = server.kubeconfig_path
            out.write(
                "\nThe API server and the scheduler keep running; Ctrl-C stops them.\n"
                f"  kubectl --kubeconfig {config} get pods -o wide\n"
                f"  kubectl --kubeconfig {config} get events\n"
                f"  scheduler metrics: http://127.0.0.1:{endpoints.port}/metrics\n"
            )
            out.flush()
            await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``kubesched demo``; the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_demo(args, sys.stdout))
    except (DemoError, KubeError) as err:
        print(f"kubesched demo: {err}", file=sys.stderr)
        return 1
    except TimeoutError:
        print(f"kubesched demo: nothing happened within {args.timeout:g} s", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # asyncio.run has cancelled the demo: its cleanup (scheduler, API server) ran.
        print("kubesched demo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    return 0
