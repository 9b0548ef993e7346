"""``capacity``: how many more pods of a shape fit, as kubernetes-sigs/cluster-capacity
answers it, with the reason each node stopped.

Copies of the shape are scheduled one by one onto the cluster (the same simulator and
profiles as ``simulate``) until one does not fit or ``max`` is reached. The first copy
that fails carries the answer to "why not more": its FailedScheduling message, and each
node's verdict in the scheduler's words (``Insufficient cpu``, ``Too many pods``, a
taint), which is the node's limiting reason. With several shapes, each is counted alone
on the cluster as it is, then a mix is placed round-robin in the order given (a shape
that no longer fits drops out; the others go on) until none fits.

Each copy is a pod of its own: a ``spec.resourceClaims`` entry that names a
ResourceClaimTemplate gets a claim of its own, made as the resource-claim controller
would (as ``simulate`` does), so devices allocated to one copy are gone for the next; an
entry naming a ResourceClaim shares that claim, as every copy of a real pod would.

Deviation from cluster-capacity: the copies never preempt (``preemptionPolicy: Never``):
the question is how much room is free, not what the shape could take from others.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework.apiclient import RESOURCE_CLAIMS
from kubesched.framework.registry import Registry
from kubesched.framework.types import NodeToStatus
from kubesched.objects.pod import Pod
from kubesched.objects.resources import Resource
from kubesched.objects.workloadpods import Names
from kubesched.sim import document
from kubesched.sim.dra import attach_claims, template_claims
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import cluster_lister
from kubesched.sim.simulator import Simulator

#: The pods' preemptionPolicy: counting free room must not evict anyone.
NEVER = "Never"

#: Called after every copy placed: (shape name, copies placed so far in this count).
Progress = Callable[[str, int], None]


def sentence(count: int, name: str) -> str:
    """cluster-capacity's summary line, word for word."""
    return f"The cluster can schedule {count} instance(s) of the pod {name}."


class _Count:
    """One counting run: a fresh simulator on the cluster as given."""

    def __init__(
        self,
        cluster: ClusterObjects,
        config: KubeSchedulerConfiguration,
        registry: Registry,
        seed: int | None,
    ) -> None:
        self.sim = Simulator(
            cluster.nodes,
            cluster.pods,
            config,
            registry,
            cluster=cluster_lister(cluster),
            seed=seed,
            tie_break="per-pod",
        )
        # The claims of the files, where DynamicResources' PreBind writes allocations.
        attach_claims(self.sim, cluster)
        self.templates = {(t.namespace, t.name): t for t in cluster.resource_claim_templates}
        self.names = Names(random.Random(seed))
        self.per_node: dict[str, dict[str, int]] = {}
        self.failure: dict[str, tuple[str, NodeToStatus | None]] = {}

    def place(self, shape: Pod, name: str, index: int) -> bool:
        """Schedule copy ``index`` of ``shape``; False (and the reasons kept) if it fails."""
        # A copy's claims from templates are its own, not the shape's.
        from_templates = {e.name for e in shape.resource_claims if e.resource_claim_template_name}
        copy = shape.evolve(
            name=f"{shape.name}-capacity-{index}",
            uid=f"capacity-{name}-{index}",
            preemption_policy=NEVER,
            resource_claim_statuses={
                entry: claim
                for entry, claim in shape.resource_claim_statuses.items()
                if entry not in from_templates
            },
        )
        copy, claims = template_claims(copy, self.templates, self.names)
        for raw in claims:
            self.sim.api.add(RESOURCE_CLAIMS, raw)
        (placement,) = self.sim.run([copy])
        if placement.node is None:
            self.failure[name] = (placement.message or "unschedulable", placement.statuses)
            return False
        counts = self.per_node.setdefault(placement.node, {})
        counts[name] = counts.get(name, 0) + 1
        return True


def _limit(node: str, failure: tuple[str, NodeToStatus | None] | None, capped: bool) -> str:
    if failure is None:
        return "not limited: stopped at --max" if capped else "-"
    message, statuses = failure
    if statuses is None:
        return message
    verdict = statuses.get(node).message
    return verdict or "rejected"


def capacity(
    cluster: ClusterObjects,
    shapes: Sequence[tuple[str, Pod]],
    config: KubeSchedulerConfiguration,
    registry: Registry,
    seed: int | None,
    inputs: dict[str, Any],
    *,
    max_count: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The ``CapacityReport`` document: each shape alone, then (for several) the mix."""
    order = [n.name for n in cluster.nodes]
    results = []
    for name, pod in shapes:
        count = _Count(cluster, config, registry, seed)
        placed = 0
        while max_count is None or placed < max_count:
            if not count.place(pod, name, placed):
                break
            placed += 1
            if progress is not None:
                progress(name, placed)
        failure = count.failure.get(name)
        capped = failure is None
        results.append(
            {
                "name": name,
                "pod": pod.key,
                "requests": _requests(pod),
                "count": placed,
                "sentence": sentence(placed, name),
                "stopReason": failure[0] if failure else f"reached --max {max_count}",
                "perNode": [
                    {
                        "node": node,
                        "count": count.per_node.get(node, {}).get(name, 0),
                        "limit": _limit(node, failure, capped),
                    }
                    for node in order
                ],
            }
        )
    mix = _mix(cluster, shapes, config, registry, seed, max_count, order, progress)
    snapshot = Simulator(cluster.nodes, cluster.pods, config, registry).snapshot()
    return {
        **document.header(document.CAPACITY, "capacity", seed, inputs),
        "max": max_count,
        "shapes": results,
        "mix": mix,
        "nodeUsage": document.node_usage(snapshot, order),
    }


def _mix(
    cluster: ClusterObjects,
    shapes: Sequence[tuple[str, Pod]],
    config: KubeSchedulerConfiguration,
    registry: Registry,
    seed: int | None,
    max_count: int | None,
    order: Sequence[str],
    progress: Progress | None,
) -> dict[str, Any] | None:
    """Round-robin over the shapes in the order given; a shape that fails drops out."""
    if len(shapes) < 2:
        return None
    count = _Count(cluster, config, registry, seed)
    active = list(shapes)
    per_shape = {name: 0 for name, _ in shapes}
    total = 0
    turn = 0
    while active and (max_count is None or total < max_count):
        name, pod = active[turn % len(active)]
        if count.place(pod, name, per_shape[name]):
            per_shape[name] += 1
            total += 1
            turn += 1
            if progress is not None:
                progress("mix", total)
        else:
            active.remove((name, pod))  # the next shape takes this turn
    capped = bool(active)
    names = [name for name, _ in shapes]
    return {
        "order": names,
        "count": total,
        "perShape": per_shape,
        "stopReason": f"reached --max {max_count}"
        if capped
        else "; ".join(f"{name}: {count.failure[name][0]}" for name in names),
        "perNode": [
            {
                "node": node,
                "counts": {name: count.per_node.get(node, {}).get(name, 0) for name in names},
                "limit": "; ".join(
                    f"{name}: {_limit(node, count.failure.get(name), capped)}" for name in names
                ),
            }
            for node in order
        ],
    }


def _requests(pod: Pod) -> dict[str, int]:
    """What one copy requests (cpu in millicores), as the scheduler computes it."""
    total: Resource = pod.requests
    out = {"cpu": total.milli_cpu, "memory": total.memory}
    if total.ephemeral_storage:
        out["ephemeral-storage"] = total.ephemeral_storage
    out.update(sorted(total.scalar.items()))
    return out
