"""``kubesched.kube`` with custom resources: a CRD created through the client, and an
informer listing and watching its custom resource by (group, version, plural)."""

from __future__ import annotations

import asyncio

import pytest
from kube_helpers import run

from kubesched.kube import Client, Informer, load_kubeconfig
from kubesched.kube.resources import CUSTOM_RESOURCE_DEFINITIONS, custom_resource

PODGROUPS = custom_resource("scheduling.example.io", "v1alpha1", "podgroups", "PodGroup")

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.example.io"},
    "spec": {
        "group": "scheduling.example.io",
        "scope": "Namespaced",
        "names": {"plural": "podgroups", "kind": "PodGroup"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"minMember": {"type": "integer", "default": 1}},
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def _group(name: str) -> dict:
    return {
        "apiVersion": "scheduling.example.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {},
    }


def test_an_informer_lists_and_watches_a_custom_resource(apiserver):
    async def body():
        async with Client(load_kubeconfig([apiserver.kubeconfig_path])) as client:
            await client.create(CUSTOM_RESOURCE_DEFINITIONS, CRD)
            await client.create(PODGROUPS, _group("before"))
            informer = Informer(client, PODGROUPS, namespace="default")
            seen: list[tuple[str, str, int]] = []
            changed = asyncio.Event()

            def record(verb, obj):
                seen.append((verb, obj["metadata"]["name"], obj["spec"]["minMember"]))
                changed.set()

            informer.add_handler(
                on_add=lambda o: record("add", o),
                on_update=lambda old, new: record("update", new),
                on_delete=lambda o: record("delete", o),
            )
            informer.start()
            await informer.wait_for_sync(5)
            await client.create(PODGROUPS, _group("after"))
            await client.patch(PODGROUPS, "before", {"spec": {"minMember": 3}}, "default")
            await client.delete(PODGROUPS, "after", "default")
            while len(seen) < 4:
                changed.clear()
                await asyncio.wait_for(changed.wait(), 5)
            await informer.stop()
            return seen, informer.keys()

    seen, keys = run(body())
    assert seen == [
        ("add", "before", 1),
        ("add", "after", 1),
        ("update", "before", 3),
        ("delete", "after", 1),
    ]
    assert keys == ["default/before"]


def test_a_custom_resource_needs_every_name():
    with pytest.raises(ValueError, match="needs a group, version, plural and kind"):
        custom_resource("", "v1", "things", "Thing")
