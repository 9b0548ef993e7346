"""The JSON types the decoder insists on, for the fields validation and defaulting read.

kube-apiserver decodes a body into Go structs before anything validates it, so a wrong
JSON type (``"containers": 1``) is a 400 BadRequest with encoding/json's words (``json:
cannot unmarshal number into Go struct field PodSpec.spec.containers of type
[]v1.Container``), never a 422. :func:`check_types` walks the table :data:`TYPES` (type →
field → expected JSON kind, Go type, element or value type) and raises
:class:`~kubesched.objects.validation.core.Undecodable` with that message; fields not in
the table are not looked at.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kubesched.objects.validation.core import Undecodable


class Shape(NamedTuple):
    """A field's JSON kind (object, array, map, string, integer), Go type, and the type
    name of its value (object) or elements (array), if the walk goes further."""

    kind: str
    go_type: str
    inner: str = ""


def _s() -> Shape:
    return Shape("string", "string")


def _i() -> Shape:
    return Shape("integer", "int64")


_STRING_MAP = Shape("map", "map[string]string")
_RESOURCES = Shape("object", "v1.ResourceList")

TYPES: dict[str, dict[str, Shape]] = {
    "ObjectMeta": {
        "name": _s(),
        "generateName": _s(),
        "namespace": _s(),
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": Shape("array", "[]string", "string"),
        "ownerReferences": Shape("array", "[]v1.OwnerReference", "OwnerReference"),
    },
    "OwnerReference": {"uid": _s(), "name": _s(), "kind": _s(), "apiVersion": _s()},
    "PodSpec": {
        "containers": Shape("array", "[]v1.Container", "Container"),
        "initContainers": Shape("array", "[]v1.Container", "Container"),
        "tolerations": Shape("array", "[]v1.Toleration", "Toleration"),
        "schedulingGates": Shape("array", "[]v1.PodSchedulingGate", "PodSchedulingGate"),
        "nodeSelector": _STRING_MAP,
        "nodeName": _s(),
        "schedulerName": _s(),
        "priorityClassName": _s(),
        "activeDeadlineSeconds": _i(),
        "terminationGracePeriodSeconds": _i(),
        "overhead": _RESOURCES,
        "volumes": Shape("array", "[]v1.Volume", "Volume"),
        "affinity": Shape("object", "v1.Affinity"),
        "securityContext": Shape("object", "v1.PodSecurityContext", "PodSecurityContext"),
        "topologySpreadConstraints": Shape(
            "array", "[]v1.TopologySpreadConstraint", "TopologySpreadConstraint"
        ),
        "restartPolicy": _s(),
        "dnsPolicy": _s(),
        "hostNetwork": Shape("bool", "bool"),
    },
    "Container": {
        "name": _s(),
        "image": _s(),
        "resources": Shape("object", "v1.ResourceRequirements", "ResourceRequirements"),
        "ports": Shape("array", "[]v1.ContainerPort", "ContainerPort"),
        "env": Shape("array", "[]v1.EnvVar", "EnvVar"),
        "envFrom": Shape("array", "[]v1.EnvFromSource"),
        "volumeMounts": Shape("array", "[]v1.VolumeMount", "VolumeMount"),
        "livenessProbe": Shape("object", "v1.Probe", "Probe"),
        "readinessProbe": Shape("object", "v1.Probe", "Probe"),
        "startupProbe": Shape("object", "v1.Probe", "Probe"),
        "securityContext": Shape("object", "v1.SecurityContext", "SecurityContext"),
        "imagePullPolicy": _s(),
        "terminationMessagePolicy": _s(),
    },
    "ResourceRequirements": {"limits": _RESOURCES, "requests": _RESOURCES},
    "ContainerPort": {
        "containerPort": Shape("integer", "int32"),
        "hostPort": Shape("integer", "int32"),
        "name": _s(),
        "protocol": _s(),
    },
    "EnvVar": {"name": _s(), "value": _s()},
    "VolumeMount": {"name": _s(), "mountPath": _s(), "subPath": _s()},
    "Probe": {
        key: Shape("integer", "int32")
        for key in (
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold",
        )
    },
    "SecurityContext": {"runAsUser": _i(), "runAsGroup": _i()},
    "PodSecurityContext": {"runAsUser": _i(), "runAsGroup": _i(), "fsGroup": _i()},
    "TopologySpreadConstraint": {
        "maxSkew": Shape("integer", "int32"),
        "topologyKey": _s(),
        "whenUnsatisfiable": _s(),
    },
    "Toleration": {"key": _s(), "operator": _s(), "value": _s(), "effect": _s()},
    "PodSchedulingGate": {"name": _s()},
    "Volume": {"name": _s()},
    "NodeSpec": {"taints": Shape("array", "[]v1.Taint", "Taint")},
    "Taint": {"key": _s(), "value": _s(), "effect": _s()},
    "NodeStatus": {"capacity": _RESOURCES, "allocatable": _RESOURCES},
    "LabelSelector": {"matchLabels": _STRING_MAP},
    "PodTemplateSpec": {
        "metadata": Shape("object", "v1.ObjectMeta", "ObjectMeta"),
        "spec": Shape("object", "v1.PodSpec", "PodSpec"),
    },
}


def _root(spec: str = "", go_spec: str = "", status: str = "") -> dict[str, Shape]:
    fields = {"metadata": Shape("object", "v1.ObjectMeta", "ObjectMeta")}
    if spec:
        fields["spec"] = Shape("object", go_spec, spec)
    if status:
        fields["status"] = Shape("object", f"v1.{status}", status)
    return fields


#: What PersistentVolumeSpec and PersistentVolumeClaimSpec share.
_VOLUME_COMMON = {
    "accessModes": Shape("array", "[]v1.PersistentVolumeAccessMode", "string"),
    "volumeMode": Shape("string", "v1.PersistentVolumeMode"),
    "volumeAttributesClassName": _s(),
}
_WORKLOAD = {
    "selector": Shape("object", "v1.LabelSelector", "LabelSelector"),
    "template": Shape("object", "v1.PodTemplateSpec", "PodTemplateSpec"),
    "replicas": Shape("integer", "int32"),
}
TYPES.update(
    {
        "Pod": _root("PodSpec", "v1.PodSpec", "PodStatus"),
        "PodStatus": {"nominatedNodeName": _s()},
        "Node": _root("NodeSpec", "v1.NodeSpec", "NodeStatus"),
        "ReplicaSet": _root("ReplicaSetSpec", "v1.ReplicaSetSpec"),
        "ReplicaSetSpec": _WORKLOAD,
        "StatefulSet": _root("StatefulSetSpec", "v1.StatefulSetSpec"),
        "StatefulSetSpec": _WORKLOAD,
        "ReplicationController": _root("ReplicationControllerSpec", "v1.ReplicationControllerSpec"),
        "ReplicationControllerSpec": {
            "selector": _STRING_MAP,
            "template": Shape("object", "*v1.PodTemplateSpec", "PodTemplateSpec"),
            "replicas": Shape("integer", "int32"),
        },
        "PodDisruptionBudget": _root("PodDisruptionBudgetSpec", "v1.PodDisruptionBudgetSpec"),
        "PodDisruptionBudgetSpec": {
            "selector": Shape("object", "*v1.LabelSelector", "LabelSelector")
        },
        "Service": _root("ServiceSpec", "v1.ServiceSpec"),
        "ServiceSpec": {
            "selector": _STRING_MAP,
            "ports": Shape("array", "[]v1.ServicePort", "ServicePort"),
            "type": _s(),
            "clusterIP": _s(),
            "externalName": _s(),
            "sessionAffinity": _s(),
        },
        "ServicePort": {
            "name": _s(),
            "protocol": _s(),
            "port": Shape("integer", "int32"),
            "nodePort": Shape("integer", "int32"),
        },
        "PriorityClass": {**_root(), "value": Shape("integer", "int32")},
        "PersistentVolume": _root("PersistentVolumeSpec", "v1.PersistentVolumeSpec"),
        "PersistentVolumeSpec": {
            **_VOLUME_COMMON,
            "capacity": Shape("object", "v1.ResourceList"),
            "persistentVolumeReclaimPolicy": Shape("string", "v1.PersistentVolumeReclaimPolicy"),
            "storageClassName": _s(),
            "mountOptions": Shape("array", "[]string", "string"),
            "claimRef": Shape("object", "v1.ObjectReference", "ObjectReference"),
            "nodeAffinity": Shape("object", "v1.VolumeNodeAffinity"),
            "hostPath": Shape("object", "v1.HostPathVolumeSource", "HostPathVolumeSource"),
            "csi": Shape("object", "v1.CSIPersistentVolumeSource", "CSIPersistentVolumeSource"),
        },
        "ObjectReference": {"kind": _s(), "namespace": _s(), "name": _s(), "uid": _s()},
        "HostPathVolumeSource": {"path": _s(), "type": Shape("string", "v1.HostPathType")},
        "CSIPersistentVolumeSource": {"driver": _s(), "volumeHandle": _s(), "fsType": _s()},
        "PersistentVolumeClaim": _root("PersistentVolumeClaimSpec", "v1.PersistentVolumeClaimSpec"),
        "PersistentVolumeClaimSpec": {
            **_VOLUME_COMMON,
            "resources": Shape(
                "object", "v1.VolumeResourceRequirements", "VolumeResourceRequirements"
            ),
            "storageClassName": _s(),
            "volumeName": _s(),
            "selector": Shape("object", "v1.LabelSelector", "LabelSelector"),
        },
        "VolumeResourceRequirements": {
            "requests": Shape("object", "v1.ResourceList"),
            "limits": Shape("object", "v1.ResourceList"),
        },
        "StorageClass": {
            **_root(),
            "provisioner": _s(),
            "parameters": _STRING_MAP,
            "reclaimPolicy": Shape("string", "v1.PersistentVolumeReclaimPolicy"),
            "volumeBindingMode": Shape("string", "v1.VolumeBindingMode"),
            "allowVolumeExpansion": Shape("bool", "bool"),
            "mountOptions": Shape("array", "[]string", "string"),
        },
        "ConfigMap": {
            **_root(),
            "data": _STRING_MAP,
            "binaryData": Shape("map", "map[string][]uint8"),
            "immutable": Shape("bool", "*bool"),
        },
    }
)


def _json_kind(value: Any) -> str:
    # encoding/json's names for what it found.
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _fits(value: Any, kind: str) -> bool:
    if kind in ("object", "map"):
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    return isinstance(value, int) and not isinstance(value, bool)


def _refuse(value: Any, struct: str, path: str, go_type: str) -> Undecodable:
    return Undecodable(
        f"json: cannot unmarshal {_json_kind(value)} into Go struct field {struct}.{path} of "
        f"type {go_type}"
    )


#: Every kind has its ObjectMeta: a kind without a row of its own has that much checked.
_ANY_KIND = _root()


def check_types(kind: str, obj: dict[str, Any]) -> None:
    """Raise :class:`Undecodable` where ``obj`` (of ``kind``) has a field of the wrong type."""
    if kind in TYPES:
        _walk(kind, obj, "")
    else:
        _walk_fields(_ANY_KIND, kind, obj, "")


def _walk(type_name: str, obj: dict[str, Any], path: str) -> None:
    fields = TYPES.get(type_name)
    if fields:
        _walk_fields(fields, type_name, obj, path)


def _walk_fields(fields: dict[str, Shape], type_name: str, obj: dict[str, Any], path: str) -> None:
    # The body's own order, as encoding/json meets the fields (its first error is the one
    # reported); and a body names far fewer fields than the table knows.
    for name, value in obj.items():
        shape = fields.get(name)
        if shape is None or value is None:
            continue
        at = f"{path}.{name}" if path else name
        if not _fits(value, shape.kind):
            raise _refuse(value, type_name, at, shape.go_type)
        if shape.kind == "map":
            for item in value.values():
                if item is not None and not isinstance(item, str):
                    raise _refuse(item, type_name, at, "string")
        elif shape.kind == "array" and shape.inner:
            for item in value:
                if item is None:
                    continue
                if shape.inner == "string":
                    if not isinstance(item, str):
                        raise _refuse(item, type_name, at, "string")
                elif not isinstance(item, dict):
                    raise _refuse(item, type_name, at, f"v1.{shape.inner}")
                else:
                    _walk(shape.inner, item, at)
        elif shape.kind == "object" and shape.inner:
            _walk(shape.inner, value, at)
