"""Leader election on a Lease, against the real embedded API server (short durations)."""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config.types import LeaderElection
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.errors import AlreadyExists, Conflict, ServerError
from kubesched.scheduler.leaderelection import (
    JITTER_FACTOR,
    LeaderElector,
    LeaseRecord,
    default_identity,
    format_micro_time,
)

LEASE = 1.0
RENEW = 0.6
RETRY = 0.1
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
_names = itertools.count()


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    """One API server for the module; every test uses its own lease name."""
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("le") / "kubeconfig")
    yield handle
    handle.stop()


def settings(lease: float = LEASE, renew: float = RENEW, retry: float = RETRY) -> LeaderElection:
    """A LeaderElection config on a fresh lease name in kube-system."""
    return LeaderElection(
        lease_duration_seconds=lease,
        renew_deadline_seconds=renew,
        retry_period_seconds=retry,
        resource_name=f"kubesched-test-{next(_names)}",
    )


class CountingClient:
    """A lease client around the real one: counts races lost, can break writes."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.conflicts = 0
        self.broken = False

    async def get_lease(self, namespace: str, name: str) -> dict[str, Any]:
        return await self.client.get_lease(namespace, name)

    async def create_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.client.create_lease(lease)
        except AlreadyExists:
            self.conflicts += 1
            raise

    async def update_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        if self.broken:
            raise ServerError(503, {"kind": "Status", "message": "injected failure"})
        try:
            return await self.client.update_lease(lease)
        except Conflict:
            self.conflicts += 1
            raise


class Observer:
    """Shared by all electors: who leads now, and whether two ever did at once."""

    def __init__(self) -> None:
        self.leaders: set[str] = set()
        self.history: list[str] = []
        self.overlaps = 0

    def elector(self, client: Any, config: LeaderElection, **options: Any) -> LeaderElector:
        """An elector whose callbacks report here."""
        identity = default_identity()

        def started() -> None:
            if self.leaders:
                self.overlaps += 1
            self.leaders.add(identity)
            self.history.append(identity)

        def stopped() -> None:
            self.leaders.discard(identity)

        return LeaderElector(
            client,
            config,
            identity=identity,
            on_started_leading=started,
            on_stopped_leading=stopped,
            **options,
        )


async def until(check: Any, timeout: float = 5.0) -> float:
    """Poll ``check()`` until truthy; the seconds it took."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
    return time.monotonic() - start


def leading(electors: list[LeaderElector]) -> list[LeaderElector]:
    return [e for e in electors if e.leading.is_set()]


async def lease_record(client: Client, config: LeaderElection) -> LeaseRecord:
    lease = await client.get_lease(config.resource_namespace, config.resource_name)
    return LeaseRecord.from_lease(lease)


def live(apiserver: ApiServerHandle) -> Client:
    return Client(load_kubeconfig([apiserver.kubeconfig_path]), qps=1000, burst=1000)


def test_exactly_one_leads_and_release_hands_over(apiserver: ApiServerHandle) -> None:
    async def main() -> None:
        async with live(apiserver) as client:
            config = settings()
            observer = Observer()
            electors = [observer.elector(client, config) for _ in range(2)]
            tasks = [asyncio.create_task(e.run()) for e in electors]
            await until(lambda: leading(electors))
            await asyncio.sleep(1.5 * LEASE)  # past a lease duration: renewals hold
            [first] = leading(electors)
            [second] = [e for e in electors if e is not first]
            record = await lease_record(client, config)
            assert record.holder_identity == first.identity
            assert record.lease_duration_seconds == 1
            assert record.lease_transitions == 0
            assert MICRO_TIME.match(record.renew_time) and MICRO_TIME.match(record.acquire_time)
            assert second.leader == first.identity and not second.is_leader

            first.stop()
            await tasks[electors.index(first)]
            assert not first.leading.is_set() and not first.lost
            # Released: the other takes over at its next try, not after a lease duration.
            waited = await until(lambda: second.leading.is_set())
            assert waited < LEASE / 2
            record = await lease_record(client, config)
            assert record.holder_identity == second.identity
            assert record.lease_transitions == 1

            second.stop()
            await tasks[electors.index(second)]
            record = await lease_record(client, config)
            assert record.holder_identity == ""
            assert record.lease_duration_seconds == 1
            assert observer.overlaps == 0
            assert observer.history == [first.identity, second.identity]

    asyncio.run(asyncio.wait_for(main(), 10.0))


def test_crashed_leader_is_replaced_only_after_the_lease_duration(
    apiserver: ApiServerHandle,
) -> None:
    async def main() -> None:
        async with live(apiserver) as client:
            config = settings()
            observer = Observer()
            crashing = observer.elector(client, config, release_on_cancel=False)
            crash_task = asyncio.create_task(crashing.run())
            await until(lambda: crashing.leading.is_set())
            other = observer.elector(client, config)
            other_task = asyncio.create_task(other.run())
            await asyncio.sleep(1.5 * LEASE)
            assert not other.leading.is_set()

            crash_task.cancel()  # no release: the lease just stops being renewed
            with pytest.raises(asyncio.CancelledError):
                await crash_task
            crashed_at = time.monotonic()
            assert (await lease_record(client, config)).holder_identity == crashing.identity
            await until(lambda: other.leading.is_set())
            waited = time.monotonic() - crashed_at
            # Not before the last renewal (≤ one retry period before the crash) has aged a
            # whole lease duration; at most one jittered retry period (the lag of the other's
            # observation of that renewal) later, as it tries again right at expiry.
            assert LEASE - RETRY - 0.05 <= waited <= LEASE + (1 + JITTER_FACTOR) * RETRY + 0.15
            record = await lease_record(client, config)
            assert record.holder_identity == other.identity
            assert record.lease_transitions == 1
            assert observer.overlaps == 0
            other.stop()
            await other_task

    asyncio.run(asyncio.wait_for(main(), 10.0))


def test_leadership_is_lost_when_renewals_fail_for_the_renew_deadline(
    apiserver: ApiServerHandle,
) -> None:
    async def main() -> None:
        async with live(apiserver) as client:
            config = settings()
            counting = CountingClient(client)
            lost = asyncio.Event()
            elector = LeaderElector(counting, config, on_stopped_leading=lost.set)
            task = asyncio.create_task(elector.run())
            await until(lambda: elector.leading.is_set())
            await asyncio.sleep(0.3)
            counting.broken = True
            broken_at = time.monotonic()
            await asyncio.wait_for(lost.wait(), 2.0)
            waited = time.monotonic() - broken_at
            assert RENEW - RETRY <= waited <= RENEW + 2 * RETRY + 0.2
            await task  # run() returns by itself once leadership is lost
            assert not elector.leading.is_set() and elector.lost
            # Not released (the writes fail): others wait for the lease to expire.
            assert (await lease_record(client, config)).holder_identity == elector.identity

    asyncio.run(asyncio.wait_for(main(), 10.0))


def test_races_never_yield_two_leaders(apiserver: ApiServerHandle) -> None:
    async def main() -> None:
        async with live(apiserver) as client:
            counting = CountingClient(client)
            observer = Observer()
            for _ in range(10):
                # Short periods so that every try collides: all create at once, then all
                # update the released lease with the same resourceVersion.
                config = settings(lease=1.0, renew=0.3, retry=0.01)
                electors = [observer.elector(counting, config) for _ in range(4)]
                tasks = {e: asyncio.create_task(e.run()) for e in electors}
                transitions = 0
                while tasks:
                    await until(lambda pending=tasks: leading(list(pending)))
                    await asyncio.sleep(0.05)  # give the losers time to try (and fail)
                    [leader] = leading(list(tasks))
                    record = await lease_record(client, config)
                    assert record.holder_identity == leader.identity
                    assert record.lease_transitions == transitions
                    leader.stop()
                    await tasks.pop(leader)
                    transitions += 1
                assert observer.overlaps == 0
            assert observer.overlaps == 0
            assert len(observer.history) == 10 * 4
            assert counting.conflicts > 0  # the races did happen

    asyncio.run(asyncio.wait_for(main(), 40.0))  # a deadline for a loaded machine


class FakeLeases:
    """An in-memory Lease store with resourceVersion checks (for the fake-clock test)."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0

    async def get_lease(self, namespace: str, name: str) -> dict[str, Any]:
        from kubesched.kube.errors import NotFound

        if self.lease is None:
            raise NotFound(404, {"kind": "Status", "reason": "NotFound"})
        return dict(self.lease)

    async def create_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        if self.lease is not None:
            raise AlreadyExists(409, {"kind": "Status", "reason": "AlreadyExists"})
        return self._store(lease)

    async def update_lease(self, lease: dict[str, Any]) -> dict[str, Any]:
        assert self.lease is not None
        if lease["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise Conflict(409, {"kind": "Status", "reason": "Conflict"})
        return self._store(lease)

    def _store(self, lease: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.lease = {
            **lease,
            "metadata": {**lease["metadata"], "resourceVersion": str(self.version)},
        }
        return dict(self.lease)


def test_takeover_uses_our_own_observation_time_not_the_holders_timestamps() -> None:
    """With a fake clock: a record renewed "in the past" (skewed holder clock) still counts
    as fresh for a whole lease duration after we first observe it."""

    async def main() -> None:
        now = [100.0]
        leases = FakeLeases()
        stale = datetime(2000, 1, 1, tzinfo=UTC)
        leases.lease = {
            "metadata": {"name": "kubesched", "namespace": "kube-system", "resourceVersion": "0"},
            "spec": {
                "holderIdentity": "other",
                "leaseDurationSeconds": 15,
                "renewTime": format_micro_time(stale),
                "acquireTime": format_micro_time(stale),
                "leaseTransitions": 3,
            },
        }

        async def sleep(seconds: float) -> None:
            now[0] += seconds
            await asyncio.sleep(0)

        started: list[float] = []
        elector = LeaderElector(
            leases,
            LeaderElection(),
            identity="me",
            clock=lambda: now[0],
            sleep=sleep,
            on_started_leading=lambda: started.append(now[0]),
        )
        task = asyncio.create_task(elector.run())
        await until(lambda: started, timeout=2.0)
        assert 115.0 < started[0] <= 115.01  # tried again right at the observed expiry
        assert elector.is_leader
        record = LeaseRecord.from_lease(leases.lease)
        assert (record.holder_identity, record.lease_transitions) == ("me", 4)
        assert record.lease_duration_seconds == 15
        elector.stop()
        await task
        assert LeaseRecord.from_lease(leases.lease).holder_identity == ""

    asyncio.run(asyncio.wait_for(main(), 5.0))


def test_invalid_durations_are_refused() -> None:
    with pytest.raises(ValueError, match="leaseDuration"):
        LeaderElector(FakeLeases(), settings(lease=1.0, renew=1.0))
    with pytest.raises(ValueError, match="renewDeadline"):
        LeaderElector(FakeLeases(), settings(lease=1.0, renew=0.5, retry=0.5))


def test_a_leader_renews_with_one_write_and_falls_back_to_a_read_on_conflict(
    apiserver: ApiServerHandle,
) -> None:
    """client-go's fast path: while its record is valid, a leader writes over the Lease it
    last wrote; when someone else changed it meanwhile, the 409 sends it to read first."""

    async def main() -> None:
        async with live(apiserver) as client, live(apiserver) as other:
            config = settings()
            elector = LeaderElector(client, config)
            task = asyncio.create_task(elector.run())
            await until(lambda: elector.leading.is_set())
            before = dict(client.requests)
            await asyncio.sleep(5 * RETRY)
            gets = client.requests["get", "leases", "200"] - before.get(("get", "leases", "200"), 0)
            puts = client.requests["update", "leases", "200"] - before.get(
                ("update", "leases", "200"), 0
            )
            assert puts >= 3 and gets == 0

            # Another writer touches the Lease (its holder unchanged): the next optimistic
            # write conflicts, the slow path reads and renews, and we still lead.
            while True:
                lease = await other.get_lease(config.resource_namespace, config.resource_name)
                lease["metadata"].setdefault("labels", {})["touched"] = "yes"
                try:
                    await other.update_lease(lease)
                    break
                except Conflict:
                    continue  # the leader renewed between our read and our write
            await until(lambda: client.requests["update", "leases", "409"] >= 1)
            renewed = client.requests["update", "leases", "200"]
            await until(lambda: client.requests["update", "leases", "200"] > renewed)
            assert elector.is_leader and elector.leading.is_set() and not elector.lost
            assert client.requests["get", "leases", "200"] > before.get(("get", "leases", "200"), 0)
            elector.stop()
            await task

    asyncio.run(asyncio.wait_for(main(), 30.0))


def test_the_health_check_fails_a_leader_whose_record_is_older_than_lease_plus_tolerance(
    apiserver: ApiServerHandle,
) -> None:
    """client-go's ``Check``: only a replica that believes it leads, and whose last renewal
    (by its own clock) is older than leaseDuration + the tolerance, fails."""

    async def main() -> None:
        async with live(apiserver) as client:
            config = settings()
            offset = [0.0]

            def clock() -> float:
                return time.monotonic() + offset[0]

            leader = LeaderElector(client, config, clock=clock, release_on_cancel=False)
            standby = LeaderElector(client, config, clock=clock)
            leader_task = asyncio.create_task(leader.run())
            await until(lambda: leader.leading.is_set())
            standby_task = asyncio.create_task(standby.run())
            await until(lambda: standby.leader == leader.identity)
            assert leader.check(20.0) is None and standby.check(20.0) is None
            # With no tolerance at all, a leader would fail; a standby is not concerned.
            assert leader.check(-1000.0) is not None and standby.check(-1000.0) is None

            # The leader stops renewing but still believes it leads (a wedged loop).
            leader_task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await leader_task
            assert leader.is_leader
            offset[0] = LEASE + 19.0
            assert leader.check(20.0) is None
            offset[0] = LEASE + 21.0
            assert leader.check(20.0) == (
                f"failed election to renew leadership on lease {config.resource_name}"
            )
            standby.stop()
            await standby_task

    asyncio.run(asyncio.wait_for(main(), 10.0))
