"""Daemon pods (pinned by node affinity on ``metadata.name``, as the DaemonSet controller
pins them) in the live scheduler: the FailedScheduling message counts the nodes
NodeAffinity's PreFilterResult leaves out as upstream does, and a pod pinned to a node
that does not exist yet is scheduled when the node is added (NodeAffinity, which narrowed
the nodes, is among the plugins that rejected it and its node-add hint queues the pod)."""

from __future__ import annotations

from typing import Any

from kubesched.kube import Client
from kubesched.kube.resources import NODES, PODS
from kubesched.scheduler.scheduler import Scheduler
from tests.scheduler.test_scheduler_live import (
    apiserver,  # noqa: F401  (the fixture)
    bound_to,
    events_for,
    make_node,
    make_pod,
    run,
    until,
)

NOT_NAMED = "node(s) didn't satisfy plugin(s) [NodeAffinity]"


def pinned(name: str, node: str, cpu: str = "100m") -> dict[str, Any]:
    raw = make_pod(name).req(cpu).raw
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    raw["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [field]}]
            }
        }
    }
    return raw


def test_daemon_pods_are_reported_and_placed_as_upstream(apiserver):  # noqa: F811
    async def body(client: Client, scheduler: Scheduler) -> None:
        for n in ("node-a", "node-b", "node-c"):
            await client.create(NODES.raw, make_node(n, cpu="2"))
        await client.create(PODS.raw, pinned("on-b", "node-b"))
        await client.create(PODS.raw, pinned("too-big", "node-a", cpu="3"))
        await client.create(PODS.raw, pinned("early", "node-x"))

        assert await until(lambda: bound_to(client, "on-b"), what="on-b bound") == "node-b"
        big = await until(lambda: events_for(client, "too-big", "FailedScheduling"))
        # More cpu than node-a has at all: unresolvable there too, so preemption is
        # not helpful on any node.
        assert big[0]["message"] == (
            f"0/3 nodes are available: 1 Insufficient cpu, 2 {NOT_NAMED}. "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )
        early = await until(lambda: events_for(client, "early", "FailedScheduling"))
        assert early[0]["message"] == (
            f"0/3 nodes are available: 3 {NOT_NAMED}. "
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        )

        await client.create(NODES.raw, make_node("node-x"))
        landed = await until(lambda: bound_to(client, "early"), what="early bound to its node")
        assert landed == "node-x"
        assert await bound_to(client, "too-big") == ""

    run(body, apiserver)
