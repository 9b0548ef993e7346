"""Gang: a pod group is placed all together or not at all (gang scheduling).

How to write your own group plugin: say which pods form a group, and the framework does
the rest. Here the group is in two pod labels instead of a PodGroup object (the
in-tree ``Coscheduling`` plugin reads scheduler-plugins' PodGroups):

* ``pod-group.scheduling.sigs.k8s.io/name`` names the group,
* ``pod-group.scheduling.sigs.k8s.io/min-available`` says how many of its pods must
  have a place before any of them is bound (the quorum).

The plugin implements ``PodGroupPlugin.pod_group`` only. With it, the framework:

* holds a member while fewer than ``min-available`` members exist, with the message
  ``pod group ml/sweep: 2 of 4 members exist; ...``, and holds nothing for it;
* once a quorum is pending, places it in one scheduling cycle against one snapshot,
  each member seeing the earlier ones on their nodes: either every member of the quorum
  gets a node and is bound, or none is and the group waits with one reason naming the
  member that did not fit and why.

Nothing waits at Permit, so two groups that each fit alone but not together cannot
deadlock: one is placed whole, the other waits holding nothing. A pod without the name
label is not part of a gang and is scheduled as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.args import ArgsError, FieldError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PodGroupInfo, PodGroupPlugin
from kubesched.objects.pod import Pod

NAME = "Gang"

#: The label naming a pod's group, and the one giving the group's quorum.
GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
MIN_AVAILABLE_LABEL = "pod-group.scheduling.sigs.k8s.io/min-available"


def group_of(pod: Pod) -> tuple[str, int] | None:
    """The pod's group key and quorum, or None for a pod outside any gang."""
    name = pod.labels.get(GROUP_LABEL, "")
    if not name:
        return None
    raw = pod.labels.get(MIN_AVAILABLE_LABEL, "1")
    try:
        quorum = int(raw)
    except ValueError:
        quorum = 1  # a malformed quorum must not hold the pod for ever
    return f"{pod.namespace}/{name}", max(1, quorum)


class Gang:
    """Tells the framework which pods form a group and how many make its quorum."""

    name = NAME

    def __init__(self, handle: Handle, backoff_seconds: float = 0.0) -> None:
        self.handle = handle
        self.backoff_seconds = backoff_seconds

    def pod_group(self, pod: Pod) -> PodGroupInfo | None:
        member = group_of(pod)
        if member is None:
            return None
        key, quorum = member
        return PodGroupInfo(key, quorum, self.backoff_seconds)


# What upstream's ``var _ PodGroupPlugin = &Gang{}`` would state.
_pod_group: type[PodGroupPlugin] = Gang


def new(args: Mapping[str, Any], handle: Handle) -> Gang:
    """Factory: ``backoffSeconds`` (default 0) is how long a group that could not be
    placed waits before its next cycle."""
    backoff = args.get("backoffSeconds", 0)
    if isinstance(backoff, bool) or not isinstance(backoff, int | float) or backoff < 0:
        raise ArgsError(
            [FieldError.invalid("backoffSeconds", backoff, "must be a non-negative number")]
        )
    return Gang(handle, float(backoff))
