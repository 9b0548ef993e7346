"""``kubesched capacity``: how many more pods of each shape fit, on a cluster file or a
live cluster copied through ``export``'s path (the engine is :mod:`kubesched.sim.capacity`)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from kubesched.kube import KubeError
from kubesched.objects.pod import Pod
from kubesched.objects.podtemplate import controller_of
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import report
from kubesched.sim.capacity import capacity
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import load_cluster


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``capacity`` on the ``kubesched`` parser."""
    cap = sub.add_parser(
        "capacity", help="how many more instances of a pod shape the cluster can schedule"
    )
    source = cap.add_mutually_exclusive_group(required=True)
    source.add_argument("--cluster", help="Nodes, bound pods, PDBs, ... (YAML/JSON)")
    source.add_argument(
        "--kubeconfig", help="copy this live cluster first, as kubesched export does"
    )
    cap.add_argument("--context", help="with --kubeconfig: the context to use")
    cap.add_argument(
        "--pod",
        action="append",
        required=True,
        metavar="SHAPE.yaml",
        help="a pod (or a workload: its first pod) to count; repeatable, mixed in this order",
    )
    cap.add_argument("--max", type=int, default=None, metavar="N", help="stop counting at N")
    cap.add_argument("--config", help="KubeSchedulerConfiguration file (default profile)")
    cap.add_argument("--seed", type=int, default=None, help="seed for the per-pod tie-break")
    cap.add_argument("--output", "-o", choices=("table", "json"), default="table")
    cap.add_argument("--report", metavar="FILE.html", help="also write the HTML report")
    cap.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Count each shape, then the mix, and print the answer."""
    from kubesched.cli import UserError

    if args.max is not None and args.max < 0:
        raise UserError(f"--max: Invalid value: {args.max}: must be 0 or more")
    if args.kubeconfig is None:
        return _count(args, Path(args.cluster), args.cluster)
    with tempfile.TemporaryDirectory(prefix="kubesched-capacity-") as folder:
        from kubesched.cli.export import export_to_file

        copied = Path(folder) / "cluster.yaml"
        try:
            export_to_file(args.kubeconfig, copied, context=args.context)
        except KubeError as err:
            raise UserError(f"--kubeconfig {args.kubeconfig}: {err}") from None
        return _count(args, copied, f"kubeconfig:{args.kubeconfig}")


def _count(args: argparse.Namespace, cluster_file: Path, source: str) -> int:
    from kubesched.cli import UserError, emit, load_profiles_config, warn, write_report

    registry = in_tree_registry()
    config = load_profiles_config(args.config, registry)
    cluster, base = load_cluster(cluster_file, seed=args.seed)
    warn(cluster.warnings)
    if base:
        warn([f"{source}: {len(base)} pod(s) not bound to a node are left out of the count"])
    shapes: list[tuple[str, Pod]] = []
    for path in args.pod:
        loaded, pods = load_cluster(cluster_file, Path(path), seed=args.seed)
        mine = pods[len(base) :]
        if not mine:
            raise UserError(f"--pod {path}: no pod or workload that makes pods")
        # A workload's name stands for its pods (``web``, not ``web-7d9f-x2x4q``).
        name = _shape_name(mine[0], loaded.owners.get(mine[0].key))
        if len(mine) > 1:
            warn([f"--pod {path}: {len(mine)} pods; counting the shape of the first"])
        if any(name == other for other, _ in shapes):
            raise UserError(f"--pod {path}: a shape named {name} is given already")
        shapes.append((name, mine[0]))
        _add_claim_sources(cluster, loaded)
    inputs = {"cluster": source, "pods": list(args.pod), "config": args.config}
    data = capacity(
        cluster,
        shapes,
        config,
        registry,
        args.seed,
        inputs,
        max_count=args.max,
        progress=None,
    )
    emit(args.output, data, lambda: report.capacity_table(data))
    write_report(args.report, data)
    return 0


def _add_claim_sources(cluster: ClusterObjects, loaded: ClusterObjects) -> None:
    """The ResourceClaimTemplates and ResourceClaims a ``--pod`` file brings, added to
    the cluster the copies are counted on (the claims made for the file's own pods from
    templates are left out: each copy gets its own)."""
    templates = {(t.namespace, t.name) for t in cluster.resource_claim_templates}
    for template in loaded.resource_claim_templates:
        if (template.namespace, template.name) not in templates:
            templates.add((template.namespace, template.name))
            cluster.resource_claim_templates.append(template)
    claims = {(c.namespace, c.name) for c in cluster.resource_claims}
    for claim, raw in zip(loaded.resource_claims, loaded.resource_claims_raw, strict=True):
        owner = controller_of(raw)
        if (claim.namespace, claim.name) in claims or (owner and owner.get("kind") == "Pod"):
            continue
        claims.add((claim.namespace, claim.name))
        cluster.resource_claims.append(claim)
        cluster.resource_claims_raw.append(raw)


def _shape_name(pod: Pod, owner: tuple[str, str, str] | None) -> str:
    """A workload's name stands for its pods: ``web`` for a Deployment's pod (its
    ReplicaSet ``web-<pod-template-hash>``), a StatefulSet's or Job's own name."""
    if owner is None:
        return pod.name
    kind, name, _ = owner
    template_hash = pod.labels.get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return name[: -len(template_hash) - 1]
    return name
