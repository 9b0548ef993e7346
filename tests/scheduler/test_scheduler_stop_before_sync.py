"""A scheduler whose API server cannot be reached stops on request (SIGTERM calls
``stop``) instead of waiting out the informers' sync timeout."""

from __future__ import annotations

import asyncio

from kubesched.kube import Client, ConnectionConfig
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.cli import scheduler_config
from kubesched.scheduler.scheduler import Scheduler


def test_stop_before_the_first_sync_ends_run() -> None:
    async def main() -> tuple[bool, bool]:
        # Port 9 (discard) refuses connections: the informers retry with backoff.
        async with Client(ConnectionConfig(server="http://127.0.0.1:9")) as client:
            scheduler = Scheduler(scheduler_config(None), in_tree_registry(), client)
            scheduler.sync_timeout = 600.0
            task = asyncio.create_task(scheduler.run())
            await asyncio.sleep(0.3)
            assert not task.done()
            scheduler.stop()
            # Far below the sync timeout: run() ended because it was asked to.
            await asyncio.wait_for(task, 20.0)
            return scheduler.synced, scheduler.alive

    assert asyncio.run(main()) == (False, False)
