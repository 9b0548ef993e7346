"""PrioritySort, after upstream's priority_sort_test.go."""

from __future__ import annotations

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.interface import QueueSortPlugin
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins import queuesort
from kubesched.testing.wrappers import make_pod

LOW, HIGH = 10, 100
T1, T2 = 1000.0, 1001.0


def queued(priority: int, timestamp: float = 0.0) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod("p").priority(priority).obj(), timestamp=timestamp)


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        pytest.param(queued(LOW), queued(HIGH), False, id="p1 priority lower than p2: p2 first"),
        pytest.param(queued(HIGH), queued(LOW), True, id="p1 priority higher than p2: p1 first"),
        pytest.param(
            queued(HIGH, T1), queued(HIGH, T2), True, id="equal priority, p1 queued earlier"
        ),
        pytest.param(
            queued(HIGH, T2), queued(HIGH, T1), False, id="equal priority, p2 queued earlier"
        ),
        pytest.param(
            queued(HIGH, T1), queued(HIGH, T1), False, id="equal priority and time: not less"
        ),
    ],
)
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, expected: bool) -> None:
    assert queuesort.PrioritySort().less(p1, p2) is expected


def test_factory_builds_a_queue_sort_plugin() -> None:
    plugin = queuesort.new(None, None)  # type: ignore[arg-type]
    assert plugin.name == "PrioritySort"
    assert isinstance(plugin, QueueSortPlugin)


def test_factory_rejects_arguments() -> None:
    with pytest.raises(ArgsError) as err:
        queuesort.new({"foo": 1}, None)  # type: ignore[arg-type]
    assert [str(e) for e in err.value.errors] == ['foo: Invalid value: "foo": unknown field']
