"""The SDK: decorated functions answering the verbs through the same server."""

from __future__ import annotations

import asyncio

import pytest
from extender_helpers import exchange, filter_args, go_node, go_pod, names_args, post

from kubesched.extender import types as t
from kubesched.extender.backend import NO_NODE_CACHE
from kubesched.extender.sdk import Extender, Unresolvable
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

POD = go_pod("web", labels={"tier": "gold"})


def labelled(name: str, **labels: str) -> dict[str, object]:
    return go_node(name, labels=labels)


def verdict_extender() -> Extender:
    ext = Extender()

    @ext.filter
    def by_label(pod: Pod, node: Node) -> bool | str:
        verdict = node.labels.get("verdict", "pass")
        if verdict == "pass":
            return True
        if verdict == "false":
            return False
        if verdict == "never":
            return Unresolvable("node is retired")
        return verdict

    @ext.filter
    def same_tier(pod: Pod, node: Node) -> bool | str:
        return node.labels.get("tier", "gold") == pod.labels.get("tier") or "tier mismatch"

    return ext


@pytest.mark.parametrize(
    ("labels", "where", "reason"),
    [
        pytest.param({}, "passed", None, id="passes-every-filter"),
        pytest.param(
            {"verdict": "false"},
            "FailedNodes",
            "node(s) rejected by by_label",
            id="false-gets-a-default-reason",
        ),
        pytest.param(
            {"verdict": "disk full"}, "FailedNodes", "disk full", id="string-is-the-reason"
        ),
        pytest.param(
            {"verdict": "never"}, "FailedAndUnresolvableNodes", "node is retired", id="unresolvable"
        ),
        pytest.param(
            {"tier": "bronze"}, "FailedNodes", "tier mismatch", id="second-filter-rejects"
        ),
        pytest.param(
            {"verdict": "false", "tier": "bronze"},
            "FailedNodes",
            "node(s) rejected by by_label",
            id="first-rejection-wins",
        ),
    ],
)
def test_filter_verdicts(labels: dict[str, str], where: str, reason: str | None) -> None:
    node = labelled("n", **labels)
    answer = post(verdict_extender().app(), "/filter", filter_args(POD, [node])).json()
    if where == "passed":
        assert answer["Nodes"]["items"] == [node]
        assert answer["FailedNodes"] == answer["FailedAndUnresolvableNodes"] == {}
    else:
        assert answer["Nodes"]["items"] == []
        assert answer[where] == {"n": reason}


def test_filter_keeps_request_order_and_objects() -> None:
    nodes = [labelled("c"), labelled("a", verdict="false"), labelled("b")]
    answer = post(verdict_extender().app(), "/filter", filter_args(POD, nodes)).json()
    assert answer["Nodes"]["items"] == [nodes[0], nodes[2]]


def test_prioritize_combines_functions_by_weight() -> None:
    ext = Extender()

    @ext.prioritize
    def ssd(pod: Pod, node: Node) -> int:
        return 10 if node.labels.get("disk") == "ssd" else 0

    @ext.prioritize(weight=3)
    def big(pod: Pod, node: Node) -> int:
        return 10 if node.labels.get("size") == "big" else 2

    nodes = [labelled("a", disk="ssd"), labelled("b", size="big"), labelled("c")]
    reply = post(ext.app(), "/prioritize", filter_args(POD, nodes))
    # (10*1 + 2*3) // 4 = 4; (0 + 30) // 4 = 7; (0 + 6) // 4 = 1
    assert reply.body == b'[{"Host":"a","Score":4},{"Host":"b","Score":7},{"Host":"c","Score":1}]'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            11,
            "prioritize failed: ValueError: bad returned 11 for node a; an extender score is within 0..10",
            id="above-range",
        ),
        pytest.param(
            -1,
            "prioritize failed: ValueError: bad returned -1 for node a; an extender score is within 0..10",
            id="below-range",
        ),
        pytest.param(
            True, "prioritize failed: TypeError: bad returned True, not an int", id="bool"
        ),
    ],
)
def test_prioritize_out_of_range_is_a_500(value: object, message: str) -> None:
    ext = Extender()

    @ext.prioritize
    def bad(pod: Pod, node: Node) -> int:
        return value  # type: ignore[return-value]

    reply = post(ext.app(), "/prioritize", filter_args(POD, [labelled("a")]))
    assert (reply.status, reply.body.decode()) == (500, message)


def test_prioritize_weight_must_be_positive() -> None:
    with pytest.raises(ValueError, match="weight: Invalid value: 0: must be at least 1"):
        Extender().prioritize(weight=0)


BINDING = t.ExtenderBindingArgs(PodName="web", PodNamespace="default", PodUID="u1", Node="a")


def test_bind_sync_and_async() -> None:
    seen: list[t.ExtenderBindingArgs] = []
    ext = Extender()

    @ext.bind
    async def bind(args: t.ExtenderBindingArgs) -> str | None:
        await asyncio.sleep(0)
        seen.append(args)
        return None if args["Node"] == "a" else f"node {args['Node']} is full"

    ok, refused = exchange(
        ext.app(),
        ("POST", "/bind", t.encode_binding_args(BINDING)),
        ("POST", "/bind", b'{"podname":"web","podnamespace":"default","poduid":"u1","node":"b"}'),
    )
    assert (ok.status, ok.body) == (200, b'{"Error":""}')
    assert (refused.status, refused.body) == (200, b'{"Error":"node b is full"}')
    assert seen[1] == {"PodName": "web", "PodNamespace": "default", "PodUID": "u1", "Node": "b"}


def test_bind_exception_is_a_500_with_the_error_field() -> None:
    ext = Extender()

    @ext.bind
    def bind(args: t.ExtenderBindingArgs) -> str | None:
        raise ConnectionError("apiserver unreachable")

    reply = post(ext.app(), "/bind", t.encode_binding_args(BINDING))
    assert reply.status == 500
    assert reply.json() == {"Error": "bind failed: ConnectionError: apiserver unreachable"}


def test_one_bind_function_only() -> None:
    ext = Extender()
    ext.bind(lambda args: None)
    with pytest.raises(ValueError, match="one bind function"):
        ext.bind(lambda args: None)


def test_verbs_without_functions_are_not_served() -> None:
    ext = Extender()
    ext.filter(lambda pod, node: True)
    prio, bind, preempt = exchange(
        ext.app(),
        ("POST", "/prioritize", filter_args(POD, [labelled("a")])),
        ("POST", "/bind", t.encode_binding_args(BINDING)),
        ("POST", "/preempt", b"{}"),
    )
    assert (prio.status, bind.status, preempt.status) == (404, 404, 404)


def test_node_names_only_request_gets_the_no_cache_error() -> None:
    reply = post(verdict_extender().app(), "/filter", names_args(POD, ["a"]))
    assert reply.status == 200
    assert reply.json()["Error"] == NO_NODE_CACHE


def test_filter_returning_something_else_is_a_fault() -> None:
    ext = Extender()
    ext.filter(lambda pod, node: 3)  # type: ignore[arg-type,return-value]
    reply = post(ext.app(), "/filter", filter_args(POD, [labelled("a")]))
    assert reply.status == 500
    assert reply.json()["Error"] == (
        "filter failed: TypeError: <lambda> returned 3, not True, False or a reason"
    )
