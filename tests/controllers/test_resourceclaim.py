"""Dynamic Resource Allocation in the embedded cluster: manifests shaped like the DRA
example driver's demos (gpu-test1: a claim per pod from a template; gpu-test4: one claim
shared by two pods) applied with kubectl, the resource-claim controller making the
claims, ``kubesched run``'s DynamicResources allocating them, the kubelet starting pods
only once their claims are allocated and reserved for them, and deleting the pods
giving the devices back."""

from __future__ import annotations

from typing import Any

import yaml
from control_plane import ControlPlane, wait_for

DRIVER = "gpu.example.com"
FINALIZER = "resource.kubernetes.io/delete-protection"


def apply(cluster: ControlPlane, *objects: dict[str, Any]) -> None:
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))


def publish_gpus(cluster: ControlPlane, per_node: int) -> list[str]:
    """A DeviceClass and one slice of ``per_node`` GPUs per node, as the example driver
    publishes them; the node names."""
    nodes = [n["metadata"]["name"] for n in cluster.get_json("nodes")["items"]]
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
        }
    ]
    for node in nodes:
        devices = [
            {
                "name": f"gpu-{i}",
                "attributes": {
                    "index": {"int": i},
                    "model": {"string": "LATEST-GPU-MODEL"},
                    "driverVersion": {"version": "1.0.0"},
                },
                "capacity": {"memory": {"value": "80Gi"}},
            }
            for i in range(per_node)
        ]
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": node,
                    "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                    "devices": devices,
                },
            }
        )
    apply(cluster, *objects)
    return nodes


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def template(ns: str, name: str = "single-gpu") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"namespace": ns, "name": name},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}
            }
        },
    }


def pod(ns: str, name: str, *, template_name: str = "", claim: str = "") -> dict[str, Any]:
    source = (
        {"resourceClaimTemplateName": template_name}
        if template_name
        else {"resourceClaimName": claim}
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": ns, "name": name},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "ctr0",
                    "image": "ubuntu:22.04",
                    "command": ["bash", "-c"],
                    "args": ["export; trap 'exit 0' TERM; sleep 9999 & wait"],
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", **source}],
        },
    }


def claims(cluster: ControlPlane, ns: str) -> list[dict[str, Any]]:
    return list(cluster.get_json("resourceclaims", "-n", ns)["items"])


def devices(claim: dict[str, Any]) -> list[tuple[str, str]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [(r["pool"], r["device"]) for r in allocation.get("devices", {}).get("results", [])]


def running(cluster: ControlPlane, ns: str, names: list[str]) -> list[dict[str, Any]] | None:
    pods = {p["metadata"]["name"]: p for p in cluster.get_json("pods", "-n", ns)["items"]}
    if all(pods.get(n, {}).get("status", {}).get("phase") == "Running" for n in names):
        return [pods[n] for n in names]
    return None


def all_taken(cluster: ControlPlane) -> list[tuple[str, str]]:
    return [d for c in cluster.get_json("resourceclaims", "-A")["items"] for d in devices(c)]


def test_claims_from_templates_give_each_pod_its_own_gpu_and_deleting_frees_them(
    cluster: ControlPlane,
) -> None:
    nodes = publish_gpus(cluster, per_node=1)
    ns = "gpu-test1"
    apply(cluster, namespace(ns), template(ns))
    names = [f"pod{i}" for i in range(len(nodes))]
    apply(cluster, *(pod(ns, n, template_name="single-gpu") for n in names))
    pods = wait_for(lambda: running(cluster, ns, names), what="every pod Running")
    made = {c["metadata"]["name"]: c for c in claims(cluster, ns)}
    for p in pods:
        (status,) = p["status"]["resourceClaimStatuses"]
        claim = made[status["resourceClaimName"]]
        # The controller's naming and ownership; the scheduler's allocation and reservation.
        assert claim["metadata"]["name"].startswith(f"{p['metadata']['name']}-gpu-")
        owner = claim["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "Pod",
            p["metadata"]["uid"],
            True,
        )
        assert claim["metadata"]["finalizers"] == [FINALIZER]
        assert [r["uid"] for r in claim["status"]["reservedFor"]] == [p["metadata"]["uid"]]
        ((pool, _device),) = devices(claim)
        assert pool == p["spec"]["nodeName"]
    taken = all_taken(cluster)
    assert len(taken) == len(set(taken)) == len(nodes)  # no device twice
    # Every GPU is taken: one more pod waits.
    apply(cluster, pod(ns, "extra", template_name="single-gpu"))
    wait_for(
        lambda: any(
            c["type"] == "PodScheduled" and c["status"] == "False"
            for c in cluster.get_json("pod", "-n", ns, "extra")
            .get("status", {})
            .get("conditions", [])
        ),
        what="the extra pod reported unschedulable",
    )
    # Deleting a pod frees its GPU (its claim goes with it): the extra pod runs.
    cluster.kubectl("delete", "pod", "-n", ns, "pod0", "--wait=false")
    wait_for(lambda: running(cluster, ns, ["extra"]), what="the extra pod Running")
    taken = all_taken(cluster)
    assert len(taken) == len(set(taken)) == len(nodes)
    cluster.kubectl("delete", "namespace", ns, "--wait=false")
    wait_for(lambda: not all_taken(cluster), what="every GPU free again")


def test_a_shared_claim_serves_two_pods_on_one_node_and_is_deallocated_after_them(
    cluster: ControlPlane,
) -> None:
    publish_gpus(cluster, per_node=1)
    ns = "gpu-test4"
    shared = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": ns, "name": "single-gpu"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}
        },
    }
    apply(cluster, namespace(ns), shared)
    apply(cluster, pod(ns, "pod0", claim="single-gpu"), pod(ns, "pod1", claim="single-gpu"))
    pods = wait_for(lambda: running(cluster, ns, ["pod0", "pod1"]), what="both pods Running")
    assert pods[0]["spec"]["nodeName"] == pods[1]["spec"]["nodeName"]
    (claim,) = claims(cluster, ns)
    assert sorted(r["name"] for r in claim["status"]["reservedFor"]) == ["pod0", "pod1"]
    assert len(devices(claim)) == 1
    cluster.kubectl("delete", "pod", "-n", ns, "pod0", "pod1", "--wait=false")

    def released() -> dict[str, Any] | None:
        (c,) = claims(cluster, ns)
        status = c.get("status") or {}
        done = not status.get("reservedFor") and not status.get("allocation")
        return c if done and not c["metadata"].get("finalizers") else None

    wait_for(released, what="the claim deallocated, its finalizer removed")
    cluster.kubectl("delete", "namespace", ns, "--wait=false")


def test_a_pod_waits_for_its_template_and_starts_once_its_claim_is_reserved(
    cluster: ControlPlane,
) -> None:
    publish_gpus(cluster, per_node=1)
    ns = "late-template"
    apply(cluster, namespace(ns), pod(ns, "waiting", template_name="later"))

    def failed_creation() -> bool:
        events = cluster.get_json("events", "-n", ns)["items"]
        return any(e.get("reason") == "FailedResourceClaimCreation" for e in events)

    wait_for(failed_creation, what="the controller's FailedResourceClaimCreation event")
    waiting = cluster.get_json("pod", "-n", ns, "waiting")
    assert not waiting["spec"].get("nodeName")
    assert not waiting["status"].get("resourceClaimStatuses")
    apply(cluster, template(ns, "later"))
    (p,) = wait_for(lambda: running(cluster, ns, ["waiting"]), what="the pod Running")
    (claim,) = claims(cluster, ns)
    assert [r["uid"] for r in claim["status"]["reservedFor"]] == [p["metadata"]["uid"]]
    cluster.kubectl("delete", "namespace", ns, "--wait=false")
