"""The simulated DRA driver: GPUs like the DRA example driver's for simulated nodes that
ask for them, republished with a new pool generation when the count changes, gone with
the annotation; and a pod asking for a GPU by a CEL selector runs on such a node."""

from __future__ import annotations

from typing import Any

import yaml
from control_plane import ControlPlane, wait_for

from kubesched.controllers.dradriver import DRIVER, GPU_MODEL_ANNOTATION, GPUS_ANNOTATION

SLICE = f"node-1-{DRIVER}"


def gpu_slice(cluster: ControlPlane) -> dict[str, Any] | None:
    items = cluster.get_json("resourceslices")["items"]
    return next((s for s in items if s["metadata"]["name"] == SLICE), None)


def test_simulated_nodes_with_gpus_publish_them(cluster: ControlPlane) -> None:
    cluster.kubectl("annotate", "node", "node-1", f"{GPUS_ANNOTATION}=2")
    published = wait_for(lambda: gpu_slice(cluster), what="the node's slice")
    spec = published["spec"]
    assert (spec["driver"], spec["nodeName"], spec["pool"]["name"]) == (DRIVER, "node-1", "node-1")
    assert [d["name"] for d in spec["devices"]] == ["gpu-0", "gpu-1"]
    first = spec["devices"][0]
    assert first["attributes"]["model"] == {"string": "LATEST-GPU-MODEL"}
    assert first["attributes"]["index"] == {"int": 0}
    assert first["attributes"]["driverVersion"] == {"version": "1.0.0"}
    assert first["attributes"]["uuid"]["string"].startswith("gpu-")
    assert first["capacity"] == {"memory": {"value": "80Gi"}}
    (device_class,) = cluster.get_json("deviceclasses")["items"]
    assert device_class["metadata"]["name"] == DRIVER

    # A pod asking for a GPU of that model (a CEL selector) runs where the GPUs are.
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "default"},
        "spec": {
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"claims": [{"name": "gpu"}]}}
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "latest"}],
        },
    }
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "latest", "namespace": "default"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": DRIVER,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": "device.attributes['gpu.example.com']"
                                            ".model == 'LATEST-GPU-MODEL'"
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            }
        },
    }
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([template, pod]))

    def trainer_running() -> dict[str, Any] | None:
        got = cluster.get_json("pod", "trainer")
        return got if got["status"].get("phase") == "Running" else None

    assert wait_for(trainer_running, what="the trainer Running")["spec"]["nodeName"] == "node-1"
    cluster.kubectl("delete", "pod", "trainer", "--wait=false")

    # Another count: republished as a newer generation of the pool.
    cluster.kubectl("annotate", "--overwrite", "node", "node-1", f"{GPUS_ANNOTATION}=3")
    republished = wait_for(
        lambda: (s := gpu_slice(cluster)) and len(s["spec"]["devices"]) == 3 and s,
        what="three GPUs",
    )
    assert republished["spec"]["pool"]["generation"] == spec["pool"]["generation"] + 1

    # Another model: every GPU of the node has it, in a newer generation again.
    cluster.kubectl("annotate", "node", "node-1", f"{GPU_MODEL_ANNOTATION}=OLDER-GPU-MODEL")
    remodelled = wait_for(
        lambda: (
            (s := gpu_slice(cluster))
            and s["spec"]["devices"][0]["attributes"]["model"]["string"] == "OLDER-GPU-MODEL"
            and s
        ),
        what="the other model",
    )
    models = {d["attributes"]["model"]["string"] for d in remodelled["spec"]["devices"]}
    assert models == {"OLDER-GPU-MODEL"}
    assert remodelled["spec"]["pool"]["generation"] == spec["pool"]["generation"] + 2

    cluster.kubectl("annotate", "node", "node-1", f"{GPUS_ANNOTATION}-")
    wait_for(lambda: gpu_slice(cluster) is None, what="the slice deleted")


def test_a_slice_of_the_same_name_from_another_client_is_left_alone(cluster: ControlPlane) -> None:
    theirs = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": SLICE},
        "spec": {
            "driver": DRIVER,
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 7, "resourceSliceCount": 1},
            "devices": [{"name": "theirs-0"}],
        },
    }
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(theirs))
    # The node has no GPUs by annotation; a node event makes the driver look again.
    cluster.kubectl("label", "node", "node-1", "touched=yes")
    # The driver syncs nodes in order, one at a time: once a node annotated after this
    # event has its slice, node-1's sync is done.
    cluster.kubectl("annotate", "node", "node-2", f"{GPUS_ANNOTATION}=1")
    other = f"node-2-{DRIVER}"
    wait_for(
        lambda: any(
            s["metadata"]["name"] == other for s in cluster.get_json("resourceslices")["items"]
        ),
        what="node-2's slice",
    )
    kept = gpu_slice(cluster)
    assert kept is not None
    assert [d["name"] for d in kept["spec"]["devices"]] == ["theirs-0"]
    assert kept["spec"]["pool"]["generation"] == 7
