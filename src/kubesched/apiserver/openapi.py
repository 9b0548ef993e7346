"""The least OpenAPI v3 that ``kubectl`` needs: one document per group/version.

kubectl (1.27+) reads ``/openapi/v3`` to learn whether the server validates fields itself:
it looks for a PATCH operation tagged with the object's group/version/kind that takes a
``fieldValidation`` query parameter, and then skips client-side schema validation. Without
any OpenAPI it refuses to ``apply`` unless told ``--validate=false``. These documents list
the paths and operations, not the schemas (later slice: real schemas for ``explain``).
Each document's ``hash`` follows what it lists, so that kubectl's cache (which keeps a
document by URL) sees a group/version change when custom resources come and go.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubesched.apiserver.resources import Resource


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def root(resources: tuple[Resource, ...]) -> dict[str, Any]:
    """The ``/openapi/v3`` index: one entry per served group/version."""
    listed: dict[str, list[str]] = {}
    for r in resources:
        if r.served:
            listed.setdefault(_gv_path(r.group, r.version), []).append(
                f"{r.plural}/{r.kind}/{r.namespaced}"
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
            "patch": _operation(r, "patch", (*write, "force")),
            "delete": _operation(r, "delete", ("dryRun",)),
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0-kubesched"},
        "paths": paths,
        "components": {"schemas": {}},
    }
