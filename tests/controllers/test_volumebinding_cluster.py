"""VolumeBinding with the real volume controllers (conftest's ``cluster``: the API server,
every controller, the live scheduler as ``default-scheduler``): the scheduler writes a
WaitForFirstConsumer claim's selected node, the simulated CSI provisioner makes its
volume in the chosen node's topology, the PV controller binds it, and only then is the
pod bound; a claim of the default class does the same; a pod whose claim is missing
stays Pending with upstream's message."""

from __future__ import annotations

import json
from typing import Any

from control_plane import ControlPlane, wait_for

SELECTED_NODE = "volume.kubernetes.io/selected-node"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def apply(cluster: ControlPlane, manifest: str) -> None:
    cluster.kubectl("apply", "-f", "-", stdin=manifest)


def get(cluster: ControlPlane, kind: str, name: str) -> dict[str, Any] | None:
    out = cluster.kubectl("get", kind, name, "-o", "json", "--ignore-not-found")
    return json.loads(out) if out.strip() else None


def claim_and_pod(name: str, cls: str | None) -> str:
    class_line = "" if cls is None else f"  storageClassName: {cls}\n"
    return f"""\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  accessModes: [ReadWriteOnce]
{class_line}  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}-user}}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{{name: main, image: nginx}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {name}}}}}]
"""


def running_node(cluster: ControlPlane, pod: str) -> str:
    found = get(cluster, "pod", pod)
    if found is None or found["status"].get("phase") != "Running":
        return ""
    return str(found["spec"].get("nodeName") or "")


def required(volume: dict[str, Any]) -> tuple[str, list[str]]:
    (term,) = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    return expression["key"], expression["values"]


def test_a_zonal_claim_is_provisioned_where_the_scheduler_put_its_pod(
    cluster: ControlPlane,
) -> None:
    apply(cluster, claim_and_pod("zonal-data", "zonal"))
    node = wait_for(lambda: running_node(cluster, "zonal-data-user"), what="the pod running")
    pvc = get(cluster, "pvc", "zonal-data")
    assert pvc is not None and pvc["status"]["phase"] == "Bound"
    # Written by the scheduler's PreBind, for the node it chose.
    assert pvc["metadata"]["annotations"][SELECTED_NODE] == node
    pv = get(cluster, "pv", pvc["spec"]["volumeName"])
    assert pv is not None
    labels = cluster.get_json("node", node)["metadata"]["labels"]
    assert required(pv) == (ZONE, [labels[ZONE]])


def test_a_claim_of_the_default_class_gets_a_volume_on_its_pods_node(
    cluster: ControlPlane,
) -> None:
    apply(cluster, claim_and_pod("local-data", None))
    node = wait_for(lambda: running_node(cluster, "local-data-user"), what="the pod running")
    pvc = get(cluster, "pvc", "local-data")
    assert pvc is not None and pvc["spec"]["storageClassName"] == "standard"
    pv = get(cluster, "pv", pvc["spec"]["volumeName"])
    assert pv is not None
    assert required(pv) == (HOSTNAME, [node])


def test_a_pod_whose_claim_is_missing_stays_pending_with_upstreams_message(
    cluster: ControlPlane,
) -> None:
    apply(
        cluster,
        """\
apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec:
  containers: [{name: main, image: nginx}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: nowhere}}]
""",
    )

    def failed() -> str:
        found = cluster.get_json("events", "--field-selector", "involvedObject.name=orphan")
        return next(
            (e["message"] for e in found["items"] if e.get("reason") == "FailedScheduling"),
            "",
        )

    message = wait_for(failed, what="FailedScheduling")
    assert message.startswith('0/3 nodes are available: persistentvolumeclaim "nowhere" not found.')
    found = get(cluster, "pod", "orphan")
    assert found is not None and not found["spec"].get("nodeName")
