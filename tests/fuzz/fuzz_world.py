"""The fuzzed API server: started for real once per test module, with one valid object of
every served resource (its seed) to update, patch and delete, a custom resource of the
fuzzer's own CRD among them, and the paths and checks the fuzz tests share.

The resources come from the server's own registry (:data:`kubesched.apiserver.resources.BUILTIN`
and the store's resources at run time): a resource added there is fuzzed without a word
here (:mod:`fuzz_seeds` gives it a valid object if metadata alone is not one).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import fuzz_profile
from fuzz_http import Client, Reply, Snapshot, check_answer
from fuzz_seeds import object_name, seed

from kubesched.apiserver.resources import BUILTIN, Resource
from kubesched.apiserver.runner import ApiServerHandle, start_apiserver

NAMESPACE = "fuzz"
SEED = "fuzz-seed"
CR_GROUP = "fuzz.example.com"
#: The fuzzer's custom resource: a CRD with a structural schema of several field types.
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{CR_GROUP}"},
    "spec": {
        "group": CR_GROUP,
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                    },
                },
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {
                                        "type": "string",
                                        "pattern": "^[a-z]+$",
                                        "maxLength": 10,
                                    },
                                    "replicas": {"type": "integer", "minimum": 0, "maximum": 100},
                                    "mode": {"type": "string", "enum": ["A", "B"]},
                                    "port": {"x-kubernetes-int-or-string": True},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                    "labels": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "extra": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "phase": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}
#: Served resources, by the id the tests are named after: the registry's built-ins (every
#: served one) and the fuzzer's custom resource.
BUILTIN_SERVED = {f"{r.group or 'core'}/{r.plural}": r for r in BUILTIN if r.served}
CUSTOM_ID = f"{CR_GROUP}/widgets"
RESOURCE_IDS = [*BUILTIN_SERVED, CUSTOM_ID]
#: Resources that are only ever created (bindings, the self-reviews): nothing to read back.
CREATE_ONLY = frozenset(rid for rid, r in BUILTIN_SERVED.items() if set(r.verbs) == {"create"})


def seed_name(res: Resource) -> str:
    """The seed's name: a view (events.k8s.io events) shares its storage, so has its own."""
    return object_name(res, SEED if res.view_of is None else f"{SEED}-{res.group.split('.')[0]}")


def collection_path(res: Resource, namespace: str = NAMESPACE) -> str:
    prefix = f"/apis/{res.group}/{res.version}" if res.group else "/api/v1"
    if res.namespaced:
        return f"{prefix}/namespaces/{namespace}/{res.plural}"
    return f"{prefix}/{res.plural}"


@dataclass
class World:
    handle: ApiServerHandle
    client: Client
    #: The seed object as first created, by resource id.
    seeds: dict[str, dict[str, Any]] = field(default_factory=dict)
    _names: Iterator[int] = field(default_factory=lambda: itertools.count())
    #: The length of the last fuzzed request line.
    last_line: int = 0

    def __repr__(self) -> str:
        return f"World({self.handle.url})"

    def resource(self, rid: str) -> Resource:
        if rid == CUSTOM_ID:
            found = self.handle.store.resource(CR_GROUP, "v1", "widgets")
            assert found is not None, "the fuzzer's CRD is not served"
            return found
        return BUILTIN_SERVED[rid]

    def fresh_name(self, res: Resource, stem: str = "fuzz-victim") -> str:
        return object_name(res, f"{stem}-{next(self._names)}")

    def send(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str | None = "application/json",
        accept: str = "application/json",
        watch: bool = False,
    ) -> Reply:
        fuzz_profile.count()
        self.last_line = len(method) + len(path.encode()) + len(" HTTP/1.1")
        return self.client.request(method, path, body, content_type, accept, watch)

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """A well-formed request of the fuzzer's own (setting up, checking)."""
        data = None if body is None else json.dumps(body).encode()
        reply = self.client.request(method, path, data)
        return reply.status, reply.json()

    def create_seed(self, rid: str, name: str) -> dict[str, Any]:
        res = self.resource(rid)
        body = seed(res, name, NAMESPACE)
        code, got = self.call("POST", collection_path(res), body)
        assert code in (200, 201), f"seed {rid} {name}: {code} {got}"
        return body

    def restore_seed(self, rid: str) -> None:
        """Create the seed again if a fuzzed request deleted it."""
        res = self.resource(rid)
        if rid in CREATE_ONLY:
            return
        code, _ = self.call("GET", f"{collection_path(res)}/{seed_name(res)}")
        if code == 404:
            self.create_seed(rid, seed_name(res))

    def expect(self, reply: Reply, what: str, snapshot: Snapshot | None) -> Any:
        """Hold ``reply`` to the oracle; when refused, nothing stored may have changed."""
        body = check_answer(reply, what[:2000], self.last_line)
        if reply.status >= 300 and snapshot is not None:
            snapshot.assert_unchanged(what[:2000])
        return body

    def check_stored(self, rid: str, res: Resource, body: Any, what: str) -> None:
        """After a write that succeeded: the object reads back and is one the server
        takes back unchanged (nothing invalid got stored)."""
        if rid in CREATE_ONLY or not isinstance(body, dict) or body.get("kind") == "Status":
            return
        meta = body.get("metadata") or {}
        name = meta.get("name")
        if not name:
            return
        path = f"{collection_path(res, meta.get('namespace') or NAMESPACE)}/{name}"
        code, stored = self.call("GET", path)
        if code == 404:
            return  # deleted meanwhile (a delete that succeeded, a zero grace period)
        assert code == 200, f"{what}: stored, then GET {path}: {code} {stored}"
        again = copy.deepcopy(stored)
        code, got = self.call("PUT", path, again)
        assert code == 200, (
            f"{what}: stored {json.dumps(stored)[:1500]}, but PUT back: {code} {got}"
        )


def start_world(tmp_path_factory: Any) -> Iterator[World]:
    """The server for one module, seeded; stopped after it."""
    path = tmp_path_factory.mktemp("fuzz") / "kubeconfig"
    handle = start_apiserver(kubeconfig_path=path, bookmark_interval=0.2)
    world = World(handle, Client(handle.url))
    try:
        code, got = world.call("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        assert code == 201, got
        node = {
            "metadata": {"name": "fuzz-node"},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}},
        }
        assert world.call("POST", "/api/v1/nodes", node)[0] == 201
        code, got = world.call(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD
        )
        assert code == 201, got
        for rid in RESOURCE_IDS:
            if rid not in CREATE_ONLY:
                world.seeds[rid] = world.create_seed(rid, seed_name(world.resource(rid)))
        yield world
    finally:
        world.client.close()
        handle.stop()
