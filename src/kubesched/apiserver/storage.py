"""What kube-apiserver decides about the storage kinds beyond defaulting and validation: the
registry strategies' status handling and three admission plugins.

- **Strategies** (``pkg/registry/core/persistentvolume``, ``persistentvolumeclaim``,
  ``pkg/registry/storage/volumeattachment``): a new PersistentVolume starts ``Pending``
  with ``status.lastPhaseTransitionTime`` set, a new claim ``Pending``, a new
  VolumeAttachment not attached, whatever the body says; a status write that changes a
  volume's phase stamps the transition time unless the writer set a new one. A claim's
  data sources are normalized as ``pkg/api/persistentvolumeclaim`` does: a ``dataSource``
  that is neither a claim nor a VolumeSnapshot is dropped when no ``dataSourceRef`` is
  given (and the old claim had no source), then each of the two fills the other.
- **DefaultStorageClass** (``plugin/pkg/admission/storage/storageclass/setdefault``): a
  claim created with no class at all (no ``storageClassName``, not even ``""``, and no beta
  annotation) gets the default class: the one annotated
  ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta annotation); of
  several, the newest, then the first by name.
- **StorageObjectInUseProtection** (``plugin/pkg/admission/storage/
  storageobjectinuseprotection``): new claims get the ``kubernetes.io/pvc-protection``
  finalizer and new volumes ``kubernetes.io/pv-protection``, so that neither goes away
  while in use (the protection controllers remove them).
- **PersistentVolumeClaimResize** (``plugin/pkg/admission/storage/persistentvolume/resize``):
  a bigger storage request is refused (403) unless the claim is bound and its class, the
  same before and after, has ``allowVolumeExpansion: true``.
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import (
    PERSISTENTVOLUMECLAIMS,
    PERSISTENTVOLUMES,
    STORAGECLASSES,
    VOLUMEATTACHMENTS,
    Resource,
)
from kubesched.apiserver.store import Store, now_rfc3339
from kubesched.apiserver.watch import Object
from kubesched.objects.quantity import QuantityError, parse_quantity_value

#: ``storageutil.IsDefaultStorageClassAnnotation`` and its beta form.
IS_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
#: ``core.BetaStorageClassAnnotation``.
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: The finalizers StorageObjectInUseProtection adds.
PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
#: The resize admission's refusals, word for word.
ONLY_BOUND = "Only bound persistent volume claims can be expanded"
NO_RESIZE = (
    "only dynamically provisioned pvc can be resized and the storageclass that provisions "
    "the pvc must support resize"
)


def _meta(obj: Object) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Object) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Object) -> dict[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def is_default_class(storage_class: Object) -> bool:
    """``storageutil.IsDefaultAnnotation``: the class says it is the cluster's default."""
    annotations = _meta(storage_class).get("annotations") or {}
    return "true" in (annotations.get(IS_DEFAULT_CLASS), annotations.get(BETA_IS_DEFAULT_CLASS))


def claim_class(claim: Object) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation first, then the spec."""
    annotations = _meta(claim).get("annotations") or {}
    if BETA_STORAGE_CLASS in annotations:
        return str(annotations[BETA_STORAGE_CLASS])
    return str(_spec(claim).get("storageClassName") or "")


def default_class(store: Store) -> Object | None:
    """``util.GetDefaultClass``: the newest class marked default (by name if created in
    the same second), or None."""
    defaults = [sc for sc in store.list(STORAGECLASSES).items if is_default_class(sc)]
    if not defaults:
        return None
    # Newest first (timestamps compare as RFC 3339 text), then names in ascending order.
    defaults.sort(key=lambda sc: str(_meta(sc).get("name") or ""))
    defaults.sort(key=lambda sc: str(_meta(sc).get("creationTimestamp") or ""), reverse=True)
    return defaults[0]


# -- strategies -----------------------------------------------------------------------------


def _source_in_use(spec: dict[str, Any]) -> bool:
    return spec.get("dataSource") is not None or spec.get("dataSourceRef") is not None


def _source_allowed(source: Any) -> bool:
    # dataSourceIsEnabled: the two kinds a claim could always be made from.
    if not isinstance(source, dict):
        return False
    group, kind = source.get("apiGroup") or "", source.get("kind")
    return (kind, group) in (
        ("PersistentVolumeClaim", ""),
        ("VolumeSnapshot", "snapshot.storage.k8s.io"),
    )


def _copy_reference(source: dict[str, Any]) -> dict[str, Any]:
    copied = {"kind": source.get("kind"), "name": source.get("name")}
    if source.get("apiGroup") is not None:
        copied["apiGroup"] = source["apiGroup"]
    return copied


def normalize_data_sources(spec: dict[str, Any], old_spec: dict[str, Any] | None) -> None:
    """``EnforceDataSourceBackwardsCompatibility`` then ``NormalizeDataSources``."""
    old_in_use = old_spec is not None and _source_in_use(old_spec)
    keeps_source = old_in_use or spec.get("dataSourceRef") is not None
    if not keeps_source and not _source_allowed(spec.get("dataSource")):
        spec.pop("dataSource", None)
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict) and ref is None:
        spec["dataSourceRef"] = _copy_reference(source)
    elif isinstance(ref, dict) and source is None and not ref.get("namespace"):
        spec["dataSource"] = _copy_reference(ref)


def prepare_for_create(res: Resource, obj: Object) -> None:
    """``PrepareForCreate``: the status a new volume, claim or attachment starts with; a
    claim's data sources normalized."""
    if res is PERSISTENTVOLUMES:
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
    elif res is PERSISTENTVOLUMECLAIMS:
        obj["status"] = {"phase": "Pending"}
        spec = obj.get("spec")
        if isinstance(spec, dict):
            normalize_data_sources(spec, None)
    elif res is VOLUMEATTACHMENTS:
        obj["status"] = {"attached": False}


def prepare_for_update(res: Resource, new: Object, old: Object, subresource: str) -> None:
    """``PrepareForUpdate``: a claim's data sources normalized (so that a client that
    omits ``dataSourceRef`` changes nothing); for the PersistentVolume
    status strategy, a phase change stamps ``lastPhaseTransitionTime`` unless the writer
    set a new one, and an unchanged phase keeps it."""
    if res is PERSISTENTVOLUMECLAIMS and subresource == "":
        spec, old_spec = new.get("spec"), old.get("spec")
        if isinstance(spec, dict) and isinstance(old_spec, dict):
            # The stored claim was normalized when written: upstream's second call, on
            # the old claim, changes nothing here.
            normalize_data_sources(spec, old_spec)
        return
    if res is not PERSISTENTVOLUMES or subresource != "status":
        return
    status, old_status = new.get("status"), _status(old)
    if not isinstance(status, dict):
        return
    stamp, old_stamp = (
        status.get("lastPhaseTransitionTime"),
        old_status.get("lastPhaseTransitionTime"),
    )
    if status.get("phase") == old_status.get("phase"):
        if stamp is None and old_stamp is not None:
            status["lastPhaseTransitionTime"] = old_stamp
    elif stamp is None or stamp == old_stamp:
        status["lastPhaseTransitionTime"] = now_rfc3339()


# -- admission ------------------------------------------------------------------------------


def _add_finalizer(obj: Object, name: str) -> None:
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = meta["finalizers"] = []
    if name not in finalizers:
        finalizers.append(name)


def admits(res: Resource) -> bool:
    """Whether the storage admission plugins look at new objects of ``res``."""
    return res is PERSISTENTVOLUMECLAIMS or res is PERSISTENTVOLUMES


def admit_create(store: Store, res: Resource, obj: Object) -> None:
    """The mutating admission of a new volume or claim: DefaultStorageClass, then
    StorageObjectInUseProtection (upstream's plugin order)."""
    if res is PERSISTENTVOLUMECLAIMS:
        spec = obj.setdefault("spec", {})
        annotations = _meta(obj).get("annotations") or {}
        if (
            isinstance(spec, dict)
            and spec.get("storageClassName") is None
            and BETA_STORAGE_CLASS not in annotations
        ):
            found = default_class(store)
            if found is not None:
                spec["storageClassName"] = _meta(found).get("name")
        _add_finalizer(obj, PVC_PROTECTION)
    elif res is PERSISTENTVOLUMES:
        _add_finalizer(obj, PV_PROTECTION)


def _storage_request(claim: Object) -> Any:
    requests = (_spec(claim).get("resources") or {}).get("requests") or {}
    try:
        return parse_quantity_value(requests.get("storage", 0))
    except (QuantityError, TypeError):
        return None  # validation has refused it already


def validate_update(store: Store, res: Resource, new: Object, old: Object, sub: str) -> None:
    """The validating admission of an update: PersistentVolumeClaimResize."""
    if res is not PERSISTENTVOLUMECLAIMS or sub != "":
        return
    size, old_size = _storage_request(new), _storage_request(old)
    if size is None or old_size is None or size <= old_size:
        return
    name = str(_meta(new).get("name") or "")
    if _status(old).get("phase") != "Bound":
        raise errors.forbidden(res.plural, name, ONLY_BOUND)
    class_name, old_class = claim_class(new), claim_class(old)
    allowed = False
    if class_name and class_name == old_class:
        try:
            storage_class = store.get(STORAGECLASSES, None, class_name)
        except errors.ApiError:
            storage_class = None
        allowed = storage_class is not None and storage_class.get("allowVolumeExpansion") is True
    if not allowed:
        raise errors.forbidden(res.plural, name, NO_RESIZE)
