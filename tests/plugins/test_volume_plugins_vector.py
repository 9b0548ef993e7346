"""VolumeRestrictions', NodeVolumeLimits' and VolumeZone's ``filter_nodes`` give the
per-node answers, node for node, for random clusters, volumes and pods — and keep giving
them as pods come and go and storage objects change (NodeVolumeLimits keeps per-node
counts between pods)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config import default_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Status
from kubesched.objects.pod import Pod
from kubesched.objects.storage import StorageObject
from kubesched.plugins import volumerestrictions, volumezone
from kubesched.plugins.nodevolumelimits import csi
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import simulate, simulation_json
from kubesched.testing import PluginHandle, make_node, make_pod
from kubesched.testing.storage_wrappers import (
    make_csi_node,
    make_pv,
    make_pvc,
    make_storage_class,
    make_volume_attachment,
)

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
DRIVERS = ("ebs.csi.aws.com", "pd.csi.storage.gke.io")
ZONES = ("a", "b", "c")


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    """Nodes, storage and bound pods, as raw material for PluginHandle."""
    n = draw(st.integers(1, 7))
    nodes = []
    storage: list[StorageObject] = [
        make_storage_class("wffc", DRIVERS[0]).binding_mode("WaitForFirstConsumer").obj(),
        make_storage_class("now", DRIVERS[1]).binding_mode("Immediate").obj(),
        make_storage_class("in-tree", "kubernetes.io/aws-ebs")
        .binding_mode("WaitForFirstConsumer")
        .obj(),
    ]
    for i in range(n):
        w = make_node(f"n{i}")
        zone_key = draw(st.sampled_from((None, ZONE, BETA_ZONE)))
        if zone_key is not None:
            w.label(zone_key, draw(st.sampled_from(ZONES)))
        if draw(st.booleans()):
            w.label(REGION, "r1")
        nodes.append(w.obj())
        if draw(st.booleans()):
            c = make_csi_node(f"n{i}")
            for driver in DRIVERS:
                if draw(st.booleans()):
                    c.driver(driver, draw(st.one_of(st.none(), st.integers(0, 3))))
            if draw(st.booleans()):
                c.migrated("kubernetes.io/portworx-volume")
            storage.append(c.obj())
    volumes = draw(st.integers(0, 8))
    # The volumes and claims as written: the simulator's store holds them (PreBind writes).
    raw: list[dict[str, Any]] = []
    for j in range(volumes):
        pv = make_pv(f"pv{j}").capacity("1Gi")
        kind = draw(st.sampled_from(("csi", "aws", "gce")))
        if kind == "csi":
            pv.csi(draw(st.sampled_from(DRIVERS)), f"h{j}")
        elif kind == "aws":
            pv.source("awsElasticBlockStore", {"volumeID": f"vol-{j}"})
        else:
            pv.source("gcePersistentDisk", {"pdName": f"pd{j}"})
        if draw(st.booleans()):
            pv.label(
                draw(st.sampled_from((ZONE, BETA_ZONE))), draw(st.sampled_from(("a", "b", "a__b")))
            )
        storage.append(pv.obj())
        raw.append(pv.dict())
        claim = make_pvc(f"c{j}").access_modes(
            draw(st.sampled_from(("ReadWriteOnce", "ReadWriteOncePod")))
        )
        if draw(st.integers(0, 4)):
            claim.volume_name(f"pv{j}")
        else:
            claim.storage_class(draw(st.sampled_from(("wffc", "now", "in-tree"))))
        storage.append(claim.obj())
        raw.append(claim.dict())
        if draw(st.booleans()):
            node = draw(st.integers(0, n - 1))
            storage.append(make_volume_attachment(f"va{j}", DRIVERS[0], f"n{node}", f"pv{j}"))
    claim_names = [f"c{j}" for j in range(volumes)] + ["missing"]
    pods = [
        draw(pods_using(claim_names, f"e{k}")).evolve(node_name=f"n{draw(st.integers(0, n - 1))}")
        for k in range(draw(st.integers(0, 8)))
    ]
    return {"nodes": nodes, "storage": storage, "raw": raw, "pods": pods, "claims": claim_names}


def pods_using(claims: list[str], name: str) -> st.SearchStrategy[Pod]:
    @st.composite
    def build(draw: st.DrawFn) -> Pod:
        w = make_pod(name)
        for claim in draw(st.lists(st.sampled_from(claims), max_size=3, unique=True)):
            w.pvc(claim)
        for i, disk in enumerate(
            draw(st.lists(st.sampled_from(("pd0", "pd1", "vol-0")), max_size=2))
        ):
            if disk.startswith("pd"):
                source = {"gcePersistentDisk": {"pdName": disk, "readOnly": draw(st.booleans())}}
            else:
                source = {"awsElasticBlockStore": {"volumeID": disk}}
            w.volume({"name": f"d{i}", **source})
        return w.obj()

    return build()


def compare(plugin: Any, handle: PluginHandle, pod: Pod) -> list[Status | None]:
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, handle.snapshot.list())
    if pre is not None:
        return []
    table = handle.snapshot.table
    assert table is not None
    infos = handle.snapshot.list()
    rows = np.arange(len(infos), dtype=np.int64)
    verdicts = plugin.filter_nodes(state, pod, table, rows)
    out = []
    for row in rows.tolist():
        expected = plugin.filter(state, pod, infos[row])
        got = None
        if verdicts is not None and verdicts.codes[row]:
            got = verdicts.statuses[int(verdicts.codes[row]) - 1]
        assert got == expected, (plugin.name, infos[row].name)
        out.append(got)
    return out


PLUGINS = (volumerestrictions.new, csi.new, volumezone.new)


@SETTINGS
@given(cluster=clusters(), data=st.data())
def test_vector_filters_match_per_node(cluster: dict[str, Any], data: st.DataObject) -> None:
    handle = PluginHandle(
        nodes=cluster["nodes"], pods=cluster["pods"], storage=cluster["storage"], columnar=True
    )
    plugins = [new(None, handle) for new in PLUGINS]
    for i in range(3):
        pod = data.draw(pods_using(cluster["claims"], f"new{i}"))
        for plugin in plugins:
            compare(plugin, handle, pod)
        # Change the cluster between pods: a pod comes or goes, a claim gets bound, a
        # CSINode's limit changes; the kept counts must follow.
        change = data.draw(
            st.sampled_from(("add", "remove", "bind", "limit", "attach", "detach", "handle"))
        )
        if change == "add":
            node = data.draw(st.sampled_from(cluster["nodes"]))
            handle.snapshot.add_pod(pod.evolve(node_name=node.name, name=f"added{i}"))
        elif change == "remove" and cluster["pods"]:
            handle.snapshot.remove_pod(cluster["pods"].pop())
        elif change == "bind":
            claim = data.draw(st.sampled_from(cluster["claims"]))
            handle.cluster.put(make_pvc(claim).volume_name("pv0").obj())
        elif change == "limit":
            node = data.draw(st.sampled_from(cluster["nodes"]))
            limit = data.draw(st.integers(0, 3))
            handle.cluster.put(make_csi_node(node.name).driver(DRIVERS[0], limit).obj())
        elif change == "attach":
            node = data.draw(st.sampled_from(cluster["nodes"]))
            va = make_volume_attachment(f"va-new{i}", DRIVERS[0], node.name, "pv0")
            handle.cluster.put(va)
        elif change == "detach":
            attachments = [
                a for n in cluster["nodes"] for a in handle.cluster.volume_attachments(n.name)
            ]
            if attachments:
                handle.cluster.delete(data.draw(st.sampled_from(attachments)))
        else:
            # The volume behind claims gets another driver and handle.
            handle.cluster.put(make_pv("pv0").capacity("1Gi").csi(DRIVERS[1], f"moved{i}").obj())


def test_the_random_clusters_reach_rejections() -> None:
    """The generator is not vacuous: a fixed cluster where each plugin rejects a node."""
    nodes = [make_node("n0").label(ZONE, "a").obj(), make_node("n1").label(ZONE, "b").obj()]
    storage: list[StorageObject] = [
        make_pv("pv0").csi(DRIVERS[0], "h0").label(ZONE, "a").obj(),
        make_pv("pv1").csi(DRIVERS[0], "h1").obj(),
        make_pvc("c0").volume_name("pv0").obj(),
        make_pvc("c1").volume_name("pv1").obj(),
        make_csi_node("n0").driver(DRIVERS[0], 1).obj(),
    ]
    on_n0 = make_pod("e0").pvc("c1").volume({"name": "d", "gcePersistentDisk": {"pdName": "pd0"}})
    handle = PluginHandle(
        nodes=nodes, pods=[on_n0.obj().evolve(node_name="n0")], storage=storage, columnar=True
    )
    pod = make_pod("p").pvc("c0").volume({"name": "d", "gcePersistentDisk": {"pdName": "pd0"}})
    results = {new.__module__: compare(new(None, handle), handle, pod.obj()) for new in PLUGINS}
    assert [bool(s) for s in results[volumerestrictions.__name__]] == [True, False]
    assert [bool(s) for s in results[csi.__name__]] == [True, False]
    assert [bool(s) for s in results[volumezone.__name__]] == [False, True]


@SETTINGS
@given(cluster=clusters(), data=st.data(), seed=st.integers(0, 2**16))
def test_simulations_with_volumes_place_pods_alike_on_both_paths(
    cluster: dict[str, Any], data: st.DataObject, seed: int
) -> None:
    """The default profile, whole simulations: each pod placed changes what the next one
    sees (attach counts, claims in use), on the node table as on the per-node path."""
    nodes = [
        make_node(n.name).labels(dict(n.labels)).capacity(cpu="4", memory="8Gi", pods="110").obj()
        for n in cluster["nodes"]
    ]
    pending = [
        data.draw(pods_using(cluster["claims"], f"pending{i}"))
        for i in range(data.draw(st.integers(1, 5)))
    ]
    objs = ClusterObjects(
        nodes=nodes,
        pods=list(cluster["pods"]),
        storage=list(cluster["storage"]),
        storage_raw=list(cluster["raw"]),
    )
    config, registry = default_config(), in_tree_registry()
    fast = simulation_json(simulate(objs, pending, config, registry, seed=seed, columnar=True))
    slow = simulation_json(simulate(objs, pending, config, registry, seed=seed, columnar=False))
    assert fast == slow
