"""The live scheduler's volume plugins against the embedded API server: a pod whose claim
does not exist stays Pending with upstream's message, and is scheduled once the claim (and
its volume) appear — the storage informers feed the plugins and their events requeue it;
a bound volume's zone keeps its pod in that zone."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from test_scheduler_live import events_for, make_node, make_pod, node_of, pod_raw, run, until

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.kube import Client, NotFound
from kubesched.kube.resources import (
    CSI_NODES,
    NODES,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
)
from kubesched.scheduler.scheduler import Scheduler

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def apiserver(tmp_path) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


async def serves_claims(client: Client) -> bool:
    try:
        await client.list(PERSISTENT_VOLUME_CLAIMS.raw, "default")
    except NotFound:
        return False
    return True


def zonal_node(name: str, zone: str) -> dict[str, Any]:
    raw = make_node(name)
    raw["metadata"]["labels"][ZONE] = zone
    return raw


def volume(name: str, zone: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {ZONE: zone}},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "csi": {"driver": "csi.example.com", "volumeHandle": name},
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim},
        },
    }


def claim(name: str, volume_name: str) -> dict[str, Any]:
    # Bound as the PV controller leaves a claim (bind-completed): VolumeBinding waits for
    # that on a claim that only names its volume, and no PV controller runs here.
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "",
            "volumeName": volume_name,
        },
    }


def test_a_missing_claim_keeps_the_pod_pending_until_it_exists(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        if not await serves_claims(client):
            pytest.skip("this API server does not serve PersistentVolumeClaims yet")
        for name, zone in (("node-a", "zone-a"), ("node-b", "zone-b")):
            await client.create(NODES.raw, zonal_node(name, zone))
        pod = make_pod("web").raw
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
        await client.create(PODS.raw, pod)
        events = await until(lambda: events_for(client, "web", "FailedScheduling"))
        assert events[0]["message"].startswith(
            '0/2 nodes are available: persistentvolumeclaim "data" not found.'
        )
        # The claim's creation (a PersistentVolumeClaim Add event) requeues the pod; its
        # volume is in zone-b, so VolumeZone keeps it there.
        await client.create(PERSISTENT_VOLUMES.raw, volume("pv-data", "zone-b", "data"))
        await client.create(PERSISTENT_VOLUME_CLAIMS.raw, claim("data", "pv-data"))

        async def bound() -> str:
            return node_of(await pod_raw(client, "web"))

        assert await until(bound, what="the pod bound") == "node-b"

    run(body, apiserver)


def test_the_storage_informers_sync_and_hold_the_objects(apiserver):
    async def body(client: Client, scheduler: Scheduler) -> None:
        if not await serves_claims(client):
            pytest.skip("this API server does not serve PersistentVolumeClaims yet")
        await client.create(PERSISTENT_VOLUMES.raw, volume("pv-1", "zone-a", "c1"))
        await client.create(PERSISTENT_VOLUME_CLAIMS.raw, claim("c1", "pv-1"))
        lister = scheduler.lister
        found = await until(lambda: lister.persistent_volume_claim("default", "c1"))
        assert found.volume_name == "pv-1"
        pv = await until(lambda: lister.persistent_volume("pv-1"))
        assert pv.labels[ZONE] == "zone-a"
        version = lister.storage_version()
        raw = await client.get(PERSISTENT_VOLUMES.raw, "pv-1")
        raw["metadata"]["labels"][ZONE] = "zone-b"
        await client.update(PERSISTENT_VOLUMES.raw, raw)
        moved = await until(lambda: lister.persistent_volume("pv-1").labels[ZONE] == "zone-b")
        assert moved and lister.storage_version() > version

    run(body, apiserver)


def test_a_node_at_its_attach_limit_gets_no_more_volume_pods(apiserver):
    """CSINodes reach NodeVolumeLimits through the live informers: node-a attaches one
    volume of the driver and has one, so the next volume pod goes to node-b; raising
    node-a's limit (a CSINode update) lets a third in."""

    def csi_node(name: str, count: int) -> dict[str, Any]:
        return {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": name},
            "spec": {
                "drivers": [
                    {"name": "csi.example.com", "nodeID": name, "allocatable": {"count": count}}
                ]
            },
        }

    async def body(client: Client, scheduler: Scheduler) -> None:
        if not await serves_claims(client):
            pytest.skip("this API server does not serve PersistentVolumeClaims yet")
        for name in ("node-a", "node-b"):
            await client.create(NODES.raw, zonal_node(name, "zone-a"))
        await client.create(CSI_NODES.raw, csi_node("node-a", 1))
        await client.create(CSI_NODES.raw, csi_node("node-b", 1))
        for i in range(3):
            await client.create(PERSISTENT_VOLUMES.raw, volume(f"pv-{i}", "zone-a", f"c{i}"))
            await client.create(PERSISTENT_VOLUME_CLAIMS.raw, claim(f"c{i}", f"pv-{i}"))
        await until(lambda: scheduler.lister.csi_node("node-b"), what="the CSINodes listed")

        async def place(name: str, claim_name: str, pinned: str = "") -> str:
            pod = make_pod(name).raw
            pod["spec"]["volumes"] = [
                {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
            ]
            if pinned:
                pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": pinned}
            await client.create(PODS.raw, pod)

            async def bound() -> str:
                return node_of(await pod_raw(client, name))

            return str(await until(bound, what=f"{name} bound"))

        assert await place("first", "c0", pinned="node-a") == "node-a"
        assert await place("second", "c1") == "node-b"
        # Both nodes are full now; node-a's driver is then given room for a second volume.
        pod = make_pod("third").raw
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "c2"}}]
        await client.create(PODS.raw, pod)
        events = await until(lambda: events_for(client, "third", "FailedScheduling"))
        assert "2 node(s) exceed max volume count" in events[0]["message"]
        raw = await client.get(CSI_NODES.raw, "node-a")
        raw["spec"]["drivers"][0]["allocatable"]["count"] = 2
        await client.update(CSI_NODES.raw, raw)

        async def third() -> str:
            return node_of(await pod_raw(client, "third"))

        assert await until(third, what="third bound") == "node-a"

    run(body, apiserver)
