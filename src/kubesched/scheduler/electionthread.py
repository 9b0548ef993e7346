"""Leader election on a thread, an event loop and a client of its own.

The scheduler's event loop runs the synchronous scheduling cycles and decodes bursts of
watch events; its client's token bucket holds the bindings, status patches and events
of every pending pod. A renewal waiting behind either can miss the renew deadline and
cost the leader its lease under nothing worse than its own load. kube-scheduler keeps
renewals apart: its elector is a goroutine of its own, and ``resourcelock.
NewFromKubeconfig`` gives it a client of its own (a copy of the rest config: its own rate
limiter, user agent ``.../leader-election``, a timeout of max(1 s, renewDeadline / 2)).

:class:`ElectionThread` does the same in Python: a :class:`LeaderElector` on its own
daemon thread, event loop and :class:`~kubesched.kube.Client` (derived from the
scheduler's: same server, credentials, qps and burst, its own bucket and connections).
The interpreter lock passes to a waiting thread within the switch interval (5 ms), so a
renewal runs on time however busy the scheduling loop is. The callbacks come back to the
caller's loop (``call_soon_threadsafe``); the elector's state (``is_leader``, ``lost``,
``check``) is read across threads, which plain attribute reads allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable

from kubesched.config.types import LeaderElection
from kubesched.kube import Client
from kubesched.scheduler.leaderelection import LeaderElector

__all__ = ["HEALTHZ_TOLERANCE", "USER_AGENT", "ElectionThread", "request_timeout"]

log = logging.getLogger(__name__)

#: How long past leaseDuration a leader that has not renewed stays healthy (kube-scheduler
#: wires ``NewLeaderHealthzAdaptor(time.Second * 20)``).
HEALTHZ_TOLERANCE = 20.0
#: Appended to the client's user agent, as ``NewFromKubeconfig`` does.
USER_AGENT = "leader-election"


def request_timeout(config: LeaderElection) -> float:
    """``NewFromKubeconfig``'s per-request timeout: renewDeadline / 2, at least 1 s."""
    return max(1.0, config.renew_deadline_seconds / 2)


class ElectionThread:
    """Campaigns for ``config``'s Lease on a thread of its own (see the module docstring).

    **client**: the scheduler's client, from which the elector's own is derived.
    **on_started_leading** / **on_stopped_leading**: called on the loop that called
    :meth:`start` (the elector calls the second before it releases the Lease).
    """

    def __init__(
        self,
        client: Client,
        config: LeaderElection,
        *,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        identity: str | None = None,
    ) -> None:
        self.client = client.derive(USER_AGENT, timeout=request_timeout(config))
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.elector = LeaderElector(
            self.client,
            config,
            identity=identity,
            on_started_leading=lambda: self._to_caller(self.on_started_leading),
            on_stopped_leading=lambda: self._to_caller(self.on_stopped_leading),
        )
        self._thread = threading.Thread(target=self._main, name="leader-election", daemon=True)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested = False
        self._caller: asyncio.AbstractEventLoop | None = None
        self._finished: asyncio.Future[None] | None = None
        #: True when the elector failed with an error (a bug), not by losing the Lease.
        self.crashed = False

    def start(self) -> None:
        """Start campaigning; call from the loop that should receive the callbacks."""
        self._caller = asyncio.get_running_loop()
        self._finished = self._caller.create_future()
        self._thread.start()

    def stop(self) -> None:
        """Stop campaigning (a leader releases the Lease); safe from any thread."""
        with self._lock:
            self._stop_requested = True
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self.elector.stop)

    async def wait(self) -> None:
        """Wait until the thread has ended (after :meth:`stop`, or leadership lost)."""
        if self._finished is not None:
            await asyncio.shield(self._finished)

    def check(self) -> str | None:
        """The leader election health check (client-go's ``HealthzAdaptor``): a message
        when this replica believes it leads but has not renewed for leaseDuration +
        :data:`HEALTHZ_TOLERANCE` seconds, else None."""
        return self.elector.check(HEALTHZ_TOLERANCE)

    # --- the thread -------------------------------------------------------------------

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._run(loop))
        except Exception:  # a bug: say so; the caller sees the thread end
            log.exception("leader election failed")
            self.crashed = True
        finally:
            loop.close()
            self._to_caller(self._finish)

    async def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._loop = loop
            if self._stop_requested:
                self.elector.stop()
        try:
            await self.elector.run()
        finally:
            with self._lock:
                self._loop = None
            await self.client.close()

    def _finish(self) -> None:
        if self._finished is not None and not self._finished.done():
            self._finished.set_result(None)

    def _to_caller(self, callback: Callable[[], None] | None) -> None:
        caller = self._caller
        if callback is None or caller is None:
            return
        # The caller's loop may be gone already (a process exiting): nothing to tell.
        with contextlib.suppress(RuntimeError):
            caller.call_soon_threadsafe(callback)
