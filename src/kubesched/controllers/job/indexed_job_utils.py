"""Completion indexes of Indexed Jobs (``indexed_job_utils.go``): the index of a pod,
``status.completedIndexes`` as ordered intervals (``"1,3-5,7"``), the indexes still to
start, and the pods that repeat an index or carry none.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kubesched.controllers.job.pods import RawObject, active_pods_order_key
from kubesched.objects.workloadpods import COMPLETION_INDEX

log = logging.getLogger(__name__)

#: The annotation (and label) carrying a pod's completion index.
COMPLETION_INDEX_ANNOTATION = COMPLETION_INDEX
UNKNOWN_INDEX = -1


def is_indexed(job: RawObject) -> bool:
    """Whether ``spec.completionMode`` is Indexed."""
    return (job.get("spec") or {}).get("completionMode") == "Indexed"


def completion_index(pod: RawObject) -> int:
    """The pod's completion index from its annotation, or :data:`UNKNOWN_INDEX`."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(COMPLETION_INDEX_ANNOTATION)
    if not isinstance(value, str) or not value.isdigit():
        return UNKNOWN_INDEX
    return int(value)


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes below ``completions`` listed in an intervals string; malformed parts
    are skipped (and logged), as upstream's ``parseIndexesFromString`` does."""
    found: set[int] = set()
    if not text:
        return found
    for part in text.split(","):
        first, _, last = part.partition("-")
        try:
            low = int(first)
            high = int(last) if last else low
        except ValueError:
            log.warning("ignoring a malformed completed index interval %r", part)
            continue
        found.update(range(max(low, 0), min(high, completions - 1) + 1))
    return found


def format_indexes(indexes: Iterable[int]) -> str:
    """Sorted indexes as intervals: ``{1, 3, 4, 5, 7}`` → ``"1,3-5,7"``; two in a row
    are written ``"3,4"``, as upstream's ``orderedIntervals.String``."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        if i == j:
            parts.append(str(ordered[i]))
        else:
            parts.append(f"{ordered[i]}{',' if j == i + 1 else '-'}{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def first_pending_indexes(count: int, completions: int, excluded: set[int]) -> list[int]:
    """The ``count`` lowest indexes below ``completions`` not in ``excluded`` (succeeded,
    or held by an active pod)."""
    found: list[int] = []
    for index in range(completions):
        if len(found) >= count:
            break
        if index not in excluded:
            found.append(index)
    return found


def duplicated_index_pods(
    pods: list[RawObject], completions: int
) -> tuple[list[RawObject], list[RawObject]]:
    """Active pods to remove because their index is missing, out of range or held by a
    better pod too, and the rest (``appendDuplicatedIndexPodsForRemoval``)."""
    remove: list[RawObject] = []
    by_index: dict[int, list[RawObject]] = {}
    for pod in pods:
        index = completion_index(pod)
        if index == UNKNOWN_INDEX or index >= completions:
            remove.append(pod)
        else:
            by_index.setdefault(index, []).append(pod)
    keep: list[RawObject] = []
    for group in by_index.values():
        # The pod furthest along stays (the last in deletion order).
        group.sort(key=active_pods_order_key)
        remove.extend(group[:-1])
        keep.append(group[-1])
    return remove, keep
