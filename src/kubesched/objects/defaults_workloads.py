"""Upstream's defaulting of the workload kinds and of the kinds manifests carry beside them.

kube-apiserver defaults every object it decodes (create, update and patch alike) with the
``SetDefaults_*`` functions of its versioned types, recursing into nested types: a pod
template inside a Deployment, a ReplicaSet or a Job gets ``SetDefaults_PodSpec`` and
``SetDefaults_Container`` just as a pod does, but not the pod-only ``SetDefaults_Pod``
(requests from limits, ``enableServiceLinks``). This module holds those functions for
apps/v1 (Deployment, ReplicaSet, StatefulSet, DaemonSet), batch/v1 Job and CronJob, core/v1
ReplicationController and Secret, and pod templates, by kind (:data:`DEFAULTERS`);
:mod:`kubesched.objects.defaults` applies them on every write. What a registry strategy
does on create (a Job's generated selector, a cleared status) is the API server's
(:mod:`kubesched.apiserver.strategy`).

Each function changes the object in place and leaves values of the wrong JSON type alone:
validation reports those.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

Object = dict[str, Any]

#: ``v1.DefaultTerminationGracePeriodSeconds``.
TERMINATION_GRACE_SECONDS = 30
#: ``v1.DefaultSchedulerName``.
DEFAULT_SCHEDULER = "default-scheduler"
#: ``v1.SecretVolumeSourceDefaultMode`` and its ConfigMap, DownwardAPI, Projected twins (0644).
VOLUME_DEFAULT_MODE = 0o644
#: backoffLimit when backoffLimitPerIndex is set (``math.MaxInt32``).
_MAX_INT32 = 2**31 - 1


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _each_dict(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _spec(obj: Object) -> dict[str, Any] | None:
    spec = obj.setdefault("spec", {})
    return _dict(spec)


# -- pod specs ------------------------------------------------------------------------------


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and what it recurses into (containers, ports, probes,
    volumes, field references), for a pod's spec or a template's."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = TERMINATION_GRACE_SECONDS
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _each_dict(spec.get(key)):
            default_container(container)
    for volume in _each_dict(spec.get("volumes")):
        _default_volume(volume)


def default_container(container: dict[str, Any]) -> None:
    """``SetDefaults_Container`` (and its ports, probes and env field references)."""
    if not container.get("imagePullPolicy"):
        image = container.get("image")
        latest = isinstance(image, str) and _image_tag(image) == "latest"
        container["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = "/dev/termination-log"
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in _each_dict(container.get("ports")):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _dict(container.get(key))
        if probe is not None:
            _default_probe(probe)
    for env in _each_dict(container.get("env")):
        source = _dict(env.get("valueFrom"))
        field_ref = _dict(source.get("fieldRef")) if source is not None else None
        if field_ref is not None and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"


def _image_tag(image: str) -> str:
    # parsers.ParseImageName: an image with neither tag nor digest means ":latest".
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    if not tag and not digest:
        return "latest"
    return tag


def _default_probe(probe: dict[str, Any]) -> None:
    # SetDefaults_Probe and SetDefaults_HTTPGetAction.
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = value
    http_get = _dict(probe.get("httpGet"))
    if http_get is not None:
        if not http_get.get("path"):
            http_get["path"] = "/"
        if not http_get.get("scheme"):
            http_get["scheme"] = "HTTP"


def _default_volume(volume: dict[str, Any]) -> None:
    # SetDefaults_Volume: a volume naming no source is an emptyDir; the file-projecting
    # sources get mode 0644.
    sources = [k for k in volume if k != "name"]
    if not sources:
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _dict(volume.get(key))
        if source is not None and source.get("defaultMode") is None:
            source["defaultMode"] = VOLUME_DEFAULT_MODE
    host_path = _dict(volume.get("hostPath"))
    if host_path is not None and host_path.get("type") is None:
        host_path["type"] = ""  # SetDefaults_HostPathVolumeSource: HostPathUnset


def default_pod_template(template: Any) -> None:
    """The defaults a pod template gets inside a workload (its spec's, as a pod's)."""
    tmpl = _dict(template)
    spec = _dict(tmpl.get("spec")) if tmpl is not None else None
    if spec is not None:
        default_pod_spec(spec)


# -- workloads ------------------------------------------------------------------------------


def default_deployment(obj: Object) -> None:
    """apps/v1 ``SetDefaults_Deployment``: one replica, RollingUpdate 25%/25%, ten old
    ReplicaSets kept, a 600 s progress deadline."""
    spec = _spec(obj)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if rolling is None:
                rolling = strategy["rollingUpdate"] = {}
            if isinstance(rolling, dict):
                if rolling.get("maxUnavailable") is None:
                    rolling["maxUnavailable"] = "25%"
                if rolling.get("maxSurge") is None:
                    rolling["maxSurge"] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    default_pod_template(spec.get("template"))


def default_replica_set(obj: Object) -> None:
    """apps/v1 ``SetDefaults_ReplicaSet``: one replica."""
    spec = _spec(obj)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec.get("template"))


def default_stateful_set(obj: Object) -> None:
    """apps/v1 ``SetDefaults_StatefulSet``."""
    spec = _spec(obj)
    if spec is None:
        return
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            if strategy.get("rollingUpdate") is None:
                strategy["rollingUpdate"] = {}
        rolling = _dict(strategy.get("rollingUpdate"))
        if strategy["type"] == "RollingUpdate" and rolling is not None:
            rolling.setdefault("partition", 0)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            if not retention.get(key):
                retention[key] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    for claim in _each_dict(spec.get("volumeClaimTemplates")):
        # SetDefaults_PersistentVolumeClaimSpec reaches the claim templates too.
        claim_spec = _dict(claim.get("spec"))
        if claim_spec is not None and not claim_spec.get("volumeMode"):
            claim_spec["volumeMode"] = "Filesystem"
    default_pod_template(spec.get("template"))


def default_daemon_set(obj: Object) -> None:
    """apps/v1 ``SetDefaults_DaemonSet``: RollingUpdate with maxUnavailable 1 and
    maxSurge 0, ten old revisions kept."""
    spec = _spec(obj)
    if spec is None:
        return
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.get("rollingUpdate")
            if rolling is None:
                rolling = strategy["rollingUpdate"] = {}
            if isinstance(rolling, dict):
                if rolling.get("maxUnavailable") is None:
                    rolling["maxUnavailable"] = 1
                if rolling.get("maxSurge") is None:
                    rolling["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    default_pod_template(spec.get("template"))


def default_replication_controller(obj: Object) -> None:
    """core/v1 ``SetDefaults_ReplicationController``'s one replica and the template's
    defaults (the selector and labels from the template: :mod:`kubesched.objects.defaults`)."""
    spec = _spec(obj)
    if spec is None:
        return
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    default_pod_template(spec.get("template"))


def default_job(obj: Object) -> None:
    """batch/v1 ``SetDefaults_Job``."""
    spec, meta = _spec(obj), obj.get("metadata")
    if spec is None:
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        per_index = spec.get("backoffLimitPerIndex") is not None
        spec["backoffLimit"] = _MAX_INT32 if per_index else 6
    template = _dict(spec.get("template"))
    tmeta = _dict(template.get("metadata")) if template is not None else None
    tlabels = tmeta.get("labels") if tmeta is not None else None
    if isinstance(tlabels, dict) and isinstance(meta, dict) and not meta.get("labels"):
        meta["labels"] = dict(tlabels)
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    failure_policy = _dict(spec.get("podFailurePolicy"))
    for rule in _each_dict(failure_policy.get("rules") if failure_policy else None):
        for pattern in _each_dict(rule.get("onPodConditions")):
            if not pattern.get("status"):
                pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = (
            "Failed" if failure_policy is not None else "TerminatingOrFailed"
        )
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    default_pod_template(template)


def default_cron_job(obj: Object) -> None:
    """batch/v1 ``SetDefaults_CronJob``: concurrencyPolicy Allow, not suspended, three
    successful and one failed Job kept. The Job template's spec gets no ``SetDefaults_Job``
    (that is the Job's, applied when the controller creates it), only its pod template's
    defaults."""
    spec = _spec(obj)
    if spec is None:
        return
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    job_template = _dict(spec.get("jobTemplate"))
    job_spec = _dict(job_template.get("spec")) if job_template is not None else None
    if job_spec is not None:
        default_pod_template(job_spec.get("template"))


# -- core kinds beside workloads ------------------------------------------------------------


def default_secret(obj: Object) -> None:
    """``SetDefaults_Secret`` (type Opaque) and the v1 → internal conversion's merge of
    the write-only ``stringData`` into ``data`` (base64, overriding a key in both)."""
    if not obj.get("type"):
        obj["type"] = "Opaque"
    string_data = obj.get("stringData")
    if isinstance(string_data, dict):
        if string_data:
            data = obj.get("data")
            if not isinstance(data, dict):
                data = obj["data"] = {}
            for key, value in string_data.items():
                if isinstance(value, str):
                    data[key] = base64.b64encode(value.encode()).decode()
        del obj["stringData"]


#: Kind → defaulting of the kinds this module defaults.
DEFAULTERS: dict[str, Callable[[Object], None]] = {
    "Deployment": default_deployment,
    "ReplicaSet": default_replica_set,
    "StatefulSet": default_stateful_set,
    "DaemonSet": default_daemon_set,
    "ReplicationController": default_replication_controller,
    "Job": default_job,
    "CronJob": default_cron_job,
    "Secret": default_secret,
}
