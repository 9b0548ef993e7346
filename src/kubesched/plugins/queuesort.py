"""PrioritySort: the order of the active queue, higher priority first.

Mirrors kube-scheduler's ``queuesort`` plugin (PrioritySort): among pods waiting to be
scheduled, the one with the higher (admission-resolved) priority goes first; between
equal priorities, the one that entered the queue earlier. It is the default profile's
only QueueSort plugin, and all profiles of a scheduler must share one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.handle import Handle
from kubesched.framework.interface import QueueSortPlugin
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins import names
from kubesched.plugins.helper import check_no_args

NAME = names.PRIORITY_SORT


class PrioritySort:
    """Orders queued pods by priority, then by the time they were queued."""

    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` should be scheduled before ``b``."""
        pa = a.pod.priority
        pb = b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)


_queue_sort: type[QueueSortPlugin] = PrioritySort


def new(args: Mapping[str, Any] | None, handle: Handle) -> PrioritySort:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return PrioritySort()
