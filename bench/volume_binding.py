"""How fast the embedded cluster's volume controllers bind claims: the PersistentVolume
binder alone (static volumes, one per claim, all made before the claims) and with the
simulated CSI provisioner (an Immediate class: every claim gets a new volume). Prints
claims bound per second, from the first claim created to the last one Bound, as JSON.

    .venv/bin/python bench/volume_binding.py [--claims 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from kubesched.cli.cluster import start_cluster
from kubesched.controllers.csi.drivers import ZONAL_DRIVER
from kubesched.controllers.volume.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from kubesched.kube import Client, load_kubeconfig


def claim(name: str, cls: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def volume(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "manual",
            "hostPath": {"path": f"/tmp/{name}"},
        },
    }


async def bind_all(client: Client, prefix: str, cls: str, count: int) -> float:
    """Create ``count`` claims (20 at a time); seconds until every one is Bound."""
    started = time.perf_counter()
    for first in range(0, count, 20):
        await asyncio.gather(
            *(
                client.create(PERSISTENT_VOLUME_CLAIMS, claim(f"{prefix}-{i}", cls), "default")
                for i in range(first, min(first + 20, count))
            )
        )
    while True:
        found = await client.list_all(PERSISTENT_VOLUME_CLAIMS, "default")
        done = sum(
            1
            for c in found.items
            if c["metadata"]["name"].startswith(f"{prefix}-")
            and (c.get("status") or {}).get("phase") == "Bound"
        )
        if done == count:
            return time.perf_counter() - started
        await asyncio.sleep(0.05)


async def measure(path: str, count: int) -> dict[str, Any]:
    async with Client(load_kubeconfig([path]), qps=0) as client:
        for first in range(0, count, 20):
            await asyncio.gather(
                *(
                    client.create(PERSISTENT_VOLUMES, volume(f"static-{i}"))
                    for i in range(first, min(first + 20, count))
                )
            )
        static = await bind_all(client, "static", "manual", count)
        await client.create(
            STORAGE_CLASSES,
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "zonal-immediate"},
                "provisioner": ZONAL_DRIVER,
                "volumeBindingMode": "Immediate",
            },
        )
        provisioned = await bind_all(client, "dynamic", "zonal-immediate", count)
    return {
        "claims": count,
        "static_claims_per_second": round(count / static, 1),
        "provisioned_claims_per_second": round(count / provisioned, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=500)
    args = parser.parse_args()
    with start_cluster(nodes=3, node_lease_interval=0) as cluster:
        result = asyncio.run(measure(str(cluster.kubeconfig_path), args.claims))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
