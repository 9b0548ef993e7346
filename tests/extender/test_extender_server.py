"""The extender server over HTTP, with request bodies shaped as kube-scheduler sends them.

A profile of the default plugins plus ``TestLabels`` (a plugin of this module whose
verdicts and scores come from node labels) is served; each test posts JSON and checks
the JSON answer, byte for byte where the shape matters.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from extender_helpers import exchange, filter_args, go_node, go_pod, names_args, post

from kubesched.config import loads_config
from kubesched.extender import types as t
from kubesched.extender.backend import NO_NODE_CACHE
from kubesched.extender.profile import PREEMPT_NEEDS_CACHE, ProfileExtender, to_extender_score
from kubesched.extender.server import ExtenderServer
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Status
from kubesched.framework.runtime import Framework
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry


class TestLabels:
    """Filter: label ``verdict`` = unschedulable | unresolvable | error rejects the node.
    Score: label ``score`` (0..100), or an exception when it is ``raise``."""

    name = "TestLabels"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        verdict = node_info.node.labels.get("verdict")
        if verdict == "unschedulable":
            return Status.unschedulable("node(s) said no", "try later")
        if verdict == "unresolvable":
            return Status.unresolvable("node(s) will never fit")
        if verdict == "error":
            return Status.error("the label oracle is down")
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        value = node_info.node.labels.get("score", "0")
        if value == "raise":
            raise RuntimeError("scoring blew up")
        return int(value), None

    def score_extensions(self) -> None:
        return None


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: %s
  plugins:
    multiPoint:
      enabled: [{name: TestLabels, weight: %d}]
%s
"""

ONLY_TEST_LABELS = """\
    score:
      disabled: [{name: '*'}]
      enabled: [{name: TestLabels, weight: 1}]
"""


def labels_server(weight: int = 1, only_test_scores: bool = False) -> ExtenderServer:
    text = CONFIG % ("labels", weight, ONLY_TEST_LABELS if only_test_scores else "")
    profile = loads_config(text, "test.yaml").profiles[0]
    registry = in_tree_registry().merged({"TestLabels": lambda args, handle: TestLabels()})
    return ExtenderServer(ProfileExtender(Framework(profile, registry)))


@pytest.fixture(scope="module")
def server() -> ExtenderServer:
    return labels_server()


POD = go_pod("web")


def test_filter_answers_in_go_shape_with_the_nodes_it_was_given(server: ExtenderServer) -> None:
    nodes = [
        go_node("ok-1"),
        go_node("taint", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        go_node("said-no", labels={"verdict": "unschedulable"}),
        go_node("never", labels={"verdict": "unresolvable"}),
        go_node("cordoned", unschedulable=True),
        go_node("ok-2"),
    ]
    reply = post(server.app(), "/filter", filter_args(POD, nodes))
    assert (reply.status, reply.content_type) == (200, "application/json")
    expected = (
        b'{"Nodes":{"metadata":{},"items":['
        + json.dumps(nodes[0], separators=(",", ":")).encode()
        + b","
        + json.dumps(nodes[5], separators=(",", ":")).encode()
        + b']},"NodeNames":null,"FailedNodes":{"said-no":"node(s) said no, try later"},'
        b'"FailedAndUnresolvableNodes":{"cordoned":"node(s) were unschedulable",'
        b'"never":"node(s) will never fit","taint":"node(s) had untolerated taint {dedicated: gpu}"},'
        b'"Error":""}'
    )
    assert reply.body == expected


def test_filter_error_status_fails_the_call_through_the_error_field(server: ExtenderServer) -> None:
    nodes = [go_node("ok"), go_node("broken", labels={"verdict": "error"})]
    reply = post(server.app(), "/filter", filter_args(POD, nodes))
    assert reply.status == 200
    assert reply.json() == {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": None,
        "FailedAndUnresolvableNodes": None,
        "Error": 'running "TestLabels" filter plugin: the label oracle is down',
    }


def test_filter_pod_that_prefilter_rejects_fails_every_node(server: ExtenderServer) -> None:
    pod = go_pod("pinned")
    pod["spec"]["nodeSelector"] = {"disk": "ssd"}
    pod["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["elsewhere"]}
                        ]
                    }
                ]
            }
        }
    }
    reply = post(server.app(), "/filter", filter_args(pod, [go_node("a"), go_node("b")]))
    answer = reply.json()
    assert answer["Nodes"] == {"metadata": {}, "items": []}
    assert set(answer["FailedAndUnresolvableNodes"]) == {"a", "b"}
    assert answer["FailedNodes"] == {}


def test_request_with_lowercase_field_names_is_understood(server: ExtenderServer) -> None:
    body = json.dumps({"pod": POD, "nodes": {"items": [go_node("a")]}, "nodenames": None}).encode()
    reply = post(server.app(), "/filter", body)
    assert reply.status == 200
    assert [n["metadata"]["name"] for n in reply.json()["Nodes"]["items"]] == ["a"]


def test_unknown_fields_are_ignored(server: ExtenderServer) -> None:
    body = json.dumps({"Pod": POD, "Nodes": {"items": [go_node("a")]}, "Future": {"x": 1}}).encode()
    assert post(server.app(), "/filter", body).status == 200


@pytest.mark.parametrize(
    ("scores", "weight", "expected"),
    [
        pytest.param({"a": "100", "b": "0"}, 1, {"a": 10, "b": 0}, id="ends-of-the-range"),
        pytest.param(
            {"a": "99", "b": "55", "c": "9"},
            1,
            {"a": 9, "b": 5, "c": 0},
            id="floor-as-go-integer-division",
        ),
        pytest.param(
            {"a": "100", "b": "50"}, 5, {"a": 10, "b": 5}, id="weight-does-not-leave-the-range"
        ),
    ],
)
def test_prioritize_maps_scores_to_the_extender_range(
    scores: dict[str, str], weight: int, expected: dict[str, int]
) -> None:
    server = labels_server(weight=weight, only_test_scores=True)
    nodes = [go_node(name, labels={"score": s}) for name, s in scores.items()]
    reply = post(server.app(), "/prioritize", filter_args(POD, nodes))
    assert reply.status == 200
    assert reply.json() == [{"Host": name, "Score": s} for name, s in expected.items()]


@pytest.mark.parametrize(
    ("total", "weights", "expected"),
    [
        pytest.param(0, 1, 0, id="zero"),
        pytest.param(100, 1, 10, id="max"),
        pytest.param(109, 1, 10, id="floor"),
        pytest.param(300 + 2 * 45, 5, 7, id="weighted-mean-78-gives-7"),
        pytest.param(5, 0, 0, id="no-weights"),
    ],
)
def test_to_extender_score(total: int, weights: int, expected: int) -> None:
    assert to_extender_score(total, weights) == expected


def test_prioritize_with_the_default_plugins_prefers_the_roomier_node(
    server: ExtenderServer,
) -> None:
    nodes = [go_node("small", cpu="1", memory="1Gi"), go_node("big", cpu="16", memory="64Gi")]
    reply = post(server.app(), "/prioritize", filter_args(POD, nodes))
    answer = reply.json()
    assert [p["Host"] for p in answer] == ["small", "big"]
    assert 0 <= answer[0]["Score"] < answer[1]["Score"] <= 10
    assert reply.body == t.encode_host_priority_list(answer)


def test_prioritize_plugin_fault_is_a_500_and_the_server_goes_on(server: ExtenderServer) -> None:
    nodes = [go_node("a", labels={"score": "raise"})]
    bad, good = exchange(
        server.app(),
        ("POST", "/prioritize", filter_args(POD, nodes)),
        ("POST", "/prioritize", filter_args(POD, [go_node("a")])),
    )
    assert (bad.status, bad.content_type) == (500, "text/plain")
    assert bad.body == b"prioritize failed: RuntimeError: scoring blew up"
    assert good.status == 200


def test_node_cache_capable_request_gets_a_clear_error(server: ExtenderServer) -> None:
    filt, prio = exchange(
        server.app(),
        ("POST", "/filter", names_args(POD, ["a", "b"])),
        ("POST", "/prioritize", names_args(POD, ["a", "b"])),
    )
    assert filt.status == 200
    assert filt.json()["Error"] == NO_NODE_CACHE
    assert (prio.status, prio.body.decode()) == (501, NO_NODE_CACHE)


BAD_FILTER = [
    pytest.param(
        b"{not json", "bad filter request: filter request: body is not valid JSON: ", id="not-json"
    ),
    pytest.param(
        b"", "bad filter request: filter request: body is not valid JSON: ", id="empty-body"
    ),
    pytest.param(
        b"[]", "bad filter request: ExtenderArgs: expected a JSON object, got array", id="array"
    ),
    pytest.param(
        filter_args(None, [go_node("a")]),
        "bad filter request: ExtenderArgs.Pod: Required value: the pod being scheduled is missing",
        id="missing-pod",
    ),
    pytest.param(
        t.encode_extender_args(t.ExtenderArgs(Pod=POD, Nodes=None, NodeNames=None)),
        "bad filter request: ExtenderArgs: Required value: neither Nodes nor NodeNames is set",
        id="no-nodes-at-all",
    ),
    pytest.param(
        filter_args({"metadata": {"name": "p", "namespace": "d"}, "spec": {"containers": 3}}, []),
        "bad filter request: ExtenderArgs.Pod.spec.containers: expected a list, got int (Pod d/p)",
        id="pod-field-invalid",
    ),
    pytest.param(
        filter_args(POD, [go_node("a"), {"metadata": {}}]),
        "bad filter request: ExtenderArgs.Nodes.items[1].metadata.name: Required value: name is required",
        id="node-without-name",
    ),
    pytest.param(
        filter_args(POD, [go_node("a"), go_node("a")]),
        "bad filter request: ExtenderArgs.Nodes.items[1]: Duplicate value: 'a'",
        id="node-listed-twice",
    ),
]


@pytest.mark.parametrize(("body", "message"), BAD_FILTER)
def test_bad_filter_request_is_a_400_and_the_server_keeps_serving(
    server: ExtenderServer, body: bytes, message: str
) -> None:
    bad, good = exchange(
        server.app(),
        ("POST", "/filter", body),
        ("POST", "/filter", filter_args(POD, [go_node("a")])),
    )
    assert (bad.status, bad.content_type) == (400, "application/json")
    answer = bad.json()
    assert answer["Error"].startswith(message)
    assert answer["Nodes"] is None
    assert good.status == 200


def test_bad_prioritize_request_is_a_400_in_plain_text(server: ExtenderServer) -> None:
    reply = post(server.app(), "/prioritize", b'{"Pod": 7}')
    assert (reply.status, reply.content_type) == (400, "text/plain")
    assert (
        reply.body
        == b"bad prioritize request: ExtenderArgs.Pod: expected a JSON object, got number"
    )


def test_bind_is_not_served_by_a_profile(server: ExtenderServer) -> None:
    args = t.ExtenderBindingArgs(PodName="web", PodNamespace="default", PodUID="u", Node="a")
    reply = post(server.app(), "/bind", t.encode_binding_args(args))
    assert reply.status == 404
    assert reply.body == (
        b"this extender does not serve the bind verb; remove bindVerb from "
        b"kube-scheduler's extender configuration"
    )


def test_preempt_without_cluster_access_is_a_501_saying_why(server: ExtenderServer) -> None:
    # Judging a node after its victims leave needs the node and its pods: with no cache
    # the server says so instead of accepting every candidate blindly.
    args = t.ExtenderPreemptionArgs(
        Pod=POD,
        NodeNameToVictims={"b": {"Pods": [go_pod("batch-1")], "NumPDBViolations": 1}},
        NodeNameToMetaVictims=None,
    )
    reply = post(server.app(), "/preempt", t.encode_preemption_args(args))
    assert (reply.status, reply.body.decode()) == (501, PREEMPT_NEEDS_CACHE)


def test_healthz_and_metrics(server: ExtenderServer) -> None:
    replies = exchange(
        server.app(),
        ("GET", "/healthz", None),
        ("POST", "/filter", filter_args(POD, [go_node("a")])),
        ("POST", "/filter", b"nope"),
        ("POST", "/prioritize", filter_args(POD, [go_node("a")])),
        ("GET", "/metrics", None),
    )
    assert (replies[0].status, replies[0].body) == (200, b"ok")
    metrics = replies[-1].body.decode()
    assert replies[-1].content_type == "text/plain"
    for line in (
        "# TYPE kubesched_extender_requests_total counter",
        'kubesched_extender_requests_total{verb="filter",code="200"}',
        'kubesched_extender_requests_total{verb="filter",code="400"}',
        'kubesched_extender_requests_total{verb="prioritize",code="200"}',
        "# TYPE kubesched_extender_request_duration_seconds histogram",
        'kubesched_extender_request_duration_seconds_bucket{verb="filter",le="+Inf"}',
        'kubesched_extender_request_duration_seconds_count{verb="prioritize"}',
    ):
        assert line in metrics
    assert server.metrics.requests("filter", 400) >= 1


def test_prefix_puts_the_verbs_under_the_url_prefix_path() -> None:
    server = ExtenderServer(labels_server().backend, prefix="/scheduler/")
    under, bare = exchange(
        server.app(),
        ("POST", "/scheduler/filter", filter_args(POD, [go_node("a")])),
        ("POST", "/filter", filter_args(POD, [go_node("a")])),
    )
    assert (under.status, bare.status) == (200, 404)


def test_real_port_on_loopback_serves_a_large_request() -> None:
    # 300 full nodes make a body over aiohttp's default 1 MiB limit.
    nodes = [go_node(f"n{i:03}", labels={"pad": "x" * 3000}) for i in range(300)]
    body = filter_args(POD, nodes)
    assert len(body) > 1024 * 1024

    async def run() -> tuple[int, Any]:
        runner, port = await labels_server().start("127.0.0.1", 0)
        try:
            url = f"http://127.0.0.1:{port}/filter"
            async with aiohttp.ClientSession() as session, session.post(url, data=body) as response:
                return response.status, await response.json()
        finally:
            await runner.cleanup()

    status, answer = asyncio.run(run())
    assert status == 200
    assert len(answer["Nodes"]["items"]) == 300


@pytest.mark.parametrize(
    ("victim", "field"),
    [
        pytest.param(dict(go_pod("batch-1"), metadata=5), ".Pods[0].metadata", id="metadata"),
        pytest.param(
            dict(go_pod("batch-1"), metadata={"uid": ["x"]}), ".Pods[0].metadata.uid", id="uid"
        ),
    ],
)
def test_preempt_victim_of_the_wrong_type_is_a_400(
    server: ExtenderServer, victim: dict[str, Any], field: str
) -> None:
    body = {"Pod": POD, "NodeNameToVictims": {"b": {"Pods": [victim]}}}
    reply = post(server.app(), "/preempt", json.dumps(body).encode())
    assert reply.status == 400
    assert f"ExtenderPreemptionArgs.NodeNameToVictims[b]{field}" in reply.body.decode()


@pytest.mark.parametrize("verb", ["filter", "prioritize", "preempt"])
def test_json_nested_5000_deep_is_a_400_for_every_verb(server: ExtenderServer, verb: str) -> None:
    deep = b'{"Pod":{"metadata":{"annotations":' + b"[" * 5000 + b"]" * 5000 + b"}}}"
    reply = post(server.app(), f"/{verb}", deep)
    assert reply.status == 400
    assert "exceeded max depth" in reply.body.decode()


@pytest.mark.parametrize("verb", ["filter", "prioritize"])
@pytest.mark.parametrize(
    ("pod", "node", "words"),
    [
        pytest.param(
            dict(POD, status={"qosClass": ["Guaranteed"]}),
            go_node("a"),
            "ExtenderArgs.Pod.status.qosClass: expected a string",
            id="qos-class-a-list",
        ),
        pytest.param(
            POD,
            go_node("a", memory="-1"),
            "ExtenderArgs.Nodes.items[0].status.allocatable.memory: Invalid value: must be "
            "greater than or equal to 0",
            id="negative-memory",
        ),
    ],
)
def test_wrong_pod_and_node_values_are_a_400_naming_the_field(
    server: ExtenderServer, verb: str, pod: dict[str, Any], node: dict[str, Any], words: str
) -> None:
    reply = post(server.app(), f"/{verb}", filter_args(pod, [node]))
    assert reply.status == 400
    assert words in reply.body.decode()


def test_a_raw_lone_surrogate_in_a_node_is_not_a_fault() -> None:
    # Found by tests/fuzz: a surrogate's UTF-8 bytes (ED A0 80) written raw in a node's
    # field failed the filter with a UnicodeEncodeError (a 500); Go reads U+FFFD.
    node = go_node("n1")
    node["metadata"]["annotations"]["note"] = "SURROGATE"
    body = filter_args(go_pod("p"), [node]).replace(b"SURROGATE", b"a\xed\xa0\x80b")
    reply = post(labels_server().app(), "/filter", body)
    assert reply.status == 200, reply.body
    (passed,) = reply.json()["Nodes"]["items"]
    assert passed["metadata"]["annotations"]["note"] == "a\ufffdb"


def test_infinity_in_a_body_is_a_bad_request_not_a_fault() -> None:
    # Found by tests/fuzz: "annotations": Infinity got past the parser and failed the
    # filter's answer (a 500).
    node = go_node("n1")
    node["metadata"]["annotations"] = "INF"
    body = filter_args(go_pod("p"), [node]).replace(b'"INF"', b"Infinity")
    reply = post(labels_server().app(), "/filter", body)
    assert reply.status == 400
    assert "invalid character 'I' looking for beginning of value" in reply.json()["Error"]
