"""Simulated nodes and the simulated kubelet (issue 4, item 5; issue 13, item 1), driven
with the ``kubernetes`` client."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.apiserver.runner import start_apiserver
from kubesched.cli.apiserver import main as cli_main
from kubesched.cli.cluster import ClusterHandle, start_cluster
from kubesched.objects.nodes import SIMULATED_ANNOTATION, NodeTemplateError, make_nodes


def _wait(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterHandle]:
    path = tmp_path_factory.mktemp("kubelet") / "kubeconfig"
    handle = start_cluster(kubeconfig_path=path, nodes=3, run_delay=0.2, node_lease_interval=0.2)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def core(server: ClusterHandle) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig_path))
    yield client.CoreV1Api(api)
    api.close()


def _pod(name: str, grace: int = 30) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name="c", image="pause")],
            termination_grace_period_seconds=grace,
        ),
    )


def _bind(core: client.CoreV1Api, name: str, node: str) -> None:
    body = client.V1Binding(
        metadata=client.V1ObjectMeta(name=name),
        target=client.V1ObjectReference(kind="Node", name=node),
    )
    response = core.create_namespaced_pod_binding(name, "default", body, _preload_content=False)
    assert response.status == 201


def _gone(core: client.CoreV1Api, name: str) -> bool:
    try:
        core.read_namespaced_pod(name, "default")
    except ApiException as exc:
        return exc.status == 404
    return False


def test_three_ready_nodes_with_labels_and_capacity(core: client.CoreV1Api) -> None:
    nodes = core.list_node().items
    assert [n.metadata.name for n in nodes] == ["node-0", "node-1", "node-2"]
    zones = set()
    for node in nodes:
        labels = node.metadata.labels
        assert labels["kubernetes.io/hostname"] == node.metadata.name
        assert labels["topology.kubernetes.io/region"] == "sim-region"
        assert labels["node.kubernetes.io/instance-type"]
        zones.add(labels["topology.kubernetes.io/zone"])
        assert node.metadata.annotations[SIMULATED_ANNOTATION] == "true"
        assert node.status.capacity["cpu"] == "32"
        assert node.status.allocatable["memory"] == "256Gi"
        ready = [c for c in node.status.conditions if c.type == "Ready"]
        assert ready[0].status == "True"
        assert node.status.addresses[0].type == "InternalIP"
    assert zones == {"sim-region-a", "sim-region-b", "sim-region-c"}


def test_bound_pod_becomes_running_after_the_delay(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("run1"))
    time.sleep(0.4)
    assert core.read_namespaced_pod("run1", "default").status.phase == "Pending"  # unbound
    bound_at = time.monotonic()
    _bind(core, "run1", "node-1")
    pod = _wait(
        lambda: (p := core.read_namespaced_pod("run1", "default")).status.phase == "Running" and p
    )
    assert time.monotonic() - bound_at >= 0.15
    status = pod.status
    kinds = {c.type: c.status for c in status.conditions}
    assert kinds["Ready"] == kinds["ContainersReady"] == kinds["Initialized"] == "True"
    assert kinds["PodScheduled"] == "True"
    assert status.pod_ip.startswith("10.128.1.")
    assert status.host_ip == "10.0.0.2"
    assert status.start_time is not None
    assert status.container_statuses[0].ready
    assert status.container_statuses[0].state.running is not None
    assert status.qos_class == "BestEffort"


def test_graceful_delete_on_a_simulated_node_finishes_promptly(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", _pod("del1", grace=30))
    _bind(core, "del1", "node-0")
    _wait(lambda: core.read_namespaced_pod("del1", "default").status.phase == "Running")
    started = time.monotonic()
    deleted = core.delete_namespaced_pod("del1", "default")
    assert deleted.metadata.deletion_timestamp is not None  # graceful: it stays a moment
    _wait(lambda: _gone(core, "del1"), timeout=5)
    assert time.monotonic() - started < 5  # not the 30 s grace period


def test_pods_on_unmanaged_nodes_keep_the_grace_period(core: client.CoreV1Api) -> None:
    core.create_node(
        client.V1Node(
            metadata=client.V1ObjectMeta(name="real-1"),
            status=client.V1NodeStatus(capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
        )
    )
    core.create_namespaced_pod("default", _pod("real-pod", grace=30))
    _bind(core, "real-pod", "real-1")
    time.sleep(0.6)
    pod = core.read_namespaced_pod("real-pod", "default")
    assert pod.status.phase == "Pending"  # no kubelet for that node
    core.delete_namespaced_pod("real-pod", "default")
    time.sleep(0.6)
    assert core.read_namespaced_pod("real-pod", "default").metadata.deletion_timestamp
    core.delete_namespaced_pod("real-pod", "default", grace_period_seconds=0)


def test_deleting_a_node_fails_and_deletes_its_pods(core: client.CoreV1Api) -> None:
    core.create_node(
        client.V1Node(
            metadata=client.V1ObjectMeta(name="doomed", annotations={SIMULATED_ANNOTATION: "true"}),
            spec=client.V1NodeSpec(pod_cidr="10.200.0.0/24"),
            status=client.V1NodeStatus(capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}),
        )
    )
    for name in ("orphan1", "orphan2"):
        core.create_namespaced_pod("default", _pod(name))
        _bind(core, name, "doomed")
    for name in ("orphan1", "orphan2"):
        _wait(lambda n=name: core.read_namespaced_pod(n, "default").status.phase == "Running")
    api = client.CoordinationV1Api(core.api_client)
    _wait(lambda: api.read_namespaced_lease("doomed", "kube-node-lease"))
    core.delete_node("doomed")
    for name in ("orphan1", "orphan2"):
        _wait(lambda n=name: _gone(core, n))

    def lease_gone() -> bool:
        try:
            api.read_namespaced_lease("doomed", "kube-node-lease")
        except ApiException as exc:
            return exc.status == 404
        return False

    _wait(lease_gone)


def test_node_deletion_marks_pods_failed_first(server: ClusterHandle) -> None:
    # Seen through a store watch: MODIFIED to Failed with DisruptionTarget, then DELETED.
    from kubesched.apiserver.nodes import create_nodes
    from kubesched.apiserver.resources import NODES, PODS

    store = server.store
    create_nodes(store, make_nodes(1, {"metadata": {"name": "gcnode"}}))
    store.create(PODS, {"metadata": {"name": "gcpod"}, "spec": {"nodeName": "gcnode-0"}}, "default")
    _wait(lambda: store.get(PODS, "default", "gcpod").get("status", {}).get("phase") == "Running")
    watcher = store.watch(PODS, "default", str(store.resource_version))
    store.delete(NODES, None, "gcnode-0")
    _wait(lambda: not store.list(PODS, field_selector="metadata.name=gcpod").items)
    events = [e for e in watcher.take() if e.object["metadata"]["name"] == "gcpod"]
    watcher.close()
    assert [e.type for e in events] == ["MODIFIED", "DELETED"]
    status = events[0].object["status"]
    assert status["phase"] == "Failed"
    target = next(c for c in status["conditions"] if c["type"] == "DisruptionTarget")
    assert target["reason"] == "DeletionByPodGC"


def test_node_leases_are_renewed(core: client.CoreV1Api) -> None:
    api = client.CoordinationV1Api(core.api_client)
    lease = _wait(lambda: api.read_namespaced_lease("node-2", "kube-node-lease"))
    assert lease.spec.holder_identity == "node-2"
    assert lease.spec.lease_duration_seconds == 40
    assert lease.metadata.owner_references[0].kind == "Node"
    first = lease.spec.renew_time
    later = _wait(
        lambda: (
            (r := api.read_namespaced_lease("node-2", "kube-node-lease").spec.renew_time) > first
            and r
        )
    )
    assert later.tzinfo is not None and later <= datetime.now(UTC)


def test_without_controllers_pods_stay_pending(tmp_path: Path) -> None:
    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=1) as handle:
        api = config.new_client_from_config(config_file=str(handle.kubeconfig_path))
        core = client.CoreV1Api(api)
        try:
            core.create_namespaced_pod("default", _pod("idle"))
            _bind(core, "idle", "node-0")
            time.sleep(1.0)
            assert core.read_namespaced_pod("idle", "default").status.phase == "Pending"
            leases = client.CoordinationV1Api(api).list_namespaced_lease("kube-node-lease")
            assert leases.items == []
        finally:
            api.close()


def test_node_template_is_a_prefix_with_taints_and_gpus(tmp_path: Path) -> None:
    template = tmp_path / "gpu.yaml"
    template.write_text(
        "apiVersion: v1\n"
        "kind: Node\n"
        "metadata:\n"
        "  name: gpu\n"
        "  labels:\n"
        "    topology.kubernetes.io/region: eu-west\n"
        "    node.kubernetes.io/instance-type: g5.xlarge\n"
        "spec:\n"
        "  taints:\n"
        "  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
        "status:\n"
        "  capacity: {cpu: '4', memory: 16Gi, pods: '110', nvidia.com/gpu: '1'}\n"
    )
    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=4, node_template=template) as h:
        from kubesched.apiserver.resources import NODES

        nodes = h.store.list(NODES).items
        assert [n["metadata"]["name"] for n in nodes] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
        zones = [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes]
        assert zones == ["eu-west-a", "eu-west-b", "eu-west-c", "eu-west-a"]
        assert nodes[0]["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "g5.xlarge"
        assert nodes[0]["status"]["allocatable"]["nvidia.com/gpu"] == "1"
        assert nodes[0]["spec"]["taints"][0]["effect"] == "NoSchedule"
    gpus = make_nodes(1, gpus=8, taints=[{"key": "k", "effect": "NoExecute"}])[0]
    assert gpus["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert gpus["spec"]["taints"] == [{"key": "k", "effect": "NoExecute"}]
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\napiVersion: v1\n")
    with pytest.raises(NodeTemplateError):
        start_apiserver(kubeconfig_path=tmp_path / "kc2", node_template=bad)


def test_cli_refuses_a_bad_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("[1, 2")
    assert cli_main(["--port", "0", "--node-template", str(bad)]) == 1
    assert "not valid YAML" in capsys.readouterr().err
    assert cli_main(["--nodes", "-1"]) == 2
