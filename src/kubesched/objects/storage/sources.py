"""Volume sources: what a pod's volume or a PersistentVolume says about where its data is.

The volume plugins read only a few sources: the claims (``persistentVolumeClaim``,
``ephemeral``), CSI, and the in-tree disks that VolumeRestrictions compares and that
NodeVolumeLimits counts through their CSI translation (GCE PD, AWS EBS, Azure Disk,
Cinder, vSphere, Portworx, RBD, iSCSI). Every other source (secret, configMap, emptyDir,
hostPath, nfs, ...) is kept by its JSON name only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.objects._decode import (
    Raw,
    as_map,
    get_bool,
    get_int,
    get_map,
    get_str,
    get_str_list,
    get_str_map,
    join,
)
from kubesched.objects.errors import ObjectError

# In-tree plugin names (``k8s.io/csi-translation-lib/plugins``).
GCE_PD_PLUGIN = "kubernetes.io/gce-pd"
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"
AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk"
CINDER_PLUGIN = "kubernetes.io/cinder"
VSPHERE_PLUGIN = "kubernetes.io/vsphere-volume"
PORTWORX_PLUGIN = "kubernetes.io/portworx-volume"

#: The JSON names of the in-tree disks, and their plugin names.
DISK_SOURCES: Mapping[str, str] = {
    "gcePersistentDisk": GCE_PD_PLUGIN,
    "awsElasticBlockStore": AWS_EBS_PLUGIN,
    "azureDisk": AZURE_DISK_PLUGIN,
    "cinder": CINDER_PLUGIN,
    "vsphereVolume": VSPHERE_PLUGIN,
    "portworxVolume": PORTWORX_PLUGIN,
}
#: The field that names the disk, per source.
_DISK_ID_FIELDS: Mapping[str, str] = {
    "gcePersistentDisk": "pdName",
    "awsElasticBlockStore": "volumeID",
    "azureDisk": "diskURI",
    "cinder": "volumeID",
    "vsphereVolume": "volumePath",
    "portworxVolume": "volumeID",
}

#: Every source member of v1.VolumeSource and v1.PersistentVolumeSource, by JSON name.
KNOWN_SOURCES = frozenset(
    {
        "persistentVolumeClaim",
        "ephemeral",
        "csi",
        "rbd",
        "iscsi",
        *DISK_SOURCES,
        "emptyDir",
        "hostPath",
        "gitRepo",
        "secret",
        "nfs",
        "glusterfs",
        "flocker",
        "cephfs",
        "quobyte",
        "downwardAPI",
        "fc",
        "flexVolume",
        "configMap",
        "azureFile",
        "photonPersistentDisk",
        "storageos",
        "projected",
        "scaleIO",
        "image",
        "local",
    }
)


@dataclass(frozen=True, slots=True)
class DiskSource:
    """An in-tree attachable disk (GCE PD, AWS EBS, Azure Disk, Cinder, vSphere,
    Portworx): ``disk_id`` is its pdName, volumeID, diskURI or volumePath."""

    plugin: str
    disk_id: str
    read_only: bool = False
    partition: int = 0
    fs_type: str = ""


@dataclass(frozen=True, slots=True)
class RBDSource:
    """A Ceph RBD image (``pool`` defaults to ``rbd``, as the API server does)."""

    monitors: tuple[str, ...]
    image: str
    pool: str = "rbd"
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class ISCSISource:
    """An iSCSI target's LUN."""

    target_portal: str
    iqn: str
    lun: int = 0
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class CSISource:
    """A CSI volume: ``volume_handle`` on a PersistentVolume, empty inline in a pod."""

    driver: str
    volume_handle: str = ""
    read_only: bool = False
    fs_type: str = ""
    volume_attributes: Mapping[str, str] = field(default_factory=dict)


Source = DiskSource | RBDSource | ISCSISource | CSISource


@dataclass(frozen=True, slots=True)
class Volume:
    """One entry of a pod's ``spec.volumes``.

    ``kind`` is the JSON name of its source (``persistentVolumeClaim``, ``secret``...);
    ``claim_name`` is set for ``persistentVolumeClaim`` volumes; ``source`` for the
    sources the volume plugins read (disks, RBD, iSCSI, CSI).
    """

    name: str
    kind: str
    claim_name: str = ""
    read_only: bool = False
    source: Source | None = None

    @property
    def is_ephemeral(self) -> bool:
        """A generic ephemeral volume: its claim is ``<pod>-<volume>``, owned by the pod."""
        return self.kind == "ephemeral"

    def claim_name_for(self, pod_name: str) -> str:
        """The claim this volume uses in pod ``pod_name`` ("" for none): the named claim,
        or an ephemeral volume's ``<pod>-<volume>`` (upstream's ephemeral.VolumeClaimName)."""
        if self.kind == "ephemeral":
            return f"{pod_name}-{self.name}"
        return self.claim_name


def decode_source(kind: str, raw: Raw, path: str) -> Source | None:
    """The typed source of JSON member ``kind`` (``raw`` at ``path``); None for the sources
    the scheduler does not read."""
    plugin = DISK_SOURCES.get(kind)
    if plugin is not None:
        return DiskSource(
            plugin=plugin,
            disk_id=get_str(raw, _DISK_ID_FIELDS[kind], path),
            read_only=get_bool(raw, "readOnly", path),
            partition=get_int(raw, "partition", path, 0) or 0,
            fs_type=get_str(raw, "fsType", path),
        )
    if kind == "rbd":
        return RBDSource(
            monitors=get_str_list(raw, "monitors", path),
            image=get_str(raw, "image", path),
            pool=get_str(raw, "pool", path) or "rbd",
            read_only=get_bool(raw, "readOnly", path),
        )
    if kind == "iscsi":
        return ISCSISource(
            target_portal=get_str(raw, "targetPortal", path),
            iqn=get_str(raw, "iqn", path),
            lun=get_int(raw, "lun", path, 0) or 0,
            read_only=get_bool(raw, "readOnly", path),
        )
    if kind == "csi":
        return CSISource(
            driver=get_str(raw, "driver", path),
            volume_handle=get_str(raw, "volumeHandle", path),
            read_only=get_bool(raw, "readOnly", path),
            fs_type=get_str(raw, "fsType", path),
            volume_attributes=get_str_map(raw, "volumeAttributes", path),
        )
    return None


def source_member(raw: Raw, path: str) -> tuple[str, Raw]:
    """The (JSON name, value) of the one source member set in ``raw`` (a VolumeSource or
    a PersistentVolumeSource); ("", {}) when none is."""
    for key, value in raw.items():
        if key in KNOWN_SOURCES and value is not None:
            return key, as_map(value, join(path, key))
    return "", {}


def decode_volume(raw: object, path: str) -> Volume:
    """Decode one v1.Volume of a pod's ``spec.volumes``."""
    obj = as_map(raw, path)
    name = get_str(obj, "name", path)
    kind, member = source_member(obj, path)
    member_path = join(path, kind)
    if kind == "persistentVolumeClaim":
        claim = get_str(member, "claimName", member_path)
        if not claim:
            raise ObjectError(join(member_path, "claimName"), "Required value")
        return Volume(name, kind, claim, get_bool(member, "readOnly", member_path))
    if kind == "ephemeral":
        get_map(member, "volumeClaimTemplate", member_path)  # type-checked only
        return Volume(name, kind)
    source = decode_source(kind, member, member_path) if kind else None
    read_only = source.read_only if source is not None else False
    return Volume(name, kind, read_only=read_only, source=source)


def has_storage_volumes(pod: _HasVolumes) -> bool:
    """Whether any of the pod's volumes is storage the volume plugins look at: a claim,
    a generic ephemeral volume, a disk, RBD, iSCSI or CSI (secrets, configMaps, emptyDirs
    and the like are not)."""
    return any(v.source is not None or v.kind in _CLAIM_KINDS for v in pod.volumes)


_CLAIM_KINDS = frozenset({"persistentVolumeClaim", "ephemeral"})


class _HasVolumes(Protocol):
    @property
    def volumes(self) -> tuple[Volume, ...]: ...
