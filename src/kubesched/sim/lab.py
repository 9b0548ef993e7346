"""The policy lab's commands as functions: ``simulate`` and ``explain``.

Both read a cluster (and pods) from files, resolve priorities as admission would, build
the configured profiles, and return plain data that ``report`` prints as a table, JSON
or YAML. The JSON shapes are contracts that scripts depend on.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import NoClient, Nominator, StaticClusterLister
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import FitError, SchedulingAlgorithm, SchedulingError
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import Pod
from kubesched.objects.priority import PriorityResolver
from kubesched.objects.workloadpods import Names
from kubesched.sim import document, gangreport
from kubesched.sim.dra import attach_claims, dra_objects, make_template_claims
from kubesched.sim.expand import expand_manifests
from kubesched.sim.files import ClusterObjects, InputError, load_objects
from kubesched.sim.simulator import Placement, Simulator, refuse_extenders


def load_cluster(
    cluster_file: Path, *pod_files: Path, seed: int | None = None
) -> tuple[ClusterObjects, list[Pod]]:
    """The cluster, and the pods to schedule: the pod files' pods, after the cluster
    file's own pods that are not bound yet. Workloads in any file become the pods their
    controllers would create first (:mod:`kubesched.sim.expand`; generated names and uids
    from ``seed``). Priorities are resolved. What the user should know but is no error
    (skipped kinds, workloads that make no pods) is in the cluster's ``warnings``."""
    names = Names(random.Random(seed))
    # Every file is read before any problem is reported, so that one run shows them all.
    problems: list[str] = []
    loaded: list[ClusterObjects] = []
    for path in (cluster_file, *pod_files):
        try:
            loaded.append(load_objects(path, names=names))
        except InputError as err:
            problems.extend(err.problems)
    if problems:
        raise InputError(*problems)
    cluster, *extras = loaded
    for path, extra in zip(pod_files, extras, strict=True):
        if extra.nodes:
            raise InputError(f"{path}: a pods file holds pods and workloads only, found a Node")
    expand_manifests(loaded, cluster.nodes, names)
    pending = [p for p in cluster.pods if not p.node_name]
    cluster.pods = [p for p in cluster.pods if p.node_name]
    for extra in extras:
        pending.extend(extra.pods)
        cluster.pdbs.extend(extra.pdbs)
        cluster.priority_classes.extend(extra.priority_classes)
        cluster.workloads.extend(extra.workloads)
        cluster.storage.extend(extra.storage)
        cluster.storage_raw.extend(extra.storage_raw)
        cluster.device_classes.extend(extra.device_classes)
        cluster.resource_slices.extend(extra.resource_slices)
        cluster.resource_claims.extend(extra.resource_claims)
        cluster.resource_claims_raw.extend(extra.resource_claims_raw)
        cluster.resource_claim_templates.extend(extra.resource_claim_templates)
        cluster.pod_groups.extend(extra.pod_groups)
        cluster.elastic_quotas.extend(extra.elastic_quotas)
        cluster.owners.update(extra.owners)
        cluster.warnings.extend(extra.warnings)
    # Errors found after the files were read still name the file the pod came from.
    source = {
        p.key: path
        for path, objs in zip((cluster_file, *pod_files), loaded, strict=True)
        for p in objs.pods
    }
    known = {p.key for p in cluster.pods}
    for pod in pending:
        if pod.key in known:
            raise InputError(
                f'{source.get(pod.key, cluster_file)}: Pod "{pod.key}": Duplicate value: '
                "the pod is in the cluster already"
            )
        known.add(pod.key)
    resolver = PriorityResolver(cluster.priority_classes)
    cluster.pods, problems = _resolved(resolver, cluster.pods, source, cluster_file)
    pending, more = _resolved(resolver, pending, source, cluster_file)
    if problems or more:
        raise InputError(*problems, *more)
    # The claims the resource-claim controller would make for pods from templates.
    pending = make_template_claims(cluster, pending, names)
    return cluster, pending


def _resolved(
    resolver: PriorityResolver, pods: list[Pod], source: dict[str, Path], default: Path
) -> tuple[list[Pod], list[str]]:
    """The pods with their priorities, and a problem per pod naming a missing class."""
    resolved: list[Pod] = []
    problems: list[str] = []
    for pod in pods:
        try:
            resolved.append(resolver.resolve(pod))
        except ObjectError as err:
            problems.append(f"{source.get(pod.key, default)}: {err}")
    return resolved, problems


def cluster_lister(cluster: ClusterObjects) -> StaticClusterLister:
    """What plugins list beyond nodes and pods: PDBs, namespaces, workloads, storage,
    the resource.k8s.io objects, PodGroups and ElasticQuotas."""
    return StaticClusterLister(
        cluster.pdbs,
        cluster.namespaces,
        cluster.workloads,
        cluster.storage,
        dra_objects(cluster),
        cluster.pod_groups,
        cluster.elastic_quotas,
    )


@dataclasses.dataclass
class SimulationResult:
    """What ``simulate`` returns: placements in the order scheduling ended, and totals."""

    placements: list[Placement]
    simulator: Simulator
    #: The controller of each pod that has one: pod key to (kind, name, uid).
    owners: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    #: ``explain`` objects of the pods named by ``explain_pods``, each evaluated in the
    #: cluster as its last attempt saw it, in the order the pods were named.
    explained: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    #: The nodes in the cluster file's order (reports list them so).
    node_order: list[str] = dataclasses.field(default_factory=list)


def simulate(
    cluster: ClusterObjects,
    pending: Sequence[Pod],
    config: KubeSchedulerConfiguration,
    registry: Registry,
    seed: int | None = None,
    *,
    columnar: bool = True,
    tie_break: str = "random",
    explain_pods: Sequence[str] = (),
    observe: Callable[[Pod, float], None] | None = None,
) -> SimulationResult:
    """Schedule ``pending`` onto ``cluster``; pods that name a node are bound as given.

    ``explain_pods`` (pod keys ``namespace/name``, or names in ``default``) are explained
    before each of their attempts, in the cluster as that attempt sees it. Raises
    InputError naming a pod that is not among ``pending``. ``observe(pod, seconds)`` is
    called after every attempt (a progress bar).
    """
    bound_now = [p for p in pending if p.node_name]
    sim = Simulator(
        cluster.nodes,
        [*cluster.pods, *bound_now],
        config,
        registry,
        cluster=cluster_lister(cluster),
        seed=seed,
        columnar=columnar,
        tie_break=tie_break,
        storage=cluster.storage_raw,
    )
    attach_claims(sim, cluster)
    wanted = _explained_keys(explain_pods, [p for p in pending if not p.node_name])
    explained: dict[str, dict[str, Any]] = {}
    if wanted:

        def before_attempt(pod: Pod) -> None:
            if pod.key in wanted:
                explained[pod.key] = _explain_in(
                    sim.snapshot(),
                    # The simulation's storage objects, as earlier pods left them.
                    sim.cluster,
                    cluster.owners,
                    pod,
                    config,
                    registry,
                    seed,
                    sim.nominator,
                    [n.name for n in cluster.nodes],
                )

        sim.before_attempt = before_attempt
    placements = [Placement(p, p.node_name, None) for p in bound_now]
    placements += sim.run([p for p in pending if not p.node_name], observe)
    # The attempt itself chose among tied nodes: report its choice and outcome.
    ended = {p.pod.key: p for p in placements}
    for key, data in explained.items():
        data["node"], data["message"] = ended[key].node, ended[key].message
    return SimulationResult(
        placements,
        sim,
        dict(cluster.owners),
        [explained[k] for k in wanted if k in explained],
        [n.name for n in cluster.nodes],
    )


#: At most this many pods per run are explained: each adds every node's scores.
MAX_EXPLAINED = 10


def _explained_keys(names: Sequence[str], pending: Sequence[Pod]) -> list[str]:
    if len(names) > MAX_EXPLAINED:
        raise InputError(
            f"--explain: at most {MAX_EXPLAINED} pods (each adds every node's scores to the "
            f"report), got {len(names)}"
        )
    keys = {p.key for p in pending}
    out = []
    for name in names:
        key = name if "/" in name else f"default/{name}"
        if key not in keys:
            raise InputError(f"--explain {name}: no pod {key} among the pods to schedule")
        if key not in out:
            out.append(key)
    return out


def simulation_json(result: SimulationResult) -> dict[str, Any]:
    """The ``simulate --output json`` object (a stable contract)."""
    placements = [
        {
            "pod": p.pod.key,
            "owner": _owner(result.owners.get(p.pod.key)),
            "node": p.node,
            "message": p.message,
            "preempted": list(p.preempted),
        }
        for p in result.placements
    ]
    scheduled = sum(1 for p in result.placements if p.node is not None)
    nodes = []
    for info in result.simulator.snapshot().list():
        alloc = info.allocatable
        nodes.append(
            {
                "name": info.name,
                "pods": len(info.pods),
                "cpu": {"requested": info.requested.milli_cpu, "allocatable": alloc.milli_cpu},
                "memory": {"requested": info.requested.memory, "allocatable": alloc.memory},
                "allowedPods": alloc.allowed_pod_number,
            }
        )
    return {
        "placements": placements,
        "summary": {
            "pods": len(result.placements),
            "scheduled": scheduled,
            "unschedulable": len(result.placements) - scheduled,
            "preempted": sum(len(p.preempted) for p in result.placements),
            "nodes": nodes,
        },
    }


def _owner(owner: tuple[str, str, str] | None) -> str | None:
    return f"{owner[0]}/{owner[1]}" if owner else None


def explain(
    cluster: ClusterObjects,
    pod: Pod,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    seed: int | None = None,
) -> dict[str, Any]:
    """Evaluate ``pod`` against every node; the ``explain --output json`` object.
    Raises ConfigError when ``config`` lists extenders (see ``refuse_extenders``)."""
    refuse_extenders(config)
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    return _explain_in(
        snapshot,
        cluster_lister(cluster),
        cluster.owners,
        pod,
        config,
        registry,
        seed,
        Nominator(),
        [n.name for n in cluster.nodes],
    )


def _explain_in(
    snapshot: Snapshot,
    lister: StaticClusterLister,
    owners: dict[str, tuple[str, str, str]],
    pod: Pod,
    config: KubeSchedulerConfiguration,
    registry: Registry,
    seed: int | None,
    nominator: Nominator,
    order: Sequence[str],
) -> dict[str, Any]:
    """Evaluate ``pod`` against every node of ``snapshot`` with its profile; nodes are
    listed in ``order`` (the cluster file's)."""
    profile = next(
        (p for p in config.profiles if p.scheduler_name == pod.scheduler_name),
        config.profiles[0],
    )
    fwk = Framework(
        profile,
        registry,
        cluster=lister,
        client=_DryRunClient(),
        nominator=nominator,
        snapshot=snapshot,
        rng=random.Random(seed),
    )
    algo = SchedulingAlgorithm(fwk)
    state = CycleState()
    chosen: str | None = None
    message: str | None = None
    scores: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    try:
        result = algo.schedule_pod(state, pod, explain=True)
        chosen = result.suggested_host
        diagnosis = result.diagnosis
        scores, totals = result.plugin_scores, result.totals
    except FitError as fit:
        diagnosis = fit.diagnosis
        if fwk.has_post_filter_plugins():
            _, status = fwk.run_post_filter_plugins(state, pod, diagnosis.node_to_status)
            diagnosis.post_filter_msg = status.message if status is not None else ""
        message = str(fit)
    except SchedulingError as err:
        message = err.status.message
        diagnosis = None
    nodes = []
    detailed = {p.name: p for p in fwk.plugins_at("filter") if hasattr(p, "explain_detail")}
    for info in document.ordered(snapshot, order):
        name = info.name
        feasible = name in totals or name == chosen
        status = None
        if not feasible and diagnosis is not None:
            status = diagnosis.node_to_status.get(name)
        node: dict[str, Any] = {
            "name": name,
            "feasible": feasible,
            "rejectedBy": (status.plugin or None) if status is not None else None,
            "reason": (status.message or None) if status is not None else None,
            "scores": {
                plugin: per_node[name] for plugin, per_node in scores.items() if name in per_node
            },
            "score": totals.get(name) if feasible else None,
        }
        # A plugin may say more than its reason: DynamicResources names the request a
        # node could not satisfy and why.
        explainer = detailed.get(status.plugin) if status is not None else None
        if explainer is not None:
            detail = explainer.explain_detail(state, name)
            if detail:
                node["detail"] = detail
        nodes.append(node)
    out: dict[str, Any] = {
        "pod": pod.key,
        "owner": _owner(owners.get(pod.key)),
        "node": chosen,
        "message": message,
        "profile": profile.scheduler_name,
        "weights": {plugin: fwk.score_weights.get(plugin, 1) for plugin in scores},
        "nodes": nodes,
    }
    group = _pod_group(fwk, snapshot, pod)
    if group is not None:
        out["podGroup"] = group
    return out


def _pod_group(fwk: Framework, snapshot: Snapshot, pod: Pod) -> dict[str, Any] | None:
    """The gang ``pod`` belongs to in its profile, with its members already placed in
    the cluster: explain evaluates one pod, while the scheduler places a gang's quorum
    in one cycle, so the reader must know which of the two the verdicts are."""
    group = fwk.pod_group(pod)
    if group is None:
        return None
    placed = sum(
        1
        for info in snapshot.list()
        for pinfo in info.pods
        if pinfo.pod.key != pod.key and (g := fwk.pod_group(pinfo.pod)) and g.key == group.key
    )
    missing = group.min_member - placed
    if missing <= 0:
        note = "its quorum is placed, so it is scheduled as an ordinary pod"
    else:
        note = (
            f"it is placed only in one cycle together with {missing - 1} more member(s) "
            "(kubesched simulate places the whole group); the verdicts below are for this "
            "member alone"
        )
    return {
        "key": group.key,
        "minMember": group.min_member,
        "placed": placed,
        "note": f"pod group {group.key} (minMember {group.min_member}, {placed} placed): " + note,
    }


class _DryRunClient(NoClient):
    """Explain never changes the cluster: the default plugins' writes are accepted and
    dropped; API calls (PreBind's, which explain does not run) are refused."""

    def bind(self, pod: Pod, node_name: str) -> None:
        return None

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        return None

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        return None


def simulation_document(
    result: SimulationResult, seed: int | None, inputs: dict[str, Any]
) -> dict[str, Any]:
    """The ``simulate`` report document: ``simulation_json``'s fields (unchanged) and the
    views of the report: node usage, spread per workload, pending pods by reason, KPIs,
    the explained pods, and the gangs and quotas (:mod:`kubesched.sim.gangreport`)."""
    snapshot = result.simulator.snapshot()
    order = result.node_order
    usage = document.node_usage(snapshot, order)
    pending = [(p.pod.key, p.message, p.statuses) for p in result.placements if p.node is None]
    return {
        **document.header(document.SIMULATION, "simulate", seed, inputs),
        **simulation_json(result),
        "profiles": sorted(result.simulator.frameworks),
        "kpis": document.kpis([(p.pod.key, p.node) for p in result.placements], usage),
        "nodeUsage": usage,
        "spread": document.spread(snapshot, result.owners, order),
        "pending": document.pending_section(pending, [n["name"] for n in usage]),
        "explained": result.explained,
        "gangs": gangreport.gangs(
            result.simulator.cluster.pod_groups(),
            snapshot,
            [p.pod for p in result.placements if p.node is None],
        ),
        "quotas": gangreport.quotas(result.simulator.cluster.elastic_quotas(), snapshot),
    }


def explain_document(
    data: dict[str, Any], cluster: ClusterObjects, seed: int | None, inputs: dict[str, Any]
) -> dict[str, Any]:
    """The ``explain`` report document: ``explain``'s fields (unchanged) and the cluster's
    node usage before the pod."""
    snapshot = Snapshot.from_objects(cluster.nodes, cluster.pods)
    order = [n.name for n in cluster.nodes]
    return {
        **document.header(document.EXPLANATION, "explain", seed, inputs),
        **data,
        "nodeUsage": document.node_usage(snapshot, order),
        "spread": document.spread(snapshot, cluster.owners, order),
    }
