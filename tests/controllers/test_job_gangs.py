"""Jobs as gangs on a small cluster started for real: the embedded API server, the
simulated kubelet, the Job and PodGroup controllers, and our scheduler as the
default-scheduler with scheduler-plugins' Coscheduling configuration. A Job whose pods
carry the pod-group label and an Indexed Job gang run to completion; a Job too big for
the cluster does not hold a single node."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from controller_helpers import InThread, kubectl, wait_for
from kubernetes import client, config

from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.config import loads_config
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from kubesched.testing.scheduling_wrappers import make_pod_group

NS = "default"
GROUP = ("scheduling.x-k8s.io", "v1alpha1")

# The shape of scheduler-plugins' manifests/coscheduling/scheduler-config.yaml.
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    """Two simulated nodes of 32 CPUs; pods run 0.3 s."""
    path = tmp_path_factory.mktemp("jobgangs") / "kubeconfig"
    handle = start_cluster(
        kubeconfig_path=path,
        nodes=2,
        bookmark_interval=0.2,
        run_delay=0.05,
        pod_run_seconds=0.3,
        node_lease_interval=0,
        job_sync_batch_period=0.1,
    )
    kubeconfig = handle.kubeconfig_path
    # The controller manager installs the PodGroup CRD; the scheduler lists PodGroups.
    wait_for("the PodGroup CRD", lambda: "podgroups" in kubectl(kubeconfig, "api-resources"))
    scheduler = InThread(
        kubeconfig,
        lambda c: Scheduler(loads_config(CONFIG, "config.yaml"), in_tree_registry(), c).run(),
    ).start()
    try:
        yield handle
    finally:
        scheduler.stop()
        handle.stop()


@pytest.fixture(scope="module")
def api(cluster: ClusterHandle) -> Iterator[client.ApiClient]:
    made = config.new_client_from_config(config_file=str(cluster.kubeconfig_path))
    yield made
    made.close()


def job(name: str, pods: int, cpu: str, indexed: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": pods,
        "completions": pods,
        "template": {
            "metadata": {"labels": {POD_GROUP_LABEL: name}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "w", "image": "trainer", "resources": {"requests": {"cpu": cpu}}}
                ],
            },
        },
    }
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def gang(api: client.ApiClient, name: str, pods: int, cpu: str, indexed: bool = False) -> None:
    custom = client.CustomObjectsApi(api)
    custom.create_namespaced_custom_object(
        *GROUP, NS, "podgroups", make_pod_group(name).min_member(pods).dict()
    )
    client.BatchV1Api(api).create_namespaced_job(NS, job(name, pods, cpu, indexed))


def complete(api: client.ApiClient, name: str) -> bool:
    status = client.BatchV1Api(api).read_namespaced_job_status(name, NS).status
    return any(c.type == "Complete" and c.status == "True" for c in status.conditions or [])


def job_pods(api: client.ApiClient, name: str) -> list[client.V1Pod]:
    selector = f"batch.kubernetes.io/job-name={name}"
    return client.CoreV1Api(api).list_namespaced_pod(NS, label_selector=selector).items


@pytest.mark.parametrize("indexed", [False, True], ids=["job", "indexed-job"])
def test_a_job_gang_runs_to_completion(api: client.ApiClient, indexed: bool) -> None:
    name = "indexed-train" if indexed else "train"
    gang(api, name, 3, "8", indexed)
    wait_for(f"Job {name} complete", lambda: complete(api, name), timeout=30)
    assert client.BatchV1Api(api).read_namespaced_job_status(name, NS).status.succeeded == 3


def test_a_job_too_big_for_the_cluster_holds_no_node(api: client.ApiClient) -> None:
    # Three pods of 24 CPUs on two nodes of 32: two would fit, the gang does not.
    gang(api, "big", 3, "24")
    core = client.CoreV1Api(api)

    def told() -> list[str]:
        events = core.list_namespaced_event(NS).items
        return [
            e.message
            for e in events
            if e.reason == "FailedScheduling"
            and (e.involved_object.name or "").startswith("big-")
            and "pod group default/big (minMember 3)" in (e.message or "")
        ]

    messages = wait_for("the gang told why it waits", told, timeout=30)
    assert "2 of the 3 members needed could be placed (3 pending), so none was" in messages[0]
    time.sleep(0.5)  # nothing binds a member meanwhile
    pods = job_pods(api, "big")
    assert len(pods) == 3
    assert all(not p.spec.node_name for p in pods)
    client.BatchV1Api(api).delete_namespaced_job("big", NS, propagation_policy="Background")
