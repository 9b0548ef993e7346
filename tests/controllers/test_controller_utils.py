"""Expectations and slow-start batches (``controller_utils_test.go``), and the status
write and owner look-ups every workload controller shares."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.cli.cluster import start_cluster
from kubesched.controllers.controller_utils import (
    ChildEventHandlers,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
    WrittenVersions,
    owners_selecting,
    resolve_controller_ref,
    slow_start_batch,
    update_status,
)
from kubesched.kube import Client, Informer, load_kubeconfig
from kubesched.kube.resources import REPLICA_SETS
from kubesched.kube.workqueue import WorkQueue

RS = REPLICA_SETS.raw


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


# --- status writes and owner look-ups, against the embedded API server ------------------


def replica_set(name: str, selector: dict[str, str] | None, labels: dict[str, str]) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": selector or {}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


def test_status_write_retries_once_after_a_conflict(tmp_path):
    """The first write carries a stale resourceVersion: the helper reads the object
    again and writes what ``new_status`` makes of the fresh copy."""
    seen: list[int] = []

    def new_status(body: dict) -> dict | None:
        seen.append(int((body.get("status") or {}).get("fullyLabeledReplicas") or 0))
        return {**(body.get("status") or {}), "observedGeneration": 1}

    async def scenario(client: Client) -> None:
        created = await client.create(RS, replica_set("rs", {"a": "b"}, {"a": "b"}), "default")
        # Someone else writes the status after our read.
        other = {**created, "status": {"replicas": 7, "fullyLabeledReplicas": 7}}
        fresh = await client.update(RS, other, subresource="status")
        written = WrittenVersions()
        updated = await update_status(client, RS, created, new_status, written)
        assert updated is not None
        assert seen == [0, 7]  # the stale copy, then the one read after the conflict
        assert updated["status"]["fullyLabeledReplicas"] == 7
        assert written.stale("default/rs", fresh)  # our write is newer than the cache's
        unchanged = await update_status(client, RS, updated, lambda body: None, written)
        assert unchanged is None
        again = await client.get(RS, "rs", "default")
        assert again["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]

    run_against_server(tmp_path, scenario)


def test_owner_lookups_in_the_informer_cache(tmp_path):
    async def scenario(informer: Informer[dict]) -> None:
        pod = {"metadata": {"namespace": "default", "labels": {"app": "web", "tier": "front"}}}
        names = sorted(o["metadata"]["name"] for o in owners_selecting(informer, pod))
        assert names == ["web", "web-tier"]
        elsewhere = {"metadata": {"namespace": "other", "labels": {"app": "web"}}}
        assert owners_selecting(informer, elsewhere) == []
        web = informer.get("default/web")
        assert web is not None
        ref = {"kind": "ReplicaSet", "name": "web", "uid": web["metadata"]["uid"]}
        assert resolve_controller_ref(informer, "default", ref, "ReplicaSet") is web
        for wrong in ({**ref, "uid": "another"}, {**ref, "kind": "Deployment"}, None):
            assert resolve_controller_ref(informer, "default", wrong, "ReplicaSet") is None

    owners = {"web": {"app": "web"}, "web-tier": {"tier": "front"}, "db": {"app": "db"}}
    run_with_replica_sets(tmp_path, owners, scenario)


def run_against_server(tmp_path, scenario) -> None:
    """Run ``scenario(client)`` against an embedded API server with no controllers."""
    with start_cluster(kubeconfig_path=tmp_path / "kubeconfig", controllers=()) as handle:

        async def body() -> None:
            config = load_kubeconfig([handle.kubeconfig_path])
            async with Client(config, qps=0) as client:
                await scenario(client)

        asyncio.run(body())


def test_child_event_handlers_wake_the_owners_upstream_wakes(tmp_path):
    def pod(name: str, labels: dict, owner: dict | None = None, rv: str = "1", **meta) -> dict:
        refs = [{"kind": "ReplicaSet", "controller": True, **owner}] if owner else []
        return {
            "metadata": {
                "namespace": "default",
                "name": name,
                "labels": labels,
                "ownerReferences": refs,
                "resourceVersion": rv,
                **meta,
            }
        }

    async def drain(queue: WorkQueue[str]) -> set[str]:
        keys = set()
        while len(queue):
            key = await queue.get()
            assert key is not None
            keys.add(key)
            queue.done(key)
        return keys

    async def scenario(informer: Informer[dict]) -> None:
        web, db = informer.get("default/web"), informer.get("default/db")
        assert web is not None and db is not None
        of_web = {"name": "web", "uid": web["metadata"]["uid"]}
        of_db = {"name": "db", "uid": db["metadata"]["uid"]}
        queue: WorkQueue[str] = WorkQueue("test")
        expectations = UIDTrackingControllerExpectations(Clock())
        events = ChildEventHandlers(informer, "ReplicaSet", queue, expectations=expectations)

        expectations.expect_creations("default/web", 1)
        events.add(pod("a", {"app": "web"}, of_web))
        assert await drain(queue) == {"default/web"}
        assert expectations.satisfied_expectations("default/web")

        events.add(pod("orphan", {"app": "db"}))
        assert await drain(queue) == {"default/db"}  # the owner that may adopt it

        expectations.expect_pod_deletions("default/web", ["default/a"])
        events.add(pod("a", {"app": "web"}, of_web, deletionTimestamp="2026-01-01T00:00:00Z"))
        assert await drain(queue) == {"default/web"}
        assert expectations.satisfied_expectations("default/web")  # counted as deleted

        events.update(pod("b", {}, of_web), pod("b", {}, of_db, rv="2"))
        assert await drain(queue) == {"default/web", "default/db"}

        events.update(pod("c", {"app": "web"}), pod("c", {"app": "db"}, rv="2"))
        assert await drain(queue) == {"default/db"}

        events.update(pod("c", {"app": "web"}), pod("c", {"app": "db"}))
        assert await drain(queue) == set()  # a relist's unchanged copy

        events.delete(pod("d", {}, {**of_web, "uid": "someone-else"}))
        assert await drain(queue) == set()

    run_with_replica_sets(tmp_path, {"web": {"app": "web"}, "db": {"app": "db"}}, scenario)


def run_with_replica_sets(tmp_path, selectors: dict[str, dict], scenario) -> None:
    """Create a ReplicaSet per name of ``selectors`` (its template labelled as it
    selects), then run ``scenario(informer)`` with an informer of them synced."""

    async def body(client: Client) -> None:
        for name, labels in selectors.items():
            await client.create(RS, replica_set(name, labels, labels), "default")
        informer: Informer[dict] = Informer(client, RS)
        informer.start()
        try:
            await informer.wait_for_sync()
            await scenario(informer)
        finally:
            await informer.stop()

    run_against_server(tmp_path, body)
