"""A straightforward reference model of the default profile's Filter semantics
(kube-scheduler release-1.34), computed from the test's own specs, independently of
the product's decoders and plugins.

Each check returns a list of violations (empty: the node is fine), so a failing
property can say what the product let through.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from prop_model import (
    CPU,
    EPHEMERAL,
    EXTENDED,
    MEMORY,
    UNSCHEDULABLE_TAINT_KEY,
    ClusterSpec,
    NodeSpec,
    PodSpec,
    TermSpec,
)

#: The taint effects Filter cares about (PreferNoSchedule only affects scoring).
FILTER_EFFECTS = ("NoSchedule", "NoExecute")
_INT32_MAX = 2**31 - 1


# --- requests ---------------------------------------------------------------------------


def _add(into: dict[str, int], amounts: dict[str, int]) -> None:
    for r, v in amounts.items():
        into[r] = into.get(r, 0) + v


def _max(into: dict[str, int], amounts: dict[str, int]) -> None:
    for r, v in amounts.items():
        into[r] = max(into.get(r, 0), v)


def pod_requests(spec: PodSpec) -> dict[str, int]:
    """Upstream's PodRequests: containers summed; sidecars (restartable init containers)
    run with them and with every later init container; each plain init container runs
    alone beside the sidecars started before it; the peak wins; overhead on top."""
    total: dict[str, int] = {}
    for c in spec.containers:
        _add(total, c)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for restartable, c in spec.init_containers:
        if restartable:
            _add(total, c)
            _add(sidecars, c)
            _max(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, c)
            _max(init_peak, running)
    _max(total, init_peak)
    _add(total, spec.overhead)
    return {r: v for r, v in total.items() if v}


# --- selectors --------------------------------------------------------------------------


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics: None selects nothing, ``{}`` everything."""
    if selector is None:
        return False
    for k, v in selector.get("matchLabels", {}).items():
        if labels.get(k) != v:
            return False
    return all(_requirement(e, labels) for e in selector.get("matchExpressions", []))


def label_selector_is_empty(selector: dict[str, Any] | None) -> bool:
    return (
        selector is not None
        and not selector.get("matchLabels")
        and not selector.get("matchExpressions")
    )


def _requirement(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr["key"], expr["operator"], expr.get("values", [])
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        if key not in labels:
            return False
        try:
            have, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    raise AssertionError(f"unknown operator {op}")


def required_node_affinity_matches(pod: PodSpec, node: NodeSpec) -> bool:
    """nodeSelector AND (any required node-selector term), as GetRequiredNodeAffinity."""
    if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if pod.required_node_terms is None:
        return True
    for term in pod.required_node_terms:
        if not term.expressions and not term.fields:
            continue  # an empty term selects no node
        if not all(_requirement(e, node.labels) for e in term.expressions):
            continue
        if all(_requirement(f, {"metadata.name": node.name}) for f in term.fields):
            return True
    return False


# --- taints and ports -------------------------------------------------------------------


def tolerates(toleration: tuple[str, str, str, str], taint: tuple[str, str, str]) -> bool:
    key, op, value, effect = toleration
    t_key, t_value, t_effect = taint
    if effect and effect != t_effect:
        return False
    if key and key != t_key:
        return False
    if op == "Exists":
        return True
    return value == t_value


def untolerated_taint(node: NodeSpec, pod: PodSpec) -> tuple[str, str, str] | None:
    for taint in node.taints:
        if taint[2] in FILTER_EFFECTS and not any(tolerates(t, taint) for t in pod.tolerations):
            return taint
    return None


def _ip(ip: str) -> str:
    return ip or "0.0.0.0"


def host_port_conflict(pod: PodSpec, on_node: list[PodSpec]) -> bool:
    """A wildcard IP conflicts with any IP of the same protocol and port."""
    used = [port for p in on_node for port in p.host_ports]
    for port, proto, ip in pod.host_ports:
        for u_port, u_proto, u_ip in used:
            if port != u_port or proto != u_proto:
                continue
            if "0.0.0.0" in (_ip(ip), _ip(u_ip)) or _ip(ip) == _ip(u_ip):
                return True
    return False


# --- pod (anti-)affinity ----------------------------------------------------------------


def term_selects(term: TermSpec, owner_namespace: str, target: PodSpec) -> bool:
    """Whether ``term`` of a pod in ``owner_namespace`` selects ``target``."""
    namespaces = term.namespaces or [owner_namespace]
    return target.namespace in namespaces and label_selector_matches(term.selector, target.labels)


def inter_pod_affinity_violations(cluster: ClusterSpec, pod: PodSpec, node: NodeSpec) -> list[str]:
    out: list[str] = []
    placed = [(cluster.node(p.node_name), p) for p in cluster.bound]

    terms = pod.required_affinity
    if terms:
        # Pods count only when they match every term (upstream's rule), in every
        # domain of the node they run on.
        counts: Counter[tuple[str, str]] = Counter()
        for m, existing in placed:
            if all(term_selects(t, pod.namespace, existing) for t in terms):
                for t in terms:
                    if t.topology_key in m.labels:
                        counts[(t.topology_key, m.labels[t.topology_key])] += 1
        if any(t.topology_key not in node.labels for t in terms):
            out.append("node lacks a topology key of the pod's required affinity")
        elif not all(counts[(t.topology_key, node.labels[t.topology_key])] > 0 for t in terms):
            first_of_series = not counts and all(term_selects(t, pod.namespace, pod) for t in terms)
            if not first_of_series:
                out.append("no pod matching the pod's required affinity in the node's domain")

    for t in pod.required_anti_affinity:
        value = node.labels.get(t.topology_key)
        if value is None:
            continue
        for m, existing in placed:
            if m.labels.get(t.topology_key) == value and term_selects(t, pod.namespace, existing):
                out.append(f"pod's anti-affinity term selects {existing.key} in {value}")

    for m, existing in placed:
        for t in existing.required_anti_affinity:
            value = m.labels.get(t.topology_key)
            if value is None or node.labels.get(t.topology_key) != value:
                continue
            if term_selects(t, existing.namespace, pod):
                out.append(f"{existing.key}'s anti-affinity term selects the pod in {value}")
    return out


# --- topology spread --------------------------------------------------------------------


def spread_violations(cluster: ClusterSpec, pod: PodSpec, node: NodeSpec) -> list[str]:
    """Every DoNotSchedule constraint, with nodeAffinityPolicy Honor and nodeTaintsPolicy
    Ignore: matching pods of the pod's namespace counted per domain over the nodes that
    have every constraint's key and match the pod's required node affinity."""
    constraints = [c for c in pod.spread if c.when == "DoNotSchedule"]
    if not constraints:
        return []
    out: list[str] = []
    keys = [c.topology_key for c in constraints]
    eligible = [
        m
        for m in cluster.nodes
        if all(k in m.labels for k in keys) and required_node_affinity_matches(pod, m)
    ]
    for c in constraints:
        if c.topology_key not in node.labels:
            out.append(f"node lacks the spread key {c.topology_key}")
            continue
        per_domain: dict[str, int] = {}
        for m in eligible:
            count = 0
            if not label_selector_is_empty(c.selector):
                count = sum(
                    1
                    for p in cluster.pods_on(m.name)
                    if p.namespace == pod.namespace and label_selector_matches(c.selector, p.labels)
                )
            domain = m.labels[c.topology_key]
            per_domain[domain] = per_domain.get(domain, 0) + count
        global_min = min(per_domain.values()) if per_domain else _INT32_MAX
        if len(per_domain) < (c.min_domains or 1):
            global_min = 0
        self_match = 1 if label_selector_matches(c.selector, pod.labels) else 0
        matched = per_domain.get(node.labels[c.topology_key], 0)
        skew = matched + self_match - global_min
        if skew > c.max_skew:
            out.append(
                f"skew {skew} > maxSkew {c.max_skew} on {c.topology_key}"
                f"={node.labels[c.topology_key]} (domains {per_domain})"
            )
    return out


# --- everything -------------------------------------------------------------------------


def resource_violations(cluster: ClusterSpec, pod: PodSpec, node: NodeSpec) -> list[str]:
    out: list[str] = []
    on_node = cluster.pods_on(node.name)
    if len(on_node) + 1 > node.pods:
        out.append(f"too many pods: {len(on_node)} of {node.pods}")
    used: dict[str, int] = {}
    for p in on_node:
        _add(used, pod_requests(p))
    for r, v in pod_requests(pod).items():
        assert r in (CPU, MEMORY, EPHEMERAL, *EXTENDED)
        if used.get(r, 0) + v > node.allocatable.get(r, 0):
            out.append(f"insufficient {r}: {v} + {used.get(r, 0)} > {node.allocatable.get(r, 0)}")
    return out


def filter_violations(cluster: ClusterSpec, pod: PodSpec, node: NodeSpec) -> list[str]:
    """Why the default profile's filters must reject ``pod`` on ``node`` (empty: fits)."""
    out = resource_violations(cluster, pod, node)
    if node.unschedulable and not any(
        tolerates(t, (UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule")) for t in pod.tolerations
    ):
        out.append("node is unschedulable")
    taint = untolerated_taint(node, pod)
    if taint is not None:
        out.append(f"untolerated taint {taint}")
    if not required_node_affinity_matches(pod, node):
        out.append("nodeSelector / required node affinity")
    if host_port_conflict(pod, cluster.pods_on(node.name)):
        out.append("host port in use")
    out += inter_pod_affinity_violations(cluster, pod, node)
    out += spread_violations(cluster, pod, node)
    return out
