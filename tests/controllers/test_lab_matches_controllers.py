"""The policy lab's expansion of a manifest against the real thing: the documentation's
nginx Deployment applied with kubectl to the API server, where the Deployment and
ReplicaSet controllers create its pods and the live scheduler binds them, and the same
manifest simulated on an export of that cluster taken before. Same ReplicaSet, same pod
labels and owners, and the replicas spread over the nodes the same way."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from control_plane import ControlPlane, wait_for

from kubesched.cli import main
from kubesched.sim.lab import load_cluster

MANIFEST = Path(__file__).parents[1] / "sim" / "data" / "manifests" / "nginx-deployment.yaml"


def test_simulated_deployment_matches_the_controllers_and_the_live_scheduler(
    cluster: ControlPlane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "deployment-controller" in cluster.controllers
    exported = tmp_path / "cluster.yaml"
    assert main(["export", "--kubeconfig", str(cluster.kubeconfig), "-o", str(exported)]) == 0
    capsys.readouterr()

    cluster.kubectl("apply", "-f", str(MANIFEST))

    def bound() -> list[dict[str, object]] | None:
        pods = cluster.get_json("pods", "-l", "app=nginx")["items"]
        done = len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods)
        return pods if done else None

    live = wait_for(bound, what="the Deployment's three pods bound")
    live_rs = {p["metadata"]["ownerReferences"][0]["name"] for p in live}

    code = main(["simulate", "--cluster", str(exported), "--pods", str(MANIFEST), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    placements = json.loads(out)["placements"]
    # The same ReplicaSet name: the lab hashes the template as the controller does.
    assert {p["owner"] for p in placements} == {f"ReplicaSet/{name}" for name in live_rs}
    _, simulated = load_cluster(exported, MANIFEST)
    assert [dict(p.labels) for p in simulated] == [p["metadata"]["labels"] for p in live]
    # And the scheduler spreads them as the live one did.
    assert Counter(p["node"] for p in placements) == Counter(p["spec"]["nodeName"] for p in live)
    cluster.kubectl("delete", "-f", str(MANIFEST), "--wait=false")
