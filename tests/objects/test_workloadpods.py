"""The pods each workload's controller creates first (objects.workloadpods, daemonset,
statefulset): names, labels, owners, and the rules upstream's controllers follow."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubesched.objects.daemonset import (
    add_daemon_tolerations,
    daemon_pod,
    node_should_run_daemon_pod,
    replace_node_name_affinity,
)
from kubesched.objects.node import Node
from kubesched.objects.statefulset import stateful_pod
from kubesched.objects.taints import Taint
from kubesched.objects.workloadpods import (
    Names,
    deployment_pods,
    generate_job_selector,
    job_pods,
    new_replica_set,
    replica_set_pods,
    stateful_set_pods,
)


def template(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "x:1"}], **spec},
    }


def workload(kind: str, name: str = "x", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "uid": f"{name}-uid"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template(), **spec},
    }


def names(seed: int = 0) -> Names:
    return Names(random.Random(seed))


def test_deployment_makes_its_replica_set_then_the_replicas() -> None:
    d = workload("Deployment", "web", replicas=2)
    d["metadata"]["annotations"] = {"team": "a", "deployment.kubernetes.io/revision": "9"}
    rs = new_replica_set(d)
    hash_ = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{hash_}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "x", "pod-template-hash": hash_}
    assert rs["metadata"]["ownerReferences"][0] | {} == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": "web-uid",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    # The Deployment's own revision annotation is not copied; the new revision is 1.
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rs["metadata"]["annotations"]["team"] == "a"
    # Another template, another hash.
    other = copy.deepcopy(d)
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2"
    assert new_replica_set(other)["metadata"]["name"] != rs["metadata"]["name"]

    out = deployment_pods(d, names())
    assert [o["metadata"]["name"] for o in out.owners] == [rs["metadata"]["name"]]
    assert len(out.pods) == 2
    for pod in out.pods:
        assert pod["metadata"]["name"].startswith(f"web-{hash_}-")
        assert len(pod["metadata"]["name"]) == len(f"web-{hash_}-") + 5
        assert pod["metadata"]["labels"] == {"app": "x", "pod-template-hash": hash_}
        assert pod["metadata"]["ownerReferences"][0]["uid"] == out.owners[0]["metadata"]["uid"]
    assert deployment_pods(d, names(), has_replica_set=True).pods == []
    paused = deployment_pods({**d, "spec": {**d["spec"], "paused": True}}, names())
    assert paused.pods == [] and "paused" in paused.notes[0]


def test_replica_set_makes_what_is_missing() -> None:
    rs = workload("ReplicaSet", replicas=3)
    assert len(replica_set_pods(rs, names(), existing=1).pods) == 2
    assert replica_set_pods(rs, names(), existing=3).pods == []
    rc = {**workload("ReplicationController"), "apiVersion": "v1"}
    pod = replica_set_pods(rc, names(), kind="ReplicationController").pods[0]
    assert pod["metadata"]["ownerReferences"][0]["apiVersion"] == "v1"


def test_stateful_pod_identity_labels_and_claims() -> None:
    sts = workload(
        "StatefulSet",
        "web",
        replicas=2,
        serviceName="nginx",
        volumeClaimTemplates=[{"metadata": {"name": "www"}}, {"metadata": {"name": "logs"}}],
    )
    sts["spec"]["template"]["spec"]["volumes"] = [
        {"name": "www", "emptyDir": {}},
        {"name": "config", "configMap": {"name": "c"}},
    ]
    pod = stateful_pod(sts, 1, "web-abc")
    meta, spec = pod["metadata"], pod["spec"]
    assert meta["name"] == "web-1" and "generateName" not in meta
    assert meta["labels"] == {
        "app": "x",
        "statefulset.kubernetes.io/pod-name": "web-1",
        "apps.kubernetes.io/pod-index": "1",
        "controller-revision-hash": "web-abc",
    }
    assert (spec["hostname"], spec["subdomain"]) == ("web-1", "nginx")
    # A template volume named as a claim is replaced by the claim.
    assert spec["volumes"] == [
        {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-1"}},
        {"name": "config", "configMap": {"name": "c"}},
    ]
    assert meta["ownerReferences"][0]["kind"] == "StatefulSet"
    # The template itself is not changed.
    assert sts["spec"]["template"]["spec"]["volumes"][0] == {"name": "www", "emptyDir": {}}
    started = {**sts, "spec": {**sts["spec"], "ordinals": {"start": 5}}}
    assert [p["metadata"]["name"] for p in stateful_set_pods(started).pods] == ["web-5", "web-6"]
    assert [p["metadata"]["name"] for p in stateful_set_pods(sts, {"web-0"}).pods] == ["web-1"]


@pytest.mark.parametrize(
    ("spec", "status", "existing", "want"),
    [
        ({"parallelism": 1, "completions": 1}, {}, 0, 1),
        ({"parallelism": 3, "completions": 5}, {}, 0, 3),
        ({"parallelism": 3, "completions": 5}, {"succeeded": 4}, 0, 1),
        ({"parallelism": 3, "completions": 5}, {}, 2, 1),
        ({"parallelism": 4}, {}, 0, 4),  # no completions: every worker
        ({"parallelism": 2, "completions": 2, "suspend": True}, {}, 0, 0),
        (
            {"parallelism": 2, "completions": 2},
            {"conditions": [{"type": "Complete", "status": "True"}]},
            0,
            0,
        ),
    ],
)
def test_job_pod_counts(
    spec: dict[str, Any], status: dict[str, Any], existing: int, want: int
) -> None:
    job = workload("Job", "pi", **spec)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    job["status"] = status
    generate_job_selector(job)
    pods = job_pods(job, names(), existing).pods
    assert len(pods) == want
    for pod in pods:
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi"
        assert pod["metadata"]["labels"]["controller-uid"] == "pi-uid"
        assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
        assert pod["metadata"]["name"].startswith("pi-")


def test_indexed_job_takes_the_lowest_free_indexes() -> None:
    job = workload("Job", "idx", parallelism=3, completions=5, completionMode="Indexed")
    pods = job_pods(job, names(), existing=1, existing_indexes={1}).pods
    assert [p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in pods] == [
        "0",
        "2",
    ]
    first = pods[0]
    assert first["metadata"]["name"].startswith("idx-0-")
    assert first["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert first["spec"]["hostname"] == "idx-0"
    # As the Job controller creates it: every container told its index.
    for container in first["spec"]["containers"]:
        [env] = [e for e in container["env"] if e["name"] == "JOB_COMPLETION_INDEX"]
        path = env["valueFrom"]["fieldRef"]["fieldPath"]
        assert path == "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def test_generated_job_selector_keeps_what_the_user_set() -> None:
    job = workload("Job", "pi")
    del job["spec"]["selector"]
    job["spec"]["template"]["metadata"]["labels"]["job-name"] = "mine"
    generate_job_selector(job)
    labels = job["spec"]["template"]["metadata"]["labels"]
    assert labels["job-name"] == "mine"
    assert labels["batch.kubernetes.io/controller-uid"] == "pi-uid"
    assert job["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": "pi-uid"}
    }


def test_daemon_tolerations_are_added_once_and_network_only_with_host_network() -> None:
    spec: dict[str, Any] = {
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 30,
            }
        ]
    }
    add_daemon_tolerations(spec)
    add_daemon_tolerations(spec)
    keys = [t["key"] for t in spec["tolerations"]]
    assert len(keys) == 6 and len(set(keys)) == 6
    # Upstream replaces a matching toleration: the pod stays through any outage.
    assert "tolerationSeconds" not in spec["tolerations"][0]
    host: dict[str, Any] = {"hostNetwork": True}
    add_daemon_tolerations(host)
    assert host["tolerations"][-1]["key"] == "node.kubernetes.io/network-unavailable"


def test_node_name_affinity_replaces_the_required_terms_only() -> None:
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {"matchExpressions": [{"key": "b", "operator": "Exists"}]},
                    }
                ],
            },
            "podAntiAffinity": {"x": 1},
        }
    }
    replace_node_name_affinity(spec, "n1")
    node_affinity = spec["affinity"]["nodeAffinity"]
    assert node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
        ]
    }
    assert len(node_affinity["preferredDuringSchedulingIgnoredDuringExecution"]) == 1
    assert spec["affinity"]["podAntiAffinity"] == {"x": 1}
    empty: dict[str, Any] = {}
    replace_node_name_affinity(empty, "n2")
    terms = empty["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n2"]


def test_daemon_pod_is_pinned_owned_and_labelled() -> None:
    ds = workload("DaemonSet", "agent")
    pod = daemon_pod(ds, "n1")
    assert pod["metadata"]["generateName"] == "agent-"
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    assert pod["metadata"]["labels"]["controller-revision-hash"]
    required = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert required["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n1"]
    assert "affinity" not in ds["spec"]["template"]["spec"]


def node(name: str = "n1", labels: dict[str, str] | None = None, *taints: Taint) -> Node:
    return Node(name=name, labels=labels or {}, taints=taints)


def test_node_should_run_daemon_pod() -> None:
    ds = workload("DaemonSet")
    assert node_should_run_daemon_pod(node(), ds) == (True, True)
    # The daemon tolerations cover the condition taints and unschedulable nodes.
    cordoned = node("n1", {}, Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"))
    assert node_should_run_daemon_pod(cordoned, ds) == (True, True)
    # An untolerated NoSchedule taint: no new pod, but one already there may stay.
    dedicated = node("n1", {}, Taint("dedicated", "gpu", "NoSchedule"))
    assert node_should_run_daemon_pod(dedicated, ds) == (False, True)
    evicting = node("n1", {}, Taint("dedicated", "gpu", "NoExecute"))
    assert node_should_run_daemon_pod(evicting, ds) == (False, False)
    selective = copy.deepcopy(ds)
    selective["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert node_should_run_daemon_pod(node("n1", {"disk": "ssd"}), selective) == (True, True)
    assert node_should_run_daemon_pod(node("n1", {"disk": "hdd"}), selective) == (False, False)
    affine = copy.deepcopy(ds)
    affine["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    assert node_should_run_daemon_pod(node("n1", {"zone": "a"}), affine) == (True, True)
    assert node_should_run_daemon_pod(node("n1", {"zone": "b"}), affine) == (False, False)
    named = copy.deepcopy(ds)
    named["spec"]["template"]["spec"]["nodeName"] = "n2"
    assert node_should_run_daemon_pod(node("n1"), named) == (False, False)
    assert node_should_run_daemon_pod(node("n2"), named) == (True, True)
