"""Bounded shutdown: writes still running at the deadline are cancelled, finished ones
keep their results (``clusterclient.finish_tasks``)."""

from __future__ import annotations

import asyncio

from kubesched.scheduler.clusterclient import finish_tasks


def test_tasks_left_at_the_deadline_are_cancelled_and_the_others_finish() -> None:
    async def main() -> None:
        tasks: set[asyncio.Task[str]] = set()
        finished: list[str] = []

        async def write(name: str, seconds: float) -> str:
            await asyncio.sleep(seconds)
            finished.append(name)
            if name == "quick":
                # A task started while shutting down is waited for too.
                track(asyncio.create_task(write("follow-up", 0.01)))
            return name

        def track(task: asyncio.Task[str]) -> None:
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        quick = asyncio.create_task(write("quick", 0.01))
        stuck = asyncio.create_task(write("stuck", 60.0))
        for task in (quick, stuck):
            track(task)
        loop = asyncio.get_running_loop()
        await finish_tasks(tasks, loop.time() + 0.3)
        assert not tasks
        assert finished == ["quick", "follow-up"]
        assert quick.result() == "quick" and stuck.cancelled()

    asyncio.run(asyncio.wait_for(main(), 5.0))
