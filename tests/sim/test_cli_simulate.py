"""`kubesched simulate` and `kubesched explain` end to end, through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing import make_node, make_pod


def write(path: Path, *objs: dict[str, Any], as_list: bool = True) -> Path:
    if as_list:
        path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    else:
        path.write_text(yaml.safe_dump_all(list(objs)))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    return write(
        tmp_path / "cluster.yaml",
        make_node("n1")
        .capacity(cpu="2", memory="4Gi", pods="10")
        .label("topology.kubernetes.io/zone", "a")
        .dict(),
        make_node("n2")
        .capacity(cpu="4", memory="8Gi", pods="10")
        .label("topology.kubernetes.io/zone", "b")
        .taint("dedicated", "gpu")
        .dict(),
        make_pod("low").node("n1").priority(0).req(cpu="1500m").dict(),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
    )


def test_simulate_json_places_preempts_and_explains_failures(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(
        tmp_path / "pods.yaml",
        make_pod("a").req(cpu="1").dict(),
        make_pod("big").req(cpu="3").dict(),
        make_pod("hi").priority_class_name("high").req(cpu="1").dict(),
        as_list=False,
    )
    code, out, _ = run(
        capsys,
        "simulate",
        "--cluster",
        str(cluster),
        "--pods",
        str(pods),
        "--seed",
        "1",
        "-o",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["placements"] == [
        {
            "pod": "default/hi",
            "owner": None,
            "node": "n1",
            "message": None,
            "preempted": ["default/low"],
        },
        {"pod": "default/a", "owner": None, "node": "n1", "message": None, "preempted": []},
        {
            "pod": "default/big",
            "owner": None,
            "node": None,
            "message": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
            "preempted": [],
        },
    ]
    assert data["summary"]["scheduled"] == 2
    assert data["summary"]["unschedulable"] == 1
    assert data["summary"]["preempted"] == 1


def test_simulate_same_seed_same_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").dict() for i in range(6)]
    cluster = write(tmp_path / "c.yaml", *nodes)
    pods = write(
        tmp_path / "p.yaml", *[make_pod(f"p{i}").req(cpu="100m").dict() for i in range(12)]
    )
    runs = []
    for seed in ("7", "7", "8"):
        code, out, _ = run(
            capsys,
            "simulate",
            "--cluster",
            str(cluster),
            "--pods",
            str(pods),
            "--seed",
            seed,
            "-o",
            "json",
        )
        assert code == 0
        runs.append([p["node"] for p in json.loads(out)["placements"]])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]  # ties are broken at random: another seed, another spread


def test_simulate_retries_pod_when_a_bound_pod_satisfies_its_affinity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = write(
        tmp_path / "c.yaml",
        *[make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").dict() for i in range(3)],
    )
    follower = (
        make_pod("follower")
        .pod_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "db"}})
        .priority(10)
        .container()
    )
    leader = make_pod("leader").label("app", "db").priority(1).container()
    pods = write(tmp_path / "p.yaml", follower.dict(), leader.dict())
    code, out, _ = run(
        capsys,
        "simulate",
        "--cluster",
        str(cluster),
        "--pods",
        str(pods),
        "--seed",
        "3",
        "-o",
        "json",
    )
    assert code == 0
    placements = {p["pod"]: p for p in json.loads(out)["placements"]}
    assert [p["pod"] for p in json.loads(out)["placements"]] == [
        "default/leader",
        "default/follower",
    ]
    assert placements["default/follower"]["node"] == placements["default/leader"]["node"]


def test_pod_for_another_scheduler_stays_pending(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(tmp_path / "p.yaml", make_pod("other").scheduler_name("not-us").container().dict())
    code, out, _ = run(
        capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods), "-o", "json"
    )
    assert code == 0
    (placement,) = json.loads(out)["placements"]
    assert placement["node"] is None
    assert 'schedulerName "not-us"' in placement["message"]


def test_simulate_table_output(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(tmp_path / "p.yaml", make_pod("a").req(cpu="100m").dict())
    code, out, _ = run(capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods))
    assert code == 0
    assert "default/a" in out
    assert "1 scheduled, 0 unschedulable, 0 preempted, of 1 pods" in out


def test_explain_json_contract(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = write(
        tmp_path / "pod.yaml",
        make_pod("a").req(cpu="1", memory="1Gi").toleration("dedicated", operator="Exists").dict(),
        as_list=False,
    )
    code, out, _ = run(
        capsys, "explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["pod"] == "default/a"
    assert data["message"] is None
    by_name = {n["name"]: n for n in data["nodes"]}
    assert by_name["n1"] == {
        "name": "n1",
        "feasible": False,
        "rejectedBy": "NodeResourcesFit",
        "reason": "Insufficient cpu",
        "scores": {},
        "score": None,
    }
    assert by_name["n2"]["feasible"] is True
    assert data["node"] == "n2"
    # NodeAffinity, PodTopologySpread and InterPodAffinity skip themselves at PreScore
    # for a pod without preferences, spread constraints or affinity (as upstream).
    assert set(by_name["n2"]["scores"]) == {
        "TaintToleration",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }


def test_explain_pod_with_node_name_is_decided_by_node_name(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = write(
        tmp_path / "pod.yaml", make_pod("pinned").node("n2").container().dict(), as_list=False
    )
    code, out, _ = run(
        capsys, "explain", "--cluster", str(cluster), "--pod", str(pod), "-o", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["node"] is None
    assert data["message"].startswith("0/2 nodes are available: ")
    n1 = next(n for n in data["nodes"] if n["name"] == "n1")
    assert (n1["rejectedBy"], n1["reason"]) == (
        "NodeName",
        "node(s) didn't match the requested node name",
    )


def test_explain_with_one_plugin_profile(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "one.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "plugins": {
                            "multiPoint": {
                                "disabled": [{"name": "*"}],
                                "enabled": [
                                    {"name": "PrioritySort"},
                                    {"name": "DefaultBinder"},
                                    {"name": "TaintToleration"},
                                ],
                            }
                        },
                    }
                ],
            }
        )
    )
    pod = write(tmp_path / "pod.yaml", make_pod("a").req(cpu="100").dict(), as_list=False)
    code, out, _ = run(
        capsys,
        "explain",
        "--cluster",
        str(cluster),
        "--pod",
        str(pod),
        "--config",
        str(config),
        "-o",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    # Only TaintToleration filters: the huge cpu request does not matter.
    assert data["node"] == "n1"
    assert [n["scores"] for n in data["nodes"]] == [{"TaintToleration": 100}, {}]


@pytest.mark.parametrize(
    ("config", "lines"),
    [
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"schedulerName": "a"},
                    {
                        "schedulerName": "b",
                        "pluginConfig": [
                            {
                                "name": "PodTopologySpread",
                                "args": {
                                    "defaultingType": "List",
                                    "defaultConstraints": [
                                        {
                                            "maxSkew": 0,
                                            "topologyKey": "zone",
                                            "whenUnsatisfiable": "DoNotSchedule",
                                        }
                                    ],
                                },
                            }
                        ],
                    },
                ],
            },
            [
                "profiles[1].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"
            ],
            id="plugin-args-error-has-the-full-path",
        ),
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"schedulerName": "a", "percentageOfNodesToScore": 120},
                    {"schedulerName": "a"},
                ],
            },
            [
                "profiles[0].percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]",
                'profiles[1].schedulerName: Duplicate value: "a"',
            ],
            id="every-problem-at-once",
        ),
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "a",
                        "plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}},
                    }
                ],
            },
            [
                'profiles[0].plugins.filter.enabled[0].name: Invalid value: "NoSuchPlugin": plugin does not exist'
            ],
            id="unknown-plugin",
        ),
    ],
)
def test_wrong_config_exits_2_with_file_and_paths(
    tmp_path: Path,
    cluster: Path,
    capsys: pytest.CaptureFixture[str],
    config: dict[str, Any],
    lines: list[str],
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    pods = write(tmp_path / "p.yaml", make_pod("a").container().dict())
    code, out, err = run(
        capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods), "--config", str(path)
    )
    assert code == 2
    assert out == ""
    assert err.splitlines() == [f"{path}: {line}" for line in lines]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    make_node("n1").capacity(cpu="1").dict(),
                    make_pod("web").req(cpu="lots").dict(),
                ],
            },
            'items[1]: Pod "default/web": spec.containers[0].resources.requests.cpu: quantities must match the regular expression',
            id="bad-quantity",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "x"}}]},
            "items[0]: kind: Required value",
            id="object-without-kind",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [make_node("n1").dict(), make_node("n1").dict()],
            },
            'Node "n1": Duplicate value',
            id="duplicate-node",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [make_node("n1").taint("k", effect="Sometimes").dict()],
            },
            'items[0]: Node "n1": metadata.taints[0].effect: Unsupported value: "Sometimes"',
            id="bad-taint",
        ),
    ],
)
def test_malformed_cluster_file_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: dict[str, Any], expected: str
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump(content))
    pods = write(tmp_path / "p.yaml", make_pod("a").container().dict())
    code, out, err = run(capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods))
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"kubesched: error: {cluster}")
    assert expected in err


def test_yaml_syntax_error_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("items:\n  - kind: Node\n   bad: [\n")
    code, _, err = run(capsys, "simulate", "--cluster", str(cluster), "--pods", str(cluster))
    assert code == 2
    assert "line 3" in err and "invalid YAML" in err


def test_unknown_priority_class_is_reported(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(tmp_path / "p.yaml", make_pod("a").priority_class_name("nope").container().dict())
    code, _, err = run(capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods))
    assert code == 2
    assert (
        err.strip()
        == f'kubesched: error: {pods}: Pod default/a: spec.priorityClassName: no PriorityClass with name "nope" was found'
    )


def test_errors_after_reading_name_the_file_the_pod_came_from(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by tests/fuzz: these two said "Pod default/a" with no file.
    bad = write(tmp_path / "bad.yaml", make_pod("b").priority_class_name("nope").container().dict())
    pods = write(tmp_path / "p.yaml", make_pod("a").container().dict())
    again = write(tmp_path / "again.yaml", make_pod("a").container().dict())
    code, _, err = run(
        capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods), "--pods", str(bad)
    )
    assert code == 2
    assert err.strip().startswith(f"kubesched: error: {bad}: Pod default/b: spec.priorityClassName")
    bound = write(tmp_path / "bound.yaml", make_pod("a").container().node("n1").dict())
    code, _, err = run(capsys, "simulate", "--cluster", str(bound), "--pods", str(again))
    assert code == 2
    assert f"{again}: Pod " in err and "the pod is in the cluster already" in err


def test_a_file_that_is_not_utf8_is_an_error_naming_it(
    tmp_path: Path, cluster: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found by tests/fuzz: a UnicodeDecodeError traceback.
    pods = tmp_path / "p.yaml"
    pods.write_bytes(b"kind: Pod\nmetadata: {name: caf\xe9}\n")
    code, _, err = run(capsys, "simulate", "--cluster", str(cluster), "--pods", str(pods))
    assert code == 2
    assert (
        err.strip()
        == f"kubesched: error: {pods}: byte 30: invalid UTF-8 (0xe9): Kubernetes files are UTF-8 text"
    )
    config = tmp_path / "config.yaml"
    config.write_bytes(b"\xffapiVersion: x\n")
    code, _, err = run(
        capsys,
        "simulate",
        "--cluster",
        str(cluster),
        "--pods",
        str(cluster),
        "--config",
        str(config),
    )
    assert code == 2
    assert err.strip() == f"kubesched: error: {config}: byte 0: invalid UTF-8 (0xff)"


def test_console_script_reports_without_traceback(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        yaml.safe_dump({"kind": "List", "items": [make_pod("p").req(cpu="x").dict()]})
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched.cli",
            "simulate",
            "--cluster",
            str(cluster),
            "--pods",
            str(cluster),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "spec.containers[0].resources.requests.cpu" in proc.stderr


def test_bench_json_has_the_promised_figures(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "bench", "--nodes", "30", "--init-pods", "10", "--pods", "40", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert {"pods_per_second", "p50_ms", "p99_ms", "nodes", "pods"} <= set(data)
    assert (data["nodes"], data["pods"], data["scheduled"]) == (30, 40, 40)
    assert data["pods_per_second"] > 0


@pytest.mark.parametrize("workload", ["anti-affinity", "spread"])
def test_bench_workloads_schedule_as_their_constraints_allow(
    workload: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "bench",
        "--workload",
        workload,
        "--nodes",
        "12",
        "--init-pods",
        "2",
        "--pods",
        "20",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    # One anti-affine pod per node: 12 nodes, 2 taken by the initial pods.
    expected = 10 if workload == "anti-affinity" else 20
    assert data["scheduled"] == expected


def test_bench_rejects_a_negative_size(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "bench", "--pods", "-1")
    assert code == 2
    assert "--pods: Invalid value: -1" in err
