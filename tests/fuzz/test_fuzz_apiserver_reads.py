"""Fuzzed reads of every served resource: list and watch with label and field selectors,
paging, resourceVersion and the other query parameters, as JSON and as Table; reads and
writes of odd names and namespaces in the path.

The oracle (:mod:`fuzz_http`): every answer is JSON (a watch streams JSON events, none an
internal error), a failure is a Status below 500, no request hangs or loses its
connection, and no read changes anything stored.
"""

from __future__ import annotations

import pytest
from fuzz_http import Snapshot, check_watch
from fuzz_profile import fuzz
from fuzz_requests import list_query, odd_names, query_string
from fuzz_world import NAMESPACE, RESOURCE_IDS, collection_path, start_world
from hypothesis import given
from hypothesis import strategies as st

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"
ACCEPTS = st.sampled_from(
    [
        "application/json",
        "application/json",
        TABLE,
        "application/json;as=Table;v=v9;g=x",
        "*/*",
        "text/html",
    ]
)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from start_world(tmp_path_factory)


@pytest.mark.parametrize("rid", RESOURCE_IDS)
@fuzz(examples=12)
@given(data=st.data())
def test_list(world, rid, data):
    res = world.resource(rid)
    namespace = data.draw(st.sampled_from([NAMESPACE, NAMESPACE, ""]), "namespace")
    path = (
        collection_path(res, namespace)
        if namespace or not res.namespaced
        else collection_path(res).replace(f"/namespaces/{NAMESPACE}", "")
    )
    path += data.draw(query_string(list_query(res, watch=False)), "query")
    accept = data.draw(ACCEPTS, "accept")
    what = f"GET {path[:300]} Accept {accept}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("GET", path, accept=accept)
    world.expect(reply, what, None)
    snapshot.assert_unchanged(what)


@pytest.mark.parametrize("rid", RESOURCE_IDS)
@fuzz(examples=8)
@given(data=st.data())
def test_watch(world, rid, data):
    res = world.resource(rid)
    path = collection_path(res)
    if data.draw(st.booleans(), "legacy /watch/ path"):
        prefix, _, rest = path.partition(f"/{res.version}/")
        path = f"{prefix}/{res.version}/watch/{rest}"
        if data.draw(st.booleans(), "one object"):
            path += f"/{data.draw(st.sampled_from(['fuzz-seed', 'missing']), 'name')}"
        query = data.draw(query_string(list_query(res, watch=False)), "query")
    else:
        # (``?watch=true`` on one object's path is a GET, as upstream's request info says.)
        query = data.draw(query_string(list_query(res, watch=True), {"watch": "true"}), "query")
    path += query
    accept = data.draw(ACCEPTS, "accept")
    what = f"GET {path[:300]} Accept {accept}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("GET", path, accept=accept, watch=True)
    check_watch(reply, what, world.last_line)
    snapshot.assert_unchanged(what)


@pytest.mark.parametrize("rid", RESOURCE_IDS)
@fuzz(examples=6)
@given(data=st.data())
def test_odd_names_in_the_path(world, rid, data):
    res = world.resource(rid)
    name = data.draw(odd_names(), "name")
    namespace = data.draw(st.one_of(st.just(NAMESPACE), odd_names()), "namespace")
    sub = data.draw(
        st.sampled_from(["", "", "status", "scale", "binding", "eviction", "x", "status/x"]),
        "subresource",
    )
    method = data.draw(
        st.sampled_from(["GET", "PUT", "PATCH", "DELETE", "POST", "OPTIONS", "HEAD"]), "method"
    )
    path = f"{collection_path(res, namespace)}/{name}" + (f"/{sub}" if sub else "")
    body = b'{"metadata":{"name":"x"}}' if method in ("PUT", "PATCH", "POST") else None
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    what = f"{method} {path[:300]}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send(method, path, body, content_type)
    if method == "HEAD":
        assert reply.status < 500, f"{what}: {reply.status}"
    else:
        world.expect(reply, what, snapshot)
    if reply.status >= 300:
        snapshot.assert_unchanged(what)
