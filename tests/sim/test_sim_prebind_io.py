"""PreBind doing I/O in the simulator: its calls go to the simulation's in-memory store,
so what one pod's PreBind wrote is there for the next pod's, and a failure there
unreserves the pod as in the live scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.config import loads_config
from kubesched.framework.apiclient import AlreadyExists, APIResource
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Status
from kubesched.framework.registry import Registry
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import IN_TREE
from kubesched.sim.simulator import Simulator
from kubesched.testing import make_node, make_pod

LEASES = APIResource("coordination.k8s.io", "v1", "leases", "Lease")


class NodeLease:
    """PreBind: take the chosen node's Lease, one pod per node."""

    name = "NodeLease"

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.handle = handle

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        lease = {
            "metadata": {"name": node_name, "namespace": "default"},
            "spec": {"holderIdentity": pod.name},
        }
        try:
            self.handle.client.create(LEASES, lease)
        except AlreadyExists:
            return Status.unschedulable("node is leased")
        return None


CONFIG = loads_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      preBind:
        enabled: [{name: NodeLease}]
""")


def test_what_one_pods_prebind_wrote_is_there_for_the_next_pod():
    nodes = [make_node("n1").capacity(cpu="4", memory="8Gi", pods=110).obj()]
    sim = Simulator(nodes, [], CONFIG, Registry({**IN_TREE, "NodeLease": NodeLease}))
    first, second = sim.run([make_pod("a").obj(), make_pod("b").obj()])
    assert (first.pod.name, first.node) == ("a", "n1")
    assert sim.api.get(LEASES, "n1", "default")["spec"] == {"holderIdentity": "a"}
    assert (second.pod.name, second.node) == ("b", None)
    assert second.message == "0/1 nodes are available: 1 node is leased."
    # Unreserved: only the first pod is on the node.
    assert [p.pod.name for p in sim.snapshot().find("n1").pods] == ["a"]
