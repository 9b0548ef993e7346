"""Claim-to-volume matching, as upstream's ``pkg/controller/volume/persistentvolume/util``
(``FindMatchingVolume`` and its checks) and the PV controller's access-mode index: shared
by the VolumeBinding plugin, the simulator and the PV controller, so the three pick the
same volume for a claim.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from kubesched.objects.storage.persistentvolume import (
    ANN_SELECTED_NODE,
    VOLUME_AVAILABLE,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.objects.storage.sources import Volume
from kubesched.objects.storage.storageclass import StorageClass

__all__ = [
    "check_access_modes",
    "check_volume_mode_mismatches",
    "claim_is_for_pod",
    "find_best_match_for_claim",
    "find_matching_volume",
    "is_delay_binding_mode",
    "is_delay_binding_provisioning",
    "is_volume_bound_to_claim",
    "pod_claim_names",
    "volume_node_affinity_matches",
]


def is_volume_bound_to_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """Whether ``volume`` is bound or pre-bound to ``claim``: its claimRef names the claim,
    and, if the claimRef has a uid, the claim's uid."""
    ref = volume.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def check_volume_mode_mismatches(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """Whether the claim's and the volume's volumeModes differ (unset reads Filesystem)."""
    return claim.volume_mode != volume.volume_mode


def check_access_modes(claim: PersistentVolumeClaim, volume: PersistentVolume) -> bool:
    """Whether the volume offers every access mode the claim asks for."""
    offered = set(volume.access_modes)
    return all(mode in offered for mode in claim.access_modes)


def volume_node_affinity_matches(volume: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """Whether a node with ``node_labels`` satisfies the volume's required node affinity
    (upstream's volumeutil.CheckNodeAffinity; a volume without one fits every node).
    Only labels are compared: upstream builds the node from its labels alone, so
    ``matchFields`` terms are not evaluated."""
    affinity = volume.node_affinity
    return affinity is None or affinity.matches("", node_labels)


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node_labels: Mapping[str, str] | None = None,
    excluded: Collection[str] = (),
    delay_binding: bool = False,
) -> PersistentVolume | None:
    """The volume for ``claim`` among ``volumes``: one bound or pre-bound to it, else the
    smallest available one that fits (capacity, volumeMode, selector, class; access modes
    and node affinity on the scheduler's path). Upstream's FindMatchingVolume.

    **node_labels**: set on the scheduler's path only: the volume's node affinity must
    accept that node, and a pre-bound volume that it does not accept means no match.
    **excluded**: names of volumes already chosen for the pod's other claims.
    **delay_binding**: on the PV controller's path, for a WaitForFirstConsumer claim:
    pre-bound volumes still match, unbound ones are left to the scheduler.
    """
    smallest: PersistentVolume | None = None
    requested_class = claim.storage_class_name
    selector = claim.selector
    for volume in volumes:
        if volume.name in excluded:
            continue
        bound_here = is_volume_bound_to_claim(volume, claim)
        if volume.claim_ref is not None and not bound_here:
            continue
        if volume.capacity < claim.request:
            continue
        if check_volume_mode_mismatches(claim, volume):
            continue
        if volume.deleting:
            continue
        affinity_ok = node_labels is None or volume_node_affinity_matches(volume, node_labels)
        if bound_here:
            # A pre-bound volume the node cannot reach means this claim cannot be
            # satisfied on the node at all.
            return volume if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if volume.phase != VOLUME_AVAILABLE:
            # Volumes on their way to Available would match later; binding them now
            # would mostly end in API conflicts.
            continue
        if selector is not None and not selector.matches(volume.labels):
            continue
        if volume.storage_class_name != requested_class:
            continue
        if not affinity_ok:
            continue
        if node_labels is not None and not check_access_modes(claim, volume):
            continue
        if smallest is None or smallest.capacity > volume.capacity:
            smallest = volume
    return smallest


def find_best_match_for_claim(
    claim: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    delay_binding: bool = False,
) -> PersistentVolume | None:
    """The PV controller's choice (``findBestMatchForClaim``): volumes are grouped by
    their set of access modes; among the groups that offer all the claim's modes, those
    with the fewest modes are searched first, each with :func:`find_matching_volume`."""
    groups: dict[frozenset[str], list[PersistentVolume]] = {}
    for volume in volumes:
        groups.setdefault(frozenset(volume.access_modes), []).append(volume)
    wanted = set(claim.access_modes)
    candidates = sorted((modes for modes in groups if wanted <= modes), key=len)
    for modes in candidates:
        found = find_matching_volume(claim, groups[modes], delay_binding=delay_binding)
        if found is not None:
            return found
    return None


def is_delay_binding_mode(
    claim: PersistentVolumeClaim, storage_class: Callable[[str], StorageClass | None]
) -> bool:
    """Whether the claim's class binds WaitForFirstConsumer (upstream's IsDelayBindingMode;
    no class, or a class that does not exist, binds immediately)."""
    name = claim.storage_class_name
    if not name:
        return False
    cls = storage_class(name)
    return cls is not None and cls.waits_for_first_consumer


def is_delay_binding_provisioning(claim: PersistentVolumeClaim) -> bool:
    """Whether the scheduler has asked for the claim to be provisioned on a node."""
    return ANN_SELECTED_NODE in claim.annotations


def claim_is_for_pod(
    pod_namespace: str, pod_name: str, pod_uid: str, claim: PersistentVolumeClaim
) -> str | None:
    """None if the claim of a pod's generic ephemeral volume is owned (controlled) by the
    pod; else upstream's error (ephemeral.VolumeIsForPod)."""
    if claim.controller_uid and claim.controller_uid == pod_uid:
        return None
    return (
        f"PVC {claim.namespace}/{claim.name} was not created for pod "
        f"{pod_namespace}/{pod_name} (pod is not owner)"
    )


def pod_claim_names(pod_name: str, volumes: Sequence[Volume]) -> list[str]:
    """The claims a pod's volumes use, in volume order (ephemeral ones by their
    generated name)."""
    return [
        v.claim_name_for(pod_name)
        for v in volumes
        if v.kind in ("persistentVolumeClaim", "ephemeral")
    ]
