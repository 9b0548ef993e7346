"""Volumes in the embedded cluster (conftest's ``cluster``: the API server, every
controller, the live scheduler), driven by kubectl and the official client: the
PersistentVolume binder (static and pre-bound binding, Immediate and WaitForFirstConsumer
provisioning through the simulated CSI provisioner, reclaim policies, Lost claims,
retroactive default class), the protection finalizers, the attach/detach controller and
attacher, the simulated nodes' CSINodes, and the kubelet waiting for a pod's volumes.

The live scheduler's VolumeBinding writes ``volume.kubernetes.io/selected-node`` for the
pods it schedules, and the tests with such pods leave it to it. Tests of how the
controllers react to the annotation itself (a claim no pod uses yet, a node that does not
exist, pods bound to a node by their creator, which no scheduler sees) write it as a
scheduler would (:func:`select_node`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from control_plane import ControlPlane, wait_for

from kubesched.controllers.csi.attacher import finalizer_name
from kubesched.controllers.csi.drivers import LOCAL_DRIVER, ZONAL_DRIVER
from kubesched.controllers.csi.provisioner import FINALIZER as PROVISIONER_FINALIZER
from kubesched.controllers.volume.attachdetach import attachment_name
from kubesched.objects.nodes import DEFAULT_ATTACH_LIMIT

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def apply(cluster: ControlPlane, manifest: str) -> None:
    cluster.kubectl("apply", "-f", "-", stdin=manifest)


def volume(name: str, size: str, cls: str = "manual", extra: str = "") -> str:
    return f"""\
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}}}
spec:
  capacity: {{storage: {size}}}
  accessModes: [ReadWriteOnce]
  storageClassName: "{cls}"
  hostPath: {{path: /tmp/{name}}}
{extra}---
"""


def claim(name: str, size: str, cls: str | None = "manual", extra: str = "") -> str:
    class_line = "" if cls is None else f'  storageClassName: "{cls}"\n'
    return f"""\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  accessModes: [ReadWriteOnce]
{class_line}  resources: {{requests: {{storage: {size}}}}}
{extra}---
"""


def pod(name: str, claim_name: str = "", node: str = "") -> str:
    node_line = f"  nodeName: {node}\n" if node else ""
    volumes = (
        f"  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim_name}}}}}]\n"
        if claim_name
        else ""
    )
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
{node_line}  terminationGracePeriodSeconds: 0
  containers: [{{name: main, image: nginx}}]
{volumes}---
"""


def get(cluster: ControlPlane, kind: str, name: str) -> dict[str, Any] | None:
    out = cluster.kubectl("get", kind, name, "-o", "json", "--ignore-not-found")
    return json.loads(out) if out.strip() else None


def phase(cluster: ControlPlane, kind: str, name: str) -> str:
    obj = get(cluster, kind, name)
    return str(((obj or {}).get("status") or {}).get("phase") or "")


def bound(cluster: ControlPlane, name: str) -> dict[str, Any] | None:
    """The claim once it is Bound (and its volume Bound too), else None."""
    found = get(cluster, "pvc", name)
    if found is None or found["status"].get("phase") != "Bound":
        return None
    if phase(cluster, "pv", found["spec"]["volumeName"]) != "Bound":
        return None
    return found


def events_of(cluster: ControlPlane, kind: str, name: str) -> list[tuple[str, str]]:
    found = cluster.get_json("events", "--field-selector", f"involvedObject.name={name}")
    return [
        (e["reason"], e["message"])
        for e in found["items"]
        if e["involvedObject"].get("kind") == kind
    ]


def select_node(cluster: ControlPlane, claim_name: str, node: str) -> None:
    """What the scheduler's VolumeBinding does for a WaitForFirstConsumer claim, for
    tests of the controllers' reaction to it."""
    cluster.kubectl("annotate", "--overwrite", "pvc", claim_name, f"{SELECTED_NODE}={node}")


def affinity(volume: dict[str, Any]) -> tuple[str, list[str]]:
    (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    return expression["key"], expression["values"]


def node_labels(cluster: ControlPlane, node: str) -> dict[str, str]:
    return dict(cluster.get_json("node", node)["metadata"]["labels"])


@pytest.fixture(scope="module", autouse=True)
def _storage_served(cluster: ControlPlane) -> None:
    found = json.loads(cluster.kubectl("get", "--raw", "/api/v1"))
    assert any(r["name"] == "persistentvolumes" for r in found["resources"])


def test_the_simulated_drivers_and_classes_are_installed(cluster: ControlPlane) -> None:
    classes = {c["metadata"]["name"]: c for c in cluster.get_json("storageclass")["items"]}
    standard, zonal = classes["standard"], classes["zonal"]
    annotations = standard["metadata"].get("annotations") or {}
    assert annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
    assert (standard["provisioner"], standard["volumeBindingMode"]) == (
        LOCAL_DRIVER,
        "WaitForFirstConsumer",
    )
    assert (zonal["provisioner"], zonal["volumeBindingMode"]) == (
        ZONAL_DRIVER,
        "WaitForFirstConsumer",
    )
    drivers = {d["metadata"]["name"]: d for d in cluster.get_json("csidriver")["items"]}
    assert drivers[LOCAL_DRIVER]["spec"]["attachRequired"] is False
    assert drivers[ZONAL_DRIVER]["spec"]["attachRequired"] is True
    csi_node = wait_for(lambda: get(cluster, "csinode", "node-0"), what="the CSINode")
    assert csi_node["metadata"]["ownerReferences"][0]["kind"] == "Node"
    entries = {d["name"]: d for d in csi_node["spec"]["drivers"]}
    assert sorted(entries) == sorted([LOCAL_DRIVER, ZONAL_DRIVER])
    assert entries[ZONAL_DRIVER]["allocatable"]["count"] == DEFAULT_ATTACH_LIMIT
    assert entries[ZONAL_DRIVER]["topologyKeys"] == ["topology.kubernetes.io/zone"]
    assert entries[LOCAL_DRIVER]["topologyKeys"] == ["kubernetes.io/hostname"]


def test_a_claim_binds_the_smallest_volume_that_fits(cluster: ControlPlane) -> None:
    apply(
        cluster,
        volume("small-1g", "1Gi")
        + volume("big-5g", "5Gi")
        + volume("tiny-100m", "100Mi")
        + claim("fits-small", "500Mi"),
    )
    found = wait_for(lambda: bound(cluster, "fits-small"), what="the claim bound")
    assert found["spec"]["volumeName"] == "small-1g"
    assert found["status"]["capacity"] == {"storage": "1Gi"}
    assert found["status"]["accessModes"] == ["ReadWriteOnce"]
    annotations = found["metadata"]["annotations"]
    assert annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    chosen = get(cluster, "pv", "small-1g")
    assert chosen is not None
    assert chosen["spec"]["claimRef"]["uid"] == found["metadata"]["uid"]
    assert chosen["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert phase(cluster, "pv", "big-5g") == "Available"
    assert phase(cluster, "pv", "tiny-100m") == "Available"


def test_pre_bound_volumes_and_claims_bind_to_each_other(cluster: ControlPlane) -> None:
    claim_ref = "  claimRef: {namespace: default, name: wants-reserved}\n"
    apply(
        cluster,
        volume("reserved", "2Gi", extra=claim_ref)
        + volume("decoy", "1Gi")
        + claim("wants-reserved", "1Gi")
        + volume("named", "3Gi")
        + claim("names-its-volume", "1Gi", extra="  volumeName: named\n"),
    )
    first = wait_for(lambda: bound(cluster, "wants-reserved"), what="the pre-bound volume")
    assert first["spec"]["volumeName"] == "reserved"
    second = wait_for(lambda: bound(cluster, "names-its-volume"), what="the named volume")
    assert second["spec"]["volumeName"] == "named"
    # The user chose each side: the controller marks neither as its choice.
    reserved = get(cluster, "pv", "reserved")
    assert reserved is not None
    assert "pv.kubernetes.io/bound-by-controller" not in (
        reserved["metadata"].get("annotations") or {}
    )
    assert "pv.kubernetes.io/bound-by-controller" not in second["metadata"]["annotations"]
    assert phase(cluster, "pv", "decoy") == "Available"


def test_a_claim_for_a_volume_too_small_waits_with_an_event(cluster: ControlPlane) -> None:
    apply(
        cluster,
        volume("too-small", "1Gi") + claim("too-big", "2Gi", extra="  volumeName: too-small\n"),
    )
    wait_for(
        lambda: any(
            r == "VolumeMismatch" for r, _ in events_of(cluster, "PersistentVolumeClaim", "too-big")
        ),
        what="a VolumeMismatch event",
    )
    assert phase(cluster, "pvc", "too-big") == "Pending"
    assert phase(cluster, "pv", "too-small") == "Available"


def test_immediate_claims_are_provisioned_at_once_in_a_zone(cluster: ControlPlane) -> None:
    apply(
        cluster,
        f"""\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: zonal-immediate}}
provisioner: {ZONAL_DRIVER}
volumeBindingMode: Immediate
reclaimPolicy: Retain
---
"""
        + claim("immediate", "3Gi", "zonal-immediate"),
    )
    found = wait_for(lambda: bound(cluster, "immediate"), what="the provisioned claim")
    annotations = found["metadata"]["annotations"]
    assert annotations["volume.kubernetes.io/storage-provisioner"] == ZONAL_DRIVER
    assert SELECTED_NODE not in annotations
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    assert provisioned["metadata"]["name"] == f"pvc-{found['metadata']['uid']}"
    assert provisioned["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert provisioned["spec"]["csi"]["driver"] == ZONAL_DRIVER
    assert provisioned["spec"]["capacity"] == {"storage": "3Gi"}
    key, values = affinity(provisioned)
    zones = {node_labels(cluster, f"node-{i}")["topology.kubernetes.io/zone"] for i in range(3)}
    assert key == "topology.kubernetes.io/zone"
    assert len(values) == 1 and values[0] in zones
    # Retain: no finalizer asks the provisioner to delete it.
    assert PROVISIONER_FINALIZER not in (provisioned["metadata"].get("finalizers") or ())


def test_wait_for_first_consumer_claims_wait_for_the_selected_node(cluster: ControlPlane) -> None:
    apply(cluster, claim("later", "1Gi", cls=None))
    wait_for(
        lambda: (
            ("WaitForFirstConsumer", "waiting for first consumer to be created before binding")
            in events_of(cluster, "PersistentVolumeClaim", "later")
        ),
        what="the WaitForFirstConsumer event",
    )
    found = get(cluster, "pvc", "later")
    assert found is not None and found["spec"]["storageClassName"] == "standard"
    assert found["status"]["phase"] == "Pending" and not found["spec"].get("volumeName")
    # Its first consumer: the scheduler picks the pod's node and writes it on the claim.
    apply(cluster, pod("first-consumer", "later"))
    found = wait_for(lambda: bound(cluster, "later"), what="the provisioned claim")
    node = wait_for(
        lambda: (get(cluster, "pod", "first-consumer") or {}).get("spec", {}).get("nodeName"),
        what="the consumer bound",
    )
    assert found["metadata"]["annotations"][SELECTED_NODE] == node
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    assert affinity(provisioned) == ("kubernetes.io/hostname", [node])
    assert provisioned["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == LOCAL_DRIVER
    reasons = [r for r, _ in events_of(cluster, "PersistentVolumeClaim", "later")]
    assert {"ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"} <= set(reasons)


def test_a_selected_node_in_the_zonal_class_places_the_volume_in_its_zone(
    cluster: ControlPlane,
) -> None:
    apply(cluster, claim("in-zone", "1Gi", cls="zonal"))
    wait_for(lambda: get(cluster, "pvc", "in-zone"), what="the claim")
    # The provisioner's reaction to the annotation, whoever wrote it (with the scheduler:
    # test_volumebinding_cluster.py).
    select_node(cluster, "in-zone", "node-1")
    found = wait_for(lambda: bound(cluster, "in-zone"), what="the provisioned claim")
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    zone = node_labels(cluster, "node-1")["topology.kubernetes.io/zone"]
    assert affinity(provisioned) == ("topology.kubernetes.io/zone", [zone])


def test_a_selected_node_that_is_gone_is_given_back_to_the_scheduler(
    cluster: ControlPlane,
) -> None:
    apply(cluster, claim("nowhere", "1Gi", cls="zonal"))
    wait_for(lambda: get(cluster, "pvc", "nowhere"), what="the claim")
    # A node that went after the scheduler chose it: written here, as no scheduler
    # would choose a node that does not exist.
    select_node(cluster, "nowhere", "no-such-node")
    wait_for(
        lambda: any(
            r == "ProvisioningFailed"
            for r, _ in events_of(cluster, "PersistentVolumeClaim", "nowhere")
        ),
        what="ProvisioningFailed",
    )
    wait_for(
        lambda: (
            SELECTED_NODE
            not in (get(cluster, "pvc", "nowhere") or {})["metadata"].get("annotations", {})
        ),
        what="the selected node removed",
    )
    assert phase(cluster, "pvc", "nowhere") == "Pending"


@pytest.mark.parametrize(
    ("policy", "volume_left"),
    [
        pytest.param("Delete", False, id="delete-policy-deletes-the-provisioned-volume"),
        pytest.param("Retain", True, id="retain-policy-keeps-it-released"),
    ],
)
def test_deleting_a_claim_reclaims_its_volume_by_policy(
    cluster: ControlPlane, policy: str, volume_left: bool
) -> None:
    cls, name = f"reclaim-{policy.lower()}", f"reclaimed-{policy.lower()}"
    apply(
        cluster,
        f"""\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {cls}}}
provisioner: {LOCAL_DRIVER}
volumeBindingMode: Immediate
reclaimPolicy: {policy}
---
"""
        + claim(name, "1Gi", cls),
    )
    found = wait_for(lambda: bound(cluster, name), what="the claim bound")
    volume_name = found["spec"]["volumeName"]
    cluster.kubectl("delete", "pvc", name, "--wait=false")
    if volume_left:
        wait_for(lambda: phase(cluster, "pv", volume_name) == "Released", what="Released")
        kept = get(cluster, "pv", volume_name)
        assert kept is not None and kept["spec"]["claimRef"]["name"] == name
    else:
        wait_for(lambda: get(cluster, "pv", volume_name) is None, what="the volume deleted")


def test_a_static_volume_with_delete_policy_fails_without_a_deleter(cluster: ControlPlane) -> None:
    apply(
        cluster,
        volume("doomed", "1Gi", extra="  persistentVolumeReclaimPolicy: Delete\n")
        + claim("doomed-claim", "1Gi", extra="  volumeName: doomed\n"),
    )
    wait_for(lambda: bound(cluster, "doomed-claim"), what="the claim bound")
    cluster.kubectl("delete", "pvc", "doomed-claim", "--wait=false")
    wait_for(lambda: phase(cluster, "pv", "doomed") == "Failed", what="the volume Failed")
    reasons = [r for r, _ in events_of(cluster, "PersistentVolume", "doomed")]
    assert "VolumeFailedDelete" in reasons


def test_a_claim_whose_volume_is_deleted_is_lost(cluster: ControlPlane) -> None:
    apply(
        cluster,
        volume("vanishing", "1Gi") + claim("loses-it", "1Gi", extra="  volumeName: vanishing\n"),
    )
    wait_for(lambda: bound(cluster, "loses-it"), what="the claim bound")
    # Past the pv-protection finalizer (once deleting, nothing adds it back): the volume
    # goes while bound.
    cluster.kubectl("delete", "pv", "vanishing", "--wait=false")
    cluster.kubectl(
        "patch", "pv", "vanishing", "--type=merge", "-p", '{"metadata":{"finalizers":null}}'
    )
    wait_for(lambda: phase(cluster, "pvc", "loses-it") == "Lost", what="the claim Lost")
    assert (
        "ClaimLost",
        "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
    ) in (events_of(cluster, "PersistentVolumeClaim", "loses-it"))


def test_protection_finalizers_hold_used_claims_and_bound_volumes(cluster: ControlPlane) -> None:
    apply(
        cluster,
        volume("guarded", "1Gi") + claim("guarded-claim", "1Gi", extra="  volumeName: guarded\n"),
    )
    found = wait_for(lambda: bound(cluster, "guarded-claim"), what="the claim bound")
    assert "kubernetes.io/pvc-protection" in found["metadata"]["finalizers"]
    apply(cluster, pod("guard-user", "guarded-claim", node="node-0"))
    wait_for(lambda: phase(cluster, "pod", "guard-user") == "Running", what="the pod Running")
    cluster.kubectl("delete", "pv", "guarded", "--wait=false")
    cluster.kubectl("delete", "pvc", "guarded-claim", "--wait=false")
    # Both stay while the pod uses the claim (and the claim the volume).
    held = wait_for(
        lambda: (
            (get(cluster, "pvc", "guarded-claim") or {})
            .get("metadata", {})
            .get("deletionTimestamp")
        ),
        what="the claim terminating",
    )
    assert held
    volume_now = get(cluster, "pv", "guarded")
    assert (
        volume_now is not None
        and "kubernetes.io/pv-protection" in volume_now["metadata"]["finalizers"]
    )
    assert get(cluster, "pvc", "guarded-claim") is not None
    cluster.kubectl("delete", "pod", "guard-user", "--wait=false")
    wait_for(lambda: get(cluster, "pvc", "guarded-claim") is None, what="the claim gone")
    wait_for(lambda: get(cluster, "pv", "guarded") is None, what="the volume gone")


def test_a_pod_starts_once_its_claim_is_bound_and_attached(cluster: ControlPlane) -> None:
    # Bound to node-2 by its creator: no scheduler writes the claim's selected node.
    apply(
        cluster,
        claim("attach-me", "1Gi", cls="zonal") + pod("waits-for-volume", "attach-me", "node-2"),
    )
    apply(cluster, pod("no-volume", node="node-2"))
    wait_for(lambda: phase(cluster, "pod", "no-volume") == "Running", what="the other pod Running")
    # The kubelet asked about the first pod before the second: its claim is not bound.
    assert phase(cluster, "pod", "waits-for-volume") == "Pending"
    # Where the scheduler would have written it, had the pod been left to it.
    select_node(cluster, "attach-me", "node-2")
    wait_for(lambda: phase(cluster, "pod", "waits-for-volume") == "Running", what="Running")
    found = bound(cluster, "attach-me")
    assert found is not None
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    handle = provisioned["spec"]["csi"]["volumeHandle"]
    attachment = get(cluster, "volumeattachment", attachment_name(handle, ZONAL_DRIVER, "node-2"))
    assert attachment is not None
    assert attachment["spec"] == {
        "attacher": ZONAL_DRIVER,
        "nodeName": "node-2",
        "source": {"persistentVolumeName": found["spec"]["volumeName"]},
    }
    assert attachment["status"]["attached"] is True
    assert finalizer_name(ZONAL_DRIVER) in attachment["metadata"]["finalizers"]
    cluster.kubectl("delete", "pod", "waits-for-volume", "--wait=false")
    name = attachment["metadata"]["name"]
    wait_for(lambda: get(cluster, "volumeattachment", name) is None, what="detached")


def test_a_claim_without_class_gets_the_default_class_retroactively(cluster: ControlPlane) -> None:
    default = "storageclass.kubernetes.io/is-default-class"
    cluster.kubectl("annotate", "--overwrite", "storageclass", "standard", f"{default}=false")
    try:
        apply(cluster, claim("classless", "1Gi", cls=None))
        wait_for(
            lambda: any(
                r == "FailedBinding"
                for r, _ in events_of(cluster, "PersistentVolumeClaim", "classless")
            ),
            what="FailedBinding",
        )
        found = get(cluster, "pvc", "classless")
        assert found is not None and found["spec"].get("storageClassName") is None
    finally:
        cluster.kubectl("annotate", "--overwrite", "storageclass", "standard", f"{default}=true")
    wait_for(
        lambda: (
            (get(cluster, "pvc", "classless") or {})["spec"].get("storageClassName") == "standard"
        ),
        what="the default class assigned",
    )


def test_an_ephemeral_volume_gets_a_claim_owned_by_its_pod(cluster: ControlPlane) -> None:
    apply(
        cluster,
        """\
apiVersion: v1
kind: Pod
metadata: {name: scratch}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: main, image: nginx}]
  volumes:
  - name: cache
    ephemeral:
      volumeClaimTemplate:
        metadata: {labels: {kind: cache}}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
""",
    )
    made = wait_for(lambda: get(cluster, "pvc", "scratch-cache"), what="the ephemeral claim")
    (owner,) = made["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Pod", "scratch", True)
    assert made["metadata"]["labels"] == {"kind": "cache"}
    # The scheduler gives the claim the pod's node, and binds the pod once it is bound.
    node = wait_for(
        lambda: (get(cluster, "pod", "scratch") or {}).get("spec", {}).get("nodeName"),
        what="the pod scheduled",
    )
    wait_for(lambda: phase(cluster, "pod", "scratch") == "Running", what="the pod Running")
    found = bound(cluster, "scratch-cache")
    assert found is not None and found["metadata"]["annotations"][SELECTED_NODE] == node
    cluster.kubectl("delete", "pod", "scratch", "--wait=false")
    wait_for(lambda: get(cluster, "pvc", "scratch-cache") is None, what="the claim gone with it")


def test_provisioning_without_a_place_is_retried_until_a_node_fits(cluster: ControlPlane) -> None:
    zone_label = "topology.kubernetes.io/zone"
    apply(
        cluster,
        f"""\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: zone-to-come}}
provisioner: {ZONAL_DRIVER}
volumeBindingMode: Immediate
allowedTopologies:
- matchLabelExpressions: [{{key: {zone_label}, values: [zone-to-come]}}]
---
"""
        + claim("waits-for-a-zone", "1Gi", "zone-to-come"),
    )
    wait_for(
        lambda: any(
            r == "ProvisioningFailed"
            for r, _ in events_of(cluster, "PersistentVolumeClaim", "waits-for-a-zone")
        ),
        what="ProvisioningFailed",
    )
    assert phase(cluster, "pvc", "waits-for-a-zone") == "Pending"
    old_zone = node_labels(cluster, "node-0")[zone_label]
    cluster.kubectl("label", "--overwrite", "node", "node-0", f"{zone_label}=zone-to-come")
    try:
        found = wait_for(lambda: bound(cluster, "waits-for-a-zone"), what="provisioned at last")
    finally:
        cluster.kubectl("label", "--overwrite", "node", "node-0", f"{zone_label}={old_zone}")
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    assert affinity(provisioned) == (zone_label, ["zone-to-come"])


def test_a_pod_does_not_start_where_its_volume_cannot_be_mounted(cluster: ControlPlane) -> None:
    local_to_node_1 = """\
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1]}]
"""
    apply(
        cluster,
        volume("on-node-1", "1Gi", extra=local_to_node_1).replace(
            "  accessModes: [ReadWriteOnce]", "  accessModes: [ReadWriteMany]"
        )
        + claim("on-node-1-claim", "1Gi", extra="  volumeName: on-node-1\n").replace(
            "  accessModes: [ReadWriteOnce]", "  accessModes: [ReadWriteMany]"
        ),
    )
    wait_for(lambda: bound(cluster, "on-node-1-claim"), what="the claim bound")
    apply(cluster, pod("elsewhere", "on-node-1-claim", node="node-0"))
    apply(cluster, pod("beside-it", "on-node-1-claim", node="node-1"))
    wait_for(lambda: phase(cluster, "pod", "beside-it") == "Running", what="the pod on node-1")
    # The kubelet of node-0 asked first and was refused: the volume is node-1's.
    assert phase(cluster, "pod", "elsewhere") == "Pending"


def test_a_zonal_volume_is_not_attached_to_a_node_of_another_zone(cluster: ControlPlane) -> None:
    apply(cluster, claim("zone-bound", "1Gi", cls="zonal"))
    wait_for(lambda: get(cluster, "pvc", "zone-bound"), what="the claim")
    # A volume in node-0's zone, for a pod its creator binds elsewhere (the attacher's
    # reaction; a scheduler would not place the pod there).
    select_node(cluster, "zone-bound", "node-0")
    found = wait_for(lambda: bound(cluster, "zone-bound"), what="the claim bound")
    # node-0 and node-1 are in different zones (zones go round-robin over the nodes).
    assert (
        node_labels(cluster, "node-0")["topology.kubernetes.io/zone"]
        != node_labels(cluster, "node-1")["topology.kubernetes.io/zone"]
    )
    apply(cluster, pod("wrong-zone", "zone-bound", node="node-1"))
    provisioned = get(cluster, "pv", found["spec"]["volumeName"])
    assert provisioned is not None
    handle = provisioned["spec"]["csi"]["volumeHandle"]
    name = attachment_name(handle, ZONAL_DRIVER, "node-1")
    attachment = wait_for(
        lambda: (
            ((get(cluster, "volumeattachment", name) or {}).get("status") or {}).get("attachError")
            and get(cluster, "volumeattachment", name)
        ),
        what="the attach error",
    )
    assert attachment["status"]["attached"] is False
    assert "node affinity excludes the node" in attachment["status"]["attachError"]["message"]
    assert phase(cluster, "pod", "wrong-zone") == "Pending"
