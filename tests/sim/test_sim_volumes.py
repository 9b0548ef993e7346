"""What the PV controller and a provisioner would do, in a simulation: later pods see the
volumes of earlier pods (their zones, their bindings), Immediate and static claims are
bound before scheduling, and WaitForFirstConsumer claims are provisioned where their pod
went."""

from __future__ import annotations

from typing import Any

from kubesched.config import loads_config
from kubesched.framework.apiclient import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from kubesched.framework.handle import StaticClusterLister
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.simulator import Simulator
from kubesched.testing import make_node, make_pod
from kubesched.testing.storage_wrappers import make_csi_node, make_pv, make_pvc, make_storage_class

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
DRIVER = "zonal.csi.example.com"

# VolumeBinding alone decides (with the queue sort and the binder around it).
CONFIG = loads_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      multiPoint:
        disabled: [{name: "*"}]
        enabled: [{name: PrioritySort}, {name: VolumeBinding}, {name: DefaultBinder}]
""")


def nodes() -> list[Any]:
    return [
        make_node(name).label(ZONE, zone).label(HOSTNAME, name).capacity(cpu="4", pods=10).obj()
        for name, zone in (("a1", "a"), ("a2", "a"), ("b1", "b"), ("b2", "b"))
    ]


def zonal_class() -> dict[str, Any]:
    return make_storage_class("zonal", DRIVER).binding_mode("WaitForFirstConsumer").dict()


def csi_nodes() -> list[dict[str, Any]]:
    out = []
    for name in ("a1", "a2", "b1", "b2"):
        raw = make_csi_node(name).driver(DRIVER).dict()
        raw["spec"]["drivers"][0]["topologyKeys"] = [ZONE]
        out.append(raw)
    return out


def claim(name: str, cls: str = "zonal") -> dict[str, Any]:
    return make_pvc(name).storage_class(cls).request("1Gi").access_modes("ReadWriteOnce").dict()


def test_a_claim_provisioned_for_one_pod_keeps_the_next_pod_in_its_zone():
    storage = [zonal_class(), *csi_nodes(), claim("data")]
    sim = Simulator(nodes(), [], CONFIG, in_tree_registry(), storage=storage, seed=1)
    first, second = sim.run(
        [make_pod("first").pvc("data").obj(), make_pod("second").pvc("data").obj()]
    )
    assert first.node is not None and second.node is not None
    bound = sim.api.get(PERSISTENT_VOLUME_CLAIMS, "data", "default")
    assert bound["status"]["phase"] == "Bound"
    volume = sim.api.get(PERSISTENT_VOLUMES, bound["spec"]["volumeName"])
    zone = first.node[0]
    assert volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
    ]
    # The second pod's claim is bound now: only the volume's zone fits it.
    assert second.node[0] == zone
    assert sim.cluster.persistent_volume_claim("default", "data").is_fully_bound


def test_every_claim_of_a_set_is_provisioned_where_its_pod_went():
    storage = [zonal_class(), *csi_nodes(), *(claim(f"data-web-{i}") for i in range(4))]
    sim = Simulator(nodes(), [], CONFIG, in_tree_registry(), storage=storage, seed=3)
    placements = sim.run([make_pod(f"web-{i}").pvc(f"data-web-{i}").obj() for i in range(4)])
    for placement in placements:
        assert placement.node is not None, placement.message
        name = f"data-{placement.pod.name}"
        pvc = sim.cluster.persistent_volume_claim("default", name)
        assert pvc is not None and pvc.is_fully_bound
        assert pvc.selected_node == placement.node
        pv = sim.cluster.persistent_volume(pvc.volume_name)
        assert pv is not None and pv.claim_ref is not None and pv.claim_ref.name == name


def test_immediate_and_static_claims_are_bound_before_scheduling():
    immediate = make_storage_class("fast", "kubernetes.io/no-provisioner").binding_mode("Immediate")
    local = (
        make_pv("local-b1")
        .storage_class("fast")
        .capacity("5Gi")
        .access_modes("ReadWriteOnce")
        .node_affinity_in(HOSTNAME, "b1")
    )
    storage = [immediate.dict(), local.dict(), claim("logs", "fast")]
    sim = Simulator(nodes(), [], CONFIG, in_tree_registry(), storage=storage)
    pvc = sim.cluster.persistent_volume_claim("default", "logs")
    assert pvc is not None and pvc.volume_name == "local-b1" and pvc.is_fully_bound
    (placement,) = sim.run([make_pod("reader").pvc("logs").obj()])
    assert placement.node == "b1"


def test_an_immediate_claim_nothing_can_bind_leaves_its_pod_pending():
    immediate = make_storage_class("fast", "kubernetes.io/no-provisioner").binding_mode("Immediate")
    sim = Simulator(
        nodes(), [], CONFIG, in_tree_registry(), storage=[immediate.dict(), claim("x", "fast")]
    )
    (placement,) = sim.run([make_pod("p").pvc("x").obj()])
    assert placement.node is None
    assert placement.message == (
        "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    )


def test_a_static_volume_is_taken_by_one_claim_only():
    local = make_storage_class("local", "kubernetes.io/no-provisioner").binding_mode(
        "WaitForFirstConsumer"
    )
    pv = (
        make_pv("only")
        .storage_class("local")
        .capacity("5Gi")
        .access_modes("ReadWriteOnce")
        .node_affinity_in(HOSTNAME, "a2")
    )
    storage = [local.dict(), pv.dict(), claim("one", "local"), claim("two", "local")]
    sim = Simulator(nodes(), [], CONFIG, in_tree_registry(), storage=storage)
    first, second = sim.run([make_pod("p1").pvc("one").obj(), make_pod("p2").pvc("two").obj()])
    assert first.node == "a2"
    assert second.node is None
    assert "4 node(s) didn't find available persistent volumes to bind" in str(second.message)


def test_a_claim_given_decoded_only_cannot_be_bound_and_says_why():
    lister = StaticClusterLister(
        storage=[
            make_storage_class("zonal", DRIVER).binding_mode("WaitForFirstConsumer").obj(),
            make_pvc("data").storage_class("zonal").request("1Gi").obj(),
        ]
    )
    sim = Simulator(nodes(), [], CONFIG, in_tree_registry(), cluster=lister)
    (placement,) = sim.run([make_pod("p").pvc("data").obj()])
    assert placement.node is None
    assert (
        "PersistentVolumeClaim 'data' was given decoded only: the simulator needs the "
        "storage objects as written too (ClusterObjects.storage_raw) to bind it"
    ) in str(placement.message)


# The whole default profile: the volume plugins see what earlier pods' volumes became.
DEFAULT = loads_config("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - plugins:
      multiPoint:
        disabled: [{name: DefaultPreemption}]
""")


def test_a_node_full_of_attached_volumes_takes_no_more_provisioned_ones():
    limited = []
    for name in ("a1", "b1"):
        raw = make_csi_node(name).driver(DRIVER, count=1).dict()
        raw["spec"]["drivers"][0]["topologyKeys"] = [ZONE]
        limited.append(raw)
    two_nodes = [n for n in nodes() if n.name in ("a1", "b1")]
    storage = [zonal_class(), *limited, *(claim(f"d{i}") for i in range(3))]
    sim = Simulator(two_nodes, [], DEFAULT, in_tree_registry(), storage=storage, seed=1)
    placements = sim.run([make_pod(f"p{i}").pvc(f"d{i}").obj() for i in range(3)])
    assert sorted(p.node for p in placements[:2] if p.node) == ["a1", "b1"]
    # Each node attaches one volume of the driver: the first two pods' volumes fill them.
    assert placements[2].node is None
    assert "2 node(s) exceed max volume count" in str(placements[2].message)


def test_a_read_write_once_pod_claim_in_use_keeps_the_next_pod_out():
    rwop = (
        make_pvc("solo")
        .storage_class("zonal")
        .request("1Gi")
        .access_modes("ReadWriteOncePod")
        .dict()
    )
    sim = Simulator(
        nodes(), [], DEFAULT, in_tree_registry(), storage=[zonal_class(), *csi_nodes(), rwop]
    )
    first, second = sim.run(
        [make_pod("first").pvc("solo").obj(), make_pod("second").pvc("solo").obj()]
    )
    assert first.node is not None
    assert second.node is None
    assert "ReadWriteOncePod" in str(second.message)
