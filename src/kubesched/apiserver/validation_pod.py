"""Pod validation as ``pkg/apis/core/validation/validation.go`` does it: the spec on create
(``ValidatePodSpec``: containers, resources, ports, tolerations, scheduling gates...) and
what an update may change (``ValidatePodUpdate``).

Only the parts a scheduler and its clients meet are checked; a field left out here is
accepted as it is.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from kubesched.apiserver.validation_core import (
    Errors,
    FieldError,
    GoValue,
    as_dict,
    dns1123_label,
    duplicate,
    forbidden,
    go_quote,
    go_string_map,
    invalid,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    labels,
    not_supported,
    qualified_name,
    quantity,
    required,
)

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_MAX_INT32 = 2**31 - 1
_PORT_RANGE = "must be between 1 and 65535, inclusive"

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


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _overcommit_allowed(name: str) -> bool:
    # helper.IsOvercommitAllowed: extended resources and hugepages need request == limit.
    return _is_native(name) and not _is_hugepages(name)


@functools.lru_cache(maxsize=1024)
def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


@functools.lru_cache(maxsize=1024)
def _resource_name_problems(name: str) -> tuple[str, ...]:
    # validateContainerResourceName; every problem is an Invalid of the name.
    problems = is_qualified_name(name)
    if problems:
        return problems
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            return ("must be a standard resource for containers",)
    elif not _is_native(name) and not _is_extended(name):
        return ("doesn't follow extended resource name standard",)
    return ()


def _resource_name(name: str, path: str) -> Errors:
    return [invalid(path, name, p) for p in _resource_name_problems(name)]


def resource_quantity(name: str, value: Any, path: str) -> Errors:
    """``ValidateResourceQuantityValue``: non-negative; whole for integer resources."""
    amount = quantity(value)
    if amount.value < 0:
        return [invalid(path, str(amount), "must be greater than or equal to 0")]
    if _is_extended(name) and amount.milli_value() % 1000:
        return [invalid(path, amount, "must be an integer")]
    return []


def resources(value: Any, path: str) -> Errors:
    """``ValidateContainerResourceRequirements``: names, quantities, requests ≤ limits."""
    if not isinstance(value, dict):
        return []
    errs: Errors = []
    limits = as_dict(value.get("limits"))
    requests = as_dict(value.get("requests"))
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    parsed_limits = {}
    for name, amount in limits.items():
        at = f"{lim_path}[{name}]"
        errs.extend(_resource_name(name, at))
        errs.extend(resource_quantity(name, amount, at))
        parsed_limits[name] = quantity(amount)
    for name, amount in requests.items():
        at = f"{req_path}[{name}]"
        errs.extend(_resource_name(name, at))
        errs.extend(resource_quantity(name, amount, at))
        request = quantity(amount)
        limit = parsed_limits.get(name)
        if limit is not None:
            if request != limit and not _overcommit_allowed(name):
                errs.append(
                    invalid(req_path, str(request), f"must be equal to {name} limit of {limit}")
                )
            elif request > limit:
                errs.append(
                    invalid(
                        req_path,
                        str(request),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
    return errs


def _ports(ports: Any, path: str) -> Errors:
    errs: Errors = []
    names: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else ()):
        at = f"{path}[{i}]"
        if not isinstance(port, dict):
            continue
        name = port.get("name") or ""
        if name:
            if name in names:
                errs.append(duplicate(f"{at}.name", name))
            names.add(name)
        number = port.get("containerPort")
        if not number:
            errs.append(required(f"{at}.containerPort"))
        elif not isinstance(number, int) or not 1 <= number <= 65535:
            errs.append(invalid(f"{at}.containerPort", number, _PORT_RANGE))
        host = port.get("hostPort")
        if host and (not isinstance(host, int) or not 1 <= host <= 65535):
            errs.append(invalid(f"{at}.hostPort", host, _PORT_RANGE))
        protocol = port.get("protocol")
        if protocol is not None and protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return errs


def _container(ctr: dict[str, Any], path: str) -> Errors:
    # validateContainerCommon: name, image, ports, pull policy, resources.
    errs: Errors = []
    name = ctr.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(dns1123_label(str(name), f"{path}.name"))
    if not ctr.get("image"):
        errs.append(required(f"{path}.image"))
    errs.extend(_ports(ctr.get("ports"), f"{path}.ports"))
    policy = ctr.get("imagePullPolicy")
    if policy is not None and policy not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES))
    errs.extend(resources(ctr.get("resources"), f"{path}.resources"))
    return errs


def _containers(spec: dict[str, Any], path: str) -> Errors:
    errs: Errors = []
    containers = spec.get("containers")
    if not containers or not isinstance(containers, list):
        return [required(f"{path}.containers")]
    names: set[str] = set()
    for i, ctr in enumerate(containers):
        at = f"{path}.containers[{i}]"
        if not isinstance(ctr, dict):
            errs.append(invalid(at, GoValue(str(ctr)), "must be an object"))
            continue
        errs.extend(_container(ctr, at))
        if ctr.get("name") in names:
            errs.append(duplicate(f"{at}.name", ctr.get("name")))
        else:
            names.add(ctr.get("name") or "")
    for i, ctr in enumerate(spec.get("initContainers") or ()):
        at = f"{path}.initContainers[{i}]"
        if not isinstance(ctr, dict):
            continue
        errs.extend(_container(ctr, at))
        name = ctr.get("name") or ""
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
    return errs


def tolerations(value: Any, path: str) -> Errors:
    """``ValidateTolerations``."""
    errs: Errors = []
    for i, tol in enumerate(value if isinstance(value, list) else ()):
        at = f"{path}[{i}]"
        if not isinstance(tol, dict):
            continue
        key, operator = tol.get("key") or "", tol.get("operator") or ""
        effect, text = tol.get("effect") or "", tol.get("value") or ""
        if key:
            errs.extend(qualified_name(key, f"{at}.key"))
        if not key and operator != "Exists":
            errs.append(
                invalid(
                    f"{at}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all '
                    'values and all keys"',
                )
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(
                invalid(
                    f"{at}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            problems = is_label_value(str(text))
            if problems:
                errs.append(invalid(f"{at}.operator", text, ";".join(problems)))
        elif operator == "Exists":
            if text:
                errs.append(
                    invalid(
                        f"{at}.operator",
                        GoValue(_go_struct("core.Toleration", tol)),
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:
            errs.append(not_supported(f"{at}.operator", operator, ("Equal", "Exists")))
        if effect and effect not in _TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
    return errs


def _go_struct(type_name: str, obj: dict[str, Any]) -> str:
    # An approximation of %#v for a small struct of strings and numbers.
    fields = ", ".join(
        f"{k[:1].upper()}{k[1:]}:{go_quote(v) if isinstance(v, str) else v}" for k, v in obj.items()
    )
    return f"{type_name}{{{fields}}}"


def _scheduling_gates(gates: Any, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, gate in enumerate(gates if isinstance(gates, list) else ()):
        name = str(gate.get("name") or "") if isinstance(gate, dict) else ""
        errs.extend(qualified_name(name, f"{path}[{i}]"))
        if name in seen:
            errs.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errs


def _volumes(volumes: Any, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, volume in enumerate(volumes if isinstance(volumes, list) else ()):
        name = str(volume.get("name") or "") if isinstance(volume, dict) else ""
        at = f"{path}[{i}].name"
        if not name:
            errs.append(required(at))
        else:
            errs.extend(dns1123_label(name, at))
        if name in seen:
            errs.append(duplicate(at, name))
        seen.add(name)
    return errs


def pod_spec(spec: Any, path: str) -> Errors:
    """``ValidatePodSpec`` for the fields listed in the module docstring."""
    if not isinstance(spec, dict):
        return [required(path)]
    errs = _volumes(spec.get("volumes"), f"{path}.volumes")
    errs.extend(_containers(spec, path))
    restart = spec.get("restartPolicy")
    if restart is not None and restart not in _RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    errs.extend(labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    errs.extend(_scheduling_gates(spec.get("schedulingGates"), f"{path}.schedulingGates"))
    node = spec.get("nodeName") or ""
    if node:
        errs.extend(invalid(f"{path}.nodeName", node, p) for p in is_dns1123_subdomain(str(node)))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or not 1 <= deadline <= _MAX_INT32):
        errs.append(
            invalid(
                f"{path}.activeDeadlineSeconds",
                deadline,
                f"must be between 1 and {_MAX_INT32}, inclusive",
            )
        )
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs.extend(dns1123_label(str(spec[key]), f"{path}.{key}"))
    errs.extend(tolerations(spec.get("tolerations"), f"{path}.tolerations"))
    class_name = spec.get("priorityClassName") or ""
    if class_name:
        errs.extend(
            invalid(f"{path}.priorityClassName", class_name, p)
            for p in is_dns1123_subdomain(str(class_name))
        )
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        for name, amount in overhead.items():
            errs.extend(_resource_name(name, f"{path}.overhead[{name}]"))
            errs.extend(resource_quantity(name, amount, f"{path}.overhead[{name}]"))
    return errs


def pod_create(pod: dict[str, Any]) -> Errors:
    """``ValidatePodCreate``'s spec part (metadata is checked by the caller)."""
    spec = pod.get("spec")
    errs = pod_spec(spec, "spec")
    if isinstance(spec, dict) and spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    return errs


# -- updates --------------------------------------------------------------------------------


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


def pod_status_update(new: dict[str, Any]) -> list[FieldError]:
    """``ValidatePodStatusUpdate``'s checks of what a status writer may set."""
    status = as_dict(new.get("status"))
    nominated = status.get("nominatedNodeName") or ""
    if nominated:
        return [
            invalid("status.nominatedNodeName", nominated, p)
            for p in is_dns1123_subdomain(str(nominated))
        ]
    return []
