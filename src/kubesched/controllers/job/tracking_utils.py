"""Job pod tracking (``tracking_utils.go`` and the helpers of ``job_controller.go``):
the pods whose tracking finalizer removal is not yet observed, which pods count as
failed, when restarts exhaust backoffLimit, which active pods go first, and how released
pods move from ``status.uncountedTerminatedPods`` into the counters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.controllers.job.indexed_job_utils import duplicated_index_pods, is_indexed
from kubesched.controllers.job.pods import (
    RawObject,
    active_pods_order_key,
    is_deleting,
    phase,
    restart_count,
)

#: ``spec.managedBy`` of the Jobs this controller syncs (or unset).
MANAGED_BY = "kubernetes.io/job-controller"


def as_int(value: Any, default: int) -> int:
    """An integer field, or ``default`` when unset or mistyped."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def only_replace_failed_pods(job: RawObject) -> bool:
    """Whether terminating pods wait to be replaced until they have failed."""
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or bool(spec.get("podFailurePolicy"))


def is_pod_failed(pod: RawObject, job: RawObject) -> bool:
    """Failed, or (unless only failed pods count) deleted before it succeeded: orphaned
    pods may never reach the Failed phase."""
    if phase(pod) == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return is_deleting(pod) and phase(pod) != "Succeeded"


def managed_elsewhere(job: RawObject) -> bool:
    managed_by = (job.get("spec") or {}).get("managedBy")
    return bool(managed_by) and managed_by != MANAGED_BY


def past_backoff_limit_on_failure(job: RawObject, pods: list[RawObject]) -> bool:
    """For OnFailure pods, restarts of the running pods count against backoffLimit."""
    spec = job.get("spec") or {}
    template_spec = (spec.get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = sum(restart_count(p) for p in pods if phase(p) in ("Pending", "Running"))
    limit = as_int(spec.get("backoffLimit"), 6)
    return restarts > 0 if limit == 0 else restarts >= limit


def active_pods_for_removal(
    job: RawObject, pods: list[RawObject], at_least: int
) -> list[RawObject]:
    """Pods to delete: for Indexed Jobs the ones with a bad or repeated index, then the
    least advanced (``activePodsForRemoval``)."""
    remove: list[RawObject] = []
    left = pods
    if is_indexed(job):
        completions = (job.get("spec") or {}).get("completions")
        remove, left = duplicated_index_pods(
            pods, completions if isinstance(completions, int) else 0
        )
    if len(remove) < at_least:
        left = sorted(left, key=active_pods_order_key)
        remove.extend(left[: at_least - len(remove)])
    return remove


def clean_uncounted(status: RawObject, with_finalizer: set[str]) -> bool:
    """Move uids whose pods no longer carry the finalizer from
    ``uncountedTerminatedPods`` into the counters (``cleanUncountedPodsWithoutFinalizers``)."""
    uncounted = status.setdefault("uncountedTerminatedPods", {})
    changed = False
    for field_name, counter in (("succeeded", "succeeded"), ("failed", "failed")):
        uids = list(uncounted.get(field_name) or [])
        kept = [u for u in uids if u in with_finalizer]
        if len(kept) != len(uids):
            changed = True
            status[counter] = as_int(status.get(counter), 0) + len(uids) - len(kept)
            uncounted[field_name] = kept
    return changed


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
