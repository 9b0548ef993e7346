"""Gang Jobs end to end (issue 17, item 6): on the embedded cluster (API server, the
controllers with the Job and PodGroup controllers and the simulated kubelet, three
32-cpu nodes), ``kubesched run`` with scheduler-plugins' own Coscheduling configuration
schedules a Job whose pods carry the pod-group label and an Indexed Job gang to
completion, and a gang Job too big for the cluster holds no node: none of its pods is
bound, and a pod that needs most of a node still gets one. A PodGroup applied after its
Job, and a scheduler started after the gang was created (a restart), place it too."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli.cluster import ClusterHandle, start_cluster

#: scheduler-plugins' manifests/coscheduling/scheduler-config.yaml, with the kubeconfig.
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "{kubeconfig}"
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
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
"""


def wait(what: str, check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def start_cluster_in(folder: Path) -> ClusterHandle:
    return start_cluster(
        kubeconfig_path=folder / "kubeconfig",
        nodes=3,
        run_delay=0.05,
        node_lease_interval=0,
        job_sync_batch_period=0.05,
    )


@contextlib.contextmanager
def kubesched_run(handle: ClusterHandle, folder: Path) -> Iterator[None]:
    """``kubesched run`` with Coscheduling against ``handle``, until the block ends."""
    config = folder / "scheduler.yaml"
    config.write_text(CONFIG.format(kubeconfig=handle.kubeconfig_path))
    log = folder / "scheduler.log"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    with log.open("wb") as out:
        scheduler = subprocess.Popen(
            [
                *(sys.executable, "-m", "kubesched.cli", "run", "--config", str(config)),
                *("--secure-port", str(port), "--bind-address", "127.0.0.1"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        try:
            wait("the scheduler to be ready", lambda: ready(port), timeout=60)
        except AssertionError as err:
            tail = log.read_text(errors="replace")[-2000:]
            raise AssertionError(f"{err}; its log ends:\n{tail}") from None
        yield
    finally:
        scheduler.terminate()
        scheduler.wait(20)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    folder = tmp_path_factory.mktemp("gangjobs")
    handle = start_cluster_in(folder)
    try:
        # The workloads come to a running scheduler, as in a cluster.
        with kubesched_run(handle, folder):
            yield handle
    finally:
        handle.stop()


def ready(port: int) -> bool:
    try:
        url = f"http://127.0.0.1:{port}/readyz"
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def kubectl(cluster: ClusterHandle, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(cluster.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def apply(cluster: ClusterHandle, *objects: dict[str, Any]) -> None:
    kubectl(cluster, "apply", "-f", "-", stdin=yaml.safe_dump_all(objects))


def get(cluster: ClusterHandle, *args: str) -> Any:
    return json.loads(kubectl(cluster, "get", *args, "-o", "json"))


def pod_group(name: str, min_member: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member, "scheduleTimeoutSeconds": 10},
    }


def job(name: str, group: str, count: int, cpu: str, indexed: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "parallelism": count,
        "completions": count,
        "backoffLimit": 0,
        "template": {
            "metadata": {
                "labels": {"scheduling.x-k8s.io/pod-group": group},
                "annotations": {"kubesched.io/run-seconds": "0.5"},
            },
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "w", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
                ],
            },
        },
    }
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def job_pods(cluster: ClusterHandle, name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = get(cluster, "pods", "-l", f"job-name={name}")["items"]
    return items


def complete(cluster: ClusterHandle, name: str) -> bool:
    conditions = get(cluster, "job", name).get("status", {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


def test_a_job_whose_pods_carry_the_pod_group_label_completes(cluster: ClusterHandle) -> None:
    apply(cluster, pod_group("pi", 3), job("pi", "pi", 3, cpu="4"))
    wait("the Job to complete", lambda: complete(cluster, "pi"))
    pods = job_pods(cluster, "pi")
    assert len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods)
    status = wait(
        "the PodGroup to finish",
        lambda: (
            (s := get(cluster, "pg", "pi").get("status") or {}).get("phase") == "Finished" and s
        ),
    )
    assert status["succeeded"] == 3
    assert status["occupiedBy"] == "default/pi"


def test_an_indexed_job_gang_completes(cluster: ClusterHandle) -> None:
    apply(cluster, pod_group("ranks", 4), job("ranks", "ranks", 4, cpu="8", indexed=True))
    wait("the Indexed Job to complete", lambda: complete(cluster, "ranks"))
    indexes = sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        for p in job_pods(cluster, "ranks")
    )
    assert indexes == ["0", "1", "2", "3"]


def test_a_gang_too_big_for_the_cluster_holds_no_node(cluster: ClusterHandle) -> None:
    # Five 24-cpu members, three 32-cpu nodes: at most three fit, the quorum is five.
    apply(cluster, pod_group("huge", 5), job("huge", "huge", 5, cpu="24"))
    pods = wait("the five members", lambda: len(job_pods(cluster, "huge")) == 5)
    assert pods

    def all_refused() -> bool:
        for pod in job_pods(cluster, "huge"):
            conditions = pod.get("status", {}).get("conditions") or []
            if not any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conditions):
                return False
        return True

    wait("every member to be refused", all_refused)
    assert [p["spec"].get("nodeName") for p in job_pods(cluster, "huge")] == [None] * 5
    # Nothing is held for the gang: a pod needing most of a node gets one.
    apply(
        cluster,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "big-single"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "30"}}}
                ]
            },
        },
    )
    wait(
        "the single pod to be bound",
        lambda: get(cluster, "pod", "big-single")["spec"].get("nodeName"),
    )
    assert [p["spec"].get("nodeName") for p in job_pods(cluster, "huge")] == [None] * 5


def test_a_gang_whose_pod_group_comes_after_its_job(cluster: ClusterHandle) -> None:
    apply(cluster, job("late", "late", 3, cpu="2"))
    wait("the three members", lambda: len(job_pods(cluster, "late")) == 3)
    time.sleep(1)
    apply(cluster, pod_group("late", 3))
    wait("the Job to complete", lambda: complete(cluster, "late"))


def test_a_scheduler_started_after_its_gang_places_it(tmp_path: Path) -> None:
    # As after a restart: the PodGroup and its members wait for the scheduler.
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    handle = start_cluster_in(tmp_path)
    try:
        apply(handle, pod_group("early", 3), job("early", "early", 3, cpu="2"))
        wait("the three members", lambda: len(job_pods(handle, "early")) == 3)
        with kubesched_run(handle, tmp_path):
            wait("the Job to complete", lambda: complete(handle, "early"))
    finally:
        handle.stop()
