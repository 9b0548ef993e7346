"""CustomResourceDefinitions (apiextensions.k8s.io/v1) and the custom resources they serve.

What apiextensions-apiserver does in its registry and controllers happens here, in the
request that writes the CRD:

* **create/update** — upstream's defaulting (``names.singular``, ``names.listKind``,
  ``conversion.strategy: None``) and validation (:func:`admit_definition`: 422 with field
  causes, nothing stored); ``status.storedVersions`` records the storage version;
* **naming and establishing** (:func:`sync`) — ``status.acceptedNames`` and the
  NamesAccepted / Established conditions, as the naming and establishing controllers set
  them (a plural, singular, short name, kind or list kind already accepted by another CRD
  of the group, or used by a built-in resource of the group, is refused: NamesAccepted
  False, and a CRD never established is not served);
* **serving** — an established CRD's objects live in one unserved storage collection
  (``(group, "", plural)``: etcd's key has no version either) and every served version is
  a view of it (:class:`VersionView`: conversion strategy None, only ``apiVersion``
  changes); the store serves them until the CRD goes;
* **delete** (:func:`delete_definition`) — the custom resources are deleted (watchers see
  each go), then the routes, then the CRD, as the finalizer controller does before
  removing its ``customresourcecleanup`` finalizer; custom resources' own finalizers are
  not waited for.

Custom resources are pruned, defaulted and validated with their schema
(:mod:`kubesched.apiserver.crdschema`) on every write (:func:`admit_custom`), and their
replica counts checked where the CRD declares ``subresources.scale`` (served by
:mod:`kubesched.apiserver.scale`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from typing import Any

from kubesched.apiserver import crdschema, errors, unstructured
from kubesched.apiserver.persist import SqliteStorage
from kubesched.apiserver.resources import (
    BUILTIN,
    CUSTOMRESOURCEDEFINITIONS,
    CustomInfo,
    Resource,
    ScalePaths,
)
from kubesched.apiserver.store import Store, copy_object, now_rfc3339
from kubesched.apiserver.watch import Object

CRDS = CUSTOMRESOURCEDEFINITIONS
#: The printer column a version without ``additionalPrinterColumns`` gets (upstream's
#: ``serveDefaultColumnsIfEmpty``).
AGE_COLUMN: dict[str, Any] = {
    "name": "Age",
    "type": "date",
    "description": (
        "CreationTimestamp is a timestamp representing the server time when this object "
        "was created."
    ),
    "jsonPath": ".metadata.creationTimestamp",
}
_INT32_MAX = 2**31 - 1
_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
Causes = list[errors.StatusCause]


def _cause(reason: str, path: str, message: str) -> errors.StatusCause:
    return {"reason": reason, "message": message, "field": path}


def _invalid(path: str, value: Any, detail: str) -> errors.StatusCause:
    return _cause(
        "FieldValueInvalid", path, f"Invalid value: {crdschema.go_value(value)}: {detail}"
    )


def _required(path: str, detail: str = "") -> errors.StatusCause:
    message = f"Required value: {detail}" if detail else "Required value"
    return _cause("FieldValueRequired", path, message)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- defaulting and validation of the CRD -----------------------------------------------


def default_definition(crd: Object) -> None:
    """SetDefaults_CustomResourceDefinitionSpec: singular, listKind, conversion."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        if not names.get("singular"):
            names["singular"] = names["kind"].lower()
        if not names.get("listKind"):
            names["listKind"] = names["kind"] + "List"
    if not isinstance(spec.get("conversion"), dict):
        spec["conversion"] = {"strategy": "None"}


def _check_dns1035(path: str, value: Any, prefix: str = "") -> Causes:
    text = value if isinstance(value, str) else ""
    if not text:
        return []
    problems = []
    if len(text) > 63:
        problems.append("must be no more than 63 characters")
    if _DNS1035.fullmatch(text.lower() if prefix else text) is None:
        problems.append(_DNS1035_MSG)
    if not problems:
        return []
    return [_invalid(path, value, prefix + ",".join(problems))]


def _check_names(names: dict[str, Any], path: str) -> Causes:
    causes: Causes = []
    for key in ("plural", "singular"):
        causes += _check_dns1035(f"{path}.{key}", names.get(key))
    mixed = "may have mixed case, but should otherwise match: "
    for key in ("kind", "listKind"):
        causes += _check_dns1035(f"{path}.{key}", names.get(key), mixed)
    for i, short in enumerate(_list(names.get("shortNames"))):
        causes += _check_dns1035(f"{path}.shortNames[{i}]", short) or (
            [] if isinstance(short, str) and short else [_required(f"{path}.shortNames[{i}]")]
        )
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        causes.append(
            _invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same")
        )
    for i, category in enumerate(_list(names.get("categories"))):
        causes += _check_dns1035(f"{path}.categories[{i}]", category)
    return causes


def _check_columns(columns: Any, path: str) -> Causes:
    causes: Causes = []
    for i, col in enumerate(_list(columns)):
        at = f"{path}[{i}]"
        col = _dict(col)
        if not col.get("name"):
            causes.append(_required(f"{at}.name"))
        kind = col.get("type")
        must = "must be one of " + ",".join(_COLUMN_TYPES)
        if not kind:
            causes.append(_required(f"{at}.type", must))
        elif kind not in _COLUMN_TYPES:
            causes.append(_invalid(f"{at}.type", kind, must))
        fmt = col.get("format")
        if fmt and fmt not in _COLUMN_FORMATS:
            causes.append(
                _invalid(f"{at}.format", fmt, "must be one of " + ",".join(_COLUMN_FORMATS))
            )
        json_path = col.get("jsonPath")
        if not json_path:
            causes.append(_required(f"{at}.jsonPath"))
        elif not isinstance(json_path, str) or not json_path.startswith("."):
            causes.append(
                _invalid(f"{at}.jsonPath", json_path, "must be a simple json path starting with .")
            )
    return causes


def _check_json_path(path: str, value: Any) -> Causes:
    # validateSimpleJSONPath.
    if not value:
        return [_invalid(path, value or "", "must not be empty")]
    if not isinstance(value, str) or not value.startswith("."):
        return [_invalid(path, value, "must be a simple json path starting with .")]
    return []


def _check_scale(scale: Any, path: str) -> Causes:
    """ValidateCustomResourceDefinitionSubresources: the scale subresource's paths."""
    if scale is None:
        return []
    if not isinstance(scale, dict):
        return [_invalid(f"{path}.scale", scale, "must be an object")]
    causes: Causes = []
    for key, under in (("specReplicasPath", (".spec.",)), ("statusReplicasPath", (".status.",))):
        at, value = f"{path}.scale.{key}", scale.get(key)
        if not value:
            causes.append(_required(at))
        elif problems := _check_json_path(at, value):
            causes += problems
        elif not value.startswith(under):
            causes.append(_invalid(at, value, f"should be a json path under {under[0][:-1]}"))
    selector = scale.get("labelSelectorPath")
    if selector:
        at = f"{path}.scale.labelSelectorPath"
        if problems := _check_json_path(at, selector):
            causes += problems
        elif not selector.startswith((".spec.", ".status.")):
            causes.append(
                _invalid(at, selector, "should be a json path under either .spec or .status")
            )
    return causes


def _check_spec(spec: dict[str, Any]) -> Causes:
    causes: Causes = []
    group = spec.get("group")
    if not group:
        causes.append(_required("spec.group"))
    elif not isinstance(group, str) or _SUBDOMAIN.fullmatch(group) is None or len(group) > 253:
        causes.append(_invalid("spec.group", group, _SUBDOMAIN_MSG))
    elif "." not in group:
        causes.append(_invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope")
    if not scope:
        causes.append(_required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(
            _cause(
                "FieldValueNotSupported",
                "spec.scope",
                f"Unsupported value: {crdschema.go_value(scope)}: supported values: "
                '"Cluster", "Namespaced"',
            )
        )
    versions = _list(spec.get("versions"))
    if not versions:
        causes.append(_required("spec.versions", "must have at least one version"))
    seen: set[str] = set()
    unique = True
    storage = 0
    for i, version in enumerate(versions):
        version = _dict(version)
        at = f"spec.versions[{i}]"
        name = version.get("name")
        if not name:
            causes.append(_required(f"{at}.name"))
        else:
            causes += _check_dns1035(f"{at}.name", name)
            unique = unique and name not in seen
            seen.add(str(name))
        if version.get("storage") is True:
            storage += 1
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        if schema is None:
            causes.append(_required(f"{at}.schema.openAPIV3Schema", "schemas are required"))
        else:
            causes += crdschema.check_structural(schema, f"{at}.schema.openAPIV3Schema")
        status = _dict(version.get("subresources")).get("status")
        if status is not None and not isinstance(status, dict):
            causes.append(_invalid(f"{at}.subresources.status", status, "must be an object"))
        causes += _check_scale(
            _dict(version.get("subresources")).get("scale"), f"{at}.subresources"
        )
        causes += _check_columns(
            version.get("additionalPrinterColumns"), f"{at}.additionalPrinterColumns"
        )
    shown = [_dict(v).get("name") for v in versions]
    if not unique:
        causes.append(_invalid("spec.versions", shown, "must contain unique version names"))
    if storage != 1:
        causes.append(
            _invalid(
                "spec.versions", shown, "must have exactly one version marked as storage version"
            )
        )
    names = _dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            causes.append(_required(f"spec.names.{key}"))
    causes += _check_names(names, "spec.names")
    strategy = _dict(spec.get("conversion")).get("strategy")
    if strategy == "Webhook":
        causes.append(
            _cause(
                "FieldValueForbidden",
                "spec.conversion.strategy",
                "Forbidden: webhook conversion is not supported by the kubesched API server",
            )
        )
    elif strategy != "None":
        causes.append(
            _cause(
                "FieldValueNotSupported",
                "spec.conversion.strategy",
                f"Unsupported value: {crdschema.go_value(strategy)}: supported values: "
                '"None", "Webhook"',
            )
        )
    return causes


def _check_update(spec: dict[str, Any], old: Object) -> Causes:
    old_spec = _dict(old.get("spec"))
    causes: Causes = []
    immutable = "field is immutable"
    fixed = [("spec.group", spec.get("group"), old_spec.get("group"))]
    fixed.append(
        (
            "spec.names.plural",
            _dict(spec.get("names")).get("plural"),
            _dict(old_spec.get("names")).get("plural"),
        )
    )
    if _condition(old, "Established") == "True":
        fixed.append(("spec.scope", spec.get("scope"), old_spec.get("scope")))
        fixed.append(
            (
                "spec.names.kind",
                _dict(spec.get("names")).get("kind"),
                _dict(old_spec.get("names")).get("kind"),
            )
        )
    for path, new, before in fixed:
        if new != before:
            causes.append(_invalid(path, new, immutable))
    return causes


def _check_stored_versions(spec: dict[str, Any], old: Object) -> Causes:
    # ValidateCustomResourceDefinitionStoredVersions on an update: the versions objects
    # may be stored in (and the new storage version, which PrepareForUpdate adds) must
    # stay in spec.versions until status.storedVersions drops them.
    stored = [str(v) for v in _list(_dict(old.get("status")).get("storedVersions"))]
    storage = _storage_version({"spec": spec})
    if storage and storage not in stored:
        stored.append(storage)
    names = {_dict(v).get("name") for v in _list(spec.get("versions"))}
    return [
        _invalid(f"status.storedVersions[{i}]", v, "must appear in spec.versions")
        for i, v in enumerate(stored)
        if v not in names
    ]


def admit_definition(store: Store, crd: Object, creating: bool) -> None:
    """Default and validate a CRD about to be written (422 Invalid with every cause);
    a new one gets upstream's initial status (``storedVersions``, no accepted names)."""
    default_definition(crd)
    spec = crd.get("spec")
    name = str(_dict(crd.get("metadata")).get("name") or "")
    if not isinstance(spec, dict):
        causes: Causes = [_required("spec")]
    else:
        causes = []
        names = _dict(spec.get("names"))
        wanted = f"{names.get('plural', '')}.{spec.get('group', '')}"
        if name and name != wanted:
            causes.append(
                _invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
            )
        causes += _check_spec(spec)
        if not creating:
            # Gone meanwhile: the update answers 404.
            with contextlib.suppress(errors.ApiError):
                old = store.get(CRDS, None, name)
                causes += _check_update(spec, old) + _check_stored_versions(spec, old)
    if causes:
        raise errors.invalid(CRDS.kind, name, causes, CRDS.group)
    if creating:
        crd["status"] = {
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": [_storage_version(crd)],
        }


# -- names, conditions, serving ---------------------------------------------------------


def _storage_version(crd: Object) -> str:
    for version in _list(_dict(crd.get("spec")).get("versions")):
        if _dict(version).get("storage") is True:
            return str(version["name"])
    return ""


def _condition(crd: Object, kind: str) -> str:
    for condition in _list(_dict(crd.get("status")).get("conditions")):
        if _dict(condition).get("type") == kind:
            return str(condition.get("status", ""))
    return ""


def _used_names(store: Store, crd: Object) -> tuple[set[str], set[str]]:
    """Resource names (plural, singular, short) and kinds (kind, list kind) taken in the
    CRD's group by other CRDs' accepted names and by built-in resources."""
    group = _dict(crd.get("spec")).get("group")
    me = _dict(crd.get("metadata")).get("name")
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in store.list(CRDS).items:
        if other["metadata"]["name"] == me or _dict(other.get("spec")).get("group") != group:
            continue
        accepted = _dict(_dict(other.get("status")).get("acceptedNames"))
        resources.update(str(n) for n in (accepted.get("plural"), accepted.get("singular")) if n)
        resources.update(str(n) for n in _list(accepted.get("shortNames")))
        kinds.update(str(n) for n in (accepted.get("kind"), accepted.get("listKind")) if n)
    for res in BUILTIN:
        if res.group == group:
            resources.update(n for n in (res.plural, res.singular, *res.short_names) if n)
            kinds.update((res.kind, f"{res.kind}List"))
    return resources, kinds


def _accept_names(store: Store, crd: Object) -> tuple[dict[str, Any], dict[str, str]]:
    """The naming controller: the accepted names and the NamesAccepted condition."""
    requested = _dict(_dict(crd.get("spec")).get("names"))
    accepted = dict(_dict(_dict(crd.get("status")).get("acceptedNames")))
    used, kinds = _used_names(store, crd)
    condition = {"status": "True", "reason": "NoConflicts", "message": "no conflicts found"}

    def take(key: str, taken: set[str], reason: str) -> None:
        want = requested.get(key)
        if want == accepted.get(key) or want not in taken:
            if want:
                accepted[key] = want
            return
        condition.update(status="False", reason=reason, message=f'"{want}" is already in use')

    take("plural", used, "PluralConflict")
    take("singular", used, "SingularConflict")
    shorts = [str(s) for s in _list(requested.get("shortNames"))]
    if shorts != _list(accepted.get("shortNames")):
        clash = [s for s in shorts if s in used]
        if clash:
            condition.update(
                status="False",
                reason="ShortNamesConflict",
                message=f'"{clash[0]}" is already in use',
            )
        else:
            accepted["shortNames"] = shorts
    take("kind", kinds, "KindConflict")
    take("listKind", kinds, "ListKindConflict")
    if requested.get("categories"):
        accepted["categories"] = list(requested["categories"])
    else:
        accepted.pop("categories", None)
    if not shorts:
        accepted.pop("shortNames", None)
    return accepted, condition


def _set_condition(conditions: list[dict[str, Any]], kind: str, values: dict[str, str]) -> None:
    for condition in conditions:
        if condition.get("type") == kind:
            if condition.get("status") != values["status"]:
                condition["lastTransitionTime"] = now_rfc3339()
            condition.update(values)
            return
    conditions.append({"type": kind, **values, "lastTransitionTime": now_rfc3339()})


def sync(store: Store, crd: Object, group_too: bool = True) -> Object:
    """After a CRD was written: accept its names, establish it, record its storage
    version, and serve (or stop serving) its versions; with ``group_too``, then try the
    group's CRDs whose names were refused (a name may be free now). Returns the CRD as
    stored."""
    meta = crd["metadata"]
    if meta.get("deletionTimestamp"):
        return crd
    new = copy_object(crd)
    status = new.setdefault("status", {})
    accepted, names_condition = _accept_names(store, crd)
    status["acceptedNames"] = accepted
    conditions = status.setdefault("conditions", [])
    _set_condition(conditions, "NamesAccepted", names_condition)
    if names_condition["status"] == "True" or _condition(crd, "Established") == "True":
        established = {
            "status": "True",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
        }
    else:
        established = {
            "status": "False",
            "reason": "NotAccepted",
            "message": "not all names are accepted",
        }
    if _condition(crd, "Established") != "True" or established["status"] == "True":
        _set_condition(conditions, "Established", established)
    stored = status.setdefault("storedVersions", [])
    storage = _storage_version(crd)
    if storage and storage not in stored:
        stored.append(storage)
    if new != crd:
        crd = store.update(CRDS, new, None, "status")
    serve(store, crd)
    if group_too:
        _retry_group(store, _dict(crd.get("spec")).get("group"), str(meta.get("name")))
    return crd


def _retry_group(store: Store, group: Any, skip: str = "") -> None:
    # The naming controller requeues every CRD of a group when one of them changes.
    for other in store.list(CRDS).items:
        if (
            other["metadata"]["name"] != skip
            and _dict(other.get("spec")).get("group") == group
            and _condition(other, "NamesAccepted") != "True"
        ):
            sync(store, other, group_too=False)


def _subresources(version: dict[str, Any]) -> tuple[str, ...]:
    declared = _dict(version.get("subresources"))
    return tuple(sub for sub in ("status", "scale") if isinstance(declared.get(sub), dict))


def _scale_paths(version: dict[str, Any]) -> ScalePaths | None:
    scale = _dict(version.get("subresources")).get("scale")
    if not isinstance(scale, dict):
        return None
    selector = scale.get("labelSelectorPath")
    return ScalePaths(
        str(scale.get("specReplicasPath") or ""),
        str(scale.get("statusReplicasPath") or ""),
        selector if isinstance(selector, str) else "",
    )


def _info(crd_name: str, version: dict[str, Any]) -> CustomInfo:
    schema = _dict(version.get("schema")).get("openAPIV3Schema")
    columns = tuple(_dict(c) for c in _list(version.get("additionalPrinterColumns")))
    return CustomInfo(
        crd_name,
        schema if isinstance(schema, dict) else None,
        columns or (AGE_COLUMN,),
        _scale_paths(version),
    )


def resources_of(crd: Object) -> list[Resource]:
    """What an established CRD serves: its storage collection, then one view per served
    version. Empty for a CRD not (or no longer) established."""
    meta = _dict(crd.get("metadata"))
    if _condition(crd, "Established") != "True" or meta.get("deletionTimestamp"):
        return []
    spec = _dict(crd.get("spec"))
    names = _dict(_dict(crd.get("status")).get("acceptedNames"))
    group, plural, kind = str(spec.get("group")), str(spec["names"]["plural"]), names.get("kind")
    if not kind:
        return []
    versions = [_dict(v) for v in _list(spec.get("versions"))]
    storage_version = next((v for v in versions if v.get("storage") is True), None)
    if storage_version is None:
        return []
    crd_name = str(meta.get("name"))
    storage = Resource(
        group,
        "",
        plural,
        str(kind),
        spec.get("scope") == "Namespaced",
        str(names.get("singular") or ""),
        tuple(str(s) for s in _list(names.get("shortNames"))),
        _subresources(storage_version),
        categories=tuple(str(c) for c in _list(names.get("categories"))),
        custom=_info(crd_name, storage_version),
        served=False,
    )
    served = [
        replace(
            storage,
            version=str(v["name"]),
            subresources=_subresources(v),
            custom=_info(crd_name, v),
            view_of=storage,
            served=True,
        )
        for v in versions
        if v.get("served") is True
    ]
    return [storage, *served]


def _served_by(store: Store, crd_name: str) -> list[Resource]:
    return [r for r in store.resources if r.custom is not None and r.custom.crd == crd_name]


def serve(store: Store, crd: Object) -> None:
    """Make the store serve exactly what ``crd`` serves now."""
    wanted = resources_of(crd)
    keys = {r.key for r in wanted}
    for res in _served_by(store, str(crd["metadata"]["name"])):
        if res.key not in keys and res.served:
            store.unregister(res.key)
    for res in wanted:
        store.register(res)


def delete_definition(
    store: Store, name: str, uid: str | None, resource_version: str | None
) -> Object:
    """Delete a CRD: its custom resources first (each watcher sees them go), then its
    routes, then the CRD itself (it stays while finalizers of its own remain)."""
    crd = store.get(CRDS, None, name)
    meta = crd["metadata"]
    stale_uid = bool(uid) and uid != meta.get("uid")
    stale_rv = bool(resource_version) and resource_version != meta.get("resourceVersion")
    if stale_uid or stale_rv:
        # A precondition does not hold: the store's delete refuses with upstream's 409.
        store.delete(CRDS, None, name, uid, resource_version)
    served = _served_by(store, name)
    for res in served:
        if not res.served:
            for obj in list(store.list(res).items):
                obj_meta = obj["metadata"]
                try:
                    store.delete(res, obj_meta.get("namespace"), obj_meta["name"])
                except errors.ApiError as err:
                    if err.code != 404:
                        raise
    for res in served:
        store.unregister(res.key)
    gone, _ = store.delete_gracefully(CRDS, None, name, 0)
    _retry_group(store, _dict(crd.get("spec")).get("group"), name)
    return gone


def stored_resources(storage: SqliteStorage) -> tuple[Resource, ...]:
    """What the CRDs kept in a data file serve: registered before the file's objects are
    loaded, so that a restarted server serves (and loads) their custom resources."""
    found: list[Resource] = []
    for crd in storage.objects_of(CRDS.key):
        found += resources_of(crd)
    return tuple(found)


# -- custom resources -------------------------------------------------------------------


def admit_custom(res: Resource, obj: Object, creating: bool) -> None:
    """Prune, default and validate a custom resource about to be written (422 Invalid
    naming each field). With a status subresource, a create cannot set status."""
    if creating and res.has_status:
        obj.pop("status", None)
    info = res.custom
    if info is None or info.schema is None:
        return
    crdschema.prune(obj, info.schema)
    crdschema.apply_defaults(obj, info.schema)
    causes = crdschema.validate(obj, info.schema)
    if info.scale is not None:
        causes += _check_scale_values(obj, info.scale)
    if causes:
        name = str(_dict(obj.get("metadata")).get("name") or "")
        raise errors.invalid(res.kind, name, causes, res.group)


def _check_scale_values(obj: Object, paths: ScalePaths) -> Causes:
    """ValidateScaleSpec and ValidateScaleStatus: the replica counts, where set, are
    integers from 0 to the int32 maximum; the label selector, where set, a string."""
    causes: Causes = []
    for path in (paths.spec_replicas, paths.status_replicas):
        value, _, problem = unstructured.nested(obj, path, "int64")
        if problem:
            causes.append(_invalid(path, 0, problem))
        elif value is not None and value < 0:
            causes.append(_invalid(path, value, "should be a non-negative integer"))
        elif value is not None and value > _INT32_MAX:
            causes.append(_invalid(path, value, f"should be less than or equal to {_INT32_MAX}"))
    if paths.label_selector:
        _, _, problem = unstructured.nested(obj, paths.label_selector, "string")
        if problem:
            causes.append(_invalid(paths.label_selector, "", problem))
    return causes


class VersionView:
    """Conversion strategy None between a served version and the storage collection:
    the objects are the same, only ``apiVersion`` (and a list's kind) changes. Has the
    functions :mod:`kubesched.apiserver.eventsv1` has for its view."""

    def __init__(self, view: Resource) -> None:
        self.view = view
        self.storage = view.storage
        self.list_kind = f"{view.kind}List"

    def to_core(self, body: Any) -> Any:
        """A request body in the view's version as the storage collection takes it."""
        if not isinstance(body, dict):
            return body
        view = self.view
        kind, api_version = body.get("kind"), body.get("apiVersion")
        if kind is not None and kind != view.kind:
            raise errors.bad_request(
                f"{kind} in version {api_version or view.group_version!r} cannot be handled "
                f"as a {view.kind}: the kind in the body ({kind}) does not match the expected "
                f"kind ({view.kind}) of {view.plural}"
            )
        if api_version is not None and api_version != view.group_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({view.group_version})"
            )
        return dict(body, apiVersion=self.storage.group_version, kind=view.kind)

    def _object(self, obj: Any) -> Any:
        if isinstance(obj, dict) and obj.get("apiVersion") == self.storage.group_version:
            return dict(obj, apiVersion=self.view.group_version)
        return obj

    def convert_reply(self, body: Any) -> Any:
        """An object, a list or a Status from the storage collection, in the view's version."""
        if not isinstance(body, dict) or body.get("kind") == "Status":
            return body
        if (
            isinstance(body.get("items"), list)
            and body.get("apiVersion") == self.storage.group_version
        ):
            items = [self._object(item) for item in body["items"]]
            return dict(body, kind=self.list_kind, apiVersion=self.view.group_version, items=items)
        return self._object(body)

    def to_v1(self, obj: Object) -> Object:
        """A stored object as a table row shows it."""
        converted: Object = self._object(obj)
        return converted

    def convert_patch(self, body: Any, json_patch: bool) -> Any:
        """A patch in the view's version as one of the stored object (``apiVersion``)."""
        here, there = self.view.group_version, self.storage.group_version
        if json_patch and isinstance(body, list):
            return [
                dict(op, value=there)
                if isinstance(op, dict)
                and op.get("path") == "/apiVersion"
                and op.get("value") == here
                else op
                for op in body
            ]
        if isinstance(body, dict) and body.get("apiVersion") == here:
            return dict(body, apiVersion=there)
        return body

    def field_selector(self, selector: str) -> str:
        """Field labels are the same in every version."""
        return selector

    def convert_error(self, err: errors.ApiError) -> errors.ApiError:
        """Errors name the resource and group, the same in every version."""
        return err
