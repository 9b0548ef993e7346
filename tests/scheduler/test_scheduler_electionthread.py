"""Leader election on its own thread, loop and client (``scheduler/electionthread.py``),
against the real embedded API server: renewals go on while the caller's event loop is
blocked, callbacks arrive on the caller's loop, stop releases the Lease."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator

import pytest

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config.types import LeaderElection
from kubesched.kube import Client, load_kubeconfig
from kubesched.scheduler.electionthread import ElectionThread, request_timeout
from kubesched.scheduler.leaderelection import LeaseRecord

LEASE, RENEW, RETRY = 1.0, 0.6, 0.1
_names = itertools.count()


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path_factory.mktemp("et") / "kubeconfig")
    yield handle
    handle.stop()


def settings() -> LeaderElection:
    return LeaderElection(
        lease_duration_seconds=LEASE,
        renew_deadline_seconds=RENEW,
        retry_period_seconds=RETRY,
        resource_name=f"kubesched-thread-{next(_names)}",
    )


async def until(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def holder(client: Client, config: LeaderElection) -> str:
    lease = await client.get_lease(config.resource_namespace, config.resource_name)
    return LeaseRecord.from_lease(lease).holder_identity


@pytest.mark.parametrize(
    ("renew", "expected"),
    [
        pytest.param(10.0, 5.0, id="half-the-renew-deadline"),
        pytest.param(0.6, 1.0, id="at-least-one-second"),
    ],
)
def test_the_request_timeout_is_half_the_renew_deadline_and_at_least_a_second(
    renew: float, expected: float
) -> None:
    config = LeaderElection(renew_deadline_seconds=renew, lease_duration_seconds=2 * renew)
    assert request_timeout(config) == expected


def test_renewals_go_on_while_the_callers_loop_is_blocked(apiserver: ApiServerHandle) -> None:
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=50, burst=100) as client:
            config = settings()
            calls: list[tuple[str, int]] = []
            first = ElectionThread(
                client,
                config,
                on_started_leading=lambda: calls.append(("started", threading.get_ident())),
                on_stopped_leading=lambda: calls.append(("stopped", threading.get_ident())),
            )
            # The elector's own client: the scheduler's server and limits, its own bucket,
            # user agent and timeout.
            assert first.client is not client and first.client.limiter is not client.limiter
            assert first.client.user_agent == "kubesched/leader-election"
            assert first.client.timeout == 1.0
            first.start()
            await until(lambda: calls)
            assert calls == [("started", threading.get_ident())]
            second = ElectionThread(client, config)
            second.start()
            await until(lambda: second.elector.leader == first.elector.identity)

            # A synchronous scheduling cycle three lease durations long: the leader's
            # renewals do not wait for this loop, so the standby never gets the Lease.
            time.sleep(3 * LEASE)
            assert first.check() is None
            assert await holder(client, config) == first.elector.identity
            assert not second.elector.is_leader and second.elector.leader == first.elector.identity

            first.stop()
            await first.wait()
            await until(lambda: len(calls) == 2)
            assert calls[1] == ("stopped", threading.get_ident())
            assert not first.elector.lost
            # Released: the standby takes over at once, not after a lease duration.
            await until(lambda: second.elector.is_leader, timeout=LEASE / 2 + 0.5)
            second.stop()
            await second.wait()
            assert await holder(client, config) == ""

    asyncio.run(asyncio.wait_for(main(), 20.0))


def test_stop_before_the_thread_runs_ends_it_without_leading(apiserver: ApiServerHandle) -> None:
    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection) as client:
            config = settings()
            started: list[bool] = []
            election = ElectionThread(
                client, config, on_started_leading=lambda: started.append(True)
            )
            election.stop()
            election.start()
            await asyncio.wait_for(election.wait(), 5.0)
            assert not started and not election.elector.is_leader

    asyncio.run(main())
