"""VolumeZone: a pod goes only to nodes in the zones (and regions) of its bound volumes.

Mirrors kube-scheduler's ``volumezone`` plugin. It reads the topology labels of the
PersistentVolumes bound to the pod's claims (``topology.kubernetes.io/zone`` and
``region``, and their ``failure-domain.beta`` forms; a value may list several zones joined
by ``__``) and requires a node to carry each label with one of the values. A node with no
topology label at all passes (a single-zone cluster). Claims not bound yet whose class
binds WaitForFirstConsumer are left to VolumeBinding. Every rejection is
UnschedulableAndUnresolvable: no preemption moves a volume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kubesched.framework.columns import ABSENT, NodeTable
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import ClusterLister, Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.framework.vector import NodeVerdicts, VectorFilterPlugin
from kubesched.objects.pod import Pod
from kubesched.objects.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed, check_no_args, not_found

NAME = names.VOLUME_ZONE

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

PRE_FILTER_STATE_KEY = "PreFilter" + NAME

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
#: The labels compared, in upstream's order.
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA_LABEL = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}
#: How a label value lists several zones (``us-east-1a__us-east-1b``).
MULTI_ZONE_DELIMITER = "__"

_SKIP: Final = Status.skip()
_CONFLICT: Final = Status.unresolvable(ERR_REASON_CONFLICT)


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a bound volume: the node must have one of ``values``."""

    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class _State:
    topologies: tuple[PVTopology, ...]

    def clone(self) -> _State:
        return self


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """The zones a label value names (None when one of them is empty, which upstream
    reports and ignores); "" names none."""
    if value == "":
        return frozenset()
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> tuple[PVTopology, ...]:
    """The topology labels of ``pv`` (node affinity is NodeAffinity's business, not this
    plugin's: upstream reads only the labels)."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            out.append(PVTopology(pv.name, key, zones))
    return tuple(out)


def _claim_names(pod: Pod) -> list[str]:
    return [v.claim_name for v in pod.volumes if v.kind == "persistentVolumeClaim"]


def pod_pv_topologies(pod: Pod, cluster: ClusterLister) -> tuple[PVTopology, ...] | Status:
    """The topologies of the volumes bound to the pod's claims, or the status that stops
    the pod (a claim, volume or class missing; an unbound claim that cannot wait)."""
    out: list[PVTopology] = []
    for claim_name in _claim_names(pod):
        claim = cluster.persistent_volume_claim(pod.namespace, claim_name)
        if claim is None:
            return Status.unresolvable(not_found("persistentvolumeclaim", claim_name))
        if not claim.volume_name:
            class_name = claim.storage_class_name
            if not class_name:
                return Status.unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name"
                )
            cls = cluster.storage_class(class_name)
            if cls is None:
                return Status.unresolvable(not_found("storageclass.storage.k8s.io", class_name))
            if not cls.volume_binding_mode:
                return Status.unresolvable(
                    f'VolumeBindingMode not set for StorageClass "{class_name}"'
                )
            if cls.waits_for_first_consumer:
                continue  # VolumeBinding decides where it goes
            return Status.unresolvable("PersistentVolume had no name")
        pv = cluster.persistent_volume(claim.volume_name)
        if pv is None:
            return Status.unresolvable(not_found("persistentvolume", claim.volume_name))
        out.extend(pv_topologies(pv))
    return tuple(out)


def node_satisfies(labels: Mapping[str, str], topologies: Sequence[PVTopology]) -> bool:
    """Whether a node with ``labels`` is in every topology (or has no topology label)."""
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return True  # a single-zone cluster's nodes may carry no topology labels
    for topology in topologies:
        value = labels.get(topology.key)
        if value is None:
            # A volume's beta label is matched against the node's GA label.
            value = labels.get(_GA_LABEL.get(topology.key, topology.key))
        if value is None or value not in topology.values:
            return False
    return True


class VolumeZone:
    """Filters out nodes outside the zones and regions of the pod's bound volumes."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Read the topologies of the pod's bound volumes; Skip when there are none."""
        if not pod.volumes:
            return None, _SKIP
        topologies = pod_pv_topologies(pod, self._handle.cluster)
        if isinstance(topologies, Status):
            return None, topologies
        if not topologies:
            return None, _SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """None: other pods do not change the state."""
        return None

    def _topologies(self, state: CycleState, pod: Pod) -> tuple[PVTopology, ...] | Status:
        data = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(data, _State):
            return data.topologies
        # As upstream, a Filter without PreFilter computes the topologies itself.
        return pod_pv_topologies(pod, self._handle.cluster)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when the node is outside a volume's topology."""
        if not pod.volumes:
            return None
        topologies = self._topologies(state, pod)
        if isinstance(topologies, Status):
            return topologies
        if node_satisfies(node_info.node.labels, topologies):
            return None
        return _CONFLICT

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> NodeVerdicts | None:
        """``filter`` over the label columns of the nodes at ``rows``."""
        if not pod.volumes:
            return None
        topologies = self._topologies(state, pod)
        if isinstance(topologies, Status):
            return NodeVerdicts(np.ones(len(rows), dtype=np.int8), (topologies,))
        constrained = np.zeros(len(rows), dtype=np.bool_)
        for key in TOPOLOGY_LABELS:
            column = table.label(key)
            if column is not None:
                constrained |= column.codes[rows] != ABSENT
        ok = np.ones(len(rows), dtype=np.bool_)
        for topology in topologies:
            ok &= _in_topology(table, rows, topology)
        rejected = constrained & ~ok
        if not rejected.any():
            return None
        return NodeVerdicts.reject(rejected, _CONFLICT)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A WaitForFirstConsumer class added; a node added or relabelled; a claim added
        or updated; a volume added or its topology changed."""
        return (
            # A class appearing that waits for the first consumer lets an unbound claim of
            # that class wait. Class updates are ignored: volumeBindingMode is immutable.
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                is_schedulable_after_storage_class_added,
            ),
            # A new node, or new zone labels on one, may be in the volumes' zones.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            # The pod's claim created, or bound (its volumeName filled).
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                is_schedulable_after_persistent_volume_claim_change,
            ),
            # A volume created, or its zone labels changed.
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                is_schedulable_after_persistent_volume_change,
            ),
        )


def _in_topology(
    table: NodeTable, rows: npt.NDArray[np.int64], topology: PVTopology
) -> npt.NDArray[np.bool_]:
    """Per row: the node's value of the topology's key (or its GA form, when the node lacks
    the key) is one of the topology's values."""
    column = table.label(topology.key)
    codes = column.codes[rows] if column is not None else np.full(len(rows), ABSENT)
    ok = _codes_in(column, codes, topology.values)
    ga_key = _GA_LABEL.get(topology.key, topology.key)
    if ga_key != topology.key:
        absent = codes == ABSENT
        if absent.any():
            ga = table.label(ga_key)
            if ga is not None:
                ga_codes = ga.codes[rows]
                ok |= absent & _codes_in(ga, ga_codes, topology.values)
    return ok


def _codes_in(
    column: Any, codes: npt.NDArray[Any], values: frozenset[str]
) -> npt.NDArray[np.bool_]:
    if column is None:
        return np.zeros(len(codes), dtype=np.bool_)
    wanted = [column.code(v) for v in values]
    wanted = [c for c in wanted if c != ABSENT]
    if not wanted:
        return np.zeros(len(codes), dtype=np.bool_)
    return np.isin(codes, np.array(wanted, dtype=codes.dtype))


def is_schedulable_after_persistent_volume_claim_change(
    pod: Pod, old: object, new: object
) -> QueueingHint:
    """Queue when the claim added or updated is one of the pod's."""
    _, claim = as_changed(PersistentVolumeClaim, old, new)
    if claim.namespace == pod.namespace and claim.name in _claim_names(pod):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def is_schedulable_after_storage_class_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the class added binds WaitForFirstConsumer."""
    _, cls = as_changed(StorageClass, None, new)
    return QueueingHint.QUEUE if cls.waits_for_first_consumer else QueueingHint.QUEUE_SKIP


def is_schedulable_after_persistent_volume_change(
    pod: Pod, old: object, new: object
) -> QueueingHint:
    """Queue when a volume is created, or its topology labels changed."""
    original, modified = as_changed(PersistentVolume, old, new)
    if original is None:
        return QueueingHint.QUEUE
    if pv_topologies(original) != pv_topologies(modified):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


_pre_filter: type[PreFilterPlugin] = VolumeZone
_filter: type[FilterPlugin] = VolumeZone
_vector_filter: type[VectorFilterPlugin] = VolumeZone
_enqueue_extensions: type[EnqueueExtensions] = VolumeZone


def new(args: Mapping[str, Any] | None, handle: Handle) -> VolumeZone:
    """Build the plugin; it takes no arguments."""
    check_no_args(args)
    return VolumeZone(handle)
