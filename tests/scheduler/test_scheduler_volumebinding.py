"""VolumeBinding in the live scheduler, against the real embedded API server: a pod whose
claim waits for its first consumer gets the claim's ``selected-node`` (dynamic
provisioning) or a volume's ``claimRef`` (static binding) written by PreBind, and is bound
only once the claim is bound. The test plays the provisioner and the PV controller with
the official ``kubernetes`` client. A pod whose claim does not exist stays pending with
upstream's message."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.config import load_config
from kubesched.kube import Client, NotFound, load_kubeconfig
from kubesched.kube.resources import EVENTS, NODES, PODS
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
HOSTNAME = "kubernetes.io/hostname"

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: kubesched
    plugins:
      multiPoint:
        enabled: [{name: VolumeBinding}]
"""


@pytest.fixture
def apiserver(tmp_path: Path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def pod(name: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [{"name": "c", "image": "pause"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {HOSTNAME: "n1"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


async def until(check: Callable[[], Any], what: str, timeout: float = 15.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def node_of(client: Client, name: str) -> str:
    try:
        raw = await client.get(PODS.raw, name, "default")
    except NotFound:
        return ""
    return str(raw.get("spec", {}).get("nodeName", ""))


def run(apiserver: ApiServerHandle, tmp_path: Path, body: Callable[..., Any]) -> None:
    """``body(client, core, storage)`` with the scheduler running on one node; ``core`` and
    ``storage`` are the official client's APIs (blocking: call them in a thread)."""
    config_path = tmp_path / "config.yaml"
    config_path.write_text(CONFIG)
    api = k8s_config.new_client_from_config(config_file=str(apiserver.kubeconfig_path))
    core, storage = k8s.CoreV1Api(api), k8s.StorageV1Api(api)

    async def main() -> None:
        connection = load_kubeconfig([apiserver.kubeconfig_path])
        async with Client(connection, qps=1000, burst=1000) as client:
            scheduler = Scheduler(
                load_config(config_path), in_tree_registry(), client, rng=random.Random(0)
            )
            task = asyncio.create_task(scheduler.run())
            try:
                await until(lambda: scheduler.synced, "informers synced")
                await client.create(NODES.raw, NODE)
                await until(lambda: scheduler.cache.node_count() == 1, "node cached")
                await body(client, core, storage)
            finally:
                scheduler.stop()
                await task

    try:
        asyncio.run(asyncio.wait_for(main(), 60.0))
    finally:
        api.close()


def wait_class(storage: k8s.StorageV1Api, provisioner: str) -> None:
    storage.create_storage_class(
        k8s.V1StorageClass(
            metadata=k8s.V1ObjectMeta(name="wait"),
            provisioner=provisioner,
            volume_binding_mode="WaitForFirstConsumer",
        )
    )


def claim(core: k8s.CoreV1Api, name: str) -> k8s.V1PersistentVolumeClaim:
    return core.create_namespaced_persistent_volume_claim(
        "default",
        k8s.V1PersistentVolumeClaim(
            metadata=k8s.V1ObjectMeta(name=name),
            spec=k8s.V1PersistentVolumeClaimSpec(
                storage_class_name="wait",
                access_modes=["ReadWriteOnce"],
                resources=k8s.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
            ),
        ),
    )


def volume(name: str, claim_ref: k8s.V1ObjectReference | None = None) -> k8s.V1PersistentVolume:
    affinity = k8s.V1VolumeNodeAffinity(
        required=k8s.V1NodeSelector(
            node_selector_terms=[
                k8s.V1NodeSelectorTerm(
                    match_expressions=[
                        k8s.V1NodeSelectorRequirement(key=HOSTNAME, operator="In", values=["n1"])
                    ]
                )
            ]
        )
    )
    return k8s.V1PersistentVolume(
        metadata=k8s.V1ObjectMeta(name=name),
        spec=k8s.V1PersistentVolumeSpec(
            capacity={"storage": "1Gi"},
            access_modes=["ReadWriteOnce"],
            storage_class_name="wait",
            host_path=k8s.V1HostPathVolumeSource(path=f"/tmp/{name}"),
            node_affinity=affinity,
            claim_ref=claim_ref,
        ),
    )


def bind_claim(core: k8s.CoreV1Api, name: str, volume_name: str) -> None:
    """What the PV controller does last: the claim names its volume, binding completed."""
    pvc = core.read_namespaced_persistent_volume_claim(name, "default")
    pvc.spec.volume_name = volume_name
    pvc.metadata.annotations = {**(pvc.metadata.annotations or {}), BIND_COMPLETED: "yes"}
    core.replace_namespaced_persistent_volume_claim(name, "default", pvc)


def test_a_wait_for_first_consumer_claim_is_provisioned_on_the_chosen_node(apiserver, tmp_path):
    async def body(client: Client, core: k8s.CoreV1Api, storage: k8s.StorageV1Api) -> None:
        await asyncio.to_thread(wait_class, storage, "test.csi.example.com")
        created = await asyncio.to_thread(claim, core, "data")
        await client.create(PODS.raw, pod("web", "data"))

        def selected() -> str:
            pvc = core.read_namespaced_persistent_volume_claim("data", "default")
            return str((pvc.metadata.annotations or {}).get(SELECTED_NODE, ""))

        assert await until(lambda: asyncio.to_thread(selected), "the selected node") == "n1"
        # PreBind waits for the provisioner: the pod is not bound yet.
        assert await node_of(client, "web") == ""
        ref = k8s.V1ObjectReference(
            kind="PersistentVolumeClaim",
            namespace="default",
            name="data",
            uid=created.metadata.uid,
        )
        name = f"pvc-{created.metadata.uid}"
        await asyncio.to_thread(core.create_persistent_volume, volume(name, ref))
        await asyncio.to_thread(bind_claim, core, "data", name)
        assert await until(lambda: node_of(client, "web"), "the pod bound") == "n1"

    run(apiserver, tmp_path, body)


def test_a_static_volume_gets_the_claim_ref_and_the_pod_binds_once_the_claim_is_bound(
    apiserver, tmp_path
):
    async def body(client: Client, core: k8s.CoreV1Api, storage: k8s.StorageV1Api) -> None:
        await asyncio.to_thread(wait_class, storage, "kubernetes.io/no-provisioner")
        await asyncio.to_thread(core.create_persistent_volume, volume("local-n1"))
        # The PV controller makes a new volume Available; only then does it match.
        await asyncio.to_thread(
            core.patch_persistent_volume_status, "local-n1", {"status": {"phase": "Available"}}
        )
        created = await asyncio.to_thread(claim, core, "logs")
        await client.create(PODS.raw, pod("reader", "logs"))

        def claim_ref() -> Any:
            return core.read_persistent_volume("local-n1").spec.claim_ref

        ref = await until(lambda: asyncio.to_thread(claim_ref), "the volume's claimRef")
        assert (ref.namespace, ref.name, ref.uid) == ("default", "logs", created.metadata.uid)
        pv = await asyncio.to_thread(core.read_persistent_volume, "local-n1")
        assert pv.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
        assert await node_of(client, "reader") == ""
        await asyncio.to_thread(bind_claim, core, "logs", "local-n1")
        assert await until(lambda: node_of(client, "reader"), "the pod bound") == "n1"

    run(apiserver, tmp_path, body)


def test_a_pod_whose_claim_does_not_exist_stays_pending_with_upstreams_message(apiserver, tmp_path):
    async def body(client: Client, core: k8s.CoreV1Api, storage: k8s.StorageV1Api) -> None:
        await client.create(PODS.raw, pod("lonely", "missing"))

        async def failed() -> str:
            events = (await client.list(EVENTS, "default")).items
            return next(
                (
                    e["message"]
                    for e in events
                    if e["involvedObject"].get("name") == "lonely"
                    and e.get("reason") == "FailedScheduling"
                ),
                "",
            )

        message = await until(failed, "FailedScheduling")
        assert message.startswith(
            '0/1 nodes are available: persistentvolumeclaim "missing" not found.'
        )
        assert await node_of(client, "lonely") == ""

    run(apiserver, tmp_path, body)
