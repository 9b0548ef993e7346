"""Generate ``src/kubesched/objects/openapi_schemas.json``: the OpenAPI v3 schemas of the
built-in kinds the embedded API server serves, from Kubernetes 1.34's published schemas.

Run by hand after changing :data:`ROOTS` (``.venv/bin/python tools/gen_openapi_schemas.py``);
``tests/apiserver/test_apiserver_explain.py`` regenerates the data and compares, so the file
cannot drift from this script.

The source is the pinned dev dependency ``kubernetes-validate`` (its ``v1.34.0-local``
definitions: upstream's OpenAPI v2 definitions turned into JSON Schema). It is preferred to
the ``kubernetes`` client's models because it keeps what kubectl and the server need and
the models drop: ``required``, ``format``, the ``x-kubernetes-*`` extensions (list types
and map keys, patch strategies, group-version-kind, int-or-string, preserve-unknown-fields)
and the exact upstream definition names. The conversion undoes the JSON-Schema additions:
``["string", "null"]`` types become ``string``, the int-or-string and quantity ``oneOf``
become upstream's ``type: string`` (``format: int-or-string``), the ``enum`` put on
``apiVersion``/``kind`` is dropped, references point at ``#/components/schemas/``. No
``description`` and no CEL rule text is kept: the data is the structure only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SOURCE_VERSION = "v1.34.0-local"
OUTPUT = Path(__file__).resolve().parent.parent / "src/kubesched/objects/openapi_schemas.json"

_CORE = "io.k8s.api.core.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_CRD = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

#: The kinds served (objects and their lists), the bodies of subresources (binding,
#: eviction, scale) and options.
ROOTS = (
    *(
        _CORE + kind
        for kind in (
            "Pod",
            "PodList",
            "Node",
            "NodeList",
            "Namespace",
            "NamespaceList",
            "Binding",
            "Event",
            "EventList",
            "ConfigMap",
            "ConfigMapList",
            "Secret",
            "SecretList",
            "ServiceAccount",
            "ServiceAccountList",
            "Service",
            "ServiceList",
            "ReplicationController",
            "ReplicationControllerList",
            "PersistentVolume",
            "PersistentVolumeList",
            "PersistentVolumeClaim",
            "PersistentVolumeClaimList",
        )
    ),
    *(
        "io.k8s.api.storage.v1." + kind
        for kind in (
            "StorageClass",
            "StorageClassList",
            "CSINode",
            "CSINodeList",
            "CSIDriver",
            "CSIDriverList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
            "VolumeAttachment",
            "VolumeAttachmentList",
            "VolumeAttributesClass",
            "VolumeAttributesClassList",
        )
    ),
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.events.v1.EventList",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseList",
    "io.k8s.api.scheduling.v1.PriorityClass",
    "io.k8s.api.scheduling.v1.PriorityClassList",
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    "io.k8s.api.policy.v1.PodDisruptionBudgetList",
    "io.k8s.api.policy.v1.Eviction",
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.DeploymentList",
    "io.k8s.api.apps.v1.ReplicaSet",
    "io.k8s.api.apps.v1.ReplicaSetList",
    "io.k8s.api.apps.v1.StatefulSet",
    "io.k8s.api.apps.v1.StatefulSetList",
    "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.apps.v1.DaemonSetList",
    "io.k8s.api.apps.v1.ControllerRevision",
    "io.k8s.api.apps.v1.ControllerRevisionList",
    "io.k8s.api.batch.v1.Job",
    "io.k8s.api.batch.v1.JobList",
    "io.k8s.api.batch.v1.CronJob",
    "io.k8s.api.batch.v1.CronJobList",
    "io.k8s.api.autoscaling.v1.Scale",
    *(
        "io.k8s.api.resource.v1." + kind
        for kind in (
            "DeviceClass",
            "DeviceClassList",
            "ResourceClaim",
            "ResourceClaimList",
            "ResourceClaimTemplate",
            "ResourceClaimTemplateList",
            "ResourceSlice",
            "ResourceSliceList",
        )
    ),
    _CRD + "CustomResourceDefinition",
    _CRD + "CustomResourceDefinitionList",
    _META + "DeleteOptions",
    _META + "Status",
    _META + "WatchEvent",
)

#: Keywords kept (besides ``properties``, handled apart); everything else is dropped.
_KEPT = frozenset(
    {
        "type",
        "format",
        "items",
        "additionalProperties",
        "required",
        "$ref",
        "x-kubernetes-group-version-kind",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-unions",
    }
)
_REF_PREFIX = "#/$defs/"


def source_definitions() -> dict[str, Any]:
    """The 1.34 definitions shipped by kubernetes-validate."""
    import kubernetes_validate  # a dev dependency: imported only when generating

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    data = json.loads((root / SOURCE_VERSION / "_definitions.json").read_text())
    definitions: dict[str, Any] = data["$defs"]
    return definitions


def _scalar_types(options: list[Any]) -> list[str]:
    found = []
    for option in options:
        kinds = option.get("type") if isinstance(option, dict) else None
        kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if k != "null"]
        if len(kinds) != 1 or len(option) != 1:
            return []
        found.append(kinds[0])
    return sorted(found)


def convert(node: Any, *, property_name: str = "") -> Any:
    """One JSON-Schema node as an OpenAPI v3 schema without prose."""
    if not isinstance(node, dict):
        return node
    options = node.get("oneOf")
    if isinstance(options, list):
        types = _scalar_types(options)
        if types == ["integer", "string"]:
            return {"type": "string", "format": "int-or-string"}
        if types == ["number", "string"]:
            return {"type": "string"}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: convert(sub, property_name=name) for name, sub in value.items()}
        elif key == "type":
            kinds = [k for k in (value if isinstance(value, list) else [value]) if k != "null"]
            if kinds:
                out[key] = kinds[0] if len(kinds) == 1 else kinds
        elif key == "$ref":
            out[key] = "#/components/schemas/" + value.removeprefix(_REF_PREFIX)
        elif key in ("items", "additionalProperties"):
            out[key] = convert(value)
        elif key in _KEPT:
            out[key] = value
    if property_name in ("apiVersion", "kind"):
        out.pop("enum", None)
    return out


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.removeprefix(_REF_PREFIX))
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def generate(definitions: dict[str, Any]) -> dict[str, Any]:
    """The schemas of :data:`ROOTS` and everything they reference, converted."""
    wanted = list(ROOTS)
    chosen: dict[str, Any] = {}
    while wanted:
        name = wanted.pop()
        if name in chosen:
            continue
        if name not in definitions:
            raise SystemExit(f"{name}: not among the {SOURCE_VERSION} definitions")
        chosen[name] = definitions[name]
        refs: set[str] = set()
        _refs(chosen[name], refs)
        wanted.extend(sorted(refs - chosen.keys()))
    return {name: convert(chosen[name]) for name in sorted(chosen)}


def render(schemas: dict[str, Any]) -> str:
    """The data file's text: one schema per line, so that a change reads as a small diff."""
    lines = [
        json.dumps(name) + ":" + json.dumps(schema, sort_keys=True, separators=(",", ":"))
        for name, schema in schemas.items()
    ]
    head = json.dumps(f"kubernetes-validate {SOURCE_VERSION}, tools/gen_openapi_schemas.py")
    return '{"source":' + head + ',"schemas":{\n' + ",\n".join(lines) + "\n}}\n"


def main() -> int:
    text = render(generate(source_definitions()))
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
