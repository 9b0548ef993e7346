"""Where the scheduler calls extenders: kube-scheduler's rules, over real HTTP.

The tables follow upstream's ``TestSchedulerWithExtenders`` (extender_test.go),
``TestFindNodesThatPassExtenders`` (schedule_one_test.go) and ``callExtenders``
(preemption.go). Each fake extender of upstream is one of our SDK extenders served on
127.0.0.1; an SDK function that raises makes our server answer 500, as upstream's
error extenders fail the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from extender_helpers import go_node
from test_extender_client import Stub, World, answer, make_pod, run, serving

from kubesched.config.types import Extender, ExtenderManagedResource
from kubesched.extender import types as t
from kubesched.extender.client import ExtenderCallError, HTTPExtender, Victims
from kubesched.extender.client_schedule import (
    build_extenders,
    call_extenders_for_preemption,
    extenders_binding,
    find_nodes_that_pass_extenders,
    ignored_extended_resources,
    prioritize_with_extenders,
)
from kubesched.extender.sdk import Extender as SDKExtender
from kubesched.extender.sdk import Unresolvable
from kubesched.framework.interface import Code, Status
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeToStatus
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

# --- upstream's fake extenders, as SDK functions --------------------------------------

Predicate = Callable[[Pod, Node], bool | str]
Prioritizer = Callable[[Pod, Node], int]


def true_predicate(pod: Pod, node: Node) -> bool | str:
    return True


def false_predicate(pod: Pod, node: Node) -> bool | str:
    return "pod is unschedulable on the node"


def error_predicate(pod: Pod, node: Node) -> bool | str:
    raise RuntimeError("some error")


def node_predicate(name: str) -> Predicate:
    def predicate(pod: Pod, node: Node) -> bool | str:
        return node.name == name or f"node {node.name!r} is not {name}"

    return predicate


def a_b_rest(pod: Pod, node: Node) -> bool | str:
    """Node a passes, b is unschedulable, the others unresolvable."""
    if node.name == "a":
        return True
    if node.name == "b":
        return f"FakeExtender: node {node.name!r} failed"
    return Unresolvable(f"FakeExtender: node {node.name!r} failed and unresolvable")


def only_a(pod: Pod, node: Node) -> bool | str:
    return node.name == "a" or Unresolvable(
        f"FakeExtender: node {node.name!r} failed and unresolvable"
    )


def node_prioritizer(name: str) -> Prioritizer:
    def prioritizer(pod: Pod, node: Node) -> int:
        return 10 if node.name == name else 1

    return prioritizer


def error_prioritizer(pod: Pod, node: Node) -> int:
    raise RuntimeError("some error")


@dataclass
class Fake:
    """One fake extender: its SDK functions and its configuration."""

    predicates: Sequence[Predicate] = ()
    prioritizer: Prioritizer | None = None
    weight: int = 1
    ignorable: bool = False
    uninterested: bool = False
    calls: list[str] = field(default_factory=list)

    def sdk(self) -> SDKExtender:
        ext = SDKExtender()
        for predicate in self.predicates:
            ext.filter(self._counted("filter", predicate))
        if self.prioritizer is not None:
            ext.prioritize(self._counted("prioritize", self.prioritizer))
        return ext

    def _counted(self, verb: str, fn: Callable[[Pod, Node], Any]) -> Callable[[Pod, Node], Any]:
        def wrapper(pod: Pod, node: Node) -> Any:
            self.calls.append(verb)
            return fn(pod, node)

        wrapper.__name__ = getattr(fn, "__name__", verb)
        return wrapper

    def config(self, url: str) -> Extender:
        managed = (ExtenderManagedResource("example.com/unused"),) if self.uninterested else ()
        return Extender(
            url_prefix=url,
            filter_verb="filter" if self.predicates else "",
            prioritize_verb="prioritize" if self.prioritizer else "",
            weight=self.weight,
            ignorable=self.ignorable,
            managed_resources=managed,
        )


@asynccontextmanager
async def running(fakes: Sequence[Fake], world: World) -> AsyncIterator[list[HTTPExtender]]:
    """Each fake served on its own port; yields the clients, in build_extenders order."""
    async with AsyncExitStack() as stack:
        configs = [f.config(await stack.enter_async_context(serving(f.sdk().app()))) for f in fakes]
        extenders = build_extenders(configs, world.raw)
        for ext in extenders:
            await stack.enter_async_context(ext)
        yield extenders


async def schedule(
    extenders: Sequence[HTTPExtender], world: World, plugin_totals: dict[str, int]
) -> str:
    """The extender steps of schedulePod for a pod every plugin finds feasible:
    filter through the extenders, stop at one node, else add extender scores and
    take the best (ties: the first). Raises LookupError when no node is left."""
    feasible = await find_nodes_that_pass_extenders(
        extenders, world.pod, world.nodes(), NodeToStatus()
    )
    if not feasible:
        raise LookupError("no feasible node")
    if len(feasible) == 1:
        return feasible[0].name
    totals = {n.name: plugin_totals.get(n.name, 0) for n in feasible}
    await prioritize_with_extenders(extenders, world.pod, feasible, totals)
    return max(totals, key=lambda n: totals[n])


NODE2_PLUGIN_WEIGHT_20 = {"node2": 100 * 20}
NODE2_PLUGIN = {"node2": 100}


@pytest.mark.parametrize(
    ("fakes", "plugin_totals", "host"),
    [
        pytest.param([Fake([true_predicate]), Fake([error_predicate])], {}, ExtenderCallError, id="test-1-error-extender-fails-the-attempt"),
        pytest.param([Fake([true_predicate]), Fake([false_predicate])], {}, LookupError, id="test-2-false-extender-leaves-no-node"),
        pytest.param([Fake([true_predicate]), Fake([node_predicate("node1")])], {}, "node1", id="test-3-node1-only"),
        pytest.param([Fake([node_predicate("node2")]), Fake([node_predicate("node1")])], {}, LookupError, id="test-4-disjoint-extenders"),
        pytest.param([Fake([true_predicate], error_prioritizer, weight=1)], {}, "node1", id="test-5-prioritize-error-ignored"),
        pytest.param(
            [Fake([true_predicate], node_prioritizer("node1"), weight=1), Fake([true_predicate], node_prioritizer("node2"), weight=5)],
            {},
            "node2",
            id="test-6-heavier-extender-wins",
        ),
        pytest.param([Fake([true_predicate], node_prioritizer("node1"), weight=1)], NODE2_PLUGIN_WEIGHT_20, "node2", id="test-7-plugin-score-outweighs-extender"),
        pytest.param(
            [Fake([error_predicate], error_prioritizer, weight=1, uninterested=True)],
            NODE2_PLUGIN,
            "node2",
            id="test-8-uninterested-extender-not-called",
        ),
        pytest.param([Fake([error_predicate], ignorable=True), Fake([node_predicate("node1")])], {}, "node1", id="test-9-ignorable-error-skipped"),
        pytest.param(
            [Fake([true_predicate], error_prioritizer, weight=1), Fake([true_predicate], node_prioritizer("node1"), weight=1)],
            {},
            "node1",
            id="failing-prioritizer-does-not-hide-others",
        ),
    ],
)  # fmt: skip
def test_scheduler_with_extenders(
    fakes: list[Fake], plugin_totals: dict[str, int], host: str | type[Exception]
) -> None:
    """``host`` is the node chosen, or the error: ExtenderCallError fails the attempt,
    LookupError stands for the FitError of no node left."""
    world = World(("node1", "node2"))

    async def main() -> str:
        async with running(fakes, world) as extenders:
            return await schedule(extenders, world, plugin_totals)

    if not isinstance(host, str):
        with pytest.raises(host):
            run(main())
    else:
        assert run(main()) == host
    for fake in fakes:
        if fake.uninterested:
            assert fake.calls == []


def u(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (reason,))


def x(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


@pytest.mark.parametrize(
    ("fakes", "nodes", "before", "kept", "statuses"),
    [
        pytest.param([Fake([error_predicate])], "a", {}, None, {}, id="error"),
        pytest.param([Fake([true_predicate])], "a", {}, "a", {}, id="success"),
        pytest.param([Fake([a_b_rest])], "ab", {}, "a", {"b": u("FakeExtender: node 'b' failed")}, id="unschedulable"),
        pytest.param(
            [Fake([a_b_rest])],
            "abc",
            {},
            "a",
            {"b": u("FakeExtender: node 'b' failed"), "c": x("FakeExtender: node 'c' failed and unresolvable")},
            id="unschedulable-and-unresolvable",
        ),
        pytest.param(
            [Fake([a_b_rest])],
            "ab",
            {"c": u("FakeFilterPlugin: node 'c' failed")},
            "a",
            {"b": u("FakeExtender: node 'b' failed"), "c": u("FakeFilterPlugin: node 'c' failed")},
            id="extender-does-not-overwrite-the-previous-statuses",
        ),
        pytest.param(
            [Fake([a_b_rest]), Fake([only_a])],
            "abc",
            {},
            "a",
            {"b": u("FakeExtender: node 'b' failed"), "c": x("FakeExtender: node 'c' failed and unresolvable")},
            id="multiple-extenders",
        ),
        pytest.param([Fake([error_predicate], ignorable=True)], "ab", {}, "ab", {}, id="ignorable-error-keeps-the-nodes"),
    ],
)  # fmt: skip
def test_find_nodes_that_pass_extenders(
    fakes: list[Fake],
    nodes: str,
    before: dict[str, Status],
    kept: str | None,
    statuses: dict[str, Status],
) -> None:
    world = World(tuple(nodes))
    node_statuses = NodeToStatus(dict(before))

    async def main() -> str:
        async with running(fakes, world) as extenders:
            found = await find_nodes_that_pass_extenders(
                extenders, world.pod, world.nodes(), node_statuses
            )
            return "".join(n.name for n in found)

    if kept is None:
        with pytest.raises(ExtenderCallError, match="code 500"):
            run(main())
        return
    assert run(main()) == kept
    assert dict(node_statuses.items()) == statuses


def test_unresolvable_wins_over_failed_for_the_same_node() -> None:
    world = World(("a", "b"))
    stub = Stub(
        filter=lambda body: answer(
            {
                "Nodes": {"items": []},
                "FailedNodes": {"a": "f", "b": "f"},
                "FailedAndUnresolvableNodes": {"a": "x"},
            }
        )
    )
    statuses = NodeToStatus()

    async def main() -> None:
        async with serving(stub.app()) as url, world.extender(url, filter_verb="filter") as ext:
            assert (
                await find_nodes_that_pass_extenders([ext], world.pod, world.nodes(), statuses)
                == []
            )

    run(main())
    assert dict(statuses.items()) == {"a": x("x"), "b": u("f")}


async def _slow(body: Any) -> web.Response:
    await asyncio.sleep(0.5)
    return answer({})


@pytest.mark.parametrize(
    "ignorable",
    [pytest.param(True, id="ignorable-skipped"), pytest.param(False, id="required-fails")],
)
def test_extender_that_times_out(ignorable: bool) -> None:
    world = World()
    stub = Stub(filter=_slow, bind=_slow)

    async def main() -> None:
        async with serving(stub.app()) as url:
            config = {"http_timeout_seconds": 0.1, "ignorable": ignorable}
            async with world.extender(url, filter_verb="filter", bind_verb="bind", **config) as ext:
                if ignorable:
                    found = await find_nodes_that_pass_extenders(
                        [ext], world.pod, world.nodes(), NodeToStatus()
                    )
                    assert len(found) == 2
                    assert await extenders_binding([ext], world.pod, "node1") is False
                else:
                    with pytest.raises(ExtenderCallError, match="httpTimeout exceeded"):
                        await find_nodes_that_pass_extenders(
                            [ext], world.pod, world.nodes(), NodeToStatus()
                        )
                    with pytest.raises(ExtenderCallError, match="httpTimeout exceeded"):
                        await extenders_binding([ext], world.pod, "node1")

    run(main())


# --- prioritize -----------------------------------------------------------------------


def test_prioritize_scales_by_weight_and_ignores_unknown_hosts() -> None:
    world = World(("a", "b"))
    stub = Stub(
        p1=lambda body: answer(
            [{"Host": "a", "Score": 10}, {"Host": "b", "Score": 3}, {"Host": "zzz", "Score": 10}]
        ),
        p2=lambda body: answer([{"Host": "b", "Score": 2}]),
    )

    async def main() -> None:
        async with serving(stub.app()) as url:
            e1 = world.extender(url, prioritize_verb="p1", weight=2)
            e2 = world.extender(url + "/", prioritize_verb="p2", weight=5)
            totals = {"a": 7, "b": 0}
            async with e1, e2:
                per = await prioritize_with_extenders([e1, e2], world.pod, world.nodes(), totals)
        # score × weight × (MaxNodeScore / MaxExtenderPriority = 10)
        assert totals == {"a": 7 + 10 * 2 * 10, "b": 3 * 2 * 10 + 2 * 5 * 10}
        assert per == {url: {"a": 200, "b": 60}, url + "/": {"b": 100}}

    run(main())


# --- bind -----------------------------------------------------------------------------


def binder(error: str | None) -> SDKExtender:
    ext = SDKExtender()

    @ext.bind
    def bind(args: t.ExtenderBindingArgs) -> str | None:
        return error

    return ext


@pytest.mark.parametrize(
    ("binders", "bound", "error"),
    [
        pytest.param([], False, None, id="no-binder-leaves-it-to-bind-plugins"),
        pytest.param([(None, False, False)], True, None, id="binder-binds"),
        pytest.param([("refused", False, False)], None, "refused", id="failing-binder-fails"),
        pytest.param([("refused", True, False), (None, False, False)], True, None, id="failing-ignorable-binder-skipped"),
        pytest.param([(None, False, True)], False, None, id="uninterested-binder-not-asked"),
    ],
)  # fmt: skip
def test_extenders_binding(
    binders: list[tuple[str | None, bool, bool]], bound: bool | None, error: str | None
) -> None:
    world = World()

    async def main() -> bool:
        async with AsyncExitStack() as stack:
            extenders = []
            for bind_error, ignorable, uninterested in binders:
                url = await stack.enter_async_context(serving(binder(bind_error).app()))
                managed = (ExtenderManagedResource("example.com/x"),) if uninterested else ()
                config = Extender(
                    url_prefix=url, bind_verb="bind", ignorable=ignorable, managed_resources=managed
                )
                extenders.append(await stack.enter_async_context(HTTPExtender(config, world.raw)))
            return await extenders_binding(extenders, world.pod, "node1")

    if error is not None:
        with pytest.raises(ExtenderCallError, match=error):
            run(main())
    else:
        assert run(main()) is bound


# --- preemption -----------------------------------------------------------------------


def meta(*entries: tuple[str, list[str]]) -> dict[str, Any]:
    return {
        "NodeNameToMetaVictims": {
            n: {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": 0} for n, uids in entries
        }
    }


@pytest.mark.parametrize(
    ("answers", "ignorable", "result"),
    [
        pytest.param([meta(("node1", ["1"]))], False, {"node1": ["1"]}, id="extender-narrows-candidates"),
        pytest.param([meta(("node1", ["1"])), meta()], False, {}, id="second-extender-empties"),
        pytest.param([meta(("node1", []))], False, "expected at least one victim pod on node 'node1'", id="no-victims-is-an-error"),
        pytest.param([meta(("node1", []), ("node2", ["2"]))], True, {"node2": ["2"]}, id="no-victims-dropped-when-ignorable"),
        pytest.param([None], True, {"node1": ["1", "3"], "node2": ["2"]}, id="failing-ignorable-skipped"),
        pytest.param([None], False, "code 500", id="failing-required-fails"),
    ],
)  # fmt: skip
def test_call_extenders_for_preemption(
    answers: list[dict[str, Any] | None], ignorable: bool, result: dict[str, list[str]] | str
) -> None:
    world = World(())
    pods = {uid: world.add_pod(make_pod(f"p-{uid}", uid=uid)) for uid in ("1", "2", "3")}
    for name, uids in [("node1", ["1", "3"]), ("node2", ["2"])]:
        info = world.add_node(go_node(name))
        for uid in uids:
            info.add_pod(pods[uid])
    victims = {
        "node1": Victims([pods["1"], pods["3"]]),
        "node2": Victims([pods["2"]]),
    }

    def handler(value: dict[str, Any] | None) -> Callable[[Any], web.Response]:
        return lambda body: answer(value) if value is not None else web.Response(status=500)

    stub = Stub(**{f"e{i}_preempt": handler(a) for i, a in enumerate(answers)})

    async def main() -> dict[str, list[str]]:
        async with serving(stub.app()) as url:
            extenders = [
                world.extender(f"{url}/e{i}", preempt_verb="preempt", ignorable=ignorable)
                for i in range(len(answers))
            ]
            try:
                out = await call_extenders_for_preemption(
                    extenders, world.pod, victims, Snapshot(world.nodes())
                )
            finally:
                for ext in extenders:
                    await ext.close()
            return {n: [p.uid for p in v.pods] for n, v in out.items()}

    if isinstance(result, str):
        with pytest.raises(ExtenderCallError, match=result):
            run(main())
    else:
        assert run(main()) == result


# --- building -------------------------------------------------------------------------


def test_build_extenders_puts_ignorable_ones_last() -> None:
    world = World()
    configs = [
        Extender(url_prefix="http://a", ignorable=True),
        Extender(url_prefix="http://b"),
        Extender(url_prefix="http://c", ignorable=True),
        Extender(url_prefix="http://d"),
    ]
    names = [e.name for e in build_extenders(configs, world.raw)]
    assert names == ["http://b", "http://d", "http://a", "http://c"]


def test_ignored_extended_resources() -> None:
    configs = [
        Extender(
            url_prefix="http://a",
            managed_resources=(
                ExtenderManagedResource("example.com/foo", ignored_by_scheduler=True),
                ExtenderManagedResource("example.com/bar"),
            ),
        ),
        Extender(
            url_prefix="http://b",
            managed_resources=(ExtenderManagedResource("example.com/baz", True),),
        ),
    ]
    assert ignored_extended_resources(configs) == ("example.com/foo", "example.com/baz")
