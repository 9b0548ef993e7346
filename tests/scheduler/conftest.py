"""Shared helpers for the scheduler tests: a fake clock and real default profiles."""

from __future__ import annotations

import dataclasses
import sys
from functools import cache
from pathlib import Path

import pytest

from kubesched.config import default_config
from kubesched.framework.runtime import Framework
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.backend.queue import SchedulingQueue

# Helper modules of this folder (live_helpers, permit_gang) import by name.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


class FakeClock:
    """A clock tests move by hand: ``clock()`` is the time, ``advance(s)`` moves it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@cache
def framework(scheduler_name: str = "default-scheduler") -> Framework:
    """The default profile, under ``scheduler_name`` (built once per name)."""
    profile = dataclasses.replace(default_config().profiles[0], scheduler_name=scheduler_name)
    return Framework(profile, in_tree_registry())


def make_queue(clock: FakeClock, *names: str, **options: object) -> SchedulingQueue:
    """A queue over default profiles; no popping from backoffQ unless asked."""
    options.setdefault("pop_from_backoff_q", False)
    fwks = {n: framework(n) for n in (names or ("default-scheduler",))}
    return SchedulingQueue.from_config(default_config(), fwks, clock=clock, **options)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue_factory():
    """``queue_factory(clock, *scheduler_names, **options)`` → a SchedulingQueue."""
    return make_queue


@pytest.fixture
def clock_class():
    return FakeClock
