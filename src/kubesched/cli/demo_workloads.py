"""The workload of ``kubesched demo``: the objects a team would apply, wave by wave.

Every wave is data — API objects (Deployments, a StatefulSet with its headless Service
and claims on the ``zonal`` StorageClass, a DaemonSet, Jobs, one of them asking for GPUs
through a ResourceClaimTemplate) created through the API server as ``kubectl apply``
would; the
controllers beside the server turn them into pods, the live scheduler places those. A
wave is submitted once the previous one has settled, because the story depends on
order: the batch pods must run before the urgent pod comes, or there would be nothing
to preempt; the 1-GPU training Jobs must be placed before the 4-GPU one.

To add to the story, add objects (or a wave) to :func:`waves`: any kind of
:data:`KINDS` can go in a wave, and a kind the demo has not created before goes into
that table first (a PersistentVolumeClaim, a ResourceClaimTemplate, a PodGroup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.cli.demo_story import (
    DEFAULT_PROFILE,
    GPU_PROFILE,
    GPU_TAINT,
    HOSTNAME_LABEL,
    LATEST_GPU_MODEL,
    NAMESPACE,
    TEAM_PROFILE,
)
from kubesched.controllers.csi.drivers import ZONAL_CLASS
from kubesched.controllers.daemonset import DAEMON_SETS
from kubesched.controllers.deployment import DEPLOYMENTS
from kubesched.controllers.dradriver import DRIVER
from kubesched.controllers.job import JOBS
from kubesched.controllers.kubelet import RUN_SECONDS_ANNOTATION
from kubesched.kube.resources import (
    ELASTIC_QUOTAS,
    NAMESPACES,
    POD_GROUPS,
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    SERVICES,
    STATEFUL_SETS,
    RawObject,
    Resource,
)
from kubesched.objects.nodes import GPU_RESOURCE, ZONE_LABEL
from kubesched.objects.podgroup import POD_GROUP_LABEL

__all__ = [
    "KINDS",
    "RULE_ANNOTATION",
    "TRAIN_SECONDS",
    "WORKLOAD_KINDS",
    "Wave",
    "resource_of",
    "waves",
]

#: Annotation on each workload and its pod template: the rule that decides where its
#: pods go (the "why" of the report).
RULE_ANNOTATION = "demo.kubesched.io/rule"
#: How long a training Job's pod runs (the simulated kubelet's ``run-seconds``): long
#: enough that the 1-GPU Jobs still hold their GPUs when the 4-GPU Job comes.
TRAIN_SECONDS = 2.0
#: How long the teams' pods run: past the end of the demo, so that they hold their GPUs
#: (and their quotas' use) when it reads everything back. The demo does not wait for
#: Jobs whose pods run longer than :data:`WAITED_SECONDS`.
LONG_RUN_SECONDS = 3600.0
WAITED_SECONDS = 60.0

#: What the demo may create, by ``(apiVersion, kind)``: the collection to POST it to.
KINDS: dict[tuple[str, str], Resource[RawObject]] = {
    ("v1", "Pod"): PODS.raw,
    ("v1", "Service"): SERVICES.raw,
    ("apps/v1", "Deployment"): DEPLOYMENTS,
    ("apps/v1", "StatefulSet"): STATEFUL_SETS.raw,
    ("apps/v1", "DaemonSet"): DAEMON_SETS,
    ("batch/v1", "Job"): JOBS,
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): RESOURCE_CLAIM_TEMPLATES.raw,
    ("v1", "Namespace"): NAMESPACES.raw,
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): POD_GROUPS.raw,
    ("scheduling.x-k8s.io/v1alpha1", "ElasticQuota"): ELASTIC_QUOTAS.raw,
}
#: The kinds whose controllers make pods: the owners the report counts pods by.
WORKLOAD_KINDS = ("DaemonSet", "Deployment", "StatefulSet", "Job")


def resource_of(manifest: Mapping[str, Any]) -> Resource[RawObject]:
    """The collection ``manifest`` is created in; a clear error for a kind not in KINDS."""
    key = (str(manifest.get("apiVersion", "")), str(manifest.get("kind", "")))
    try:
        return KINDS[key]
    except KeyError:
        name = (manifest.get("metadata") or {}).get("name", "")
        known = ", ".join(f"{v}/{k}" for v, k in KINDS)
        raise ValueError(
            f"demo wave object {key[0]}/{key[1]} {name!r}: the demo cannot create this kind "
            f"(known: {known}); add it to demo_workloads.KINDS"
        ) from None


@dataclass(frozen=True)
class Wave:
    """Objects submitted together, and what the demo says about them."""

    title: str
    objects: Sequence[RawObject]
    #: A profile to schedule this wave's pods with again in the policy lab, for contrast
    #: ("" for none): what they would have got without the profile they name.
    replay_with: str = ""
    #: Submit the wave at the start of a wall-clock second, so that its pods' creation
    #: times, in whole seconds, are alike: preemption prefers the victims that started
    #: last (``pickOneNodeForPreemption``), and pods made across a second's turn would
    #: make that choice depend on the moment rather than on ``--seed``.
    same_second: bool = False
    #: Submit the wave once the Jobs before it have finished (those that will), so that
    #: the GPUs they held are free again whatever the machine's speed.
    after_jobs: bool = False

    @property
    def workloads(self) -> list[RawObject]:
        """The objects of the wave that make pods."""
        return [o for o in self.objects if o.get("kind") in WORKLOAD_KINDS]


# --- builders ------------------------------------------------------------------------


def _meta(
    name: str,
    rule: str = "",
    labels: Mapping[str, str] | None = None,
    namespace: str = NAMESPACE,
) -> RawObject:
    meta: RawObject = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if rule:
        meta["annotations"] = {RULE_ANNOTATION: rule}
    return meta


def pod_template(
    labels: Mapping[str, str],
    cpu: str,
    memory: str,
    *,
    rule: str,
    priority_class: str = "standard",
    scheduler: str = DEFAULT_PROFILE,
    gpus: int = 0,
    spread: Sequence[Mapping[str, Any]] = (),
    tolerations: Sequence[Mapping[str, str]] = (),
    run_seconds: float | None = None,
    restart_policy: str = "Always",
    resource_claims: Mapping[str, str] | None = None,
    volume_mounts: Mapping[str, str] | None = None,
) -> RawObject:
    """A pod template with one container and the given requests and constraints.

    ``resource_claims``: the pod's claims by name → the ResourceClaimTemplate each is
    made from (the container uses them all); ``volume_mounts``: volume name → path (a
    StatefulSet's claim templates name the volumes)."""
    requests: dict[str, str] = {"cpu": cpu, "memory": memory}
    resources: dict[str, Any] = {"requests": requests}
    if gpus:
        # Extended resources must be given as limits (requests then default to them).
        requests[GPU_RESOURCE] = str(gpus)
        resources["limits"] = {GPU_RESOURCE: str(gpus)}
    container: RawObject = {
        "name": "main",
        "image": "registry.k8s.io/pause:3.10",
        "resources": resources,
    }
    if volume_mounts:
        container["volumeMounts"] = [{"name": n, "mountPath": p} for n, p in volume_mounts.items()]
    spec: RawObject = {
        "priorityClassName": priority_class,
        "restartPolicy": restart_policy,
        # Preempted pods leave at once: simulated containers have nothing to flush.
        "terminationGracePeriodSeconds": 0,
        "containers": [container],
    }
    if resource_claims:
        resources["claims"] = [{"name": name} for name in resource_claims]
        spec["resourceClaims"] = [
            {"name": name, "resourceClaimTemplateName": template}
            for name, template in resource_claims.items()
        ]
    if scheduler != DEFAULT_PROFILE:
        # Otherwise left out, as users leave it out: the server defaults it to
        # default-scheduler, the name of the demo scheduler's first profile.
        spec["schedulerName"] = scheduler
    if spread:
        spec["topologySpreadConstraints"] = [dict(c) for c in spread]
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    annotations = {RULE_ANNOTATION: rule}
    if run_seconds is not None:
        annotations[RUN_SECONDS_ANNOTATION] = f"{run_seconds:g}"
    return {"metadata": {"labels": dict(labels), "annotations": annotations}, "spec": spec}


def _rule(template: Mapping[str, Any]) -> str:
    return str(template["metadata"]["annotations"][RULE_ANNOTATION])


def deployment(name: str, replicas: int, template: RawObject) -> RawObject:
    """An apps/v1 Deployment of ``replicas`` pods from ``template`` (selector: its labels)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, _rule(template)),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(template["metadata"]["labels"])},
            "template": template,
        },
    }


def stateful_set(
    name: str,
    replicas: int,
    template: RawObject,
    *,
    service: str,
    claims: Sequence[RawObject] = (),
    policy: str = "OrderedReady",
) -> RawObject:
    """An apps/v1 StatefulSet ``<name>-0``, ``-1``, ... behind the headless ``service``.

    ``claims`` become its ``volumeClaimTemplates``: each pod gets a claim of each, and a
    volume of the claim's name (its container's volume mounts may name it)."""
    spec: RawObject = {
        "replicas": replicas,
        "serviceName": service,
        "podManagementPolicy": policy,
        "selector": {"matchLabels": dict(template["metadata"]["labels"])},
        "template": template,
    }
    if claims:
        spec["volumeClaimTemplates"] = [dict(c) for c in claims]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta(name, _rule(template)),
        "spec": spec,
    }


def claim_template(name: str, storage_class: str, size: str) -> RawObject:
    """A ``volumeClaimTemplates`` entry: one ReadWriteOnce claim of ``size`` per pod."""
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        },
    }


def gpu_claim_template(name: str, count: int, selector: str) -> RawObject:
    """A resource.k8s.io/v1 ResourceClaimTemplate: ``count`` GPUs of the DRA driver's
    DeviceClass that the CEL ``selector`` accepts; each pod gets a claim of its own."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": _meta(name),
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": DRIVER,
                                "allocationMode": "ExactCount",
                                "count": count,
                                "selectors": [{"cel": {"expression": selector}}],
                            },
                        }
                    ]
                }
            }
        },
    }


def pod_group(name: str, namespace: str, min_member: int) -> RawObject:
    """A scheduler-plugins PodGroup: its pods (labelled :data:`POD_GROUP_LABEL`) are
    placed ``min_member`` at a time or not at all."""
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": _meta(name, namespace=namespace),
        "spec": {"minMember": min_member},
    }


def runs_past_the_demo(template: Mapping[str, Any]) -> bool:
    """Whether a pod template's ``run-seconds`` is longer than the demo waits for."""
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    try:
        return float(annotations.get(RUN_SECONDS_ANNOTATION, 0)) > WAITED_SECONDS
    except ValueError:
        return False


def headless_service(name: str, selector: Mapping[str, str]) -> RawObject:
    """A headless Service (``clusterIP: None``): a StatefulSet's pods' stable DNS names."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, labels=selector),
        "spec": {
            "clusterIP": "None",
            "selector": dict(selector),
            "ports": [{"name": "db", "port": 5432}],
        },
    }


def daemon_set(name: str, template: RawObject) -> RawObject:
    """An apps/v1 DaemonSet: one pod from ``template`` on every node that should run it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _meta(name, _rule(template)),
        "spec": {
            "selector": {"matchLabels": dict(template["metadata"]["labels"])},
            "template": template,
        },
    }


def job(
    name: str,
    template: RawObject,
    completions: int = 1,
    parallelism: int = 1,
    namespace: str = NAMESPACE,
) -> RawObject:
    """A batch/v1 Job running ``completions`` pods of ``template`` to success, at most
    ``parallelism`` at a time (its selector is generated by the server)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(name, _rule(template), namespace=namespace),
        "spec": {
            "completions": completions,
            "parallelism": parallelism,
            "backoffLimit": 0,
            "template": template,
        },
    }


def _spread(key: str, labels: Mapping[str, str]) -> dict[str, Any]:
    return {
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": dict(labels)},
        # Tainted nodes the pod cannot use are not domains to balance over.
        "nodeTaintsPolicy": "Honor",
    }


# --- the story -----------------------------------------------------------------------


def _training_job(name: str, gpus: int, cpu: str, memory: str, rule: str) -> RawObject:
    gpu_toleration = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
    template = pod_template(
        {"app": "train", "train": name},
        cpu,
        memory,
        rule=rule,
        scheduler=GPU_PROFILE,
        gpus=gpus,
        tolerations=[gpu_toleration],
        run_seconds=TRAIN_SECONDS,
        restart_policy="Never",
    )
    return job(name, template)


#: The CEL selector of the DRA training Job: GPUs of the latest model only.
LATEST_MODEL_SELECTOR = f"device.attributes['{DRIVER}'].model == '{LATEST_GPU_MODEL}'"


def _dra_training_job(name: str, pods: int, template: str) -> RawObject:
    # GPU nodes are tainted, whatever gives their GPUs.
    gpu_toleration = {"key": GPU_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}
    pod = pod_template(
        {"app": "train", "train": name},
        "2",
        "8Gi",
        rule="DRA: 1 GPU each, CEL selects the model",
        tolerations=[gpu_toleration],
        run_seconds=TRAIN_SECONDS,
        restart_policy="Never",
        resource_claims={"gpu": template},
    )
    return job(name, pod, completions=pods, parallelism=pods)


def _team_job(name: str, team: str, pods: int, rule: str, group: str = "") -> RawObject:
    """A team's Job of ``pods`` pods at once, 1 GPU each, in the team's namespace, for
    the team profile; with ``group``, its pods are that PodGroup's members."""
    gpu_toleration = {"key": GPU_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}
    labels = {"app": "team-train", "job": name}
    if group:
        labels[POD_GROUP_LABEL] = group
    template = pod_template(
        labels,
        "2" if group else "1",
        "8Gi" if group else "4Gi",
        rule=rule,
        scheduler=TEAM_PROFILE,
        gpus=1,
        tolerations=[gpu_toleration],
        run_seconds=LONG_RUN_SECONDS,
        restart_policy="Never",
    )
    return job(name, template, completions=pods, parallelism=pods, namespace=team)


def waves() -> list[Wave]:
    """The workload, wave by wave."""
    node_agent = daemon_set(
        "node-agent",
        pod_template(
            {"app": "node-agent"},
            "50m",
            "64Mi",
            rule="DaemonSet: one per node, tolerates every taint",
            # As node agents (log shippers, exporters) do: every taint tolerated, and the
            # priority that keeps them on their node.
            priority_class="system-node-critical",
            tolerations=[{"operator": "Exists"}],
        ),
    )
    nightly = deployment(
        "nightly-batch",
        6,
        pod_template(
            {"app": "nightly-batch"},
            "3",
            "4Gi",
            rule="priority batch: first to go",
            priority_class="batch",
        ),
    )
    web = deployment(
        "web",
        6,
        pod_template(
            {"app": "web"},
            "200m",
            "256Mi",
            rule="zone spread, maxSkew 1",
            spread=[_spread(ZONE_LABEL, {"app": "web"})],
        ),
    )
    tenants = [
        deployment(
            f"{tenant}-api",
            3,
            pod_template(
                {"app": f"{tenant}-api", "tenant": tenant},
                "150m",
                "512Mi",
                rule=f"tenant {tenant}: node spread",
                spread=[_spread(HOSTNAME_LABEL, {"tenant": tenant})],
            ),
        )
        for tenant in ("acme", "globex")
    ]
    # A small database: pods db-0, db-1, db-2, each made once the one before it is
    # Running and Ready, each with a claim on the zonal class: the scheduler picks the
    # node, the provisioner makes the volume in that node's zone, and the pod stays in
    # that zone from then on.
    db = stateful_set(
        "db",
        3,
        pod_template(
            {"app": "db"},
            "200m",
            "1Gi",
            rule="StatefulSet: ordered, a zonal volume each",
            volume_mounts={"data": "/var/lib/db"},
        ),
        service="db",
        claims=[claim_template("data", ZONAL_CLASS, "1Gi")],
    )
    train = [
        _training_job(f"train-{i}", 1, "2", "8Gi", "gpu-aware: GPUs packed") for i in (1, 2, 3)
    ]
    urgent = [
        deployment(
            "checkout",
            1,
            pod_template(
                {"app": "checkout"},
                "2",
                "1Gi",
                rule="priority critical: preempts",
                priority_class="critical",
            ),
        ),
        _training_job("train-8gpu", 8, "8", "32Gi", "8 GPUs: more than any node has"),
    ]
    # The training Jobs come early: their pods run while the other waves are applied.
    return [
        Wave("node agents: a DaemonSet on every node (it tolerates every taint)", [node_agent]),
        Wave(
            "training Jobs for the gpu-aware profile: three 1-GPU Jobs",
            train,
            replay_with=DEFAULT_PROFILE,
        ),
        Wave(
            "a 4-GPU training Job, after them",
            [_training_job("train-4gpu", 4, "4", "16Gi", "gpu-aware: a whole GPU node left")],
            replay_with=DEFAULT_PROFILE,
        ),
        Wave(
            "a training Job asking for GPUs through DRA: its ResourceClaimTemplate's CEL "
            "selector takes the latest model only",
            [
                gpu_claim_template("latest-gpu", 1, LATEST_MODEL_SELECTOR),
                _dra_training_job("train-dra", 2, "latest-gpu"),
            ],
        ),
        Wave(
            "nightly batch fills every CPU node (a Deployment, priority batch, 3 of 4 CPUs each)",
            [nightly],
            same_second=True,
        ),
        Wave(
            "services: web spread over zones, two tenants spread over nodes, an ordered "
            "StatefulSet with a zonal volume per pod",
            [web, *tenants, headless_service("db", {"app": "db"}), db],
        ),
        Wave("an urgent Deployment on a full cluster, and a Job no node can hold", urgent),
        Wave(
            "team-a's training gang, once the training Jobs are done: a PodGroup of four "
            "1-GPU pods, placed together or not at all (Coscheduling), within team-a's "
            "quota of 4 GPUs (CapacityScheduling)",
            [
                pod_group("allreduce", "team-a", 4),
                _team_job(
                    "allreduce",
                    "team-a",
                    4,
                    "gang of 4, quota team-a: 4 GPUs",
                    group="allreduce",
                ),
            ],
            after_jobs=True,
        ),
        Wave(
            "team-b asks for 3 GPUs with a quota of 2: the third pod waits, though GPUs are free",
            [_team_job("finetune", "team-b", 3, "quota team-b: 2 GPUs at most")],
        ),
    ]
