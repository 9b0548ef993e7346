"""``compare``: the same cluster and pods scheduled under two configurations.

Both runs use the simulator's per-pod tie-break (``--tie-break per-pod``): a pod that
faces the same tied nodes under both configurations picks the same one, so a difference
in placement is the policy's, not the dice's. When a pod still lands elsewhere and the
other run's node had tied for the best score in one of the runs, the delta is marked
``tieOnly``: the configurations did not prefer one node over the other, the tied sets
merely differed (earlier pods had changed the cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.config import KubeSchedulerConfiguration
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.objects.pod import Pod
from kubesched.sim import document
from kubesched.sim.files import ClusterObjects
from kubesched.sim.lab import SimulationResult, simulate, simulation_document

#: The labels of the two runs, in the order the configurations were given.
LABELS = ("A", "B")


def compare(
    cluster: ClusterObjects,
    pending: Sequence[Pod],
    configs: Sequence[tuple[str | None, KubeSchedulerConfiguration]],
    registry: Registry,
    seed: int | None,
    inputs: Mapping[str, Any],
    *,
    explain_pods: Sequence[str] = (),
    observe: Callable[[Pod, float], None] | None = None,
) -> dict[str, Any]:
    """The ``ComparisonReport`` document of two runs (``configs``: path and config);
    ``observe`` is called after every attempt of either run."""
    if len(configs) != 2:
        raise ValueError(f"compare needs two configurations, got {len(configs)}")
    results: list[SimulationResult] = []
    runs = []
    for label, (path, config) in zip(LABELS, configs, strict=True):
        result = simulate(
            cluster,
            pending,
            config,
            registry,
            seed=seed,
            tie_break="per-pod",
            explain_pods=explain_pods,
            observe=observe,
        )
        results.append(result)
        run = simulation_document(result, seed, {"config": path})
        for key in ("apiVersion", "kind", "metadata"):
            del run[key]
        runs.append({"label": label, "config": path, **run})
    a, b = runs
    return {
        **document.header(document.COMPARISON, "compare", seed, inputs),
        "configs": [
            {"label": label, "path": path, "profiles": profile_summary(config, registry)}
            for label, (path, config) in zip(LABELS, configs, strict=True)
        ],
        "kpis": kpi_deltas(a["kpis"], b["kpis"]),
        "placementDeltas": placement_deltas(*results),
        "nodeDeltas": node_deltas(a["nodeUsage"], b["nodeUsage"]),
        "profileDiff": profile_diff(
            profile_summary(configs[0][1], registry), profile_summary(configs[1][1], registry)
        ),
        "runs": runs,
    }


def kpi_deltas(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each KPI of ``document.kpis`` as ``{name, a, b, delta}`` (delta = b - a)."""
    out = []
    for name, value in a.items():
        if isinstance(value, dict):
            for stat, figure in value.items():
                other = b[name][stat]
                out.append(
                    {
                        "name": f"{name}.{stat}",
                        "a": figure,
                        "b": other,
                        "delta": round(other - figure, 4),
                    }
                )
        else:
            out.append({"name": name, "a": value, "b": b[name], "delta": b[name] - value})
    return out


def placement_deltas(a: SimulationResult, b: SimulationResult) -> list[dict[str, Any]]:
    """Every pod whose node differs between the runs, in run A's order, each marked
    ``tieOnly`` when the other run's node tied for the best score in either run."""
    placed_b = {p.pod.key: p for p in b.placements}
    out = []
    for pa in a.placements:
        pb = placed_b.get(pa.pod.key)
        if pb is None or pa.node == pb.node:
            continue
        tie_only = (
            pa.node is not None
            and pb.node is not None
            and (pb.node in pa.tied or pa.node in pb.tied)
        )
        out.append({"pod": pa.pod.key, "nodeA": pa.node, "nodeB": pb.node, "tieOnly": tie_only})
    return out


def node_deltas(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Per node: pods, cpu (millicores) and memory (bytes) requested in each run, and B - A."""
    by_name = {n["name"]: n for n in b}
    out = []
    for na in a:
        nb = by_name[na["name"]]
        fa, fb = _figures(na), _figures(nb)
        out.append(
            {
                "node": na["name"],
                "zone": na["zone"],
                "a": fa,
                "b": fb,
                "delta": {k: fb[k] - fa[k] for k in fa},
            }
        )
    return out


def _figures(node: Mapping[str, Any]) -> dict[str, int]:
    r = node["resources"]
    return {
        "pods": r["pods"]["requested"],
        "cpu": r["cpu"]["requested"],
        "memory": r["memory"]["requested"],
    }


def profile_summary(
    config: KubeSchedulerConfiguration, registry: Registry
) -> dict[str, dict[str, Any]]:
    """What each profile runs, as the framework built it: the plugins at each extension
    point (in order where order matters), the score weights, percentageOfNodesToScore
    and the plugin args as configured (args a plugin defaults itself are not listed)."""
    out: dict[str, dict[str, Any]] = {}
    for profile in config.profiles:
        fwk = Framework(profile, registry)
        pct = profile.percentage_of_nodes_to_score
        out[profile.scheduler_name] = {
            "percentageOfNodesToScore": pct
            if pct is not None
            else config.percentage_of_nodes_to_score,
            "plugins": {
                point: _names(point, plugins) for point, plugins in fwk.points.items() if plugins
            },
            "weights": dict(fwk.score_weights),
            "pluginConfig": {pc.name: _plain(pc.args) for pc in profile.plugin_config},
        }
    return out


#: Extension points whose plugins all run and whose order changes no outcome.
_UNORDERED = frozenset({"preScore", "score"})


def _names(point: str, plugins: Sequence[Any]) -> list[str]:
    names = [p.name for p in plugins]
    return sorted(names) if point in _UNORDERED else names


def profile_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every leaf that differs between two profile summaries: ``{path, a, b}``, with None
    on the side that lacks it (lists compare whole: the order of plugins matters)."""
    flat_a, flat_b = _flatten(a, ""), _flatten(b, "")
    return [
        {"path": path, "a": flat_a.get(path), "b": flat_b.get(path)}
        for path in sorted(flat_a.keys() | flat_b.keys())
        if flat_a.get(path) != flat_b.get(path)
    ]


def _flatten(value: Any, path: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{path}.{key}" if path else str(key)))
        return out
    return {path: value}


def _plain(value: Any) -> Any:
    """Configured args as JSON data (mappings and sequences of the decoded file)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
