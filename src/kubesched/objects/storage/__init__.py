"""Storage objects as the scheduler, the simulator and the volume controllers read them:
PersistentVolumes and their claims, StorageClasses, the CSI objects, a pod's volume
sources, and the matching of claims to volumes."""

from kubesched.objects.storage.binding import (
    check_access_modes,
    check_volume_mode_mismatches,
    claim_is_for_pod,
    find_best_match_for_claim,
    find_matching_volume,
    is_delay_binding_mode,
    is_delay_binding_provisioning,
    is_volume_bound_to_claim,
    pod_claim_names,
    volume_node_affinity_matches,
)
from kubesched.objects.storage.persistentvolume import (
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.objects.storage.sources import (
    CSISource,
    DiskSource,
    ISCSISource,
    RBDSource,
    Source,
    Volume,
)
from kubesched.objects.storage.storageclass import (
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
)

#: Any of the storage objects (what a lister holds, what a cluster file may carry).
StorageObject = (
    PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
    | VolumeAttachment
)

__all__ = [
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSISource",
    "CSIStorageCapacity",
    "ClaimRef",
    "DiskSource",
    "ISCSISource",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "RBDSource",
    "Source",
    "StorageClass",
    "StorageObject",
    "TopologySelectorTerm",
    "Volume",
    "VolumeAttachment",
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
