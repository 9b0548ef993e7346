"""Pods held at Permit: upstream's ``waitingPodsMap`` and ``waitingPod``
(``pkg/scheduler/framework/runtime/waiting_pods_map.go``).

A Permit plugin that answers Wait leaves the pod assumed on its node while the
scheduling cycle moves on; the pod's binding cycle waits until every waiting plugin has
allowed it (success) or one rejects it, or a plugin's timeout expires (rejected with
upstream's message). The first decision wins, as upstream's one-slot channel: a later
Allow or Reject changes nothing.

There is no thread here and no event loop: a decision is delivered to callbacks
(:meth:`WaitingPod.when_decided`), and timeouts are scheduled through a :class:`Timers`
the owner supplies — the live scheduler's event loop, or a :class:`VirtualTimers` whose
clock the simulator advances when nothing else can make progress.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from typing import Protocol

from kubesched.config.gofmt import format_duration
from kubesched.framework.interface import Code, Status
from kubesched.objects.pod import Pod

__all__ = [
    "MAX_PERMIT_WAIT",
    "Cancellable",
    "Timers",
    "VirtualTimers",
    "WaitingPod",
    "WaitingPodsMap",
    "waiting_pod_key",
]

#: Upstream's ``maxTimeout``: a Permit plugin may not hold a pod longer (seconds).
MAX_PERMIT_WAIT = 15 * 60.0


class Cancellable(Protocol):
    """A scheduled call that can be called off (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None: ...


class Timers(Protocol):
    """Runs a callback after a delay (``asyncio.AbstractEventLoop`` is one)."""

    def call_later(self, delay: float, callback: Callable[[], object]) -> Cancellable: ...


class _VirtualTimer:
    __slots__ = ("callback", "cancelled", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], object]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualTimers:
    """Timers on a clock that only moves when told to (the simulator, tests)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = itertools.count()

    def call_later(self, delay: float, callback: Callable[[], object]) -> _VirtualTimer:
        timer = _VirtualTimer(self.now + max(0.0, delay), callback)
        heapq.heappush(self._heap, (timer.deadline, next(self._seq), timer))
        return timer

    def pending(self) -> bool:
        """Whether any timer is still to fire."""
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return bool(self._heap)

    def advance(self) -> bool:
        """Move the clock to the next deadline and fire every timer due then; False
        when no timer is pending."""
        if not self.pending():
            return False
        deadline = self._heap[0][0]
        self.now = max(self.now, deadline)
        while self._heap and self._heap[0][0] <= deadline:
            timer = heapq.heappop(self._heap)[2]
            if not timer.cancelled:
                timer.cancelled = True
                timer.callback()
        return True


def waiting_pod_key(pod: Pod) -> str:
    """The map's key: the pod's UID, as upstream, or its namespace/name when the pod
    has none (pods built in memory by the simulator and tests)."""
    return pod.uid or pod.key


class WaitingPod:
    """A pod that Permit plugins hold; plugins find it through the Handle."""

    __slots__ = ("_callbacks", "_decision", "_pending", "pod")

    def __init__(self, pod: Pod, plugin_timeouts: dict[str, float], timers: Timers) -> None:
        self.pod = pod
        self._decision: Status | None = None
        self._callbacks: list[Callable[[Status], object]] = []
        self._pending: dict[str, Cancellable] = {}
        for plugin, timeout in plugin_timeouts.items():
            self._pending[plugin] = timers.call_later(timeout, self._timeout(plugin, timeout))

    def _timeout(self, plugin: str, timeout: float) -> Callable[[], None]:
        def fire() -> None:
            message = (
                f"rejected due to timeout after waiting {format_duration(timeout)} "
                f"at plugin {plugin}"
            )
            self.reject(plugin, message)

        return fire

    def get_pending_plugins(self) -> list[str]:
        """The Permit plugins that have not allowed the pod yet."""
        return list(self._pending)

    @property
    def decided(self) -> bool:
        return self._decision is not None

    @property
    def decision(self) -> Status | None:
        """The first decision (Success or Unschedulable with the plugin), or None."""
        return self._decision

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; the pod is allowed once every plugin has."""
        timer = self._pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._pending:
            self._decide(Status(Code.SUCCESS))

    def reject(self, plugin: str, message: str) -> None:
        """Declare the pod unschedulable (``plugin`` may be empty: the scheduler)."""
        for timer in self._pending.values():
            timer.cancel()
        self._decide(Status(Code.UNSCHEDULABLE, (message,), plugin))

    def when_decided(self, callback: Callable[[Status], object]) -> None:
        """Call ``callback(decision)`` once decided (at once if it already is)."""
        if self._decision is not None:
            callback(self._decision)
        else:
            self._callbacks.append(callback)

    def _decide(self, status: Status) -> None:
        if self._decision is not None:
            return  # the first decision wins, as upstream's one-slot channel
        self._decision = status
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(status)


class WaitingPodsMap:
    """The pods held at Permit, by UID; shared by every profile of a scheduler.

    ``timers`` runs the plugins' timeouts (default: a :class:`VirtualTimers` that
    never moves unless advanced).
    """

    def __init__(self, timers: Timers | None = None) -> None:
        self.timers: Timers = timers if timers is not None else VirtualTimers()
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: Pod, plugin_timeouts: dict[str, float]) -> WaitingPod:
        waiting = WaitingPod(pod, plugin_timeouts, self.timers)
        self._pods[waiting_pod_key(pod)] = waiting
        return waiting

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        # A copy: callbacks may allow or reject pods, and owners remove them.
        return iter(tuple(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
