"""The binder under faults: a binding whose answer was lost counts as bound when the pod
is bound, and a refused one is a failure (the server refuses a second binding anyway)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.apiserver.runner import start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.scheduler.clusterclient import LiveClusterClient

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "pause"}]},
}


def bind_under(spec: str) -> tuple[list[str], str, list[tuple[str, int]]]:
    """Bind pod p to n1 through the live binder against a server with ``spec``; the
    binder's failures, the pod's node and the bindings the server served."""
    with start_apiserver(faults=spec) as server:

        async def body() -> tuple[list[str], str]:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                await client.create(NODES.raw, NODE)
                pod = await client.create(PODS, POD)
                writer = LiveClusterClient(client)
                with writer.collect() as pending:
                    writer.bind(pod, "n1")
                failures = await writer.flush(pending)
                raw: Any = await client.get(PODS.raw, "p", "default")
                return failures, raw["spec"].get("nodeName", "")

        failures, node = asyncio.run(asyncio.wait_for(body(), 20))
        assert server.records is not None
        served = [(b.node, b.code) for b in server.records.bindings]
    return failures, node, served


def test_a_binding_whose_answer_was_lost_counts_as_bound() -> None:
    failures, node, served = bind_under("resets=1,resources=pods/binding")
    assert failures == [] and node == "n1"
    assert served == [("n1", 201)]  # sent once, not repeated


@pytest.mark.parametrize("code", ["500", "503"])
def test_a_refused_binding_is_a_failure_and_binds_nothing(code: str) -> None:
    failures, node, served = bind_under(f"errors=1,codes={code},resources=pods/binding")
    assert len(failures) == 1 and 'binding pod "default/p" to node "n1"' in failures[0]
    assert node == "" and served == []


def test_a_pod_another_binder_bound_to_the_same_node_is_not_ours() -> None:
    """A 409 answers a binding sent once: another binder was first, even on the very node
    we chose, so it is a failure (no Scheduled event of ours for that pod), as upstream."""
    with start_apiserver() as server:

        async def body() -> list[str]:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                await client.create(NODES.raw, NODE)
                pod = await client.create(PODS, POD)
                await client.bind("default", "p", "n1", pod.uid)  # the foreign binder
                writer = LiveClusterClient(client)
                with writer.collect() as pending:
                    writer.bind(pod, "n1")
                return await writer.flush(pending)

        failures = asyncio.run(asyncio.wait_for(body(), 20))
    assert len(failures) == 1 and 'binding pod "default/p" to node "n1"' in failures[0]
