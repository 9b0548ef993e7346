"""What PodTopologySpread's Filter and Score share: the constraints a pod is spread by.

A pod is spread by its own ``topologySpreadConstraints`` or, when it has none, by the
plugin's default constraints, whose selector is deduced from the Services,
ReplicationControllers, ReplicaSets and StatefulSets that select the pod (upstream's
``common.go`` and ``helper.DefaultSelector``). Constraints are prepared once per pod:
``matchLabelKeys`` are merged into the selector and unset fields take their defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kubesched.framework.types import PodInfo
from kubesched.objects.affinity import POLICY_HONOR, POLICY_IGNORE, TopologySpreadConstraint
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.policy import SERVICE, Workload
from kubesched.objects.selectors import IN, LabelSelector, Requirement
from kubesched.objects.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint

#: The plugin's name in configurations (upstream ``names.PodTopologySpread``).
NAME = "PodTopologySpread"

#: Filter's reason when placing the pod would exceed a constraint's maxSkew.
REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
#: Filter's reason when the node lacks one of the constraints' topology keys.
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

#: Taint effects that keep a pod off a node, for nodeTaintsPolicy: Honor.
_DO_NOT_SCHEDULE_EFFECTS = frozenset({NO_SCHEDULE, NO_EXECUTE})


@dataclass(frozen=True, slots=True)
class Constraint:
    """A spread constraint prepared for one pod (upstream ``topologySpreadConstraint``).

    ``selector`` None is a missing labelSelector, which selects no pod.
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = POLICY_HONOR
    node_taints_policy: str = POLICY_IGNORE

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with ``labels`` counts for this constraint."""
        return self.selector is not None and self.selector.matches(labels)


def build_constraints(
    constraints: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
) -> list[Constraint]:
    """The constraints whose whenUnsatisfiable is ``action``, prepared for a pod.

    The values of the pod's labels named by ``matchLabelKeys`` are ANDed with the
    selector. kube-apiserver 1.34 already merges them when the pod is created
    (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta and on); the 1.34 scheduler
    merges them again, which selects the same pods, and also covers pods written by
    hand or created before the merge. A missing selector stays missing.
    """
    out = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        selector = c.label_selector
        if selector is not None and c.match_label_keys:
            extra = tuple(
                Requirement(key, IN, (pod_labels[key],), exact=True)
                for key in c.match_label_keys
                if key in pod_labels
            )
            if extra:
                selector = LabelSelector(extra + selector.requirements)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                node_affinity_policy=c.node_affinity_policy,
                node_taints_policy=c.node_taints_policy,
            )
        )
    return out


def default_selector(pod: Pod, workloads: Iterable[Workload]) -> LabelSelector:
    """The selectors of the workloads in ``pod``'s namespace that select it, ANDed.

    Upstream merges the selectors of every Service that selects the pod with the
    selector of the pod's controller (found by owner reference). The scheduler's Pod
    carries no owner references, so ReplicationControllers, ReplicaSets and
    StatefulSets, like Services, count when their selector matches the pod.
    """
    seen: set[Requirement] = set()
    requirements: list[Requirement] = []
    labels = pod.labels
    # Services first, as upstream: their label sets are merged before the controller's.
    ordered = sorted(workloads, key=lambda w: w.kind != SERVICE)
    for workload in ordered:
        selector = workload.selector
        if workload.namespace != pod.namespace or selector is None:
            continue
        if not selector.matches(labels):
            continue
        for requirement in selector.requirements:
            if requirement not in seen:
                seen.add(requirement)
                requirements.append(requirement)
    return LabelSelector(tuple(requirements))


def build_default_constraints(
    defaults: Sequence[TopologySpreadConstraint],
    pod: Pod,
    workloads: Iterable[Workload],
    action: str,
) -> list[Constraint]:
    """The default constraints for ``action``, all with the pod's deduced selector.

    Empty when no workload selects the pod: default spreading needs a selector.
    """
    constraints = build_constraints(defaults, pod.labels, action)
    if not constraints:
        return []
    selector = default_selector(pod, workloads)
    if selector.is_empty():
        return []
    return [
        Constraint(
            c.max_skew,
            c.topology_key,
            selector,
            c.min_domains,
            c.node_affinity_policy,
            c.node_taints_policy,
        )
        for c in constraints
    ]


def node_has_topology_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """Whether the node's ``labels`` hold the topology key of every constraint."""
    # A plain loop: this runs for every node of every cycle.
    for c in constraints:  # noqa: SIM110
        if c.topology_key not in labels:
            return False
    return True


def count_matching_pods(pods: Sequence[PodInfo], selector: LabelSelector | None, ns: str) -> int:
    """How many of ``pods`` in namespace ``ns`` the selector selects, terminating ones
    excluded (upstream #87621: they are about to go and would skew the spread).

    As in release 1.34, a selector with no requirements (``labelSelector: {}``) counts
    no pod: upstream's shortcut meant for a missing selector tests "has no requirements"
    (kubernetes/kubernetes#141339, fixed after 1.36).
    """
    if selector is None or selector.is_empty():
        return 0
    count = 0
    for info in pods:
        p = info.pod
        if p.deleting or p.namespace != ns:
            continue
        if selector.matches(p.labels):
            count += 1
    return count


def required_node_affinity_matches(pod: Pod, node: Node) -> bool:
    """Whether ``node`` satisfies the pod's nodeSelector and required node affinity."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    required = pod.required_node_affinity
    return required is None or required.matches(node.name, labels)


class NodeInclusion:
    """Which constraints count a node, by the constraints' node inclusion policies.

    nodeAffinityPolicy Honor counts only nodes that pass the pod's nodeSelector and
    required node affinity; nodeTaintsPolicy Honor only nodes whose NoSchedule and
    NoExecute taints the pod tolerates. Each check runs at most once per node.
    """

    __slots__ = ("_affinity", "_constraints", "_pod", "_taints")

    def __init__(self, pod: Pod, constraints: Sequence[Constraint]) -> None:
        self._pod = pod
        self._constraints = constraints
        self._affinity = any(c.node_affinity_policy == POLICY_HONOR for c in constraints)
        self._taints = any(c.node_taints_policy == POLICY_HONOR for c in constraints)

    def included(self, node: Node) -> list[bool]:
        """Per constraint, whether ``node`` counts for it."""
        pod = self._pod
        affinity_ok = not self._affinity or required_node_affinity_matches(pod, node)
        taints_ok = (
            not self._taints
            or find_untolerated_taint(node.taints, pod.tolerations, _DO_NOT_SCHEDULE_EFFECTS)
            is None
        )
        if affinity_ok and taints_ok:
            return [True] * len(self._constraints)
        return [
            (affinity_ok or c.node_affinity_policy != POLICY_HONOR)
            and (taints_ok or c.node_taints_policy != POLICY_HONOR)
            for c in self._constraints
        ]
