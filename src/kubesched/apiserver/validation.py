"""Server-side validation of every built-in resource, as kube-apiserver's registry strategies
run it: ``Validate`` on create and ``ValidateUpdate`` on update, patch and status writes.

:func:`validate_create` and :func:`validate_update` raise 422 Invalid with one cause per
field error (``Pod "x" is invalid: [spec.containers[0].image: Required value, ...]``) and
nothing is stored; a value the decoder could not read (a quantity that is not one) is 400
BadRequest, as kube-apiserver's decoder answers before validation runs. Each resource's
validator is a pure function from object (and old object) to field errors, looked up in
:data:`_CREATE` / :data:`_UPDATE`; resources not listed get the metadata checks only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.validation_core import (
    Errors,
    FieldError,
    GoValue,
    NameCheck,
    Undecodable,
    annotation_map,
    as_dict,
    as_list,
    forbidden,
    go_quote,
    go_string_map,
    invalid,
    is_label_value,
    label_selector,
    labels,
    name_is_dns_label,
    name_is_dns_subdomain,
    nonnegative_int,
    not_supported,
    object_meta,
    object_meta_update,
    qualified_name,
    regex_error,
    required,
    selector_matches,
)
from kubesched.apiserver.validation_kinds import (
    config_map,
    config_map_update,
    event_create,
    event_update,
    namespace,
    service,
)
from kubesched.apiserver.validation_pod import (
    pod_create,
    pod_metadata_and_spec,
    pod_spec,
    resource_quantity,
)
from kubesched.apiserver.validation_pod_update import pod_status_update, pod_update
from kubesched.apiserver.validation_types import check_types
from kubesched.apiserver.watch import Object

_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_RE = re.compile(_DNS1035_FMT)
_DNS1035_MESSAGE = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character",
    _DNS1035_FMT,
    "my-name",
    "abc-123",
)
_HIGHEST_USER_PRIORITY = 1_000_000_000
_PERCENT_MESSAGE = regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _name_is_dns1035_label(name: str, prefix: bool) -> tuple[str, ...]:
    value = name[:-2] + "a" if prefix and len(name) > 1 and name.endswith("-") else name
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if _DNS1035_RE.fullmatch(value) is None:
        problems.append(_DNS1035_MESSAGE)
    return tuple(problems)


#: How each resource's names are checked (``ValidateXName`` in upstream's validation).
_NAME_CHECKS: dict[str, NameCheck] = {
    "namespaces": name_is_dns_label,
    "services": _name_is_dns1035_label,
}


def _template(
    template: Any, selector_ok: Callable[[dict[str, Any]], bool], path: str, kind: str
) -> Errors:
    # ValidatePodTemplateSpecForReplicaSet/RC (and StatefulSet's): labels match the
    # selector, ValidatePodTemplateSpec (its metadata errors are named by the template's
    # path itself: "spec.template.labels"), restartPolicy Always, no deadline.
    if not isinstance(template, dict):
        return [required(path)]
    meta = as_dict(template.get("metadata"))
    tmpl_labels = as_dict(meta.get("labels"))
    errs: Errors = []
    if not selector_ok(tmpl_labels):
        errs.append(
            invalid(
                f"{path}.metadata.labels",
                go_string_map(tmpl_labels),
                "`selector` does not match template `labels`",
            )
        )
    errs.extend(labels(meta.get("labels"), f"{path}.labels"))
    errs.extend(annotation_map(meta.get("annotations"), f"{path}.annotations"))
    spec = template.get("spec")
    errs.extend(pod_spec(spec, f"{path}.spec"))
    if not isinstance(spec, dict):
        return errs
    if spec.get("ephemeralContainers"):
        errs.append(
            forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    restart = spec.get("restartPolicy") or "Always"  # defaulted
    if restart != "Always":
        errs.append(not_supported(f"{path}.spec.restartPolicy", restart, ("Always",)))
    if spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs


def _selector_struct(selector: Any) -> GoValue:
    # The protobuf String() of a LabelSelector, which ErrorBody prints for it.
    sel = selector if isinstance(selector, dict) else {}
    match = sel.get("matchLabels") or {}
    body = ",".join(f"{k}: {v}," for k, v in sorted(match.items()))
    return GoValue(
        f"&LabelSelector{{MatchLabels:map[string]string{{{body}}},MatchExpressions:"
        f"[]LabelSelectorRequirement{{}},}}"
    )


def _workload(obj: Object) -> Errors:
    # ValidateReplicaSetSpec / ValidateStatefulSetSpec: selector required, non-empty, valid,
    # matching the template's labels.
    spec = as_dict(obj.get("spec"))
    errs = nonnegative_int(spec.get("replicas"), "spec.replicas")
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        errs.append(required("spec.selector"))
        return errs
    found = label_selector(selector, "spec.selector")
    errs.extend(found)
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        errs.append(
            invalid(
                "spec.selector",
                _selector_struct(selector),
                "empty selector is invalid for deployment",
            )
        )
    if found:
        errs.append(invalid("spec.selector", _selector_struct(selector), "invalid label selector"))
        return errs
    kind = str(obj.get("kind") or "ReplicaSet")
    errs.extend(
        _template(
            spec.get("template"), lambda ls: selector_matches(selector, ls), "spec.template", kind
        )
    )
    return errs


def _replication_controller(obj: Object) -> Errors:
    spec = as_dict(obj.get("spec"))
    selector = as_dict(spec.get("selector"))
    errs: Errors = []
    if not selector:
        errs.append(required("spec.selector"))
    errs.extend(labels(selector, "spec.selector"))
    errs.extend(nonnegative_int(spec.get("replicas"), "spec.replicas"))
    errs.extend(
        _template(
            spec.get("template"),
            lambda ls: all(ls.get(k) == v for k, v in selector.items()),
            "spec.template",
            "ReplicationController",
        )
    )
    return errs


def _pdb(obj: Object) -> Errors:
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(
            invalid(
                "spec",
                GoValue("policy.PodDisruptionBudgetSpec{...}"),
                "minAvailable and maxUnavailable cannot be both set",
            )
        )
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            errs.append(invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        elif isinstance(value, str):
            digits = value[:-1]
            if not value.endswith("%") or not digits.isdigit():
                errs.append(
                    invalid(
                        f"spec.{key}",
                        value,
                        _PERCENT_MESSAGE,
                    )
                )
            elif int(digits) > 100:
                errs.append(invalid(f"spec.{key}", value, "must not be greater than 100%"))
    errs.extend(label_selector(spec.get("selector"), "spec.selector"))
    return errs


def _node(obj: Object) -> Errors:
    # ValidateNode: taints (validateNodeTaints), then the status quantities. Upstream hangs
    # the taints under the metadata path ("metadata.taints[0].effect"), and so do we.
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(as_list(as_dict(obj.get("spec")).get("taints"))):
        at = f"metadata.taints[{i}]"
        if not isinstance(taint, dict):
            continue
        key, effect = str(taint.get("key") or ""), str(taint.get("effect") or "")
        errs.extend(qualified_name(key, f"{at}.key"))
        value = str(taint.get("value") or "")
        problems = is_label_value(value)
        if problems:
            errs.append(invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            errs.append(required(f"{at}.effect"))
        elif effect not in _TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
        if (key, effect) in seen:
            added = taint.get("timeAdded")
            struct = (
                f"core.Taint{{Key:{go_quote(key)}, Value:{go_quote(value)}, "
                f"Effect:{go_quote(effect)}, TimeAdded:{'<nil>' if added is None else added}}}"
            )
            errs.append(
                FieldError(
                    "FieldValueDuplicate",
                    at,
                    GoValue(struct),
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((key, effect))
    return errs + _node_status(obj)


def _node_status(obj: Object) -> Errors:
    status = as_dict(obj.get("status"))
    errs: Errors = []
    for key in ("capacity", "allocatable"):
        amounts = status.get(key)
        if isinstance(amounts, dict):
            for name, amount in amounts.items():
                errs.extend(resource_quantity(name, amount, f"status.{key}.{name}"))
    return errs


def _priority_class(obj: Object) -> Errors:
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value", 0)
    errs: Errors = []
    if not isinstance(value, int) or isinstance(value, bool):
        return [invalid("value", GoValue(str(value)), "must be an integer")]
    if not name.startswith("system-") and value > _HIGHEST_USER_PRIORITY:
        errs.append(
            forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}",
            )
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        errs.append(not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority")))
    return errs


def _priority_class_update(new: Object, old: Object) -> Errors:
    errs: Errors = []
    if new.get("value") != old.get("value"):
        errs.append(forbidden("value", "may not be changed in an update."))
    if new.get("preemptionPolicy") != old.get("preemptionPolicy"):
        errs.append(invalid("preemptionPolicy", new.get("preemptionPolicy"), "field is immutable"))
    return errs


def _lease(obj: Object) -> Errors:
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    errs.extend(nonnegative_int(spec.get("leaseTransitions"), "spec.leaseTransitions"))
    return errs


_CREATE: dict[str, Callable[[Object], Errors]] = {
    "pods": pod_create,
    "configmaps": config_map,
    "namespaces": namespace,
    "nodes": _node,
    "services": service,
    "replicasets": _workload,
    "statefulsets": _workload,
    "replicationcontrollers": _replication_controller,
    "poddisruptionbudgets": _pdb,
    "priorityclasses": _priority_class,
    "leases": _lease,
}


def _pod_update(new: Object, old: Object) -> Errors:
    # ValidatePodUpdate: the spec as validatePodMetadataAndSpec sees it, then what may change.
    return pod_metadata_and_spec(new) + pod_update(new, old)


_UPDATE: dict[str, Callable[[Object, Object], Errors]] = {
    "pods": _pod_update,
    "configmaps": config_map_update,
    "namespaces": lambda n, o: [],  # ValidateNamespaceUpdate checks the metadata only
    "priorityclasses": lambda n, o: _priority_class(n) + _priority_class_update(n, o),
}
#: Status subresource writes: what each resource's status strategy validates.
_STATUS: dict[str, Callable[[Object], Errors]] = {
    "pods": pod_status_update,
    "nodes": _node_status,
}


def _raise(res: Resource, obj: Object, errs: Errors) -> None:
    # NewInvalid: causes in order; the summary drops repeated messages (ToAggregate).
    seen: set[str] = set()
    unique = []
    for err in errs:
        text = str(err)
        if text not in seen:
            seen.add(text)
            unique.append(err)
    causes: list[errors.StatusCause] = []
    for e in errs:
        cause: errors.StatusCause = {"reason": e.type, "message": e.body()}
        if e.field:  # omitempty: an error about the whole object names no field
            cause["field"] = e.field
        causes.append(cause)
    name = (obj.get("metadata") or {}).get("name") or ""
    error = errors.invalid(res.kind, name, causes, res.group)
    summary = [str(e) for e in unique]
    text = summary[0] if len(summary) == 1 else "[" + ", ".join(summary) + "]"
    quoted = errors.qualified(res.kind, res.group)
    error.status["message"] = f'{quoted} "{_escape(name)}" is invalid: {text}'
    raise error


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _builtin(res: Resource) -> str:
    # The tables are for the built-in resources; a custom resource (whatever its plural)
    # gets the metadata checks only, its schema being the CRD's business.
    return res.plural if res.custom is None else ""


#: ``standardFinalizers``: the unqualified finalizer names the core API accepts.
_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def _meta(res: Resource, obj: Object) -> Errors:
    meta = as_dict(obj.get("metadata"))
    errs = object_meta(meta, res.namespaced, _NAME_CHECKS.get(_builtin(res), name_is_dns_subdomain))
    if _builtin(res) and not res.group:
        # The core API's ValidateObjectMeta adds validateKubeFinalizerName.
        for i, name in enumerate(as_list(meta.get("finalizers"))):
            text = str(name)
            if "/" not in text and text not in _STANDARD_FINALIZERS:
                errs.append(
                    invalid(
                        f"metadata.finalizers[{i}]",
                        text,
                        "name is neither a standard finalizer name nor is it fully qualified",
                    )
                )
    return errs


def _undecodable(res: Resource, message: str) -> errors.ApiError:
    return errors.bad_request(
        f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {message}'
    )


def _strict_events(view: Resource | None) -> bool:
    # Events written through events.k8s.io/v1 get ValidateEventCreate's strict rules.
    return view is not None and view.group == "events.k8s.io"


def validate_create(res: Resource, obj: Object, view: Resource | None = None) -> None:
    """``Validate`` of ``res``'s strategy: 422 Invalid with every field error found.
    ``view`` is the API the request came through when it is a view of ``res``."""
    try:
        check_types(res.kind if _builtin(res) else "", obj)
        errs = _meta(res, obj)
        check = _CREATE.get(_builtin(res))
        if check is not None:
            errs.extend(check(obj))
        elif _builtin(res) == "events":
            errs.extend(event_create(obj, _strict_events(view)))
    except Undecodable as err:
        raise _undecodable(res, str(err)) from None
    if errs:
        _raise(res, obj, errs)


def validate_update(
    res: Resource, new: Object, old: Object, subresource: str = "", view: Resource | None = None
) -> None:
    """``ValidateUpdate`` (or the status strategy's) for a write of ``new`` over ``old``."""
    try:
        check_types(res.kind if _builtin(res) else "", new)
        meta = as_dict(new.get("metadata"))
        errs = labels(meta.get("labels"), "metadata.labels")
        errs.extend(annotation_map(meta.get("annotations"), "metadata.annotations"))
        if subresource == "status":
            status_check = _STATUS.get(_builtin(res))
            if status_check is not None:
                errs.extend(status_check(new))
        elif subresource == "":
            errs = _meta(res, new)
            errs.extend(object_meta_update(meta, as_dict(old.get("metadata"))))
            update = _UPDATE.get(_builtin(res))
            if update is not None:
                errs.extend(update(new, old))
            elif _builtin(res) == "events":
                errs.extend(event_update(new, old, _strict_events(view)))
            else:
                check = _CREATE.get(_builtin(res))
                if check is not None:
                    errs.extend(check(new))
    except Undecodable as err:
        raise _undecodable(res, str(err)) from None
    if errs:
        _raise(res, new, errs)
