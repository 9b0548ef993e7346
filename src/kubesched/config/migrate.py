"""``kubesched config migrate``: a removed Policy (and the old configuration that named
it) as the equivalent ``kubescheduler.config.k8s.io/v1`` configuration.

The mapping follows kube-scheduler's legacy registry (``pkg/scheduler/framework/plugins/
legacy_registry.go`` up to v1.22), which turned each predicate and priority into plugins:
PodFitsResources → NodeResourcesFit, LeastRequestedPriority → NodeResourcesFit scored
LeastAllocated, SelectorSpreadPriority → PodTopologySpread with system default
constraints, and so on. Its rules are kept: predicates left out (``null``) mean the
legacy default predicates, priorities left out the default priorities; the
PodToleratesNodeTaints and CheckNodeUnschedulable predicates are always on; a plugin
named twice keeps the highest weight.

Where the v1 profile differs from a Policy on purpose, the output says so rather than
guessing: the plugins are enabled through ``multiPoint`` (so each runs at exactly the
extension points it implements in the kube-scheduler that loads the file), with the
filter side or the score side disabled where the Policy asked for only one; the queue
sort, preemption and binding plugins a Policy could not name are enabled as the legacy
scheduler did, and SchedulingGates, without which gated pods would be scheduled. What
has no v1 equivalent is listed in ``notes``, one line each naming the item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.config.errors import ConfigError, FieldError
from kubesched.config.policy import Policy, PredicatePolicy, PriorityPolicy, load_policy
from kubesched.config.types import API_VERSION, DEFAULT_SCHEDULER_NAME, KIND

__all__ = ["Migration", "migrate", "migrate_files"]

_FIT = "NodeResourcesFit"
_SPREAD = "PodTopologySpread"

#: The order the legacy scheduler ran predicates in (and so the plugins' filter order).
PREDICATE_ORDER = (
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "HostName",
    "PodFitsHostPorts",
    "MatchNodeSelector",
    "PodFitsResources",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "CheckNodeLabelPresence",
    "CheckServiceAffinity",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount",
    "MaxCinderVolumeCount",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "EvenPodsSpread",
    "MatchInterPodAffinity",
)
MANDATORY_PREDICATES = frozenset({"PodToleratesNodeTaints", "CheckNodeUnschedulable"})
DEFAULT_PREDICATES = frozenset(
    {
        "NoVolumeZoneConflict",
        "MaxEBSVolumeCount",
        "MaxGCEPDVolumeCount",
        "MaxAzureDiskVolumeCount",
        "MaxCSIVolumeCountPred",
        "MatchInterPodAffinity",
        "NoDiskConflict",
        "GeneralPredicates",
        "PodToleratesNodeTaints",
        "CheckVolumeBinding",
        "CheckNodeUnschedulable",
        "EvenPodsSpread",
    }
)
DEFAULT_PRIORITIES = {
    "SelectorSpreadPriority": 1,
    "InterPodAffinityPriority": 1,
    "LeastRequestedPriority": 1,
    "BalancedResourceAllocation": 1,
    "NodePreferAvoidPodsPriority": 10000,
    "NodeAffinityPriority": 1,
    "TaintTolerationPriority": 1,
    "ImageLocalityPriority": 1,
    "EvenPodsSpreadPriority": 2,
}

_CLOUD_LIMITS = (
    "the in-tree {cloud} volume limit plugin was removed upstream; NodeVolumeLimits "
    "counts those volumes through CSI migration and is enabled in its place"
)
#: Predicates → the plugins that filter for them.
PREDICATE_PLUGINS: dict[str, tuple[str, ...]] = {
    "GeneralPredicates": (_FIT, "NodeName", "NodePorts", "NodeAffinity"),
    "PodToleratesNodeTaints": ("TaintToleration",),
    "PodFitsResources": (_FIT,),
    "HostName": ("NodeName",),
    "PodFitsHostPorts": ("NodePorts",),
    "MatchNodeSelector": ("NodeAffinity",),
    "CheckNodeUnschedulable": ("NodeUnschedulable",),
    "CheckVolumeBinding": ("VolumeBinding",),
    "NoDiskConflict": ("VolumeRestrictions",),
    "NoVolumeZoneConflict": ("VolumeZone",),
    "MaxCSIVolumeCountPred": ("NodeVolumeLimits",),
    "MaxEBSVolumeCount": ("NodeVolumeLimits",),
    "MaxGCEPDVolumeCount": ("NodeVolumeLimits",),
    "MaxAzureDiskVolumeCount": ("NodeVolumeLimits",),
    "MaxCinderVolumeCount": ("NodeVolumeLimits",),
    "MatchInterPodAffinity": ("InterPodAffinity",),
    "EvenPodsSpread": (_SPREAD,),
}
_PREDICATE_NOTES = {
    "MaxEBSVolumeCount": _CLOUD_LIMITS.format(cloud="AWS EBS"),
    "MaxGCEPDVolumeCount": _CLOUD_LIMITS.format(cloud="GCE PD"),
    "MaxAzureDiskVolumeCount": _CLOUD_LIMITS.format(cloud="Azure Disk"),
    "MaxCinderVolumeCount": _CLOUD_LIMITS.format(cloud="Cinder"),
}
_NODE_LABEL_GONE = (
    "the NodeLabel plugin was removed in Kubernetes v1.23; require or prefer node labels "
    "with nodeAffinity in the pod spec, or write a plugin"
)
_SERVICE_AFFINITY_GONE = (
    "the ServiceAffinity plugin was removed in Kubernetes v1.23; use pod affinity or "
    "anti-affinity (or topologySpreadConstraints) in the pod spec, or write a plugin"
)
_REMOVED_PREDICATES = {
    "CheckNodeLabelPresence": _NODE_LABEL_GONE,
    "CheckServiceAffinity": _SERVICE_AFFINITY_GONE,
}
#: Priorities → the plugin that scores for them (NodeResourcesFit ones: the strategy).
PRIORITY_PLUGINS: dict[str, str] = {
    "SelectorSpreadPriority": _SPREAD,
    "ServiceSpreadingPriority": _SPREAD,
    "EvenPodsSpreadPriority": _SPREAD,
    "TaintTolerationPriority": "TaintToleration",
    "NodeAffinityPriority": "NodeAffinity",
    "ImageLocalityPriority": "ImageLocality",
    "InterPodAffinityPriority": "InterPodAffinity",
    "BalancedResourceAllocation": "NodeResourcesBalancedAllocation",
    "LeastRequestedPriority": _FIT,
    "MostRequestedPriority": _FIT,
}
_STRATEGIES = {"LeastRequestedPriority": "LeastAllocated", "MostRequestedPriority": "MostAllocated"}
_REMOVED_PRIORITIES = {
    "NodePreferAvoidPodsPriority": (
        "the NodePreferAvoidPods plugin was removed in Kubernetes v1.24 (its node "
        "annotation is no longer read); taint the nodes instead"
    ),
    "EqualPriority": "gives every node the same score, which changes no choice: left out",
}
#: Plugins the legacy scheduler always ran besides the Policy's, and SchedulingGates.
_ALWAYS_FIRST = ("SchedulingGates", "PrioritySort")
_ALWAYS_LAST = ("DefaultPreemption", "DefaultBinder")
_FILTER_SIDE = ("preFilter", "filter")
_SCORE_SIDE = ("preScore", "score")
_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
#: Top-level keys of an old configuration that v1 still has, carried over as written.
_CARRIED = (
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
)
_SILENT = frozenset(
    {"apiVersion", "kind", "algorithmSource", "profiles", "schedulerName", "extenders"}
)


@dataclass
class Migration:
    """The v1 configuration (``document``) and what could not be carried (``notes``)."""

    document: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        """YAML, with the notes as comments at the top."""
        lines = ["# Migrated from a scheduler Policy by 'kubesched config migrate'."]
        if self.notes:
            lines.append("# Not carried over (no v1 equivalent):")
            lines.extend(f"#   - {note}" for note in self.notes)
        body = yaml.safe_dump(self.document, sort_keys=False, default_flow_style=False)
        return "\n".join(lines) + "\n" + body


@dataclass
class _Plan:
    """What the Policy asks for: plugins in order, with their sides and weights."""

    order: list[str] = field(default_factory=list)
    filters: set[str] = field(default_factory=set)
    weights: dict[str, int] = field(default_factory=dict)
    plugin_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, plugin: str, *, filter_side: bool = False, weight: int | None = None) -> None:
        if plugin not in self.order:
            self.order.append(plugin)
        if filter_side:
            self.filters.add(plugin)
        if weight is not None:
            # The legacy registry keeps the highest weight of a plugin named twice.
            self.weights[plugin] = max(weight, self.weights.get(plugin, 0))


def _predicates(policy: Policy, plan: _Plan) -> None:
    given: list[PredicatePolicy] = list(policy.predicates) if policy.predicates is not None else []
    names = {p.name for p in given} if policy.predicates is not None else set(DEFAULT_PREDICATES)
    names |= MANDATORY_PREDICATES
    for predicate in given:
        if predicate.labels_presence is not None or predicate.name == "CheckNodeLabelPresence":
            plan.notes.append(f"predicate {predicate.name!r} (labelsPresence): {_NODE_LABEL_GONE}")
            names.discard(predicate.name)
        elif (
            predicate.service_affinity_labels is not None
            or predicate.name == "CheckServiceAffinity"
        ):
            plan.notes.append(
                f"predicate {predicate.name!r} (serviceAffinity): {_SERVICE_AFFINITY_GONE}"
            )
            names.discard(predicate.name)
        elif predicate.name == "PodFitsPorts":
            # Its old name, which the legacy registry still accepted.
            names.discard("PodFitsPorts")
            names.add("PodFitsHostPorts")
        elif predicate.name not in PREDICATE_PLUGINS:
            plan.notes.append(f"predicate {predicate.name!r}: unknown to the legacy registry")
            names.discard(predicate.name)
    ordered = [n for n in PREDICATE_ORDER if n in names]
    ordered += sorted(names - set(PREDICATE_ORDER))
    for name in ordered:
        if name in _REMOVED_PREDICATES:
            continue
        if name in _PREDICATE_NOTES:
            plan.notes.append(f"predicate {name!r}: {_PREDICATE_NOTES[name]}")
        for plugin in PREDICATE_PLUGINS[name]:
            plan.add(plugin, filter_side=True)


def _priorities(policy: Policy, plan: _Plan, symmetric_weight: int | None) -> None:
    if policy.priorities is None:
        given = [PriorityPolicy(name, weight) for name, weight in DEFAULT_PRIORITIES.items()]
    else:
        given = list(policy.priorities)
    fit: tuple[str, int, dict[str, Any]] | None = None  # (priority, weight, strategy)
    spread_defaulting: str | None = None
    for priority in sorted(given, key=lambda p: p.name):
        name, weight = priority.name, priority.weight
        label = f"priority {name!r}"
        if priority.service_anti_affinity_label is not None:
            plan.notes.append(f"{label} (serviceAntiAffinity): {_SERVICE_AFFINITY_GONE}")
            continue
        if priority.label_preference is not None:
            plan.notes.append(f"{label} (labelPreference): {_NODE_LABEL_GONE}")
            continue
        if name in _REMOVED_PRIORITIES:
            plan.notes.append(f"{label}: {_REMOVED_PRIORITIES[name]}")
            continue
        strategy: dict[str, Any] | None = None
        if priority.shape is not None:
            resources = [{"name": n, "weight": w} for n, w in priority.resources]
            strategy = {
                "type": "RequestedToCapacityRatio",
                "resources": resources or [dict(r) for r in _DEFAULT_RESOURCES],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": u, "score": s} for u, s in priority.shape]
                },
            }
        elif name in _STRATEGIES:
            strategy = {
                "type": _STRATEGIES[name],
                "resources": [dict(r) for r in _DEFAULT_RESOURCES],
            }
        elif name not in PRIORITY_PLUGINS:
            why = (
                "needs requestedToCapacityRatioArguments"
                if name == "RequestedToCapacityRatioPriority"
                else "unknown to the legacy registry"
            )
            plan.notes.append(f"{label}: {why}")
            continue
        if strategy is not None:
            # v1 gives NodeResourcesFit one scoring strategy; a Policy could ask for several.
            if fit is not None:
                plan.notes.append(
                    f"{label}: NodeResourcesFit scores with one strategy, and "
                    f"{fit[0]!r} ({fit[2]['type']}) already set it"
                )
                continue
            fit = (name, weight, strategy)
            plan.add(_FIT, weight=weight)
            continue
        plugin = PRIORITY_PLUGINS[name]
        plan.add(plugin, weight=weight)
        if name in ("SelectorSpreadPriority", "ServiceSpreadingPriority"):
            spread_defaulting = "System"
        elif name == "EvenPodsSpreadPriority" and spread_defaulting is None:
            spread_defaulting = "List"
        elif name == "InterPodAffinityPriority" and symmetric_weight:
            plan.plugin_config["InterPodAffinity"] = {"hardPodAffinityWeight": symmetric_weight}
    if fit is not None:
        plan.plugin_config[_FIT] = {"scoringStrategy": fit[2]}
    if spread_defaulting is not None:
        plan.plugin_config[_SPREAD] = {"defaultingType": spread_defaulting}


def _plugins(plan: _Plan) -> dict[str, Any]:
    enabled: list[dict[str, Any]] = [{"name": name} for name in _ALWAYS_FIRST]
    for plugin in plan.order:
        entry: dict[str, Any] = {"name": plugin}
        if plugin in plan.weights:
            entry["weight"] = plan.weights[plugin]
        enabled.append(entry)
    enabled += [{"name": name} for name in _ALWAYS_LAST]
    plugins: dict[str, Any] = {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}
    score_only = [p for p in plan.order if p not in plan.filters]
    filter_only = [p for p in plan.order if p in plan.filters and p not in plan.weights]
    for point in _FILTER_SIDE:
        if score_only:
            plugins[point] = {"disabled": [{"name": p} for p in score_only]}
    for point in _SCORE_SIDE:
        if filter_only:
            plugins[point] = {"disabled": [{"name": p} for p in filter_only]}
    return plugins


def _profile_names(old: dict[str, Any] | None, notes: list[str]) -> list[str]:
    if old is None:
        return [DEFAULT_SCHEDULER_NAME]
    names: list[str] = []
    profiles = old.get("profiles")
    if isinstance(profiles, list):
        for i, profile in enumerate(profiles):
            if not isinstance(profile, dict):
                continue
            names.append(str(profile.get("schedulerName") or DEFAULT_SCHEDULER_NAME))
            for key in sorted(set(profile) - {"schedulerName"}):
                notes.append(
                    f"profiles[{i}].{key} of the old configuration: the Policy decides the "
                    "plugins; add it to the migrated profile by hand if still wanted"
                )
    if not names:
        name = old.get("schedulerName")  # v1alpha1 named its one profile at the top
        names.append(str(name) if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME)
    return names


def migrate(policy: Policy, old: dict[str, Any] | None = None) -> Migration:
    """The v1 configuration equivalent to ``policy`` (and to the rest of the old
    configuration ``old`` that referenced it, as a decoded document)."""
    plan = _Plan()
    _predicates(policy, plan)
    symmetric = policy.hard_pod_affinity_symmetric_weight
    if symmetric is None and old is not None:
        # v1alpha1 kept it at the top of the configuration.
        value = old.get("hardPodAffinitySymmetricWeight")
        symmetric = value if isinstance(value, int) and not isinstance(value, bool) else None
    _priorities(policy, plan, symmetric)
    if policy.always_check_all_predicates is not None:
        plan.notes.append(
            "alwaysCheckAllPredicates: v1 has no such setting (every filter plugin runs "
            "until one rejects the node)"
        )
    document: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    notes = list(plan.notes)
    if old is not None:
        for key in _CARRIED:
            if key in old:
                document[key] = old[key]
        for key in sorted(set(old) - set(_CARRIED) - _SILENT):
            notes.append(f"{key} of the old configuration: not in kubescheduler.config.k8s.io/v1")
    plugin_config = [
        {"name": name, "args": args} for name, args in sorted(plan.plugin_config.items())
    ]
    profiles = []
    for name in _profile_names(old, notes):
        profile: dict[str, Any] = {"schedulerName": name, "plugins": _plugins(plan)}
        if plugin_config:
            profile["pluginConfig"] = plugin_config
        profiles.append(profile)
    document["profiles"] = profiles
    extenders = list(policy.extenders)
    if old is not None and isinstance(old.get("extenders"), list):
        extenders = [dict(e) for e in old["extenders"] if isinstance(e, dict)] + extenders
    if extenders:
        document["extenders"] = extenders
    return Migration(document, notes)


def migrate_files(policy_path: str | Path, config_path: str | Path | None = None) -> Migration:
    """Read the Policy file (and the old configuration) and migrate them; raises
    ConfigError naming the file and field of any problem."""
    from kubesched.config.load import read_document

    policy = load_policy(policy_path)
    old: dict[str, Any] | None = None
    if config_path is not None:
        source = str(config_path)
        try:
            text = Path(config_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ConfigError(
                source, [FieldError.decode("", f"cannot read the file: {reason}")]
            ) from exc
        data, errors = read_document(text, source, is_json=Path(source).suffix == ".json")
        if errors:
            raise ConfigError(source, errors)
        if not isinstance(data, dict):
            raise ConfigError(source, [FieldError.invalid("", data, "must be an object")])
        old = data
    return migrate(policy, old)
