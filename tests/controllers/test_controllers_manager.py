"""The controller manager: --controllers selection, one shared informer per resource,
controllers whose resources the server does not serve are skipped, and a clean stop —
against the embedded API server started for real."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.controllers import ControllerContext, ControllerDescriptor, ControllerManager
from kubesched.controllers.manager import is_enabled
from kubesched.kube import load_kubeconfig
from kubesched.kube.resources import NAMESPACES, PODS, custom_resource

WIDGETS = custom_resource("example.com", "v1", "widgets", "Widget")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    with start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("mgr") / "kc") as handle:
        yield handle


class Recorder:
    """A controller that records what its informer saw and whether it ran and stopped."""

    def __init__(self, ctx: ControllerContext, resource: Any) -> None:
        self.informer = ctx.informers.informer(resource)
        self.client = ctx.client("recorder")
        self.seen: list[str] = []
        self.informer.add_handler(on_add=lambda o: self.seen.append(o["metadata"]["name"]))
        self.running = False
        self.stopped = False

    async def run(self) -> None:
        self.running = True
        try:
            await asyncio.Event().wait()
        finally:
            self.stopped = True


@pytest.mark.parametrize(
    ("name", "selection", "enabled"),
    [
        ("kubelet", ["*"], True),
        ("kubelet", ["*", "-kubelet"], False),
        ("kubelet", ["disruption-controller"], False),
        ("kubelet", ["kubelet"], True),
        ("kubelet", [], False),
    ],
    ids=["star-enables-all", "minus-disables", "unnamed-is-off", "named-is-on", "empty-is-none"],
)
def test_selection(name: str, selection: list[str], enabled: bool) -> None:
    assert is_enabled(name, selection) is enabled


def test_unknown_names_are_refused(server: ApiServerHandle) -> None:
    descriptors = [ControllerDescriptor("a", lambda ctx: None)]
    with pytest.raises(ValueError, match=r"unknown controller\(s\) b; known: a"):
        ControllerManager(load_kubeconfig([server.kubeconfig_path]), descriptors, None, ["*", "-b"])


def test_informers_are_shared_and_unserved_controllers_skipped(server: ApiServerHandle) -> None:
    made: dict[str, Recorder] = {}

    def init(name: str, resource: Any) -> Any:
        def start(ctx: ControllerContext) -> Recorder:
            made[name] = Recorder(ctx, resource)
            return made[name]

        return start

    descriptors = [
        ControllerDescriptor("one", init("one", NAMESPACES), (NAMESPACES,)),
        ControllerDescriptor("two", init("two", NAMESPACES), (NAMESPACES, PODS)),
        ControllerDescriptor("widgets", init("widgets", WIDGETS), (WIDGETS,)),
        ControllerDescriptor("off", init("off", PODS)),
    ]

    async def scenario() -> None:
        manager = ControllerManager(
            load_kubeconfig([server.kubeconfig_path]), descriptors, None, ["*", "-off"]
        )
        await manager.start()
        try:
            assert sorted(manager.controllers) == ["one", "two"]
            assert made["one"].informer is made["two"].informer
            assert made["one"].client is not made["two"].client
            assert made["one"].informer.lists == 1
            await asyncio.sleep(0)
            assert made["one"].running and made["two"].running
            # Handlers added at init saw the first list, before run().
            assert "kube-system" in made["one"].seen and made["one"].seen == made["two"].seen
        finally:
            await manager.stop()
        assert made["one"].stopped and made["two"].stopped
        assert "widgets" not in made and "off" not in made

    asyncio.run(scenario())


def test_a_failing_init_stops_what_was_started(server: ApiServerHandle, tmp_path: Path) -> None:
    def broken(ctx: ControllerContext) -> None:
        ctx.client("broken")
        raise RuntimeError("broken init")

    async def scenario() -> None:
        manager = ControllerManager(
            load_kubeconfig([server.kubeconfig_path]), [ControllerDescriptor("b", broken)]
        )
        with pytest.raises(RuntimeError, match="broken init"):
            await manager.start()
        assert manager.controllers == {}

    asyncio.run(scenario())
