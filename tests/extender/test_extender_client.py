"""The extender client (``HTTPExtender``) over real HTTP on 127.0.0.1.

Against our own extender server (the SDK) where it can play the part, and against a stub
aiohttp app of this module for what it cannot be made to do: time out, answer 500 or
garbage, name a node that was not sent, answer preempt or a NodeNames request.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from extender_helpers import go_node, go_pod

from kubesched.config.types import Extender, ExtenderManagedResource, TLSConfig
from kubesched.extender import types as t
from kubesched.extender.backend import NO_NODE_CACHE
from kubesched.extender.client import (
    Binding,
    ExtenderCallError,
    ExtenderConfigError,
    HTTPExtender,
    RawStore,
    Victims,
)
from kubesched.extender.sdk import Extender as SDKExtender
from kubesched.extender.sdk import Unresolvable
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

# --- building blocks ------------------------------------------------------------------


def make_pod(
    name: str = "web",
    *,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    init_requests: dict[str, str] | None = None,
    uid: str | None = None,
) -> dict[str, Any]:
    """A v1.Pod; extra resources go into its container (or an init container)."""
    raw = go_pod(name)
    resources = raw["spec"]["containers"][0]["resources"]
    resources["requests"].update(requests or {})
    resources["limits"].update(limits or {})
    if init_requests is not None:
        raw["spec"]["initContainers"] = [
            {"name": "init", "image": "busybox", "resources": {"requests": init_requests}}
        ]
    if uid is not None:
        raw["metadata"]["uid"] = uid
    return raw


class World:
    """API objects and their compact forms, with a RawStore the client reads."""

    def __init__(self, node_names: Sequence[str] = ("node1", "node2")) -> None:
        self.raw = RawStore()
        self.infos: dict[str, NodeInfo] = {}
        for name in node_names:
            self.add_node(go_node(name, labels={"name": name}))
        self.pod = self.add_pod(make_pod())

    def add_node(self, raw: dict[str, Any]) -> NodeInfo:
        self.raw.add_node(raw)
        info = self.infos[raw["metadata"]["name"]] = NodeInfo(Node.from_dict(raw))
        return info

    def add_pod(self, raw: dict[str, Any]) -> Pod:
        self.raw.add_pod(raw)
        return Pod.from_dict(raw)

    def nodes(self, *names: str) -> list[NodeInfo]:
        return [self.infos[n] for n in names or self.infos]

    def extender(self, url: str, **config: Any) -> HTTPExtender:
        return HTTPExtender(Extender(url_prefix=url, **config), self.raw)


@asynccontextmanager
async def serving(
    app: web.Application, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[str]:
    """``app`` served on 127.0.0.1 (a free port); yields its base URL."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await site.start()
    port = runner.addresses[0][1]
    scheme = "https" if ssl_context else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


Handler = Callable[[Any], Awaitable[web.StreamResponse] | web.StreamResponse]


class Stub:
    """An extender stub: each path answers with a function of the request's JSON, and
    every request is recorded as (path, raw body, JSON)."""

    def __init__(self, **routes: Handler) -> None:
        self.routes = routes
        self.requests: list[tuple[str, bytes, Any]] = []
        self.content_types: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        path = request.path
        self.requests.append((path, body, json.loads(body)))
        self.content_types.append(request.headers.get("Content-Type", ""))
        handler = self.routes.get(path.strip("/").replace("/", "_"))
        if handler is None:
            return web.Response(status=404)
        answer = handler(json.loads(body))
        if asyncio.iscoroutine(answer):
            answer = await answer
        assert isinstance(answer, web.StreamResponse)
        return answer

    def bodies(self) -> list[Any]:
        return [body for _, _, body in self.requests]


def answer(value: Any) -> web.Response:
    return web.Response(body=json.dumps(value), content_type="application/json")


def run(coro: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coro

    return asyncio.run(main())


def label_extender() -> SDKExtender:
    """Our SDK: filter by the ``verdict`` label, score by the ``score`` label."""
    ext = SDKExtender()

    @ext.filter
    def by_label(pod: Pod, node: Node) -> bool | str:
        verdict = node.labels.get("verdict", "pass")
        if verdict == "never":
            return Unresolvable(f"node {node.name} is retired")
        return verdict == "pass" or f"node {node.name} said {verdict}"

    @ext.prioritize
    def by_score(pod: Pod, node: Node) -> int:
        return int(node.labels.get("score", "0"))

    @ext.bind
    def bind(args: t.ExtenderBindingArgs) -> str | None:
        return None if args["Node"] != "bad" else "node bad refuses the pod"

    return ext


# --- is_interested, the simple questions, URLs ----------------------------------------

FOO = "example.com/foo"


@pytest.mark.parametrize(
    ("managed", "pod", "want"),
    [
        pytest.param((), make_pod(), True, id="no-managed-resources-interested-in-all"),
        pytest.param((FOO,), make_pod(), False, id="managed-resource-not-used"),
        pytest.param((FOO,), make_pod(requests={FOO: "1"}), True, id="container-requests-it"),
        pytest.param((FOO,), make_pod(limits={FOO: "1"}), True, id="container-limits-it"),
        pytest.param(
            (FOO,), make_pod(init_requests={FOO: "1"}), True, id="init-container-requests-it"
        ),
        pytest.param((FOO,), make_pod(requests={FOO: "0"}), True, id="zero-request-still-named"),
        pytest.param(("memory",), make_pod(), True, id="managed-memory-container-memory"),
        pytest.param(
            ("example.com/bar", FOO),
            make_pod(requests={FOO: "2"}),
            True,
            id="one-of-several-managed",
        ),
    ],
)
def test_is_interested(managed: tuple[str, ...], pod: dict[str, Any], want: bool) -> None:
    config = Extender(
        url_prefix="http://e", managed_resources=tuple(ExtenderManagedResource(m) for m in managed)
    )
    assert HTTPExtender(config, RawStore()).is_interested(Pod.from_dict(pod)) is want


def test_capabilities_follow_the_verbs() -> None:
    bare = HTTPExtender(Extender(url_prefix="http://e"), RawStore())
    assert (bare.is_filter(), bare.is_prioritizer(), bare.is_binder()) == (False, False, False)
    assert not bare.supports_preemption() and not bare.is_ignorable()
    full = HTTPExtender(
        Extender(
            url_prefix="http://e/",
            filter_verb="f",
            prioritize_verb="p",
            bind_verb="b",
            preempt_verb="x",
            weight=3,
            ignorable=True,
        ),
        RawStore(),
    )
    assert (full.is_filter(), full.is_prioritizer(), full.is_binder()) == (True, True, True)
    assert full.supports_preemption() and full.is_ignorable()
    assert (full.name, full.weight, full.timeout) == ("http://e/", 3, 5.0)


@pytest.mark.parametrize(
    ("prefix", "url"),
    [
        pytest.param("http://e", "http://e/filter", id="plain-prefix"),
        pytest.param("http://e/", "http://e/filter", id="trailing-slash-trimmed"),
        pytest.param("http://e/api//", "http://e/api/filter", id="all-trailing-slashes-trimmed"),
        pytest.param("http://e/api/v1", "http://e/api/v1/filter", id="path-prefix-kept"),
    ],
)
def test_url_is_prefix_slash_verb(prefix: str, url: str) -> None:
    assert HTTPExtender(Extender(url_prefix=prefix), RawStore()).url("filter") == url


# --- against our own server (the SDK) -------------------------------------------------


def test_filter_and_prioritize_against_our_server() -> None:
    world = World(())
    for name, labels in [
        ("ok", {"score": "7"}),
        ("full", {"verdict": "full"}),
        ("retired", {"verdict": "never"}),
        ("fine", {"score": "2"}),
    ]:
        world.add_node(go_node(name, labels=labels))

    async def main() -> None:
        async with (
            serving(label_extender().app()) as url,
            world.extender(
                url, filter_verb="filter", prioritize_verb="prioritize", weight=4
            ) as ext,
        ):
            kept, failed, unresolvable = await ext.filter(world.pod, world.nodes())
            assert [n.name for n in kept] == ["ok", "fine"]
            assert all(n is world.infos[n.name] for n in kept)
            assert failed == {"full": "node full said full"}
            assert unresolvable == {"retired": "node retired is retired"}
            scores, weight = await ext.prioritize(world.pod, kept)
            assert (scores, weight) == ([("ok", 7), ("fine", 2)], 4)

    run(main())


def test_error_field_of_our_server_is_an_error() -> None:
    # Our SDK has no node cache: a NodeNames request is answered with Error set.
    world = World()

    async def main() -> None:
        async with (
            serving(label_extender().app()) as url,
            world.extender(url, filter_verb="filter", node_cache_capable=True) as ext,
        ):
            with pytest.raises(ExtenderCallError) as info:
                await ext.filter(world.pod, world.nodes())
        assert str(info.value) == NO_NODE_CACHE
        assert (info.value.extender, info.value.verb) == (url, "filter")

    run(main())


@pytest.mark.parametrize(
    ("node", "error"),
    [
        pytest.param("node1", None, id="bound"),
        pytest.param("bad", "node bad refuses the pod", id="error-field-fails-the-bind"),
    ],
)
def test_bind_against_our_server(node: str, error: str | None) -> None:
    world = World()

    async def main() -> None:
        async with (
            serving(label_extender().app()) as url,
            world.extender(url, bind_verb="bind") as ext,
        ):
            if error is None:
                await ext.bind(Binding.of(world.pod, node))
            else:
                with pytest.raises(ExtenderCallError, match=error):
                    await ext.bind(Binding.of(world.pod, node))

    run(main())


def test_verb_our_server_does_not_serve_names_extender_and_verb() -> None:
    world = World()

    async def main() -> None:
        async with (
            serving(label_extender().app()) as url,
            world.extender(url + "/", preempt_verb="preempt") as ext,
        ):
            victims = {"node1": Victims([world.pod])}
            with pytest.raises(ExtenderCallError) as info:
                await ext.process_preemption(world.pod, victims, Snapshot(world.nodes()))
        assert str(info.value) == f"failed preempt with extender at URL {url}/preempt, code 404"

    run(main())


# --- the wire, as kube-scheduler writes it --------------------------------------------


def test_full_nodes_request_is_the_go_encoding() -> None:
    world = World()
    stub = Stub(filter=lambda body: answer({"Nodes": body["Nodes"]}))

    async def main() -> None:
        async with serving(stub.app()) as url, world.extender(url, filter_verb="filter") as ext:
            kept, failed, unresolvable = await ext.filter(world.pod, world.nodes())
        assert [n.name for n in kept] == ["node1", "node2"]
        assert failed == unresolvable == {}

    run(main())
    ((path, body, _),) = stub.requests
    expected = t.encode_extender_args(
        t.ExtenderArgs(
            Pod=world.raw.pods["default/web"],
            Nodes={"metadata": {}, "items": [world.raw.nodes["node1"], world.raw.nodes["node2"]]},
            NodeNames=None,
        )
    )
    assert path == "/filter"
    assert body == expected
    assert body.startswith(b'{"Pod":{"metadata":{"name":"web"')
    assert b'"Nodes":{"metadata":{},"items":[' in body and body.endswith(b',"NodeNames":null}')


def test_node_cache_capable_sends_names_and_maps_answers_back() -> None:
    world = World(("a", "b", "c"))
    stub = Stub(
        filter=lambda body: answer(
            {"NodeNames": ["c", "a"], "FailedNodes": {"b": "no"}, "Error": ""}
        ),
        prioritize=lambda body: answer([{"Host": n, "Score": 3} for n in body["NodeNames"]]),
    )

    async def main() -> None:
        async with (
            serving(stub.app()) as url,
            world.extender(
                url, filter_verb="filter", prioritize_verb="prioritize", node_cache_capable=True
            ) as ext,
        ):
            kept, failed, _ = await ext.filter(world.pod, world.nodes())
            assert [n.name for n in kept] == ["c", "a"]
            assert kept[0] is world.infos["c"]
            assert failed == {"b": "no"}
            assert await ext.prioritize(world.pod, kept) == ([("c", 3), ("a", 3)], 0)

    run(main())
    for body in stub.bodies():
        assert body["Nodes"] is None
        assert body["Pod"]["metadata"]["name"] == "web"
    assert [b["NodeNames"] for b in stub.bodies()] == [["a", "b", "c"], ["c", "a"]]


@pytest.mark.parametrize(
    ("cache", "result", "kept"),
    [
        pytest.param(False, {"nodes": {"items": []}}, [], id="lower-case-keys-as-go-decodes"),
        pytest.param(False, {}, [], id="no-nodes-in-answer-keeps-none"),
        pytest.param(
            True,
            {"NodeNames": None, "Nodes": {"items": [{"metadata": {"name": "b"}}]}},
            ["b"],
            id="cache-capable-without-names-falls-back-to-nodes",
        ),
        pytest.param(
            False,
            {"NodeNames": ["a"], "Nodes": None},
            [],
            id="names-ignored-when-not-cache-capable",
        ),
    ],
)
def test_which_answer_field_is_read(cache: bool, result: Any, kept: list[str]) -> None:
    world = World(("a", "b"))
    stub = Stub(filter=lambda body: answer(result))

    async def main() -> list[str]:
        async with (
            serving(stub.app()) as url,
            world.extender(url, filter_verb="filter", node_cache_capable=cache) as ext,
        ):
            nodes, _, _ = await ext.filter(world.pod, world.nodes())
            return [n.name for n in nodes]

    assert run(main()) == kept


def test_bind_request_is_the_go_encoding() -> None:
    world = World()
    stub = Stub(bind=lambda body: answer({"Error": ""}))

    async def main() -> None:
        tls = TLSConfig(server_name="ignored.example")  # plain HTTP: no TLS at all
        async with (
            serving(stub.app()) as url,
            world.extender(url, bind_verb="bind", tls_config=tls) as ext,
        ):
            await ext.bind(Binding.of(world.pod, "node1"))

    run(main())
    assert [body for _, body, _ in stub.requests] == [
        b'{"PodName":"web","PodNamespace":"default","PodUID":"uid-web","Node":"node1"}'
    ]
    assert stub.content_types == ["application/json"]


def test_without_verbs_nothing_is_sent() -> None:
    world = World()
    ext = world.extender("http://127.0.0.1:9")  # nothing listens there

    async def main() -> None:
        nodes = world.nodes()
        assert await ext.filter(world.pod, nodes) == (nodes, {}, {})
        assert await ext.prioritize(world.pod, nodes) == ([("node1", 0), ("node2", 0)], 0)
        with pytest.raises(ExtenderCallError, match="unexpected empty bindVerb"):
            await ext.bind(Binding.of(world.pod, "node1"))
        with pytest.raises(ExtenderCallError, match="preempt verb is not defined"):
            await ext.process_preemption(world.pod, {}, Snapshot(nodes))

    run(main())


# --- failed calls ---------------------------------------------------------------------


async def _slow(body: Any) -> web.Response:
    await asyncio.sleep(0.5)
    return answer({})


def _unknown_name(body: Any) -> web.Response:
    return answer({"Nodes": {"items": [{"metadata": {"name": "elsewhere"}}]}})


FAILURES = [
    pytest.param(
        lambda body: web.Response(status=500, text="boom"),
        False,
        "failed filter with extender at URL {url}/filter, code 500",
        id="non-200-names-verb-and-url",
    ),
    pytest.param(
        lambda body: web.Response(status=201, text="{}"),
        False,
        "failed filter with extender at URL {url}/filter, code 201",
        id="any-status-but-200-fails",
    ),
    pytest.param(
        lambda body: web.Response(text="<html>nope</html>"),
        False,
        "failed filter with extender at URL {url}/filter: filter answer: body is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        id="garbage-body",
    ),
    pytest.param(
        lambda body: answer({"FailedNodes": ["a"]}),
        False,
        "failed filter with extender at URL {url}/filter: "
        "ExtenderFilterResult.FailedNodes: expected a JSON object, got array",
        id="wrong-shape",
    ),
    pytest.param(
        lambda body: answer({"Error": "quota service down"}),
        False,
        "quota service down",
        id="error-field",
    ),
    pytest.param(
        _unknown_name,
        False,
        "extender '{url}' claims a filtered node 'elsewhere' which is not found in the input node list",
        id="node-not-sent-in-nodes",
    ),
    pytest.param(
        lambda body: answer({"NodeNames": ["node1", "elsewhere"]}),
        True,
        "extender '{url}' claims a filtered node 'elsewhere' which is not found in the input node list",
        id="node-not-sent-in-node-names",
    ),
    pytest.param(
        _slow,
        False,
        'Post "{url}/filter": no answer within 0.1s (httpTimeout exceeded)',
        id="timeout",
    ),
]


@pytest.mark.parametrize(("handler", "cache", "message"), FAILURES)
def test_failed_filter_calls(handler: Handler, cache: bool, message: str) -> None:
    world = World()
    stub = Stub(filter=handler)

    async def main() -> None:
        async with (
            serving(stub.app()) as url,
            world.extender(
                url,
                filter_verb="filter",
                node_cache_capable=cache,
                # Short only where the timeout is the failure: a loaded machine may take
                # longer than 0.1 s to answer the others.
                http_timeout_seconds=0.1 if handler is _slow else 10.0,
            ) as ext,
        ):
            with pytest.raises(ExtenderCallError) as info:
                await ext.filter(world.pod, world.nodes())
        assert str(info.value) == message.format(url=url)
        assert (info.value.extender, info.value.verb) == (url, "filter")

    run(main())


def test_connection_refused_is_a_failed_call_not_an_aiohttp_error() -> None:
    world = World()

    async def main() -> None:
        async with serving(web.Application()) as url:
            pass  # the port is free again
        async with world.extender(url, prioritize_verb="prioritize") as ext:
            with pytest.raises(ExtenderCallError) as info:
                await ext.prioritize(world.pod, world.nodes())
        assert str(info.value).startswith(f'Post "{url}/prioritize": ')
        assert info.value.__cause__ is not None

    run(main())


def test_default_timeout_is_five_seconds() -> None:
    config = Extender(url_prefix="http://e", http_timeout_seconds=0)
    assert HTTPExtender(config, RawStore()).timeout == 5.0


# --- preemption -----------------------------------------------------------------------


def preemption_world() -> tuple[World, Snapshot]:
    world = World(())
    pods = {uid: world.add_pod(make_pod(f"p-{uid}", uid=uid)) for uid in ("1", "2", "3", "4")}
    world.add_node(go_node("node1"))
    world.add_node(go_node("node2"))
    world.infos["node1"].add_pod(pods["1"])
    world.infos["node1"].add_pod(pods["3"])
    world.infos["node2"].add_pod(pods["2"])
    world.infos["node2"].add_pod(pods["4"])
    return world, Snapshot(world.nodes())


def test_preemption_node_cache_capable_sends_meta_victims() -> None:
    # Upstream's TestConvertToMetaVictims and TestConvertToVictims, through the wire.
    world, snapshot = preemption_world()
    p = {info.pod.uid: info.pod for n in world.nodes() for info in n.pods}
    stub = Stub(
        preempt=lambda body: answer(
            {
                "NodeNameToMetaVictims": {
                    "node1": {"Pods": [{"UID": "1"}, {"UID": "3"}], "NumPDBViolations": 1},
                    "node2": {"Pods": [{"UID": "4"}], "NumPDBViolations": 2},
                }
            }
        )
    )
    sent = {"node1": Victims([p["1"], p["3"]], 1), "node2": Victims([p["2"], p["4"]], 2)}

    async def main() -> dict[str, Victims]:
        async with (
            serving(stub.app()) as url,
            world.extender(url, preempt_verb="preempt", node_cache_capable=True) as ext,
        ):
            result: dict[str, Victims] = await ext.process_preemption(world.pod, sent, snapshot)
            return result

    result = run(main())
    assert result == {"node1": Victims([p["1"], p["3"]], 1), "node2": Victims([p["4"]], 2)}
    (body,) = stub.bodies()
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"] == {
        "node1": {"Pods": [{"UID": "1"}, {"UID": "3"}], "NumPDBViolations": 1},
        "node2": {"Pods": [{"UID": "2"}, {"UID": "4"}], "NumPDBViolations": 2},
    }


def test_preemption_without_node_cache_sends_full_pods() -> None:
    world, snapshot = preemption_world()
    victim = world.infos["node2"].pods[0].pod
    stub = Stub(preempt=lambda body: answer({"NodeNameToMetaVictims": {}}))

    async def main() -> Any:
        async with serving(stub.app()) as url, world.extender(url, preempt_verb="preempt") as ext:
            return await ext.process_preemption(
                world.pod, {"node2": Victims([victim], 0)}, snapshot
            )

    assert run(main()) == {}
    (body,) = stub.bodies()
    assert body["NodeNameToMetaVictims"] is None
    assert body["NodeNameToVictims"] == {
        "node2": {"Pods": [world.raw.pods["default/p-2"]], "NumPDBViolations": 0}
    }


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        pytest.param(
            {"node1": {"Pods": [{"UID": "2"}]}},
            "extender: {url} claims to preempt pod (UID: 2) on node: node1, "
            "but the pod is not found on that node",
            id="victim-not-on-that-node",
        ),
        pytest.param(
            {"node9": {"Pods": [{"UID": "1"}]}},
            "nodeinfo not found for node name 'node9'",
            id="unknown-node",
        ),
    ],
)
def test_preemption_answers_that_do_not_resolve(meta: Any, message: str) -> None:
    world, snapshot = preemption_world()
    stub = Stub(preempt=lambda body: answer({"NodeNameToMetaVictims": meta}))

    async def main() -> None:
        async with serving(stub.app()) as url, world.extender(url, preempt_verb="preempt") as ext:
            with pytest.raises(ExtenderCallError) as info:
                await ext.process_preemption(world.pod, {}, snapshot)
        assert str(info.value) == message.format(url=url)

    run(main())


# --- TLS ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for DNS:localhost only, and a client certificate."""
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def sh(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    sh("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1",
       "-subj", "/CN=test-ca", "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    for name, extra in [("server", "subjectAltName=DNS:localhost\n"), ("client", "")]:
        (d / f"{name}.ext").write_text(
            extra + "basicConstraints=CA:FALSE\nsubjectKeyIdentifier=hash\n"
            "authorityKeyIdentifier=keyid,issuer\n"
        )
        sh("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        sh("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
           "-CAcreateserial", "-out", f"{name}.crt", "-days", "1", "-extfile", f"{name}.ext")  # fmt: skip
    return d


def server_context(pki: Path, require_client_cert: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    if require_client_cert:
        context.load_verify_locations(pki / "ca.crt")
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _ca(pki: Path, **kw: Any) -> TLSConfig:
    return TLSConfig(ca_file=str(pki / "ca.crt"), **kw)


def _client_files(pki: Path) -> TLSConfig:
    return TLSConfig(
        insecure=True, cert_file=str(pki / "client.crt"), key_file=str(pki / "client.key")
    )


def _client_data(pki: Path) -> TLSConfig:
    return TLSConfig(
        ca_data=(pki / "ca.crt").read_bytes(),
        server_name="localhost",
        cert_data=(pki / "client.crt").read_bytes(),
        key_data=(pki / "client.key").read_bytes(),
    )


@pytest.mark.parametrize(
    ("mutual", "https", "tls", "error"),
    [
        pytest.param(False, True, lambda d: None, None, id="https-without-ca-is-insecure"),
        pytest.param(False, False, lambda d: TLSConfig(insecure=True), None, id="insecure-flag"),
        pytest.param(
            False,
            False,
            lambda d: None,
            "CERTIFICATE_VERIFY_FAILED",
            id="no-tls-settings-uses-system-roots",
        ),
        pytest.param(False, True, _ca, "IP address mismatch", id="ca-file-but-ip-not-in-cert"),
        pytest.param(
            False,
            True,
            lambda d: _ca(d, server_name="localhost"),
            None,
            id="ca-file-and-server-name",
        ),
        pytest.param(
            False, True, lambda d: _ca(d, server_name="other"), "mismatch", id="wrong-server-name"
        ),
        pytest.param(True, True, _client_files, None, id="client-cert-files"),
        pytest.param(True, True, _client_data, None, id="client-cert-and-ca-data"),
        pytest.param(
            True,
            True,
            lambda d: _ca(d, server_name="localhost"),
            "Connection reset|(?i:certificate.required)|Broken pipe",
            id="client-cert-missing",
        ),
    ],
)
def test_tls(
    pki: Path,
    mutual: bool,
    https: bool,
    tls: Callable[[Path], TLSConfig | None],
    error: str | None,
) -> None:
    world = World()
    stub = Stub(filter=lambda body: answer({"Nodes": body["Nodes"]}))

    async def main() -> None:
        async with serving(stub.app(), server_context(pki, mutual)) as url:
            config = {"enable_https": https, "tls_config": tls(pki)}
            async with world.extender(url, filter_verb="filter", **config) as ext:
                if error is None:
                    kept, _, _ = await ext.filter(world.pod, world.nodes())
                    assert len(kept) == 2
                else:
                    with pytest.raises(ExtenderCallError, match=error):
                        await ext.filter(world.pod, world.nodes())

    run(main())


@pytest.mark.parametrize(
    ("tls", "message"),
    [
        pytest.param(
            TLSConfig(insecure=True, ca_data=b"x"),
            "specifying a root certificates file with the insecure flag is not allowed",
            id="insecure-with-ca",
        ),
        pytest.param(TLSConfig(ca_file="/nonexistent/ca.crt"), "No such file", id="missing-ca"),
        pytest.param(
            TLSConfig(cert_data=b"-----BEGIN CERTIFICATE-----"),
            "needs both a certificate and a key",
            id="cert-without-key",
        ),
    ],
)
def test_unusable_tls_config_fails_at_construction(tls: TLSConfig, message: str) -> None:
    with pytest.raises(ExtenderConfigError, match=message):
        HTTPExtender(Extender(url_prefix="https://e", tls_config=tls), RawStore())
