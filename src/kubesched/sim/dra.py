"""Dynamic Resource Allocation in a simulation: the claims the resource-claim controller
would make, and the claims' life through the simulation.

Before scheduling, each pending pod whose ``spec.resourceClaims`` entry names a
ResourceClaimTemplate gets the claim kube-controller-manager would create
(:func:`kubesched.objects.dra.podclaims.claim_from_template`: ``generateName``
``<pod>-<entry>-``, the pod as controller owner) and the entry in its
``status.resourceClaimStatuses``. During the simulation the claims live in the
simulator's in-memory API store, where DynamicResources' PreBind writes allocations and
reservations; every write is copied to the cluster lister the plugins read, so a device
allocated to one pod is gone for the next, and a shared claim is allocated once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.apiclient import RESOURCE_CLAIMS, APIResource, RawObject
from kubesched.framework.handle import StaticClusterLister
from kubesched.objects.dra.claims import ResourceClaim, ResourceClaimTemplate
from kubesched.objects.dra.podclaims import claim_from_template
from kubesched.objects.pod import Pod
from kubesched.objects.workloadpods import Names
from kubesched.sim.files import ClusterObjects
from kubesched.sim.simulator import Simulator

__all__ = [
    "attach_claims",
    "dra_objects",
    "keep_claims_listed",
    "make_template_claims",
    "template_claims",
]

Templates = Mapping[tuple[str, str], ResourceClaimTemplate]


def make_template_claims(cluster: ClusterObjects, pods: Sequence[Pod], names: Names) -> list[Pod]:
    """Create, as the resource-claim controller would, the claims of ``pods`` made from
    templates (adding them to ``cluster``; claims without a uid get one); the pods with their
    ``status.resourceClaimStatuses`` filled in. An entry whose template does not exist
    gets no claim (the pod then waits, as it would in a cluster)."""
    # Claims read from files get the uid the API server would have given them.
    for i, raw in enumerate(cluster.resource_claims_raw):
        meta = raw.setdefault("metadata", {})
        if not meta.get("uid"):
            meta["uid"] = names.uid()
            cluster.resource_claims[i] = ResourceClaim.from_dict(raw)
    templates = {(t.namespace, t.name): t for t in cluster.resource_claim_templates}
    out = []
    for pod in pods:
        pod, made = template_claims(pod, templates, names)
        for raw in made:
            cluster.resource_claims_raw.append(raw)
            cluster.resource_claims.append(ResourceClaim.from_dict(raw))
        out.append(pod)
    return out


def template_claims(pod: Pod, templates: Templates, names: Names) -> tuple[Pod, list[RawObject]]:
    """The claims the resource-claim controller would create for ``pod``'s entries that
    name a template in ``templates`` (by namespace and name) and have no claim yet in its
    ``status.resourceClaimStatuses``, named from ``names``; and the pod with those
    entries filled in."""
    statuses = dict(pod.resource_claim_statuses)
    made = []
    for entry in pod.resource_claims:
        name = entry.resource_claim_template_name
        if name is None or entry.name in statuses:
            continue
        template: ResourceClaimTemplate | None = templates.get((pod.namespace, name))
        if template is None:
            continue
        raw = claim_from_template(pod, entry.name, template)
        meta = raw["metadata"]
        meta["name"] = names.generate(meta["generateName"])
        meta["uid"] = names.uid()
        made.append(raw)
        statuses[entry.name] = meta["name"]
    if statuses != dict(pod.resource_claim_statuses):
        pod = pod.evolve(resource_claim_statuses=statuses)
    return pod, made


def dra_objects(cluster: ClusterObjects) -> list[Any]:
    """The resource.k8s.io objects a cluster lister holds."""
    return [*cluster.device_classes, *cluster.resource_slices, *cluster.resource_claims]


def attach_claims(sim: Simulator, cluster: ClusterObjects) -> None:
    """Put the cluster's claims in the simulator's API store and keep its lister's claims
    in step with every write to them."""
    keep_claims_listed(sim)
    for raw in cluster.resource_claims_raw:
        sim.api.add(RESOURCE_CLAIMS, raw)


def keep_claims_listed(sim: Simulator) -> None:
    """Copy every write to a claim in the simulator's API store to its cluster lister,
    as the informer would."""
    lister = sim.cluster

    def changed(resource: APIResource, old: RawObject | None, new: RawObject | None) -> None:
        if resource != RESOURCE_CLAIMS or not isinstance(lister, StaticClusterLister):
            return
        if new is not None:
            lister.put_dra(ResourceClaim.from_dict(new))
        elif old is not None:
            lister.delete_dra(ResourceClaim.from_dict(old))

    sim.api.on_change(changed)
