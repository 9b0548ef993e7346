"""Every example, run the way its README paragraph says, through the real CLI.

Each configuration under ``examples/`` is run with ``kubesched simulate`` on the example
cluster, and the outcome its README paragraph promises is checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: Each example configuration with the pods its README command schedules.
RUNS = {
    "config.yaml": "workload.yaml",
    "config-random-scheduler.yaml": "pods-random-scheduler.yaml",
    "config-resource-aware.yaml": "pods-resource-aware.yaml",
    "config-qos-sort.yaml": "pods-qos-sort.yaml",
    "config-tenant-spread.yaml": "pods-tenant-spread.yaml",
    "config-gpu.yaml": "pods-gpu.yaml",
    "config-gang.yaml": "pods-gang.yaml",
    "config-quota.yaml": "pods-quota.yaml",
}

CPU_NODES = {"node-a1", "node-a2", "node-b1", "node-c1", "node-c2"}
GPU_NODES = {"gpu-a1", "gpu-b1"}
ZONE = {
    "node-a1": "a",
    "node-a2": "a",
    "gpu-a1": "a",
    "node-b1": "b",
    "node-b2": "b",
    "gpu-b1": "b",
    "node-c1": "c",
    "node-c2": "c",
}


def placed(result: dict[str, Any]) -> dict[str, str | None]:
    return {p["pod"]: p["node"] for p in result["placements"]}


def message(result: dict[str, Any], pod: str) -> str:
    return next(p["message"] for p in result["placements"] if p["pod"] == pod)


def run_cli_subprocess(config: Path) -> subprocess.CompletedProcess[str]:
    """``kubesched simulate`` on the example cluster in a new Python process, as a user
    runs it: only the configuration's folder is added to the module path."""
    return subprocess.run(
        [
            sys.executable,
            *("-m", "kubesched.cli", "simulate"),
            *("--cluster", str(EXAMPLES / "cluster.yaml"), "--config", str(config)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_example_configuration_is_run_here() -> None:
    assert {p.name for p in EXAMPLES.glob("config*.yaml")} == set(RUNS)
    assert {p.name for p in EXAMPLES.glob("pods-*.yaml")} | {"workload.yaml"} == set(RUNS.values())


@pytest.mark.parametrize(("config", "pods"), sorted(RUNS.items()))
def test_example_runs_and_every_pod_is_accounted_for(simulate: Any, config: str, pods: str) -> None:
    result = simulate(pods, config)
    written = [
        doc
        for doc in yaml.safe_load_all((EXAMPLES / pods).read_text())
        for doc in (doc.get("items", [doc]) if doc else [])
        # scheduler-plugins' PodGroups and ElasticQuotas come with the pods they govern.
        if not str(doc.get("apiVersion", "")).startswith("scheduling.x-k8s.io/")
    ]
    assert len(result["placements"]) == len(written)
    for p in result["placements"]:
        # Every pod ends either placed, or pending with a reason; none is left unserved.
        assert (p["node"] is None) == bool(p["message"])
        assert "no profile serves" not in (p["message"] or "")


# --- the main example: the README's simulate command --------------------------------


@pytest.fixture
def main_run(simulate: Any) -> dict[str, Any]:
    result: dict[str, Any] = simulate("workload.yaml", "config.yaml", seed=1)
    return result


def test_main_run_schedules_all_but_the_pod_that_fits_nowhere(main_run: dict[str, Any]) -> None:
    summary = main_run["summary"]
    assert (summary["pods"], summary["scheduled"], summary["unschedulable"]) == (26, 25, 1)
    assert placed(main_run)["ml/train-xl"] is None
    assert message(main_run, "ml/train-xl") == (
        "0/8 nodes are available: 2 Insufficient nvidia.com/gpu, 6 node(s) have no GPU. "
        "preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    )


def test_main_run_high_priority_pod_preempts_one_batch_pod(main_run: dict[str, Any]) -> None:
    hotfix = next(p for p in main_run["placements"] if p["pod"] == "shop/checkout-hotfix")
    assert hotfix["node"] in CPU_NODES
    assert len(hotfix["preempted"]) == 1
    assert hotfix["preempted"][0].startswith("batch/nightly-report-")
    assert main_run["summary"]["preempted"] == 1
    # Scheduled first: it has the highest priority.
    assert main_run["placements"][0]["pod"] == "shop/checkout-hotfix"


def test_main_run_spreads_web_and_separates_db(main_run: dict[str, Any]) -> None:
    nodes = placed(main_run)
    web_zones = sorted(ZONE[str(nodes[f"shop/web-{i}"])] for i in range(6))
    assert web_zones == ["a", "a", "b", "b", "c", "c"]
    db_nodes = {nodes[f"shop/db-{i}"] for i in range(3)}
    assert len(db_nodes) == 3


def test_main_run_gpu_profile(main_run: dict[str, Any]) -> None:
    nodes = placed(main_run)
    assert {nodes[f"ml/train-{i}"] for i in range(3)} <= GPU_NODES
    assert nodes["ml/notebook"] in CPU_NODES
    # Pods of the default profile never reach the tainted GPU nodes or the cordoned one.
    default_profile = [k for k in nodes if not k.startswith("ml/")]
    assert all(nodes[k] in CPU_NODES for k in default_profile if nodes[k] is not None)


# --- random_scheduler.py ---------------------------------------------------------------


def test_random_scheduler_seed_decides(simulate: Any) -> None:
    def run(seed: int) -> dict[str, str | None]:
        return placed(
            simulate("pods-random-scheduler.yaml", "config-random-scheduler.yaml", seed=seed)
        )

    first, again, other = run(1), run(1), run(2)
    assert first == again
    assert first != other
    # Random, but only onto nodes the pods fit: never the cordoned or tainted nodes.
    for placement in (first, other):
        assert set(placement.values()) <= CPU_NODES
        assert len(set(placement.values())) > 1


# --- resource_aware.py ------------------------------------------------------------------


def test_resource_aware_sends_each_pod_to_the_emptiest_node(simulate: Any) -> None:
    for seed in (1, 2, 3):
        nodes = placed(simulate("pods-resource-aware.yaml", "config-resource-aware.yaml", seed))
        # node-a2, node-b1 and node-c2 run 1500m, node-a1 and node-c1 1600m (coredns too).
        assert {nodes[f"default/worker-{i}"] for i in range(3)} == {"node-a2", "node-b1", "node-c2"}
        assert {nodes[f"default/worker-{i}"] for i in (3, 4)} == {"node-a1", "node-c1"}


def test_resource_aware_bad_args_are_reported_with_paths(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    text = (EXAMPLES / "config-resource-aware.yaml").read_text()
    config.write_text(text.replace("cpuWeight: 1", "cpuWeight: -1"))
    (tmp_path / "resource_aware.py").write_text((EXAMPLES / "resource_aware.py").read_text())
    run = run_cli_subprocess(config)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == (
        f"{config}: profiles[0].pluginConfig[0].args.cpuWeight: Invalid value: -1: "
        "must be in the range [0, 100]\n"
    )


# --- qos_sort.py ------------------------------------------------------------------------


def test_qos_sort_guaranteed_pod_wins_the_contested_port(simulate: Any) -> None:
    result = simulate("pods-qos-sort.yaml", "config-qos-sort.yaml")
    nodes = placed(result)
    assert nodes["monitoring/agent-stable"] == "node-c2"
    assert nodes["monitoring/agent-canary"] is None
    assert "1 node(s) didn't have free ports for the requested pod ports" in message(
        result, "monitoring/agent-canary"
    )
    order = [p["pod"] for p in result["placements"] if p["pod"].startswith("default/")]
    assert order == [
        "default/cache-guaranteed",
        "default/cache-burstable",
        "default/cache-besteffort",
    ]


def test_without_qos_sort_the_earlier_besteffort_pod_wins(simulate: Any) -> None:
    result = simulate("pods-qos-sort.yaml", None)
    nodes = placed(result)
    assert nodes["monitoring/agent-canary"] == "node-c2"
    assert nodes["monitoring/agent-stable"] is None
    order = [p["pod"] for p in result["placements"] if p["pod"].startswith("default/")]
    assert order == [
        "default/cache-besteffort",
        "default/cache-burstable",
        "default/cache-guaranteed",
    ]


def test_the_tutorials_two_profile_qos_configuration_is_rejected(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "  - schedulerName: default-scheduler\n"
        "  - schedulerName: qos-scheduler\n"
        "    plugins:\n"
        "      queueSort:\n"
        "        enabled: [{name: 'qos_sort:new'}]\n"
        "        disabled: [{name: '*'}]\n"
    )
    (tmp_path / "qos_sort.py").write_text((EXAMPLES / "qos_sort.py").read_text())
    run = run_cli_subprocess(config)
    assert run.returncode == 2
    assert "profiles[1].plugins.queueSort: Invalid value: " in run.stderr
    assert "queueSort must be the same for all profiles" in run.stderr


# --- tenant_spread.py ---------------------------------------------------------------------


def test_tenant_spread_rejects_unlabelled_pods_and_spreads_tenants(simulate: Any) -> None:
    for seed in (1, 2):
        result = simulate("pods-tenant-spread.yaml", "config-tenant-spread.yaml", seed)
        nodes = placed(result)
        for tenant in ("acme", "globex"):
            assert len({nodes[f"saas/{tenant}-api-{i}"] for i in range(3)}) == 3
        assert nodes["saas/untagged-api"] is None
        assert message(result, "saas/untagged-api").startswith(
            "0/8 nodes are available: pod has no tenant label."
        )


# --- gpu.py -------------------------------------------------------------------------------


def test_gpu_pod_on_gpu_node_and_cpu_pods_off_them(simulate: Any) -> None:
    for seed in (1, 2, 3):
        nodes = placed(simulate("pods-gpu.yaml", "config-gpu.yaml", seed))
        assert nodes["ml/finetune"] in GPU_NODES
        assert nodes["ml/notebook"] in CPU_NODES
        assert nodes["ml/tensorboard"] in CPU_NODES


def test_without_gpu_aware_tolerating_cpu_pods_take_gpu_nodes(
    simulate: Any, tmp_path: Path
) -> None:
    # The same pods in the default profile: the big, empty GPU nodes score best.
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        (EXAMPLES / "pods-gpu.yaml").read_text().replace("gpu-aware", "default-scheduler")
    )
    nodes = placed(simulate(pods, None))
    assert nodes["ml/notebook"] in GPU_NODES
    assert nodes["ml/tensorboard"] in GPU_NODES
