"""examples/qos_sort.py: priority, then QoS class, then queue time."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import qos_sort

from kubesched.framework.args import ArgsError
from kubesched.framework.types import QueuedPodInfo
from kubesched.testing import make_pod

RESOURCES = {"cpu": "100m", "memory": "128Mi"}


def queued(name: str, qos: str, priority: int = 0, timestamp: float = 0.0) -> QueuedPodInfo:
    """A queued pod of the given QoS class: "G" Guaranteed, "Bu" Burstable, "BE" BestEffort."""
    pod = make_pod(name).priority(priority)
    if qos == "G":
        pod = pod.container(requests=RESOURCES, limits=RESOURCES)
    elif qos == "Bu":
        pod = pod.container(requests=RESOURCES)
    else:
        pod = pod.container()
    return QueuedPodInfo(pod.obj(), timestamp=timestamp)


def test_builder_makes_the_intended_qos_classes() -> None:
    assert queued("g", "G").pod.qos_class == "Guaranteed"
    assert queued("b", "Bu").pod.qos_class == "Burstable"
    assert queued("e", "BE").pod.qos_class == "BestEffort"


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(
            queued("a", "BE", priority=10),
            queued("b", "G", priority=0),
            True,
            id="higher-priority-first-whatever-its-qos",
        ),
        pytest.param(
            queued("a", "G", priority=0),
            queued("b", "BE", priority=10),
            False,
            id="lower-priority-later-whatever-its-qos",
        ),
        pytest.param(
            queued("a", "G", timestamp=2),
            queued("b", "Bu", timestamp=1),
            True,
            id="guaranteed-before-burstable-even-if-newer",
        ),
        pytest.param(
            queued("a", "Bu", timestamp=2),
            queued("b", "BE", timestamp=1),
            True,
            id="burstable-before-besteffort-even-if-newer",
        ),
        pytest.param(
            queued("a", "G", timestamp=2),
            queued("b", "BE", timestamp=1),
            True,
            id="guaranteed-before-besteffort",
        ),
        pytest.param(
            queued("a", "BE", timestamp=1),
            queued("b", "G", timestamp=2),
            False,
            id="besteffort-after-guaranteed-even-if-older",
        ),
        pytest.param(
            queued("a", "Bu", timestamp=1),
            queued("b", "G", timestamp=2),
            False,
            id="burstable-after-guaranteed",
        ),
        pytest.param(
            queued("a", "Bu", timestamp=1),
            queued("b", "Bu", timestamp=2),
            True,
            id="same-qos-older-first",
        ),
        pytest.param(
            queued("a", "G", timestamp=2),
            queued("b", "G", timestamp=1),
            False,
            id="same-qos-newer-later",
        ),
        pytest.param(
            queued("a", "BE", timestamp=1),
            queued("b", "BE", timestamp=1),
            False,
            id="equal-in-everything-is-not-less",
        ),
    ],
)
def test_less(a: QueuedPodInfo, b: QueuedPodInfo, expected: bool) -> None:
    assert qos_sort.new(None, None).less(a, b) is expected


def test_sorting_a_queue() -> None:
    plugin = qos_sort.new(None, None)
    pods = [
        queued("be-old", "BE", timestamp=0),
        queued("bu-old", "Bu", timestamp=1),
        queued("g-new", "G", timestamp=5),
        queued("urgent-be", "BE", priority=100, timestamp=9),
        queued("be-new", "BE", timestamp=3),
        queued("g-old", "G", timestamp=2),
    ]

    def cmp(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
        return -1 if plugin.less(x, y) else (1 if plugin.less(y, x) else 0)

    ordered = sorted(pods, key=functools.cmp_to_key(cmp))
    assert [p.pod.name for p in ordered] == [
        "urgent-be",
        "g-old",
        "g-new",
        "bu-old",
        "be-old",
        "be-new",
    ]


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(None, [], id="no-args"),
        pytest.param(
            {"order": "qos"}, ['order: Invalid value: "order": unknown field'], id="unknown-field"
        ),
    ],
)
def test_args(args: Any, errors: list[str]) -> None:
    if not errors:
        assert qos_sort.new(args, None).name == "QOSSort"
        return
    with pytest.raises(ArgsError) as info:
        qos_sort.new(args, None)
    assert [str(e) for e in info.value.errors] == errors


def test_the_example_profile_sorts_its_queue_with_qos_sort(framework_for: Any) -> None:
    fwk = framework_for("config-qos-sort.yaml", "default-scheduler")
    assert [p.name for p in fwk.plugins_at("queueSort")] == ["QOSSort"]
    guaranteed = queued("g", "G", timestamp=1)
    best_effort = queued("e", "BE", timestamp=0)
    assert fwk.queue_sort_less(guaranteed, best_effort)
    assert not fwk.queue_sort_less(best_effort, guaranteed)
