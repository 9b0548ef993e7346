"""The ReplicaSet and ReplicationController controllers on a real cluster: kubectl applies,
scales and deletes; pods appear, run and go to converge; orphans are adopted, pods whose
labels change are released; status counts what the pods are
(``test/integration/replicaset/replicaset_test.go``)."""

from __future__ import annotations

import pytest
from control_plane import ControlPlane, wait_for
from kubernetes import client as k8s

RS = """\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}, tier: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
"""

RC = """\
apiVersion: v1
kind: ReplicationController
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
"""


def pods_of(cluster: ControlPlane, app: str) -> list[dict]:
    return cluster.get_json("pods", "-l", f"app={app}")["items"]


def live(pods: list[dict]) -> list[dict]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def running_ready(cluster: ControlPlane, app: str, count: int) -> list[dict] | None:
    pods = live(pods_of(cluster, app))
    ready = [
        p
        for p in pods
        if p["status"].get("phase") == "Running"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
    ]
    return pods if len(pods) == count and len(ready) == count else None


def status_is(cluster: ControlPlane, kind: str, name: str, **expected: int) -> dict | None:
    obj = cluster.get_json(kind, name)
    status = obj.get("status") or {}
    got = {k: status.get(k, 0) for k in expected}
    if got == expected and status.get("observedGeneration") == obj["metadata"]["generation"]:
        return obj
    return None


@pytest.mark.parametrize(
    ("kind", "manifest"),
    [("replicaset", RS), ("replicationcontroller", RC)],
    ids=["replicaset-creates-scales-up-and-down", "replicationcontroller-does-the-same"],
)
def test_replicas_converge_through_scale_up_and_down(cluster: ControlPlane, kind, manifest):
    name = f"conv-{kind[-3:]}"
    cluster.kubectl("apply", "-f", "-", stdin=manifest.format(name=name, replicas=3))
    pods = wait_for(lambda: running_ready(cluster, name, 3), what="3 running pods")
    owner = cluster.get_json(kind, name)
    for pod in pods:
        meta = pod["metadata"]
        assert meta["generateName"] == f"{name}-"
        assert meta["name"].startswith(f"{name}-") and len(meta["name"]) == len(name) + 6
        assert meta["ownerReferences"] == [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": name,
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    wait_for(
        lambda: status_is(
            cluster,
            kind,
            name,
            replicas=3,
            fullyLabeledReplicas=3,
            readyReplicas=3,
            availableReplicas=3,
        ),
        what="status with 3 available",
    )
    assert (
        cluster.kubectl("scale", f"{kind}/{name}", "--replicas=5")
        .strip()
        .endswith(f"/{name} scaled")
    )
    wait_for(lambda: running_ready(cluster, name, 5), what="5 running pods")
    cluster.kubectl("scale", f"{kind}/{name}", "--replicas=1")
    wait_for(lambda: running_ready(cluster, name, 1), what="1 pod left")
    wait_for(lambda: status_is(cluster, kind, name, replicas=1, availableReplicas=1), what="1")
    # Expectations: however the watch lagged, exactly 3 + 2 pods were ever created.
    created = [
        pod for event, pod, owner in cluster.pod_events() if event == "ADDED" and owner == name
    ]
    assert len(created) == 5
    events = cluster.get_json("events", "--field-selector", f"involvedObject.name={name}")
    reasons = {e["reason"] for e in events["items"]}
    assert {"SuccessfulCreate", "SuccessfulDelete"} <= reasons
    assert not cluster.rebound()


def test_a_deleted_pod_is_replaced(cluster: ControlPlane):
    cluster.kubectl("apply", "-f", "-", stdin=RS.format(name="repl", replicas=2))
    pods = wait_for(lambda: running_ready(cluster, "repl", 2), what="2 running pods")
    victim = pods[0]["metadata"]["name"]
    cluster.kubectl("delete", "pod", victim, "--wait=false")

    def replaced() -> list[dict] | None:
        now = running_ready(cluster, "repl", 2)
        return now if now and victim not in {p["metadata"]["name"] for p in now} else None

    wait_for(replaced, what="a replacement pod")


def test_orphans_are_adopted_and_pods_whose_labels_change_are_released(cluster: ControlPlane):
    core = k8s.CoreV1Api(cluster.api_client())
    for i in range(2):
        core.create_namespaced_pod(
            "default",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"orphan-{i}", "labels": {"app": "adopt", "tier": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        )
    cluster.kubectl("apply", "-f", "-", stdin=RS.format(name="adopt", replicas=3))
    rs = cluster.get_json("replicaset", "adopt")
    pods = wait_for(lambda: running_ready(cluster, "adopt", 3), what="3 pods")
    names = {p["metadata"]["name"] for p in pods}
    assert {"orphan-0", "orphan-1"} <= names  # adopted, so only one was created
    for pod in pods:
        assert pod["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    # A pod relabelled out of the selector is released, and replaced.
    core.patch_namespaced_pod("orphan-0", "default", {"metadata": {"labels": {"app": "gone"}}})

    def released() -> dict | None:
        pod = core.read_namespaced_pod("orphan-0", "default")
        return pod if not pod.metadata.owner_references else None

    wait_for(released, what="orphan-0 released")
    wait_for(lambda: running_ready(cluster, "adopt", 3), what="a replacement for orphan-0")
    core.delete_namespaced_pod("orphan-0", "default", grace_period_seconds=0)


def test_min_ready_seconds_holds_availability_back(cluster: ControlPlane):
    manifest = RS.format(name="minready", replicas=1).replace(
        "  replicas: 1\n", "  replicas: 1\n  minReadySeconds: 2\n"
    )
    cluster.kubectl("apply", "-f", "-", stdin=manifest)
    wait_for(
        lambda: status_is(cluster, "replicaset", "minready", readyReplicas=1, availableReplicas=0),
        what="ready but not yet available",
    )
    wait_for(
        lambda: status_is(cluster, "replicaset", "minready", readyReplicas=1, availableReplicas=1),
        what="available after minReadySeconds",
    )
