"""kube's client and informers against a server injecting faults (``--faults``): reads
are resent, Retry-After is honoured on watches too, writes are not blindly repeated,
cut watches resume without loss, expired ones relist."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest
from kube_helpers import node, pod, run

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, ConnectionFailed, Informer, ServerError, load_kubeconfig
from kubesched.kube.resources import NODES, PODS

T = TypeVar("T")


@contextmanager
def server(spec: str) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(faults=spec, bookmark_interval=0.2)
    try:
        yield handle
    finally:
        handle.stop()


def with_client(handle: ApiServerHandle, fn: Callable[[Client], Awaitable[T]]) -> T:
    async def body() -> T:
        async with Client(load_kubeconfig([handle.kubeconfig_path]), qps=1000) as client:
            return await fn(client)

    return run(body(), timeout=60)


def test_a_get_whose_connection_broke_is_resent() -> None:
    with server("resets=0.3,verbs=get,seed=4") as h:

        async def body(client: Client) -> Any:
            await client.create(NODES.raw, node("n1"))
            for _ in range(10):
                assert (await client.get(NODES.raw, "n1"))["metadata"]["name"] == "n1"
            return client.requests

        requests = with_client(h, body)
        assert h.faults is not None and h.faults.injected["reset"] > 0
        # Resent by the client (counted) or by its connection pool (a kept-alive
        # connection found closed: not counted); every read answered.
        assert 0 < requests["get", "nodes", "<error>"] <= h.faults.injected["reset"]
        assert requests["get", "nodes", "200"] >= 10


def test_a_write_whose_connection_broke_is_not_resent() -> None:
    with server("resets=1,verbs=create") as h:

        async def body(client: Client) -> Any:
            with pytest.raises(ConnectionFailed):
                await client.create(NODES.raw, node("n1"))
            # The create happened; it is the caller's to find out.
            return await client.get(NODES.raw, "n1"), client.requests

        found, requests = with_client(h, body)
        assert found["metadata"]["name"] == "n1"
        assert requests["create", "nodes", "<error>"] == 1


def test_a_watch_refused_with_retry_after_is_tried_again() -> None:
    with server("errors=0.6,codes=429,retry-after=1,verbs=watch,seed=2") as h:

        async def body(client: Client) -> Any:
            await client.create(NODES.raw, node("n1"))
            for _ in range(3):
                stream = client.watch_stream(NODES.raw, timeout_seconds=1)
                events = [event async for event in stream]
                assert events[0]["type"] == "ADDED"
            return client.requests

        requests = with_client(h, body)
        assert requests["watch", "nodes", "429"] > 0
        assert requests["watch", "nodes", "200"] == 3


def test_a_watch_refused_without_retry_after_fails() -> None:
    with server("errors=1,codes=500,verbs=watch") as h:

        async def body(client: Client) -> None:
            with pytest.raises(ServerError):
                async for _ in client.watch_stream(NODES.raw, timeout_seconds=1):
                    pass

        with_client(h, body)


def test_an_informer_resumes_cut_watches_without_relisting_or_losing_a_change() -> None:
    with server("drop-watches=0.3") as h:

        async def body(client: Client) -> Any:
            informer: Informer[Any] = Informer(client, PODS.raw, backoff_initial=0.05)
            seen: list[str] = []
            informer.add_handler(on_add=lambda p: seen.append(p["metadata"]["name"]))
            informer.start()
            await informer.wait_for_sync(10)
            for i in range(30):
                await client.create(PODS.raw, pod(f"p{i}"))
                await asyncio.sleep(0.05)
            while len(informer.keys()) < 30:
                await asyncio.sleep(0.05)
            await informer.stop()
            return informer, seen

        informer, seen = with_client(h, body)
        assert h.faults is not None and h.faults.injected["watch drop"] >= 3
        assert sorted(seen) == sorted(f"p{i}" for i in range(30))  # each once
        assert informer.lists == 1 and informer.watches >= 4


def test_an_informer_relists_when_its_resume_has_expired_and_converges() -> None:
    with server("window=3") as h:

        async def body(client: Client) -> Any:
            informer: Informer[Any] = Informer(client, PODS.raw, backoff_initial=0.05)
            added: list[str] = []
            deleted: list[str] = []
            informer.add_handler(
                on_add=lambda p: added.append(p["metadata"]["name"]),
                on_delete=lambda p: deleted.append(p["metadata"]["name"]),
            )
            informer.start()
            for i in range(6):
                await client.create(PODS.raw, pod(f"p{i}"))
            while len(informer.keys()) < 6:
                await asyncio.sleep(0.05)
            # Away (as across a cut): more changes than the window keeps.
            await informer.stop()
            for i in (1, 3):
                await client.delete(PODS.raw, f"p{i}", "default", grace_period_seconds=0)
            for i in range(6, 10):
                await client.create(PODS.raw, pod(f"p{i}"))
            informer.start()
            names = {f"p{i}" for i in (0, 2, 4, 5, 6, 7, 8, 9)}
            while set(informer.keys()) != {f"default/{n}" for n in names}:
                await asyncio.sleep(0.05)
            await informer.stop()
            return informer, added, deleted, names

        informer, added, deleted, names = with_client(h, body)
        assert h.faults is not None and h.faults.injected["expired"] == 1
        assert informer.lists == 2
        # The relist told the handlers what changed, each change once.
        assert sorted(deleted) == ["p1", "p3"]
        assert sorted(added) == sorted({f"p{i}" for i in range(10)})
        assert set(added) - set(deleted) == names
