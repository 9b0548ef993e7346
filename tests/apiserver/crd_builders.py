"""CustomResourceDefinitions for the CRD tests, and a kubernetes-client connection."""

from __future__ import annotations

import copy
from typing import Any

GROUP = "stable.example.com"

CRONTAB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["cronSpec"],
            "properties": {
                "cronSpec": {"type": "string", "pattern": r"^\S+ \S+$"},
                "image": {"type": "string", "minLength": 2, "maxLength": 20},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "policy": {"type": "string", "enum": ["Allow", "Forbid"], "default": "Allow"},
                "port": {"x-kubernetes-int-or-string": True},
                "note": {"type": "string", "nullable": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "hosts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "weight": {"type": "number"}},
                    },
                },
            },
        },
        "status": {
            "type": "object",
            "properties": {"phase": {"type": "string"}, "count": {"type": "integer"}},
        },
    },
}


def crd(
    plural: str = "crontabs",
    kind: str = "CronTab",
    group: str = GROUP,
    scope: str = "Namespaced",
    status: bool = True,
    versions: list[dict[str, Any]] | None = None,
    short_names: tuple[str, ...] = ("ct",),
) -> dict[str, Any]:
    """A valid CRD (apiextensions.k8s.io/v1) body."""
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": copy.deepcopy(CRONTAB_SCHEMA)},
        "additionalPrinterColumns": [
            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ],
    }
    if status:
        version["subresources"] = {"status": {}}
    names: dict[str, Any] = {"plural": plural, "kind": kind}
    if short_names:
        names["shortNames"] = list(short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": versions if versions is not None else [version],
        },
    }


def crontab(
    name: str, cron: str = "* *", api_version: str = f"{GROUP}/v1", **spec: Any
) -> dict[str, Any]:
    """A CronTab custom resource body."""
    return {
        "apiVersion": api_version,
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": cron, **spec},
    }
