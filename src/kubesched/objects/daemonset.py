"""DaemonSet pods, after upstream's ``pkg/controller/daemon/util/daemonset_util.go`` and
the DaemonSet controller's ``NodeShouldRunDaemonPod`` / ``NewPod``.

A daemon pod is the template with the tolerations every daemon pod gets
(:func:`add_daemon_tolerations`), the ``pod-template-generation`` and
``controller-revision-hash`` labels, and a required node affinity that names its node
by ``metadata.name`` (:func:`replace_node_name_affinity`): the scheduler, not the
controller, places it. Which nodes get one is :func:`node_should_run_daemon_pod`.
Pure functions of plain dicts (and the decoded :class:`~kubesched.objects.node.Node`),
shared by the policy lab and a DaemonSet controller.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.objects.deployment import compute_hash
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.objects.podtemplate import controller_ref, pod_from_template
from kubesched.objects.taints import find_untolerated_taint

__all__ = [
    "DAEMON_TOLERATIONS",
    "DEPRECATED_TEMPLATE_GENERATION",
    "TEMPLATE_GENERATION_LABEL",
    "UNIQUE_LABEL_KEY",
    "add_daemon_tolerations",
    "daemon_pod",
    "daemon_pod_template",
    "node_should_run_daemon_pod",
    "replace_node_name_affinity",
    "revision_hash",
]

Raw = dict[str, Any]

#: ``extensions.DaemonSetTemplateGenerationKey``: the template generation, for old clients.
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
#: ``apps.DefaultDaemonSetUniqueLabelKey``: the hash of the ControllerRevision of the pod.
UNIQUE_LABEL_KEY = "controller-revision-hash"
#: ``apps.DeprecatedTemplateGeneration``: the annotation the API server keeps it in.
DEPRECATED_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"

#: ``AddOrUpdateDaemonPodTolerations``, in upstream's order: a daemon pod survives the
#: node lifecycle controller's evictions and the condition taints.
DAEMON_TOLERATIONS: tuple[Raw, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
#: Added too when the pod uses the host's network.
NETWORK_UNAVAILABLE_TOLERATION: Raw = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}
_NO_SCHEDULE_OR_EXECUTE = frozenset({"NoSchedule", "NoExecute"})
_NO_EXECUTE = frozenset({"NoExecute"})


def _add_or_update_toleration(spec: Raw, toleration: Raw) -> None:
    # v1helper.AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator,
    # value and effect is replaced in place (a user's tolerationSeconds goes), else added.
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = spec["tolerations"] = []
    for i, old in enumerate(tolerations):
        if not isinstance(old, dict):
            continue
        same = all(
            (old.get(k) or "") == (toleration.get(k) or "")
            for k in ("key", "operator", "value", "effect")
        )
        if same:
            if old != toleration:
                tolerations[i] = dict(toleration)
            return
    tolerations.append(dict(toleration))


def add_daemon_tolerations(spec: Raw) -> None:
    """``AddOrUpdateDaemonPodTolerations``: the tolerations every daemon pod has, added to
    ``spec`` (a PodSpec) in place; network-unavailable only with ``hostNetwork``."""
    for toleration in DAEMON_TOLERATIONS:
        _add_or_update_toleration(spec, toleration)
    if spec.get("hostNetwork") is True:
        _add_or_update_toleration(spec, NETWORK_UNAVAILABLE_TOLERATION)


def replace_node_name_affinity(spec: Raw, node_name: str) -> None:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the pod's required node affinity
    becomes one term, ``matchFields metadata.name In [node_name]``; its preferred terms,
    pod (anti-)affinity and nodeSelector stay. (The controller only makes pods for nodes
    the user's terms accept, so nothing is lost.)"""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        affinity = spec["affinity"] = {}
    node_affinity = affinity.get("nodeAffinity")
    if not isinstance(node_affinity, dict):
        node_affinity = affinity["nodeAffinity"] = {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        required = node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {}
    required["nodeSelectorTerms"] = [term]


def template_generation(ds: Mapping[str, Any]) -> int | None:
    """``GetTemplateGeneration``: the deprecated annotation, else the DaemonSet's
    ``metadata.generation`` (1 for a new one, as the API server sets both on create)."""
    meta = ds.get("metadata") or {}
    annotation = (meta.get("annotations") or {}).get(DEPRECATED_TEMPLATE_GENERATION)
    if annotation is not None:
        try:
            return int(annotation)
        except (TypeError, ValueError):
            return None
    generation = meta.get("generation")
    return generation if isinstance(generation, int) else 1


def revision_hash(ds: Mapping[str, Any]) -> str:
    """The hash that names the DaemonSet's current ControllerRevision (``ComputeHash`` of
    its template and ``status.collisionCount``). Deviation: FNV-32a over the template's
    JSON, as :func:`kubesched.objects.deployment.compute_hash`, not over Go's printing."""
    spec = ds.get("spec") or {}
    collisions = (ds.get("status") or {}).get("collisionCount")
    return compute_hash(
        spec.get("template") or {}, collisions if isinstance(collisions, int) else None
    )


def daemon_pod_template(ds: Mapping[str, Any], hash_: str) -> Raw:
    """``CreatePodTemplate``: a copy of the template with the daemon tolerations, the
    template-generation label and the ``controller-revision-hash`` label."""
    template: Raw = copy.deepcopy(dict((ds.get("spec") or {}).get("template") or {}))
    spec = template.setdefault("spec", {})
    add_daemon_tolerations(spec)
    meta = template.setdefault("metadata", {})
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    generation = template_generation(ds)
    if generation is not None:
        labels[TEMPLATE_GENERATION_LABEL] = str(generation)
    if hash_:
        labels[UNIQUE_LABEL_KEY] = hash_
    return template


def daemon_pod(
    ds: Mapping[str, Any], node_name: str, template: Mapping[str, Any] | None = None
) -> Raw:
    """The pod the DaemonSet controller creates for ``node_name`` (``syncNodes``): the
    daemon template (``template``, else :func:`daemon_pod_template` of the current
    revision) pinned to the node by :func:`replace_node_name_affinity`, ``generateName``
    ``<ds>-``, owned by the DaemonSet."""
    if template is None:
        template = daemon_pod_template(ds, revision_hash(ds))
    pinned = copy.deepcopy(dict(template))
    replace_node_name_affinity(pinned.setdefault("spec", {}), node_name)
    return pod_from_template(pinned, ds, controller_ref(ds, "apps/v1", "DaemonSet"))


def node_should_run_daemon_pod(node: Node, ds: Mapping[str, Any]) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run, should continue running) — whether the
    DaemonSet wants a pod on ``node``: the template's nodeName (if any) is the node, its
    nodeSelector and required node affinity match it, and the pod, with the daemon
    tolerations, tolerates its NoSchedule and NoExecute taints (a pod already there may
    stay when only NoSchedule taints are untolerated)."""
    template = (ds.get("spec") or {}).get("template") or {}
    spec: Raw = copy.deepcopy(dict(template.get("spec") or {}))
    wanted = spec.get("nodeName") or ""
    if wanted and wanted != node.name:
        return False, False
    # NewPod: the template on the node, with the daemon tolerations.
    spec["nodeName"] = node.name
    add_daemon_tolerations(spec)
    meta = ds.get("metadata") or {}
    pod = Pod.from_dict(
        {
            "metadata": {
                "name": str(meta.get("name") or "daemon"),
                "namespace": meta.get("namespace"),
            },
            "spec": spec,
        }
    )
    labels = node.labels
    fits_affinity = all(labels.get(k) == v for k, v in pod.node_selector.items())
    if fits_affinity and pod.required_node_affinity is not None:
        fits_affinity = pod.required_node_affinity.matches(node.name, labels)
    if not fits_affinity:
        return False, False
    if find_untolerated_taint(node.taints, pod.tolerations, _NO_SCHEDULE_OR_EXECUTE) is not None:
        stays = find_untolerated_taint(node.taints, pod.tolerations, _NO_EXECUTE) is None
        return False, stays
    return True, True
