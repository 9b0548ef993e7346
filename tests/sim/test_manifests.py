"""`kubesched simulate` / `explain` on the Kubernetes documentation's own manifests: each
workload becomes the pods its controller would create first, through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.objects.storage import PersistentVolumeClaim
from kubesched.sim.lab import load_cluster

DATA = Path(__file__).parent / "data" / "manifests"
CLUSTER = DATA / "cluster.yaml"
#: A generated name's five characters (utilrand's alphabet).
SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
ZONES = {
    "cp-1": "a",
    "worker-a": "a",
    "worker-b": "b",
    "worker-c": "b",
    "worker-d": "c",
    "worker-e": "c",
    "worker-f": "c",
}


def simulate(
    capsys: pytest.CaptureFixture[str], *pods: Path, cluster: Path = CLUSTER, seed: int = 7
) -> tuple[dict[str, Any], str]:
    argv = ["simulate", "--cluster", str(cluster), "--seed", str(seed), "-o", "json"]
    for path in pods:
        argv += ["--pods", str(path)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def test_deployment_becomes_a_replica_set_and_its_replicas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, err = simulate(capsys, DATA / "nginx-deployment.yaml")
    assert err == ""
    placements = data["placements"]
    assert len(placements) == 3
    owner = placements[0]["owner"]
    match = re.fullmatch(r"ReplicaSet/nginx-deployment-([a-z0-9]+)", owner)
    assert match is not None, owner
    for p in placements:
        assert p["owner"] == owner
        assert re.fullmatch(rf"default/{owner.split('/')[1]}-{SUFFIX}", p["pod"]), p["pod"]
    # Three replicas, three zones: the ReplicaSet's selector is their default spreading.
    assert sorted(ZONES[p["node"]] for p in placements) == ["a", "b", "c"]
    _, pods = load_cluster(CLUSTER, DATA / "nginx-deployment.yaml", seed=7)
    assert [p.key for p in pods] == [p["pod"] for p in placements]
    assert all(p.labels == {"app": "nginx", "pod-template-hash": match.group(1)} for p in pods)


def test_default_spreading_follows_the_owner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same pods spread when a Deployment owns them (its ReplicaSet selects them) and
    pile onto the emptiest node when they are bare pods that no workload selects."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
            },
            "status": {"capacity": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
        }
        for name, zone, cpu in (
            ("big", "a", "64"),
            ("s1", "b", "4"),
            ("s2", "b", "4"),
            ("s3", "c", "4"),
        )
    ]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}))
    deployment = yaml.safe_load((DATA / "nginx-deployment.yaml").read_text())
    deployment["spec"]["replicas"] = 8
    template = deployment["spec"]["template"]
    template["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    bare = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", **template["metadata"]},
            "spec": template["spec"],
        }
        for i in range(8)
    ]
    owned, _ = simulate(capsys, write(tmp_path / "deploy.yaml", deployment), cluster=cluster)
    plain, _ = simulate(capsys, write(tmp_path / "bare.yaml", *bare), cluster=cluster)

    def on_big(data: dict[str, Any]) -> int:
        return sum(1 for p in data["placements"] if p["node"] == "big")

    assert on_big(owned) < on_big(plain)
    assert len({p["node"] for p in owned["placements"]}) == 4


def test_names_come_from_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = simulate(capsys, DATA / "nginx-deployment.yaml", seed=1)
    again, _ = simulate(capsys, DATA / "nginx-deployment.yaml", seed=1)
    other, _ = simulate(capsys, DATA / "nginx-deployment.yaml", seed=2)
    names = [p["pod"] for p in first["placements"]]
    assert names == [p["pod"] for p in again["placements"]]
    assert names != [p["pod"] for p in other["placements"]]
    assert len(set(names)) == 3


#: The class the documentation's StatefulSet names, binding WaitForFirstConsumer.
MY_STORAGE_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "my-storage-class"},
    "provisioner": "csi.example.com",
    "volumeBindingMode": "WaitForFirstConsumer",
}


def test_stateful_set_pods_have_stable_identities(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    storage = write(tmp_path / "class.yaml", MY_STORAGE_CLASS)
    data, _ = simulate(capsys, DATA / "web-statefulset.yaml", storage)
    assert [(p["pod"], p["owner"]) for p in data["placements"]] == [
        (f"default/web-{i}", "StatefulSet/web") for i in range(3)
    ]
    # The headless Service and the set select them: one per zone.
    assert sorted(ZONES[p["node"]] for p in data["placements"]) == ["a", "b", "c"]
    cluster, pods = load_cluster(CLUSTER, DATA / "web-statefulset.yaml", seed=7)
    revision = pods[0].labels["controller-revision-hash"]
    assert re.fullmatch(r"web-[a-z0-9]+", revision)
    for i, pod in enumerate(pods):
        assert pod.labels == {
            "app": "nginx",
            "statefulset.kubernetes.io/pod-name": f"web-{i}",
            "apps.kubernetes.io/pod-index": str(i),
            "controller-revision-hash": revision,
        }
    assert sorted(w.kind for w in cluster.workloads) == ["Service", "StatefulSet"]
    # The set's controller creates a claim per template and replica before the pods.
    claims = [o for o in cluster.storage if isinstance(o, PersistentVolumeClaim)]
    assert [(c.key, c.storage_class_name, c.labels) for c in claims] == [
        (f"default/www-web-{i}", "my-storage-class", {"app": "nginx"}) for i in range(3)
    ]
    assert [v.claim_name for v in pods[0].volumes] == ["www-web-0"]


def test_stateful_set_pods_wait_for_a_class_that_does_not_exist(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The cluster's files have StorageClasses, but not the one the claims name.
    other = dict(MY_STORAGE_CLASS, metadata={"name": "other"})
    storage = write(tmp_path / "class.yaml", other)
    data, _ = simulate(capsys, DATA / "web-statefulset.yaml", storage)
    assert [p["node"] for p in data["placements"]] == [None, None, None]
    for placement in data["placements"]:
        # A claim whose class does not exist binds Immediately (upstream's
        # IsDelayBindingMode): VolumeBinding's PreFilter stops the pod first.
        assert placement["message"].startswith(
            "0/7 nodes are available: pod has unbound immediate PersistentVolumeClaims."
        )


def test_without_storage_classes_the_classes_claims_name_are_assumed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Files that say nothing of storage: the documentation's StatefulSet is placed as
    # on a cluster that has its class, and the assumption is said on stderr.
    data, err = simulate(capsys, DATA / "web-statefulset.yaml")
    assert [p["pod"] for p in data["placements"] if p["node"]] == [
        f"default/web-{i}" for i in range(3)
    ]
    assert sorted(ZONES[p["node"]] for p in data["placements"]) == ["a", "b", "c"]
    (line,) = [line for line in err.splitlines() if "StorageClass" in line]
    assert 'StatefulSet "default/web" has claim templates and no file has a StorageClass' in line
    assert '"my-storage-class", "standard"' in line


def test_daemon_set_runs_on_every_eligible_node(capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = simulate(capsys, DATA / "fluentd-daemonset.yaml")
    placements = data["placements"]
    # cp-1's control-plane taint is tolerated by the manifest; worker-f's is not.
    assert sorted(p["node"] for p in placements) == [
        "cp-1",
        "worker-a",
        "worker-b",
        "worker-c",
        "worker-d",
        "worker-e",
    ]
    for p in placements:
        assert p["owner"] == "DaemonSet/fluentd-elasticsearch"
        assert re.fullmatch(rf"kube-system/fluentd-elasticsearch-{SUFFIX}", p["pod"])
    _, pods = load_cluster(CLUSTER, DATA / "fluentd-daemonset.yaml", seed=7)
    for pod, placement in zip(pods, placements, strict=True):
        # Pinned by node affinity, not by nodeName: the scheduler places it.
        assert pod.node_name == ""
        assert pod.required_node_affinity is not None
        assert pod.required_node_affinity.matches(placement["node"], {})
        assert not pod.required_node_affinity.matches("worker-f", {})
        assert pod.labels["pod-template-generation"] == "1"
        assert pod.labels["controller-revision-hash"]
        keys = {t.key for t in pod.tolerations}
        assert {
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure",
            "node.kubernetes.io/unschedulable",
        } <= keys
        assert "node.kubernetes.io/network-unavailable" not in keys


def test_jobs_make_min_parallelism_completions_pods(capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = simulate(capsys, DATA / "pi-job.yaml", DATA / "indexed-job.yaml")
    pods = [p["pod"] for p in data["placements"]]
    assert len(pods) == 4
    assert re.fullmatch(rf"default/pi-{SUFFIX}", pods[0])
    # completions 5, parallelism 3: indexes 0, 1 and 2 first.
    for i, name in enumerate(pods[1:]):
        assert re.fullmatch(rf"default/indexed-job-{i}-{SUFFIX}", name), name
    _, loaded = load_cluster(CLUSTER, DATA / "pi-job.yaml", DATA / "indexed-job.yaml", seed=7)
    pi, *indexed = loaded
    uid = pi.labels["batch.kubernetes.io/controller-uid"]
    assert pi.labels == {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }
    assert [p.labels["batch.kubernetes.io/job-completion-index"] for p in indexed] == [
        "0",
        "1",
        "2",
    ]
    assert all(p.labels["job-name"] == "indexed-job" for p in indexed)


def test_cron_job_makes_no_pods_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    data, err = simulate(capsys, DATA / "hello-cronjob.yaml")
    assert data["placements"] == []
    lines = err.splitlines()
    assert len(lines) == 1
    assert "hello-cronjob.yaml" in lines[0]
    assert 'CronJob "default/hello"' in lines[0]
    assert "no pods" in lines[0]


def test_skipped_and_unknown_kinds_are_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(
        tmp_path / "app.yaml",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings"},
            "data": {"a": "b"},
        },
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "app"}},
        {"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "typo"}, "spec": {}},
        yaml.safe_load((DATA / "nginx-deployment.yaml").read_text()),
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "tls"}},
    )
    data, err = simulate(capsys, pods)
    assert len(data["placements"]) == 3
    lines = err.splitlines()
    assert len(lines) == 3, err
    unknown = next(line for line in lines if "Deploymnet" in line)
    assert f"{pods}: documents[3]" in unknown
    assert '"typo"' in unknown
    assert "did you mean Deployment?" in unknown
    custom = next(line for line in lines if "custom resource" in line)
    assert f"{pods}: skipped 1 custom resource " in custom
    assert 'Certificate "tls"' in custom
    skipped = next(line for line in lines if "skipped 3 objects" in line)
    assert str(pods) in skipped
    assert 'ConfigMap "settings", Secret "token", ServiceAccount "app"' in skipped


def test_a_pod_the_workload_makes_is_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = yaml.safe_load((DATA / "fluentd-daemonset.yaml").read_text())
    del ds["spec"]["template"]["spec"]["containers"][0]["image"]
    code = main(
        ["simulate", "--cluster", str(CLUSTER), "--pods", str(write(tmp_path / "ds.yaml", ds))]
    )
    _, err = capsys.readouterr()
    assert code == 2
    assert 'DaemonSet "kube-system/fluentd-elasticsearch"' in err
    assert "spec.template.spec.containers[0].image: Required value" in err


def test_explain_a_pod_of_a_deployment(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "explain",
            "--cluster",
            str(CLUSTER),
            "--pod",
            str(DATA / "nginx-deployment.yaml"),
            "--seed",
            "3",
            "-o",
            "json",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["owner"].startswith("ReplicaSet/nginx-deployment-")
    assert data["pod"].startswith("default/" + data["owner"].split("/")[1] + "-")
    assert "makes 3 pods; explaining the first" in err
    verdicts = {n["name"]: n for n in data["nodes"]}
    assert not verdicts["cp-1"]["feasible"]
    assert verdicts["cp-1"]["rejectedBy"] == "TaintToleration"
    assert data["node"] in ZONES and data["node"] not in ("cp-1", "worker-f")


def test_cluster_file_workloads_count_what_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ReplicaSet in the cluster file with two of its three pods bound makes the third;
    a Deployment there makes its pods as pending ones; a DaemonSet covers the node that
    lacks its pod."""
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "api", "uid": "rs-uid"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {"containers": [{"name": "c", "image": "api:1"}]},
            },
        },
    }
    owned = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"api-{i}",
                "labels": {"app": "api"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "api",
                        "uid": "rs-uid",
                        "controller": True,
                    }
                ],
            },
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "api:1"}]},
        }
        for i, node in enumerate(("worker-a", "worker-b"))
    ]
    nodes = yaml.safe_load(CLUSTER.read_text())["items"]
    cluster = tmp_path / "cluster.yaml"
    deployment = yaml.safe_load((DATA / "nginx-deployment.yaml").read_text())
    cluster.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": [*nodes, rs, *owned, deployment]}
        )
    )
    data, _ = simulate(capsys, cluster=cluster)
    owners = [p["owner"] for p in data["placements"]]
    assert owners.count("ReplicaSet/api") == 1
    assert sum(1 for o in owners if o.startswith("ReplicaSet/nginx-deployment-")) == 3
    # The new api pod goes where its ReplicaSet has none.
    api = next(p for p in data["placements"] if p["owner"] == "ReplicaSet/api")
    assert api["node"] not in ("worker-a", "worker-b")


def test_a_dump_of_a_running_deployment_makes_no_new_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kubectl get deploy,rs,pods -o yaml` of a rolled-out Deployment: the Deployment has
    its ReplicaSet, the ReplicaSet its pods, so nothing is made again; a pending pod of
    the dump is scheduled as itself."""
    deployment = yaml.safe_load((DATA / "nginx-deployment.yaml").read_text())
    deployment["metadata"]["uid"] = "deploy-uid"
    deployment["spec"]["replicas"] = 2
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "nginx-deployment-abc",
            "uid": "rs-uid",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "nginx-deployment",
                    "uid": "deploy-uid",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "nginx", "pod-template-hash": "abc"}},
            "template": {
                "metadata": {"labels": {"app": "nginx", "pod-template-hash": "abc"}},
                "spec": deployment["spec"]["template"]["spec"],
            },
        },
    }
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"nginx-deployment-abc-{suffix}",
                "labels": {"app": "nginx", "pod-template-hash": "abc"},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "nginx-deployment-abc",
                        "uid": "rs-uid",
                        "controller": True,
                    }
                ],
            },
            "spec": {**deployment["spec"]["template"]["spec"], **spec},
        }
        for suffix, spec in (("bound", {"nodeName": "worker-a"}), ("waits", {}))
    ]
    nodes = yaml.safe_load(CLUSTER.read_text())["items"]
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": [*nodes, deployment, rs, *pods]}
        )
    )
    data, err = simulate(capsys, cluster=dump)
    assert err == ""
    assert [(p["pod"], p["owner"]) for p in data["placements"]] == [
        ("default/nginx-deployment-abc-waits", "ReplicaSet/nginx-deployment-abc")
    ]
    assert data["placements"][0]["node"] != "worker-a"


def test_a_cron_job_is_validated_though_it_makes_no_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cron = yaml.safe_load((DATA / "hello-cronjob.yaml").read_text())
    del cron["spec"]["schedule"]
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    del pod["containers"][0]["image"]
    pod["restartPolicy"] = "Always"
    code = main(
        ["simulate", "--cluster", str(CLUSTER), "--pods", str(write(tmp_path / "c.yaml", cron))]
    )
    _, err = capsys.readouterr()
    assert code == 2
    where = f'{tmp_path / "c.yaml"}: CronJob "default/hello": '
    assert f"{where}spec.schedule: Required value" in err
    assert f"{where}spec.jobTemplate.spec.template.spec.containers[0].image: Required value" in err
    assert 'restartPolicy: Unsupported value: "Always"' in err
