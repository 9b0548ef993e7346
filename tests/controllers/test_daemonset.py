"""The DaemonSet controller on a real cluster: the embedded API server with the simulated
kubelet and the controller manager's daemonset-controller beside it, the live scheduler
placing the pods; driven by kubectl and the official client with the documentation's
``fluentd-elasticsearch`` DaemonSet (``test/e2e/apps/daemon_set.go`` in small): one pod
per eligible node (a tainted node, a nodeSelector), pinned by node affinity and placed by
the scheduler, a rolling update, history and undo.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from control_plane import ControlPlane, start_control_plane, wait_for
from kubernetes import client as k8s

#: The documentation's DaemonSet ("DaemonSet", writing a DaemonSet spec), with {name}
#: and {extra} template-spec lines to vary.
FLUENTD = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {name}
  namespace: kube-system
  labels:
    k8s-app: fluentd-logging
spec:
  selector:
    matchLabels:
      name: {name}
  template:
    metadata:
      labels:
        name: {name}
    spec:
{extra}      tolerations:
      # these tolerations are to have the daemonset runnable on control plane nodes
      # remove them if your control plane nodes should not run pods
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      containers:
      - name: fluentd-elasticsearch
        image: quay.io/fluentd_elasticsearch/fluentd:v2.5.2
        resources:
          limits:
            memory: 200Mi
          requests:
            cpu: 100m
            memory: 200Mi
        volumeMounts:
        - name: varlog
          mountPath: /var/log
      terminationGracePeriodSeconds: 30
      volumes:
      - name: varlog
        hostPath:
          path: /var/log
"""
NS = "kube-system"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """Four simulated nodes, the controller manager's controllers (the kubelet and the
    daemonset-controller among them), plus the live scheduler."""
    plane = start_control_plane(tmp_path_factory.mktemp("ds") / "kubeconfig", nodes=4)
    served = json.loads(plane.kubectl("get", "--raw", "/apis/apps/v1"))["resources"]
    if not any(r["name"] == "daemonsets" for r in served):
        plane.stop()
        pytest.fail("the server does not serve DaemonSets")
    yield plane
    plane.stop()


def nodes(cluster: ControlPlane) -> list[str]:
    return sorted(n["metadata"]["name"] for n in cluster.get_json("nodes")["items"])


def daemon_pods(cluster: ControlPlane, name: str) -> list[dict[str, Any]]:
    items = cluster.get_json("pods", "-n", NS, "-l", f"name={name}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def running_on(cluster: ControlPlane, name: str, expected: list[str], image: str = "") -> Any:
    """The DaemonSet's pods once exactly one runs Ready on each of ``expected``."""
    pods = daemon_pods(cluster, name)
    on = sorted(p["spec"].get("nodeName") or "" for p in pods)
    ready = all(
        p["status"].get("phase") == "Running"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"])
        and (not image or p["spec"]["containers"][0]["image"] == image)
        for p in pods
    )
    return pods if on == sorted(expected) and ready else None


def status_is(cluster: ControlPlane, name: str, **expected: int) -> Any:
    ds = cluster.get_json("daemonset", "-n", NS, name)
    status = ds.get("status") or {}
    if status.get("observedGeneration") != ds["metadata"]["generation"]:
        return None
    got = {k: status.get(k, 0) for k in expected}
    return ds if got == expected else None


def test_one_pod_per_eligible_node_pinned_by_affinity_and_placed_by_the_scheduler(
    cluster: ControlPlane,
):
    names = nodes(cluster)
    tainted, control_plane = names[0], names[1]
    cluster.kubectl("taint", "node", tainted, "dedicated=logging:NoSchedule")
    cluster.kubectl(
        "taint", "node", control_plane, "node-role.kubernetes.io/control-plane:NoSchedule"
    )
    try:
        cluster.kubectl("apply", "-f", "-", stdin=FLUENTD.format(name="fluentd", extra=""))
        eligible = names[1:]
        pods = wait_for(lambda: running_on(cluster, "fluentd", eligible), what="3 daemon pods")
        ds = cluster.get_json("daemonset", "-n", NS, "fluentd")
        for pod in pods:
            spec = pod["spec"]
            node = spec["nodeName"]
            terms = spec["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            assert terms == [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
            ]
            tolerations = {(t.get("key"), t.get("effect")) for t in spec["tolerations"]}
            assert {
                ("node.kubernetes.io/not-ready", "NoExecute"),
                ("node.kubernetes.io/unreachable", "NoExecute"),
                ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                ("node.kubernetes.io/unschedulable", "NoSchedule"),
                ("node-role.kubernetes.io/control-plane", "NoSchedule"),
            } <= tolerations
            meta = pod["metadata"]
            assert meta["generateName"] == "fluentd-"
            assert meta["ownerReferences"][0]["uid"] == ds["metadata"]["uid"]
            assert meta["labels"]["pod-template-generation"] == "1"
            assert meta["labels"]["controller-revision-hash"]
        wait_for(
            lambda: status_is(
                cluster,
                "fluentd",
                desiredNumberScheduled=3,
                currentNumberScheduled=3,
                numberReady=3,
                numberAvailable=3,
                updatedNumberScheduled=3,
                numberMisscheduled=0,
            ),
            what="status of 3 scheduled",
        )

        # The scheduler bound each: the controller never sets nodeName.
        def scheduled() -> bool:
            events = cluster.get_json("events", "-n", NS, "--field-selector", "reason=Scheduled")
            bound = {e["involvedObject"]["name"] for e in events["items"]}
            return {p["metadata"]["name"] for p in pods} <= bound

        wait_for(scheduled, what="the scheduler's Scheduled events")
        # The taint goes: the node gets its pod.
        cluster.kubectl("taint", "node", tainted, "dedicated-")
        wait_for(lambda: running_on(cluster, "fluentd", names), what="a 4th daemon pod")
        wait_for(
            lambda: status_is(cluster, "fluentd", desiredNumberScheduled=4, numberReady=4),
            what="4 ready",
        )
    finally:
        cluster.kubectl("taint", "node", tainted, "dedicated-", check=False)
        cluster.kubectl(
            "taint", "node", control_plane, "node-role.kubernetes.io/control-plane-", check=False
        )
        cluster.kubectl("delete", "daemonset", "-n", NS, "fluentd", "--wait=false")


def test_node_selector_follows_node_labels(cluster: ControlPlane):
    names = nodes(cluster)
    extra = "      nodeSelector:\n        disk: ssd\n"
    cluster.kubectl("label", "node", names[2], "disk=ssd")
    cluster.kubectl("apply", "-f", "-", stdin=FLUENTD.format(name="ssd", extra=extra))
    wait_for(lambda: running_on(cluster, "ssd", [names[2]]), what="one pod on the ssd node")
    cluster.kubectl("label", "node", names[3], "disk=ssd")
    wait_for(lambda: running_on(cluster, "ssd", names[2:]), what="two pods")
    cluster.kubectl("label", "node", names[2], "disk-")
    wait_for(lambda: running_on(cluster, "ssd", [names[3]]), what="the unlabelled node's pod gone")
    wait_for(
        lambda: status_is(
            cluster, "ssd", desiredNumberScheduled=1, currentNumberScheduled=1, numberReady=1
        ),
        what="status of 1",
    )
    cluster.kubectl("label", "node", names[3], "disk-")
    cluster.kubectl("delete", "daemonset", "-n", NS, "ssd", "--wait=false")


def test_a_failed_daemon_pod_is_replaced_on_its_node(cluster: ControlPlane):
    names = nodes(cluster)
    cluster.kubectl("apply", "-f", "-", stdin=FLUENTD.format(name="fail", extra=""))
    pods = wait_for(lambda: running_on(cluster, "fail", names), what="4 pods")
    victim = pods[0]
    status = {"status": {"phase": "Failed"}}
    cluster.kubectl(
        "patch",
        "pod",
        "-n",
        NS,
        victim["metadata"]["name"],
        "--subresource=status",
        "-p",
        json.dumps(status),
    )
    after = wait_for(
        lambda: (
            (now := running_on(cluster, "fail", names))
            and victim["metadata"]["uid"] not in {p["metadata"]["uid"] for p in now}
            and now
        ),
        what="the failed pod replaced",
    )
    node = victim["spec"]["nodeName"]
    assert [p["spec"]["nodeName"] for p in after].count(node) == 1
    events = cluster.get_json("events", "-n", NS, "--field-selector", "reason=FailedDaemonPod")
    assert [e["message"] for e in events["items"]] == [
        f"Found failed daemon pod {NS}/{victim['metadata']['name']} on node {node}, "
        "will try to kill it"
    ]
    cluster.kubectl("delete", "daemonset", "-n", NS, "fail", "--wait=false")


def test_rolling_update_history_and_undo(cluster: ControlPlane):
    names = nodes(cluster)
    old_image = "quay.io/fluentd_elasticsearch/fluentd:v2.5.2"
    new_image = "quay.io/fluentd_elasticsearch/fluentd:v2.6.0"
    cluster.kubectl("apply", "-f", "-", stdin=FLUENTD.format(name="roll", extra=""))
    before = wait_for(lambda: running_on(cluster, "roll", names), what="4 pods")
    cluster.kubectl(
        "set", "image", "daemonset/roll", "-n", NS, f"fluentd-elasticsearch={new_image}"
    )
    after = wait_for(lambda: running_on(cluster, "roll", names, new_image), what="4 pods updated")
    assert not {p["metadata"]["uid"] for p in before} & {p["metadata"]["uid"] for p in after}
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in after} == {"2"}
    wait_for(
        lambda: status_is(cluster, "roll", updatedNumberScheduled=4, numberAvailable=4),
        what="status updated",
    )
    out = cluster.kubectl("rollout", "status", "daemonset/roll", "-n", NS, "--timeout=60s")
    assert "successfully rolled out" in out
    apps = k8s.AppsV1Api(cluster.api_client())
    revisions = apps.list_namespaced_controller_revision(NS, label_selector="name=roll")
    assert sorted(r.revision for r in revisions.items) == [1, 2]
    history = cluster.kubectl("rollout", "history", "daemonset/roll", "-n", NS)
    assert [line.split()[0] for line in history.strip().splitlines()[2:]] == ["1", "2"]
    assert old_image in cluster.kubectl(
        "rollout", "history", "daemonset/roll", "-n", NS, "--revision=1"
    )
    cluster.kubectl("rollout", "undo", "daemonset/roll", "-n", NS)
    wait_for(lambda: running_on(cluster, "roll", names, old_image), what="rolled back")
    revisions = apps.list_namespaced_controller_revision(NS, label_selector="name=roll")
    # The undone template's revision is renumbered, not copied.
    assert sorted(r.revision for r in revisions.items) == [2, 3]
    cluster.kubectl("delete", "daemonset", "-n", NS, "roll", "--wait=false")


def test_max_surge_makes_the_new_pod_before_deleting_the_old(cluster: ControlPlane):
    names = nodes(cluster)
    new_image = "quay.io/fluentd_elasticsearch/fluentd:v2.6.0"
    cluster.kubectl("apply", "-f", "-", stdin=FLUENTD.format(name="surge", extra=""))
    wait_for(lambda: running_on(cluster, "surge", names), what="4 pods")
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    patch = {
        "spec": {
            "updateStrategy": strategy,
            "template": {
                "spec": {"containers": [{"name": "fluentd-elasticsearch", "image": new_image}]}
            },
        }
    }
    # ValidateRollingUpdateDaemonSet allows maxUnavailable 0 beside a maxSurge.
    cluster.kubectl("patch", "daemonset/surge", "-n", NS, "-p", json.dumps(patch))
    wait_for(lambda: running_on(cluster, "surge", names, new_image), what="4 pods updated")
    # On every node the new pod came before the old one went: never fewer than 4 pods.
    alive = 0
    lowest = None
    for event, _pod, owner in cluster.pod_events():
        if owner != "surge":
            continue
        alive += 1 if event == "ADDED" else -1
        if alive >= len(names) or lowest is not None:
            lowest = alive if lowest is None else min(lowest, alive)
    assert lowest == len(names)
    cluster.kubectl("delete", "daemonset", "-n", NS, "surge", "--wait=false")
