"""Expectations and slow-start batches (``controller_utils_test.go``)."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.controllers.controller_utils import (
    ControllerExpectations,
    UIDTrackingControllerExpectations,
    slow_start_batch,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_expectations_hold_a_sync_back_until_observed_or_expired():
    clock = Clock()
    exp = ControllerExpectations(clock, timeout=300)
    assert exp.satisfied_expectations("ns/rs")  # never told anything
    exp.expect_creations("ns/rs", 2)
    assert not exp.satisfied_expectations("ns/rs")
    exp.creation_observed("ns/rs")
    assert not exp.satisfied_expectations("ns/rs")
    exp.creation_observed("ns/rs")
    assert exp.satisfied_expectations("ns/rs")
    exp.expect_deletions("ns/rs", 1)
    clock.now += 301
    assert exp.satisfied_expectations("ns/rs")  # expired
    exp.delete_expectations("ns/rs")
    assert exp.get("ns/rs") is None


def test_a_pods_deletion_counts_once():
    exp = UIDTrackingControllerExpectations(Clock())
    exp.expect_pod_deletions("ns/rs", ["ns/a", "ns/b"])
    exp.pod_deletion_observed("ns/rs", "ns/a")  # its deletionTimestamp
    exp.pod_deletion_observed("ns/rs", "ns/a")  # its removal
    exp.pod_deletion_observed("ns/rs", "ns/other")
    assert exp.get("ns/rs") == (0, 1)
    exp.pod_deletion_observed("ns/rs", "ns/b")
    assert exp.satisfied_expectations("ns/rs")


@pytest.mark.parametrize(
    ("count", "fail_at", "batches", "successes"),
    [
        (10, None, [1, 2, 4, 3], 10),
        (10, 2, [1, 2], 2),
        (0, None, [], 0),
    ],
    ids=["doubles-until-done", "stops-after-the-batch-with-a-failure", "nothing-to-do"],
)
def test_slow_start_batch(count, fail_at, batches, successes):
    calls: list[int] = []
    seen: list[int] = []

    async def body():
        async def call() -> None:
            calls.append(1)
            if fail_at is not None and len(calls) == fail_at:
                raise RuntimeError("quota")

        original_gather = asyncio.gather

        async def counting(*aws, **kw):
            seen.append(len(aws))
            return await original_gather(*aws, **kw)

        asyncio.gather = counting
        try:
            return await slow_start_batch(count, 1, call)
        finally:
            asyncio.gather = original_gather

    done, error = asyncio.run(body())
    assert seen == batches
    assert done == successes
    assert (error is not None) == (fail_at is not None)
