"""What an update may change in a pod, as ``ValidatePodUpdate`` decides it (images, the
active deadline downwards, added tolerations, removed scheduling gates, a gated pod's node
constraints), and what a status writer may set (``ValidatePodStatusUpdate``)."""

from __future__ import annotations

import json
from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    FieldError,
    GoValue,
    as_dict,
    as_list,
    forbidden,
    go_string_map,
    invalid,
    is_dns1123_subdomain,
    qualified_name,
    required,
)
from kubesched.objects.validation.pod import tolerations
from kubesched.objects.validation.pod_claims import resource_claim_statuses

_MAX_INT32 = 2**31 - 1
#: ``updatablePodSpecFields``: named in the refusal of any other change.
UPDATABLE_POD_SPEC_FIELDS = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
        "negative)",
    )
)


def _container_updates(new: Any, old: Any, path: str) -> tuple[Errors, bool]:
    # ValidateContainerUpdates: same containers; images required and trimmed.
    new_list = new if isinstance(new, list) else []
    old_list = old if isinstance(old, list) else []
    if len(new_list) != len(old_list):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: Errors = []
    for i, ctr in enumerate(new_list):
        image = ctr.get("image") or "" if isinstance(ctr, dict) else ""
        if not image:
            errs.append(required(f"{path}[{i}].image"))
        if image.strip() != image:
            errs.append(
                invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace")
            )
    return errs, False


def _only_added_tolerations(new: Any, old: Any, path: str) -> Errors:
    new_list = [t for t in new or () if isinstance(t, dict)]
    for previous in old or ():
        if not isinstance(previous, dict):
            continue
        # tolerationSeconds may change; everything else of an old toleration must stay.
        if not any(
            _semantic(dict(previous, tolerationSeconds=t.get("tolerationSeconds"))) == _semantic(t)
            for t in new_list
        ):
            return [
                forbidden(
                    path, "existing toleration can not be modified except its tolerationSeconds"
                )
            ]
    return tolerations(new, path)


def _only_deleted_gates(new: Any, old: Any, path: str) -> Errors:
    old_names = {g.get("name") for g in old or () if isinstance(g, dict)}
    return [
        forbidden(
            f"{path}[{i}].name",
            f"only deletion is allowed, but found new scheduling gate '{gate.get('name')}'",
        )
        for i, gate in enumerate(new or ())
        if isinstance(gate, dict) and gate.get("name") not in old_names
    ]


def _node_selector_mutation(new: Any, old: Any, path: str) -> Errors:
    new_map = new if isinstance(new, dict) else {}
    for key, value in (old or {}).items():
        if new_map.get(key) != value:
            return [
                invalid(
                    path,
                    go_string_map(new_map),
                    "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                )
            ]
    return []


def _required_terms(affinity: Any) -> list[Any] | None:
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    req = (
        node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node, dict)
        else None
    )
    if not isinstance(req, dict):
        return None
    return list(req.get("nodeSelectorTerms") or [])


def _node_affinity_mutation(new: Any, old: Any, path: str) -> Errors:
    # validateNodeAffinityMutation: required terms may only gain expressions.
    old_terms = _required_terms(old)
    if not old_terms:
        return []
    new_terms = _required_terms(new) or []
    terms_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if len(old_terms) != len(new_terms):
        return [
            invalid(
                terms_path,
                GoValue(_json_text(new_terms)),
                "no additions/deletions to non-empty NodeSelectorTerms list are allowed",
            )
        ]
    errs: Errors = []
    for i, (before, after) in enumerate(zip(old_terms, new_terms, strict=True)):
        if _semantic(before.get("matchFields")) != _semantic(after.get("matchFields")):
            errs.append(
                invalid(
                    f"{terms_path}[{i}].matchFields",
                    GoValue(_json_text(after.get("matchFields"))),
                    "should not be changed",
                )
            )
        old_exprs = before.get("matchExpressions") or []
        new_exprs = after.get("matchExpressions") or []
        if len(old_exprs) > len(new_exprs):
            errs.append(
                invalid(
                    f"{terms_path}[{i}].matchExpressions",
                    GoValue(_json_text(new_exprs)),
                    "should not be deleted",
                )
            )
            continue
        for j, expr in enumerate(old_exprs):
            if _semantic(expr) != _semantic(new_exprs[j]):
                errs.append(
                    invalid(
                        f"{terms_path}[{i}].matchExpressions[{j}]",
                        GoValue(_json_text(new_exprs[j])),
                        "should not be changed",
                    )
                )
    return errs


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _semantic(value: Any) -> Any:
    # apiequality.Semantic.DeepEqual: empty and absent are the same (Go zero values).
    if isinstance(value, dict):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, "", [], {}, False)}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def pod_update(new: dict[str, Any], old: dict[str, Any]) -> Errors:
    """``ValidatePodUpdate``'s spec rules: what may change in a pod after it was created."""
    new_spec = as_dict(new.get("spec"))
    old_spec = as_dict(old.get("spec"))
    errs: Errors = []
    for key in ("containers", "initContainers"):
        found, stop = _container_updates(new_spec.get(key), old_spec.get(key), f"spec.{key}")
        errs.extend(found)
        if stop:
            return errs
    deadline, old_deadline = (
        new_spec.get("activeDeadlineSeconds"),
        old_spec.get("activeDeadlineSeconds"),
    )
    if isinstance(deadline, int):
        if deadline < 0 or deadline > _MAX_INT32:
            errs.append(
                invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    f"must be between 0 and {_MAX_INT32}, inclusive",
                )
            )
            return errs
        if isinstance(old_deadline, int) and old_deadline < deadline:
            errs.append(
                invalid(
                    "spec.activeDeadlineSeconds",
                    deadline,
                    "must be less than or equal to previous value",
                )
            )
            return errs
    elif old_deadline is not None:
        errs.append(
            invalid(
                "spec.activeDeadlineSeconds",
                None,
                "must not update from a positive integer to nil value",
            )
        )
    errs.extend(
        _only_added_tolerations(
            new_spec.get("tolerations"), old_spec.get("tolerations"), "spec.tolerations"
        )
    )
    if new_spec.get("schedulingGates"):
        errs.extend(
            _only_deleted_gates(
                new_spec.get("schedulingGates"),
                old_spec.get("schedulingGates"),
                "spec.schedulingGates",
            )
        )
    if _semantic(new_spec) == _semantic(old_spec):
        return errs
    errs.extend(_munged_difference(new_spec, old_spec))
    return errs


def _munged_difference(new_spec: dict[str, Any], old_spec: dict[str, Any]) -> Errors:
    # The updatable fields take their old values; what still differs is forbidden.
    munged = dict(new_spec)
    for key in ("containers", "initContainers"):
        old_list = old_spec.get(key) or []
        munged[key] = [
            dict(ctr, image=old_list[i].get("image")) if isinstance(ctr, dict) else ctr
            for i, ctr in enumerate(new_spec.get(key) or [])
        ]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        munged[key] = old_spec.get(key)
    grace, old_grace = (
        munged.get("terminationGracePeriodSeconds"),
        old_spec.get("terminationGracePeriodSeconds"),
    )
    if isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    errs: Errors = []
    if old_spec.get("schedulingGates"):
        # A gated pod may gain node selector entries and required node affinity expressions.
        if _semantic(munged.get("nodeSelector")) != _semantic(old_spec.get("nodeSelector")):
            errs.extend(
                _node_selector_mutation(
                    munged.get("nodeSelector"), old_spec.get("nodeSelector"), "spec.nodeSelector"
                )
            )
            munged["nodeSelector"] = old_spec.get("nodeSelector")
        old_aff, new_aff = old_spec.get("affinity") or {}, munged.get("affinity") or {}
        if _semantic(old_aff.get("nodeAffinity")) != _semantic(new_aff.get("nodeAffinity")):
            errs.extend(_node_affinity_mutation(new_aff, old_aff, "spec.affinity.nodeAffinity"))
            munged["affinity"] = dict(new_aff, nodeAffinity=old_aff.get("nodeAffinity"))
    if _semantic(munged) != _semantic(old_spec):
        errs.append(
            forbidden(
                "spec",
                f"pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}\n"
                + _spec_diff(old_spec, munged),
            )
        )
    return errs


def _spec_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    # In the spirit of cmp.Diff(old, new): the top-level fields that differ, old then new.
    before, after = _semantic(old), _semantic(new)
    lines = ["  core.PodSpec{"]
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            go_name = key[:1].upper() + key[1:]
            if key in before:
                lines.append(f"- \t{go_name}: {_json_text(before[key])},")
            if key in after:
                lines.append(f"+ \t{go_name}: {_json_text(after[key])},")
    lines.append("  }")
    return "\n".join(lines) + "\n"


#: Pod conditions the system owns; any other type must be a qualified name.
_SYSTEM_CONDITIONS = frozenset({"PodScheduled", "Ready", "Initialized"})


def pod_status_update(new: dict[str, Any]) -> list[FieldError]:
    """``ValidatePodStatusUpdate``'s checks of what a status writer may set: custom
    condition types (upstream reports them under ``metadata.conditions``) and the
    nominated node's name."""
    status = as_dict(new.get("status"))
    errs: Errors = []
    for i, condition in enumerate(as_list(status.get("conditions"))):
        kind = str(as_dict(condition).get("type") or "")
        if kind not in _SYSTEM_CONDITIONS:
            errs.extend(qualified_name(kind, f"metadata.conditions[{i}].Type"))
    nominated = status.get("nominatedNodeName") or ""
    if nominated:
        errs.extend(
            invalid("status.nominatedNodeName", nominated, p)
            for p in is_dns1123_subdomain(str(nominated))
        )
    errs.extend(resource_claim_statuses(new))
    return errs
