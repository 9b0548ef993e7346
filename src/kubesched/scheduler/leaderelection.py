"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's ``leaderelection``.

Several replicas of the scheduler run at once; only the one holding the Lease schedules
and binds. :class:`LeaderElector` follows client-go's algorithm step by step:

- **acquire**: every ``retryPeriod`` (with client-go's jitter factor 1.2) read the Lease;
  create it if missing; take it over when it has no holder, or when the holder's record has
  not changed for ``leaseDurationSeconds`` *by our own clock* (``observedTime``: the moment
  we first saw the current record; the holder's ``renewTime`` is never compared with our
  clock, so clock skew between machines does not matter). A takeover increments
  ``leaseTransitions``.
- **renew**: while leading, rewrite ``renewTime`` every ``retryPeriod``; when no renewal
  succeeded for ``renewDeadline``, leadership is lost (``on_stopped_leading``). While its
  record is valid, a leader writes over the Lease it last wrote without reading it first
  (client-go's optimistic fast path: one request a renewal); a failed write falls back to
  read-then-write.
- **release** (client-go's ``ReleaseOnCancel``): on :meth:`LeaderElector.stop` or
  cancellation, a leader clears ``holderIdentity`` and sets ``leaseDurationSeconds`` to 1,
  so that another replica takes over at once instead of after a whole lease duration.

Every write is an update carrying the ``resourceVersion`` of the Lease we read, so two
replicas racing for the same Lease cannot both win: the loser gets 409 Conflict (or
AlreadyExists when both create it) and simply retries at its next period.

The safety argument is client-go's: a leader gives up after ``renewDeadline`` without a
successful renewal, while others wait ``leaseDuration`` (> ``renewDeadline``) after the last
change they saw; hence ``lease_duration > renew_deadline > retry_period`` is required.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from kubesched.config.types import LeaderElection
from kubesched.kube.errors import AlreadyExists, Conflict, KubeError, NotFound

__all__ = [
    "JITTER_FACTOR",
    "LeaderElector",
    "LeaseClient",
    "LeaseRecord",
    "default_identity",
    "format_micro_time",
]

log = logging.getLogger(__name__)

#: client-go's ``JitterFactor``: the acquire loop waits retryPeriod × (1 + [0, 1.2)).
JITTER_FACTOR = 1.2

#: Seconds past the observed expiry at which a waiting candidate tries again.
EXPIRY_MARGIN = 0.001

#: Upper bound, in seconds, of the release write on shutdown.
RELEASE_TIMEOUT = 5.0


class LeaseClient(Protocol):
    """What the elector needs from an API client (:class:`kubesched.kube.Client` fits)."""

    async def get_lease(self, namespace: str, name: str) -> dict[str, Any]:
        """GET the Lease; NotFound if there is none."""
        ...

    async def create_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        """Create the Lease; AlreadyExists if someone else was first."""
        ...

    async def update_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        """Replace the Lease; Conflict if its resourceVersion is stale."""
        ...


def default_identity() -> str:
    """``hostname_uuid``, as kube-scheduler's identity: unique even on one host."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def format_micro_time(moment: datetime) -> str:
    """A metav1.MicroTime: ``2006-01-02T15:04:05.000000Z`` (UTC, microseconds)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class LeaseRecord:
    """The spec of a Lease, as client-go's ``LeaderElectionRecord``."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    lease_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaseRecord:
        """The record of a Lease object (missing fields are zero)."""
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime") or "",
            renew_time=spec.get("renewTime") or "",
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        """The Lease ``spec`` holding this record (empty fields left out)."""
        spec: dict[str, Any] = {
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.holder_identity:
            spec["holderIdentity"] = self.holder_identity
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


class LeaderElector:
    """Campaign for the Lease of ``config``; call back when leadership starts and ends.

    Run it with ``await elector.run()`` (usually as a task): it returns when leadership is
    lost, or after :meth:`stop`. **on_started_leading** is called once this replica
    leads; **on_stopped_leading** once it no longer does (lost, stopped or cancelled;
    called before the release is written, so that two leaders never overlap; never if it
    never led); **on_new_leader** with the identity of each new holder we
    observe. **release_on_cancel**: on stop or cancellation, give the Lease up at once
    (client-go's ``ReleaseOnCancel``, which kube-scheduler sets); without it a stopped
    leader simply stops renewing, as a crashed one would.

    **jitter_factor**: the acquire loop waits retryPeriod × (1 + [0, jitter_factor)).

    **clock** (monotonic seconds, for ``observedTime`` and the renew deadline),
    **wall_clock** (for the Lease's timestamps), **sleep** and **rng** are injectable so
    that tests need not wait.
    """

    def __init__(
        self,
        client: LeaseClient,
        config: LeaderElection | None = None,
        *,
        identity: str | None = None,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        release_on_cancel: bool = True,
        jitter_factor: float = JITTER_FACTOR,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = _utc_now,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        config = config if config is not None else LeaderElection()
        if not config.lease_duration_seconds > config.renew_deadline_seconds:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if not config.renew_deadline_seconds > JITTER_FACTOR * config.retry_period_seconds:
            raise ValueError("renewDeadline must be greater than retryPeriod × 1.2")
        if config.retry_period_seconds <= 0:
            raise ValueError("retryPeriod must be positive")
        if jitter_factor < 0:
            raise ValueError("the jitter factor must not be negative")
        self.jitter_factor = jitter_factor
        self.client = client
        self.config = config
        self.namespace = config.resource_namespace
        self.name = config.resource_name
        self.identity = identity or default_identity()
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.release_on_cancel = release_on_cancel
        self._clock = clock
        self._wall_clock = wall_clock
        self._sleep = sleep
        self._rng = rng or random.Random()
        #: Whole seconds written as leaseDurationSeconds (rounded up: never shorter).
        self.lease_seconds = max(1, math.ceil(config.lease_duration_seconds))
        self._lease: dict[str, Any] | None = None  # the Lease as last read or written
        self._observed = LeaseRecord()
        self._observed_time = 0.0
        self._reported_leader = ""
        self._stopped = asyncio.Event()
        #: Set while this replica leads (the scheduler may wait on it).
        self.leading = asyncio.Event()
        #: True once leadership was lost (renewals failed for renewDeadline), as opposed
        #: to given up by :meth:`stop` or cancellation.
        self.lost = False

    # --- public -----------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """Whether the last record we saw names us as the holder (client-go IsLeader)."""
        return self._observed.holder_identity == self.identity

    @property
    def leader(self) -> str:
        """The holder of the last record we saw ("" if none)."""
        return self._observed.holder_identity

    def stop(self) -> None:
        """End :meth:`run` (releasing the Lease if leading); safe from signal handlers."""
        self._stopped.set()

    def check(self, max_tolerable_expired: float) -> str | None:
        """client-go's ``Check``, the health check of a leader: a message when this
        replica believes it leads but its record is older than leaseDuration +
        ``max_tolerable_expired`` seconds (it should have stepped down long ago: a stuck
        renewal loop), else None. A standby always passes."""
        if not self.is_leader:
            return None
        age = self._clock() - self._observed_time
        if age > self.config.lease_duration_seconds + max_tolerable_expired:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    async def run(self) -> None:
        """Acquire, then renew until leadership is lost or :meth:`stop` is called."""
        try:
            if not await self._acquire():
                return
            self.leading.set()
            log.info("%s: became the leader of lease %s/%s", self.identity, *self._key)
            if self.on_started_leading is not None:
                self.on_started_leading()
            await self._renew()
        finally:
            await self._finish()

    # --- the loops --------------------------------------------------------------------

    @property
    def _key(self) -> tuple[str, str]:
        return self.namespace, self.name

    async def _acquire(self) -> bool:
        """Try every retryPeriod (jittered) until we hold the Lease; False if stopped.

        Unlike client-go, when the holder's lease will expire (by our observation) before
        the next jittered try, we try right at expiry: a dead leader is replaced within
        leaseDuration + one jittered retryPeriod of its last renewal instead of two.
        """
        log.info("%s: attempting to acquire lease %s/%s", self.identity, *self._key)
        while not self._stopped.is_set():
            if await self._attempt(self.config.renew_deadline_seconds):
                return True
            period = self.config.retry_period_seconds
            delay = period * (1.0 + self._rng.random() * self.jitter_factor)
            if self._observed.holder_identity and not self.is_leader:
                expires_in = (
                    self._observed_time + self._observed.lease_duration_seconds - self._clock()
                )
                if expires_in > 0:
                    delay = min(delay, expires_in + EXPIRY_MARGIN)
            await self._pause(delay)
        return False

    async def _renew(self) -> None:
        """Renew every retryPeriod; return when none succeeded for renewDeadline, or
        when stopped."""
        period = self.config.retry_period_seconds
        while not self._stopped.is_set():
            deadline = self._clock() + self.config.renew_deadline_seconds
            while True:
                remaining = deadline - self._clock()
                if remaining > 0 and await self._attempt(remaining):
                    break
                if self._stopped.is_set():
                    return
                if self._clock() >= deadline:
                    log.warning(
                        "%s: failed to renew lease %s/%s for %.3gs: leadership lost",
                        self.identity,
                        *self._key,
                        self.config.renew_deadline_seconds,
                    )
                    self.lost = True
                    return
                await self._pause(min(period, max(0.0, deadline - self._clock())))
            await self._pause(period)

    async def _finish(self) -> None:
        """Leave leadership: call on_stopped_leading, then release if asked to."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        release = self.release_on_cancel and (self._stopped.is_set() or _cancelling())
        # Stop acting as the leader before letting go: once released, another replica may
        # lead at once, and the two must never overlap.
        log.info("%s: stopped leading lease %s/%s", self.identity, *self._key)
        if self.on_stopped_leading is not None:
            self.on_stopped_leading()
        if release:
            await self._release()

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds``, waking early if :meth:`stop` is called."""
        if self._stopped.is_set():
            return
        sleeper = asyncio.ensure_future(self._sleep(seconds))
        stopper = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({sleeper, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            stopper.cancel()

    # --- one step ---------------------------------------------------------------------

    async def _attempt(self, timeout: float) -> bool:
        """One try_acquire_or_renew, bounded by ``timeout`` seconds; False on any error."""
        try:
            async with asyncio.timeout(timeout):
                return await self._try_acquire_or_renew()
        except (Conflict, AlreadyExists) as err:
            log.debug("%s: lost a race on lease %s/%s: %s", self.identity, *self._key, err)
        except KubeError as err:
            log.warning("%s: lease %s/%s: %s", self.identity, *self._key, err)
        except TimeoutError:
            log.warning("%s: lease %s/%s: no answer in time", self.identity, *self._key)
        return False

    async def _try_acquire_or_renew(self) -> bool:
        """client-go's ``tryAcquireOrRenew``: True if we hold the Lease afterwards."""
        if self.is_leader and self._lease is not None and self._lease_valid():
            # The fast path: a leader whose record is still valid renews on the Lease it
            # last wrote, one request instead of a read and a write. A Conflict or any
            # other failure falls back to the read below.
            now = format_micro_time(self._wall_clock())
            old = self._observed
            record = LeaseRecord(
                self.identity,
                self.lease_seconds,
                old.acquire_time or now,
                now,
                old.lease_transitions,
            )
            try:
                updated = await self.client.update_lease(self._with_record(self._lease, record))
            except KubeError as err:
                log.warning(
                    "%s: failed to update lease %s/%s optimistically: %s, falling back to "
                    "slow path",
                    self.identity,
                    *self._key,
                    err,
                )
            else:
                self._observe(updated, LeaseRecord.from_lease(updated))
                return True
        now = format_micro_time(self._wall_clock())
        record = LeaseRecord(
            holder_identity=self.identity,
            lease_duration_seconds=self.lease_seconds,
            acquire_time=now,
            renew_time=now,
        )
        try:
            lease = await self.client.get_lease(self.namespace, self.name)
        except NotFound:
            created = await self.client.create_lease(self._new_lease(record))
            self._observe(created, LeaseRecord.from_lease(created))
            return True

        old = LeaseRecord.from_lease(lease)
        if old != self._observed:
            self._observe(lease, old)
        else:
            self._lease = lease
        if (
            old.holder_identity
            and self._observed_time + old.lease_duration_seconds > self._clock()
            and not self.is_leader
        ):
            return False  # held by another, and not yet expired by our observation

        if self.is_leader:
            record = LeaseRecord(
                self.identity,
                self.lease_seconds,
                old.acquire_time or now,
                now,
                old.lease_transitions,
            )
        else:
            record = LeaseRecord(
                self.identity, self.lease_seconds, now, now, old.lease_transitions + 1
            )
        updated = await self.client.update_lease(self._with_record(lease, record))
        self._observe(updated, LeaseRecord.from_lease(updated))
        return True

    async def _release(self) -> None:
        """client-go's ``release``: clear the holder, leaseDurationSeconds 1."""
        if not self.is_leader or self._lease is None:
            return
        now = format_micro_time(self._wall_clock())
        record = LeaseRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            lease_transitions=self._observed.lease_transitions,
        )
        try:
            async with asyncio.timeout(RELEASE_TIMEOUT):
                updated = await self.client.update_lease(self._with_record(self._lease, record))
        except (KubeError, TimeoutError) as err:
            log.warning("%s: failed to release lease %s/%s: %s", self.identity, *self._key, err)
            return
        self._observe(updated, LeaseRecord.from_lease(updated))
        log.info("%s: released lease %s/%s", self.identity, *self._key)

    # --- helpers ----------------------------------------------------------------------

    def _lease_valid(self) -> bool:
        """Whether the record we saw last has not expired by our own clock."""
        return self._observed_time + self._observed.lease_duration_seconds > self._clock()

    def _observe(self, lease: dict[str, Any], record: LeaseRecord) -> None:
        """Remember ``record`` and when we first saw it (client-go's observedTime)."""
        self._lease = lease
        self._observed = record
        self._observed_time = self._clock()
        holder = record.holder_identity
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            if self.on_new_leader is not None:
                self.on_new_leader(holder)

    def _new_lease(self, record: LeaseRecord) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }

    @staticmethod
    def _with_record(lease: dict[str, Any], record: LeaseRecord) -> dict[str, Any]:
        """``lease`` (keeping its metadata, hence its resourceVersion) with a new spec."""
        body = dict(lease)
        body.setdefault("apiVersion", "coordination.k8s.io/v1")
        body.setdefault("kind", "Lease")
        body["spec"] = {**(lease.get("spec") or {}), **record.to_spec()}
        if not record.holder_identity:
            body["spec"].pop("holderIdentity", None)
        return body


def _cancelling() -> bool:
    """Whether the current task is being cancelled."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
