"""The StatefulSet controller on a real cluster (conftest's ``cluster``): the embedded API
server with the controller manager's controllers beside it (the simulated kubelet and the
statefulset-controller among them), the live scheduler placing the pods; driven by kubectl
and the official client with the documentation's ``web`` StatefulSet (``test/e2e/apps/statefulset.go`` in small):
ordered creation and scale-down, identity, rolling update with a partition, OnDelete,
Parallel, claim templates whose claims are provisioned before the pods run, history and undo.
"""

from __future__ import annotations

import json
from typing import Any

from control_plane import ControlPlane, wait_for
from kubernetes import client as k8s

#: The documentation's ``web`` StatefulSet ("StatefulSet Basics") and its headless
#: Service, with {name}, {replicas} and {extra} spec lines to vary; the claim template
#: is added by the test that needs it.
WEB = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  ports:
  - port: 80
    name: web
  clusterIP: None
  selector: {{app: {name}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
spec:
  serviceName: {name}
  replicas: {replicas}
  minReadySeconds: 0
  selector:
    matchLabels: {{app: {name}}}
{extra}  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: nginx
        image: registry.k8s.io/nginx-slim:0.21
        ports:
        - containerPort: 80
          name: web
"""

CLAIM_TEMPLATE = """\
  volumeClaimTemplates:
  - metadata:
      name: www
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
"""


def apply(cluster: ControlPlane, name: str, replicas: int, extra: str = "") -> None:
    cluster.kubectl("apply", "-f", "-", stdin=WEB.format(name=name, replicas=replicas, extra=extra))


def running(pod: dict[str, Any]) -> bool:
    return pod["status"].get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in pod["status"].get("conditions") or ()
    )


def pods_of(cluster: ControlPlane, name: str) -> dict[str, dict[str, Any]]:
    """The set's pods not being deleted, by name."""
    items = cluster.get_json("pods", "-l", f"app={name}")["items"]
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


def exactly_running(cluster: ControlPlane, name: str, names: list[str]) -> Any:
    pods = pods_of(cluster, name)
    if sorted(pods) == sorted(names) and all(running(p) for p in pods.values()):
        return pods
    return None


def settled(cluster: ControlPlane, name: str, **expected: Any) -> dict[str, Any] | None:
    """The set once its status shows ``expected`` for its current generation."""
    sts = cluster.get_json("statefulset", name)
    status = sts.get("status") or {}
    if status.get("observedGeneration") != sts["metadata"]["generation"]:
        return None
    if all(status.get(k, 0) == v for k, v in expected.items()):
        return sts
    return None


def served(cluster: ControlPlane, plural: str, group_version: str) -> bool:
    path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    found = json.loads(cluster.kubectl("get", "--raw", path))
    return any(r["name"] == plural for r in found["resources"])


def order(cluster: ControlPlane, event: str, name: str) -> list[str]:
    return [pod for ev, pod, owner in cluster.pod_events() if ev == event and owner == name]


def test_pods_are_made_in_order_with_stable_identity_and_scaled_down_in_reverse(
    cluster: ControlPlane,
):
    apply(cluster, "web", 3)
    pods = wait_for(
        lambda: exactly_running(cluster, "web", ["web-0", "web-1", "web-2"]), what="web-0..2"
    )
    # OrderedReady: each pod was made only after its predecessor was Running and Ready.
    assert order(cluster, "ADDED", "web") == ["web-0", "web-1", "web-2"]
    sts = cluster.get_json("statefulset", "web")
    for ordinal in range(3):
        pod = pods[f"web-{ordinal}"]
        labels = pod["metadata"]["labels"]
        assert labels["statefulset.kubernetes.io/pod-name"] == f"web-{ordinal}"
        assert labels["apps.kubernetes.io/pod-index"] == str(ordinal)
        assert labels["controller-revision-hash"].startswith("web-")
        assert pod["spec"]["hostname"] == f"web-{ordinal}"
        assert pod["spec"]["subdomain"] == "web"
        assert pod["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": "web",
                "uid": sts["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    revision = pods["web-0"]["metadata"]["labels"]["controller-revision-hash"]
    sts = wait_for(
        lambda: settled(
            cluster,
            "web",
            replicas=3,
            readyReplicas=3,
            availableReplicas=3,
            currentReplicas=3,
            updatedReplicas=3,
            currentRevision=revision,
            updateRevision=revision,
        ),
        what="status of 3 ready replicas",
    )
    out = cluster.kubectl("get", "statefulset", "web")
    assert out.split("\n")[1].split()[:2] == ["web", "3/3"]

    cluster.kubectl("scale", "statefulset/web", "--replicas=1")
    wait_for(lambda: exactly_running(cluster, "web", ["web-0"]), what="web-0 alone")
    # Scale-down goes from the highest ordinal, one at a time.
    assert order(cluster, "DELETED", "web") == ["web-2", "web-1"]
    wait_for(lambda: settled(cluster, "web", replicas=1, readyReplicas=1), what="1 replica")
    events = cluster.get_json("events", "--field-selector", "involvedObject.name=web")
    messages = {e["message"] for e in events["items"]}
    assert "create Pod web-1 in StatefulSet web successful" in messages
    assert "delete Pod web-2 in StatefulSet web successful" in messages

    # A deleted pod comes back with the same name.
    uid = pods["web-0"]["metadata"]["uid"]
    cluster.kubectl("delete", "pod", "web-0", "--wait=false")
    again = wait_for(
        lambda: (
            (p := exactly_running(cluster, "web", ["web-0"]))
            and p["web-0"]["metadata"]["uid"] != uid
            and p
        ),
        what="web-0 made again",
    )
    assert again["web-0"]["spec"]["hostname"] == "web-0"
    assert not cluster.rebound()


def image_of(pod: dict[str, Any]) -> str:
    return str(pod["spec"]["containers"][0]["image"])


def test_rolling_update_stops_at_the_partition_then_finishes(cluster: ControlPlane):
    partition = (
        "  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate:\n      partition: 2\n"
    )
    apply(cluster, "roll", 3, partition)
    wait_for(lambda: exactly_running(cluster, "roll", ["roll-0", "roll-1", "roll-2"]), what="3")
    old = wait_for(lambda: settled(cluster, "roll", updatedReplicas=3), what="settled")
    old_revision = old["status"]["currentRevision"]
    cluster.kubectl("set", "image", "statefulset/roll", "nginx=registry.k8s.io/nginx-slim:0.24")

    def partitioned() -> Any:
        pods = exactly_running(cluster, "roll", ["roll-0", "roll-1", "roll-2"])
        if not pods or not image_of(pods["roll-2"]).endswith(":0.24"):
            return None
        return pods

    pods = wait_for(partitioned, what="roll-2 updated")
    assert [image_of(pods[f"roll-{i}"]) for i in range(2)] == [
        "registry.k8s.io/nginx-slim:0.21"
    ] * 2
    sts = wait_for(
        lambda: settled(cluster, "roll", updatedReplicas=1, currentReplicas=2, readyReplicas=3),
        what="status of a partitioned update",
    )
    assert sts["status"]["currentRevision"] == old_revision
    new_revision = sts["status"]["updateRevision"]
    assert new_revision != old_revision
    assert pods["roll-2"]["metadata"]["labels"]["controller-revision-hash"] == new_revision

    cluster.kubectl(
        "patch",
        "statefulset/roll",
        "-p",
        '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}',
    )
    done = wait_for(
        lambda: settled(
            cluster,
            "roll",
            updatedReplicas=3,
            currentReplicas=3,
            readyReplicas=3,
            currentRevision=new_revision,
        ),
        what="the update complete",
    )
    assert done["status"]["updateRevision"] == new_revision
    pods = pods_of(cluster, "roll")
    assert {image_of(p) for p in pods.values()} == {"registry.k8s.io/nginx-slim:0.24"}
    # Updated from the highest ordinal down.
    deleted = order(cluster, "DELETED", "roll")
    assert deleted == ["roll-2", "roll-1", "roll-0"]


def test_on_delete_waits_for_the_user_and_parallel_makes_all_at_once(cluster: ControlPlane):
    extra = "  podManagementPolicy: Parallel\n  updateStrategy:\n    type: OnDelete\n"
    apply(cluster, "par", 3, extra)
    wait_for(lambda: exactly_running(cluster, "par", ["par-0", "par-1", "par-2"]), what="3")
    cluster.kubectl("set", "image", "statefulset/par", "nginx=registry.k8s.io/nginx-slim:0.24")
    sts = wait_for(lambda: settled(cluster, "par", replicas=3, updatedReplicas=0), what="gen 2")
    assert sts["status"]["currentRevision"] != sts["status"]["updateRevision"]
    assert {image_of(p) for p in pods_of(cluster, "par").values()} == {
        "registry.k8s.io/nginx-slim:0.21"
    }
    cluster.kubectl("delete", "pod", "par-1", "--wait=false")
    pods = wait_for(
        lambda: (
            (p := exactly_running(cluster, "par", ["par-0", "par-1", "par-2"]))
            and image_of(p["par-1"]).endswith(":0.24")
            and p
        ),
        what="par-1 made again at the new revision",
    )
    assert image_of(pods["par-0"]).endswith(":0.21")
    cluster.kubectl("scale", "statefulset/par", "--replicas=0")
    wait_for(lambda: exactly_running(cluster, "par", []) == {}, what="no pods")


def test_claim_templates_become_claims_the_pods_wait_for(cluster: ControlPlane):
    assert served(cluster, "persistentvolumeclaims", "v1")
    apply(cluster, "claims", 2, "  podManagementPolicy: Parallel\n" + CLAIM_TEMPLATE)
    # The live scheduler's VolumeBinding gives each WaitForFirstConsumer claim its pod's
    # node; the provisioner and the PV controller do the rest; then the pod is bound.
    pods = wait_for(
        lambda: exactly_running(cluster, "claims", ["claims-0", "claims-1"]),
        what="2 pods Running on provisioned volumes",
    )
    for pod_name, pod in pods.items():
        claim_name = f"www-{pod_name}"
        assert {"name": "www", "persistentVolumeClaim": {"claimName": claim_name}} in pod["spec"][
            "volumes"
        ]
        claim = cluster.get_json("pvc", claim_name)
        assert claim["status"]["phase"] == "Bound"
        assert claim["metadata"]["labels"] == {"app": "claims"}
        selected = claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        assert selected == pod["spec"]["nodeName"]
        assert claim["spec"]["storageClassName"] == "standard"
        volume = cluster.get_json("pv", claim["spec"]["volumeName"])
        (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert term["matchExpressions"] == [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [pod["spec"]["nodeName"]]}
        ]


def test_rollout_history_and_undo(cluster: ControlPlane):
    assert served(cluster, "controllerrevisions", "apps/v1")
    apply(cluster, "hist", 2)
    wait_for(lambda: settled(cluster, "hist", updatedReplicas=2, readyReplicas=2), what="v1")
    cluster.kubectl("set", "image", "statefulset/hist", "nginx=registry.k8s.io/nginx-slim:0.24")
    wait_for(
        lambda: (
            (s := settled(cluster, "hist", updatedReplicas=2, readyReplicas=2))
            and s["status"]["currentRevision"] == s["status"]["updateRevision"]
            and {image_of(p) for p in pods_of(cluster, "hist").values()}
            == {"registry.k8s.io/nginx-slim:0.24"}
        ),
        what="v2 rolled out",
    )
    out = cluster.kubectl("rollout", "status", "statefulset/hist", "--timeout=60s")
    assert "roll out complete: 2 new pods have been updated" in out
    apps = k8s.AppsV1Api(cluster.api_client())
    revisions = apps.list_namespaced_controller_revision("default", label_selector="app=hist")
    assert sorted(r.revision for r in revisions.items) == [1, 2]
    history = cluster.kubectl("rollout", "history", "statefulset/hist")
    assert [line.split()[0] for line in history.strip().splitlines()[2:]] == ["1", "2"]
    assert "nginx-slim:0.21" in cluster.kubectl(
        "rollout", "history", "statefulset/hist", "--revision=1"
    )
    cluster.kubectl("rollout", "undo", "statefulset/hist")
    wait_for(
        lambda: (
            {image_of(p) for p in pods_of(cluster, "hist").values()}
            == {"registry.k8s.io/nginx-slim:0.21"}
            and settled(cluster, "hist", updatedReplicas=2, readyReplicas=2)
        ),
        what="rolled back to v1",
    )
    revisions = apps.list_namespaced_controller_revision("default", label_selector="app=hist")
    # The undone template's revision is renumbered, not copied.
    assert sorted(r.revision for r in revisions.items) == [2, 3]
