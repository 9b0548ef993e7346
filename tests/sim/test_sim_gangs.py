"""Gangs in the simulator: a quorum placed in one cycle or not at all (framework/groupcycle.py).

The groups come from a small PodGroupPlugin reading two labels (as examples/gang.py
does), so that these tests hold the framework's group cycle, whatever plugin names the
groups; Coscheduling's own tests use PodGroup objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kubesched.config import loads_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import PodGroupInfo, Status
from kubesched.framework.registry import Registry
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import IN_TREE
from kubesched.sim.simulator import Placement, Simulator
from kubesched.testing import make_node, make_pod

GROUP = "test.kubesched.io/group"
QUORUM = "test.kubesched.io/quorum"

#: Reserve / Unreserve calls seen by the Recorder plugin, in order.
CALLS: list[tuple[str, str]] = []


class Groups:
    """Groups from two labels; also records Reserve/Unreserve (order of roll-back)."""

    name = "Groups"

    def pod_group(self, pod: Pod) -> PodGroupInfo | None:
        name = pod.labels.get(GROUP)
        if not name:
            return None
        return PodGroupInfo(f"{pod.namespace}/{name}", int(pod.labels.get(QUORUM, "1")))

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        CALLS.append(("reserve", pod.name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        CALLS.append(("unreserve", pod.name))


def new_groups(args: Mapping[str, Any], handle: Handle) -> Groups:
    return Groups()


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{name: Groups}]
"""


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


def nodes(count: int, cpu: str = "2") -> list[Node]:
    return [
        make_node(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods="110").obj() for i in range(count)
    ]


def member(name: str, group: str, quorum: int, cpu: str = "1", priority: int = 0) -> Pod:
    return (
        make_pod(name)
        .labels({GROUP: group, QUORUM: str(quorum)})
        .req(cpu=cpu)
        .priority(priority)
        .obj()
    )


def plain(name: str, cpu: str = "1") -> Pod:
    return make_pod(name).req(cpu=cpu).obj()


def run(
    cluster: Sequence[Node], pods: Sequence[Pod], bound: Sequence[Pod] = ()
) -> dict[str, Placement]:
    registry = Registry({**IN_TREE, "Groups": new_groups})
    sim = Simulator(cluster, bound, loads_config(CONFIG, "config.yaml"), registry, seed=1)
    return {p.pod.name: p for p in sim.run(pods)}


def test_a_quorum_that_fits_is_placed_whole() -> None:
    out = run(nodes(3), [member(f"g-{i}", "g", 3) for i in range(3)])
    assert all(out[f"g-{i}"].node for i in range(3))
    assert [c for c in CALLS if c[0] == "unreserve"] == []


def test_a_quorum_that_does_not_fit_places_no_member_and_says_why() -> None:
    # Two nodes with room for two of the three members: none is placed.
    out = run(nodes(2, cpu="1"), [member(f"g-{i}", "g", 3) for i in range(3)])
    assert [out[f"g-{i}"].node for i in range(3)] == [None, None, None]
    expected = (
        "pod group default/g (minMember 3): 2 of the 3 members needed could be placed "
        "(3 pending), so none was; member default/g-2: 0/2 nodes are available: "
        "2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert {out[f"g-{i}"].message for i in range(3)} == {expected}
    # Reserved in order, unreserved in reverse order: nothing is left assumed.
    assert CALLS == [
        ("reserve", "g-0"),
        ("reserve", "g-1"),
        ("unreserve", "g-1"),
        ("unreserve", "g-0"),
    ]


def test_a_member_waits_holding_nothing_while_its_quorum_does_not_exist() -> None:
    out = run(nodes(2), [member("g-0", "g", 3), member("g-1", "g", 3), plain("p")])
    assert out["g-0"].node is None and out["g-1"].node is None
    assert out["g-0"].message == (
        "pod group default/g: 2 of 3 members exist; waiting for the rest before scheduling any "
        "of them"
    )
    assert out["g-0"].attempts == 0
    assert out["p"].node is not None
    assert CALLS == [("reserve", "p")]


def test_members_already_bound_count_towards_the_quorum() -> None:
    bound = [member("g-0", "g", 3)]
    bound = [bound[0].evolve(node_name="n0")]
    out = run(nodes(2), [member("g-1", "g", 3), member("g-2", "g", 3)], bound)
    assert out["g-1"].node and out["g-2"].node


def test_interleaved_gangs_one_is_placed_whole_and_the_other_waits() -> None:
    # Each gang fits alone (4 cpu on 2 nodes), not both: the pods arrive interleaved.
    pods = []
    for i in range(2):
        pods += [member(f"a-{i}", "a", 2, cpu="2"), member(f"b-{i}", "b", 2, cpu="2")]
    out = run(nodes(2), pods)
    placed = {name for name, p in out.items() if p.node}
    assert placed in ({"a-0", "a-1"}, {"b-0", "b-1"})
    waiting = ({"a-0", "a-1", "b-0", "b-1"} - placed).pop()
    assert "so none was" in (out[waiting].message or "")


def test_a_gang_that_cannot_fit_does_not_block_the_pods_behind_it() -> None:
    big = [member(f"big-{i}", "big", 3, cpu="2", priority=10) for i in range(3)]
    out = run(nodes(2), [*big, plain("p-0"), plain("p-1")])
    assert all(out[f"big-{i}"].node is None for i in range(3))
    assert out["p-0"].node and out["p-1"].node


def test_a_failed_gang_releases_what_its_members_held() -> None:
    # The first two members fit, the third does not: after the roll-back, four 1-cpu
    # pods fill the two nodes the gang had been given in its cycle.
    gang = [
        member("g-0", "g", 3, cpu="1", priority=10),
        member("g-1", "g", 3, cpu="1", priority=10),
    ]
    gang.append(member("g-2", "g", 3, cpu="3", priority=10))
    out = run(nodes(2), [*gang, *(plain(f"p-{i}") for i in range(4))])
    assert all(out[f"g-{i}"].node is None for i in range(3))
    assert all(out[f"p-{i}"].node for i in range(4))


def test_members_beyond_the_quorum_are_scheduled_one_by_one() -> None:
    # minMember 2 of 4 members; room for 3: the quorum is placed, then one more, and the
    # last fails on its own (an ordinary FitError, not the group's).
    out = run(nodes(3, cpu="1"), [member(f"g-{i}", "g", 2) for i in range(4)])
    placed = [name for name, p in out.items() if p.node]
    assert len(placed) == 3
    [left] = [p for p in out.values() if not p.node]
    assert (left.message or "").startswith("0/3 nodes are available: 3 Insufficient cpu.")


def test_a_member_that_fits_nowhere_is_passed_over_when_the_rest_make_the_quorum() -> None:
    pods = [member("g-0", "g", 2), member("g-1", "g", 2, cpu="9"), member("g-2", "g", 2)]
    out = run(nodes(2), pods)
    assert out["g-0"].node and out["g-2"].node
    assert out["g-1"].node is None
    assert (out["g-1"].message or "").startswith("0/2 nodes are available: 2 Insufficient cpu.")


def test_a_pod_outside_any_gang_is_scheduled_as_usual() -> None:
    out = run(nodes(1), [plain("p")])
    assert out["p"].node == "n0"


def fillers(count_per_node: int, node_count: int, cpu: str = "1") -> list[Pod]:
    """Low-priority pods already bound, filling the nodes."""
    return [
        make_pod(f"low-{n}-{i}").req(cpu=cpu).node(f"n{n}").obj()
        for n in range(node_count)
        for i in range(count_per_node)
    ]


def test_a_gang_preempts_when_the_dry_run_places_its_whole_quorum() -> None:
    gang = [member(f"g-{i}", "g", 2, cpu="2", priority=100) for i in range(2)]
    out = run(nodes(2), gang, fillers(2, 2))
    assert out["g-0"].node and out["g-1"].node
    evicted = sorted(v for i in range(2) for v in out[f"g-{i}"].preempted)
    assert evicted == sorted(f"default/low-{n}-{i}" for n in range(2) for i in range(2))


def test_a_gang_evicts_no_one_when_its_quorum_would_not_fit_anyway() -> None:
    # Three members of 2 CPUs on two 2-CPU nodes: preemption frees room for two only.
    gang = [member(f"g-{i}", "g", 3, cpu="2", priority=100) for i in range(3)]
    registry = Registry({**IN_TREE, "Groups": new_groups})
    sim = Simulator(nodes(2), fillers(2, 2), loads_config(CONFIG, "config.yaml"), registry, seed=1)
    out = {p.pod.name: p for p in sim.run(gang)}
    assert all(out[f"g-{i}"].node is None for i in range(3))
    assert all(not out[f"g-{i}"].preempted for i in range(3))
    message = out["g-0"].message or ""
    assert message.startswith(
        "pod group default/g (minMember 3): 2 of the 3 members needed could be placed "
        "(3 pending), so none was (even with 4 lower-priority pod(s) preempted: none was "
        "preempted); member default/g-2: 0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: "
    )
    # Every filler is still on its node.
    on_nodes = {pi.pod.name for info in sim.snapshot().list() for pi in info.pods}
    assert on_nodes == {f"low-{n}-{i}" for n in range(2) for i in range(2)}


def test_members_of_equal_priority_are_not_preempted_for_a_gang() -> None:
    gang = [member(f"g-{i}", "g", 2, cpu="2") for i in range(2)]
    out = run(nodes(2), gang, fillers(2, 2))
    assert out["g-0"].node is None and not out["g-0"].preempted
