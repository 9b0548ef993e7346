"""StatefulSets as ``pkg/apis/apps/validation`` checks them: ``ValidateStatefulSetSpec``
(podManagementPolicy, updateStrategy, persistentVolumeClaimRetentionPolicy, counts,
selector, template) and ``ValidateStatefulSetStatus``.

Upstream leaves the template's pod spec unchecked (its TODO: the mounts may name a
``volumeClaimTemplate``, which plain pod validation would refuse). Here the pod spec is
checked as a pod's, with each claim template counted as a volume of its name — what that
TODO asks for — so a template whose pods could never be created is refused up front while
the documentation's examples (``web.yaml``, ``zookeeper.yaml``) pass.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    as_dict,
    as_list,
    forbidden,
    invalid,
    is_int,
    label_selector,
    nonnegative_int,
    not_supported,
    required,
    selector_matches,
)
from kubesched.objects.validation.deployment import (
    is_zero_int_or_percent,
    percent_not_over_100,
    positive_int_or_percent,
)
from kubesched.objects.validation.workloads import pod_template_spec, selector_struct

_POLICIES = ("OrderedReady", "Parallel")
_RETENTION = ("Retain", "Delete")
_STATUS_COUNTS = (
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "observedGeneration",
    "collisionCount",
)
_OVER_REPLICAS = "cannot be greater than status.replicas"


def _json(value: Any) -> GoValue:
    return GoValue(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _rolling_update(rolling: dict[str, Any], path: str) -> Errors:
    # validateRollingUpdateStatefulSet
    errs = nonnegative_int(rolling.get("partition"), f"{path}.partition")
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        at = f"{path}.maxUnavailable"
        errs.extend(positive_int_or_percent(unavailable, at))
        if is_zero_int_or_percent(unavailable):
            errs.append(invalid(at, unavailable, "cannot be 0"))
        errs.extend(percent_not_over_100(unavailable, at))
    return errs


def _update_strategy(strategy: Any) -> Errors:
    strat = as_dict(strategy)
    kind = strat.get("type") or ""
    rolling = strat.get("rollingUpdate")
    path = "spec.updateStrategy"
    if kind == "":
        return [required(path)]
    if kind == "OnDelete":
        if rolling is not None:
            return [
                invalid(
                    f"{path}.rollingUpdate",
                    _json(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            ]
        return []
    if kind == "RollingUpdate":
        return (
            _rolling_update(rolling, f"{path}.rollingUpdate") if isinstance(rolling, dict) else []
        )
    return [invalid(path, _json(strat), "must be 'RollingUpdate' or 'OnDelete'")]


def _retention(policy: Any) -> Errors:
    if not isinstance(policy, dict):
        return []
    errs: Errors = []
    for key in ("whenDeleted", "whenScaled"):
        value = policy.get(key) or ""
        if value not in _RETENTION:
            errs.append(
                not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", value, _RETENTION)
            )
    return errs


def _with_claims(template: Any, claims: Any) -> Any:
    """The template with each claim template as a persistentVolumeClaim volume of its
    name, so that the mounts naming them are found."""
    names = [str(as_dict(as_dict(c).get("metadata")).get("name") or "") for c in as_list(claims)]
    spec = as_dict(as_dict(template).get("spec"))
    present = {str(as_dict(v).get("name") or "") for v in as_list(spec.get("volumes"))}
    extra = [n for n in names if n and n not in present]
    if not extra or not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return template
    widened = copy.copy(template)
    widened["spec"] = dict(template["spec"])
    widened["spec"]["volumes"] = as_list(spec.get("volumes")) + [
        {"name": n, "persistentVolumeClaim": {"claimName": n}} for n in extra
    ]
    return widened


def stateful_set(obj: Object) -> Errors:
    """``ValidateStatefulSetSpec`` (metadata is checked by the caller)."""
    spec = as_dict(obj.get("spec"))
    errs: Errors = []
    policy = spec.get("podManagementPolicy") or ""
    if policy == "":
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in _POLICIES:
        errs.append(
            invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    errs.extend(_update_strategy(spec.get("updateStrategy")))
    errs.extend(_retention(spec.get("persistentVolumeClaimRetentionPolicy")))
    errs.extend(nonnegative_int(spec.get("replicas"), "spec.replicas"))
    errs.extend(nonnegative_int(spec.get("minReadySeconds"), "spec.minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs.extend(nonnegative_int(ordinals.get("start"), "spec.ordinals.start"))
    selector = spec.get("selector")
    template = spec.get("template")
    if not isinstance(selector, dict):
        errs.append(required("spec.selector"))
        return errs
    found = label_selector(selector, "spec.selector")
    errs.extend(found)
    empty = not (selector.get("matchLabels") or selector.get("matchExpressions"))
    if empty:
        errs.append(
            invalid(
                "spec.selector",
                selector_struct(selector),
                "empty selector is invalid for statefulset",
            )
        )
    if found:
        errs.append(invalid("spec.selector", selector_struct(selector), ""))
    elif isinstance(template, dict):
        # ValidatePodTemplateSpecForStatefulSet: an empty selector is not compared.
        template_labels = as_dict(as_dict(template.get("metadata")).get("labels"))
        if not empty and not selector_matches(selector, template_labels):
            errs.append(
                invalid(
                    "spec.template.metadata.labels",
                    template_labels,
                    "`selector` does not match template `labels`",
                )
            )
    errs.extend(
        pod_template_spec(_with_claims(template, spec.get("volumeClaimTemplates")), "spec.template")
    )
    pod = as_dict(as_dict(template).get("spec"))
    restart = pod.get("restartPolicy") or "Always"
    if restart != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    if pod.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in StatefulSet is not Supported",
            )
        )
    return errs


def stateful_set_status(new: Object) -> Errors:
    """``ValidateStatefulSetStatus``: counts not negative, none above ``replicas``, no
    more available than ready replicas."""
    status = as_dict(new.get("status"))
    errs: Errors = []
    for key in _STATUS_COUNTS:
        errs.extend(nonnegative_int(status.get(key), f"status.{key}"))
    replicas = status.get("replicas", 0)
    for key in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        value = status.get(key, 0)
        if is_int(value) and is_int(replicas) and value > replicas:
            errs.append(invalid(f"status.{key}", value, _OVER_REPLICAS))
    ready, available = status.get("readyReplicas", 0), status.get("availableReplicas", 0)
    if is_int(ready) and is_int(available) and available > ready:
        errs.append(
            invalid(
                "status.availableReplicas", available, "cannot be greater than status.readyReplicas"
            )
        )
    return errs
