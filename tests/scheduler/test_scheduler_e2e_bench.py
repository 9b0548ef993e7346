"""``kubesched bench --e2e``: the live scheduler in its own process, timed against the
embedded API server in another (or a cluster named by ``--kubeconfig``). Sizes are
small; figures are checked for sense, never for speed."""

from __future__ import annotations

import asyncio
import json

from kubesched.apiserver.runner import start_apiserver
from kubesched.cli import main
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NAMESPACES, PODS


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["bench", "--e2e", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _check_sane(data: dict[str, object], nodes: int, pods: int) -> None:
    assert data["nodes"] == nodes
    assert data["pods"] == pods
    assert data["bound"] == pods
    assert isinstance(data["pods_per_second"], float) and data["pods_per_second"] > 0
    assert 0 < data["p50_ms"] <= data["p99_ms"]
    assert data["raw_binds"] == pods and data["raw_binds_per_second"] > 0
    timing = data["time"]
    assert isinstance(timing, dict)
    # Every pod was scheduled in one attempt (the nodes have room for all of them), and
    # each bind went through the Bind extension point.
    assert timing["scheduling_attempts"] == pods
    assert timing["scheduling_algorithm_seconds"] > 0
    assert timing["bind_api_mean_ms"] > 0
    # Upstream's write cost, counted by the scheduler itself: a binding and a Scheduled
    # event per scheduled pod; a FailedScheduling event and a PodScheduled condition per
    # pod that fits nowhere (a tenth as many).
    cost = data["api_requests"]
    assert isinstance(cost, dict)
    assert cost["scheduled"] == {"create events": 1.0, "create pods/binding": 1.0}
    assert cost["unschedulable"] == {"create events": 1.0, "patch pods/status": 1.0}
    assert cost["per_scheduled_attempt"] == cost["per_unschedulable_attempt"] == 2.0
    assert cost["unschedulable_pods"] == cost["unschedulable_attempts"] == pods // 10


def test_e2e_against_the_embedded_api_server_binds_every_pod(capsys):
    code, out, err = _run(capsys, "--nodes", "50", "--pods", "100", "--json")
    assert code == 0, err
    data = json.loads(out)
    _check_sane(data, 50, 100)
    assert data["server"] == "embedded"
    # The scheduler and the API server ran in processes of their own, measured apart.
    assert data["scheduler_cpu_seconds"] > 0
    assert data["scheduler_peak_mib"] > 10
    assert data["apiserver_cpu_seconds"] > 0


def test_e2e_against_a_kubeconfig_uses_its_nodes_and_cleans_up(capsys, tmp_path):
    with start_apiserver(kubeconfig_path=tmp_path / "kc", nodes=7) as server:
        code, out, err = _run(capsys, "--kubeconfig", str(server.kubeconfig_path), "--pods", "30")
        assert code == 0, err
        assert "30 bound" in out and "7 nodes" in out
        assert "raw binds/s" in out
        assert "2.0 per scheduled attempt" in out and "per unschedulable attempt" in out

        async def leftovers() -> tuple[list[str], list[str]]:
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                pods = await client.list(PODS.raw)
                spaces = await client.list(NAMESPACES.raw)
            return (
                [p["metadata"]["name"] for p in pods.items],
                [n["metadata"]["name"] for n in spaces.items],
            )

        pods, spaces = asyncio.run(leftovers())
        # The benchmark's namespace (and with it its pods) is gone.
        assert not [n for n in spaces if n.startswith("kubesched-bench-")], spaces
        assert pods == []


def test_e2e_rejects_bad_sizes_and_options(capsys):
    code, _, err = _run(capsys, "--nodes", "0")
    assert code == 2 and "--nodes: Invalid value: 0" in err
    code, _, err = _run(capsys, "--workload", "spread")
    assert code == 2 and "--workload: not supported with --e2e" in err
    code, _, err = _run(capsys, "--kubeconfig", "kc", "--nodes", "3")
    assert code == 2 and "--nodes: not with --kubeconfig" in err
    assert main(["bench", "--kubeconfig", "x"]) == 2
    assert "--kubeconfig: only with --e2e" in capsys.readouterr().err
