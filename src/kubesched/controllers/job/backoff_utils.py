"""The delay before a Job replaces failed pods (``backoff_utils.go``): 10 s after the
first failure since the last success, doubling per further failure up to 10 minutes,
counted from when the last failed pod finished. Kept in memory per Job, as upstream's
``backoffStore`` is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kubesched.controllers.job.pods import RawObject, finished_time

#: ``DefaultJobPodFailureBackOff`` and ``MaxJobPodFailureBackOff``.
DEFAULT_POD_FAILURE_BACKOFF = 10.0
MAX_POD_FAILURE_BACKOFF = 600.0


@dataclass(frozen=True)
class BackoffRecord:
    """Failures since the last success, and when the last of them finished."""

    failures_after_last_success: int = 0
    last_failure_time: datetime | None = None

    def remaining(self, now: datetime, base: float, maximum: float) -> float:
        """Seconds to wait before creating pods again (0: now)."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        delay = base
        for _ in range(1, self.failures_after_last_success):
            delay *= 2
            if delay >= maximum:
                delay = maximum
                break
        elapsed = (now - self.last_failure_time).total_seconds()
        return max(delay - elapsed, 0.0)


def next_record(
    old: BackoffRecord, new_succeeded: list[RawObject], new_failed: list[RawObject]
) -> BackoffRecord:
    """The record after the pods that finished since the last sync (``newBackoffRecord``)."""
    failed = sorted(finished_time(p) for p in new_failed)
    if not new_succeeded:
        if not failed:
            return old
        return BackoffRecord(old.failures_after_last_success + len(failed), failed[-1])
    last_success = max(finished_time(p) for p in new_succeeded)
    after = [moment for moment in failed if moment > last_success]
    if not after:
        return BackoffRecord()
    return BackoffRecord(len(after), after[-1])
