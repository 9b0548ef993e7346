"""The scheduling algorithm with extenders over HTTP: the per-node path and the
columnar (node table) path give the same answers, with upstream's arithmetic."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from kubesched.config import default_config, loads_config
from kubesched.extender.client import RawStore
from kubesched.extender.client_schedule import ExtenderSet
from kubesched.extender.sdk import Extender
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm, SchedulingError
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import make_node, make_pod

REASON = "odd nodes are not allowed"
NODES = [
    make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").label("i", str(i))
    for i in range(8)
]


def extender() -> Extender:
    ext = Extender()

    @ext.filter
    def even(pod: Pod, node: Node) -> bool | str:
        return int(node.labels["i"]) % 2 == 0 or REASON

    @ext.prioritize
    def prefer_n4(pod: Pod, node: Node) -> int:
        return 10 if node.name == "n4" else 3

    return ext


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def attempt(
    url: str, pod_raw: dict, *, columnar: bool, weight: int = 1, busy: str = "n4"
) -> tuple[str, int] | str:
    """Schedule ``pod_raw``: (host, feasible nodes), or the error's message."""
    config = loads_config(
        f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {url}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: {weight}
""",
        "c.yaml",
    )
    raw = RawStore()
    for wrapper in NODES:
        raw.add_node(wrapper.dict())
    raw.add_pod(pod_raw)
    pod = Pod.from_dict(pod_raw)
    # A pod on ``busy`` makes the plugins prefer the other even nodes.
    load = make_pod("load").req(cpu="3", memory="6Gi").node(busy).obj()
    snapshot = Snapshot.from_objects([w.obj() for w in NODES], [load], columnar=columnar)
    fwk = Framework(default_config().profiles[0], in_tree_registry(), snapshot=snapshot)
    async with ExtenderSet.from_config(config.extenders, raw) as extenders:
        fwk.extenders = extenders
        algorithm = SchedulingAlgorithm(
            fwk, percentage_of_nodes_to_score=100, rng=random.Random(0), columnar=columnar
        )
        try:
            result = await algorithm.schedule(CycleState(), pod)
        except FitError as err:
            assert EXTENDER_NAME in err.diagnosis.unschedulable_plugins
            return str(err)
        except SchedulingError as err:
            return f"error: {err.status.message}"
    assert EXTENDER_NAME in result.diagnosis.unschedulable_plugins
    assert result.diagnosis.node_to_status.get("n1").message == REASON
    return result.suggested_host, result.feasible_nodes


def run_both(**kwargs: object) -> list[tuple[str, int] | str]:
    async def main() -> list[tuple[str, int] | str]:
        async with serving(extender().app()) as url:
            return [await attempt(url, columnar=c, **kwargs) for c in (False, True)]  # type: ignore[arg-type]

    return asyncio.run(asyncio.wait_for(main(), 20.0))


def test_the_weighted_extender_score_decides_in_both_paths():
    pod = make_pod("p").req(cpu="500m", memory="1Gi").dict()
    # Weight 1: n4 gains (10 - 3) × 1 × 10 = 70 over the other even nodes, less than what
    # LeastAllocated and BalancedAllocation take from it for its load: not chosen.
    light = run_both(pod_raw=pod, weight=1)
    assert light[0] == light[1]
    assert light[0][0] in ("n0", "n2", "n6") and light[0][1] == 4
    # Weight 5: 350 more, which outweighs them.
    heavy = run_both(pod_raw=pod, weight=5)
    assert heavy == [("n4", 4), ("n4", 4)]


def test_a_pod_the_extender_leaves_no_node_for_gets_the_same_fit_error_in_both_paths():
    pod = make_pod("p").req(cpu="500m").dict()
    pod["spec"]["nodeSelector"] = {"i": "3"}
    messages = run_both(pod_raw=pod)
    assert messages[0] == messages[1]
    assert messages[0].startswith(
        f"0/8 nodes are available: 1 {REASON}, 7 node(s) didn't match Pod's node affinity/selector."
    )


@pytest.mark.parametrize("columnar", [False, True])
def test_an_extender_that_names_a_node_it_was_not_sent_fails_the_attempt(columnar):
    async def lying_filter(request: web.Request) -> web.Response:
        return web.json_response(
            {"NodeNames": None, "Nodes": {"items": [{"metadata": {"name": "elsewhere"}}]}}
        )

    async def no_scores(request: web.Request) -> web.Response:
        return web.json_response([])

    app = web.Application()
    app.router.add_post("/filter", lying_filter)
    app.router.add_post("/prioritize", no_scores)

    async def main() -> tuple[str, tuple[str, int] | str]:
        async with serving(app) as url:
            return url, await attempt(url, make_pod("p").dict(), columnar=columnar)

    url, message = asyncio.run(main())
    assert message == (
        f"error: extender '{url}' claims a filtered node 'elsewhere' "
        "which is not found in the input node list"
    )
