"""A Job's ``podFailurePolicy`` and ``backoffLimitPerIndex``: the rule matching as a
table, then Jobs run in a small cluster started for real (the embedded API server, the
simulated kubelet finishing pods with the exit codes of their annotations, our scheduler
as the default-scheduler and the controllers), driven with kubectl and the official
``kubernetes`` client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from controller_helpers import job_cluster, kubectl, wait_for
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from kubesched.cli.cluster import ClusterHandle
from kubesched.controllers.job.indexed_job_utils import parse_indexes
from kubesched.controllers.job.pod_failure_policy import PolicyMatch, match_pod_failure_policy
from kubesched.controllers.kubelet import (
    CONTAINER_EXIT_CODES_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    RUN_SECONDS_ANNOTATION,
)

NS = "default"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"


# --- the rules, one failed pod at a time ------------------------------------------------


def failed_pod(
    codes: dict[str, int] | None = None,
    init_codes: dict[str, int] | None = None,
    conditions: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    def statuses(named: dict[str, int]) -> list[dict[str, Any]]:
        return [
            {"name": name, "state": {"terminated": {"exitCode": code}}}
            for name, code in named.items()
        ]

    return {
        "metadata": {"namespace": "ns", "name": "p"},
        "status": {
            "phase": "Failed",
            "containerStatuses": statuses(codes or {}),
            "initContainerStatuses": statuses(init_codes or {}),
            "conditions": [{"type": t, "status": s} for t, s in conditions],
        },
    }


def on_exit_codes(
    action: str, operator: str, values: list[int], container: str | None = None
) -> dict[str, Any]:
    requirement: dict[str, Any] = {"operator": operator, "values": values}
    if container is not None:
        requirement["containerName"] = container
    return {"action": action, "onExitCodes": requirement}


def on_conditions(action: str, kind: str, status: str = "True") -> dict[str, Any]:
    return {"action": action, "onPodConditions": [{"type": kind, "status": status}]}


RULE_CASES = [
    pytest.param(
        [on_conditions("Ignore", "DisruptionTarget"), on_exit_codes("FailJob", "In", [42])],
        failed_pod({"main": 42}),
        PolicyMatch(
            "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1",
            True,
            "FailJob",
        ),
        id="fail-job-on-exit-code-names-container-pod-code-and-rule-index",
    ),
    pytest.param(
        [on_exit_codes("FailJob", "In", [42]), on_conditions("Ignore", "DisruptionTarget")],
        failed_pod({"main": 137}, conditions=(("DisruptionTarget", "True"),)),
        PolicyMatch(None, False, "Ignore"),
        id="ignore-on-disruption-target-does-not-count",
    ),
    pytest.param(
        [on_conditions("FailJob", "DisruptionTarget")],
        failed_pod({"main": 137}, conditions=(("Ready", "False"), ("DisruptionTarget", "True"))),
        PolicyMatch(
            "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
        id="fail-job-on-condition-names-the-condition",
    ),
    pytest.param(
        [on_conditions("Ignore", "DisruptionTarget", "False")],
        failed_pod({"main": 1}, conditions=(("DisruptionTarget", "True"),)),
        PolicyMatch(),
        id="condition-status-must-match",
    ),
    pytest.param(
        [on_exit_codes("Count", "NotIn", [1, 2])],
        failed_pod({"main": 3}),
        PolicyMatch(None, True, "Count"),
        id="count-on-not-in",
    ),
    pytest.param(
        [on_exit_codes("Ignore", "NotIn", [1])],
        failed_pod({"main": 0, "side": 1}),
        PolicyMatch(),
        id="exit-code-zero-never-matches-not-in",
    ),
    pytest.param(
        [on_exit_codes("FailJob", "In", [5], container="side")],
        failed_pod({"main": 5, "side": 1}),
        PolicyMatch(),
        id="container-name-restricts-the-match",
    ),
    pytest.param(
        [on_exit_codes("FailJob", "In", [5])],
        failed_pod({"main": 1}, init_codes={"setup": 5}),
        PolicyMatch(
            "Container setup for pod ns/p failed with exit code 5 matching FailJob rule at index 0",
            True,
            "FailJob",
        ),
        id="init-containers-are-read-too",
    ),
    pytest.param(
        [on_exit_codes("FailIndex", "In", [7]), on_exit_codes("Ignore", "In", [7])],
        failed_pod({"main": 7}),
        PolicyMatch(None, True, "FailIndex"),
        id="first-matching-rule-wins",
    ),
    pytest.param(
        [on_exit_codes("FailJob", "In", [9])],
        {
            "metadata": {"namespace": "ns", "name": "p"},
            "status": {"phase": "Failed", "containerStatuses": [{"name": "main", "state": {}}]},
        },
        PolicyMatch(),
        id="container-not-terminated-has-no-exit-code",
    ),
]


@pytest.mark.parametrize(("rules", "pod", "expected"), RULE_CASES)
def test_pod_failure_policy_rules(rules, pod, expected):
    assert match_pod_failure_policy({"rules": rules}, pod) == expected


def test_no_policy_counts_every_failure():
    assert match_pod_failure_policy(None, failed_pod({"main": 42})) == PolicyMatch()


# --- Jobs in a cluster ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    with job_cluster(tmp_path_factory.mktemp("pfp") / "kubeconfig") as handle:
        yield handle


@pytest.fixture(scope="module")
def batch(cluster: ClusterHandle) -> client.BatchV1Api:
    return client.BatchV1Api(config.new_client_from_config(str(cluster.kubeconfig_path)))


@pytest.fixture(scope="module")
def core(cluster: ClusterHandle) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(str(cluster.kubeconfig_path)))


def job(
    name: str,
    rules: list[dict[str, Any]],
    annotations: dict[str, str],
    containers: tuple[str, ...] = ("main",),
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "podFailurePolicy": {"rules": rules},
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": c, "image": "busybox"} for c in containers],
                },
            },
            **spec,
        },
    }


def apply(cluster: ClusterHandle, tmp_path: Path, manifest: dict[str, Any]) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump(manifest))
    kubectl(cluster.kubeconfig_path, "apply", "-f", str(path))


def status(batch: client.BatchV1Api, name: str) -> dict[str, Any]:
    raw = batch.api_client.sanitize_for_serialization(batch.read_namespaced_job_status(name, NS))
    return raw.get("status", {})


def conditions(batch: client.BatchV1Api, name: str) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status(batch, name).get("conditions") or []}


def pods_of(core: client.CoreV1Api, name: str) -> list[Any]:
    return core.list_namespaced_pod(NS, label_selector=f"batch.kubernetes.io/job-name={name}").items


def wait_failed(cluster: ClusterHandle, name: str) -> None:
    kubectl(
        cluster.kubeconfig_path, "wait", "--for=condition=failed", f"job/{name}", "--timeout=60s"
    )


def test_fail_job_rule_fails_the_job_with_upstreams_reason_and_message(
    cluster, batch, core, tmp_path
):
    name = "pfp-failjob"
    rules = [
        on_conditions("Ignore", "DisruptionTarget"),
        on_exit_codes("FailJob", "In", [42], container="main"),
    ]
    # main exits 42, the sidecar 0: the rule must read the container by name.
    annotations = {CONTAINER_EXIT_CODES_ANNOTATION: "main=42"}
    apply(cluster, tmp_path, job(name, rules, annotations, ("main", "sidecar"), backoffLimit=6))
    wait_failed(cluster, name)
    [pod] = pods_of(core, name)
    codes = {c.name: c.state.terminated.exit_code for c in pod.status.container_statuses}
    assert codes == {"main": 42, "sidecar": 0}
    message = (
        f"Container main for pod {NS}/{pod.metadata.name} failed with exit code 42 "
        "matching FailJob rule at index 1"
    )
    conds = conditions(batch, name)
    for kind in ("FailureTarget", "Failed"):
        assert (conds[kind]["reason"], conds[kind]["message"]) == ("PodFailurePolicy", message)
    got = status(batch, name)
    assert got["failed"] == 1
    assert got["active"] == 0
    assert TRACKING_FINALIZER not in (pod.metadata.finalizers or [])
    events = core.list_namespaced_event(NS, field_selector=f"involvedObject.name={name}").items
    assert ("PodFailurePolicy", message) in {(e.reason, e.message) for e in events}
    table = kubectl(cluster.kubeconfig_path, "get", "job", name, "--no-headers")
    assert table.split()[1:3] == ["Failed", "0/1"]
    described = kubectl(cluster.kubeconfig_path, "describe", "job", name)
    assert "PodFailurePolicy" in described
    assert message in " ".join(described.split())


def test_eviction_marks_the_pod_a_disruption_target_and_the_kubelet_fails_it(
    cluster, core, tmp_path
):
    # A finalizer of our own holds the pod, so what eviction and kubelet wrote stays.
    hold = "example.com/hold"
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name="evictee", finalizers=[hold], annotations={RUN_SECONDS_ANNOTATION: "600"}
        ),
        spec=client.V1PodSpec(
            restart_policy="Never", containers=[client.V1Container(name="main", image="busybox")]
        ),
    )
    core.create_namespaced_pod(NS, pod)
    wait_for(
        "the pod to run", lambda: core.read_namespaced_pod("evictee", NS).status.phase == "Running"
    )
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="evictee", namespace=NS))
    core.create_namespaced_pod_eviction("evictee", NS, eviction)
    got = wait_for(
        "the kubelet to report the evicted pod Failed",
        lambda: (p := core.read_namespaced_pod("evictee", NS)).status.phase == "Failed" and p,
    )
    assert got.metadata.deletion_timestamp is not None
    target = {c.type: c for c in got.status.conditions}["DisruptionTarget"]
    assert (target.status, target.reason, target.message) == (
        "True",
        "EvictionByEvictionAPI",
        "Eviction API: evicting",
    )
    [main] = got.status.container_statuses
    assert (main.state.terminated.exit_code, main.state.terminated.reason) == (137, "Error")
    core.patch_namespaced_pod("evictee", NS, {"metadata": {"finalizers": None}})

    def gone() -> bool:
        try:
            core.read_namespaced_pod("evictee", NS)
        except ApiException as exc:
            return exc.status == 404
        return False

    wait_for("the pod to go", gone)


def test_ignored_eviction_does_not_count_towards_the_backoff_limit(cluster, batch, core, tmp_path):
    name = "pfp-ignore"
    rules = [on_conditions("Ignore", "DisruptionTarget")]
    annotations = {RUN_SECONDS_ANNOTATION: "600"}
    apply(cluster, tmp_path, job(name, rules, annotations, backoffLimit=0))
    first = wait_for(
        "the first pod to run",
        lambda: [p for p in pods_of(core, name) if p.status.phase == "Running"],
    )[0]
    eviction = client.V1Eviction(
        metadata=client.V1ObjectMeta(name=first.metadata.name, namespace=NS)
    )
    core.create_namespaced_pod_eviction(first.metadata.name, NS, eviction)
    # backoffLimit 0: had the failure counted, the Job would have failed instead.

    def replaced() -> bool:
        pods = pods_of(core, name)
        names = {p.metadata.name for p in pods}
        running = [p for p in pods if p.status.phase == "Running"]
        return first.metadata.name not in names and len(running) == 1

    wait_for("a replacement pod running, the evicted one gone", replaced)
    got = status(batch, name)
    assert got.get("failed", 0) == 0
    assert got["active"] == 1
    assert not got.get("uncountedTerminatedPods")
    assert set(conditions(batch, name)) == set()
    batch.delete_namespaced_job(name, NS, propagation_policy="Background")


def test_ignore_rule_on_an_exit_code_replaces_pods_without_counting(cluster, batch, core, tmp_path):
    name = "pfp-ignore-code"
    rules = [on_exit_codes("Ignore", "In", [3])]
    apply(cluster, tmp_path, job(name, rules, {EXIT_CODE_ANNOTATION: "3"}, backoffLimit=0))
    wait_for("three pods failed with exit code 3", lambda: len(pods_of(core, name)) >= 3)
    got = status(batch, name)
    assert got.get("failed", 0) == 0
    assert "Failed" not in conditions(batch, name)
    batch.delete_namespaced_job(name, NS, propagation_policy="Background")


def test_count_rule_counts_towards_the_backoff_limit(cluster, batch, core, tmp_path):
    name = "pfp-count"
    rules = [on_exit_codes("Count", "In", [1]), on_exit_codes("Ignore", "In", [1])]
    apply(cluster, tmp_path, job(name, rules, {EXIT_CODE_ANNOTATION: "1"}, backoffLimit=1))
    wait_failed(cluster, name)
    conds = conditions(batch, name)
    assert conds["Failed"]["reason"] == "BackoffLimitExceeded"
    assert status(batch, name)["failed"] == 2
    assert len(pods_of(core, name)) == 2


@pytest.mark.parametrize(
    ("name", "code", "pods_per_index"),
    [
        # FailIndex: the index fails on its first failure, budget or not.
        ("pfp-failindex", "42", 1),
        # No rule matches: each index fails once its budget of one retry is spent.
        ("pfp-perindex", "1", 2),
    ],
)
def test_backoff_limit_per_index_fails_indexes(
    cluster, batch, core, tmp_path, name, code, pods_per_index
):
    rules = [on_exit_codes("FailIndex", "In", [42])]
    manifest = job(
        name,
        rules,
        {EXIT_CODE_ANNOTATION: code},
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        backoffLimitPerIndex=1,
    )
    apply(cluster, tmp_path, manifest)
    wait_failed(cluster, name)
    conds = conditions(batch, name)
    assert (conds["Failed"]["reason"], conds["Failed"]["message"]) == (
        "FailedIndexes",
        "Job has failed indexes",
    )
    got = status(batch, name)
    assert got["failedIndexes"] == "0-2"
    assert got["failed"] == 3 * pods_per_index
    counts: dict[str, list[str]] = {}
    for pod in pods_of(core, name):
        annotations = pod.metadata.annotations
        counts.setdefault(annotations[INDEX], []).append(annotations[FAILURE_COUNT])
        assert TRACKING_FINALIZER not in (pod.metadata.finalizers or [])
    expected = [str(n) for n in range(pods_per_index)]
    assert {index: sorted(c) for index, c in counts.items()} == dict.fromkeys(
        ("0", "1", "2"), expected
    )
    described = kubectl(cluster.kubeconfig_path, "describe", "job", name)
    assert "FailedIndexes" in described


def test_max_failed_indexes_fails_the_job(cluster, batch, core, tmp_path):
    name = "pfp-maxfailed"
    manifest = job(
        name,
        [on_exit_codes("FailIndex", "In", [42])],
        {EXIT_CODE_ANNOTATION: "42"},
        completions=4,
        parallelism=2,
        completionMode="Indexed",
        backoffLimitPerIndex=3,
        maxFailedIndexes=1,
    )
    apply(cluster, tmp_path, manifest)
    wait_failed(cluster, name)
    failed = conditions(batch, name)["Failed"]
    assert (failed["reason"], failed["message"]) == (
        "MaxFailedIndexesExceeded",
        "Job has exceeded the specified maximal number of failed indexes",
    )
    # Two indexes may fail in one sync: at least more than maxFailedIndexes failed.
    assert len(parse_indexes(status(batch, name)["failedIndexes"], 4)) >= 2
