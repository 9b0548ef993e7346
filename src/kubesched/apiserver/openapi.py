"""OpenAPI v3 for ``kubectl``: one document per group/version, with paths and schemas
(and an empty v2 document, :func:`v2`).

kubectl (1.27+) reads ``/openapi/v3`` to learn whether the server validates fields itself:
it looks for a PATCH operation tagged with the object's group/version/kind that takes a
``fieldValidation`` query parameter, and then skips client-side schema validation. Without
any OpenAPI it refuses to ``apply`` unless told ``--validate=false``. ``kubectl explain``
reads ``components.schemas``: each served kind's schema (found by its
``x-kubernetes-group-version-kind``) and what it references, under upstream's names —
the built-ins' from :mod:`kubesched.apiserver.schemas`, a custom resource's built from its
CRD's ``openAPIV3Schema`` as apiextensions' OpenAPI builder does (``apiVersion``, ``kind``
and ``metadata`` added, named ``<reversed group>.<version>.<Kind>``). Each document's
``hash`` follows what it holds, so that kubectl's cache (which keeps a document by URL)
sees a change when custom resources or their schemas come and go.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubesched.apiserver import schemas
from kubesched.apiserver.discovery import KUBERNETES_VERSION
from kubesched.apiserver.resources import Resource

#: The media type kubectl asks ``/openapi/v2`` for (gnostic's OpenAPI v2 Document).
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def v2(accept: str) -> tuple[bytes, str]:
    """``/openapi/v2``: a document that lists no definitions (body, content type).

    kubectl reads it only where ``/openapi/v3`` did not answer: to validate a kind on the
    client side (this server validates every served kind itself, and says so in v3) and
    for the patch strategies of ``kubectl apply`` (it then uses the ones compiled into it).
    A document with nothing in it tells kubectl to skip both for what it does not know,
    as for a kind no cluster serves, instead of failing with ``failed to download
    openapi``. Protobuf when asked for it (an empty ``openapi_v2.Document``), else JSON.
    """
    if "protobuf" in accept:
        return b"", V2_PROTOBUF
    body = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": {},
        "definitions": {},
    }
    return json.dumps(body, separators=(",", ":")).encode(), "application/json"


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def root(resources: tuple[Resource, ...]) -> dict[str, Any]:
    """The ``/openapi/v3`` index: one entry per served group/version."""
    listed: dict[str, list[str]] = {}
    for r in resources:
        if r.served:
            schema = r.custom.schema if r.custom is not None else None
            listed.setdefault(_gv_path(r.group, r.version), []).append(
                f"{r.plural}/{r.kind}/{r.namespaced}/{json.dumps(schema, sort_keys=True)}"
            )
    paths: dict[str, Any] = {}
    for path, names in listed.items():
        digest = hashlib.sha256("\n".join(names).encode()).hexdigest()[:16].upper()
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def _operation(r: Resource, verb: str, query: tuple[str, ...]) -> dict[str, Any]:
    return {
        "operationId": f"{verb}{r.kind}",
        "parameters": [{"name": q, "in": "query", "schema": {"type": "string"}} for q in query],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": verb,
        "x-kubernetes-group-version-kind": {
            "group": r.group,
            "version": r.version,
            "kind": r.kind,
        },
    }


#: The patch types every PATCH takes; built-in kinds take strategic merge patches too.
_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)
_STRATEGIC = "application/strategic-merge-patch+json"


def _patch_operation(r: Resource, query: tuple[str, ...]) -> dict[str, Any]:
    # kubectl apply computes a strategic merge patch from this document's schemas (their
    # x-kubernetes-patch-* extensions) when the PATCH names the strategic type, and falls
    # back to a JSON merge patch for custom resources, as upstream's documents lead it to.
    types = _PATCH_TYPES if r.custom is not None else (*_PATCH_TYPES, _STRATEGIC)
    operation = _operation(r, "patch", query)
    operation["requestBody"] = {
        "content": {t: {"schema": {"type": "object"}} for t in types},
        "required": True,
    }
    return operation


def group_version(
    resources: tuple[Resource, ...], group: str, version: str
) -> dict[str, Any] | None:
    """The document for one group/version, or None when nothing is served there."""
    served = [r for r in resources if r.group == group and r.version == version and r.served]
    if not served:
        return None
    prefix = "/" + _gv_path(group, version)
    write = ("dryRun", "fieldManager", "fieldValidation")
    paths: dict[str, Any] = {}
    for r in served:
        scope = f"{prefix}/namespaces/{{namespace}}" if r.namespaced else prefix
        paths[f"{scope}/{r.plural}"] = {
            "get": _operation(r, "list", ("labelSelector", "fieldSelector", "watch")),
            "post": _operation(r, "post", write),
        }
        paths[f"{scope}/{r.plural}/{{name}}"] = {
            "get": _operation(r, "get", ()),
            "put": _operation(r, "put", write),
            "patch": _patch_operation(r, (*write, "force")),
            "delete": _operation(r, "delete", ("dryRun",)),
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": paths,
        "components": {"schemas": _schemas(served)},
    }


def custom_schema_name(r: Resource) -> str:
    """The OpenAPI name of a custom resource's schema: ``com.example.stable.v1.CronTab``
    for group ``stable.example.com``, as apiextensions names it."""
    return ".".join([*reversed(r.group.split(".")), r.version, r.kind])


def _gvk(r: Resource) -> list[dict[str, str]]:
    return [{"group": r.group, "version": r.version, "kind": r.kind}]


def _custom_schemas(r: Resource) -> dict[str, Any]:
    # The CRD's schema with the fields every object has, and its list.
    schema = dict(r.custom.schema or {}) if r.custom is not None else {}
    schema.setdefault("type", "object")
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = {"type": "string"}
    properties["kind"] = {"type": "string"}
    properties["metadata"] = {"$ref": schemas.REF_PREFIX + schemas.OBJECT_META}
    schema["properties"] = properties
    schema["x-kubernetes-group-version-kind"] = _gvk(r)
    name = custom_schema_name(r)
    listed = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": schemas.REF_PREFIX + name}},
            "metadata": {
                "$ref": schemas.REF_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
            },
        },
        "x-kubernetes-group-version-kind": [dict(_gvk(r)[0], kind=r.kind + "List")],
    }
    return {name: schema, name + "List": listed}


def _schemas(served: list[Resource]) -> dict[str, Any]:
    names = list(schemas.COMMON)
    custom: dict[str, Any] = {}
    for r in served:
        if r.custom is not None:
            found = _custom_schemas(r)
            custom.update(found)
            names += found
            names.append("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
            continue
        for kind in (r.kind, r.kind + "List"):
            name = schemas.name_of(r.group, r.version, kind)
            if name is not None:
                names.append(name)
    return schemas.closure(names, custom)
