"""Defaulting of API objects as kube-apiserver applies it before validating, as pure
functions that fill an object (a decoded JSON dict) in place.

This covers what a scheduler and the validation depend on: pods get
``spec.schedulerName: default-scheduler``, ``spec.terminationGracePeriodSeconds: 30``,
container requests defaulted from limits (``SetDefaults_Pod``), and on create
``status.phase: Pending`` and ``status.qosClass``; nodes get ``status.allocatable``
defaulted from ``status.capacity``; replication controllers' selectors (and labels)
default to their template's labels; namespaces get the ``kubernetes`` finalizer, phase
Active and the ``kubernetes.io/metadata.name`` label. Container fields upstream defaults
(pull and termination message policies, port protocols, probe settings) are not written
into pods: :mod:`kubesched.objects.validation` reads them with their defaults when
absent. Workloads (and their pod templates, fully) and Secrets get upstream's
``SetDefaults_*`` from :mod:`kubesched.objects.defaults_workloads`, the storage kinds
from :mod:`kubesched.objects.defaults_storage`.

The embedded API server applies :func:`on_create` / :func:`on_write` to every body; the
simulator's file loaders apply :func:`on_create` to every object they read, so that both
validate the same objects.
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.defaults_resource import RESOURCE_DEFAULTERS
from kubesched.objects.defaults_storage import DEFAULTERS as STORAGE_DEFAULTERS
from kubesched.objects.defaults_workloads import DEFAULTERS
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import qos_class_of

#: ``DefaultTerminationGracePeriodSeconds`` of core/v1 PodSpec.
DEFAULT_TERMINATION_GRACE_SECONDS = 30

Object = dict[str, Any]


def on_create(kind: str, obj: Object) -> None:
    """Upstream defaulting (and the defaulting admission a scheduler depends on) for a new
    object of the built-in ``kind`` (``""``: a custom resource, left as it is)."""
    if kind == "Pod":
        pod_spec(obj)
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Pending")
            qos = qos_class(obj)
            if qos:
                status["qosClass"] = qos
    elif (
        kind == "Node"
        or kind in DEFAULTERS
        or kind in RESOURCE_DEFAULTERS
        or kind in STORAGE_DEFAULTERS
    ):
        on_write(kind, obj)
    elif kind == "Namespace":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {})["phase"] = "Active"
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):  # with generateName the name is not known yet
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]


def on_write(kind: str, obj: Object) -> None:
    """Defaulting that every decode of a body applies, updates and patches included (so a
    PUT that leaves a defaulted field out does not read as a change of it)."""
    if kind == "Pod":
        pod_spec(obj)
    elif kind == "Node":
        node_status(obj)
    elif kind == "ReplicationController":
        _replication_controller_selector(obj)
    if kind in DEFAULTERS:
        DEFAULTERS[kind](obj)
    elif kind in RESOURCE_DEFAULTERS:
        RESOURCE_DEFAULTERS[kind](obj)
    elif kind in STORAGE_DEFAULTERS:
        STORAGE_DEFAULTERS[kind](obj)


def pod_spec(obj: Object) -> None:
    """``SetDefaults_PodSpec`` for the fields schedulers read: schedulerName, the grace
    period, and container requests from limits."""
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        if not spec.get("schedulerName"):
            spec["schedulerName"] = "default-scheduler"
        spec.setdefault("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_SECONDS)
        for key in ("initContainers", "containers"):
            containers = spec.get(key)
            for container in containers if isinstance(containers, list) else ():
                _requests_from_limits(container)


def _replication_controller_selector(obj: Object) -> None:
    # SetDefaults_ReplicationController: selector and labels default to the template's labels.
    spec, meta = obj.get("spec"), obj.get("metadata")
    template = spec.get("template") if isinstance(spec, dict) else None
    tmeta = template.get("metadata") if isinstance(template, dict) else None
    tlabels = tmeta.get("labels") if isinstance(tmeta, dict) else None
    if not isinstance(spec, dict) or not isinstance(tlabels, dict) or not tlabels:
        return
    if not spec.get("selector"):
        spec["selector"] = dict(tlabels)
    if isinstance(meta, dict) and not meta.get("labels"):
        meta["labels"] = dict(tlabels)


def node_status(obj: Object) -> None:
    """A node's ``status.allocatable`` defaults to its ``status.capacity``."""
    status = obj.get("status")
    if isinstance(status, dict) and status.get("capacity") and not status.get("allocatable"):
        status["allocatable"] = dict(status["capacity"])


def _requests_from_limits(container: Any) -> None:
    # SetDefaults_Pod: a resource with a limit and no request gets the limit as request.
    if not isinstance(container, dict):
        return
    resources = container.get("resources")
    if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
        return
    requests = resources.setdefault("requests", {})
    if isinstance(requests, dict):
        for name, value in resources["limits"].items():
            requests.setdefault(name, value)


def qos_class(pod: Object) -> str:
    """The pod's QoS class (Guaranteed, Burstable, BestEffort) as upstream's
    ComputePodQOS gives it, from the spec alone; "" when the spec cannot be read
    (validation reports why)."""
    spec = pod.get("spec")
    try:
        return qos_class_of(spec if isinstance(spec, dict) else {})
    except (ObjectError, ValueError, TypeError, KeyError):
        return ""
