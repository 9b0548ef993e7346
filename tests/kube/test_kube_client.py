"""The REST client against the real embedded API server: CRUD, selectors, pagination,
binding, events, status patches, leases, rate limiting."""

from __future__ import annotations

import time

import pytest
from kube_helpers import node, pod, run

from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import EVENTS, LEASES, NAMESPACES, NODES, PODS
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod


def test_create_get_update_delete_a_pod(with_client):
    async def body(client: Client):
        created = await client.create(PODS, pod("crud", labels={"app": "a"}))
        assert isinstance(created, Pod) and created.key == "default/crud"
        got = await client.get(PODS.raw, "crud", "default")
        got["metadata"]["labels"]["tier"] = "web"
        updated = await client.update(PODS, got)
        assert dict(updated.labels) == {"app": "a", "tier": "web"}
        patched = await client.patch(PODS, "crud", {"metadata": {"labels": {"x": "1"}}}, "default")
        assert patched.labels["x"] == "1"
        ops = [{"op": "remove", "path": "/metadata/labels/x"}]
        patched = await client.patch(PODS, "crud", ops, "default", patch_type="json")
        assert "x" not in patched.labels
        await client.delete(PODS, "crud", "default", grace_period_seconds=0)
        with pytest.raises(NotFound):
            await client.get(PODS, "crud", "default")

    with_client(body)


def test_nodes_decode_into_compact_objects(with_client):
    async def body(client: Client):
        await client.create(NODES, node("n-decode", {"zone": "a"}))
        got = await client.get(NODES, "n-decode")
        assert isinstance(got, Node) and got.labels["zone"] == "a"
        namespaces = await client.list(NAMESPACES)
        assert {"default", "kube-system"} <= {ns.name for ns in namespaces.items}

    with_client(body)


def test_label_and_field_selectors(with_client):
    async def body(client: Client):
        await client.create(NAMESPACES.raw, {"metadata": {"name": "sel"}})
        for i in range(4):
            await client.create(PODS.raw, pod(f"s{i}", "sel", {"parity": str(i % 2)}))
        odd = await client.list(PODS, "sel", label_selector="parity=1")
        assert [p.name for p in odd.items] == ["s1", "s3"]
        named = await client.list(PODS, "sel", field_selector="metadata.name=s2")
        assert [p.name for p in named.items] == ["s2"]
        everywhere = await client.list(PODS, None, label_selector="parity in (0)")
        assert {p.key for p in everywhere.items} == {"sel/s0", "sel/s2"}

    with_client(body)


def test_pagination_with_limit_and_continue(with_client):
    async def body(client: Client):
        await client.create(NAMESPACES.raw, {"metadata": {"name": "pages"}})
        for i in range(7):
            await client.create(PODS.raw, pod(f"p{i}", "pages"))
        first = await client.list(PODS, "pages", limit=3)
        assert len(first.items) == 3 and first.continue_token
        second = await client.list(PODS, "pages", limit=3, continue_token=first.continue_token)
        assert [p.name for p in second.items] == ["p3", "p4", "p5"]
        everything = await client.list_all(PODS, "pages", page_size=2)
        assert [p.name for p in everything.items] == [f"p{i}" for i in range(7)]
        assert int(everything.resource_version) >= int(first.resource_version)

    with_client(body)


def test_bind_sets_the_node_and_a_second_bind_conflicts(with_client):
    from kubesched.kube import Conflict

    async def body(client: Client):
        created = await client.create(PODS, pod("bindme"))
        await client.bind("default", "bindme", "node-1", uid=created.uid)
        bound = await client.get(PODS, "bindme", "default")
        assert bound.node_name == "node-1"
        with pytest.raises(Conflict) as caught:
            await client.bind("default", "bindme", "node-2")
        assert caught.value.status["kind"] == "Status" and caught.value.code == 409

    with_client(body)


def test_events_and_pod_status_patches(with_client):
    async def body(client: Client):
        created = await client.create(PODS.raw, pod("unsched"))
        ref = {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": "default",
            "name": "unsched",
            "uid": created["metadata"]["uid"],
        }
        event = await client.create_event(
            ref, "FailedScheduling", "0/3 nodes are available", "Warning"
        )
        assert event["metadata"]["name"].startswith("unsched.")
        listed = await client.list(EVENTS, "default", field_selector="involvedObject.name=unsched")
        assert [e["reason"] for e in listed.items] == ["FailedScheduling"]
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available",
        }
        patched = await client.patch_pod_status(
            "default", "unsched", {"status": {"conditions": [condition]}}
        )
        conditions = patched["status"]["conditions"]
        assert [(c["type"], c["status"]) for c in conditions] == [("PodScheduled", "False")]

    with_client(body)


def test_leases_get_create_update_with_optimistic_concurrency(with_client):
    from kubesched.kube import AlreadyExists, Conflict

    async def body(client: Client):
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kubesched", "namespace": "kube-system"},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
        }
        created = await client.create_lease(lease)
        with pytest.raises(AlreadyExists):
            await client.create_lease(lease)
        got = await client.get_lease("kube-system", "kubesched")
        got["spec"]["holderIdentity"] = "b"
        renewed = await client.update_lease(got)
        assert renewed["spec"]["holderIdentity"] == "b"
        created["spec"]["holderIdentity"] = "c"  # stale resourceVersion
        with pytest.raises(Conflict):
            await client.update_lease(created)
        assert (await client.list(LEASES, "kube-system")).items[0]["spec"]["holderIdentity"] == "b"

    with_client(body)


def test_qps_and_burst_limit_the_request_rate(with_client):
    async def body(client: Client):
        start = time.monotonic()
        for _ in range(5):  # the burst: no wait
            await client.get(NAMESPACES, "default")
        burst_done = time.monotonic()
        for _ in range(5):  # then 10 per second
            await client.get(NAMESPACES, "default")
        return burst_done - start, time.monotonic() - burst_done

    burst, limited = with_client(body, qps=10, burst=5)
    assert burst < 0.3
    assert 0.4 <= limited < 2.0


def test_a_kubeconfig_token_is_sent_as_a_bearer_header(apiserver, tmp_path):
    from aiohttp import web

    seen: list[str] = []

    async def body():
        async def handler(request: web.Request) -> web.Response:
            seen.append(request.headers.get("Authorization", ""))
            return web.json_response({"kind": "Namespace", "metadata": {"name": "default"}})

        app = web.Application()
        app.router.add_get("/api/v1/namespaces/default", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        from kubesched.apiserver.runner import write_kubeconfig

        path = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}", token="s3cret")
        try:
            async with Client(load_kubeconfig([path])) as client:
                await client.get(NAMESPACES, "default")
        finally:
            await runner.cleanup()

    run(body())
    assert seen == ["Bearer s3cret"]
