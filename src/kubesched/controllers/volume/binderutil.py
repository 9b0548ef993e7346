"""What the PersistentVolume binder does to one object, as pure functions of plain dicts
(the binder writes back what it read, so it works on the JSON; the typed views of
:mod:`kubesched.objects.storage` are for deciding). After upstream's
``component-helpers/storage/volume`` (``GetBindVolumeToClaim``) and
``pkg/controller/volume/persistentvolume/util`` (``GetDefaultClass``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.kube.resources import RawObject
from kubesched.objects.storage.persistentvolume import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BOUND_BY_CONTROLLER,
)
from kubesched.objects.storage.storageclass import ANN_BETA_DEFAULT_CLASS, ANN_DEFAULT_CLASS

__all__ = [
    "annotations_of",
    "bind_volume_to_claim",
    "claim_has_class",
    "claim_key",
    "claim_reference",
    "default_class",
    "with_status",
]


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """The object's annotations (empty when it has none)."""
    found = (obj.get("metadata") or {}).get("annotations") or {}
    return found if isinstance(found, dict) else {}


def claim_key(claim: Mapping[str, Any]) -> str:
    """``namespace/name`` of a claim (``claimToClaimKey``)."""
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def claim_reference(claim: Mapping[str, Any]) -> dict[str, str]:
    """The ObjectReference a volume's ``spec.claimRef`` holds (``ref.GetReference``)."""
    meta = claim.get("metadata") or {}
    ref = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": str(meta.get("namespace") or "default"),
        "name": str(meta.get("name", "")),
        "uid": str(meta.get("uid", "")),
        "resourceVersion": str(meta.get("resourceVersion", "")),
    }
    return {k: v for k, v in ref.items() if v}


def claim_has_class(claim: Mapping[str, Any]) -> bool:
    """Whether the claim asks for a class, "" (no class) included
    (``PersistentVolumeClaimHasClass``): only a claim with neither the field nor the beta
    annotation may be given the default class."""
    if ANN_BETA_STORAGE_CLASS in annotations_of(claim):
        return True
    return (claim.get("spec") or {}).get("storageClassName") is not None


def _bound_to(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    ref = (volume.get("spec") or {}).get("claimRef")
    meta = claim.get("metadata") or {}
    if not isinstance(ref, dict):
        return False
    if ref.get("name") != meta.get("name"):
        return False
    if (ref.get("namespace") or "default") != (meta.get("namespace") or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def bind_volume_to_claim(volume: RawObject, claim: Mapping[str, Any]) -> tuple[RawObject, bool]:
    """``GetBindVolumeToClaim``: a copy of ``volume`` whose claimRef is ``claim`` (uid
    included), with ``pv.kubernetes.io/bound-by-controller`` when the volume was not
    already (pre-)bound to it; and whether anything changed."""
    clone = copy.deepcopy(volume)
    spec = clone.setdefault("spec", {})
    meta = claim.get("metadata") or {}
    dirty = False
    set_by_controller = not _bound_to(volume, claim)
    ref = spec.get("claimRef")
    if (
        not isinstance(ref, dict)
        or ref.get("name") != meta.get("name")
        or (ref.get("namespace") or "default") != (meta.get("namespace") or "default")
        or ref.get("uid") != meta.get("uid")
    ):
        spec["claimRef"] = claim_reference(claim)
        dirty = True
    if set_by_controller:
        found = clone.setdefault("metadata", {}).setdefault("annotations", {})
        if ANN_BOUND_BY_CONTROLLER not in found:
            found[ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
    return clone, dirty


def default_class(classes: Iterable[Mapping[str, Any]]) -> str | None:
    """The name of the default StorageClass (``GetDefaultClass``): among the classes
    annotated default, the newest, then the first by name; None if there is none."""
    marked = []
    for cls in classes:
        found = annotations_of(cls)
        if found.get(ANN_DEFAULT_CLASS) == "true" or found.get(ANN_BETA_DEFAULT_CLASS) == "true":
            meta = cls.get("metadata") or {}
            marked.append((str(meta.get("creationTimestamp") or ""), str(meta.get("name", ""))))
    if not marked:
        return None
    # RFC 3339 UTC timestamps of one format sort as their times do.
    newest = max(stamp for stamp, _ in marked)
    return min(name for stamp, name in marked if stamp == newest)


def with_status(obj: Mapping[str, Any], **fields: Any) -> RawObject:
    """A copy of ``obj`` whose status has ``fields`` (None removes one)."""
    clone = copy.deepcopy(dict(obj))
    status = dict(clone.get("status") or {})
    for name, value in fields.items():
        if value is None:
            status.pop(name, None)
        else:
            status[name] = value
    clone["status"] = status
    return clone
