"""Properties of the group cycle over random gangs and clusters, through the simulator:
every gang is placed whole (at least its quorum) or not at all, and what the nodes hold
is exactly the pods placed (a failed cycle leaves nothing assumed behind)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config import loads_config
from kubesched.framework.handle import StaticClusterLister
from kubesched.objects.podgroup import POD_GROUP_LABEL
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.simulator import Simulator
from kubesched.testing import make_node, make_pod
from kubesched.testing.scheduling_wrappers import make_pod_group

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
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
"""

#: (members, minMember, cpu per member in tenths) per gang.
gangs = st.lists(
    st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 20)), min_size=1, max_size=5
)


@settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(nodes=st.lists(st.integers(1, 4), min_size=1, max_size=4), groups=gangs)
def test_gangs_are_placed_whole_or_not_at_all_and_leave_nothing_behind(
    nodes: list[int], groups: list[tuple[int, int, int]]
) -> None:
    cluster = [
        make_node(f"n{i}").capacity(cpu=str(cpu), memory="64Gi", pods="110").obj()
        for i, cpu in enumerate(nodes)
    ]
    pod_groups = []
    pods = []
    for g, (members, min_member, tenths) in enumerate(groups):
        pod_groups.append(make_pod_group(f"g{g}").min_member(min_member).obj())
        pods += [
            make_pod(f"g{g}-{i}").label(POD_GROUP_LABEL, f"g{g}").req(cpu=f"{tenths * 100}m").obj()
            for i in range(members)
        ]
    sim = Simulator(
        cluster,
        (),
        loads_config(CONFIG, "config.yaml"),
        in_tree_registry(),
        cluster=StaticClusterLister(pod_groups=pod_groups),
        seed=0,
    )
    placements = sim.run(pods)
    placed = {p.pod.key: p.node for p in placements if p.node is not None}
    for g, (members, min_member, _) in enumerate(groups):
        count = sum(1 for i in range(members) if f"default/g{g}-{i}" in placed)
        assert count == 0 or count >= min(min_member, members), (g, count)
        if members < min_member:
            assert count == 0
    held = {pi.pod.key: info.name for info in sim.snapshot().list() for pi in info.pods}
    assert held == placed
    for info in sim.snapshot().list():
        assert info.requested.milli_cpu == sum(pi.pod.requests.milli_cpu for pi in info.pods)
        assert info.requested.milli_cpu <= info.allocatable.milli_cpu
