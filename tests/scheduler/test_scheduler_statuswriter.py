"""Pod status patches coalesced per pod (``scheduler/statuswriter.py``), against the
real embedded API server: however often a pod's status is patched, at most one patch
waits for it, merged, and the last word wins."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import PODS
from kubesched.scheduler.statuswriter import PodStatusWriter, merge_status_patches


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("sw") / "kubeconfig")
    yield handle
    handle.stop()


def condition(reason: str, message: str, transition: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
    }
    if transition:
        found["lastTransitionTime"] = transition
    return found


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            {"conditions": [condition("Unschedulable", "a", "T1")]},
            {"conditions": [condition("SchedulerError", "b")]},
            {"conditions": [condition("SchedulerError", "b", "T1")]},
            id="newer-condition-wins-and-keeps-the-older-transition-time",
        ),
        pytest.param(
            {"conditions": [condition("Unschedulable", "a", "T1")]},
            {"conditions": [condition("Unschedulable", "b", "T2")]},
            {"conditions": [condition("Unschedulable", "b", "T2")]},
            id="newer-transition-time-wins",
        ),
        pytest.param(
            {"conditions": [condition("Unschedulable", "a")], "nominatedNodeName": "n1"},
            {"conditions": [condition("Unschedulable", "b")]},
            {"conditions": [condition("Unschedulable", "b")], "nominatedNodeName": "n1"},
            id="fields-the-newer-leaves-out-are-kept",
        ),
        pytest.param(
            {"nominatedNodeName": "n1"},
            {"nominatedNodeName": None},
            {"nominatedNodeName": None},
            id="a-cleared-nomination-wins",
        ),
        pytest.param(
            {"conditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"conditions": [condition("Unschedulable", "b")]},
            {
                "conditions": [
                    {"type": "DisruptionTarget", "status": "True"},
                    condition("Unschedulable", "b"),
                ]
            },
            id="conditions-of-other-types-are-kept",
        ),
    ],
)
def test_merging_two_status_patches(
    old: dict[str, Any], new: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert merge_status_patches(old, new) == expected


def test_repeated_patches_of_a_pod_coalesce_and_the_last_one_wins(
    apiserver: ApiServerHandle,
) -> None:
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            for name in ("busy", "other"):
                await client.create(PODS.raw, pod(name))
            writer = PodStatusWriter(client, concurrency=1)
            # A hundred attempts of one pod before the writer runs: one patch waits.
            for i in range(100):
                writer.patch(
                    "default", "busy", {"conditions": [condition("Unschedulable", f"{i}")]}
                )
            writer.patch("default", "other", {"conditions": [condition("Unschedulable", "o")]})
            assert len(writer) == 2 and writer.merged == 99
            await until(lambda: len(writer) == 0 and not writer._in_flight)
            assert client.requests["patch", "pods/status", "200"] == 2

            # A patch while the pod's is in flight waits for it, then goes: the final
            # status is the newest, whatever the timing.
            writer.patch("default", "busy", {"conditions": [condition("Unschedulable", "x")]})
            await asyncio.sleep(0)  # the worker starts and sends
            writer.patch("default", "busy", {"conditions": [condition("Unschedulable", "y")]})
            writer.patch("default", "busy", {"conditions": [condition("Unschedulable", "z")]})
            await writer.drain(asyncio.get_running_loop().time() + 5)
            assert client.requests["patch", "pods/status", "200"] == 4  # x, then y+z merged
            got = await client.get(PODS.raw, "busy", "default")
            [scheduled] = [c for c in got["status"]["conditions"] if c["type"] == "PodScheduled"]
            assert scheduled["message"] == "z"
            # A pod that is gone costs its one 404 and no error.
            writer.patch("default", "gone", {"conditions": [condition("Unschedulable", "g")]})
            await writer.drain(asyncio.get_running_loop().time() + 5)
            assert client.requests["patch", "pods/status", "404"] == 1 and writer.failed == 0

    asyncio.run(asyncio.wait_for(main(), 20.0))


async def until(check: Any, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)
