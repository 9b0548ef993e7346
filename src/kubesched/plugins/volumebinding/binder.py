"""The volume binder: which of a pod's claims need binding, which volumes or which
provisioning can serve them on a node, the assumption of that choice, and the API writes
and wait that carry it out (upstream's ``binder.go``, ``SchedulerVolumeBinder``).

The flow, as upstream's: PreFilter sorts the pod's claims (:meth:`get_pod_volume_claims`);
Filter asks each node (:meth:`find_pod_volumes`: bound claims' volumes must reach the node,
unbound WaitForFirstConsumer claims need an available volume there or a class that can
provision there, with enough CSI storage capacity); Reserve assumes the node's choice in
the assume cache (:meth:`assume_pod_volumes`); PreBind writes it — a static volume's
``claimRef``, or the claim's ``volume.kubernetes.io/selected-node`` for the provisioner —
and waits for the PV controller to finish the binding (:meth:`bind_pod_volumes`, up to
``bindTimeoutSeconds``); Unreserve drops the assumptions (:meth:`revert_assumed_pod_volumes`).

DEVIATIONS: in-tree PersistentVolumes are not translated to CSI before their node
affinity is checked (upstream's tryTranslatePVToCSI adds topology only for migrated
in-tree plugins, which our simulated clusters do not run); the wait does not end early
when the pod is deleted meanwhile (the Bind after it fails instead).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.framework.apiclient import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    APIClient,
    RawObject,
)
from kubesched.framework.handle import ClusterLister
from kubesched.objects.pod import Pod
from kubesched.objects.storage import (
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    claim_is_for_pod,
    find_matching_volume,
    is_delay_binding_mode,
    is_volume_bound_to_claim,
    volume_node_affinity_matches,
)
from kubesched.plugins.volumebinding.assume_cache import PVAssumeCache, PVCAssumeCache

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "NOT_SUPPORTED_PROVISIONER",
    "BinderError",
    "BindingInfo",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
]

#: Filter's reasons (upstream's ConflictReasons), word for word.
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: A class with this provisioner cannot provision (local volumes).
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class BinderError(Exception):
    """A failure that is an Error status, not a node's rejection."""


@dataclass(slots=True)
class BindingInfo:
    """A claim and the static volume chosen for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume


@dataclass(slots=True)
class PodVolumes:
    """What binding a pod's claims on one node takes: static bindings and claims to
    provision."""

    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    """A pod's claims sorted by what they need (upstream's PodVolumeClaims)."""

    bound_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    #: Unbound WaitForFirstConsumer claims (the scheduler binds or provisions them).
    unbound_claims_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    #: Unbound Immediate (or pre-bound) claims: the PV controller should have bound them.
    unbound_claims_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    #: The PVs of each class of the delay-binding claims.
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)
    #: The volume of each bound claim (None when it does not exist), by claim key.
    bound_volumes: dict[str, PersistentVolume | None] = field(default_factory=dict)


def pod_claims(pod: Pod) -> list[tuple[str, bool]]:
    """The pod's claim names in volume order, each with whether it is an ephemeral
    volume's generated claim."""
    return [
        (v.claim_name_for(pod.name), v.is_ephemeral)
        for v in pod.volumes
        if v.kind in ("persistentVolumeClaim", "ephemeral")
    ]


def claim_reference(claim: PersistentVolumeClaim) -> RawObject:
    """The ObjectReference a volume's ``claimRef`` holds (upstream GetReference)."""
    ref: RawObject = {
        "kind": "PersistentVolumeClaim",
        "namespace": claim.namespace,
        "name": claim.name,
        "apiVersion": "v1",
    }
    if claim.uid:
        ref["uid"] = claim.uid
    if claim.resource_version:
        ref["resourceVersion"] = claim.resource_version
    return ref


def bind_volume_to_claim(
    volume: PersistentVolume, claim: PersistentVolumeClaim
) -> tuple[PersistentVolume, bool]:
    """``volume`` bound to ``claim`` (its claimRef, and ``bound-by-controller`` when the
    binding is the controller's), and whether that changed it (upstream's
    GetBindVolumeToClaim)."""
    by_controller = not is_volume_bound_to_claim(volume, claim)
    new = volume
    ref = volume.claim_ref
    if ref is None or (ref.name, ref.namespace, ref.uid) != (
        claim.name,
        claim.namespace,
        claim.uid,
    ):
        new = dataclasses.replace(new, claim_ref=ClaimRef(claim.namespace, claim.name, claim.uid))
    if by_controller and ANN_BOUND_BY_CONTROLLER not in new.annotations:
        new = dataclasses.replace(
            new, annotations={**new.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        )
    return new, new is not volume


class VolumeBinder:
    """Binds a pod's claims to volumes through the scheduling and binding cycles.

    **cluster**: the informer-fed objects; **client**: the handle's client (PreBind's API
    calls); **bind_timeout**: seconds PreBind waits for the bindings; **node_labels**:
    the labels of a node by name (None if it is gone), read when the binding is checked.
    """

    def __init__(
        self,
        cluster: ClusterLister,
        client: Callable[[], APIClient],
        bind_timeout: float,
        node_labels: Callable[[str], Mapping[str, str] | None],
    ) -> None:
        self.cluster = cluster
        self._client = client
        self.bind_timeout = bind_timeout
        self._node_labels = node_labels
        self.pv_cache = PVAssumeCache(cluster)
        self.pvc_cache = PVCAssumeCache(cluster)

    # --- PreFilter ------------------------------------------------------------------

    def get_pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """Sort the pod's claims into bound, unbound delay-binding and unbound immediate,
        with the candidate volumes of the delay-binding ones' classes. BinderError when
        a claim is missing or not the pod's."""
        out = PodVolumeClaims()
        for name, ephemeral in pod_claims(pod):
            key = f"{pod.namespace}/{name}"
            pvc = self.pvc_cache.get(key)
            if pvc is None:
                raise BinderError(
                    f'error getting PVC "{key}": PersistentVolumeClaim "{key}" not found'
                )
            if ephemeral:
                problem = claim_is_for_pod(pod.namespace, pod.name, pod.uid, pvc)
                if problem is not None:
                    raise BinderError(problem)
            if pvc.is_fully_bound:
                out.bound_claims.append(pvc)
                out.bound_volumes[pvc.key] = self.pv_cache.get(pvc.volume_name)
            elif is_delay_binding_mode(pvc, self.cluster.storage_class) and not pvc.volume_name:
                out.unbound_claims_delay_binding.append(pvc)
            else:
                # Pre-bound claims count as immediate: the PV controller binds them.
                out.unbound_claims_immediate.append(pvc)
        # Volumes bound to other claims can never match: leave them out once here rather
        # than in every node's Filter (upstream scans them there).
        own = {pvc.key for pvc in out.unbound_claims_delay_binding}
        for pvc in out.unbound_claims_delay_binding:
            cls = pvc.storage_class_name
            if cls not in out.unbound_volumes_delay_binding:
                out.unbound_volumes_delay_binding[cls] = [
                    pv
                    for pv in self.pv_cache.list_pvs(cls)
                    if pv.claim_ref is None or pv.claim_ref.key in own
                ]
        return out

    # --- Filter ---------------------------------------------------------------------

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node_name: str, node_labels: Mapping[str, str]
    ) -> tuple[PodVolumes, list[str]]:
        """Whether the pod's claims can be served on the node: its volumes there, and the
        reasons the node does not fit (upstream's order). BinderError on a fault."""
        volumes = PodVolumes()
        bound_ok = True
        pvs_found = True
        unbound_ok = True
        sufficient = True
        for pvc in claims.bound_claims:
            pv = claims.bound_volumes.get(pvc.key)
            if pv is None:
                pvs_found = False
                break
            if not volume_node_affinity_matches(pv, node_labels):
                bound_ok = False
                break
        if claims.unbound_claims_delay_binding:
            unbound_ok, sufficient = self._find_unbound(claims, node_name, node_labels, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _find_unbound(
        self,
        claims: PodVolumeClaims,
        node_name: str,
        node_labels: Mapping[str, str],
        volumes: PodVolumes,
    ) -> tuple[bool, bool]:
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in claims.unbound_claims_delay_binding:
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node_name:
                    return False, True  # provisioning was asked for another node
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        unbound_ok = True
        if to_match:
            # Smallest requests first, so that each gets the smallest volume that fits.
            chosen: dict[str, PersistentVolume] = {}
            for pvc in sorted(to_match, key=lambda c: c.request):
                pv = find_matching_volume(
                    pvc,
                    claims.unbound_volumes_delay_binding.get(pvc.storage_class_name, ()),
                    node_labels,
                    chosen,
                    delay_binding=True,
                )
                if pv is None:
                    to_provision.append(pvc)
                    unbound_ok = False
                    continue
                chosen[pv.name] = pv
                volumes.static_bindings.append(BindingInfo(pvc, pv))
        if to_provision:
            return self._check_volume_provisions(to_provision, node_labels, volumes)
        return unbound_ok, True

    def _check_volume_provisions(
        self,
        claims: Sequence[PersistentVolumeClaim],
        node_labels: Mapping[str, str],
        volumes: PodVolumes,
    ) -> tuple[bool, bool]:
        """Whether every claim can be provisioned for the node: (provisionable, enough
        storage). Upstream's checkVolumeProvisions."""
        provisions: list[PersistentVolumeClaim] = []
        for pvc in claims:
            class_name = pvc.storage_class_name
            if not class_name:
                raise BinderError(f'no class for claim "{pvc.key}"')
            cls = self.cluster.storage_class(class_name)
            if cls is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            if cls.allowed_topologies and not any(
                term.matches(node_labels) for term in cls.allowed_topologies
            ):
                return False, True
            if not self._has_enough_capacity(pvc, cls, node_labels):
                return True, False
            provisions.append(pvc)
        volumes.dynamic_provisions = provisions
        return True, True

    def _has_enough_capacity(
        self, pvc: PersistentVolumeClaim, cls: StorageClass, node_labels: Mapping[str, str]
    ) -> bool:
        """Whether a CSIStorageCapacity the node reaches has room for the claim (only for
        CSI drivers that opt in with ``storageCapacity``)."""
        driver = self.cluster.csi_driver(cls.provisioner)
        if driver is None or not driver.storage_capacity:
            return True
        size = pvc.request
        for capacity in self.cluster.csi_storage_capacities():
            if capacity.storage_class_name != cls.name:
                continue
            limit = (
                capacity.maximum_volume_size
                if capacity.maximum_volume_size is not None
                else capacity.capacity
            )
            if limit is None or limit < size:
                continue
            if capacity.node_topology is not None and capacity.node_topology.matches(node_labels):
                return True
        return False

    # --- Reserve / Unreserve ----------------------------------------------------------

    def pod_volumes_bound(self, pod: Pod) -> bool:
        """Whether every claim of the pod is fully bound (assumptions included)."""
        for name, _ in pod_claims(pod):
            pvc = self.pvc_cache.get(f"{pod.namespace}/{name}")
            if pvc is None or not pvc.is_fully_bound:
                return False
        return True

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """Assume the node's choice: volumes bound to their claims, claims with the
        selected node. True when every claim is already fully bound (nothing to do)."""
        if self.pod_volumes_bound(pod):
            return True
        bindings: list[BindingInfo] = []
        try:
            for binding in volumes.static_bindings:
                new_pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
                if dirty:
                    self.pv_cache.assume(new_pv)
                bindings.append(BindingInfo(binding.pvc, new_pv))
        except Exception:
            self._revert_pvs(bindings)
            raise
        provisions: list[PersistentVolumeClaim] = []
        try:
            for pvc in volumes.dynamic_provisions:
                assumed = dataclasses.replace(
                    pvc, annotations={**pvc.annotations, ANN_SELECTED_NODE: node_name}
                )
                self.pvc_cache.assume(assumed)
                provisions.append(assumed)
        except Exception:
            self._revert_pvs(bindings)
            self._revert_pvcs(provisions)
            raise
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert_assumed_pod_volumes(self, volumes: PodVolumes) -> None:
        self._revert_pvs(volumes.static_bindings)
        self._revert_pvcs(volumes.dynamic_provisions)

    def _revert_pvs(self, bindings: Sequence[BindingInfo]) -> None:
        for binding in bindings:
            self.pv_cache.restore(binding.pv.name)

    def _revert_pvcs(self, claims: Sequence[PersistentVolumeClaim]) -> None:
        for pvc in claims:
            self.pvc_cache.restore(pvc.key)

    # --- PreBind --------------------------------------------------------------------

    def bind_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> None:
        """Write the assumed bindings and provisioning requests, then wait until the PV
        controller has bound every claim. BinderError (or the client's APIError) when
        it fails or does not finish within the bind timeout."""
        self._bind_api_update(volumes)
        bindings = volumes.static_bindings
        claims = volumes.dynamic_provisions
        try:
            done = self._client().wait_until(
                lambda: self.check_bindings(pod, node_name, bindings, claims), self.bind_timeout
            )
        except BinderError as err:
            raise BinderError(f"binding volumes: {err}") from err
        if not done:
            raise BinderError("binding volumes: context deadline exceeded")

    def _bind_api_update(self, volumes: PodVolumes) -> None:
        """Upstream's bindAPIUpdate: each write from the assumed object (a stale one
        conflicts); what was not written is reverted."""
        client = self._client()
        bindings = volumes.static_bindings
        claims = volumes.dynamic_provisions
        done_bindings = 0
        done_claims = 0
        try:
            for binding in bindings:
                pv = binding.pv
                raw = client.get(PERSISTENT_VOLUMES, pv.name)
                meta = raw.setdefault("metadata", {})
                meta["resourceVersion"] = pv.resource_version
                meta["annotations"] = {**(meta.get("annotations") or {}), **pv.annotations}
                raw.setdefault("spec", {})["claimRef"] = claim_reference(binding.pvc)
                binding.pv = PersistentVolume.from_dict(client.update(PERSISTENT_VOLUMES, raw))
                done_bindings += 1
            for i, pvc in enumerate(claims):
                raw = client.get(PERSISTENT_VOLUME_CLAIMS, pvc.name, pvc.namespace)
                meta = raw.setdefault("metadata", {})
                meta["resourceVersion"] = pvc.resource_version
                meta["annotations"] = {
                    **(meta.get("annotations") or {}),
                    ANN_SELECTED_NODE: pvc.annotations[ANN_SELECTED_NODE],
                }
                claims[i] = PersistentVolumeClaim.from_dict(
                    client.update(PERSISTENT_VOLUME_CLAIMS, raw)
                )
                done_claims += 1
        finally:
            self._revert_pvs(bindings[done_bindings:])
            self._revert_pvcs(claims[done_claims:])

    def check_bindings(
        self,
        pod: Pod,
        node_name: str,
        bindings: Sequence[BindingInfo],
        claims: Sequence[PersistentVolumeClaim],
    ) -> bool:
        """Whether every claim the pod's PreBind wrote is fully bound, from the
        informers' objects; BinderError when the binding failed and the pod must be
        scheduled again (upstream's checkBindings)."""
        labels = self._node_labels(node_name)
        if labels is None:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
        for binding in bindings:
            pv = self.pv_cache.get_api(binding.pv.name)
            if pv is None:
                raise BinderError(
                    f'failed to check binding: PersistentVolume "{binding.pv.name}" not found'
                )
            pvc = self.pvc_cache.get_api(binding.pvc.key)
            if pvc is None:
                raise BinderError(
                    f'failed to check binding: PersistentVolumeClaim "{binding.pvc.key}" not found'
                )
            if _newer(binding.pv.resource_version, pv.resource_version):
                return False  # our write has not reached the informer yet
            if not volume_node_affinity_matches(pv, labels):
                raise BinderError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                    "no matching NodeSelectorTerms"
                )
            if pv.claim_ref is None or not pv.claim_ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{pv.name}"')
            if not pvc.is_fully_bound:
                return False
        for claim in claims:
            pvc = self.pvc_cache.get_api(claim.key)
            if pvc is None:
                raise BinderError(
                    f'failed to check provisioning pvc: PersistentVolumeClaim "{claim.key}" '
                    "not found"
                )
            if _newer(claim.resource_version, pvc.resource_version):
                return False
            if not pvc.annotations:
                raise BinderError(f'selectedNode annotation reset for PVC "{pvc.name}"')
            if pvc.annotations.get(ANN_SELECTED_NODE) != node_name:
                # The provisioner removes the annotation when it fails: schedule again.
                raise BinderError(f'provisioning failed for PVC "{pvc.name}"')
            if pvc.volume_name:
                pv = self.pv_cache.get_api(pvc.volume_name)
                if pv is None:
                    return False  # not seen yet; a deleted one unbinds the claim later
                if not volume_node_affinity_matches(pv, labels):
                    raise BinderError(
                        f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                        "no matching NodeSelectorTerms"
                    )
            if not pvc.is_fully_bound:
                return False
        return True


def _newer(ours: str, theirs: str) -> bool:
    """Whether resourceVersion ``ours`` is newer than ``theirs``."""
    try:
        return int(ours or 0) > int(theirs or 0)
    except ValueError:
        return False
