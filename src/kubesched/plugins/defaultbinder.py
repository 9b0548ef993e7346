"""DefaultBinder: bind the pod to its node through the cluster client.

Mirrors kube-scheduler's ``defaultbinder`` plugin, which creates the pod's Binding
subresource. The client behind the handle does the write (the simulator's cluster, the
live scheduler's API connection); a failure becomes an Error status, so the pod is
unreserved and retried with backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import BindPlugin, Status
from kubesched.objects.pod import Pod
from kubesched.plugins import names
from kubesched.plugins.helper import check_no_args

NAME = names.DEFAULT_BINDER


class DefaultBinder:
    """Binds pods with ``handle.client.bind``."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind ``pod`` to ``node_name``; Error with the client's message if that fails."""
        try:
            self._handle.client.bind(pod, node_name)
        except Exception as err:  # any client failure is the binding's failure
            return Status.error(str(err) or type(err).__name__)
        return None


_bind: type[BindPlugin] = DefaultBinder


def new(args: Mapping[str, Any] | None, handle: Handle) -> DefaultBinder:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return DefaultBinder(handle)
