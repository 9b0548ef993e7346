"""The fuzz tests' hypothesis settings, and a count of the examples they ran.

Two profiles, chosen by ``KUBESCHED_FUZZ_PROFILE``:

* ``ci`` (the default, what ``./dev test`` runs): derandomized, no example database, a
  small number of examples per test so that all of ``tests/fuzz`` takes well under a
  minute on the shared 2-core machine. The same inputs every run: a failure is
  reproducible and never flaky.
* ``long`` (``bench/fuzz.py``): random, still database-less, ``KUBESCHED_FUZZ_SCALE``
  (default 40) times as many examples.

Settings are applied per test (:func:`fuzz`), never as a global profile, so the other
hypothesis tests of the suite keep theirs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("KUBESCHED_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise RuntimeError(f"KUBESCHED_FUZZ_PROFILE={PROFILE!r}: expected ci or long")
SCALE = int(os.environ.get("KUBESCHED_FUZZ_SCALE", "40")) if PROFILE == "long" else 1

F = TypeVar("F", bound=Callable[..., Any])

_SUPPRESSED = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
    HealthCheck.function_scoped_fixture,
]


def fuzz(examples: int) -> Callable[[F], F]:
    """The settings of one fuzz test: ``examples`` in the ci profile, ``SCALE`` times as
    many in the long one."""
    return settings(
        max_examples=examples * SCALE,
        derandomize=PROFILE == "ci",
        database=None,
        deadline=None,
        suppress_health_check=_SUPPRESSED,
        print_blob=PROFILE == "long",
    )


_lock = threading.Lock()
_count = 0
_started: float | None = None


def count() -> None:
    """Count one example run (one request sent, one file loaded)."""
    global _count, _started
    with _lock:
        if _started is None:
            _started = time.monotonic()
        _count += 1


def summary() -> str:
    """One line: the profile, the examples run and examples per second (empty if none)."""
    if not _count or _started is None:
        return ""
    seconds = time.monotonic() - _started
    return (
        f"kubesched fuzz: profile {PROFILE}, {_count} examples in {seconds:.1f} s "
        f"({_count / seconds:.0f} examples/s)"
    )
