"""scheduler_perf's ``dra`` topic as bench workloads (``test/integration/scheduler_perf/
dra/performance-config.yaml``, structured parameters).

- ``dra-claim-template`` — SchedulingWithResourceClaimTemplateStructured, 5000pods_500nodes:
  500 nodes, each with a ResourceSlice of 10 devices of ``test-driver.cdi.k8s.io`` (its
  ``maxClaimsPerNode``), the DeviceClass ``test-class``, and pods each with one claim made
  from a template asking for one device (the claims made as the resource-claim controller
  makes them, before the pods are scheduled). 2,500 initial pods, 2,500 measured.
- ``dra-steady-state`` — SteadyStateClusterResourceClaimTemplateStructured: the same
  cluster kept at 2,500 running pods (half its devices): the measured pods are scheduled
  ten at a time, and after each ten the ten oldest pods end and their claims are
  deleted (claim-template churn), so allocation keeps finding devices that were freed.
- ``dra-shared-claim`` — the same nodes; every 10 pods share one ResourceClaim of one
  device, so a claim is allocated once (for its first pod) and the other nine are
  scheduled where it was allocated.

Both count the CEL selector of the class (``device.driver == 'test-driver.cdi.k8s.io'``)
on every device, as upstream's class does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.objects.dra.claims import ResourceClaim
from kubesched.objects.dra.podclaims import PodResourceClaim
from kubesched.objects.dra.slices import DeviceClass, ResourceSlice
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod

__all__ = [
    "DRA_WORKLOADS",
    "DRIVER",
    "STEADY_STATE_BATCH",
    "STEADY_STATE_WORKLOADS",
    "dra_objects",
    "with_claims",
]

DRA_WORKLOADS = ("dra-claim-template", "dra-steady-state", "dra-shared-claim")
#: Workloads whose measured pods replace running ones (scheduler_perf's steadyState).
STEADY_STATE_WORKLOADS = ("dra-steady-state",)
#: How many pods are scheduled between two rounds of pods ending.
STEADY_STATE_BATCH = 10
DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
DEVICES_PER_NODE = 10
PODS_PER_SHARED_CLAIM = 10


def _claim(name: str, pod: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "default", "name": name, "uid": name}
    if pod is not None:
        # Made from the template for the pod: the pod is its controller.
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": pod, "controller": True}
        ]
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": "resource"}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "req-0",
                        "exactly": {
                            "deviceClassName": CLASS,
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                ]
            }
        },
    }


def claim_name(workload: str, prefix: str, i: int) -> str:
    """The claim of pod ``<prefix>-<i>``: its own (made from the template), or the one it
    shares with nine others."""
    if workload == "dra-shared-claim":
        return f"shared-{prefix}-{i // PODS_PER_SHARED_CLAIM}"
    return f"{prefix}-{i}-resource"


def dra_objects(
    workload: str, nodes: Iterable[Node], prefixes: dict[str, int]
) -> tuple[list[Any], list[dict[str, Any]]]:
    """The typed DeviceClass, ResourceSlices and claims of ``workload``, and the claims
    as stored (raw) for the simulator's API store."""
    objects: list[Any] = [
        DeviceClass.from_dict(
            {
                "metadata": {"name": CLASS},
                "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
            }
        )
    ]
    for node in nodes:
        devices = [
            {"name": f"device-{i}", "attributes": {"index": {"int": i}}}
            for i in range(DEVICES_PER_NODE)
        ]
        objects.append(
            ResourceSlice.from_dict(
                {
                    "metadata": {"name": f"{node.name}-{DRIVER}", "uid": node.name},
                    "spec": {
                        "driver": DRIVER,
                        "nodeName": node.name,
                        "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                        "devices": devices,
                    },
                }
            )
        )
    raws: dict[str, dict[str, Any]] = {}
    for prefix, count in prefixes.items():
        for i in range(count):
            name = claim_name(workload, prefix, i)
            if name not in raws:
                shared = workload == "dra-shared-claim"
                raws[name] = _claim(name, None if shared else f"{prefix}-{i}")
    claims = list(raws.values())
    objects.extend(ResourceClaim.from_dict(c) for c in claims)
    return objects, claims


def with_claims(workload: str, template: Pod, prefix: str, i: int) -> Pod:
    """Pod ``<prefix>-<i>`` of ``workload``: ``template`` with its claim."""
    name = f"{prefix}-{i}"
    claim = claim_name(workload, prefix, i)
    if workload == "dra-shared-claim":
        entry = PodResourceClaim("resource", resource_claim_name=claim)
        return template.evolve(name=name, uid=name, resource_claims=(entry,))
    entry = PodResourceClaim("resource", resource_claim_template_name="test-claim-template")
    return template.evolve(
        name=name,
        uid=name,
        resource_claims=(entry,),
        resource_claim_statuses={"resource": claim},
    )
