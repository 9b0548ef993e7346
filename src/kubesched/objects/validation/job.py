"""Jobs as ``pkg/apis/batch/validation`` checks them: ``ValidateJob`` (the generated
selector's labels, ``ValidateJobSpec``, an Indexed Job's longest pod hostname) and
``ValidateJobSpecUpdate`` (selector, template, completion mode, pod failure policy and
backoffLimitPerIndex immutable; completions too, except for an Indexed Job scaled with
parallelism in tandem — ElasticIndexedJob, on in 1.34).

Objects are validated after defaulting and after the strategy's PrepareForCreate (the
generated selector and template labels). The pod failure and success
policies are :mod:`kubesched.objects.validation.job_policies`. Left out: the managedBy
rules. A suspended Job that never started may change its template's scheduling
directives (node selector, node affinity, tolerations, scheduling gates, labels and
annotations), as Kueue and other queueing controllers do before they let it start.
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    Object,
    as_dict,
    immutable,
    invalid,
    is_dns1123_label,
    is_int,
    label_selector,
    nonnegative_int,
    not_supported,
    required,
    selector_matches,
)
from kubesched.objects.validation.job_policies import pod_failure_policy, success_policy
from kubesched.objects.validation.pod import pod_spec
from kubesched.objects.validation.workloads import pod_template_metadata

_COMPLETION_MODES = ("NonIndexed", "Indexed")
_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
_RESTART_POLICIES = ("OnFailure", "Never")
#: maxParallelismForIndexedJob.
MAX_INDEXED_PARALLELISM = 100_000
_LEGACY_UID, _UID = "controller-uid", "batch.kubernetes.io/controller-uid"
_LEGACY_NAME, _NAME = "job-name", "batch.kubernetes.io/job-name"


def _generated_selector(obj: Object, spec: dict[str, Any]) -> Errors:
    # validateGeneratedSelector: the template carries the labels, the selector the uid.
    if spec.get("manualSelector") is True:
        return []
    template_labels = as_dict(as_dict(spec.get("template")).get("metadata")).get("labels")
    if not isinstance(template_labels, dict):
        return []
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    meta = as_dict(obj.get("metadata"))
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    errs: Errors = []
    for key, want in ((_LEGACY_UID, uid), (_LEGACY_NAME, name), (_UID, uid), (_NAME, name)):
        got = template_labels.get(key)
        if got != want:
            errs.append(
                invalid(f"spec.template.metadata.labels[{key}]", got or "", f"must be '{want}'")
            )
    got = as_dict(selector.get("matchLabels")).get(_UID)
    if got != uid:
        errs.append(invalid(f"spec.selector.matchLabels[{_UID}]", got or "", f"must be '{uid}'"))
    return errs


def _counts(spec: dict[str, Any]) -> Errors:
    errs: Errors = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ):
        errs.extend(nonnegative_int(spec.get(key), f"spec.{key}"))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        errs.append(required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    return errs


def _completion_mode(spec: dict[str, Any]) -> Errors:
    mode = spec.get("completionMode")
    errs: Errors = []
    if mode is not None and mode not in _COMPLETION_MODES:
        errs.append(not_supported("spec.completionMode", mode, _COMPLETION_MODES))
    if mode == "Indexed":
        completions, parallelism = spec.get("completions"), spec.get("parallelism")
        if completions is None:
            errs.append(required("spec.completions", "when completion mode is Indexed"))
        if is_int(parallelism) and parallelism > MAX_INDEXED_PARALLELISM:
            errs.append(
                invalid(
                    "spec.parallelism",
                    parallelism,
                    f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion "
                    "mode is Indexed",
                )
            )
        failed = spec.get("maxFailedIndexes")
        if is_int(completions) and is_int(failed) and failed > completions:
            errs.append(
                invalid(
                    "spec.maxFailedIndexes", failed, "must be less than or equal to completions"
                )
            )
    else:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            value = spec.get(key)
            if value is not None:
                errs.append(invalid(f"spec.{key}", value, "requires indexed completion mode"))
    return errs


def _template(spec: dict[str, Any]) -> Errors:
    # ValidatePodTemplateSpec, then the Job's own restartPolicy rule.
    template = spec.get("template")
    if not isinstance(template, dict):
        return [required("spec.template")]
    errs = pod_template_metadata(template, "spec.template")
    pod = template.get("spec")
    errs.extend(pod_spec(pod, "spec.template.spec"))
    restart = as_dict(pod).get("restartPolicy") or "Always"
    path = "spec.template.spec.restartPolicy"
    if restart == "Always":
        errs.append(required(path, 'valid values: "OnFailure", "Never"'))
    elif restart not in _RESTART_POLICIES:
        errs.append(not_supported(path, restart, _RESTART_POLICIES))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errs.append(
            invalid(path, restart, 'only "Never" is supported when podFailurePolicy is specified')
        )
    elif restart == "OnFailure" and spec.get("backoffLimitPerIndex") is not None:
        errs.append(
            invalid(
                "spec.backoffLimitPerIndex",
                spec["backoffLimitPerIndex"],
                'backoffLimitPerIndex can only be used when the template restartPolicy is "Never"',
            )
        )
    return errs


def job_spec(spec: dict[str, Any]) -> Errors:
    """``ValidateJobSpec``: :func:`job_spec_fields` and the selector."""
    errs = job_spec_fields(spec)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        errs.append(required("spec.selector"))
        return errs
    found = label_selector(selector, "spec.selector")
    errs.extend(found)
    template_labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    if not found and not selector_matches(selector, template_labels):
        errs.append(
            invalid(
                "spec.template.metadata.labels",
                template_labels,
                "`selector` does not match template `labels`",
            )
        )
    return errs


def job_spec_fields(spec: dict[str, Any]) -> Errors:
    """``validateJobSpec``: everything but the selector (a CronJob's Job template has
    none; the controller generates it). Paths start at ``spec.``."""
    errs = _counts(spec) + _completion_mode(spec)
    if spec.get("podFailurePolicy") is not None:
        errs.extend(pod_failure_policy(spec))
    if spec.get("successPolicy") is not None:
        errs.extend(success_policy(spec))
    policy = spec.get("podReplacementPolicy")
    if policy is not None:
        # validatePodReplacementPolicy: only Failed beside a pod failure policy.
        allowed = ("Failed",) if spec.get("podFailurePolicy") is not None else _REPLACEMENT_POLICIES
        if policy not in allowed:
            errs.append(not_supported("spec.podReplacementPolicy", policy, allowed))
    errs.extend(_template(spec))
    return errs


def job(obj: Object) -> Errors:
    """``ValidateJob`` (metadata is checked by the caller)."""
    spec = as_dict(obj.get("spec"))
    errs = _generated_selector(obj, spec) + job_spec(spec)
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed" and is_int(completions) and completions > 0:
        name = str(as_dict(obj.get("metadata")).get("name") or "")
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            errs.append(
                invalid(
                    "metadata.name",
                    name,
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errs


def _completions_update(spec: dict[str, Any], old: dict[str, Any]) -> Errors:
    # validateCompletions with ElasticIndexedJob: an Indexed Job may change completions
    # together with parallelism.
    new_value, old_value = spec.get("completions"), old.get("completions")
    if spec.get("completionMode") != "Indexed":
        return immutable("spec.completions", new_value, old_value)
    if new_value == old_value or new_value is None:
        return []
    if new_value != spec.get("parallelism"):
        return [
            invalid(
                "spec.completions",
                new_value,
                "can only be modified in tandem with spec.parallelism",
            )
        ]
    return []


def _template_as_allowed(new: Object, old: Object) -> Any:
    # validatePodTemplateUpdate: the old template with the scheduling directives a
    # suspended, never started Job may change taken from the new one.
    old_spec = as_dict(old.get("spec"))
    template = old_spec.get("template")
    suspended = old_spec.get("suspend") is True
    if (
        not suspended
        or as_dict(old.get("status")).get("startTime")
        or not isinstance(template, dict)
    ):
        return template
    new_template = as_dict(as_dict(new.get("spec")).get("template"))
    new_pod, merged = as_dict(new_template.get("spec")), dict(template)
    pod = dict(as_dict(template.get("spec")))
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        pod.pop(key, None)
        if key in new_pod:
            pod[key] = new_pod[key]
    affinity = dict(as_dict(pod.get("affinity")))
    affinity.pop("nodeAffinity", None)
    new_node_affinity = as_dict(new_pod.get("affinity")).get("nodeAffinity")
    if new_node_affinity is not None:
        affinity["nodeAffinity"] = new_node_affinity
    if affinity:
        pod["affinity"] = affinity
    elif new_pod.get("affinity") is not None:
        pod["affinity"] = new_pod["affinity"]  # an empty affinity, as sent
    else:
        pod.pop("affinity", None)
    merged["spec"] = pod
    meta = dict(as_dict(template.get("metadata")))
    new_meta = as_dict(new_template.get("metadata"))
    for key in ("labels", "annotations"):
        meta.pop(key, None)
        if key in new_meta:
            meta[key] = new_meta[key]
    if meta or "metadata" in new_template:
        merged["metadata"] = meta
    else:
        merged.pop("metadata", None)
    return merged


def job_update(new: Object, old: Object) -> Errors:
    """``ValidateJob`` and ``ValidateJobSpecUpdate``."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    errs = job(new) + _completions_update(spec, old_spec)
    errs.extend(immutable("spec.selector", spec.get("selector"), old_spec.get("selector")))
    errs.extend(immutable("spec.template", spec.get("template"), _template_as_allowed(new, old)))
    for key in ("completionMode", "podFailurePolicy"):
        errs.extend(immutable(f"spec.{key}", spec.get(key), old_spec.get(key)))
    for key in ("backoffLimitPerIndex", "managedBy", "successPolicy"):
        errs.extend(immutable(f"spec.{key}", spec.get(key), old_spec.get(key)))
    return errs


def job_status(new: Object) -> Errors:
    """The counts of ``validateJobStatus``: active, succeeded, failed, ready and
    terminating pods are never negative. (The condition transitions 1.34 checks for
    Jobs another controller manages are not checked here.)"""
    status = as_dict(new.get("status"))
    errs: Errors = []
    for key in ("active", "succeeded", "failed", "ready", "terminating"):
        errs.extend(nonnegative_int(status.get(key), f"status.{key}"))
    return errs
