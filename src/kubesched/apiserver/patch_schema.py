"""The patch strategies of the built-in types, as data: which lists merge, and by which key.

Transcribed from the ``patchStrategy`` / ``patchMergeKey`` struct tags of
``staging/src/k8s.io/api/core/v1/types.go`` (and apps/v1, batch/v1, policy/v1, meta/v1). A field not
listed has no strategy: a list is replaced whole, a map is merged key by key. A field
listed with a ``type`` only names the type of its value (or of its list's elements), so the
walk can find the strategies further down.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PatchField:
    """One field's tags: ``strategy`` ("merge", "merge,retainKeys", ""), ``key`` (the
    patchMergeKey of a list of objects; empty for a list of primitives) and ``type``."""

    strategy: str = ""
    key: str = ""
    type: str = ""

    @property
    def merges(self) -> bool:
        """Whether the list merges (else it is replaced)."""
        return "merge" in self.strategy.split(",")


def _merge(key: str = "", type_: str = "", retain: bool = False) -> PatchField:
    return PatchField("merge,retainKeys" if retain else "merge", key, type_)


def _of(type_: str) -> PatchField:
    return PatchField(type=type_)


_CONDITIONS = _merge("type")
_TEMPLATED_SPEC = {"template": _of("PodTemplateSpec")}
_WITH_CONDITIONS = {"conditions": _CONDITIONS}

#: Type name → field name → tags.
TYPES: dict[str, dict[str, PatchField]] = {
    "ObjectMeta": {"finalizers": _merge(), "ownerReferences": _merge("uid")},
    "PodTemplateSpec": {"metadata": _of("ObjectMeta"), "spec": _of("PodSpec")},
    "PodSpec": {
        "volumes": _merge("name", retain=True),
        "initContainers": _merge("name", "Container"),
        "containers": _merge("name", "Container"),
        "ephemeralContainers": _merge("name", "Container"),
        "imagePullSecrets": _merge("name"),
        "hostAliases": _merge("ip"),
        "schedulingGates": _merge("name"),
        "resourceClaims": _merge("name", retain=True),
        "topologySpreadConstraints": _merge("topologyKey"),
    },
    "Container": {
        "ports": _merge("containerPort"),
        "env": _merge("name"),
        "volumeMounts": _merge("mountPath"),
        "volumeDevices": _merge("devicePath"),
    },
    "PodStatus": {
        "conditions": _CONDITIONS,
        "podIPs": _merge("ip"),
        "hostIPs": _merge("ip"),
        "resourceClaimStatuses": _merge("name", retain=True),
    },
    "NodeSpec": {"podCIDRs": _merge()},
    "NodeStatus": {"conditions": _CONDITIONS, "addresses": _merge("type")},
    "ServiceSpec": {"ports": _merge("port")},
    "Conditioned": _WITH_CONDITIONS,
    "WorkloadSpec": _TEMPLATED_SPEC,
    # DeploymentSpec.strategy is retainKeys: kubectl sends the $retainKeys directive.
    "DeploymentSpec": {**_TEMPLATED_SPEC, "strategy": PatchField("retainKeys")},
    # StatefulSetSpec.volumeClaimTemplates has no strategy (atomic): replaced whole.
    "CronJobSpec": {"jobTemplate": _of("JobTemplateSpec")},
    "JobTemplateSpec": {"metadata": _of("ObjectMeta"), "spec": _of("WorkloadSpec")},
    # resource.k8s.io/v1: only a claim's consumers merge (by uid); the rest is atomic.
    "ResourceClaimStatus": {"reservedFor": _merge("uid")},
}


def _object(spec: str = "", status: str = "") -> dict[str, PatchField]:
    fields = {"metadata": _of("ObjectMeta")}
    if spec:
        fields["spec"] = _of(spec)
    if status:
        fields["status"] = _of(status)
    return fields


#: Kind → its top-level type (registered below as a type of the same name).
KINDS: dict[str, dict[str, PatchField]] = {
    "Pod": _object("PodSpec", "PodStatus"),
    "Node": _object("NodeSpec", "NodeStatus"),
    "Namespace": _object("", "Conditioned"),
    "Service": _object("ServiceSpec", "Conditioned"),
    "Deployment": _object("DeploymentSpec", "Conditioned"),
    "ReplicaSet": _object("WorkloadSpec", "Conditioned"),
    "StatefulSet": _object("WorkloadSpec", "Conditioned"),
    "ReplicationController": _object("WorkloadSpec", "Conditioned"),
    "DaemonSet": _object("WorkloadSpec", "Conditioned"),
    "ControllerRevision": _object(),
    "Job": _object("WorkloadSpec", "Conditioned"),
    "CronJob": _object("CronJobSpec"),
    "PodDisruptionBudget": _object("", "Conditioned"),
    "Event": _object(),
    "ConfigMap": _object(),
    "Secret": _object(),
    "ServiceAccount": {**_object(), "secrets": _merge("name")},
    "Lease": _object(),
    "PriorityClass": _object(),
    "DeviceClass": _object(),
    "ResourceClaim": _object("", "ResourceClaimStatus"),
    "ResourceClaimTemplate": _object(),
    "ResourceSlice": _object(),
}
TYPES.update(KINDS)


def field_of(type_name: str, name: str) -> PatchField | None:
    """The tags of ``name`` in ``type_name``, or None (no strategy, unknown type)."""
    fields = TYPES.get(type_name)
    return fields.get(name) if fields else None
