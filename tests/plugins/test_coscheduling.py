"""Coscheduling (scheduler-plugins v0.34.7's args, QueueSort and PodGroup membership) on
the framework's group cycle: its args table, its order, its PreFilter, its gangs placed
through the simulator from PodGroup objects, and scheduler-plugins' own configuration."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import loads_config
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import StaticClusterLister
from kubesched.framework.interface import Code, PodGroupInfo
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import QueuedPodInfo
from kubesched.objects.pod import Pod
from kubesched.objects.podgroup import POD_GROUP_LABEL, PodGroup
from kubesched.plugins.coscheduling import Coscheduling, CoschedulingArgs, new
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.simulator import Simulator
from kubesched.testing import make_node, make_pod
from kubesched.testing.handle import PluginHandle
from kubesched.testing.scheduling_wrappers import make_pod_group

# The shape of scheduler-plugins' manifests/coscheduling/scheduler-config.yaml.
SCHEDULER_PLUGINS_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "REPLACE_ME_WITH_KUBE_CONFIG_PATH"
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param({}, CoschedulingArgs(60, 0, 10), id="defaults-of-v0.34.7"),
        pytest.param(
            {
                "permitWaitingTimeSeconds": 10,
                "podGroupBackoffSeconds": 5,
                "podGroupRejectPercentage": 100,
            },
            CoschedulingArgs(10, 5, 100),
            id="every-field-set",
        ),
    ],
)
def test_args_decode_with_the_release_defaults(args: dict[str, Any], expected: CoschedulingArgs):
    decoded, errors = CoschedulingArgs.from_mapping(args)
    assert (decoded, errors) == (expected, [])


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(
            {"permitWaitingTimeSeconds": -1},
            ["permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0"],
            id="negative-permit-waiting-time",
        ),
        pytest.param(
            {"podGroupBackoffSeconds": -1},
            ["podGroupBackoffSeconds: Invalid value: -1: must be greater than 0"],
            id="negative-backoff",
        ),
        pytest.param(
            {"podGroupRejectPercentage": 101},
            ["podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100"],
            id="reject-percentage-above-100",
        ),
        pytest.param(
            {"podGroupRejectPercentage": -1, "podGroupBackoffSeconds": -2},
            [
                "podGroupBackoffSeconds: Invalid value: -2: must be greater than 0",
                "podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100",
            ],
            id="every-problem-at-once",
        ),
        pytest.param(
            {"permitWaitingTime": 10},
            ['permitWaitingTime: Invalid value: "permitWaitingTime": unknown field'],
            id="unknown-field",
        ),
    ],
)
def test_args_validation_reports_every_problem_with_its_path(
    args: dict[str, Any], errors: list[str]
):
    with pytest.raises(ArgsError) as info:
        new(args, PluginHandle())
    assert [str(e) for e in info.value.errors] == errors


def member(name: str, group: str, priority: int = 0, created: str = "") -> Pod:
    pod = make_pod(name).label(POD_GROUP_LABEL, group).req(cpu="1").priority(priority)
    if created:
        pod = pod.creation_timestamp(created)
    return pod.obj()


def plugin(*groups: PodGroup, backoff: int = 0) -> Coscheduling:
    handle = PluginHandle(pod_groups=groups)
    return new({"podGroupBackoffSeconds": backoff}, handle)


def test_a_pod_belongs_to_the_pod_group_its_label_names() -> None:
    cs = plugin(make_pod_group("train").min_member(3).obj(), backoff=5)
    assert cs.pod_group(member("w", "train")) == PodGroupInfo("default/train", 3, 5.0)
    assert cs.pod_group(member("w", "missing")) is None
    assert cs.pod_group(make_pod("alone").obj()) is None


def test_a_pod_naming_a_missing_pod_group_waits_for_it_at_pre_filter() -> None:
    cs = plugin()
    _, status = cs.pre_filter(CycleState(), member("w", "missing"), [])
    assert status is not None
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PodGroup not found",
    )


def test_min_resources_the_cluster_cannot_cover_is_a_resource_gap() -> None:
    group = make_pod_group("train").min_member(2).min_resources(cpu="10").obj()
    cs = plugin(group)
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj() for i in range(2)]
    infos = Snapshot.from_objects(nodes, ()).list()
    _, status = cs.pre_filter(CycleState(), member("w", "train"), infos)
    assert status is not None and status.message == "resource gap: cpu: 2"
    roomy = plugin(make_pod_group("train").min_member(2).min_resources(cpu="8").obj())
    assert roomy.pre_filter(CycleState(), member("w", "train"), infos) == (None, None)


def test_the_queue_order_is_priority_then_group_creation_then_key() -> None:
    old = make_pod_group("old").creation_timestamp("2026-01-01T00:00:00Z").obj()
    young = make_pod_group("young").creation_timestamp("2026-01-02T00:00:00Z").obj()
    cs = plugin(old, young)

    def queued(pod: Pod, timestamp: float = 0.0) -> QueuedPodInfo:
        return QueuedPodInfo(pod, timestamp=timestamp)

    # The group created first goes first, even for a member created later.
    a = queued(member("z", "old", created="2026-03-01T00:00:00Z"))
    b = queued(member("a", "young", created="2026-01-01T00:00:00Z"))
    assert cs.less(a, b) and not cs.less(b, a)
    # Priority comes before age.
    high = queued(member("h", "young", priority=10))
    assert cs.less(high, a)
    # Members of one group: by key.
    first, second = queued(member("m-0", "old")), queued(member("m-1", "old"))
    assert cs.less(first, second) and not cs.less(second, first)


def test_scheduler_plugins_own_configuration_loads_unchanged() -> None:
    config = loads_config(SCHEDULER_PLUGINS_CONFIG, "scheduler-config.yaml")
    fwk = Framework(config.profiles[0], in_tree_registry(), cluster=StaticClusterLister())
    assert [p.name for p in fwk.plugins_at("queueSort")] == ["Coscheduling"]
    assert fwk.pod_group_plugin is not None and fwk.pod_group_plugin.name == "Coscheduling"
    assert "Coscheduling" in [p.name for p in fwk.plugins_at("preFilter")]
    cs = fwk.plugins["Coscheduling"]
    assert isinstance(cs, Coscheduling)
    assert cs.args == CoschedulingArgs(10, 0, 10)


def simulate(pods: list[Pod], groups: list[PodGroup], nodes: int = 2) -> dict[str, Any]:
    config = loads_config(SCHEDULER_PLUGINS_CONFIG, "scheduler-config.yaml")
    cluster = [
        make_node(f"n{i}").capacity(cpu="2", memory="8Gi", pods="110").obj() for i in range(nodes)
    ]
    sim = Simulator(
        cluster,
        (),
        config,
        in_tree_registry(),
        cluster=StaticClusterLister(pod_groups=groups),
        seed=1,
    )
    return {p.pod.name: p for p in sim.run(pods)}


def test_a_pod_group_is_placed_whole_or_waits_with_one_reason() -> None:
    groups = [make_pod_group("fits").min_member(2).obj(), make_pod_group("big").min_member(5).obj()]
    pods = [member(f"fits-{i}", "fits") for i in range(2)]
    pods += [member(f"big-{i}", "big") for i in range(5)]
    out = simulate(pods, groups)
    assert out["fits-0"].node and out["fits-1"].node
    assert all(out[f"big-{i}"].node is None for i in range(5))
    assert (out["big-0"].message or "").startswith(
        "pod group default/big (minMember 5): 2 of the 5 members needed could be placed"
    )


def test_members_wait_for_their_quorum_to_exist() -> None:
    out = simulate([member("w-0", "w")], [make_pod_group("w").min_member(2).obj()])
    assert out["w-0"].node is None
    assert out["w-0"].message == (
        "pod group default/w: 1 of 2 members exist; waiting for the rest before scheduling any "
        "of them"
    )
