"""``backoffLimitPerIndex`` of Indexed Jobs (the per-index parts of
``indexed_job_utils.go`` and ``backoff_utils.go``).

Each index has its own failure budget. A pod carries the failures of its index before it
in ``batch.kubernetes.io/job-index-failure-count`` (and the failures the pod failure
policy ignored in ``...-ignored-failure-count``); the controller copies them, plus one,
onto the replacement. So that the replacement can be given the count, the last failed pod
of an index keeps its tracking finalizer until the replacement exists ("delayed
deletion"). An index fails when a failed pod's count has reached the limit, or at once on
a FailIndex rule; it is recorded in ``status.failedIndexes`` and never started again. A
replacement waits the index's own backoff (10 s doubling per failure of the index), not
the Job-wide one.
"""

from __future__ import annotations

import logging
from datetime import datetime

from kubesched.controllers.job.backoff_utils import BackoffRecord
from kubesched.controllers.job.indexed_job_utils import (
    UNKNOWN_INDEX,
    completion_index,
    parse_indexes,
)
from kubesched.controllers.job.pod_failure_policy import (
    FAIL_INDEX,
    match_pod_failure_policy,
    policy_of,
)
from kubesched.controllers.job.pods import (
    RawObject,
    finished_time,
    has_tracking_finalizer,
    meta,
    uid,
)
from kubesched.controllers.job.tracking_utils import as_int, is_pod_failed

log = logging.getLogger(__name__)

#: Failures of the pod's index before it that counted (``JobIndexFailureCountAnnotation``).
INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count"
#: Failures of the index the pod failure policy ignored (``JobIndexIgnoredFailureCountAnnotation``).
INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count"
_MAX_INT32 = 2**31 - 1


def has_backoff_limit_per_index(job: RawObject) -> bool:
    """Whether ``spec.backoffLimitPerIndex`` is set."""
    return isinstance((job.get("spec") or {}).get("backoffLimitPerIndex"), int)


def _count(pod: RawObject, key: str) -> int:
    """An annotation's count; 0 when missing, malformed or out of int32 range (a user
    may have written it), as upstream's ``parseInt32``."""
    text = (meta(pod).get("annotations") or {}).get(key)
    if text is None:
        return 0
    try:
        value = int(str(text))
    except ValueError:
        log.warning("pod %s: ignoring %s=%r, not a number", uid(pod), key, text)
        return 0
    return value if 0 <= value <= _MAX_INT32 else 0


def index_failure_count(pod: RawObject) -> int:
    """The counted failures of the pod's index before it."""
    return _count(pod, INDEX_FAILURE_COUNT_ANNOTATION)


def index_absolute_failure_count(pod: RawObject) -> int:
    """All failures of the pod's index before it, ignored ones included."""
    return index_failure_count(pod) + _count(pod, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def is_index_failed(job: RawObject, pod: RawObject) -> bool:
    """Whether ``pod``'s failure fails its index: a FailIndex rule, or a counted failure
    with the index's budget used up (``isIndexFailed``)."""
    if not is_pod_failed(pod, job):
        return False
    policy = policy_of(job)
    counted = True
    if policy is not None:
        decision = match_pod_failure_policy(policy, pod)
        if decision.action == FAIL_INDEX:
            return True
        counted = decision.count_failed
    limit = as_int((job.get("spec") or {}).get("backoffLimitPerIndex"), 0)
    return counted and index_failure_count(pod) >= limit


def _valid_index(job: RawObject, pod: RawObject) -> int:
    completions = as_int((job.get("spec") or {}).get("completions"), 0)
    index = completion_index(pod)
    return index if UNKNOWN_INDEX < index < completions else UNKNOWN_INDEX


def failed_indexes(job: RawObject, pods: list[RawObject]) -> set[int]:
    """``status.failedIndexes`` and the indexes of the uncounted pods that failed them
    (``calculateFailedIndexes``)."""
    completions = as_int((job.get("spec") or {}).get("completions"), 0)
    previous = (job.get("status") or {}).get("failedIndexes")
    found = parse_indexes(previous if isinstance(previous, str) else None, completions)
    for pod in pods:
        index = _valid_index(job, pod)
        if index != UNKNOWN_INDEX and has_tracking_finalizer(pod) and is_index_failed(job, pod):
            found.add(index)
    return found


def pods_with_delayed_deletion(
    job: RawObject,
    pods: list[RawObject],
    active_indexes: set[int],
    finished_indexes: set[int],
    expected_rm_finalizers: set[str],
) -> dict[int, RawObject]:
    """Per index still to run again, the failed pod whose finalizer stays until its
    replacement exists: the one with the most failures, finished last
    (``getPodsWithDelayedDeletionPerIndex``). An index with an active pod needs none:
    that pod carries the count already."""
    found: dict[int, RawObject] = {}
    for pod in pods:
        if not has_tracking_finalizer(pod) or uid(pod) in expected_rm_finalizers:
            continue
        index = _valid_index(job, pod)
        if index == UNKNOWN_INDEX or not is_pod_failed(pod, job):
            continue
        if index in finished_indexes or index in active_indexes:
            continue
        last = found.get(index)
        if last is None or (
            index_absolute_failure_count(last) <= index_absolute_failure_count(pod)
            and finished_time(pod) >= finished_time(last)
        ):
            found[index] = pod
    return found


def new_index_failure_counts(job: RawObject, replaced: RawObject | None) -> tuple[int, int]:
    """The counted and ignored failure counts of the pod replacing ``replaced`` (0, 0
    for an index's first pod) (``getNewIndexFailureCounts``)."""
    if replaced is None:
        return 0, 0
    counted = index_failure_count(replaced)
    ignored = _count(replaced, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
    policy = policy_of(job)
    if policy is None or match_pod_failure_policy(policy, replaced).count_failed:
        counted += 1
    else:
        ignored += 1
    return counted, ignored


def with_index_failure_counts(
    template: RawObject, job: RawObject, replaced: RawObject | None
) -> None:
    """Annotate the pod template of an index with its failure counts
    (``addIndexFailureCountAnnotation``); the ignored count only when not 0."""
    counted, ignored = new_index_failure_counts(job, replaced)
    annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[INDEX_FAILURE_COUNT_ANNOTATION] = str(counted)
    if ignored > 0:
        annotations[INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)


def remaining_time_per_index(
    now: datetime, base: float, maximum: float, last_failed: RawObject | None
) -> float:
    """Seconds before the index of ``last_failed`` may get a new pod
    (``getRemainingTimePerIndex``): its backoff after all its failures so far."""
    if last_failed is None:
        return 0.0
    record = BackoffRecord(
        index_absolute_failure_count(last_failed) + 1, finished_time(last_failed)
    )
    return record.remaining(now, base, maximum)
