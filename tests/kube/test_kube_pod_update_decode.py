"""``decode_pod_update``: a pod update decoded from the previous version must equal a
full decode, whatever changed; a binding reuses the decoded containers."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.apiserver.runner import start_apiserver
from kubesched.kube import Client, Informer, load_kubeconfig
from kubesched.kube.resources import PODS, decode_pod_update
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import Pod


def _raw() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "7",
            "labels": {"app": "web"},
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {
            "schedulerName": "s",
            "priority": 5,
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}],
                }
            ],
            "initContainers": [{"name": "init", "image": "j", "restartPolicy": "Always"}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            },
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    *parents, last = path.split(".")

    def change(raw: dict[str, Any]) -> None:
        node = raw
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value

    return change


CHANGES = {
    "bound": _set("spec.nodeName", "n1"),
    "running": _set("status.phase", "Running"),
    "nominated": _set("status.nominatedNodeName", "n2"),
    "conditions-only": _set("status.conditions", [{"type": "PodScheduled", "status": "True"}]),
    "resource-version-only": _set("metadata.resourceVersion", "8"),
    "labels": _set("metadata.labels", {"app": "db"}),
    "deleting": _set("metadata.deletionTimestamp", "2026-01-01T00:01:00Z"),
    "uid": _set("metadata.uid", "u2"),
    "qos": _set("status.qosClass", "Guaranteed"),
    "qos-removed": _set("status.qosClass", None),
    "container-request": _set(
        "spec.containers", [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]
    ),
    "toleration-removed": _set("spec.tolerations", None),
    "priority": _set("spec.priority", 9),
    "new-spec-field": _set("spec.hostNetwork", True),
    "status-dropped": lambda raw: raw.pop("status"),
}


@pytest.mark.parametrize("first", sorted(CHANGES))
@pytest.mark.parametrize("second", ["bound", "labels", "qos", "container-request"])
def test_update_decode_equals_a_full_decode(first: str, second: str) -> None:
    old_raw = _raw()
    old = Pod.from_dict(old_raw)
    new_raw = copy.deepcopy(old_raw)
    CHANGES[first](new_raw)
    CHANGES[second](new_raw)
    assert decode_pod_update(old, old_raw, new_raw) == Pod.from_dict(new_raw)


def test_a_binding_reuses_the_decoded_spec() -> None:
    old_raw = _raw()
    old = Pod.from_dict(old_raw)
    new_raw = copy.deepcopy(old_raw)
    CHANGES["bound"](new_raw)
    CHANGES["running"](new_raw)
    new = decode_pod_update(old, old_raw, new_raw)
    assert (new.node_name, new.phase) == ("n1", "Running")
    assert (
        new.containers is old.containers
        and new.required_anti_affinity is old.required_anti_affinity
    )


def test_a_malformed_update_is_reported_as_the_full_decoder_does() -> None:
    old_raw = _raw()
    old = Pod.from_dict(old_raw)
    new_raw = copy.deepcopy(old_raw)
    new_raw["spec"]["nodeName"] = 42
    with pytest.raises(ObjectError, match="nodeName"):
        decode_pod_update(old, old_raw, new_raw)


def test_an_informer_follows_bindings_and_changes_through_update_decoding(tmp_path) -> None:
    import asyncio

    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=1) as server:

        async def body() -> tuple[Pod | None, Pod | None]:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                informer: Informer[Pod] = Informer(client, PODS)
                informer.start()
                await informer.wait_for_sync(10)
                raw = _raw()
                raw["metadata"] = {"name": "p", "namespace": "default", "labels": {"a": "1"}}
                del raw["status"]
                del raw["spec"]["priority"]
                await client.create(PODS.raw, raw)
                await client.bind("default", "p", "node-0")
                await client.patch(PODS.raw, "p", {"metadata": {"labels": {"a": "2"}}}, "default")
                for _ in range(100):
                    pod = informer.get("default/p")
                    if pod is not None and pod.node_name and pod.labels.get("a") == "2":
                        break
                    await asyncio.sleep(0.05)
                fresh = await client.get(PODS, "p", "default")
                await informer.stop()
                return informer.get("default/p"), fresh

        seen, fresh = asyncio.run(body())
    assert seen is not None and seen == fresh
    assert seen.node_name == "node-0" and seen.labels == {"a": "2"}
