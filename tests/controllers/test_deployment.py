"""The Deployment controller on a real cluster, driven by kubectl as the Kubernetes
documentation drives it (``concepts/workloads/controllers/deployment``): apply the nginx
example, watch the rollout finish, update the image, restart, scale, undo, pause, and
the Recreate strategy (``test/integration/deployment/deployment_test.go``)."""

from __future__ import annotations

import pytest
from control_plane import ControlPlane, wait_for

#: The documentation's example, unchanged (k8s.io/examples/controllers/nginx-deployment.yaml).
NGINX = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
"""


@pytest.fixture(scope="module", autouse=True)
def deployments_served(cluster: ControlPlane) -> None:
    # The controllers start only for what the server serves: Deployments must be.
    assert "deployment-controller" in cluster.controllers


def manifest(name: str, replicas: int = 3, extra_spec: str = "") -> str:
    return (
        NGINX.replace("nginx-deployment", name)
        .replace("app: nginx", f"app: {name}")
        .replace("  replicas: 3\n", f"  replicas: {replicas}\n{extra_spec}")
    )


def replica_sets(cluster: ControlPlane, name: str) -> list[dict]:
    items = cluster.get_json("replicasets", "-l", f"app={name}")["items"]
    return sorted(items, key=lambda rs: int(rs["metadata"]["annotations"][REVISION]))


def live_pods(cluster: ControlPlane, name: str) -> list[dict]:
    items = cluster.get_json("pods", "-l", f"app={name}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def exactly(count: int, items: list[dict]) -> list[dict] | None:
    return items if len(items) == count else None


def rollout_status(cluster: ControlPlane, name: str) -> str:
    return cluster.kubectl("rollout", "status", f"deployment/{name}", "--timeout=60s")


def condition(obj: dict, kind: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


REVISION = "deployment.kubernetes.io/revision"


def test_the_documentations_nginx_example_rolls_out(cluster: ControlPlane, tmp_path):
    path = tmp_path / "nginx-deployment.yaml"
    path.write_text(NGINX)
    assert cluster.kubectl("apply", "-f", str(path)).strip() == (
        "deployment.apps/nginx-deployment created"
    )
    out = rollout_status(cluster, "nginx-deployment")
    assert 'deployment "nginx-deployment" successfully rolled out' in out
    d = cluster.get_json("deployment", "nginx-deployment")
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    for field in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
        assert d["status"][field] == 3, field
    available = condition(d, "Available")
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    assert d["metadata"]["annotations"][REVISION] == "1"
    [rs] = cluster.get_json("replicasets", "-l", "app=nginx")["items"]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"nginx-deployment-{template_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {
        "app": "nginx",
        "pod-template-hash": template_hash,
    }
    assert rs["metadata"]["annotations"][REVISION] == "1"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "3"
    owner = rs["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == (
        "Deployment",
        "nginx-deployment",
        True,
    )
    pods = live_pods(cluster, "nginx")
    assert len(pods) == 3
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == {template_hash}
    events = cluster.get_json("events", "--field-selector", "involvedObject.name=nginx-deployment")[
        "items"
    ]
    assert f"Scaled up replica set {rs['metadata']['name']} from 0 to 3" in {
        e["message"] for e in events if e["reason"] == "ScalingReplicaSet"
    }
    assert not cluster.rebound()


def test_set_image_rolls_out_a_new_replica_set_and_undo_returns(cluster: ControlPlane):
    name = "roll"
    cluster.kubectl("apply", "-f", "-", stdin=manifest(name))
    rollout_status(cluster, name)
    cluster.kubectl("set", "image", f"deployment/{name}", "nginx=nginx:1.16.1")
    assert "successfully rolled out" in rollout_status(cluster, name)
    old, new = replica_sets(cluster, name)
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 3)
    assert new["metadata"]["annotations"][REVISION] == "2"
    pods = wait_for(lambda: exactly(3, live_pods(cluster, name)), what="3 pods")
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:1.16.1"}
    history = cluster.kubectl("rollout", "history", f"deployment/{name}")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    # Undo: the first ReplicaSet comes back as revision 3, remembering it was 1.
    cluster.kubectl("rollout", "undo", f"deployment/{name}")
    assert "successfully rolled out" in rollout_status(cluster, name)
    first = next(
        rs for rs in replica_sets(cluster, name) if rs["metadata"]["uid"] == old["metadata"]["uid"]
    )
    assert first["spec"]["replicas"] == 3
    assert first["metadata"]["annotations"][REVISION] == "3"
    assert first["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert len(replica_sets(cluster, name)) == 2
    assert not cluster.rebound()


def test_rollout_restart_and_scale_converge(cluster: ControlPlane):
    name = "restart"
    cluster.kubectl("apply", "-f", "-", stdin=manifest(name))
    rollout_status(cluster, name)
    before = {p["metadata"]["name"] for p in live_pods(cluster, name)}
    cluster.kubectl("rollout", "restart", f"deployment/{name}")
    assert "successfully rolled out" in rollout_status(cluster, name)
    after = wait_for(lambda: exactly(3, live_pods(cluster, name)), what="3 pods")
    assert not before & {p["metadata"]["name"] for p in after}
    for pod in after:
        assert "kubectl.kubernetes.io/restartedAt" in pod["metadata"]["annotations"]
    assert cluster.kubectl("scale", f"deployment/{name}", "--replicas=5").strip() == (
        f"deployment.apps/{name} scaled"
    )
    assert "successfully rolled out" in rollout_status(cluster, name)
    wait_for(lambda: len(live_pods(cluster, name)) == 5, what="5 pods")
    cluster.kubectl("scale", f"deployment/{name}", "--replicas=2")
    wait_for(lambda: len(live_pods(cluster, name)) == 2, what="2 pods")
    d = wait_for(
        lambda: (
            (d := cluster.get_json("deployment", name))["status"].get("availableReplicas") == 2
            and d["status"].get("replicas") == 2
            and d
        ),
        what="status of 2",
    )
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    assert not cluster.rebound()


def test_a_paused_deployment_does_not_roll_until_resumed(cluster: ControlPlane):
    name = "paused"
    cluster.kubectl("apply", "-f", "-", stdin=manifest(name, 2))
    rollout_status(cluster, name)
    cluster.kubectl("rollout", "pause", f"deployment/{name}")
    cluster.kubectl("set", "image", f"deployment/{name}", "nginx=nginx:1.16.1")

    def paused_condition() -> dict | None:
        d = cluster.get_json("deployment", name)
        if d["status"].get("observedGeneration") != d["metadata"]["generation"]:
            return None
        cond = condition(d, "Progressing")
        return cond if cond["reason"] == "DeploymentPaused" else None

    if "progressDeadlineSeconds" in cluster.get_json("deployment", name)["spec"]:
        assert wait_for(paused_condition, what="paused")["status"] == "Unknown"
    assert len(replica_sets(cluster, name)) == 1
    cluster.kubectl("rollout", "resume", f"deployment/{name}")
    assert "successfully rolled out" in rollout_status(cluster, name)
    assert len(replica_sets(cluster, name)) == 2


def test_recreate_removes_every_old_pod_before_creating_new_ones(cluster: ControlPlane):
    name = "recreate"
    cluster.kubectl(
        "apply", "-f", "-", stdin=manifest(name, 2, "  strategy:\n    type: Recreate\n")
    )
    rollout_status(cluster, name)
    [old] = replica_sets(cluster, name)
    cluster.kubectl("set", "image", f"deployment/{name}", "nginx=nginx:1.16.1")
    assert "successfully rolled out" in rollout_status(cluster, name)
    _, new = replica_sets(cluster, name)
    log = cluster.pod_events()
    old_name, new_name = old["metadata"]["name"], new["metadata"]["name"]
    last_old_gone = max(
        i for i, (ev, _, rs) in enumerate(log) if ev == "DELETED" and rs == old_name
    )
    first_new = min(i for i, (ev, _, rs) in enumerate(log) if ev == "ADDED" and rs == new_name)
    assert last_old_gone < first_new


def test_revision_history_limit_deletes_the_oldest_replica_sets(cluster: ControlPlane):
    name = "history"
    cluster.kubectl("apply", "-f", "-", stdin=manifest(name, 1, "  revisionHistoryLimit: 1\n"))
    rollout_status(cluster, name)
    for tag in ("1.16.1", "1.17.0", "1.18.0"):
        cluster.kubectl("set", "image", f"deployment/{name}", f"nginx=nginx:{tag}")
        rollout_status(cluster, name)
    kept = wait_for(lambda: exactly(2, replica_sets(cluster, name)), what="2 ReplicaSets")
    assert [rs["metadata"]["annotations"][REVISION] for rs in kept] == ["3", "4"]


def test_a_stuck_rollout_exceeds_its_progress_deadline(cluster: ControlPlane):
    name = "stuck"
    cluster.kubectl("apply", "-f", "-", stdin=manifest(name, 1))
    rollout_status(cluster, name)
    # A template no node can run, and a deadline of one second: the new pod stays Pending
    # and the rollout makes no progress.
    cluster.kubectl(
        "patch",
        f"deployment/{name}",
        "-p",
        '{"spec":{"progressDeadlineSeconds":1,'
        '"template":{"spec":{"nodeSelector":{"no-such-label":"x"}}}}}',
    )

    def timed_out() -> dict | None:
        cond = condition(cluster.get_json("deployment", name), "Progressing")
        return cond if cond["reason"] == "ProgressDeadlineExceeded" else None

    cond = wait_for(timed_out, what="ProgressDeadlineExceeded")
    assert cond["status"] == "False"
    assert (
        cond["message"].startswith('ReplicaSet "stuck-')
        and "timed out progressing" in cond["message"]
    )
    result = cluster.kubectl(
        "rollout", "status", f"deployment/{name}", "--timeout=20s", check=False
    )
    assert 'deployment "stuck" exceeded its progress deadline' in result


def test_deleting_a_deployment_cascades_and_orphan_keeps_the_pods(cluster: ControlPlane):
    assert "garbage-collector-controller" in cluster.controllers
    for name in ("cascade", "orphan"):
        cluster.kubectl("apply", "-f", "-", stdin=manifest(name, 2))
        rollout_status(cluster, name)
    cluster.kubectl("delete", "deployment", "cascade")
    wait_for(
        lambda: not replica_sets(cluster, "cascade") and not live_pods(cluster, "cascade"),
        what="the ReplicaSet and pods of a deleted Deployment gone",
    )
    [rs] = replica_sets(cluster, "orphan")
    cluster.kubectl("delete", "deployment", "orphan", "--cascade=orphan")

    def orphaned() -> list[dict] | None:
        found = replica_sets(cluster, "orphan")
        return found if found and not found[0]["metadata"].get("ownerReferences") else None

    [kept] = wait_for(orphaned, what="the ReplicaSet orphaned")
    assert kept["metadata"]["uid"] == rs["metadata"]["uid"]
    assert len(live_pods(cluster, "orphan")) == 2  # the ReplicaSet keeps its pods
