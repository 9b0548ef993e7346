"""Two replicas of the live scheduler on one API server: only the Lease holder schedules,
and the other takes over when it stops."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_scheduler_live import apiserver, make_node, make_pod, node_of, pod_raw, until

from kubesched.apiserver.runner import ApiServerHandle
from kubesched.config import LeaderElection
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NODES, PODS
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.cli import scheduler_config
from kubesched.scheduler.scheduler import LEADER_ELECTION_NAME, Scheduler

__all__ = ["apiserver"]  # the fixture, re-exported for pytest

FAST_LEASE = LeaderElection(
    leader_elect=True,
    lease_duration_seconds=1.0,
    renew_deadline_seconds=0.6,
    retry_period_seconds=0.1,
)


def test_only_the_lease_holder_schedules_and_the_other_takes_over(
    apiserver: ApiServerHandle,
) -> None:
    config = dataclasses.replace(scheduler_config(None), leader_election=FAST_LEASE)

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            await client.create(NODES.raw, make_node("n1"))
            replicas = [
                Scheduler(config, in_tree_registry(), client, rng=random.Random(i))
                for i in range(2)
            ]
            tasks = [asyncio.create_task(s.run()) for s in replicas]
            await until(lambda: any(s.elector and s.elector.is_leader for s in replicas))
            leaders = [s for s in replicas if s.elector and s.elector.is_leader]
            assert len(leaders) == 1
            leader = leaders[0]
            follower = next(s for s in replicas if s is not leader)

            await client.create(PODS.raw, make_pod("first").raw)
            assert await until(lambda: bound(client, "first")) == "n1"
            assert follower.elector is not None and not follower.elector.is_leader
            # A dashboard tells them apart; both are healthy.
            assert master_status(leader) == 1 and master_status(follower) == 0
            assert leader.health_problems() == [] and follower.health_problems() == []
            # Renewals and events went through clients of their own.
            assert leader.clients["leader-election"].requests["update", "leases", "200"] > 0
            assert leader.clients["events"].requests["create", "events", "201"] > 0
            assert not any(r == "leases" for _, r, _ in leader.clients["scheduler"].requests)

            leader.stop()
            await tasks[replicas.index(leader)]
            await until(lambda: follower.elector is not None and follower.elector.is_leader)
            assert master_status(leader) == 0
            await until(lambda: master_status(follower) == 1)
            await client.create(PODS.raw, make_pod("second").raw)
            assert await until(lambda: bound(client, "second")) == "n1"

            follower.stop()
            await tasks[replicas.index(follower)]
            assert not leader.leadership_lost and not follower.leadership_lost

    asyncio.run(asyncio.wait_for(main(), 15.0))


def master_status(scheduler: Scheduler) -> float:
    """``leader_election_master_status{name="kube-scheduler"}`` as /metrics shows it."""
    line = f'leader_election_master_status{{name="{LEADER_ELECTION_NAME}"}} '
    [sample] = [x for x in scheduler.metrics.render().splitlines() if x.startswith(line)]
    return float(sample.split()[-1])


async def bound(client: Client, name: str) -> str:
    return node_of(await pod_raw(client, name))


@pytest.mark.parametrize("elect", [False])
def test_leader_election_can_be_switched_off(apiserver: ApiServerHandle, elect: bool) -> None:
    config = dataclasses.replace(
        scheduler_config(None), leader_election=LeaderElection(leader_elect=elect)
    )
    scheduler = Scheduler(config, in_tree_registry(), object(), rng=random.Random(0))  # type: ignore[arg-type]
    assert scheduler.elector is None
