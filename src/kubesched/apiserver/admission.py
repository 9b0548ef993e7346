"""What happens to a body before it is stored: type checks, defaulting, name validation.

This slice does what a scheduler depends on: the body must be an object of the kind the
URL names (400 BadRequest otherwise, as kube-apiserver's decoder answers); pods get
``spec.schedulerName: default-scheduler``, ``spec.terminationGracePeriodSeconds: 30``,
container requests defaulted from limits (``SetDefaults_Pod``), ``status.phase: Pending``
and ``status.qosClass`` on create; nodes get ``status.allocatable`` defaulted from
``status.capacity``; replication controllers' selectors default to their template's labels.
Validation is :mod:`kubesched.apiserver.validation`; pod priority is
:mod:`kubesched.apiserver.priority`.
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.watch import Object
from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import qos_class_of

#: ``DefaultTerminationGracePeriodSeconds`` of core/v1 PodSpec.
DEFAULT_TERMINATION_GRACE_SECONDS = 30


def check_body(res: Resource, body: Any) -> Object:
    """Refuse a body that is not a JSON object of ``res``'s kind and apiVersion (400)."""
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"the body of the request was not a JSON object: expected a {res.kind}"
        )
    kind = body.get("kind")
    api_version = body.get("apiVersion")
    if kind is not None and kind != res.kind:
        raise errors.bad_request(
            f"{kind} in version {api_version or res.group_version!r} cannot be handled as a "
            f"{res.kind}: the kind in the body ({kind}) does not match the expected kind "
            f"({res.kind}) of {res.plural}"
        )
    if api_version is not None and api_version != res.group_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({res.group_version})"
        )
    metadata = body.get("metadata", {})
    if not isinstance(metadata, dict):
        raise errors.bad_request("metadata must be a JSON object")
    body["kind"] = res.kind
    body["apiVersion"] = res.group_version
    return body


def default_on_create(res: Resource, obj: Object) -> None:
    """Upstream defaulting and admission that a scheduler depends on, for a new object."""
    if res.plural == "pods":
        default_pod_spec(obj)
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Pending")
            qos = qos_class(obj)
            if qos:
                status["qosClass"] = qos
    elif res.plural in ("nodes", "replicationcontrollers"):
        default_on_write(res, obj)
    elif res.plural == "namespaces":
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {})["phase"] = "Active"
        meta = obj.setdefault("metadata", {})
        if meta.get("name"):  # with generateName the name is not known yet
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]


def default_on_write(res: Resource, obj: Object) -> None:
    """Defaulting that every decode of a body applies, updates and patches included (so a
    PUT that leaves a defaulted field out does not read as a change of it)."""
    if res.plural == "pods":
        default_pod_spec(obj)
    elif res.plural == "nodes":
        default_node_status(obj)
    elif res.plural == "replicationcontrollers":
        _default_rc_selector(obj)


def default_pod_spec(obj: Object) -> None:
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


def _default_rc_selector(obj: Object) -> None:
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


def default_node_status(obj: Object) -> None:
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
