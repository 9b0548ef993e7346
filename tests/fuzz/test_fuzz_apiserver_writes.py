"""Fuzzed writes to every served resource: create, update (and /status), patch in every
format (and apply, which is not served), delete of one object and of a collection with
options in the body and the query, and the pods' binding and eviction, the scale
subresource.

The oracle (:mod:`fuzz_http`): every answer is JSON, a failure is a Status below 500,
no request hangs or loses its connection; a refused request changes nothing stored; an
accepted write stored an object the server takes back unchanged.
"""

from __future__ import annotations

import pytest
from fuzz_http import Snapshot
from fuzz_profile import fuzz
from fuzz_requests import (
    BODY_TYPES,
    JSON_PATCH,
    PATCH_TYPES,
    common_query,
    delete_options,
    delete_query,
    label_selector,
    object_bodies,
    patch_bodies,
    query_string,
)
from fuzz_values import encoded, kind_schema, mutated
from fuzz_world import CREATE_ONLY, NAMESPACE, RESOURCE_IDS, collection_path, seed_name, start_world
from hypothesis import given
from hypothesis import strategies as st

from kubesched.apiserver.resources import PODS

UPDATABLE = [rid for rid in RESOURCE_IDS if rid not in CREATE_ONLY]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from start_world(tmp_path_factory)


@pytest.mark.parametrize("rid", RESOURCE_IDS)
@fuzz(examples=12)
@given(data=st.data())
def test_create(world, rid, data):
    res = world.resource(rid)
    base = world.seeds.get(rid) or _template(world, rid)
    base = dict(base, metadata=dict(base["metadata"], name=world.fresh_name(res, "fuzz-new")))
    body = data.draw(object_bodies(res, base), "body")
    content_type = data.draw(BODY_TYPES, "content type")
    query = data.draw(query_string(common_query()), "query")
    path = collection_path(res) + query
    what = f"POST {path} {content_type} {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("POST", path, body, content_type)
    got = world.expect(reply, what, snapshot)
    if reply.status < 300:
        world.check_stored(rid, res, got, what)


def _template(world, rid):
    from fuzz_seeds import seed

    res = world.resource(rid)
    return seed(res, seed_name(res), NAMESPACE)


@pytest.mark.parametrize("rid", UPDATABLE)
@fuzz(examples=12)
@given(data=st.data())
def test_update(world, rid, data):
    res = world.resource(rid)
    world.restore_seed(rid)
    code, stored = world.call("GET", f"{collection_path(res)}/{seed_name(res)}")
    assert code == 200, stored
    sub = data.draw(
        st.sampled_from(["", *[s for s in ("status",) if s in res.subresources]]), "subresource"
    )
    body = data.draw(mutated(stored, kind_schema(res)).flatmap(encoded), "body")
    content_type = data.draw(BODY_TYPES, "content type")
    query = data.draw(query_string(common_query()), "query")
    path = f"{collection_path(res)}/{seed_name(res)}{'/' + sub if sub else ''}{query}"
    what = f"PUT {path} {content_type} {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("PUT", path, body, content_type)
    got = world.expect(reply, what, snapshot)
    if reply.status < 300:
        world.check_stored(rid, res, got, what)


@pytest.mark.parametrize("rid", UPDATABLE)
@fuzz(examples=16)
@given(data=st.data())
def test_patch(world, rid, data):
    res = world.resource(rid)
    world.restore_seed(rid)
    code, stored = world.call("GET", f"{collection_path(res)}/{seed_name(res)}")
    assert code == 200, stored
    sub = data.draw(
        st.sampled_from(["", *[s for s in ("status",) if s in res.subresources]]), "subresource"
    )
    content_type = data.draw(PATCH_TYPES, "content type")
    body = data.draw(patch_bodies(res, stored, content_type), "body")
    query = data.draw(
        query_string(dict(common_query(), force=st.sampled_from(["true", "x"]))), "query"
    )
    path = f"{collection_path(res)}/{seed_name(res)}{'/' + sub if sub else ''}{query}"
    what = f"PATCH {path} {content_type} {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("PATCH", path, body, content_type)
    got = world.expect(reply, what, snapshot)
    if reply.status < 300:
        world.check_stored(rid, res, got, what)


@pytest.mark.parametrize("rid", UPDATABLE)
@fuzz(examples=10)
@given(data=st.data())
def test_delete(world, rid, data):
    res = world.resource(rid)
    victim = world.fresh_name(res)
    world.create_seed(rid, victim)
    collection = data.draw(st.booleans(), "collection")
    body = data.draw(st.one_of(st.none(), delete_options().flatmap(encoded)), "body")
    content_type = data.draw(BODY_TYPES, "content type")
    if collection:
        # The field selector keeps a collection delete to the victim: whatever else the
        # fuzzed label selector says, nothing else can go.
        fixed = {
            "fieldSelector": f"metadata.name={victim}",
            "labelSelector": data.draw(label_selector(), "labels"),
        }
        path = collection_path(res) + data.draw(query_string(delete_query(), fixed), "query")
    else:
        path = f"{collection_path(res)}/{victim}" + data.draw(query_string(delete_query()), "query")
    what = f"DELETE {path} {content_type} {body[:300] if body else body!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send("DELETE", path, body, content_type if body is not None else None)
    world.expect(reply, what, snapshot)


@fuzz(examples=30)
@given(data=st.data())
def test_binding_and_eviction(world, data):
    """POST pods/binding, the bindings collection and pods/eviction with fuzzed bodies."""
    victim = world.fresh_name(PODS)
    world.create_seed("core/pods", victim)
    target = data.draw(st.sampled_from(["binding", "bindings", "eviction"]), "target")
    if target == "eviction":
        base = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": victim, "namespace": NAMESPACE},
        }
        schema = {"$ref": "#/components/schemas/io.k8s.api.policy.v1.Eviction"}
    else:
        base = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": victim, "namespace": NAMESPACE},
            "target": {"kind": "Node", "name": "fuzz-node"},
        }
        schema = {"$ref": "#/components/schemas/io.k8s.api.core.v1.Binding"}
    body = data.draw(mutated(base, schema).flatmap(encoded), "body")
    content_type = data.draw(BODY_TYPES, "content type")
    if target == "bindings":
        path = f"/api/v1/namespaces/{NAMESPACE}/bindings"
    else:
        path = f"/api/v1/namespaces/{NAMESPACE}/pods/{victim}/{target}"
    what = f"POST {path} {content_type} {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, PODS)
    reply = world.send("POST", path, body, content_type)
    world.expect(reply, what, snapshot)


SCALED = [
    rid
    for rid in UPDATABLE
    if rid == "fuzz.example.com/widgets"
    or "scale" in getattr(__import__("fuzz_world").BUILTIN_SERVED.get(rid), "subresources", ())
]


@pytest.mark.parametrize("rid", SCALED)
@fuzz(examples=10)
@given(data=st.data())
def test_scale(world, rid, data):
    res = world.resource(rid)
    world.restore_seed(rid)
    path = f"{collection_path(res)}/{seed_name(res)}/scale"
    reply = world.send("GET", path)
    scale = world.expect(reply, f"GET {path}", None)
    if reply.status != 200:  # a fuzzed update took the replicas away: upstream's 500
        scale = {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {"name": seed_name(res)},
            "spec": {"replicas": 1},
        }
    method = data.draw(st.sampled_from(["PUT", "PATCH"]), "method")
    schema = {"$ref": "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"}
    if method == "PUT":
        content_type = data.draw(BODY_TYPES, "content type")
        body = data.draw(mutated(scale, schema).flatmap(encoded), "body")
    else:
        content_type = data.draw(PATCH_TYPES, "content type")
        from fuzz_requests import json_patch, merge_patch

        value = json_patch(schema) if content_type == JSON_PATCH else merge_patch(schema, scale)
        body = data.draw(value.flatmap(encoded), "body")
    what = f"{method} {path} {content_type} {body[:300]!r}"
    snapshot = Snapshot(world.handle.store, res)
    reply = world.send(method, path, body, content_type)
    world.expect(reply, what, snapshot)
