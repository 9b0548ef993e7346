"""End to end, as a user runs it: the embedded API server with its controllers (six
simulated nodes, two per zone) and ``kubesched run`` as ``default-scheduler`` in a process
of its own; a StatefulSet whose ``volumeClaimTemplates`` use the ``zonal`` class, applied
with kubectl. Every claim gets a volume in its pod's zone; a deleted pod comes back in its
volume's zone — on the other node of that zone when its own node is cordoned, though
nodes of the other zones are free (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from control_plane import KUBECTL, wait_for

from kubesched.cli.cluster import ClusterHandle, start_cluster

ZONE = "topology.kubernetes.io/zone"
REPLICAS = 3

STATEFUL_SET = f"""\
apiVersion: v1
kind: Service
metadata: {{name: store}}
spec:
  clusterIP: None
  selector: {{app: store}}
  ports: [{{port: 80}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: store}}
spec:
  serviceName: store
  replicas: {REPLICAS}
  podManagementPolicy: Parallel
  selector: {{matchLabels: {{app: store}}}}
  template:
    metadata: {{labels: {{app: store}}}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: main
        image: registry.k8s.io/pause:3.10
        volumeMounts: [{{name: data, mountPath: /data}}]
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: zonal
      resources: {{requests: {{storage: 1Gi}}}}
"""


class Cluster:
    """The server with its controllers, and ``kubesched run`` scheduling it."""

    def __init__(self, folder: Path) -> None:
        self.handle: ClusterHandle = start_cluster(
            kubeconfig_path=folder / "kubeconfig",
            bookmark_interval=0.2,
            nodes=6,
            run_delay=0.05,
            node_lease_interval=0,
        )
        config = folder / "scheduler.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "clientConnection": {"kubeconfig": str(self.handle.kubeconfig_path)},
                    "leaderElection": {"leaderElect": False},
                }
            )
        )
        self.log = folder / "scheduler.log"
        with self.log.open("wb") as out:
            self.scheduler = subprocess.Popen(
                [sys.executable, "-m", "kubesched.cli", "run", "--config", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [KUBECTL, "--kubeconfig", str(self.handle.kubeconfig_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result.stdout

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def stop(self) -> None:
        self.scheduler.terminate()
        try:
            self.scheduler.wait(timeout=20)
        finally:
            if self.scheduler.poll() is None:
                self.scheduler.kill()
            self.handle.stop()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    running = Cluster(tmp_path)
    yield running
    running.stop()
    assert running.scheduler.returncode == 0, running.log.read_text(errors="replace")


def running_pods(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """The StatefulSet's pods that run, not being deleted, by name."""
    pods = cluster.get("pods", "-l", "app=store")["items"]
    return {
        p["metadata"]["name"]: p
        for p in pods
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    }


def volume_zone(cluster: Cluster, claim: str) -> str:
    """The zone the claim's volume is in (its required node affinity)."""
    pvc = cluster.get("pvc", claim)
    assert pvc["status"]["phase"] == "Bound", pvc
    pv = cluster.get("pv", pvc["spec"]["volumeName"])
    (term,) = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    assert (expression["key"], expression["operator"]) == (ZONE, "In")
    (zone,) = expression["values"]
    return str(zone)


def test_a_deleted_pod_of_a_zonal_stateful_set_comes_back_in_its_volumes_zone(
    cluster: Cluster,
) -> None:
    nodes = cluster.get("nodes")["items"]
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in nodes}
    cluster.kubectl("apply", "-f", "-", stdin=STATEFUL_SET)
    pods = wait_for(
        lambda: (found := running_pods(cluster)) and len(found) == REPLICAS and found,
        what="every pod running",
        timeout=60,
    )
    for name, pod in pods.items():
        assert volume_zone(cluster, f"data-{name}") == zone_of[pod["spec"]["nodeName"]], name

    # store-1's node is cordoned: the one node left in its volume's zone is the other
    # node there, while the four nodes of the other zones are free too.
    old = pods["store-1"]
    node = old["spec"]["nodeName"]
    zone = volume_zone(cluster, "data-store-1")
    (other,) = [n for n, z in zone_of.items() if z == zone and n != node]
    claim_uid = cluster.get("pvc", "data-store-1")["metadata"]["uid"]
    cluster.kubectl("cordon", node)
    cluster.kubectl("delete", "pod", "store-1", "--wait=false")
    again = wait_for(
        lambda: (
            (pod := running_pods(cluster).get("store-1"))
            and pod["metadata"]["uid"] != old["metadata"]["uid"]
            and pod
        ),
        what="store-1 made again and running",
        timeout=60,
    )
    assert again["spec"]["nodeName"] == other
    # The same claim, the same volume: nothing was provisioned anew.
    assert cluster.get("pvc", "data-store-1")["metadata"]["uid"] == claim_uid
    assert volume_zone(cluster, "data-store-1") == zone
    assert len(cluster.get("pv")["items"]) == REPLICAS
    claims = [
        v["persistentVolumeClaim"]["claimName"]
        for v in again["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    ]
    assert claims == ["data-store-1"]
