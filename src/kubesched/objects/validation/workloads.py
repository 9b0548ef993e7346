"""ReplicaSets, StatefulSets and ReplicationControllers as ``pkg/apis/apps/validation`` and
``pkg/apis/core/validation`` check them: a selector that is required, valid and matches the
pod template's labels, replicas not negative, and the template's pod spec (restartPolicy
Always, no activeDeadlineSeconds, no ephemeral containers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    Object,
    annotation_map,
    as_dict,
    forbidden,
    invalid,
    label_selector,
    labels,
    nonnegative_int,
    not_supported,
    required,
    selector_matches,
)
from kubesched.objects.validation.pod import pod_spec


def pod_template(
    template: Any, selector_ok: Callable[[dict[str, Any]], bool], path: str, kind: str
) -> Errors:
    """``ValidatePodTemplateSpecForReplicaSet``/RC (and StatefulSet's): labels match the
    selector, ``ValidatePodTemplateSpec`` (its metadata errors are named by the template's
    path itself: ``spec.template.labels``), restartPolicy Always, no deadline."""
    if not isinstance(template, dict):
        return [required(path)]
    meta = as_dict(template.get("metadata"))
    tmpl_labels = as_dict(meta.get("labels"))
    errs: Errors = []
    if not selector_ok(tmpl_labels):
        errs.append(
            invalid(
                f"{path}.metadata.labels",
                tmpl_labels,  # printed as JSON, as 1.34's ErrorBody does
                "`selector` does not match template `labels`",
            )
        )
    errs.extend(pod_template_spec(template, path))
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return errs
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


def pod_template_spec(template: Any, path: str) -> Errors:
    """``ValidatePodTemplateSpec``: the template's metadata, its pod spec, and no
    ephemeral containers."""
    if not isinstance(template, dict):
        return [required(path)]
    errs = pod_template_metadata(template, path)
    spec = template.get("spec")
    errs.extend(pod_spec(spec, f"{path}.spec"))
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        errs.append(
            forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


def pod_template_metadata(template: dict[str, Any], path: str) -> Errors:
    """The template's labels and annotations as ``ValidatePodTemplateSpec`` checks them
    (named by the template's path itself: ``spec.template.labels``)."""
    meta = as_dict(template.get("metadata"))
    errs = labels(meta.get("labels"), f"{path}.labels")
    errs.extend(annotation_map(meta.get("annotations"), f"{path}.annotations"))
    return errs


def selector_struct(selector: Any) -> GoValue:
    """A LabelSelector as 1.34's ``ErrorBody`` prints it: its JSON, fields in the Go
    struct's order (matchLabels, then matchExpressions), empty ones left out."""
    sel = selector if isinstance(selector, dict) else {}
    out: dict[str, Any] = {}
    if sel.get("matchLabels"):
        out["matchLabels"] = dict(sorted(as_dict(sel["matchLabels"]).items()))
    if sel.get("matchExpressions"):
        out["matchExpressions"] = [
            {
                k: v
                for k, v in (
                    ("key", as_dict(r).get("key", "")),
                    ("operator", as_dict(r).get("operator", "")),
                    ("values", as_dict(r).get("values")),
                )
                if k != "values" or v
            }
            for r in sel["matchExpressions"]
        ]
    return GoValue(json.dumps(out, separators=(",", ":"), ensure_ascii=False))


def replica_set(obj: Object) -> Errors:
    """``ValidateReplicaSetSpec`` / ``ValidateStatefulSetSpec``: selector required,
    non-empty, valid, matching the template's labels."""
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
                selector_struct(selector),
                "empty selector is invalid for deployment",
            )
        )
    if found:
        errs.append(invalid("spec.selector", selector_struct(selector), "invalid label selector"))
        return errs
    kind = str(obj.get("kind") or "ReplicaSet")
    errs.extend(
        pod_template(
            spec.get("template"), lambda ls: selector_matches(selector, ls), "spec.template", kind
        )
    )
    return errs


def replication_controller(obj: Object) -> Errors:
    """``ValidateReplicationControllerSpec``: a map selector matching the template."""
    spec = as_dict(obj.get("spec"))
    selector = as_dict(spec.get("selector"))
    errs: Errors = []
    if not selector:
        errs.append(required("spec.selector"))
    errs.extend(labels(selector, "spec.selector"))
    errs.extend(nonnegative_int(spec.get("replicas"), "spec.replicas"))
    errs.extend(
        pod_template(
            spec.get("template"),
            lambda ls: all(ls.get(k) == v for k, v in selector.items()),
            "spec.template",
            "ReplicationController",
        )
    )
    return errs
