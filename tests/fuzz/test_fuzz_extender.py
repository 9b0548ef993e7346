"""Fuzzed extender requests: filter, prioritize and preempt bodies to ``kubesched extender
serve`` with its node and pod cache (over a real embedded API server), and bind bodies to
an SDK extender with a binder. The bodies are kube-scheduler's (a pod, full nodes or node
names, victims by pod or by UID, a binding) changed at the schema paths of Pod and Node,
or any JSON, sometimes damaged.

The oracle: an answer within the timeout, on a connection that stays up; never a 500
(a fault); a refusal is a 400 naming the field (filter and bind: in the answer's Error)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from fuzz_http import Client
from fuzz_profile import count, fuzz
from fuzz_values import encoded, json_values, mutated
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver.runner import start_apiserver
from kubesched.extender.cli import build_parser, build_serving, serve
from kubesched.extender.sdk import Extender

POD = {"$ref": "#/components/schemas/io.k8s.api.core.v1.Pod"}
NODE = {"$ref": "#/components/schemas/io.k8s.api.core.v1.Node"}
VICTIMS = {
    "type": "object",
    "properties": {
        "Pods": {"type": "array", "items": POD},
        "NumPDBViolations": {"type": "integer", "format": "int64"},
    },
}
META_VICTIMS = {
    "type": "object",
    "properties": {
        "Pods": {
            "type": "array",
            "items": {"type": "object", "properties": {"UID": {"type": "string"}}},
        },
        "NumPDBViolations": {"type": "integer", "format": "int64"},
    },
}
#: The wire types of kube-scheduler's extender calls, as OpenAPI schemas for the mutator.
ARGS = {
    "type": "object",
    "properties": {
        "Pod": POD,
        "Nodes": {"type": "object", "properties": {"items": {"type": "array", "items": NODE}}},
        "NodeNames": {"type": "array", "items": {"type": "string"}},
    },
}
PREEMPTION_ARGS = {
    "type": "object",
    "properties": {
        "Pod": POD,
        "NodeNameToVictims": {"type": "object", "additionalProperties": VICTIMS},
        "NodeNameToMetaVictims": {"type": "object", "additionalProperties": META_VICTIMS},
    },
}
BINDING_ARGS = {
    "type": "object",
    "properties": {
        "PodName": {"type": "string"},
        "PodNamespace": {"type": "string"},
        "PodUID": {"type": "string"},
        "Node": {"type": "string"},
    },
}


def node(name):
    resources = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": resources, "allocatable": resources},
    }


def pod(name, node_name=""):
    spec = {
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }


class Served:
    """An extender served from its own event loop in a thread."""

    def __init__(self, start):
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()
        ready = threading.Event()
        self.port = 0

        def listening(port):
            self.port = port
            ready.set()

        def run():
            asyncio.set_event_loop(self.loop)
            self.loop.run_until_complete(start(self.stop, listening))

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(20), "the extender did not start"
        self.client = Client(f"http://127.0.0.1:{self.port}")

    def close(self):
        self.client.close()
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


@pytest.fixture(scope="module")
def extenders(tmp_path_factory):
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("ext") / "kubeconfig")
    client = Client(handle.url)
    for name in ("a", "b"):
        assert (
            client.request("POST", "/api/v1/nodes", json.dumps(node(name)).encode()).status == 201
        )
    victim = pod("busy", "a")
    del victim["metadata"]["uid"]
    reply = client.request("POST", "/api/v1/namespaces/default/pods", json.dumps(victim).encode())
    assert reply.status == 201, reply.body
    uid = reply.json()["metadata"]["uid"]
    client.close()
    argv = [
        "serve",
        "--kubeconfig",
        str(handle.kubeconfig_path),
        "--port",
        "0",
        "--host",
        "127.0.0.1",
    ]
    serving = build_serving(build_parser().parse_args(argv))

    async def profile(stop, listening):
        await serve(serving, stop, listening)

    ext = Extender()
    ext.filter(lambda p, n: True)
    ext.prioritize(lambda p, n: 1)

    @ext.bind
    def binder(args):
        return None if args["Node"] else "no node"

    async def sdk(stop, listening):
        runner, port = await ext.server().start("127.0.0.1", 0)
        listening(port)
        await stop.wait()
        await runner.cleanup()

    served = Served(profile), Served(sdk)
    # The cache syncs from the API server: wait for it, as kube-scheduler waits on readyz.
    for _ in range(200):
        if served[0].client.request("GET", "/readyz").status == 200:
            break
        threading.Event().wait(0.05)
    try:
        yield served[0], served[1], uid
    finally:
        for one in served:
            one.close()
        handle.stop()


def check(reply, what):
    assert reply.status < 500 or reply.status == 501, f"{what}: {reply.status} {reply.body[:600]!r}"
    assert reply.status in (200, 400, 501), f"{what}: {reply.status} {reply.body[:600]!r}"
    if reply.headers.get_content_type() == "application/json":
        json.loads(reply.body)


def bases(uid):
    good = pod("new")
    return {
        "filter": (
            ARGS,
            {
                "Pod": good,
                "Nodes": {"metadata": {}, "items": [node("a"), node("b")]},
                "NodeNames": None,
            },
        ),
        "filter-names": (ARGS, {"Pod": good, "Nodes": None, "NodeNames": ["a", "b", "ghost"]}),
        "prioritize": (ARGS, {"Pod": good, "Nodes": None, "NodeNames": ["a", "b"]}),
        "preempt": (
            PREEMPTION_ARGS,
            {
                "Pod": good,
                "NodeNameToVictims": None,
                "NodeNameToMetaVictims": {"a": {"Pods": [{"UID": uid}], "NumPDBViolations": 0}},
            },
        ),
        "preempt-pods": (
            PREEMPTION_ARGS,
            {
                "Pod": good,
                "NodeNameToVictims": {
                    "a": {
                        "Pods": [
                            dict(
                                pod("busy", "a"),
                                metadata={"name": "busy", "namespace": "default", "uid": uid},
                            )
                        ],
                        "NumPDBViolations": 1,
                    }
                },
                "NodeNameToMetaVictims": None,
            },
        ),
        "bind": (
            BINDING_ARGS,
            {"PodName": "new", "PodNamespace": "default", "PodUID": "u", "Node": "a"},
        ),
    }


@pytest.mark.parametrize(
    "call", ["filter", "filter-names", "prioritize", "preempt", "preempt-pods", "bind"]
)
@fuzz(examples=40)
@given(data=st.data())
def test_extender_verbs(extenders, call, data):
    profile, sdk, uid = extenders
    schema, base = bases(uid)[call]
    value = data.draw(
        st.one_of(
            mutated(base, schema), mutated(base, schema), mutated(base, schema), json_values()
        ),
        "value",
    )
    body = data.draw(encoded(value), "body")
    verb = call.split("-")[0]
    # The SDK extender serves bind (and filter and prioritize), the profile extender the rest.
    target = (
        sdk
        if verb == "bind" or (verb != "preempt" and data.draw(st.integers(0, 4), "server") == 0)
        else profile
    )
    count()
    reply = target.client.request("POST", f"/{verb}", body)
    check(reply, f"POST /{verb} {body[:400]!r}")
