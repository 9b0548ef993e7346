"""Daemon pods as a DaemonSet creates them: one pod per node, each pinned to its own node.

scheduler_perf's SchedulingDaemonset (``kubesched bench --workload daemonset``) pins every
pod to the same node; a real DaemonSet pins each of its pods to a different one, so no two
pods share a node selector and nothing learned for one pod's selector helps the next.
This schedules one such pod per node of SchedulingBasic's cluster (4 cpu / 32Gi / 110 pods,
three zones) with the default profile, every pod asking 10m cpu, and prints pods/s, both
on the node table and on the per-node path.

    .venv/bin/python bench/daemon_pods.py [--nodes 15000] [--pods 15000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from kubesched.config import default_config
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import every_node_config
from kubesched.sim.simulator import Simulator
from kubesched.sim.workloads import make_nodes


def daemon_pod(index: int, node: str) -> Pod:
    pinned = {"key": "metadata.name", "operator": "In", "values": [node]}
    required = {"nodeSelectorTerms": [{"matchFields": [pinned]}]}
    name = f"daemon-{index}"
    return Pod.from_dict(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {
                "containers": [
                    {
                        "name": "agent",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "10m"}},
                    }
                ],
                "affinity": {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
                },
            },
        }
    )


def run(nodes: int, pods: int, columnar: bool) -> dict[str, object]:
    cluster = make_nodes(nodes)
    pending = [daemon_pod(i, cluster[i % nodes].name) for i in range(pods)]
    config = every_node_config(default_config())
    sim = Simulator(cluster, (), config, in_tree_registry(), seed=0, columnar=columnar)
    latencies: list[float] = []
    started = time.perf_counter()
    placements = sim.run(pending, lambda pod, seconds: latencies.append(seconds))
    elapsed = time.perf_counter() - started
    wanted = {pod.key: cluster[i % nodes].name for i, pod in enumerate(pending)}
    misplaced = sum(1 for p in placements if p.node != wanted[p.pod.key])
    return {
        "path": "node table" if columnar else "per node",
        "nodes": nodes,
        "pods": pods,
        "misplaced": misplaced,
        "pods_per_second": round(pods / elapsed, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=15000)
    parser.add_argument("--pods", type=int, default=15000)
    args = parser.parse_args()
    for columnar in (True, False):
        print(json.dumps(run(args.nodes, args.pods, columnar)))


if __name__ == "__main__":
    main()
