"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node,
and the scheduler binds the WaitForFirstConsumer ones it chose a node for.

Mirrors kube-scheduler's ``volumebinding`` plugin (``volume_binding.go``, release-1.34):
PreFilter skips pods without claims and rejects, unresolvably, a pod whose claim is
missing, being deleted, lost, or an unbound Immediate claim; Filter checks each node
(:class:`~kubesched.plugins.volumebinding.binder.VolumeBinder`); Reserve assumes the
node's bindings, PreBind writes them and waits for the PV controller (up to
``bindTimeoutSeconds``), Unreserve reverts. StorageCapacityScoring is off in 1.34, so the
plugin does not score and refuses a ``shape``.

PreBind runs in the live scheduler's worker thread (docs/writing-plugins.md, "PreBind
that talks to the API server"); its pre-flight skips pods whose claims are all bound, so
they need no thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.framework.args import ArgsError, ArgsReader, FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PreBindPreFlightPlugin,
    PreFilterPlugin,
    PreFilterResult,
    QueueingHint,
    ReservePlugin,
    Status,
)
from kubesched.framework.types import NodeInfo
from kubesched.objects.pod import Pod
from kubesched.objects.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
)
from kubesched.plugins import names
from kubesched.plugins.helper import as_changed
from kubesched.plugins.volumebinding.assume_cache import AssumeError
from kubesched.plugins.volumebinding.binder import (
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    pod_claims,
)

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "NAME",
    "VolumeBinding",
    "VolumeBindingArgs",
    "new",
]

NAME: Final = names.VOLUME_BINDING
ERR_REASON_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
#: The claim phase the PV controller sets when the claim's volume is gone.
CLAIM_LOST: Final = "Lost"

_STATE_KEY: Final = NAME
_BIND_TIMEOUT: Final = "bindTimeoutSeconds"
_SHAPE: Final = "shape"


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """Upstream ``VolumeBindingArgs``: how long PreBind waits for the bindings, and the
    scoring ``shape`` (refused: StorageCapacityScoring is off in 1.34)."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: object = None

    @classmethod
    def from_mapping(
        cls, args: Mapping[str, Any] | None
    ) -> tuple[VolumeBindingArgs, list[FieldError]]:
        """Decode the wire form; unset fields take the defaults."""
        reader = ArgsReader(args, known=(_BIND_TIMEOUT, _SHAPE))
        decoded = cls(
            bind_timeout_seconds=reader.get(_BIND_TIMEOUT, int, DEFAULT_BIND_TIMEOUT_SECONDS),
            shape=reader.args.get(_SHAPE),
        )
        return decoded, reader.errors

    def validate(self) -> list[FieldError]:
        """Every problem, as upstream's ``ValidateVolumeBindingArgsWithOptions`` (with
        StorageCapacityScoring off) reports it."""
        errors: list[FieldError] = []
        if self.bind_timeout_seconds < 0:
            errors.append(
                FieldError.invalid(
                    _BIND_TIMEOUT,
                    self.bind_timeout_seconds,
                    "invalid BindTimeoutSeconds, should not be a negative value",
                )
            )
        if self.shape is not None:
            errors.append(
                FieldError.invalid(
                    _SHAPE,
                    self.shape,
                    "unexpected field `shape`, remove it or turn on the feature gate "
                    "StorageCapacityScoring",
                )
            )
        return errors


@dataclass(slots=True)
class _State:
    """Upstream's stateData: the pod's claims (PreFilter), each feasible node's volumes
    (Filter), whether everything was bound already (Reserve)."""

    claims: PodVolumeClaims | None = None
    volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> _State:
        return self  # shared, as upstream's (preemption's clones must see Filter's)


class VolumeBinding:
    """The plugin: PreFilter, Filter, Reserve / Unreserve, PreBind, queueing hints."""

    name = NAME

    def __init__(self, args: VolumeBindingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.binder = VolumeBinder(
            handle.cluster,
            lambda: handle.client,
            float(args.bind_timeout_seconds),
            self._node_labels,
        )

    def _node_labels(self, node_name: str) -> Mapping[str, str] | None:
        info = self.handle.snapshot.find(node_name)
        return info.node.labels if info is not None else None

    # --- PreFilter ------------------------------------------------------------------

    def _claim_problem(self, pod: Pod) -> tuple[bool, str | None]:
        """Upstream's podHasPVCs: whether the pod has claims, and why it cannot use them."""
        has = False
        cluster = self.handle.cluster
        for name, ephemeral in pod_claims(pod):
            has = True
            pvc = cluster.persistent_volume_claim(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return has, f'persistentvolumeclaim "{name}" not found'
            if pvc.phase == CLAIM_LOST:
                return has, (
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                    f'persistentvolume "{pvc.volume_name}"'
                )
            if pvc.deleting:
                return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral:
                from kubesched.objects.storage import claim_is_for_pod

                problem = claim_is_for_pod(pod.namespace, pod.name, pod.uid, pvc)
                if problem is not None:
                    return has, problem
        return has, None

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        """Skip a pod without claims; reject one whose claims cannot be used anywhere."""
        if not pod.volumes:
            # Most pods: nothing to bind, and nothing to do at Reserve and PreBind either.
            state.write(_STATE_KEY, _NO_CLAIMS)
            return None, _SKIP
        has, problem = self._claim_problem(pod)
        if problem is not None:
            return None, Status.unresolvable(problem)
        if not has:
            state.write(_STATE_KEY, _NO_CLAIMS)
            return None, _SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as err:
            return None, Status.error(str(err))
        if claims.unbound_claims_immediate:
            # The PV controller binds these; the claim's update requeues the pod.
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, _State(claims))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # --- Filter ---------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """The node fits when the pod's bound volumes reach it and its unbound claims
        can be bound or provisioned there; else UnschedulableAndUnresolvable."""
        data = _read(state)
        if data is None or data.claims is None:
            return Status.error(f'reading "{_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        try:
            volumes, reasons = self.binder.find_pod_volumes(
                pod, data.claims, node.name, node.labels
            )
        except BinderError as err:
            return Status.error(str(err))
        if reasons:
            return Status.unresolvable(*reasons)
        data.volumes_by_node[node.name] = volumes
        return None

    # --- Reserve / Unreserve ----------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Assume the node's bindings, so the next pods see these volumes taken."""
        data = _read(state)
        if data is _NO_CLAIMS:
            return None
        if data is None:
            return Status.error(f'reading "{_STATE_KEY}" from cycleState: not found')
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            data.all_bound = True  # no claims
            return None
        try:
            data.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except (AssumeError, BinderError) as err:
            return Status.error(str(err))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Drop the assumptions (idempotent)."""
        data = _read(state)
        if data is None:
            return
        volumes = data.volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    # --- PreBind --------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Skip when every claim was bound already; PreBind has work otherwise."""
        data = _read(state)
        if data is None:
            return Status.error(f'reading "{_STATE_KEY}" from cycleState: not found')
        if data.all_bound:
            return _SKIP
        if node_name not in data.volumes_by_node:
            return Status.error(f'no pod volumes found for node "{node_name}"')
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write the bindings (a volume's claimRef, a claim's selected node) and wait
        until the PV controller has bound every claim."""
        data = _read(state)
        if data is None:
            return Status.error(f'reading "{_STATE_KEY}" from cycleState: not found')
        if data.all_bound:
            return None
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            return Status.error(f'no pod volumes found for node "{node_name}"')
        try:
            self.binder.bind_pod_volumes(pod, node_name, volumes)
        except Exception as err:  # an API error or a failed binding: try again later
            return Status.error(str(err))
        return None

    # --- queueing hints --------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The storage objects and nodes whose changes can make a rejected pod fit."""
        return (
            # A missing or mis-configured class (allowedTopologies, binding mode).
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_storage_class_change,
            ),
            # Claims get bound to volumes: any change of the pod's claims may help.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                self.is_schedulable_after_persistent_volume_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)
            ),
            # A node's labels decide volume node affinity and allowed topologies.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            # CSINode says which in-tree plugins migrated to CSI.
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_csi_node_change,
            ),
            # Storage capacity: a driver that stops tracking it, or more capacity.
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE
                ),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        )

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """A new class, or new allowedTopologies (the binding mode cannot change)."""
        original, modified = as_changed(StorageClass, old, new)
        if original is None or original.allowed_topologies != modified.allowed_topologies:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_persistent_volume_claim_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """One of the pod's own claims was created or changed."""
        _, modified = as_changed(PersistentVolumeClaim, old, new)
        if modified.namespace != pod.namespace:
            return QueueingHint.QUEUE_SKIP
        if any(name == modified.name for name, _ in pod_claims(pod)):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_node_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """A new CSINode, or a change of its migrated plugins."""
        original, modified = as_changed(CSINode, old, new)
        if original is None or original.migrated_plugins != modified.migrated_plugins:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_driver_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """A driver of the pod's inline CSI volumes stopped tracking storage capacity."""
        original, modified = as_changed(CSIDriver, old, new)
        for volume in pod.volumes:
            source = volume.source
            if volume.kind != "csi" or getattr(source, "driver", None) != modified.name:
                continue
            if original is not None and original.storage_capacity and not modified.storage_capacity:
                return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """A new capacity, or a larger volume limit."""
        original, modified = as_changed(CSIStorageCapacity, old, new)
        if original is None:
            return QueueingHint.QUEUE
        new_limit = _volume_limit(modified)
        old_limit = _volume_limit(original)
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP


def _volume_limit(capacity: CSIStorageCapacity) -> Any:
    if capacity.maximum_volume_size is not None:
        return capacity.maximum_volume_size
    return capacity.capacity


#: The state of every pod without claims (shared: nothing in it changes).
_NO_CLAIMS = _State(all_bound=True)
_SKIP = Status.skip()


def _read(state: CycleState) -> _State | None:
    data = state.get(_STATE_KEY)
    return data if isinstance(data, _State) else None


_pre_filter: type[PreFilterPlugin] = VolumeBinding
_filter: type[FilterPlugin] = VolumeBinding
_reserve: type[ReservePlugin] = VolumeBinding
_pre_bind: type[PreBindPreFlightPlugin] = VolumeBinding
_events: type[EnqueueExtensions] = VolumeBinding


def new(args: Mapping[str, Any] | None, handle: Handle) -> VolumeBinding:
    """Build the plugin; ArgsError lists every problem with its args."""
    decoded, errors = VolumeBindingArgs.from_mapping(args)
    errors.extend(decoded.validate() if not errors else ())
    if errors:
        raise ArgsError(errors)
    return VolumeBinding(decoded, handle)
