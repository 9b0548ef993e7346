"""A pod's resource claims as ``pkg/apis/core/validation`` checks them.

``spec.resourceClaims``: each entry a unique DNS label naming exactly one of a
ResourceClaim or a ResourceClaimTemplate (``validatePodResourceClaim``); for a pod (not a
template) the claim made from a template, ``<pod>-<entry>``, must be a valid name.
Containers' ``resources.claims`` must name those entries, each (with its request) once
(``validateResourceClaimNames``).
"""

from __future__ import annotations

from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    invalid,
    is_dns1123_subdomain,
    not_found,
    required,
)


def _go_claim(claim: dict[str, Any]) -> GoValue:
    # %v of a core.PodResourceClaim: {name <nil> 0x...}; pointers print as addresses in
    # Go, which no one can match, so the fields are shown as set.
    parts = [str(claim.get("name") or "")]
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        parts.append(str(claim[key]) if claim.get(key) is not None else "<nil>")
    return GoValue("{" + " ".join(parts) + "}")


def pod_resource_claims(spec: dict[str, Any], path: str) -> Errors:
    """``validatePodResourceClaims`` and the containers' ``resources.claims``."""
    errs: Errors = []
    names: set[str] = set()
    for i, raw in enumerate(as_list(spec.get("resourceClaims"))):
        claim = as_dict(raw)
        at = f"{path}.resourceClaims[{i}]"
        name = str(claim.get("name") or "")
        if not name:
            errs.append(required(f"{at}.name", ""))
        elif name in names:
            errs.append(duplicate(f"{at}.name", name))
        else:
            errs.extend(dns1123_label(name, f"{at}.name"))
            names.add(name)
        claim_name, template = (
            claim.get("resourceClaimName"),
            claim.get("resourceClaimTemplateName"),
        )
        if claim_name is not None and template is not None:
            errs.append(
                invalid(
                    at,
                    _go_claim(claim),
                    "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                    "specified",
                )
            )
        if claim_name is None and template is None:
            errs.append(
                invalid(
                    at,
                    _go_claim(claim),
                    "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
                )
            )
        for key, value in (
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template),
        ):
            if value is not None:
                errs.extend(
                    invalid(f"{at}.{key}", value, p) for p in is_dns1123_subdomain(str(value))
                )
    for kind in ("initContainers", "containers"):
        for i, ctr in enumerate(as_list(spec.get(kind))):
            resources = as_dict(as_dict(ctr).get("resources"))
            errs.extend(
                _container_claims(
                    resources.get("claims"), f"{path}.{kind}[{i}].resources.claims", names
                )
            )
    return errs


def _container_claims(value: Any, path: str, pod_claims: set[str]) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, raw in enumerate(as_list(value)):
        claim = as_dict(raw)
        at = f"{path}[{i}]"
        name = str(claim.get("name") or "")
        if not name:
            errs.append(required(at, ""))
            continue
        key = name
        request = str(claim.get("request") or "")
        if request:
            errs.extend(dns1123_label(request, f"{at}.request"))
            key = f"{name}/{request}"
        if key in seen:
            errs.append(duplicate(at, key))
        seen.add(key)
        if name not in pod_claims:
            err = not_found(at, name)
            detail = "must be one of the names in pod.spec.resourceClaims"
            detail += " which is empty" if not pod_claims else ": " + ", ".join(sorted(pod_claims))
            errs.append(type(err)(err.type, err.field, err.value, detail))
    return errs


def final_claim_names(pod: dict[str, Any]) -> Errors:
    """For a pod, the name ``<pod>-<entry>`` of each claim made from a template must be
    a valid ResourceClaim name."""
    meta, spec = as_dict(pod.get("metadata")), as_dict(pod.get("spec"))
    pod_name = str(meta.get("name") or "")
    if not pod_name:
        return []
    errs: Errors = []
    for i, raw in enumerate(as_list(spec.get("resourceClaims"))):
        claim = as_dict(raw)
        name = str(claim.get("name") or "")
        if not name or claim.get("resourceClaimTemplateName") is None or dns1123_label(name, ""):
            continue
        final = f"{pod_name}-{name}"
        errs.extend(
            invalid(f"spec.resourceClaims[{i}].name", final, "final ResourceClaim name: " + p)
            for p in is_dns1123_subdomain(final)
        )
    return errs


def resource_claim_statuses(pod: dict[str, Any]) -> Errors:
    """``validatePodResourceClaimStatuses``: each entry names a ``spec.resourceClaims``
    entry, once, and a valid claim name."""
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    entries = {str(as_dict(c).get("name") or "") for c in as_list(spec.get("resourceClaims"))}
    errs: Errors = []
    seen: set[str] = set()
    for i, raw in enumerate(as_list(status.get("resourceClaimStatuses"))):
        entry = as_dict(raw)
        at = f"status.resourceClaimStatuses[{i}].name"
        name = str(entry.get("name") or "")
        if name not in entries:
            errs.append(
                invalid(at, name, "must match the name of an entry in `spec.resourceClaims`")
            )
        if name in seen:
            errs.append(duplicate(at, name))
        seen.add(name)
        claim = entry.get("resourceClaimName")
        if claim is not None:
            errs.extend(invalid(at, str(claim), p) for p in is_dns1123_subdomain(str(claim)))
    return errs
