"""The Job controller and the garbage collector in a small cluster started for real: the
embedded API server, the simulated kubelet (pods finish after a short run time, or fail
with the exit code of an annotation), our scheduler as the default-scheduler, and the
controllers, driven with kubectl and the official ``kubernetes`` client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from controller_helpers import job_cluster, kubectl, wait_for
from kubernetes import client, config

from kubesched.cli.cluster import ClusterHandle
from kubesched.controllers.kubelet import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION

NS = "default"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX = "batch.kubernetes.io/job-completion-index"

#: The Job of the Kubernetes documentation ("Running an example Job"), unchanged.
PI_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
  backoffLimit: 4
"""

#: The Indexed Job of the documentation ("Indexed Job for Parallel Processing with Static
#: Work Assignment"), unchanged.
INDEXED_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: 'indexed-job'
spec:
  completions: 5
  parallelism: 3
  completionMode: Indexed
  template:
    spec:
      restartPolicy: Never
      initContainers:
      - name: 'input'
        image: 'docker.io/library/bash'
        command:
        - "bash"
        - "-c"
        - |
          items=(foo bar baz qux xyz)
          echo ${items[$JOB_COMPLETION_INDEX]} > /input/data.txt
        volumeMounts:
        - mountPath: /input
          name: input
      containers:
      - name: 'worker'
        image: 'docker.io/library/busybox'
        command:
        - "rev"
        - "/input/data.txt"
        volumeMounts:
        - mountPath: /input
          name: input
      volumes:
      - name: input
        emptyDir: {}
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    with job_cluster(tmp_path_factory.mktemp("jobs") / "kubeconfig") as handle:
        yield handle


@pytest.fixture(scope="module")
def batch(cluster: ClusterHandle) -> client.BatchV1Api:
    return client.BatchV1Api(config.new_client_from_config(str(cluster.kubeconfig_path)))


@pytest.fixture(scope="module")
def core(cluster: ClusterHandle) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(str(cluster.kubeconfig_path)))


def job(
    name: str,
    completions: int | None = None,
    parallelism: int | None = None,
    indexed: bool = False,
    restart: str = "Never",
    annotations: dict[str, str] | None = None,
    **spec: object,
) -> dict:
    body: dict = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"annotations": annotations or {}},
                "spec": {
                    "restartPolicy": restart,
                    "containers": [{"name": "c", "image": "busybox"}],
                },
            },
            **spec,
        },
    }
    if completions is not None:
        body["spec"]["completions"] = completions
    if parallelism is not None:
        body["spec"]["parallelism"] = parallelism
    if indexed:
        body["spec"]["completionMode"] = "Indexed"
    return body


def apply(cluster: ClusterHandle, tmp_path: Path, manifest: dict | str) -> None:
    text = manifest if isinstance(manifest, str) else yaml.safe_dump(manifest)
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    kubectl(cluster.kubeconfig_path, "apply", "-f", str(path))


def status(batch: client.BatchV1Api, name: str) -> dict:
    return batch.api_client.sanitize_for_serialization(
        batch.read_namespaced_job_status(name, NS)
    ).get("status", {})


def conditions(batch: client.BatchV1Api, name: str) -> dict[str, dict]:
    return {c["type"]: c for c in status(batch, name).get("conditions") or []}


def pods_of(core: client.CoreV1Api, name: str) -> list:
    return core.list_namespaced_pod(NS, label_selector=f"batch.kubernetes.io/job-name={name}").items


def test_pi_job_completes_and_kubectl_wait_sees_it(cluster, batch, core, tmp_path):
    apply(cluster, tmp_path, PI_JOB)
    kubectl(cluster.kubeconfig_path, "wait", "--for=condition=complete", "job/pi", "--timeout=60s")
    got = status(batch, "pi")
    assert got["succeeded"] == 1
    assert got.get("failed", 0) == 0
    assert got["active"] == 0
    assert got["completionTime"] >= got["startTime"]
    conds = conditions(batch, "pi")
    assert conds["SuccessCriteriaMet"]["reason"] == "CompletionsReached"
    assert conds["Complete"]["message"] == "Reached expected number of succeeded pods"
    [pod] = pods_of(core, "pi")
    assert pod.status.phase == "Succeeded"
    assert TRACKING_FINALIZER not in (pod.metadata.finalizers or [])
    table = kubectl(cluster.kubeconfig_path, "get", "job", "pi", "--no-headers")
    assert table.split()[1:3] == ["Complete", "1/1"]


def test_indexed_job_runs_each_index_once(cluster, batch, core, tmp_path):
    apply(cluster, tmp_path, INDEXED_JOB)
    kubectl(
        cluster.kubeconfig_path,
        "wait",
        "--for=condition=complete",
        "job/indexed-job",
        "--timeout=60s",
    )
    got = status(batch, "indexed-job")
    assert got["completedIndexes"] == "0-4"
    assert got["succeeded"] == 5
    pods = pods_of(core, "indexed-job")
    indexes = sorted(int(p.metadata.annotations[INDEX]) for p in pods)
    assert indexes == [0, 1, 2, 3, 4]
    for pod in pods:
        index = pod.metadata.annotations[INDEX]
        assert pod.metadata.labels[INDEX] == index
        assert pod.spec.hostname == f"indexed-job-{index}"
        assert pod.metadata.name.startswith(f"indexed-job-{index}-")
        for container in pod.spec.init_containers + pod.spec.containers:
            env = {e.name: e for e in container.env}
            field = env["JOB_COMPLETION_INDEX"].value_from.field_ref.field_path
            assert field == f"metadata.annotations['{INDEX}']"


@pytest.mark.parametrize(
    ("name", "restart", "expected_failed"),
    [
        # Never: each failed pod counts; the limit is passed on the third failure.
        ("fail-never", "Never", 3),
        # OnFailure: the pod restarts in place; restarts count, no pod fails.
        ("fail-onfailure", "OnFailure", None),
    ],
)
def test_backoff_limit_fails_the_job(
    cluster, batch, core, tmp_path, name, restart, expected_failed
):
    annotations = {EXIT_CODE_ANNOTATION: "1"}
    apply(cluster, tmp_path, job(name, restart=restart, annotations=annotations, backoffLimit=2))
    kubectl(
        cluster.kubeconfig_path, "wait", "--for=condition=failed", f"job/{name}", "--timeout=60s"
    )
    conds = conditions(batch, name)
    # 1.34: FailureTarget first, Failed once no pod is left running.
    assert conds["FailureTarget"]["reason"] == "BackoffLimitExceeded"
    assert conds["Failed"]["reason"] == "BackoffLimitExceeded"
    assert conds["Failed"]["message"] == "Job has reached the specified backoff limit"
    got = status(batch, name)
    assert got["active"] == 0
    assert got.get("terminating", 0) == 0
    if expected_failed is not None:
        assert got["failed"] == expected_failed
    events = core.list_namespaced_event(NS, field_selector=f"involvedObject.name={name}").items
    assert "BackoffLimitExceeded" in {e.reason for e in events}
    for pod in pods_of(core, name):
        assert TRACKING_FINALIZER not in (pod.metadata.finalizers or [])


def test_active_deadline_fails_the_job_and_stops_its_pods(cluster, batch, core, tmp_path):
    annotations = {RUN_SECONDS_ANNOTATION: "600"}
    manifest = job(
        "deadline", completions=3, parallelism=2, annotations=annotations, activeDeadlineSeconds=1
    )
    apply(cluster, tmp_path, manifest)
    kubectl(
        cluster.kubeconfig_path, "wait", "--for=condition=failed", "job/deadline", "--timeout=60s"
    )
    conds = conditions(batch, "deadline")
    assert conds["FailureTarget"]["reason"] == "DeadlineExceeded"
    assert conds["Failed"]["message"] == "Job was active longer than specified deadline"
    got = status(batch, "deadline")
    assert got["active"] == 0
    assert got.get("terminating", 0) == 0
    wait_for("the deadline job's pods to go", lambda: not pods_of(core, "deadline"))


def test_suspended_job_starts_nothing_until_resumed(cluster, batch, core, tmp_path):
    apply(cluster, tmp_path, job("susp", completions=2, parallelism=2, suspend=True))
    wait_for("the Suspended condition", lambda: "Suspended" in conditions(batch, "susp"))
    assert conditions(batch, "susp")["Suspended"]["status"] == "True"
    assert pods_of(core, "susp") == []
    assert "startTime" not in status(batch, "susp")
    batch.patch_namespaced_job("susp", NS, {"spec": {"suspend": False}})
    kubectl(
        cluster.kubeconfig_path, "wait", "--for=condition=complete", "job/susp", "--timeout=60s"
    )
    assert conditions(batch, "susp")["Suspended"]["status"] == "False"
    assert status(batch, "susp")["succeeded"] == 2


@pytest.mark.parametrize("cascade", ["background", "foreground"])
def test_cascade_deletion_leaves_nothing_behind(cluster, batch, core, tmp_path, cascade):
    name = f"del-{cascade}"
    manifest = job(name, completions=4, parallelism=2, annotations={RUN_SECONDS_ANNOTATION: "600"})
    apply(cluster, tmp_path, manifest)
    wait_for(
        "two running pods",
        lambda: sum(p.status.phase == "Running" for p in pods_of(core, name)) == 2,
    )
    kubectl(cluster.kubeconfig_path, "delete", "job", name, f"--cascade={cascade}", "--wait=true")
    wait_for(f"the pods of {name} to go", lambda: not pods_of(core, name))
    assert name not in {j.metadata.name for j in batch.list_namespaced_job(NS).items}


def test_orphan_deletion_keeps_the_pods_without_owner_or_finalizer(cluster, batch, core, tmp_path):
    manifest = job(
        "orph", completions=2, parallelism=2, annotations={RUN_SECONDS_ANNOTATION: "600"}
    )
    apply(cluster, tmp_path, manifest)
    wait_for(
        "two running pods",
        lambda: sum(p.status.phase == "Running" for p in pods_of(core, "orph")) == 2,
    )
    kubectl(cluster.kubeconfig_path, "delete", "job", "orph", "--cascade=orphan", "--wait=true")

    def released():
        pods = pods_of(core, "orph")
        return len(pods) == 2 and all(
            not p.metadata.owner_references
            and TRACKING_FINALIZER not in (p.metadata.finalizers or [])
            for p in pods
        )

    wait_for("the orphaned pods to lose their owner and finalizer", released)
    assert all(p.metadata.deletion_timestamp is None for p in pods_of(core, "orph"))
    listed = json.loads(kubectl(cluster.kubeconfig_path, "get", "jobs", "-o", "json"))
    assert "orph" not in {j["metadata"]["name"] for j in listed["items"]}
