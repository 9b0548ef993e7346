"""``kubesched demo``: the whole product in a few seconds, on one machine.

It starts the embedded API server with simulated nodes (three zones, GPU nodes, DRA GPU
nodes, a tainted node; :mod:`kubesched.cli.demo_story`) and the controllers beside it,
starts the live scheduler on it with three profiles, applies a workload in waves over HTTP
— Deployments, a StatefulSet with zonal volumes, a DaemonSet, Jobs, one asking for GPUs
through a ResourceClaimTemplate, a gang and two teams' Jobs within their ElasticQuotas,
in namespaces of their own (:mod:`kubesched.cli.demo_workloads`), which the
controllers turn into pods — prints each event the scheduler writes as it comes, then
reads everything back from the API server and prints where each pod went and why, the
volumes of its claims and their zones, the devices it was given, pods counted by owner,
and the reason each pending pod gave. The scheduler is the one
``kubesched run`` runs, in this process, and it talks to the API server only over HTTP,
as the demo does.

``--keep-running`` leaves them all up and prints a kubeconfig for ``kubectl``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
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
from kubesched.cli import demo_workloads as workloads
from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.cli.demo_owners import owner_key
from kubesched.cli.demo_report import summary, summary_text
from kubesched.cli.demo_track import PodTracker
from kubesched.cli.demo_whatif import replays
from kubesched.config import loads_config
from kubesched.controllers.dradriver import DRIVER
from kubesched.kube import Client, KubeError, load_kubeconfig
from kubesched.kube.resources import (
    ELASTIC_QUOTAS,
    EVENTS,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    RESOURCE_SLICES,
)
from kubesched.objects.node import Node
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
    waves = workloads.waves()
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
        for obj in story.team_objects():
            await client.create(workloads.resource_of(obj), obj)
        for node in node_manifests:
            await client.create(NODES.raw, node)
        scheduler = Scheduler(config, in_tree_registry(), own, rng=random.Random(args.seed))
        scheduling = asyncio.create_task(scheduler.run(), name="scheduler")
        progress = say if not args.quiet else None
        # Every namespace: the teams' work is in namespaces of their own.
        tracker = PodTracker(client, None, progress, lambda n: zones.get(n, ""), started)
        try:
            await tracker.start(args.timeout)
            await asyncio.wait_for(_synced(scheduler, scheduling), args.timeout)
            timings["schedulerSync"] = time.monotonic() - started
            nodes = [Node.from_dict(n) for n in node_manifests]
            await _submit(client, tracker, waves, nodes, progress, args.timeout)
            timings["settled"] = time.monotonic() - started
            left = await tracker.wait(tracker.not_started, args.timeout)
            if left:
                raise DemoError(
                    f"pods bound but not started after {args.timeout:g} s: {', '.join(left)}"
                )
            # Jobs whose pods all run are waited for: they finish in a few seconds.
            left = await tracker.wait(tracker.unfinished_jobs, args.timeout)
            if left:
                raise DemoError(f"Jobs not finished after {args.timeout:g} s: {', '.join(left)}")
            latencies = tracker.bind_latencies()
            timings["bindMedianMs"] = 1000 * statistics.median(latencies) if latencies else 0.0
            timings["bindMaxMs"] = 1000 * max(latencies, default=0.0)
            timings["total"] = time.monotonic() - started
            result, pods, nodes_now = await _read_back(client, tracker, waves, timings, server.url)
            # The policy lab's contrast: some pods again, under another profile.
            result["whatIf"] = _what_if(result, pods, nodes_now, waves, config, args.seed)
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


async def _read_back(
    client: Client,
    tracker: PodTracker,
    waves: Sequence[workloads.Wave],
    timings: dict[str, Any],
    url: str,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The summary, from what the API server holds now; and the pods and nodes read."""
    namespace = story.NAMESPACE
    pods = (await client.list(PODS.raw)).items
    live = []
    for wave in waves:
        for manifest in wave.workloads:
            resource = workloads.resource_of(manifest)
            meta = manifest["metadata"]
            live.append(await client.get(resource, meta["name"], meta.get("namespace")))
    replica_sets = (await client.list(REPLICA_SETS.raw)).items
    nodes = (await client.list(NODES.raw)).items
    events = (await client.list(EVENTS)).items
    storage = {
        "claims": (await client.list(PERSISTENT_VOLUME_CLAIMS.raw, namespace)).items,
        "volumes": (await client.list(PERSISTENT_VOLUMES.raw)).items,
        "slices": (await client.list(RESOURCE_SLICES.raw)).items,
        "podGroups": (await client.list(POD_GROUPS.raw)).items,
        "elasticQuotas": (await client.list(ELASTIC_QUOTAS.raw)).items,
    }
    watched = {**tracker.as_seen(), "gone": dict(tracker.gone)}
    result = summary(live, pods, replica_sets, nodes, events, watched, timings, url, storage)
    return result, pods, nodes


def _what_if(
    result: dict[str, Any],
    pods: Sequence[dict[str, Any]],
    nodes: Sequence[dict[str, Any]],
    waves: Sequence[workloads.Wave],
    config: Any,
    seed: int,
) -> list[dict[str, Any]]:
    """The policy lab's contrast: the pods of the waves that name a profile to replay
    with, scheduled again under it."""
    groups: dict[str, list[str]] = {}
    owners: dict[str, list[str]] = {}
    by_owner = {o["owner"]: o for o in result["owners"]}
    for wave in waves:
        if not wave.replay_with:
            continue
        for manifest in wave.workloads:
            key = owner_key(manifest["kind"], manifest["metadata"]["name"])
            owners.setdefault(wave.replay_with, []).append(key)
            groups.setdefault(wave.replay_with, []).extend(by_owner[key]["pods"])
    # The teams' pods came once the training Jobs had finished: not in the replay's
    # cluster either.
    before = [p for p in pods if p["metadata"].get("namespace") not in story.TEAMS]
    return replays(nodes, before, groups, owners, config, seed)


async def _submit(
    client: Client,
    tracker: PodTracker,
    waves: Sequence[workloads.Wave],
    nodes: Sequence[Node],
    say: TextIO | None,
    timeout: float,
) -> None:
    """Create each wave's objects in order, each workload once the one before it has
    settled: its workloads (and every earlier one: a preempted pod is made again by its
    owner) have the pods they should, and every pod is bound or unschedulable.

    One workload at a time keeps ``--seed`` meaningful: the pods of one workload are
    alike, so the order the controllers make them in does not matter, but pods of two
    workloads made at once would reach the scheduler in an order of the moment."""
    submitted: list[dict[str, Any]] = []
    for number, wave in enumerate(waves, 1):
        if say:
            say.write(f"\n[{number}/{len(waves)}] {wave.title}\n")
            say.flush()
        if wave.after_jobs:
            left = await tracker.wait(tracker.unfinished_jobs, timeout)
            if left:
                raise DemoError(f"wave {number}: Jobs not finished after {timeout:g} s: {left}")
        if wave.same_second:
            await asyncio.sleep(1.0 - time.time() % 1.0 + 0.005)
        for manifest in wave.objects:
            await client.create(workloads.resource_of(manifest), copy.deepcopy(manifest))
            if manifest.get("kind") == "Pod":
                pass  # a bare pod: settled when every pod is
            elif manifest in wave.workloads:
                submitted.append(manifest)
            else:
                continue
            left = await tracker.wait(lambda: tracker.settling(submitted, nodes), timeout)
            if left:
                raise DemoError(
                    f"wave {number}: not settled after {timeout:g} s: {', '.join(left)}"
                )


def _intro(out: TextIO, server: ClusterHandle, nodes: Sequence[dict[str, Any]]) -> None:
    out.write(
        "kubesched demo: the embedded API server with simulated nodes, and the live scheduler\n"
        f"  API server  {server.url} ({len(nodes)} simulated nodes in 3 zones of "
        f"{story.REGION}; pods are created and watched over HTTP)\n"
    )
    for group in story.NODE_GROUPS:
        extra = f", {group.gpus} × {GPU_RESOURCE}" if group.gpus else ""
        if group.dra_gpus:
            extra += f", {group.dra_gpus} × {DRIVER} GPU {group.dra_model} (DRA)"
        taints = "".join(f", taint {t['key']}={t['value']}:{t['effect']}" for t in group.taints)
        out.write(
            f"  {group.kind:<5} nodes  {', '.join(group.names)} "
            f"({group.cpu} CPU, {group.memory}{extra}{taints})\n"
        )
    out.write(
        f"  profiles    {story.DEFAULT_PROFILE} (kube-scheduler's defaults), "
        f"{story.GPU_PROFILE} (NodeResourcesFit MostAllocated, {GPU_RESOURCE} weight 5), "
        f"{story.TEAM_PROFILE} (gangs with Coscheduling, quotas with CapacityScheduling)\n"
        f"  teams       "
        + ", ".join(
            f"{team} (ElasticQuota min {quota['min'][GPU_RESOURCE]} GPUs, "
            f"max {quota['max'][GPU_RESOURCE]})"
            for team, quota in story.TEAM_QUOTAS.items()
        )
        + "\n"
        "  controllers Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, garbage collector, "
        "the volume controllers with a simulated CSI driver (classes standard and zonal), "
        "the resource-claim controller with a simulated DRA driver, the PodGroup and "
        "ElasticQuota controllers, and a simulated kubelet "
        f"on every node; their pods name {story.DEFAULT_PROFILE} unless the template names "
        "another\n"
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
