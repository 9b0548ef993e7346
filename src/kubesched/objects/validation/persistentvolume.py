"""PersistentVolumes and PersistentVolumeClaims as ``pkg/apis/core/validation`` checks them.

PersistentVolume (``ValidatePersistentVolumeSpec``): access modes (at least one, known,
ReadWriteOncePod alone), a positive ``storage`` capacity and nothing else, a known reclaim
policy, node affinity with required terms, exactly one volume source with its own checks
(a ``local`` volume needs node affinity), class and volume mode. On update the source and
the volume mode are immutable, and node affinity once set
(``ValidatePersistentVolumeUpdate``).

PersistentVolumeClaim (``ValidatePersistentVolumeClaimSpec``): access modes, a positive
``resources.requests.storage``, selector, class, volume mode, data sources. On update
(``ValidatePersistentVolumeClaimUpdate``) the spec is immutable except: ``volumeName`` may
be set once, a nil ``storageClassName`` may be set once, and a bound claim's storage
request (and volume attributes class) may change; the request may not shrink to or below
``status.capacity``. Whether a bigger request is allowed at all is the
PersistentVolumeClaimResize admission's business (:mod:`kubesched.apiserver.storage`).

Where upstream's message appends ``cmp.Diff`` of two Go structs, ours appends a diff of
the JSON fields that changed (``- key: old`` / ``+ key: new``).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import Any

from kubesched.objects.quantity import Quantity
from kubesched.objects.validation.affinity import node_selector_term
from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    annotation_map,
    as_dict,
    as_list,
    dns1123_label,
    forbidden,
    go_quote,
    immutable,
    invalid,
    is_dns1123_subdomain,
    label_selector,
    labels,
    name_is_dns_subdomain,
    not_supported,
    quantity,
    required,
    too_long,
)
from kubesched.objects.validation.volumes import host_path_source, nfs_source, no_backsteps

#: ``supportedAccessModes`` as ``sets.List`` prints them (sorted).
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
#: ``core.BetaStorageClassAnnotation``: the class before ``storageClassName`` existed.
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
_MORE_THAN_ONE = "may not specify more than 1 volume type"
_NOT_PVC = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
CLAIM_SPEC_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


def class_name(value: str, path: str) -> Errors:
    """``ValidateClassName`` (a DNS subdomain), as Invalid errors at ``path``."""
    return [invalid(path, value, p) for p in name_is_dns_subdomain(value, False)]


def csi_driver_name(name: str, path: str) -> Errors:
    """``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain (in lower case)."""
    errs = [required(path)] if not name else []
    if len(name) > 63:
        errs.append(too_long(path, 63))
    errs.extend(invalid(path, name, p) for p in is_dns1123_subdomain(name.lower()))
    return errs


def access_modes(modes: Any, path: str) -> Errors:
    """The access-mode rules PersistentVolumes and claims share (after "required")."""
    errs: Errors = []
    rwop = other = False
    for mode in as_list(modes):
        if mode not in ACCESS_MODES:
            errs.append(not_supported(path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _positive(amount: Quantity, path: str) -> Errors:
    # ValidatePositiveQuantityValue: the value printed as its canonical string.
    if amount.value <= 0:
        return [invalid(path, str(amount), "must be greater than zero")]
    return []


def _resource_list(value: dict[str, Any]) -> GoValue:
    # The bad value of a ResourceList; Go's %#v of the quantities' structs is shortened to
    # their strings.
    body = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(value.items()))
    return GoValue("core.ResourceList{" + body + "}")


def json_diff(old: Any, new: Any) -> str:
    """The fields of two JSON objects that differ, one ``-``/``+`` line pair each."""
    olds, news = as_dict(old), as_dict(new)
    lines = []
    for key in sorted(olds.keys() | news.keys()):
        if olds.get(key) != news.get(key):
            for sign, side in (("-", olds), ("+", news)):
                if key in side:
                    lines.append(f"{sign} {key}: {json.dumps(side[key], sort_keys=True)}")
    return "\n".join(lines)


# -- volume sources -------------------------------------------------------------------------


def _secret_ref(ref: dict[str, Any], path: str) -> Errors:
    # validatePVSecretReference.
    name, namespace = str(ref.get("name") or ""), str(ref.get("namespace") or "")
    errs: Errors = []
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(invalid(f"{path}.name", name, p) for p in is_dns1123_subdomain(name))
    if not namespace:
        errs.append(required(f"{path}.namespace"))
    else:
        errs.extend(dns1123_label(namespace, f"{path}.namespace"))
    return errs


def _csi(src: dict[str, Any], path: str) -> Errors:
    errs = csi_driver_name(str(src.get("driver") or ""), f"{path}.driver")
    if not src.get("volumeHandle"):
        errs.append(required(f"{path}.volumeHandle"))
    for key in (
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ):
        ref = src.get(key)
        if isinstance(ref, dict):
            errs.extend(_secret_ref(ref, f"{path}.{key}"))
    return errs


def _local(src: dict[str, Any], path: str) -> Errors:
    text = str(src.get("path") or "")
    if not text:
        return [required(f"{path}.path")]
    return no_backsteps(text, f"{path}.path")


def _required_fields(*keys: str) -> Callable[[dict[str, Any], str], Errors]:
    # The network and cloud sources: the fields their validators require.
    def check(src: dict[str, Any], path: str) -> Errors:
        return [required(f"{path}.{key}") for key in keys if not src.get(key)]

    return check


#: PersistentVolumeSource members in upstream's order: JSON name, the path its errors use
#: (gcePersistentDisk's contents are reported under ``persistentDisk``, cephfs's
#: "more than 1" under ``cephFS``, as upstream does), and its contents check.
_PV_SOURCES: tuple[tuple[str, str, str, Callable[[dict[str, Any], str], Errors]], ...] = (
    ("hostPath", "hostPath", "hostPath", host_path_source),
    (
        "gcePersistentDisk",
        "gcePersistentDisk",
        "persistentDisk",
        _required_fields("pdName"),
    ),
    ("awsElasticBlockStore", "awsElasticBlockStore", "", _required_fields("volumeID")),
    ("glusterfs", "glusterfs", "", _required_fields("endpoints", "path")),
    ("flocker", "flocker", "", _required_fields()),
    ("nfs", "nfs", "", nfs_source),
    ("rbd", "rbd", "", _required_fields("monitors", "image")),
    ("quobyte", "quobyte", "", _required_fields("registry", "volume")),
    ("cephfs", "cephFS", "cephfs", _required_fields("monitors")),
    ("iscsi", "iscsi", "", _required_fields("targetPortal", "iqn")),
    ("cinder", "cinder", "", _required_fields("volumeID")),
    ("fc", "fc", "", _required_fields()),
    ("flexVolume", "flexVolume", "", _required_fields("driver")),
    ("azureFile", "azureFile", "", _required_fields("secretName", "shareName")),
    ("vsphereVolume", "vsphereVolume", "", _required_fields("volumePath")),
    ("photonPersistentDisk", "photonPersistentDisk", "", _required_fields("pdID")),
    ("portworxVolume", "portworxVolume", "", _required_fields("volumeID")),
    ("azureDisk", "azureDisk", "", _required_fields("diskName", "diskURI")),
    ("scaleIO", "scaleIO", "", _required_fields("gateway", "system", "volumeName")),
    ("local", "local", "", _local),
    ("storageos", "storageos", "", _required_fields("volumeName")),
    ("csi", "csi", "", _csi),
)
#: The JSON names of every PersistentVolumeSource member (``spec.persistentvolumesource``).
PV_SOURCE_KEYS = tuple(entry[0] for entry in _PV_SOURCES)


def _sources(spec: dict[str, Any], affinity_set: bool, path: str) -> Errors:
    errs: Errors = []
    count = 0
    for key, forbidden_at, contents_at, check in _PV_SOURCES:
        src = spec.get(key)
        if src is None:
            continue
        # flexVolume is counted without the check (as upstream's validator does).
        if count > 0 and key != "flexVolume":
            errs.append(forbidden(f"{path}.{forbidden_at}", _MORE_THAN_ONE))
            continue
        count += 1
        errs.extend(check(as_dict(src), f"{path}.{contents_at or key}"))
        if key == "local" and not affinity_set:
            errs.append(required(f"{path}.nodeAffinity", "Local volume requires node affinity"))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))
    return errs


def _node_affinity(value: Any, path: str) -> Errors:
    # validateVolumeNodeAffinity: required terms, each a valid node selector term.
    at = f"{path}.nodeAffinity.required"
    node_selector = value.get("required") if isinstance(value, dict) else None
    if not isinstance(node_selector, dict):
        return [required(at, "must specify required node constraints")]
    terms = as_list(node_selector.get("nodeSelectorTerms"))
    if not terms:
        return [required(f"{at}.nodeSelectorTerms", "must have at least one node selector term")]
    errs: Errors = []
    for i, term in enumerate(terms):
        errs.extend(node_selector_term(as_dict(term), f"{at}.nodeSelectorTerms[{i}]", True))
    return errs


def _capacity(spec: dict[str, Any], path: str) -> Errors:
    capacity = as_dict(spec.get("capacity"))
    at = f"{path}.capacity"
    errs: Errors = []
    if not capacity:
        errs.append(required(at))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported(at, _resource_list(capacity), ("storage",)))
    for name in sorted(capacity):
        amount = quantity(capacity[name])
        if amount.value < 0:  # validateBasicResource
            errs.append(
                invalid(f"{at}[{name}]", amount.int_value(), "must be a valid resource quantity")
            )
        errs.extend(_positive(amount, f"{at}[{name}]"))
    return errs


_INLINE = "in the context of inline volumes"


def _inline_rules(spec: dict[str, Any], path: str) -> Errors:
    # The parts of ValidatePersistentVolumeSpec that refuse what an inline volume (a
    # VolumeAttachment's inlineVolumeSpec) may not have.
    errs: Errors = []
    if spec.get("claimRef") is not None:
        errs.append(forbidden(f"{path}.claimRef", f"may not be specified {_INLINE}"))
    if as_dict(spec.get("capacity")):
        errs.append(forbidden(f"{path}.capacity", f"may not be specified {_INLINE}"))
    if spec.get("csi") is None:
        errs.append(required(f"{path}.csi", f"has to be specified {_INLINE}"))
    return errs


def volume_spec(spec: dict[str, Any], path: str, inline: bool = False) -> Errors:
    """``ValidatePersistentVolumeSpec`` at ``path``; ``inline`` for a VolumeAttachment's
    inline volume (no claim, capacity, node affinity or class; Retain and Filesystem
    only; a CSI source)."""
    errs = _inline_rules(spec, path) if inline else []
    if not as_list(spec.get("accessModes")):
        errs.append(required(f"{path}.accessModes"))
    errs.extend(access_modes(spec.get("accessModes"), f"{path}.accessModes"))
    if not inline:
        errs.extend(_capacity(spec, path))
    policy = spec.get("persistentVolumeReclaimPolicy")
    at = f"{path}.persistentVolumeReclaimPolicy"
    if policy and inline and policy != "Retain":
        errs.append(forbidden(at, f"may only be Retain {_INLINE}"))
    elif policy and not inline and policy not in RECLAIM_POLICIES:
        errs.append(not_supported(at, policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    if affinity is not None and inline:
        errs.append(forbidden(f"{path}.nodeAffinity", f"may not be specified {_INLINE}"))
    elif affinity is not None:
        errs.extend(_node_affinity(affinity, path))
    errs.extend(_sources(spec, affinity is not None and not inline, path))
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and policy == "Recycle":
        text = str(host_path.get("path") or "")
        if text.startswith("/") and posixpath.normpath("/" + text.lstrip("/")) == "/":
            errs.append(forbidden(at, "may not be 'recycle' for a hostPath mount of '/'"))
    class_ = spec.get("storageClassName")
    if class_ and inline:
        errs.append(forbidden(f"{path}.storageClassName", f"may not be specified {_INLINE}"))
    elif class_:
        errs.extend(class_name(str(class_), f"{path}.storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and inline and mode != "Filesystem":
        errs.append(
            forbidden(
                f"{path}.volumeMode", f"may not specify volumeMode other than Filesystem {_INLINE}"
            )
        )
    elif mode is not None and not inline and mode not in VOLUME_MODES:
        errs.append(not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    attributes = spec.get("volumeAttributesClassName")
    if attributes is not None and not inline:
        at = f"{path}.volumeAttributesClassName"
        if not attributes:
            errs.append(required(at, "an empty string is disallowed"))
        else:
            errs.extend(class_name(str(attributes), at))
        if spec.get("csi") is None:
            errs.append(
                required(f"{path}.csi", "has to be specified when using volumeAttributesClassName")
            )
    return errs


#: ``MountOptionAnnotation``: mount options from before ``spec.mountOptions``.
MOUNT_OPTIONS = "volume.beta.kubernetes.io/mount-options"
#: The sources whose plugins take mount options (``checkMountOption``).
_MOUNTABLE = frozenset(
    {
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "glusterfs",
        "nfs",
        "rbd",
        "quobyte",
        "iscsi",
        "cinder",
        "cephfs",
        "azureFile",
        "vsphereVolume",
        "azureDisk",
        "photonPersistentDisk",
    }
)


def _mount_options(obj: Object) -> Errors:
    # pkg/volume/validation's ValidatePersistentVolume, which the PV strategy adds.
    spec = as_dict(obj.get("spec"))
    if any(spec.get(key) is not None for key in _MOUNTABLE):
        return []
    if MOUNT_OPTIONS in as_dict(as_dict(obj.get("metadata")).get("annotations")):
        return [
            forbidden(
                f"metadata.annotations.{MOUNT_OPTIONS}",
                "may not specify mount options for this volume type",
            )
        ]
    return []


def persistent_volume(obj: Object) -> Errors:
    """``ValidatePersistentVolume`` after the metadata (``ValidatePersistentVolumeSpec``),
    and the mount-options annotation check the strategy adds."""
    return volume_spec(as_dict(obj.get("spec")), "spec") + _mount_options(obj)


def _pv_source(spec: dict[str, Any]) -> dict[str, Any]:
    return {key: spec[key] for key in PV_SOURCE_KEYS if spec.get(key) is not None}


def persistent_volume_update(new: Object, old: Object) -> Errors:
    """``ValidatePersistentVolumeUpdate``: the volume re-validated, its source and volume
    mode immutable (a CSI source may gain a ``controllerExpandSecretRef``), node affinity
    immutable once set, the volume attributes class never unset."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    errs = persistent_volume(new)
    source, old_source = _pv_source(spec), _pv_source(old_spec)
    csi, old_csi = source.get("csi"), old_source.get("csi")
    if (
        isinstance(csi, dict)
        and isinstance(old_csi, dict)
        and old_csi.get("controllerExpandSecretRef") is None
    ):
        source["csi"] = {k: v for k, v in csi.items() if k != "controllerExpandSecretRef"}
    if source != old_source:
        errs.append(
            forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation\n"
                + json_diff(old_source, source),
            )
        )
    errs.extend(immutable("volumeMode", spec.get("volumeMode"), old_spec.get("volumeMode")))
    old_affinity = old_spec.get("nodeAffinity")
    if old_affinity is not None and spec.get("nodeAffinity") != old_affinity:
        shown = json.dumps(spec.get("nodeAffinity"), sort_keys=True, separators=(",", ":"))
        errs.append(invalid("nodeAffinity", GoValue(shown), "field is immutable"))
    if (
        old_spec.get("volumeAttributesClassName") is not None
        and spec.get("volumeAttributesClassName") is None
    ):
        errs.append(
            forbidden(
                "spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"
            )
        )
    return errs


# -- claims ---------------------------------------------------------------------------------


def _data_source(ref: dict[str, Any], path: str, namespaced: bool) -> Errors:
    # validateDataSource / validateDataSourceRef.
    errs: Errors = []
    if not ref.get("name"):
        errs.append(required(f"{path}.name"))
    kind = str(ref.get("kind") or "")
    if not kind:
        errs.append(required(f"{path}.kind"))
    group = str(ref.get("apiGroup") or "")
    if not group and kind != "PersistentVolumeClaim":
        errs.append(invalid(path, kind, _NOT_PVC))
    if group:
        errs.extend(invalid(f"{path}.apiGroup", group, p) for p in is_dns1123_subdomain(group))
    namespace = str(ref.get("namespace") or "") if namespaced else ""
    if namespace:
        errs.extend(dns1123_label(namespace, f"{path}.namespace"))
    return errs


def _same_source(source: dict[str, Any], ref: dict[str, Any]) -> bool:
    return all(source.get(k) == ref.get(k) for k in ("apiGroup", "kind", "name"))


def claim_spec(spec: dict[str, Any], path: str) -> Errors:
    """``ValidatePersistentVolumeClaimSpec`` at ``path``."""
    errs: Errors = []
    modes = spec.get("accessModes")
    if not as_list(modes):
        errs.append(required(f"{path}.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs.extend(label_selector(spec.get("selector"), f"{path}.selector"))
    errs.extend(access_modes(modes, f"{path}.accessModes"))
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    at = f"{path}.resources[storage]"
    if "storage" not in requests:
        errs.append(required(at))
    else:
        errs.extend(_positive(quantity(requests["storage"]), at))
    class_ = spec.get("storageClassName")
    if class_:
        errs.extend(class_name(str(class_), f"{path}.storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(source, dict):
        errs.extend(_data_source(source, f"{path}.dataSource", False))
    if isinstance(ref, dict):
        errs.extend(_data_source(ref, f"{path}.dataSourceRef", True))
    if isinstance(ref, dict) and ref.get("namespace"):
        if isinstance(source, dict):
            errs.append(
                invalid(
                    path,
                    GoValue(f"{path}.dataSource"),
                    "may not be specified when dataSourceRef.namespace is specified",
                )
            )
    elif isinstance(source, dict) and isinstance(ref, dict) and not _same_source(source, ref):
        errs.append(invalid(path, GoValue(f"{path}.dataSource"), "must match dataSourceRef"))
    attributes = spec.get("volumeAttributesClassName")
    if attributes:
        errs.extend(class_name(str(attributes), f"{path}.volumeAttributesClassName"))
    return errs


#: ObjectMeta's fields in struct order, for ``validateFieldAllowList``.
_META_FIELDS = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


def claim_template(template: dict[str, Any], path: str) -> Errors:
    """``ValidatePersistentVolumeClaimTemplate`` at ``path`` (an ephemeral volume's
    ``volumeClaimTemplate``): metadata with labels and annotations only, a claim spec."""
    meta = as_dict(template.get("metadata"))
    errs = annotation_map(meta.get("annotations"), f"{path}.metadata.annotations")
    errs.extend(labels(meta.get("labels"), f"{path}.metadata.labels"))
    for key in _META_FIELDS:
        if key not in ("labels", "annotations") and meta.get(key):
            errs.append(forbidden(f"{path}.metadata.{key}", "cannot be set"))
    return errs + claim_spec(as_dict(template.get("spec")), f"{path}.spec")


def ephemeral_source(src: dict[str, Any], path: str) -> Errors:
    """``validateEphemeralVolumeSource``: a pod volume's claim template."""
    template = src.get("volumeClaimTemplate")
    if not isinstance(template, dict):
        return [required(f"{path}.volumeClaimTemplate")]
    return claim_template(template, f"{path}.volumeClaimTemplate")


def persistent_volume_claim(obj: Object) -> Errors:
    """``ValidatePersistentVolumeClaim`` after the metadata."""
    return claim_spec(as_dict(obj.get("spec")), "spec")


def _annotations(obj: Object) -> dict[str, Any]:
    return as_dict(as_dict(obj.get("metadata")).get("annotations"))


def _class_from_annotation(new: Object, old: Object) -> bool:
    # validateStorageClassUpgradeFromAnnotation: the beta annotation's class moves into
    # storageClassName.
    old_ann, new_ann = _annotations(old), _annotations(new)
    old_class = as_dict(old.get("spec")).get("storageClassName")
    new_class = as_dict(new.get("spec")).get("storageClassName")
    return (
        BETA_STORAGE_CLASS in old_ann
        and old_class is None
        and new_class is not None
        and new_class == old_ann[BETA_STORAGE_CLASS]
        and (BETA_STORAGE_CLASS not in new_ann or new_ann[BETA_STORAGE_CLASS] == new_class)
    )


def _storage(spec: dict[str, Any]) -> Quantity | None:
    value = as_dict(as_dict(spec.get("resources")).get("requests")).get("storage")
    return quantity(value) if value is not None else None


def persistent_volume_claim_update(new: Object, old: Object) -> Errors:
    """``ValidatePersistentVolumeClaimUpdate`` (the claim itself is validated too)."""
    errs = persistent_volume_claim(new)
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    compared, old_compared = json.loads(json.dumps(spec)), json.loads(json.dumps(old_spec))
    if not old_spec.get("volumeName"):
        # The PV controller binds a claim by setting volumeName: allowed once.
        old_compared["volumeName"] = compared.get("volumeName")
        if old_compared["volumeName"] is None:
            del old_compared["volumeName"]
    if _class_from_annotation(new, old):
        compared.pop("storageClassName", None)
    else:
        new_ann = _annotations(new).get(BETA_STORAGE_CLASS, "")
        old_ann = _annotations(old).get(BETA_STORAGE_CLASS, "")
        if new_ann != old_ann:
            errs.append(
                invalid(f"metadata.annotations.{BETA_STORAGE_CLASS}", new_ann, "field is immutable")
            )
        new_class = spec.get("storageClassName")
        old_has_ann = BETA_STORAGE_CLASS in _annotations(old)
        if (
            new_class is not None
            and old_spec.get("storageClassName") is None
            and (not old_has_ann or new_class == _annotations(old)[BETA_STORAGE_CLASS])
        ):
            # validateStorageClassUpgradeFromNil: a claim without a class may get one.
            compared["storageClassName"] = old_spec.get("storageClassName")
            if compared["storageClassName"] is None:
                del compared["storageClassName"]
    bound = as_dict(new.get("status")).get("phase") == "Bound"
    if bound:
        requests = as_dict(compared.get("resources")).get("requests")
        if isinstance(requests, dict):
            old_request = as_dict(as_dict(old_spec.get("resources")).get("requests"))
            if "storage" in old_request:
                requests["storage"] = old_request["storage"]
            else:
                requests.pop("storage", None)
        if compared.get("volumeAttributesClassName") is not None:
            if old_spec.get("volumeAttributesClassName") is None:
                del compared["volumeAttributesClassName"]
            else:
                compared["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"]
    if _semantic(compared) != _semantic(old_compared):
        errs.append(
            forbidden("spec", CLAIM_SPEC_IMMUTABLE + "\n" + json_diff(old_compared, compared))
        )
    size, old_size = _storage(spec), _storage(old_spec)
    if size is not None and old_size is not None and size < old_size:
        # RecoverVolumeExpansionFailure (GA in 1.34): shrink back, but not below the capacity.
        capacity = as_dict(as_dict(old.get("status")).get("capacity")).get("storage")
        if capacity is not None and size <= quantity(capacity):
            errs.append(
                forbidden(
                    "spec.resources.requests.storage", "field can not be less than status.capacity"
                )
            )
    errs.extend(immutable("volumeMode", spec.get("volumeMode"), old_spec.get("volumeMode")))
    old_attributes = old_spec.get("volumeAttributesClassName")
    attributes = spec.get("volumeAttributesClassName")
    if old_attributes is not None and attributes != old_attributes:
        if attributes is None:
            errs.append(
                forbidden(
                    "spec.volumeAttributesClassName",
                    "update from non-nil value to nil is forbidden",
                )
            )
        elif attributes == "":
            errs.append(
                forbidden(
                    "spec.volumeAttributesClassName",
                    "update from non-nil value to an empty string is forbidden",
                )
            )
    return errs


def _semantic(spec: Any) -> Any:
    # apiequality.Semantic: quantities compare by value (1Gi == 1024Mi).
    if isinstance(spec, dict):
        out = {}
        for key, value in spec.items():
            if key in ("requests", "limits") and isinstance(value, dict):
                out[key] = {k: quantity(v) for k, v in value.items()}
            else:
                out[key] = _semantic(value)
        return out
    if isinstance(spec, list):
        return [_semantic(v) for v in spec]
    return spec


_RESIZE_STATUSES = (
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
)


def persistent_volume_claim_status(new: Object) -> Errors:
    """``ValidatePersistentVolumeClaimStatusUpdate``: access modes still set, capacities
    and allocated resources valid quantities, resize statuses known."""
    spec, status = as_dict(new.get("spec")), as_dict(new.get("status"))
    errs: Errors = []
    if not as_list(spec.get("accessModes")):
        errs.append(required("Spec.accessModes"))  # sic: upstream's capital S
    for name, value in sorted(as_dict(status.get("capacity")).items()):
        amount = quantity(value)
        if amount.value < 0:
            at = f"status.capacity[{name}]"
            errs.append(invalid(at, amount.int_value(), "must be a valid resource quantity"))
    at = "status.allocatedResourceStatus"
    for name, value in sorted(as_dict(status.get("allocatedResourceStatuses")).items()):
        if value not in _RESIZE_STATUSES:
            errs.append(not_supported(at, name, _RESIZE_STATUSES))
    for name, value in sorted(as_dict(status.get("allocatedResources")).items()):
        amount = quantity(value)
        if amount.value < 0:
            errs.append(
                invalid(
                    f"status.allocatedResources[{name}]",
                    amount.int_value(),
                    "must be a valid resource quantity",
                )
            )
    return errs
