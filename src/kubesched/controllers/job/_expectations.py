"""Expectations, private to the Job controller until the shared ``controller_utils`` is
in: pods it created or deleted and has not seen yet (``ControllerExpectations``), and pods
whose tracking finalizer it removed and has not seen without it
(``uidTrackingExpectations`` in ``tracking_utils.go``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

#: ``ExpectationsTimeout``: after this, a controller acts even if events went missing.
EXPECTATIONS_TIMEOUT = 300.0


class ControllerExpectations:
    """Creations and deletions each key still expects to observe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._expected: dict[str, tuple[int, int, float]] = {}

    def satisfied_expectations(self, key: str) -> bool:
        """Nothing pending, or the expectations are too old to trust."""
        entry = self._expected.get(key)
        if entry is None:
            return True
        adds, dels, stamp = entry
        return (adds <= 0 and dels <= 0) or self.clock() - stamp > EXPECTATIONS_TIMEOUT

    def expect_creations(self, key: str, adds: int) -> None:
        """Expect ``adds`` pod creations (replaces earlier expectations)."""
        self._expected[key] = (adds, 0, self.clock())

    def expect_deletions(self, key: str, dels: int) -> None:
        """Expect ``dels`` pod deletions (replaces earlier expectations)."""
        self._expected[key] = (0, dels, self.clock())

    def lower_expectations(self, key: str, adds: int, dels: int) -> None:
        """Expect fewer (failed or skipped requests will never be observed)."""
        entry = self._expected.get(key)
        if entry is not None:
            self._expected[key] = (entry[0] - adds, entry[1] - dels, entry[2])

    def creation_observed(self, key: str) -> None:
        """A pod of ``key`` appeared."""
        self.lower_expectations(key, 1, 0)

    def deletion_observed(self, key: str) -> None:
        """A pod of ``key`` was deleted."""
        self.lower_expectations(key, 0, 1)

    def delete_expectations(self, key: str) -> None:
        """Forget ``key`` (its owner is gone)."""
        self._expected.pop(key, None)


class FinalizerExpectations:
    """Per Job, the pods whose tracking finalizer removal is not yet observed."""

    def __init__(self) -> None:
        self._uids: dict[str, set[str]] = {}

    def expect_removals(self, key: str, uids: Iterable[str]) -> None:
        """The controller is about to remove the finalizer of ``uids``."""
        self._uids.setdefault(key, set()).update(uids)

    def removal_observed(self, key: str, uid: str) -> None:
        """The pod ``uid`` was seen without its finalizer (or gone)."""
        uids = self._uids.get(key)
        if uids is not None:
            uids.discard(uid)
            if not uids:
                del self._uids[key]

    def expected(self, key: str) -> set[str]:
        """The uids still expected to lose their finalizer."""
        return set(self._uids.get(key, ()))

    def delete_expectations(self, key: str) -> None:
        """Forget ``key``."""
        self._uids.pop(key, None)
