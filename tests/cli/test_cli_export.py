"""``kubesched export`` against the real embedded API server, and the round trip the
issue asks for: export a cluster, let the live scheduler place its pending pods, then
``kubesched simulate`` on the exported files must place them the same way."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli import main
from kubesched.cli.export import JOBS, split_export
from kubesched.config import load_config
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import (
    NODES,
    POD_DISRUPTION_BUDGETS,
    PODS,
    PRIORITY_CLASSES,
    REPLICA_SETS,
    SERVICES,
)
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from kubesched.sim.files import load_objects

OURS = "kubesched"
CONFIG = f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
  - schedulerName: {OURS}
"""

#: name → (cpu, memory, zone, tainted). Capacities far apart, so that scores rarely tie.
NODE_SHAPES = {
    "n-small": ("2", "4Gi", "zone-a", False),
    "n-mid": ("6", "12Gi", "zone-a", False),
    "n-big": ("16", "32Gi", "zone-b", False),
    "n-huge": ("32", "64Gi", "zone-b", False),
    "n-tainted": ("32", "64Gi", "zone-c", True),
}


@pytest.fixture
def apiserver(tmp_path: Path) -> Any:
    handle = start_apiserver(kubeconfig_path=tmp_path / "kubeconfig", bookmark_interval=0.2)
    yield handle
    handle.stop()


def node(name: str) -> dict[str, Any]:
    cpu, memory, zone, tainted = NODE_SHAPES[name]
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
            "annotations": {"secret-ish": "do not copy me"},
        },
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }
    if tainted:
        raw["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    return raw


def pod(name: str, cpu: str, memory: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "schedulerName": OURS,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/web:1",
                    "env": [{"name": "PASSWORD", "value": "hunter2"}],
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
            **spec,
        },
    }


async def populate(client: Client) -> list[str]:
    """Nodes, bound pods that change where the pending ones go, and pending pods with
    distinct priorities (so both schedulers take them in the same order)."""
    for name in NODE_SHAPES:
        await client.create(NODES.raw, node(name))
    # The huge node is nearly full already: without these pods it would win every time.
    for i in range(7):
        await client.create(PODS.raw, pod(f"bound-{i}", "4", "8Gi", nodeName="n-huge"))
    await client.create(PODS.raw, pod("bound-mid", "3", "6Gi", nodeName="n-mid"))
    await client.create(
        SERVICES.raw,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
        },
    )
    # No replicas (so no controller adds pods); its template is cut as pods are, and the
    # ReplicaSet still loads: validation wants a template matching the selector.
    template = pod("tmpl", "1", "1Gi")
    await client.create(
        REPLICA_SETS.raw,
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": template["spec"]},
            },
        },
    )
    await client.create(
        POD_DISRUPTION_BUDGETS.raw,
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    pending = []
    shapes = [("1", "1Gi"), ("2", "2Gi"), ("500m", "3Gi"), ("3", "1Gi"), ("1", "6Gi")]
    for i in range(10):
        name = f"pending-{i}"
        await client.create(
            PRIORITY_CLASSES.raw,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": f"prio-{i}"},
                "value": 1000 - i,
            },
        )
        cpu, memory = shapes[i % len(shapes)]
        spec: dict[str, Any] = {"priorityClassName": f"prio-{i}"}
        if i == 4:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            spec["nodeSelector"] = {"topology.kubernetes.io/zone": "zone-c"}
        await client.create(PODS.raw, pod(name, cpu, memory, **spec))
        pending.append(name)
    return pending


async def schedule_live(kubeconfig: Path, config_path: Path, names: list[str]) -> dict[str, str]:
    """Run the live scheduler until every named pod is bound; their nodes."""
    async with Client(load_kubeconfig([kubeconfig]), qps=1000, burst=1000) as client:
        sched = Scheduler(
            load_config(str(config_path)), in_tree_registry(), client, rng=random.Random(0)
        )
        task = asyncio.create_task(sched.run())
        try:
            deadline = asyncio.get_running_loop().time() + 10
            while True:
                pods = (await client.list(PODS.raw, "default")).items
                placed = {
                    p["metadata"]["name"]: p["spec"].get("nodeName", "")
                    for p in pods
                    if p["metadata"]["name"] in names
                }
                if all(placed.values()) and len(placed) == len(names):
                    return placed
                assert asyncio.get_running_loop().time() < deadline, f"not bound: {placed}"
                await asyncio.sleep(0.05)
        finally:
            sched.stop()
            await task


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, str]:
    assert main(["simulate", *args, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    return {p["pod"].split("/")[-1]: p["node"] for p in data["placements"]}


def test_export_then_simulate_places_pods_where_the_live_scheduler_did(
    apiserver: ApiServerHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = Path(apiserver.kubeconfig_path)
    config_path = tmp_path / "config.yaml"
    config_path.write_text(CONFIG)

    async def setup() -> list[str]:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            return await populate(client)

    names = asyncio.run(setup())
    cluster, pending = tmp_path / "cluster.yaml", tmp_path / "pending.yaml"
    args = ["export", "--kubeconfig", str(kubeconfig), "-o", str(cluster)]
    assert main([*args, "--pending", str(pending)]) == 0
    summary = capsys.readouterr().err
    assert "5 Node" in summary and "8 Pod" in summary and "10 pending pods" in summary

    live = asyncio.run(schedule_live(kubeconfig, config_path, names))

    sim_args = ["--cluster", str(cluster), "--pods", str(pending), "--config", str(config_path)]
    simulated = simulate(capsys, *sim_args, "--seed", "1")
    assert simulated == live
    # No tie decided a placement (another tie-break seed gives the same answer), so the
    # agreement above is not luck; and the bound pods the export carried mattered.
    assert simulate(capsys, *sim_args, "--seed", "7") == live
    assert len(set(live.values())) >= 3
    assert live["pending-4"] == "n-tainted"

    bare = tmp_path / "bare.yaml"
    doc = yaml.safe_load(cluster.read_text())
    doc["items"] = [o for o in doc["items"] if o["kind"] != "Pod"]
    bare.write_text(yaml.safe_dump(doc))
    without_bound = simulate(
        capsys, "--cluster", str(bare), "--pods", str(pending), "--config", str(config_path)
    )
    assert without_bound != live


def test_export_is_trimmed_and_loads_without_ignored_kinds(
    apiserver: ApiServerHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = Path(apiserver.kubeconfig_path)

    async def setup() -> None:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            await populate(client)

    asyncio.run(setup())
    out = tmp_path / "cluster.json"
    assert main(["export", "--kubeconfig", str(kubeconfig), "-o", str(out)]) == 0
    text = out.read_text()
    assert "hunter2" not in text and "PASSWORD" not in text
    assert "do not copy me" not in text and "managedFields" not in text
    objects = load_objects(out)
    assert objects.ignored_kinds == {}
    assert len(objects.nodes) == 5
    assert {p.name for p in objects.pods} == {f"bound-{i}" for i in range(7)} | {"bound-mid"}
    assert [w.kind for w in objects.workloads] == ["Service", "ReplicaSet"]
    assert objects.pdbs[0].name == "web"
    huge = next(n for n in objects.nodes if n.name == "n-huge")
    assert huge.labels["topology.kubernetes.io/zone"] == "zone-b"
    tainted = next(n for n in objects.nodes if n.name == "n-tainted")
    assert [t.key for t in tainted.taints] == ["dedicated"]

    # A new pod explained against the copy: the tainted node is rejected with the reason.
    new_pod = tmp_path / "pod.yaml"
    new_pod.write_text(yaml.safe_dump(pod("newcomer", "1", "1Gi")))
    assert main(["explain", "--cluster", str(out), "--pod", str(new_pod), "-o", "json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    reasons = {n["name"]: n.get("reason", "") for n in explained["nodes"]}
    assert "untolerated taint" in reasons["n-tainted"]
    assert explained["node"] in {"n-small", "n-mid", "n-big", "n-huge"}


def test_split_export_sorts_finished_pending_and_bound_pods() -> None:
    def raw_pod(name: str, node_name: str = "", phase: str = "") -> dict[str, Any]:
        raw = pod(name, "1", "1Gi", nodeName=node_name) if node_name else pod(name, "1", "1Gi")
        raw["status"] = {"phase": phase} if phase else {}
        return raw

    result = split_export(
        [
            raw_pod("done", "n1", "Succeeded"),
            raw_pod("failed", "", "Failed"),
            raw_pod("running", "n1", "Running"),
            raw_pod("waiting"),
        ]
    )
    assert [o["metadata"]["name"] for o in result.cluster] == ["running"]
    assert [o["metadata"]["name"] for o in result.pending] == ["waiting"]
    assert result.finished == 2
    container = result.cluster[0]["spec"]["containers"][0]
    assert set(container) == {"name", "image", "resources"}


def test_export_without_a_reachable_server_fails_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["export", "--master", "http://127.0.0.1:9", "-o", str(tmp_path / "c.yaml")])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("kubesched export: ") and err.count("\n") == 1
    assert not (tmp_path / "c.yaml").exists()


def test_export_keeps_the_workload_owners_of_the_pods_it_copies(
    apiserver: ApiServerHandle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ReplicaSet with two of its three pods bound and one pending, a Job with one of its
    two parallel pods bound: the copy keeps both owners (uids, selectors, counts) and the
    pods' owner references, so simulate makes only the Job's missing pod, and the
    ReplicaSet's pending pod spreads away from its siblings."""
    kubeconfig = Path(apiserver.kubeconfig_path)
    labels = {"app": "api"}

    def owned(name: str, owner: dict[str, Any], kind: str, **spec: Any) -> dict[str, Any]:
        raw = pod(name, "100m", "128Mi", **spec)
        raw["metadata"]["labels"] = dict(owner["spec"]["template"]["metadata"]["labels"])
        raw["metadata"]["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": kind,
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
        raw["spec"]["schedulerName"] = "default-scheduler"
        if kind == "Job":
            raw["spec"]["restartPolicy"] = "Never"
        return raw

    async def setup() -> None:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            for name in ("n-small", "n-mid", "n-big"):
                await client.create(NODES.raw, node(name))
            template = pod("tmpl", "100m", "128Mi")
            rs = await client.create(
                REPLICA_SETS.raw,
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": {"name": "api", "namespace": "default"},
                    "spec": {
                        "replicas": 3,
                        "selector": {"matchLabels": labels},
                        "template": {"metadata": {"labels": labels}, "spec": template["spec"]},
                    },
                },
            )
            rs.setdefault("apiVersion", "apps/v1")
            job = await client.create(
                JOBS.raw,
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": "batch", "namespace": "default"},
                    "spec": {
                        "parallelism": 2,
                        "completions": 4,
                        "template": {
                            "spec": {**template["spec"], "restartPolicy": "Never"},
                        },
                    },
                },
            )
            job.setdefault("apiVersion", "batch/v1")
            await client.create(PODS.raw, owned("api-1", rs, "ReplicaSet", nodeName="n-big"))
            await client.create(PODS.raw, owned("api-2", rs, "ReplicaSet", nodeName="n-mid"))
            await client.create(PODS.raw, owned("api-3", rs, "ReplicaSet"))
            await client.create(PODS.raw, owned("batch-1", job, "Job", nodeName="n-big"))

    asyncio.run(setup())
    cluster, pending = tmp_path / "cluster.yaml", tmp_path / "pending.yaml"
    args = ["export", "--kubeconfig", str(kubeconfig), "-o", str(cluster)]
    assert main([*args, "--pending", str(pending)]) == 0
    capsys.readouterr()
    items = yaml.safe_load(cluster.read_text())["items"]
    kinds = [o["kind"] for o in items]
    assert kinds.count("Job") == 1 and kinds.count("ReplicaSet") == 1
    exported_job = next(o for o in items if o["kind"] == "Job")
    assert exported_job["spec"]["parallelism"] == 2
    assert exported_job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    bound = {o["metadata"]["name"]: o for o in items if o["kind"] == "Pod"}
    assert bound["batch-1"]["metadata"]["ownerReferences"][0]["kind"] == "Job"

    assert main(["simulate", "--cluster", str(cluster), "--pods", str(pending), "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    placements = json.loads(out)["placements"]
    owners = sorted(p["owner"] for p in placements)
    # The ReplicaSet's third pod is the pending one; the Job lacks one of its two.
    assert owners == ["Job/batch", "ReplicaSet/api"]
    api = next(p for p in placements if p["owner"] == "ReplicaSet/api")
    assert api["pod"] == "default/api-3"
    assert api["node"] == "n-small"


def _storage_objects() -> list[dict[str, Any]]:
    from kubesched.testing.storage_wrappers import make_csi_node, make_pv, make_pvc

    pv = make_pv("pv-1").capacity("10Gi").access_modes("ReadWriteOnce")
    pv = pv.csi("ebs.csi.aws.com", "vol-1").claim_ref("data").phase("Bound")
    pv.annotation("pv.kubernetes.io/bound-by-controller", "yes")
    pv.annotation("note.example.com/owner", "do not copy me")
    claim = make_pvc("data").request("1Gi").access_modes("ReadWriteOnce").volume_name("pv-1")
    claim.annotation("pv.kubernetes.io/bind-completed", "yes").phase("Bound")
    return [pv.dict(), claim.dict(), make_csi_node("n1").driver("ebs.csi.aws.com", 3).dict()]


def test_split_export_keeps_storage_state_and_drops_other_annotations() -> None:
    volume_pod = pod("with-claim", "1", "1Gi", nodeName="n1")
    volume_pod["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    result = split_export([*_storage_objects(), volume_pod])
    pv, claim, csi_node, exported_pod = result.cluster
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert pv["spec"]["csi"] == {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}
    assert pv["status"] == {"phase": "Bound"}
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    assert claim["spec"]["volumeName"] == "pv-1"
    assert csi_node["spec"]["drivers"][0]["allocatable"] == {"count": 3}
    assert exported_pod["spec"]["volumes"] == volume_pod["spec"]["volumes"]


def test_export_copies_the_storage_objects_a_server_serves(
    apiserver: ApiServerHandle, tmp_path: Path
) -> None:
    from kubesched.kube import NotFound
    from kubesched.kube.resources import CSI_NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES

    kubeconfig = Path(apiserver.kubeconfig_path)

    async def setup() -> bool:
        async with Client(load_kubeconfig([kubeconfig])) as client:
            try:
                await client.list(PERSISTENT_VOLUMES.raw)
            except NotFound:
                return False
            pv, claim, csi_node = _storage_objects()
            await client.create(PERSISTENT_VOLUMES.raw, pv)
            await client.create(PERSISTENT_VOLUME_CLAIMS.raw, claim, namespace="default")
            await client.create(CSI_NODES.raw, csi_node)
            return True

    served = asyncio.run(setup())
    out = tmp_path / "cluster.yaml"
    # Served or not, the export succeeds: a server without storage has none to copy.
    assert main(["export", "--kubeconfig", str(kubeconfig), "-o", str(out)]) == 0
    objects = load_objects(out)
    if not served:
        assert objects.storage == []
        pytest.skip("this API server does not serve PersistentVolumes yet")
    names = sorted((type(o).__name__, o.name) for o in objects.storage)
    assert names == [
        ("CSINode", "n1"),
        ("PersistentVolume", "pv-1"),
        ("PersistentVolumeClaim", "data"),
    ]
    assert "do not copy me" not in out.read_text()
