"""``kubesched demo``: run for real (API server, simulated nodes, the live scheduler) in this
process and as ``./dev run``'s command, and hold its placements to the rules the pods
state — checked here against the manifests, and through the official client and kubectl.
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

from kubesched.cli import demo, demo_story
from kubesched.objects.quantity import parse_quantity
from kubesched.objects.taints import Taint, Toleration, find_untolerated_taint

ROOT = Path(__file__).resolve().parents[2]
GPU = demo_story.GPU_RESOURCE


def manifests() -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for w in demo_story.waves() for p in w.pods}


def requests(pod: dict[str, Any]) -> dict[str, int]:
    """The pod's requests, in thousandths."""
    wanted: Counter[str] = Counter()
    for container in pod["spec"]["containers"]:
        for name, value in container["resources"]["requests"].items():
            wanted[name] += parse_quantity(value).milli_value()
    return dict(wanted)


def tolerates(pod: dict[str, Any], taints: list[dict[str, Any]]) -> bool:
    tolerations = [Toleration.from_dict(t) for t in pod["spec"].get("tolerations", [])]
    untolerated = find_untolerated_taint(
        [Taint.from_dict(t) for t in taints],
        tolerations,
        ("NoSchedule", "NoExecute"),
    )
    return untolerated is None


def check_placements(result: dict[str, Any]) -> None:
    """Every rule the demo's pods carry holds for where the scheduler put them."""
    pods = manifests()
    nodes = {n["name"]: n for n in result["nodes"]}
    placed = {p["name"]: p for p in result["pods"]}
    preempted = [p["name"] for p in result["preempted"]]
    # Every pod submitted is reported once: placed, pending or preempted.
    assert sorted([*placed, *preempted]) == sorted(pods)
    bound = {name: p["node"] for name, p in placed.items() if p["node"]}
    for name, node in bound.items():
        assert placed[name]["events"].count("Scheduled") == 1, name  # bound exactly once
        assert placed[name]["phase"] == "Running", name
        assert tolerates(pods[name], nodes[node]["taints"]), (name, node)
        if GPU in requests(pods[name]):
            assert nodes[node]["gpus"] > 0, (name, node)
        assert placed[name]["profile"] == pods[name]["spec"]["schedulerName"]
    # Nothing is overcommitted.
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for name, node in bound.items():
        used[node].update(requests(pods[name]))
    for node, total in used.items():
        assert total["cpu"] <= parse_quantity(nodes[node]["cpu"]).milli_value(), node
        assert total["memory"] <= parse_quantity(nodes[node]["memory"]).milli_value(), node
        assert total[GPU] <= 1000 * nodes[node]["gpus"], node
    # Zone spread of web: skew at most 1 over the zones (every zone has eligible nodes).
    web_zones = Counter(placed[n]["zone"] for n in bound if n.startswith("web-"))
    assert len(web_zones) == 3 and max(web_zones.values()) - min(web_zones.values()) <= 1
    # Each tenant: at most one pod more on a node than on the emptiest untainted node.
    open_nodes = [n for n, node in nodes.items() if not node["taints"]]
    for tenant in ("acme", "globex"):
        per_node = Counter(bound[n] for n in bound if n.startswith(f"{tenant}-"))
        assert sum(per_node.values()) == 3
        assert max(per_node.values()) - min(per_node[n] for n in open_nodes) <= 1
    # gpu-aware packs the 1-GPU jobs on one node, which leaves a whole node for 4 GPUs.
    small = {bound[f"train-{i}"] for i in (1, 2, 3)}
    assert len(small) == 1 and bound["train-4gpu"] not in small
    # The urgent pod took a batch pod's place; the 8-GPU job fits nowhere, and says why.
    assert len(preempted) == 1 and preempted[0].startswith("batch-")
    victim = result["preempted"][0]
    assert victim["message"].endswith(f"on node {bound['checkout-hotfix']}")
    (pending,) = result["pending"]
    assert pending["name"] == "train-8gpu" and pending["reason"] == "Unschedulable"
    assert pending["message"].startswith(f"0/{len(nodes)} nodes are available: ")
    assert f"8 Insufficient {GPU}" in pending["message"]
    assert "1 node(s) had untolerated taint {dedicated: infra}" in pending["message"]
    assert pending["event"] == pending["message"]
    # The policy lab's replay under the default profile: LeastAllocated spreads the
    # 1-GPU jobs over both GPU nodes, so the 4-GPU job finds no node with 4 free.
    (replay,) = result["whatIf"]
    assert replay["profile"] == demo_story.DEFAULT_PROFILE
    again = {p["name"]: p for p in replay["pods"]}
    assert {again[f"train-{i}"]["node"] for i in (1, 2, 3)} == {"gpu-a1", "gpu-b1"}
    assert again["train-4gpu"]["node"] is None
    assert f"Insufficient {GPU}" in again["train-4gpu"]["message"]
    assert all(p["live"] == bound[p["name"]] for p in replay["pods"])


def test_the_demo_in_process_places_every_pod_by_its_rules(capsys):
    assert demo.main(["--output", "json", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    result = json.loads(captured.out)
    check_placements(result)
    assert sum(result["perZone"].values()) == len(result["pods"]) - 1
    assert result["timings"]["total"] > 0
    assert not [t.name for t in threading.enumerate() if t.name == "kubesched-apiserver"]


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
        assert "Placements (read back from the API server)" in output, output
        assert "Scheduled" in output and "Preempted" in output
        assert "train-8gpu: PodScheduled=False Unschedulable" in output
        kubeconfig = re.search(r"kubectl --kubeconfig (\S+) get pods", output).group(1)

        # Another client sees what the demo reported: its own reading of the API.
        api = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=kubeconfig))
        pods = {p.metadata.name: p for p in api.list_namespaced_pod("default").items}
        assert pods["train-8gpu"].spec.node_name is None
        assert all(p.spec.node_name for n, p in pods.items() if n != "train-8gpu")
        assert len(pods) == len(manifests()) - 1  # one batch pod was preempted
        api.api_client.close()
        if shutil.which("kubectl"):
            wide = subprocess.run(
                ["kubectl", "--kubeconfig", kubeconfig, "get", "pods", "-o", "wide"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            ).stdout
            assert re.search(r"^checkout-hotfix\s+1/1\s+Running\s.*\scpu-", wide, re.M), wide
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Warning" not in err and "ERROR" not in err, err
