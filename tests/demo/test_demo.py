"""``kubesched demo``: run for real (API server, controllers, simulated nodes, the live
scheduler) in this process and as ``./dev run``'s command, and hold its placements to the
rules its workloads state — checked here against the workloads' manifests, and through
the official client and kubectl.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kubesched.cli import demo, demo_story, demo_workloads
from kubesched.cli.demo_owners import desired_pods, owner_key
from kubesched.controllers.dradriver import DRIVER as DRA_DRIVER
from kubesched.controllers.dradriver import GPU_MODEL_ANNOTATION
from kubesched.objects.daemonset import node_should_run_daemon_pod
from kubesched.objects.node import Node
from kubesched.objects.quantity import parse_quantity
from kubesched.objects.taints import Taint, Toleration, find_untolerated_taint

ROOT = Path(__file__).resolve().parents[2]
GPU = demo_story.GPU_RESOURCE
ZONE = "topology.kubernetes.io/zone"


def workloads() -> dict[str, dict[str, Any]]:
    """The demo's workloads by owner (``Kind/name``), in the order they are submitted."""
    return {
        owner_key(w["kind"], w["metadata"]["name"]): w
        for wave in demo_workloads.waves()
        for w in wave.workloads
    }


def cluster_nodes() -> list[Node]:
    return [Node.from_dict(n) for n in demo_story.nodes()]


def template_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def requests(workload: dict[str, Any]) -> dict[str, int]:
    """Each pod's requests, in thousandths, from its workload's template."""
    wanted: Counter[str] = Counter()
    for container in template_spec(workload)["containers"]:
        for name, value in container["resources"]["requests"].items():
            wanted[name] += parse_quantity(value).milli_value()
    return dict(wanted)


def tolerates(workload: dict[str, Any], taints: list[dict[str, Any]]) -> bool:
    tolerations = [Toleration.from_dict(t) for t in template_spec(workload).get("tolerations", [])]
    untolerated = find_untolerated_taint(
        [Taint.from_dict(t) for t in taints],
        tolerations,
        ("NoSchedule", "NoExecute"),
    )
    return untolerated is None


def priority_of(workload: dict[str, Any]) -> int:
    return demo_story.PRIORITY_CLASSES.get(template_spec(workload)["priorityClassName"], 10**9)


def check_placements(result: dict[str, Any]) -> None:
    """Every rule the demo's workloads carry holds for where their pods went."""
    wanted = workloads()
    nodes = {n["name"]: n for n in result["nodes"]}
    owners = {o["owner"]: o for o in result["owners"]}
    pods = {p["name"]: p for p in result["pods"]}
    # Every workload is reported, in order, with the pods its controller makes.
    assert list(owners) == list(wanted)
    for key, owner in owners.items():
        assert owner["desired"] == desired_pods(wanted[key], cluster_nodes()), key
        assert len(owner["pods"]) == owner["desired"], key
        assert all(pods[name]["owner"] == key for name in owner["pods"]), key
    assert sorted(pods) == sorted(n for o in owners.values() for n in o["pods"])
    bound = {name: p["node"] for name, p in pods.items() if p["node"]}
    for name, node in bound.items():
        workload = wanted[pods[name]["owner"]]
        assert pods[name]["events"].count("Scheduled") == 1, name  # bound exactly once
        runs_on = demo_workloads.runs_past_the_demo(workload["spec"]["template"])
        finished = "Succeeded" if workload["kind"] == "Job" and not runs_on else "Running"
        assert pods[name]["phase"] == finished, name
        assert tolerates(workload, nodes[node]["taints"]), (name, node)
        if GPU in requests(workload):
            assert nodes[node]["gpus"] > 0, (name, node)
        # A template that names no scheduler gets the server's default, default-scheduler.
        profile = template_spec(workload).get("schedulerName", "default-scheduler")
        assert pods[name]["profile"] == profile
    # Nothing is overcommitted by the pods that still run.
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for name, node in bound.items():
        if pods[name]["phase"] == "Running":
            used[node].update(requests(wanted[pods[name]["owner"]]))
    for node, total in used.items():
        assert total["cpu"] <= parse_quantity(nodes[node]["cpu"]).milli_value(), node
        assert total["memory"] <= parse_quantity(nodes[node]["memory"]).milli_value(), node
        assert total[GPU] <= 1000 * nodes[node]["gpus"], node
    assert sum(result["perZone"].values()) == sum(n["pods"] for n in nodes.values())

    def placed(key: str) -> list[str]:
        return [bound[n] for n in owners[key]["pods"] if n in bound]

    # The DaemonSet: one pod on each node that should run it.
    (agents,) = [k for k, w in wanted.items() if w["kind"] == "DaemonSet"]
    eligible = [n.name for n in cluster_nodes() if node_should_run_daemon_pod(n, wanted[agents])[0]]
    assert sorted(placed(agents)) == sorted(eligible)
    assert owners[agents]["text"].startswith(f"{len(eligible)} pods on {len(eligible)} nodes")
    # Zone spread of web: skew at most 1 over the zones (every zone has eligible nodes).
    web_zones = Counter(nodes[n]["zone"] for n in placed("Deployment/web"))
    assert len(web_zones) == 3 and max(web_zones.values()) - min(web_zones.values()) <= 1
    assert owners["Deployment/web"]["text"] == "6/6 Running"
    # Each tenant: at most one pod more on a node than on the emptiest untainted node.
    open_nodes = [n for n, node in nodes.items() if not node["taints"]]
    tenants = [
        k for k, w in wanted.items() if "tenant" in w["spec"]["template"]["metadata"]["labels"]
    ]
    assert len(tenants) == 2
    for tenant in tenants:
        per_node = Counter(placed(tenant))
        assert sum(per_node.values()) == wanted[tenant]["spec"]["replicas"]
        assert max(per_node.values()) - min(per_node[n] for n in open_nodes) <= 1
    # The StatefulSet: pods <set>-0, -1, ... made in the order of their ordinals.
    (db,) = [k for k, w in wanted.items() if w["kind"] == "StatefulSet"]
    name, replicas = wanted[db]["metadata"]["name"], wanted[db]["spec"]["replicas"]
    assert owners[db]["pods"] == [f"{name}-{i}" for i in range(replicas)]
    assert len(placed(db)) == replicas
    assert owners[db]["text"].startswith(f"{name}-0..{name}-{replicas - 1} {replicas}/{replicas}")
    # gpu-aware packs the 1-GPU Jobs on one node, which leaves a whole node for 4 GPUs;
    # every Job whose pod was placed ran it to completion.
    jobs = {k: w for k, w in wanted.items() if w["kind"] == "Job"}
    gpu_aware = {
        k: w
        for k, w in jobs.items()
        if template_spec(w).get("schedulerName") == demo_story.GPU_PROFILE
    }
    one_gpu = [k for k, w in gpu_aware.items() if requests(w).get(GPU) == 1000]
    (four_gpu,) = [k for k, w in gpu_aware.items() if requests(w).get(GPU) == 4000]
    assert len(one_gpu) == 3
    small = {node for k in one_gpu for node in placed(k)}
    assert len(small) == 1 and placed(four_gpu)[0] not in small
    for key in jobs:
        done = bool(placed(key)) and not demo_workloads.runs_past_the_demo(
            wanted[key]["spec"]["template"]
        )
        assert owners[key]["condition"] == ("Complete" if done else ""), key
        assert owners[key]["text"].startswith("Complete" if done else "not complete"), key
    # The critical pod took the place of a pod of the lowest priority; that pod's owner
    # made it again, and the new pod finds no room.
    (critical,) = [
        k for k, w in wanted.items() if priority_of(w) == max(demo_story.PRIORITY_CLASSES.values())
    ]
    lowest = min(wanted, key=lambda k: priority_of(wanted[k]))
    (victim,) = result["preempted"]
    assert victim["owner"] == lowest
    assert owners[lowest]["preempted"] == [victim["name"]]
    assert victim["message"].endswith(f"on node {placed(critical)[0]}")
    (preemptor,) = owners[critical]["pods"]
    assert pods[preemptor]["preempted"] == [victim["name"]]
    replacement = victim["replacement"]
    assert replacement in owners[lowest]["pods"] and pods[replacement]["replaces"] == victim["name"]
    # Pending: that replacement, the Job asking more GPUs than any node has, and the
    # team pod its quota refuses (checked in check_gangs_and_quotas).
    (eight_gpu,) = [k for k, w in jobs.items() if not placed(k)]
    pending = {p["name"]: p for p in result["pending"]}
    over_quota = [n for n, p in pending.items() if p["owner"] == "Job/finetune"]
    assert sorted(pending) == sorted([replacement, *owners[eight_gpu]["pods"], *over_quota])
    for p in pending.values():
        if p["owner"] == "Job/finetune":
            continue
        assert p["reason"] == "Unschedulable" and p["event"] == p["message"]
        assert p["message"].startswith(f"0/{len(nodes)} nodes are available: ")
        assert "1 node(s) had untolerated taint {dedicated: infra}" in p["message"]
    # Every node it tolerates lacks GPUs (those with DRA GPUs have no nvidia.com/gpu).
    tolerated = sum(1 for n in nodes.values() if tolerates(wanted[eight_gpu], n["taints"]))
    assert f"{tolerated} Insufficient {GPU}" in pending[owners[eight_gpu]["pods"][0]]["message"]
    assert "6 Insufficient cpu" in pending[replacement]["message"]
    # The policy lab's replay of the training Jobs' pods under the default profile:
    # LeastAllocated spreads the 1-GPU pods over both GPU nodes, so the 4-GPU pod finds
    # no node with 4 free.
    (replay,) = result["whatIf"]
    assert replay["profile"] == demo_story.DEFAULT_PROFILE
    assert replay["owners"] == [*one_gpu, four_gpu]
    again = {p["name"]: p for p in replay["pods"]}
    assert sorted(again) == sorted(n for k in replay["owners"] for n in owners[k]["pods"])
    gpu_nodes = {n for n, node in nodes.items() if node["gpus"]}
    assert {again[owners[k]["pods"][0]]["node"] for k in one_gpu} == gpu_nodes
    (big,) = owners[four_gpu]["pods"]
    assert again[big]["node"] is None
    assert f"Insufficient {GPU}" in again[big]["message"]
    assert all(p["live"] == bound[p["name"]] for p in replay["pods"])
    check_volumes_and_devices(result)
    check_gangs_and_quotas(result)


def check_gangs_and_quotas(result: dict[str, Any]) -> None:
    """team-a's gang is placed whole, on GPU nodes, within its quota; team-b gets the
    GPUs its quota allows and the next pod is refused by the quota, naming it with the
    numbers, though GPUs are free."""
    wanted = workloads()
    owners = {o["owner"]: o for o in result["owners"]}
    pods = {p["name"]: p for p in result["pods"]}
    nodes = {n["name"]: n for n in result["nodes"]}
    gang = wanted["Job/allreduce"]
    members = owners["Job/allreduce"]["pods"]
    (group,) = result["podGroups"]
    assert group["name"] == "team-a/allreduce"
    assert group["minMember"] == len(members) == gang["spec"]["parallelism"]
    assert all(pods[m]["node"] and nodes[pods[m]["node"]]["gpus"] for m in members)
    assert all(pods[m]["phase"] == "Running" for m in members)
    quotas = demo_story.TEAM_QUOTAS
    assert len(members) == int(quotas["team-a"]["max"][GPU])
    finetune = owners["Job/finetune"]["pods"]
    placed = [n for n in finetune if pods[n]["node"]]
    assert len(placed) == int(quotas["team-b"]["max"][GPU])
    (refused,) = [p for p in result["pending"] if p["owner"] == "Job/finetune"]
    assert "ElasticQuota team-b" in refused["message"]
    assert f"{GPU}: used 2, request 1, max 2" in refused["message"]
    used = sum(
        1
        for p in result["pods"]
        if p["node"]
        and p["phase"] == "Running"
        and nodes[p["node"]]["gpus"]
        and p["owner"] in ("Job/allreduce", "Job/finetune")
    )
    free = sum(n["gpus"] for n in nodes.values()) - used
    assert free > 0  # the quota, not the nodes, keeps the pod waiting
    assert {q["name"] for q in result["elasticQuotas"]} == {f"{t}/quota" for t in quotas}


def check_volumes_and_devices(result: dict[str, Any]) -> None:
    """Each claim of the StatefulSet's pods is bound to a volume of its class in its
    pod's zone; the DRA Job's pods got distinct GPUs of the model their template's CEL
    selector asks for, on their own node; no other pod has volumes or devices."""
    wanted = workloads()
    owners = {o["owner"]: o for o in result["owners"]}
    pods = {p["name"]: p for p in result["pods"]}
    (db,) = [k for k, w in wanted.items() if w["spec"].get("volumeClaimTemplates")]
    templates = wanted[db]["spec"]["volumeClaimTemplates"]
    for name in owners[db]["pods"]:
        pod = pods[name]
        assert [v["claim"] for v in pod["volumes"]] == [
            f"{t['metadata']['name']}-{name}" for t in templates
        ]
        for volume, template in zip(pod["volumes"], templates, strict=True):
            assert volume["phase"] == "Bound" and volume["volume"].startswith("pvc-"), volume
            assert volume["storageClass"] == template["spec"]["storageClassName"] == "zonal"
            assert volume["zone"] == pod["zone"] and volume["inPodsZone"], (name, volume)
    dra_jobs = [k for k, w in wanted.items() if template_spec(w).get("resourceClaims")]
    assert dra_jobs == ["Job/train-dra"]
    models = {
        n["metadata"]["name"]: n["metadata"]["annotations"].get(GPU_MODEL_ANNOTATION)
        for n in demo_story.nodes()
    }
    latest = {node for node, model in models.items() if model == demo_story.LATEST_GPU_MODEL}
    assert latest and set(models.values()) - {None, demo_story.LATEST_GPU_MODEL}
    given = []
    for name in owners["Job/train-dra"]["pods"]:
        pod = pods[name]
        assert pod["node"] in latest, pod
        (device,) = pod["devices"]
        assert device["claim"].startswith(f"{name}-gpu-") and device["request"] == "gpu"
        assert (device["driver"], device["pool"]) == (DRA_DRIVER, pod["node"])
        assert device["model"] == demo_story.LATEST_GPU_MODEL
        given.append((device["pool"], device["device"]))
    assert len(given) == wanted["Job/train-dra"]["spec"]["completions"] == len(set(given))
    others = [
        p["name"]
        for p in result["pods"]
        if p["owner"] not in (db, "Job/train-dra") and (p["volumes"] or p["devices"])
    ]
    assert others == []


def outcome(result: dict[str, Any]) -> dict[str, Any]:
    """What a seed decides: the nodes of each workload's pods, the preempted pod's
    node and owner, the policy lab's answer (pod names are the server's own)."""
    pods = {p["name"]: p for p in result["pods"]}
    return {
        "owners": {
            o["owner"]: sorted(pods[n]["node"] for n in o["pods"]) for o in result["owners"]
        },
        "preempted": [(p["owner"], p["node"]) for p in result["preempted"]],
        "whatIf": [sorted(str(p["node"]) for p in r["pods"]) for r in result["whatIf"]],
    }


def test_the_demo_in_process_places_every_pod_by_its_rules_the_same_way_for_a_seed(capsys):
    outcomes = []
    for _ in range(2):
        assert demo.main(["--output", "json", "--seed", "3"]) == 0
        captured = capsys.readouterr()
        assert captured.err == ""
        result = json.loads(captured.out)
        check_placements(result)
        assert result["timings"]["total"] > 0
        assert not [t.name for t in threading.enumerate() if t.name == "kubesched-apiserver"]
        outcomes.append(outcome(result))
    assert outcomes[0] == outcomes[1]


def test_a_bad_timeout_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--timeout", "0"])
    assert exit_info.value.code == 2
    assert "--timeout: invalid value: '0': must be greater than 0" in capsys.readouterr().err


def dev_run_command() -> list[str]:
    """The command line ``./dev run`` executes (continuation lines joined)."""
    script = (ROOT / "dev").read_text(encoding="utf-8")
    branch = re.search(r"^\s*run\)\n(.*?);;", script, re.S | re.M)
    assert branch is not None, "no run) branch in dev"
    line = branch.group(1).replace("\\\n", " ")
    (command,) = re.findall(r"exec (.*)", line)
    words = shlex.split(command.replace('"$@"', ""))
    return words


def test_dev_run_is_the_demo_and_the_readme_says_so():
    command = dev_run_command()
    assert command[:2] == ["kubesched", "demo"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What `./dev run` shows", 1)[1].split("\n## ", 1)[0]
    assert f"`{' '.join(command)}`" in section


def test_dev_run_command_runs_clean_and_keeps_running_for_kubectl():
    args = [*dev_run_command()[1:], "--keep-running"]
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "get pods -o wide" in line:
                break
        output = "".join(lines)
        assert "Placements, by owner (read back from the API server)" in output, output
        assert "Scheduled" in output and "Preempted" in output
        assert "SuccessfulCreate" in output and "Completed" in output
        # The report counts pods by owner: a line per workload, in the order applied.
        section = output.split("Workloads (pods counted by owner)\n", 1)[1].split("\n\n", 1)[0]
        counted = [line.split(None, 2) for line in section.splitlines()]
        expected = [(w["kind"], w["metadata"]["name"]) for w in workloads().values()]
        assert [(kind, name) for kind, name, _ in counted] == expected, section
        for kind, name, text in counted:
            want = desired_pods(workloads()[owner_key(kind, name)], cluster_nodes())
            if kind == "DaemonSet":
                assert text == f"{want} pods on {want} nodes ({want} eligible)", text
            elif kind == "StatefulSet":
                assert text.startswith(f"{name}-0..{name}-{want - 1} {want}/{want} Running"), text
            elif kind == "Job":
                assert re.match(rf"(Complete: {want}|not complete: 0)/{want} succeeded", text)
            else:
                assert re.match(rf"\d+/{want} Running", text), text
        pending = re.findall(r"^  (\S+) \(\S+\): PodScheduled=False Unschedulable$", output, re.M)
        assert len(pending) == 3, output
        kubeconfig = re.search(r"kubectl --kubeconfig (\S+) get pods", output).group(1)

        # Another client sees what the demo reported: its own reading of the API.
        wanted = workloads()
        api_client = k8s_config.new_client_from_config(config_file=kubeconfig)
        pods = {
            p.metadata.name: p
            for p in k8s.CoreV1Api(api_client).list_pod_for_all_namespaces().items
        }
        assert sorted(n for n, p in pods.items() if not p.spec.node_name) == sorted(pending)
        # The preempted pod is gone and its owner made another: as many pods as wanted.
        assert len(pods) == sum(desired_pods(w, cluster_nodes()) for w in wanted.values())
        for job in k8s.BatchV1Api(api_client).list_job_for_all_namespaces().items:
            conditions = {c.type for c in job.status.conditions or [] if c.status == "True"}
            mine = [
                p for p in pods.values() if p.metadata.labels.get("job-name") == job.metadata.name
            ]
            assert mine, job.metadata.name
            placed = all(p.spec.node_name for p in mine)
            runs_on = demo_workloads.runs_past_the_demo(
                {"metadata": {"annotations": job.spec.template.metadata.annotations}}
            )
            assert ("Complete" in conditions) == (placed and not runs_on), job.metadata.name
        for sts in k8s.AppsV1Api(api_client).list_namespaced_stateful_set("default").items:
            assert sts.status.ready_replicas == sts.spec.replicas
        # Each claim's volume is in the zone of the node its pod runs on.
        core = k8s.CoreV1Api(api_client)
        zone_of = {n.metadata.name: n.metadata.labels[ZONE] for n in core.list_node().items}
        volumes = {v.metadata.name: v for v in core.list_persistent_volume().items}
        claims = core.list_namespaced_persistent_volume_claim("default").items
        assert len(claims) == 3, [c.metadata.name for c in claims]
        for claim in claims:
            assert claim.status.phase == "Bound", claim.metadata.name
            (term,) = volumes[
                claim.spec.volume_name
            ].spec.node_affinity.required.node_selector_terms
            (expression,) = term.match_expressions
            pod = pods[claim.metadata.name.removeprefix("data-")]
            assert (expression.key, expression.values) == (ZONE, [zone_of[pod.spec.node_name]])
            assert f"claim {claim.metadata.name} (zonal, Bound) → volume " in output
        api_client.close()
        if shutil.which("kubectl"):
            kubectl = ["kubectl", "--kubeconfig", kubeconfig, "get"]
            wide = subprocess.run(
                [*kubectl, "pods", "-o", "wide"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
            assert re.search(r"^checkout-\S+\s+1/1\s+Running\s.*\scpu-", wide, re.M), wide
            jobs = subprocess.run(
                [*kubectl, "jobs"], capture_output=True, text=True, timeout=30, check=True
            ).stdout
            assert re.search(r"^train-1\s+Complete\s+1/1\s", jobs, re.M), jobs
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Warning" not in err and "ERROR" not in err, err


def test_a_wave_object_of_a_kind_the_demo_cannot_create_is_named():
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}}
    with pytest.raises(ValueError) as error:
        demo_workloads.resource_of(claim)
    message = str(error.value)
    assert message.startswith("demo wave object v1/PersistentVolumeClaim 'data': ")
    assert "apps/v1/Deployment" in message and "demo_workloads.KINDS" in message
