"""Job conditions and the terminal-state rules of 1.34.

A Job that meets its success criteria first gets ``SuccessCriteriaMet``, one that fails
first gets ``FailureTarget``; ``Complete`` / ``Failed`` follow only once every pod has
terminated and been counted (the JobManagedBy / JobPodReplacementPolicy behaviour, GA).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COMPLETE = "Complete"
FAILED = "Failed"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
FAILURE_TARGET = "FailureTarget"
SUSPENDED = "Suspended"

#: Condition reasons (``batch.JobReason*``) and their messages.
REASON_COMPLETIONS_REACHED = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT_EXCEEDED = "Job has reached the specified backoff limit"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
MESSAGE_DEADLINE_EXCEEDED = "Job was active longer than specified deadline"
#: A FailJob rule of the pod failure policy matched; the message names pod and rule.
REASON_POD_FAILURE_POLICY = "PodFailurePolicy"
REASON_MAX_FAILED_INDEXES_EXCEEDED = "MaxFailedIndexesExceeded"
MESSAGE_MAX_FAILED_INDEXES_EXCEEDED = (
    "Job has exceeded the specified maximal number of failed indexes"
)
REASON_FAILED_INDEXES = "FailedIndexes"
MESSAGE_FAILED_INDEXES = "Job has failed indexes"


@dataclass(frozen=True)
class Condition:
    """One ``status.conditions`` entry, status True unless said otherwise."""

    type: str
    reason: str = ""
    message: str = ""
    status: str = "True"

    def to_dict(self, now: str) -> dict[str, Any]:
        """The wire form, stamped ``now``."""
        return {
            "type": self.type,
            "status": self.status,
            "lastProbeTime": now,
            "lastTransitionTime": now,
            "reason": self.reason,
            "message": self.message,
        }


def find(conditions: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The condition of type ``kind``, if any."""
    for cond in conditions:
        if cond.get("type") == kind:
            return cond
    return None


def is_finished(job: dict[str, Any]) -> bool:
    """Whether the Job has a Complete or Failed condition that is True."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in (COMPLETE, FAILED) and cond.get("status") == "True":
            return True
    return False


def ensure(conditions: list[dict[str, Any]], wanted: Condition, now: str) -> bool:
    """Set a condition of ``wanted``'s type to it; never add one that is False
    (``ensureJobConditionStatus``). Returns whether the list changed."""
    current = find(conditions, wanted.type)
    if current is not None:
        if (current.get("status"), current.get("reason"), current.get("message")) == (
            wanted.status,
            wanted.reason,
            wanted.message,
        ):
            return False
        current.clear()
        current.update(wanted.to_dict(now))
        return True
    if wanted.status == "False":
        return False
    conditions.append(wanted.to_dict(now))
    return True
