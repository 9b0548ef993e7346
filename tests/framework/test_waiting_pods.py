"""Pods held at Permit: the waiting pods map, its decisions and timeouts, and the
framework's Permit / WaitOnPermit rules (upstream waiting_pods_map.go, framework.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code, Status
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.types import QueuedPodInfo
from kubesched.framework.waiting_pods import (
    MAX_PERMIT_WAIT,
    VirtualTimers,
    WaitingPodsMap,
    waiting_pod_key,
)
from kubesched.testing import make_pod


class Sort:
    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class Binder:
    name = "Binder"

    def bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return None


class Permit:
    """Answers what ``answers`` holds for it: a Status (or None) and a timeout."""

    def __init__(self, name: str, answers: dict[str, tuple[Status | None, float]]) -> None:
        self.name = name
        self.answers = answers

    def permit(self, state: CycleState, pod: Any, node_name: str) -> tuple[Status | None, float]:
        return self.answers[self.name]


def framework(answers: dict[str, tuple[Status | None, float]], timers: VirtualTimers) -> Framework:
    registry = Registry(
        {
            "Sort": lambda a, h: Sort(),
            "Binder": lambda a, h: Binder(),
            "P1": lambda a, h: Permit("P1", answers),
            "P2": lambda a, h: Permit("P2", answers),
        }
    )
    refs = tuple(PluginRef(n, None) for n in ("Sort", "Binder", "P1", "P2"))
    plugins = Plugins(multi_point=PluginSet(refs, ()))
    prof = Profile("test", None, plugins, (), "profiles[0]")
    return Framework(prof, registry, waiting_pods=WaitingPodsMap(timers))


WAIT = Status(Code.WAIT)
POD = make_pod("p").uid("uid-p").obj()


def test_wait_holds_the_pod_until_every_waiting_plugin_allows_it() -> None:
    timers = VirtualTimers()
    fwk = framework({"P1": (WAIT, 10.0), "P2": (WAIT, 20.0)}, timers)
    status = fwk.run_permit_plugins(CycleState(), POD, "n")
    assert status == Status(
        Code.WAIT, ('one or more plugins asked to wait and no plugin rejected pod "p"',)
    )
    waiting = fwk.get_waiting_pod("uid-p")
    assert waiting is not None and waiting is fwk.waiting_pod_for(POD)
    assert sorted(waiting.get_pending_plugins()) == ["P1", "P2"]
    waiting.allow("P1")
    assert not waiting.decided and waiting.get_pending_plugins() == ["P2"]
    waiting.allow("P2")
    assert waiting.decision == Status(Code.SUCCESS)
    assert fwk.wait_on_permit(waiting) is None
    assert fwk.get_waiting_pod("uid-p") is None
    # The allowed pod's timers were stopped: advancing the clock rejects nothing.
    assert not timers.advance()


def test_the_first_timeout_rejects_with_upstreams_message() -> None:
    timers = VirtualTimers()
    fwk = framework({"P1": (WAIT, 90.0), "P2": (WAIT, 0.5)}, timers)
    fwk.run_permit_plugins(CycleState(), POD, "n")
    waiting = fwk.get_waiting_pod("uid-p")
    assert waiting is not None
    seen: list[Status] = []
    waiting.when_decided(seen.append)
    assert timers.advance() and timers.now == 0.5
    expected = Status(
        Code.UNSCHEDULABLE, ("rejected due to timeout after waiting 500ms at plugin P2",), "P2"
    )
    assert seen == [expected]
    # P1's timer was stopped by the rejection; a late Allow changes nothing.
    assert not timers.advance()
    waiting.allow("P1")
    waiting.allow("P2")
    assert fwk.wait_on_permit(waiting) == expected


def test_waits_are_capped_at_fifteen_minutes() -> None:
    timers = VirtualTimers()
    fwk = framework({"P1": (WAIT, 3600.0), "P2": (None, 0.0)}, timers)
    fwk.run_permit_plugins(CycleState(), POD, "n")
    timers.advance()
    assert timers.now == MAX_PERMIT_WAIT
    waiting = fwk.get_waiting_pod("uid-p")
    assert waiting is not None and waiting.decision is not None
    assert waiting.decision.message == "rejected due to timeout after waiting 15m0s at plugin P1"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            (Status.unschedulable("no"), 0.0),
            Status(Code.UNSCHEDULABLE, ("no",), "P2"),
            id="rejection-names-the-plugin",
        ),
        pytest.param(
            (Status.error("boom"), 0.0),
            Status(Code.ERROR, ('running Permit plugin "P2": boom',), "P2"),
            id="error-is-wrapped",
        ),
    ],
)
def test_a_rejection_after_a_wait_wins_and_holds_nothing(
    answer: tuple[Status, float], expected: Status
) -> None:
    fwk = framework({"P1": (WAIT, 10.0), "P2": answer}, VirtualTimers())
    assert fwk.run_permit_plugins(CycleState(), POD, "n") == expected
    assert fwk.get_waiting_pod("uid-p") is None


def test_handle_rejects_and_iterates_waiting_pods() -> None:
    fwk = framework({"P1": (WAIT, 10.0), "P2": (None, 0.0)}, VirtualTimers())
    other = make_pod("q").obj()
    fwk.run_permit_plugins(CycleState(), POD, "n")
    fwk.run_permit_plugins(CycleState(), other, "n")
    seen: list[str] = []
    fwk.iterate_over_waiting_pods(lambda w: seen.append(w.pod.name))
    assert sorted(seen) == ["p", "q"]
    assert fwk.reject_waiting_pod(waiting_pod_key(other))
    assert not fwk.reject_waiting_pod("nobody")
    waiting = fwk.get_waiting_pod(waiting_pod_key(other))
    assert waiting is not None
    assert fwk.wait_on_permit(waiting) == Status(Code.UNSCHEDULABLE, ("removed",), "")
