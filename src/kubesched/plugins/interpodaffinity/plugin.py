"""InterPodAffinity: place pods near, or away from, other pods by topology domain.

Mirrors ``pkg/scheduler/framework/plugins/interpodaffinity/plugin.go`` (release-1.34): the
plugin's arguments, its requeue events with their queueing hints, and its factory. The
extension points live in ``filtering`` (required terms: PreFilter, AddPod/RemovePod,
Filter) and ``scoring`` (preferred terms: PreScore, Score, NormalizeScore).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PreFilterExtensions,
    QueueingHint,
    ScoreExtensions,
)
from kubesched.objects.affinity import PodAffinityTerm
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.interpodaffinity.filtering import NAME, InterPodAffinityFiltering
from kubesched.plugins.interpodaffinity.scoring import InterPodAffinityScoring

if TYPE_CHECKING:
    from kubesched.framework.interface import (
        EnqueueExtensions,
        FilterPlugin,
        PreFilterPlugin,
        PreScorePlugin,
        ScorePlugin,
    )

__all__ = [
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_change",
    "new",
]

#: Upstream ``v1.DefaultHardPodAffinitySymmetricWeight``.
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
_MIN_HARD_POD_AFFINITY_WEIGHT = 0
_MAX_HARD_POD_AFFINITY_WEIGHT = 100

_HARD_WEIGHT_FIELD = "hardPodAffinityWeight"
_IGNORE_PREFERRED_FIELD = "ignorePreferredTermsOfExistingPods"


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    """``InterPodAffinityArgs`` of kubescheduler.config.k8s.io/v1."""

    #: Score weight of an existing pod's *required* affinity term that the incoming pod
    #: matches (scoring is symmetric); 0 turns that off.
    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    #: Skip scoring (existing pods' preferred terms included) when the incoming pod has no
    #: preferred terms of its own, to save time in large clusters.
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def from_args(cls, args: Mapping[str, Any] | None) -> InterPodAffinityArgs:
        """Decode and validate ``pluginConfig[].args``; raises ArgsError with every problem."""
        reader = ArgsReader(args, known=(_HARD_WEIGHT_FIELD, _IGNORE_PREFERRED_FIELD))
        out = cls(
            hard_pod_affinity_weight=reader.get(
                _HARD_WEIGHT_FIELD, int, DEFAULT_HARD_POD_AFFINITY_WEIGHT
            ),
            ignore_preferred_terms_of_existing_pods=reader.get(
                _IGNORE_PREFERRED_FIELD, bool, False
            ),
        )
        errors = [*reader.errors, *out.validate()]
        if errors:
            raise ArgsError(errors)
        return out

    def validate(self) -> list[FieldError]:
        """Every problem, with paths relative to the args (``ValidateInterPodAffinityArgs``)."""
        weight = self.hard_pod_affinity_weight
        if not _MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= _MAX_HARD_POD_AFFINITY_WEIGHT:
            detail = (
                f"not in valid range [{_MIN_HARD_POD_AFFINITY_WEIGHT}, "
                f"{_MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )
            return [FieldError.invalid(_HARD_WEIGHT_FIELD, weight, detail)]
        return []


class InterPodAffinity(InterPodAffinityFiltering, InterPodAffinityScoring):
    """Filters on required pod (anti-)affinity and scores on preferred (anti-)affinity."""

    name = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """AddPod/RemovePod keep the PreFilter counts right during preemption."""
        return self

    def score_extensions(self) -> ScoreExtensions | None:
        """NormalizeScore rescales the weight sums to [0, 100]."""
        return self

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster changes that can make a pod this plugin rejected schedulable."""
        return [
            # An assigned pod added may satisfy the pod's affinity; one deleted may lift
            # an anti-affinity conflict; a label change may do either. Unassigned pods are
            # skipped by the hint, as upstream's Pod registration does.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                is_schedulable_after_pod_change,
            ),
            # A new node, or changed node labels, may create the topology domain the pod's
            # affinity needs or leave the one its anti-affinity forbids. (Queueing hints are
            # on, as in 1.34, so upstream's extra UpdateNodeTaint for preCheck is not needed.)
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                is_schedulable_after_node_change,
            ),
        ]


if TYPE_CHECKING:

    def _implements(
        plugin: InterPodAffinity,
    ) -> tuple[
        PreFilterPlugin,
        PreFilterExtensions,
        FilterPlugin,
        PreScorePlugin,
        ScorePlugin,
        ScoreExtensions,
        EnqueueExtensions,
    ]:
        return plugin, plugin, plugin, plugin, plugin, plugin, plugin


def _matches_all(terms: Sequence[PodAffinityTerm], pod: Pod) -> bool:
    # The pod's own terms as written: hints do not resolve namespaceSelectors (upstream
    # matches them against no namespace labels), and no terms never match.
    if not terms:
        return False
    return all(t.matches(pod.namespace, pod.labels) for t in terms)


def _as_pair(old: object, new: object, kind: type[Any]) -> tuple[Any, Any]:
    for obj in (old, new):
        if obj is not None and not isinstance(obj, kind):
            raise TypeError(f"expected {kind.__name__} or None, got {type(obj).__name__}")
    return old, new


def is_schedulable_after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when an assigned pod's add, label update or delete may help ``pod``.

    Added: it matches all of ``pod``'s affinity terms. Updated: it starts matching all the
    affinity terms, or stops matching all the anti-affinity terms. Deleted: it matched all
    the anti-affinity terms. (Upstream's all-terms test is kept for anti-affinity too.)
    """
    original, modified = _as_pair(old, new, Pod)
    if (modified is not None and not modified.node_name) or (
        original is not None and not original.node_name
    ):
        return QueueingHint.QUEUE_SKIP
    affinity = pod.required_affinity
    anti_affinity = pod.required_anti_affinity
    if original is not None and modified is not None:
        if not _matches_all(affinity, original) and _matches_all(affinity, modified):
            return QueueingHint.QUEUE
        if _matches_all(anti_affinity, original) and not _matches_all(anti_affinity, modified):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
    if modified is not None:
        return QueueingHint.QUEUE if _matches_all(affinity, modified) else QueueingHint.QUEUE_SKIP
    if original is None:
        raise TypeError("a pod event needs an old or a new pod")
    if _matches_all(anti_affinity, original):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when a node added or relabelled may now offer the topology ``pod`` needs.

    Affinity: the (new) node has an affinity topology key it lacked or with another value.
    Anti-affinity: any added node, or a node that lost an anti-affinity topology key or
    changed its value.
    """
    original, modified = _as_pair(old, new, Node)
    if modified is None:
        raise TypeError("a node add or update needs the new node")
    new_labels = modified.labels
    old_labels = original.labels if original is not None else None
    for term in pod.required_affinity:
        key = term.topology_key
        if key in new_labels and (old_labels is None or old_labels.get(key) != new_labels[key]):
            return QueueingHint.QUEUE
    for term in pod.required_anti_affinity:
        if old_labels is None:
            return QueueingHint.QUEUE
        key = term.topology_key
        if key in old_labels and old_labels[key] != new_labels.get(key):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def new(args: Mapping[str, Any] | None, handle: Handle) -> InterPodAffinity:
    """The InterPodAffinity plugin; raises ArgsError when ``args`` are invalid."""
    return InterPodAffinity(InterPodAffinityArgs.from_args(args), handle)
