"""Informers against the real embedded API server (and, for what it cannot be made to do —
a connection cut mid-stream, a watch refused with HTTP 410 — a stub of our own)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

from aiohttp import web
from kube_helpers import pod, run

from kubesched.apiserver.runner import new_store, start_apiserver
from kubesched.kube import Client, ConnectionConfig, Informer, load_kubeconfig
from kubesched.kube.resources import NAMESPACES, PODS
from kubesched.objects.pod import Pod


class Recorder:
    """Records handler calls as (verb, key) and can wait for a number of them."""

    def __init__(self, informer: Informer) -> None:
        self.calls: list[tuple[str, str]] = []
        self.changed = asyncio.Event()
        informer.add_handler(
            on_add=lambda p: self._record("add", p),
            on_update=self._update,
            on_delete=lambda p: self._record("delete", p),
        )

    def _record(self, verb: str, obj) -> None:
        key = obj.key if isinstance(obj, Pod) else obj["metadata"]["name"]
        self.calls.append((verb, key))
        self.changed.set()

    async def _update(self, old, new) -> None:  # handlers may be async
        assert old.name == new.name
        self._record("update", new)

    async def wait_for(self, count: int, timeout: float = 5.0) -> None:
        async def until() -> None:
            while len(self.calls) < count:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(until(), timeout)


async def _settle(seconds: float = 0.3) -> None:
    await asyncio.sleep(seconds)


def test_adds_updates_and_deletes_reach_handlers_and_the_store(apiserver):
    async def body():
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            await client.create(NAMESPACES.raw, {"metadata": {"name": "inf"}})
            await client.create(PODS.raw, pod("before", "inf"))
            informer = Informer(client, PODS, namespace="inf")
            rec = Recorder(informer)
            informer.start()
            await informer.wait_for_sync(5)
            assert rec.calls == [("add", "inf/before")]
            await client.create(PODS.raw, pod("after", "inf"))
            await client.patch(PODS.raw, "before", {"metadata": {"labels": {"v": "2"}}}, "inf")
            await client.delete(PODS, "after", "inf", grace_period_seconds=0)
            await rec.wait_for(4)
            await informer.stop()
            before = informer.get("inf/before")
            return rec.calls, before, informer.keys()

    calls, before, keys = run(body())
    assert calls == [
        ("add", "inf/before"),
        ("add", "inf/after"),
        ("update", "inf/before"),
        ("delete", "inf/after"),
    ]
    assert isinstance(before, Pod) and before.labels["v"] == "2"
    assert keys == ["inf/before"]


def test_relist_after_the_watch_window_expired_converges_without_repeats(tmp_path):
    async def body(config):
        async with Client(config) as client:
            await client.create(NAMESPACES.raw, {"metadata": {"name": "win"}})
            for name in ("same", "changed", "gone", "busy"):
                await client.create(PODS.raw, pod(name, "win"))
            informer = Informer(client, PODS, namespace="win", page_size=2)
            rec = Recorder(informer)
            informer.start()
            await informer.wait_for_sync(5)
            await informer.stop()
            stopped_at = informer.resource_version
            # While the informer is away, change things and overrun the window of 4.
            await client.create(PODS.raw, pod("new", "win"))
            await client.patch(PODS.raw, "changed", {"metadata": {"labels": {"x": "1"}}}, "win")
            await client.delete(PODS, "gone", "win", grace_period_seconds=0)
            for i in range(6):
                await client.patch(PODS.raw, "busy", {"metadata": {"labels": {"i": str(i)}}}, "win")
            informer.start()
            await rec.wait_for(4 + 4)
            await _settle()
            await informer.stop()
            return rec.calls, informer, stopped_at

    with start_apiserver(store=new_store(window=4), kubeconfig_path=tmp_path / "kc") as server:
        calls, informer, stopped_at = run(body(load_kubeconfig([server.kubeconfig_path])))
    assert informer.lists == 2  # the resumed watch got ERROR 410 and relisted
    after = calls[4:]
    assert sorted(after) == sorted(
        [
            ("add", "win/new"),
            ("update", "win/changed"),
            ("delete", "win/gone"),
            ("update", "win/busy"),
        ]
    )
    assert informer.keys() == ["win/busy", "win/changed", "win/new", "win/same"]
    assert int(informer.resource_version) > int(stopped_at)


def test_bookmarks_advance_the_resume_point_without_events(apiserver):
    async def body():
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            await client.create(NAMESPACES.raw, {"metadata": {"name": "quiet"}})
            informer = Informer(client, PODS, namespace="quiet")
            rec = Recorder(informer)
            informer.start()
            await informer.wait_for_sync(5)
            synced_at = informer.resource_version
            # A write elsewhere moves the global resourceVersion; a bookmark tells us.
            other = await client.create(NAMESPACES.raw, {"metadata": {"name": "elsewhere"}})
            for _ in range(50):
                await asyncio.sleep(0.1)
                if informer.resource_version == other["metadata"]["resourceVersion"]:
                    break
            await informer.stop()
            return rec.calls, informer, synced_at, other["metadata"]["resourceVersion"]

    calls, informer, synced_at, newest = run(body())
    assert calls == []
    assert informer.bookmarks >= 1
    assert int(informer.resource_version) >= int(newest) > int(synced_at)


def _raw_pod(name: str, rv: int, label: str = "") -> dict:
    obj = pod(name)
    obj["metadata"]["resourceVersion"] = str(rv)
    if label:
        obj["metadata"]["labels"] = {"l": label}
    return obj


def test_a_cut_watch_resumes_from_the_last_version_and_a_410_relists():
    """Stub server: watch 1 sends an event and is cut; watch 2 (from rv 11) replays it,
    which must not be applied twice, then ends; watch 3 is refused with HTTP 410, so
    the informer relists and converges (pod a deleted, c updated)."""
    requests: list[dict] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        query = dict(request.query)
        requests.append(query)
        if query.get("watch") != "true":
            lists = sum(1 for q in requests if q.get("watch") != "true")
            items = (
                [_raw_pod("a", 5), _raw_pod("b", 6)]
                if lists == 1
                else [_raw_pod("b", 6), _raw_pod("c", 14, "relisted")]
            )
            rv = "10" if lists == 1 else "20"
            return web.json_response(
                {"kind": "PodList", "metadata": {"resourceVersion": rv}, "items": items}
            )
        watches = sum(1 for q in requests if q.get("watch") == "true")
        if watches == 3:
            return web.json_response(
                {
                    "kind": "Status",
                    "status": "Failure",
                    "reason": "Expired",
                    "code": 410,
                    "message": "too old",
                },
                status=410,
            )
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        lines = [{"type": "ADDED", "object": _raw_pod("c", 11)}]
        if watches == 2:
            lines.append({"type": "MODIFIED", "object": _raw_pod("c", 12, "x")})
        await response.write(b"".join(json.dumps(e).encode() + b"\n" for e in lines))
        if watches == 1:
            assert request.transport is not None
            request.transport.close()
            return response
        if watches >= 4:
            await asyncio.sleep(10)
        await response.write_eof()
        return response

    async def body():
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", handler)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            async with Client(ConnectionConfig(server=url)) as client:
                informer = Informer(client, PODS, namespace="default", backoff_initial=0.01)
                rec = Recorder(informer)
                informer.start()
                await rec.wait_for(6)
                await _settle(0.2)
                await informer.stop()
                return rec.calls, informer
        finally:
            await runner.cleanup()

    calls, informer = run(body())
    assert calls == [
        ("add", "default/a"),
        ("add", "default/b"),
        ("add", "default/c"),
        ("update", "default/c"),  # rv 12; the replayed rv 11 was not applied again
        ("update", "default/c"),  # relist: rv 14
        ("delete", "default/a"),  # relist: a is gone
    ]
    watch_versions = [q.get("resourceVersion") for q in requests if q.get("watch") == "true"]
    assert watch_versions[:4] == ["10", "11", "12", "20"]
    assert all(q.get("allowWatchBookmarks") == "true" for q in requests if q.get("watch") == "true")
    assert informer.lists == 2 and Counter(v for v, _ in calls)["add"] == 3


def test_a_failing_handler_does_not_stop_the_informer(apiserver):
    async def body():
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            await client.create(NAMESPACES.raw, {"metadata": {"name": "boom"}})
            informer = Informer(client, PODS, namespace="boom")

            def explode(obj):
                raise RuntimeError("handler bug")

            informer.add_handler(on_add=explode)
            rec = Recorder(informer)
            informer.start()
            await informer.wait_for_sync(5)
            await client.create(PODS.raw, pod("one", "boom"))
            await client.create(PODS.raw, pod("two", "boom"))
            await rec.wait_for(2)
            await informer.stop()
            return rec.calls, informer.keys()

    calls, keys = run(body())
    assert calls == [("add", "boom/one"), ("add", "boom/two")]
    assert keys == ["boom/one", "boom/two"]


def test_an_optional_informer_of_an_unserved_collection_is_empty_and_synced(apiserver):
    from kubesched.kube.resources import custom_resource

    unserved = custom_resource("nothing.example.com", "v1", "widgets", "Widget", False)

    async def body():
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            optional = Informer(client, unserved, optional=True)
            required = Informer(client, unserved, backoff_initial=0.05)
            optional.start()
            required.start()
            try:
                await optional.wait_for_sync(timeout=5)
                assert optional.list() == []
                # Without the flag, a 404 is an error the informer keeps retrying.
                await asyncio.sleep(0.3)
                assert not required.has_synced.is_set()
            finally:
                await optional.stop()
                await required.stop()

    run(body())
