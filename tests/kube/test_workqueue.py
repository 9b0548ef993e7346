"""The work queue: client-go's dedupe, one worker per key, delays and rate limits
(``util/workqueue/queue_test.go``, ``delaying_queue_test.go``,
``default_rate_limiters_test.go``)."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.kube.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    WorkQueue,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 5))


def test_a_key_waits_once_however_often_it_is_added():
    async def body():
        queue: WorkQueue[str] = WorkQueue()
        for key in ("a", "b", "a", "a"):
            queue.add(key)
        assert len(queue) == 2
        assert [await queue.get(), await queue.get()] == ["a", "b"]

    run(body())


def test_a_key_added_while_processed_comes_back_only_after_done():
    async def body():
        queue: WorkQueue[str] = WorkQueue()
        queue.add("a")
        key = await queue.get()
        queue.add("a")
        assert len(queue) == 0  # not handed to a second worker
        queue.done(key)
        assert len(queue) == 1
        assert await queue.get() == "a"
        queue.done("a")
        assert len(queue) == 0

    run(body())


def test_get_waits_for_a_key_and_returns_none_after_shutdown():
    async def body():
        queue: WorkQueue[str] = WorkQueue()
        getter = asyncio.create_task(queue.get())
        await asyncio.sleep(0)
        queue.add("x")
        assert await getter == "x"
        waiting = asyncio.create_task(queue.get())
        await asyncio.sleep(0)
        queue.shut_down()
        assert await waiting is None
        queue.add("y")
        assert len(queue) == 0

    run(body())


def test_add_after_keeps_the_earliest_time_and_fires_when_due():
    async def body():
        clock = Clock()
        queue: WorkQueue[str] = WorkQueue(clock=clock)
        queue.add_after("a", 10)
        queue.add_after("a", 5)
        queue.add_after("a", 20)
        clock.now += 4
        queue.fire_due()
        assert len(queue) == 0
        clock.now += 1
        queue.fire_due()
        assert await queue.get() == "a"

    run(body())


def test_add_after_with_the_loops_clock_uses_timers():
    async def body():
        queue: WorkQueue[str] = WorkQueue()
        queue.add_after("a", 0.01)
        assert len(queue) == 0
        assert await queue.get() == "a"

    run(body())


def test_exponential_backoff_per_key_until_forgotten():
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        0.005, 1000.0
    )
    assert [limiter.when("a") for _ in range(3)] == [0.005, 0.01, 0.02]
    assert limiter.when("b") == 0.005
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert limiter.when("a") == 0.005
    for _ in range(100):
        last = limiter.when("c")
    assert last == 1000.0


def test_bucket_limiter_lets_a_burst_through_then_spaces_retries():
    clock = Clock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10.0, 2, clock)
    assert [limiter.when("k") for _ in range(4)] == pytest.approx([0.0, 0.0, 0.1, 0.2])
    clock.now += 1.0
    assert limiter.when("k") == 0.0


def test_add_rate_limited_backs_off_and_forget_resets():
    async def body():
        clock = Clock()
        queue: WorkQueue[str] = WorkQueue(clock=clock)
        queue.add_rate_limited("a")
        queue.add_rate_limited("a")
        assert queue.num_requeues("a") == 2
        clock.now += 0.005
        queue.fire_due()
        assert await queue.get() == "a"
        queue.forget("a")
        assert queue.num_requeues("a") == 0

    run(body())
