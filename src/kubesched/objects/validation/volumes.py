"""Pod volumes as ``ValidateVolumes`` checks them, and the downward API selectors that
volumes and environment variables share (``validateObjectFieldSelector``,
``validateContainerResourceFieldSelector``).

A volume names exactly one source. The sources pods commonly use have their contents
checked (emptyDir, hostPath, secret, configMap, persistentVolumeClaim, downwardAPI,
projected, nfs, gitRepo, and ephemeral's claim template as a claim is checked); the cloud
and network sources only count towards "exactly one".
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    forbidden,
    invalid,
    is_int,
    not_supported,
    qualified_name,
    quantity,
    required,
)

#: Every VolumeSource member in upstream's order: JSON name, and the name upstream's
#: "more than 1 volume type" error gives it (two differ: its own spellings).
_SOURCES = (
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)
_HOST_PATH_TYPES = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
_FILE_MODE_MESSAGE = "must be a number between 0 and 0777 (octal), both inclusive"
_VOLUME_FIELD_PATHS = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
    }
)
#: ``validEnvDownwardAPIFieldPathExpressions``.
ENV_FIELD_PATHS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.serviceAccountName",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
#: What ``ConvertDownwardAPIFieldLabel`` accepts for pods in v1.
_CONVERTIBLE = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
_RESOURCE_FIELDS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_BYTE_DIVISORS = frozenset(
    ["1"] + [f"1{s}" for s in ("k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")]
)
_BYTE_DIVISOR_LIST = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def volumes(value: Any, path: str) -> tuple[dict[str, dict[str, Any]], Errors]:
    """``ValidateVolumes``: the volumes that passed (by name, for the mounts to find) and
    the errors of those that did not."""
    valid: dict[str, dict[str, Any]] = {}
    errs: Errors = []
    for i, volume in enumerate(as_list(value)):
        vol = as_dict(volume)
        at = f"{path}[{i}]"
        name = str(vol.get("name") or "")
        found = _source(vol, at)
        if not name:
            found.append(required(f"{at}.name"))
        else:
            found.extend(dns1123_label(name, f"{at}.name"))
        if name in valid:
            found.append(duplicate(f"{at}.name", name))
        if found:
            errs.extend(found)
        else:
            valid[name] = vol
    return valid, errs


_SOURCE_ORDER = {key: i for i, (key, _) in enumerate(_SOURCES)}


def _source(vol: dict[str, Any], path: str) -> Errors:
    # validateVolumeSource: the first source counts, each further one is forbidden. Only
    # the keys present are looked at (a volume has a name and, usually, one source).
    errs: Errors = []
    count = 0
    present = sorted(
        _SOURCE_ORDER[k] for k, v in vol.items() if v is not None and k in _SOURCE_ORDER
    )
    for index in present:
        key, shown = _SOURCES[index]
        source = vol[key]
        if count:
            errs.append(forbidden(f"{path}.{shown}", "may not specify more than 1 volume type"))
            continue
        count += 1
        check = _CONTENTS.get(key)
        if check is not None:
            errs.extend(check(as_dict(source), f"{path}.{key}"))
    if not count:
        errs.append(required(path, "must specify a volume type"))
    return errs


def _empty_dir(src: dict[str, Any], path: str) -> Errors:
    limit = src.get("sizeLimit")
    if limit is not None and quantity(limit).value < 0:
        return [forbidden(f"{path}.sizeLimit", "SizeLimit field must be a valid resource quantity")]
    return []


def _host_path(src: dict[str, Any], path: str) -> Errors:
    text = str(src.get("path") or "")
    if not text:
        return [required(f"{path}.path")]
    errs = no_backsteps(text, f"{path}.path")
    kind = src.get("type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        errs.append(not_supported(f"{path}.type", kind, _HOST_PATH_TYPES))
    return errs


def _git_repo(src: dict[str, Any], path: str) -> Errors:
    errs = [] if src.get("repository") else [required(f"{path}.repository")]
    return errs + local_descending(str(src.get("directory") or ""), f"{path}.directory")


def _nfs(src: dict[str, Any], path: str) -> Errors:
    errs = [] if src.get("server") else [required(f"{path}.server")]
    text = str(src.get("path") or "")
    if not text:
        errs.append(required(f"{path}.path"))
    if not text.startswith("/"):
        errs.append(invalid(f"{path}.path", text, "must be an absolute path"))
    return errs


def _mode(value: Any, path: str) -> Errors:
    if is_int(value) and not 0 <= value <= 0o777:
        return [invalid(path, value, _FILE_MODE_MESSAGE)]
    return []


def _secret(src: dict[str, Any], path: str) -> Errors:
    errs = [] if src.get("secretName") else [required(f"{path}.secretName")]
    errs.extend(_mode(src.get("defaultMode"), f"{path}.defaultMode"))
    for i, item in enumerate(as_list(src.get("items"))):
        errs.extend(_key_to_path(as_dict(item), f"{path}.items[{i}]"))
    return errs


def _config_map(src: dict[str, Any], path: str) -> Errors:
    errs = [] if src.get("name") else [required(f"{path}.name")]
    errs.extend(_mode(src.get("defaultMode"), f"{path}.defaultMode"))
    for i, item in enumerate(as_list(src.get("items"))):
        errs.extend(_key_to_path(as_dict(item), f"{path}.items[{i}]"))
    return errs


def _key_to_path(item: dict[str, Any], path: str) -> Errors:
    errs = [] if item.get("key") else [required(f"{path}.key")]
    target = str(item.get("path") or "")
    if not target:
        errs.append(required(f"{path}.path"))
    errs.extend(local_non_reserved(target, f"{path}.path"))
    errs.extend(_mode(item.get("mode"), f"{path}.mode"))
    return errs


def _claim(src: dict[str, Any], path: str) -> Errors:
    return [] if src.get("claimName") else [required(f"{path}.claimName")]


def _downward_api(src: dict[str, Any], path: str) -> Errors:
    errs = _mode(src.get("defaultMode"), f"{path}.defaultMode")
    for item in as_list(src.get("items")):
        # Upstream reports every item's errors at the source's path, not the item's.
        errs.extend(_downward_file(as_dict(item), path))
    return errs


def _downward_file(item: dict[str, Any], path: str) -> Errors:
    target = str(item.get("path") or "")
    errs = [] if target else [required(f"{path}.path")]
    errs.extend(local_non_reserved(target, f"{path}.path"))
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if field_ref is not None:
        errs.extend(field_selector(as_dict(field_ref), _VOLUME_FIELD_PATHS, f"{path}.fieldRef"))
        if resource_ref is not None:
            errs.append(
                invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                )
            )
    elif resource_ref is not None:
        errs.extend(
            resource_field_selector(as_dict(resource_ref), f"{path}.resourceFieldRef", True)
        )
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    errs.extend(_mode(item.get("mode"), f"{path}.mode"))
    return errs


def _projected(src: dict[str, Any], path: str) -> Errors:
    errs = _mode(src.get("defaultMode"), f"{path}.defaultMode")
    paths: set[str] = set()

    def claim_path(target: str, shown: Any) -> None:
        if target in paths:
            errs.append(invalid(path, shown, "conflicting duplicate paths"))
        paths.add(target)

    for i, source in enumerate(as_list(src.get("sources"))):
        at = f"{path}.sources[{i}]"
        entry = as_dict(source)
        count = 0
        for kind in ("secret", "configMap"):
            if entry.get(kind) is None:
                continue
            count += 1
            ref = as_dict(entry[kind])
            if not ref.get("name"):
                errs.append(required(f"{at}.{kind}.name"))
            for j, item in enumerate(as_list(ref.get("items"))):
                key_path = as_dict(item)
                errs.extend(_key_to_path(key_path, f"{at}.{kind}.items[{j}]"))
                if key_path.get("path"):
                    claim_path(str(key_path["path"]), str(ref.get("name") or ""))
        if entry.get("downwardAPI") is not None:
            count += 1
            for item in as_list(as_dict(entry["downwardAPI"]).get("items")):
                file = as_dict(item)
                errs.extend(_downward_file(file, f"{at}.downwardAPI"))
                if file.get("path"):
                    claim_path(str(file["path"]), str(file["path"]))
        if entry.get("serviceAccountToken") is not None:
            count += 1
            errs.extend(_token(as_dict(entry["serviceAccountToken"]), path, at))
        if entry.get("clusterTrustBundle") is not None:
            count += 1
        if count > 1:
            errs.append(forbidden(at, "may not specify more than 1 volume type per source"))
    return errs


def _token(token: dict[str, Any], path: str, at: str) -> Errors:
    errs: Errors = []
    seconds = token.get("expirationSeconds", 3600)  # defaulted to one hour
    if is_int(seconds) and seconds < 600:
        errs.append(
            invalid(
                f"{at}.serviceAccountToken.expirationSeconds",
                seconds,
                "may not specify a duration less than 10 minutes",
            )
        )
    if is_int(seconds) and seconds > 1 << 32:
        errs.append(
            invalid(
                f"{at}.serviceAccountToken.expirationSeconds",
                seconds,
                "may not specify a duration larger than 2^32 seconds",
            )
        )
    target = str(token.get("path") or "")
    if not target:
        errs.append(required(f"{path}.path"))
    else:
        errs.extend(local_non_reserved(target, f"{path}.path"))
    return errs


def _ephemeral(src: dict[str, Any], path: str) -> Errors:
    # The claim template is a claim's spec: checked where claims are (which imports this
    # module for the sources volumes and pods share).
    from kubesched.objects.validation.persistentvolume import ephemeral_source

    return ephemeral_source(src, path)


_CONTENTS = {
    "emptyDir": _empty_dir,
    "hostPath": _host_path,
    "gitRepo": _git_repo,
    "secret": _secret,
    "nfs": _nfs,
    "persistentVolumeClaim": _claim,
    "downwardAPI": _downward_api,
    "configMap": _config_map,
    "projected": _projected,
    "ephemeral": _ephemeral,
}

#: The checks of the sources a PersistentVolume shares with pod volumes
#: (:mod:`.persistentvolume`).
host_path_source = _host_path
nfs_source = _nfs


# -- paths ----------------------------------------------------------------------------------


def no_backsteps(target: str, path: str) -> Errors:
    """``validatePathNoBacksteps``: no ``..`` element."""
    if ".." in target.replace("\\", "/").split("/"):
        return [invalid(path, target, "must not contain '..'")]
    return []


def local_descending(target: str, path: str) -> Errors:
    """``validateLocalDescendingPath``: relative, no ``..`` element."""
    errs = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    return errs + no_backsteps(target, path)


def local_non_reserved(target: str, path: str) -> Errors:
    """``ValidateLocalNonReservedPath``: as :func:`local_descending`, and not ``..x``."""
    errs = local_descending(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))
    return errs


# -- downward API selectors -----------------------------------------------------------------


def _split_subscript(field_path: str) -> tuple[str, str] | None:
    # fieldpath.SplitMaybeSubscriptedPath: metadata.labels['key'].
    if not field_path.endswith("']"):
        return None
    head, sep, key = field_path[:-2].partition("['")
    return (head, key) if sep and head else None


def field_selector(ref: dict[str, Any], allowed: frozenset[str], path: str) -> Errors:
    """``validateObjectFieldSelector``: a pod field the downward API can expose."""
    version = str(ref.get("apiVersion") or "v1")  # defaulted to v1
    label = str(ref.get("fieldPath") or "")
    if not label:
        return [required(f"{path}.fieldPath")]
    problem = ""
    subscripted = _split_subscript(label)
    if version != "v1":
        problem = f"unsupported pod version: {version}"
    elif subscripted is not None:
        if subscripted[0] not in ("metadata.annotations", "metadata.labels"):
            problem = f"field label does not support subscript: {label}"
    elif label == "spec.host":
        label = "spec.nodeName"
    elif label not in _CONVERTIBLE:
        problem = f"field label not supported: {label}"
    if problem:
        return [
            invalid(
                f"{path}.fieldPath", ref.get("fieldPath"), f"error converting fieldPath: {problem}"
            )
        ]
    if subscripted is not None:
        head, key = subscripted
        return qualified_name(key.lower() if head == "metadata.annotations" else key, path)
    if label not in allowed:
        return [not_supported(f"{path}.fieldPath", label, tuple(sorted(allowed)))]
    return []


def resource_field_selector(ref: dict[str, Any], path: str, volume: bool) -> Errors:
    """``validateContainerResourceFieldSelector``: a container's request or limit."""
    errs: Errors = []
    name = str(ref.get("resource") or "")
    if volume and not ref.get("containerName"):
        errs.append(required(f"{path}.containerName"))
    elif not name:
        errs.append(required(f"{path}.resource"))
    elif name not in _RESOURCE_FIELDS and not name.startswith(_HUGEPAGES_PREFIXES):
        errs.append(not_supported(f"{path}.resource", name, _RESOURCE_FIELDS))
    divisor = ref.get("divisor")
    if divisor is None or quantity(divisor).value == 0:
        return errs
    shown = str(quantity(divisor))
    kind = name.partition(".")[2]
    if kind == "cpu" and shown not in ("1m", "1"):
        detail = "only divisor's values 1m and 1 are supported with the cpu resource"
    elif kind == "memory" and shown not in _BYTE_DIVISORS:
        detail = (
            f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the memory resource"
        )
    elif kind == "ephemeral-storage" and shown not in _BYTE_DIVISORS:
        detail = (
            f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the local ephemeral "
            "storage resource"
        )
    elif name.startswith(_HUGEPAGES_PREFIXES) and shown not in _BYTE_DIVISORS:
        detail = (
            f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the hugepages resource"
        )
    else:
        return errs
    errs.append(invalid(f"{path}.divisor", name, detail))
    return errs
