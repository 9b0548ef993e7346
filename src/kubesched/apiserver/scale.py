"""The ``scale`` subresource: an object's replica count as an autoscaling/v1 ``Scale``.

Served for ReplicationControllers, Deployments, ReplicaSets and StatefulSets (upstream's
ScaleREST in ``pkg/registry/*/storage/storage.go``) and for custom resources whose CRD declares
``subresources.scale`` (apiextensions-apiserver's ScaleREST, reading and writing the
CRD's ``specReplicasPath``, ``statusReplicasPath`` and ``labelSelectorPath``).

A Scale shows the parent's name, namespace, uid, resourceVersion and creationTimestamp,
``spec.replicas``, ``status.replicas`` and ``status.selector`` as a label selector string
(from a ReplicationController's selector map, a Deployment's, ReplicaSet's or
StatefulSet's LabelSelector, or the string at a CRD's ``labelSelectorPath``). A PUT or
PATCH changes only the parent's replica count, through the parent's own update: its validation runs,
``generation`` moves with the spec, and a ``metadata.resourceVersion`` in the Scale is a
precondition (409 Conflict when stale). A patch applies to the Scale, not to the parent.
A GET asked as a Table gets kube-apiserver's Scale printer (Name, Desired, Available, Age).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubesched.apiserver import crd, errors
from kubesched.apiserver.crdschema import go_value
from kubesched.apiserver.patch import JSON_PATCH, MERGE, STRATEGIC, apply_patch
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.store import Store
from kubesched.apiserver.table_cells import AGE_DOC, NAME_DOC, TABLE_API_VERSION, age, col
from kubesched.apiserver.unstructured import go_type, nested, split_path
from kubesched.apiserver.validation import validate_update
from kubesched.apiserver.watch import Object

Reply = tuple[int, Any]

API_VERSION = "autoscaling/v1"
KIND = "Scale"
#: kube-apiserver's printer for a Scale (``kubectl get <resource> --subresource=scale``).
COLUMNS = [
    col("Name", NAME_DOC),
    col(
        "Desired",
        "replicas is the desired number of instances for the scaled object.",
        kind="integer",
    ),
    col(
        "Available",
        "replicas is the actual number of observed instances of the scaled object.",
        kind="integer",
    ),
    col("Age", AGE_DOC),
]
#: What the built-in resources' Scale reads: the replica paths and how the selector is
#: kept (a map for ReplicationControllers, a LabelSelector for the apps resources).
_BUILTIN: dict[tuple[str, str], tuple[str, str]] = {
    ("", "replicationcontrollers"): ("autoscaling", "map"),
    ("apps", "deployments"): ("apps", "labelSelector"),
    ("apps", "replicasets"): ("apps", "labelSelector"),
    ("apps", "statefulsets"): ("apps", "labelSelector"),
}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def label_selector_string(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(s).String()``: requirements sorted by key, set
    values sorted; an empty or missing selector is ``""``."""
    sel = _dict(selector)
    found: list[tuple[str, str]] = []
    for key, value in sorted(_dict(sel.get("matchLabels")).items()):
        found.append((str(key), f"{key}={value}"))
    for expr in sel.get("matchExpressions") or []:
        expr = _dict(expr)
        key, op = str(expr.get("key", "")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {
            "In": f"{key} in ({values})",
            "NotIn": f"{key} notin ({values})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(str(op))
        if text is None:
            raise errors.bad_request(f'"{op}" is not a valid label selector operator')
        found.append((key, text))
    return ",".join(text for _, text in sorted(found, key=lambda item: item[0]))


def _map_selector_string(selector: Any) -> str:
    # labels.SelectorFromSet(m).String(): k=v sorted by key.
    return ",".join(f"{k}={v}" for k, v in sorted(_dict(selector).items()))


def _scale_of(res: Resource, obj: Object) -> tuple[dict[str, Any], bool]:
    """The Scale of ``obj``, and whether its spec replicas were found."""
    meta = obj.get("metadata") or {}
    scale_meta = {
        k: meta[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if meta.get(k)
    }
    paths = res.custom.scale if res.custom is not None else None
    if paths is not None:
        spec, found, problem = nested(obj, paths.spec_replicas, "int64")
        if problem:
            raise errors.internal_error(problem)
        status, _, problem = nested(obj, paths.status_replicas, "int64")
        if problem:
            raise errors.internal_error(problem)
        selector = ""
        if paths.label_selector:
            selector, _, problem = nested(obj, paths.label_selector, "string")
            if problem:
                raise errors.internal_error(problem)
        spec_replicas, status_replicas = spec or 0, status or 0
    else:
        spec_dict, status_dict = _dict(obj.get("spec")), _dict(obj.get("status"))
        found = True
        # The replica count defaults to 1 (SetDefaults_*), as the stored object has it.
        spec_replicas = spec_dict.get("replicas", 1)
        status_replicas = status_dict.get("replicas", 0)
        if _BUILTIN[(res.group, res.plural)][1] == "map":
            selector = _map_selector_string(spec_dict.get("selector"))
        else:
            selector = label_selector_string(spec_dict.get("selector"))
    scale_spec: dict[str, Any] = {"replicas": spec_replicas} if spec_replicas else {}
    scale_status: dict[str, Any] = {"replicas": status_replicas}
    if selector:
        scale_status["selector"] = selector
    scale = {
        "kind": KIND,
        "apiVersion": API_VERSION,
        "metadata": scale_meta,
        "spec": scale_spec,
        "status": scale_status,
    }
    return scale, found


def get(store: Store, res: Resource, namespace: str | None, name: str) -> Reply:
    """GET ``<resource>/<name>/scale``."""
    try:
        obj = store.get(res.storage, namespace, name)
    except errors.ApiError as err:
        if err.code != 404 or res.custom is not None:
            raise
        # Upstream's ScaleREST.Get names the subresource in its 404.
        group = _BUILTIN[(res.group, res.plural)][0]
        raise errors.not_found(f"{res.plural}/scale", name, group) from None
    scale, found = _scale_of(res, obj)
    if not found and res.custom is not None and res.custom.scale is not None:
        raise errors.internal_error(
            f'the spec replicas field "{res.custom.scale.spec_replicas}" does not exist'
        )
    return 200, scale


def _decode(body: Any) -> dict[str, Any]:
    # What decoding the request into an autoscaling/v1 Scale refuses.
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a Scale object")
    kind, version = body.get("kind"), body.get("apiVersion")
    if kind not in (None, "", KIND) or version not in (None, "", API_VERSION):
        raise errors.bad_request(
            f"{kind or KIND} in version {go_value(version or API_VERSION)} cannot be handled "
            f"as a Scale: the body must be a {KIND} of {API_VERSION}"
        )
    replicas = _dict(body.get("spec")).get("replicas", 0)
    if replicas is None:
        replicas = 0
    if go_type(replicas) != "int64":
        raise errors.bad_request(
            f"Scale in version {go_value(API_VERSION)} cannot be handled as a Scale: json: "
            f"cannot unmarshal {_json_kind(replicas)} into Go struct field "
            "ScaleSpec.spec.replicas of type int32"
        )
    return body


def _json_kind(value: Any) -> str:
    # How encoding/json names a value it cannot put in an int32.
    if isinstance(value, float):
        return f"number {value:g}"
    return {"bool": "bool", "string": "string", "[]interface {}": "array"}.get(
        go_type(value), "object"
    )


def _write(
    store: Store,
    res: Resource,
    namespace: str | None,
    name: str,
    new_scale: Callable[[dict[str, Any]], Any],
) -> Reply:
    storage = res.storage
    paths = res.custom.scale if res.custom is not None else None

    def mutate(current: Object) -> Object:
        old, found = _scale_of(res, current)
        scale = _decode(new_scale(old))
        meta = _dict(scale.get("metadata"))
        if meta.get("name") not in (None, "", name):
            raise errors.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the "
                f"URL ({name})"
            )
        replicas = _dict(scale.get("spec")).get("replicas") or 0
        current_meta = current["metadata"]
        if meta.get("uid") and meta["uid"] != current_meta.get("uid"):
            raise errors.conflict(
                f"{res.plural}/scale",
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
                f"{current_meta.get('uid')}",
                res.group,
            )
        if paths is not None:
            if not found and "replicas" not in _dict(scale.get("spec")):
                raise errors.bad_request(
                    f'the spec replicas field "{paths.spec_replicas}" cannot be empty'
                )
            node = current
            *parents, last = split_path(paths.spec_replicas)
            for field in parents:
                node = node.setdefault(field, {})
                if not isinstance(node, dict):
                    raise errors.bad_request(
                        f"value cannot be set because {paths.spec_replicas} is not a map"
                    )
            node[last] = replicas
            crd.admit_custom(res, current, creating=False)
        else:
            if replicas < 0:
                raise errors.invalid(
                    KIND,
                    name,
                    [
                        {
                            "reason": "FieldValueInvalid",
                            "message": f"Invalid value: {replicas}: must be greater than or "
                            "equal to 0",
                            "field": "spec.replicas",
                        }
                    ],
                    "autoscaling",
                )
            current.setdefault("spec", {})["replicas"] = replicas
        # The Scale's resourceVersion is the parent update's precondition (empty: none).
        current_meta["resourceVersion"] = meta.get("resourceVersion") or ""
        return current

    def check(new: Object, old: Object) -> None:
        validate_update(storage, new, old, "")

    stored = store.guaranteed_update(storage, namespace, name, mutate, "", check)
    return 200, _scale_of(res, stored)[0]


def update(store: Store, res: Resource, namespace: str | None, name: str, body: Any) -> Reply:
    """PUT ``<resource>/<name>/scale``: the body is the new Scale."""
    _decode(body)
    return _write(store, res, namespace, name, lambda _old: body)


def patch(
    store: Store,
    res: Resource,
    namespace: str | None,
    name: str,
    body: Any,
    content_type: str,
) -> Reply:
    """PATCH ``<resource>/<name>/scale``: the patch applies to the current Scale."""
    if res.custom is not None and content_type == STRATEGIC:
        # As apiextensions-apiserver: no strategic merge patches for custom resources.
        raise errors.unsupported_media_type((JSON_PATCH, MERGE))
    return _write(
        store, res, namespace, name, lambda old: apply_patch(old, body, content_type, KIND)
    )


def table(
    scale: dict[str, Any], include_object: str, now: datetime | None = None
) -> dict[str, Any]:
    """A Scale as a meta.k8s.io/v1 Table (upstream's ``printScale``): Name, Desired,
    Available, Age; the row carries the Scale as ``includeObject`` asks."""
    include = include_object or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{include_object}": supported values: '
            '"Metadata", "None", "Object"'
        )
    meta = scale["metadata"]
    cells = [
        meta.get("name", ""),
        scale["spec"].get("replicas", 0),
        scale["status"].get("replicas", 0),
        age(meta.get("creationTimestamp"), now or datetime.now(UTC)),
    ]
    row: dict[str, Any] = {"cells": cells}
    if include == "Object":
        row["object"] = scale
    elif include == "Metadata":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": TABLE_API_VERSION,
            "metadata": meta,
        }
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": {"resourceVersion": meta.get("resourceVersion", "")},
        "columnDefinitions": COLUMNS,
        "rows": [row],
    }
