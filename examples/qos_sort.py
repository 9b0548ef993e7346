"""QOSSort: order the scheduling queue by priority, then by QoS class, then by age.

The QueueSort plugin of tutorials 000 and 002, as scheduler-plugins ships it
(``pkg/qos/queue_sort.go``, maturity Sample). The default PrioritySort takes the pod
with the higher priority first and, between equal priorities, the one queued earlier.
QOSSort adds a tie-break in between: at equal priority a Guaranteed pod (requests equal
limits) goes before a Burstable one, and a Burstable one before a BestEffort one (no
requests or limits at all). Only when the QoS classes are equal does the older pod win.

It matters when the cluster has room for one pod but two are waiting: the one that is
scheduled first gets the room.

A profile has exactly one QueueSort plugin, and all profiles of a scheduler share one
queue, so kube-scheduler requires every profile to name the same one. The tutorial's
configuration (PrioritySort in ``default-scheduler``, QOSSort in ``qos-scheduler``) is
rejected for that reason: ``profiles[1].plugins.queueSort: Invalid value: ...: queueSort
must be the same for all profiles``. ``config-qos-sort.yaml`` replaces PrioritySort in
the single profile instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import QueueSortPlugin
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import QOS_BEST_EFFORT, QOS_BURSTABLE, QOS_GUARANTEED

#: scheduler-plugins' name for the plugin.
NAME = "QOSSort"

#: Higher goes first. ``Pod.qos_class`` is computed once, when the pod is decoded.
QOS_RANK = {QOS_BEST_EFFORT: 1, QOS_BURSTABLE: 2, QOS_GUARANTEED: 3}


class QOSSort:
    """Priority first, then QoS class (Guaranteed > Burstable > BestEffort), then age."""

    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` should be scheduled before ``b``.

        Called for every comparison the queue's heap makes, so it only reads fields the
        decoder has already computed.
        """
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        qa, qb = QOS_RANK[a.pod.qos_class], QOS_RANK[b.pod.qos_class]
        if qa != qb:
            return qa > qb
        return a.timestamp < b.timestamp


_queue_sort: type[QueueSortPlugin] = QOSSort


def new(args: Mapping[str, Any] | None, handle: Handle) -> QOSSort:
    """Build the plugin. It takes no arguments; any given are reported, not ignored."""
    unknown = [key for key in args or {} if key not in ("kind", "apiVersion")]
    if unknown:
        raise ArgsError([FieldError.invalid(key, key, "unknown field") for key in unknown])
    return QOSSort()
