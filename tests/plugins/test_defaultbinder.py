"""DefaultBinder: binds through the handle's client; a failure is an Error status."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindPlugin, Status
from kubesched.objects.pod import Pod
from kubesched.plugins import defaultbinder
from kubesched.testing.wrappers import make_pod


@dataclass
class FakeClient:
    fail_with: Exception | None = None
    bound: list[tuple[str, str]] = field(default_factory=list)

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.bound.append((pod.key, node_name))


@dataclass
class FakeHandle:
    client: FakeClient


@pytest.mark.parametrize(
    ("fail_with", "want_status", "want_bound"),
    [
        pytest.param(None, None, [("default/foo", "foohost")], id="binds the pod to the node"),
        pytest.param(
            RuntimeError("binding rejected"),
            Status.error("binding rejected"),
            [],
            id="a client error becomes an Error status",
        ),
        pytest.param(
            KeyError(),
            Status.error("KeyError"),
            [],
            id="an error without a message is named by its type",
        ),
    ],
)
def test_bind(
    fail_with: Exception | None, want_status: Status | None, want_bound: list[tuple[str, str]]
) -> None:
    client = FakeClient(fail_with)
    plugin = defaultbinder.new(None, FakeHandle(client))  # type: ignore[arg-type]
    assert plugin.bind(CycleState(), make_pod("foo").obj(), "foohost") == want_status
    assert client.bound == want_bound


def test_factory_builds_a_bind_plugin() -> None:
    plugin = defaultbinder.new({}, FakeHandle(FakeClient()))  # type: ignore[arg-type]
    assert plugin.name == "DefaultBinder"
    assert isinstance(plugin, BindPlugin)
