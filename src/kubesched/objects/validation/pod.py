"""Pod validation as ``pkg/apis/core/validation/validation.go`` does it: the spec on create
(``ValidatePodSpec``: containers, resources, ports, tolerations, scheduling gates...) and
what an update may change (``ValidatePodUpdate``).

Only the parts a scheduler and its clients meet are checked; a field left out here is
accepted as it is.
"""

from __future__ import annotations

import functools
from typing import Any

from kubesched.objects.validation.affinity import (
    affinity,
    dns,
    pod_security_context,
    topology_spread,
)
from kubesched.objects.validation.container import (
    container_common,
    host_port_conflicts,
    init_only_forbidden,
    probes_and_lifecycle,
)
from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    forbidden,
    go_quote,
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
from kubesched.objects.validation.pod_claims import final_claim_names, pod_resource_claims
from kubesched.objects.validation.volumes import volumes

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_MAX_INT32 = 2**31 - 1
#: ``integerResources`` of pkg/apis/core/helper: counted in whole units (a node's pods).
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
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
    if (name in _INTEGER_RESOURCES or _is_extended(name)) and amount.milli_value() % 1000:
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


def _containers(spec: dict[str, Any], path: str, volumes: dict[str, Any]) -> Errors:
    # validateContainers, then validateInitContainers (names unique across both lists).
    grace = spec.get("terminationGracePeriodSeconds")
    host_users = spec.get("hostUsers") is not False
    errs: Errors = []
    containers = spec.get("containers")
    names: set[str] = set()
    if not containers or not isinstance(containers, list):
        errs.append(required(f"{path}.containers"))
        containers = []
    for i, ctr in enumerate(containers):
        at = f"{path}.containers[{i}]"
        if not isinstance(ctr, dict):
            errs.append(invalid(at, GoValue(str(ctr)), "must be an object"))
            continue
        errs.extend(container_common(ctr, at, volumes, resources, host_users))
        name = str(ctr.get("name") or "")
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        errs.extend(probes_and_lifecycle(ctr, grace, at))
        if ctr.get("restartPolicy") is not None:
            errs.append(forbidden(f"{at}.restartPolicy", "may not be set for non-init containers"))
    if containers:
        errs.extend(host_port_conflicts(containers, f"{path}.containers"))
    for i, ctr in enumerate(as_list(spec.get("initContainers"))):
        at = f"{path}.initContainers[{i}]"
        if not isinstance(ctr, dict):
            continue
        errs.extend(container_common(ctr, at, volumes, resources, host_users))
        restart = ctr.get("restartPolicy")
        if restart is not None and restart != "Always":
            errs.append(not_supported(f"{at}.restartPolicy", restart, ("Always",)))
        name = str(ctr.get("name") or "")
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
        # Init containers run one by one: each is checked alone, under index 0 as upstream.
        errs.extend(host_port_conflicts([ctr], f"{path}.initContainers"))
        if restart == "Always":
            errs.extend(probes_and_lifecycle(ctr, grace, at))
        else:
            errs.extend(init_only_forbidden(ctr, at))
    return errs


def _host_network_ports(spec: dict[str, Any], path: str) -> Errors:
    # validatePodHostNetworkDeps: a host port, once given, must be the container port (an
    # absent one is defaulted to it).
    if spec.get("hostNetwork") is not True:
        return []
    errs: Errors = []
    for i, ctr in enumerate(as_list(spec.get("containers"))):
        for j, port in enumerate(as_list(as_dict(ctr).get("ports"))):
            entry = as_dict(port)
            host = entry.get("hostPort") or 0
            if host and host != entry.get("containerPort"):
                errs.append(
                    invalid(
                        f"{path}.containers[{i}].ports[{j}].hostPort",
                        host,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
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


def _name(value: Any, path: str) -> Errors:
    # A name that must be a DNS subdomain, checked only when set.
    text = str(value or "")
    return [invalid(path, text, p) for p in is_dns1123_subdomain(text)] if text else []


def pod_spec(spec: Any, path: str) -> Errors:
    """``ValidatePodSpec``, in upstream's order."""
    if not isinstance(spec, dict):
        return [required(path)]
    valid_volumes, errs = volumes(spec.get("volumes"), f"{path}.volumes")
    errs.extend(_containers(spec, path, valid_volumes))
    errs.extend(_host_network_ports(spec, path))
    restart = spec.get("restartPolicy") or "Always"  # defaulted
    if restart not in _RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", restart, _RESTART_POLICIES))
    errs.extend(dns(spec, path))
    errs.extend(labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    if spec.get("securityContext") or spec.get("shareProcessNamespace"):
        errs.extend(pod_security_context(spec, f"{path}.securityContext"))
    if spec.get("affinity") is not None:
        errs.extend(affinity(spec["affinity"], f"{path}.affinity"))
    for i, gate in enumerate(as_list(spec.get("readinessGates"))):
        condition = str(as_dict(gate).get("conditionType") or "")
        errs.extend(qualified_name(condition, f"{path}.readinessGates[{i}].conditionType"))
    errs.extend(_scheduling_gates(spec.get("schedulingGates"), f"{path}.schedulingGates"))
    errs.extend(pod_resource_claims(spec, path))
    if spec.get("topologySpreadConstraints"):
        errs.extend(
            topology_spread(spec["topologySpreadConstraints"], f"{path}.topologySpreadConstraints")
        )
    errs.extend(_name(spec.get("serviceAccountName"), f"{path}.serviceAccountName"))
    errs.extend(_name(spec.get("nodeName"), f"{path}.nodeName"))
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
    if spec.get("tolerations"):
        errs.extend(tolerations(spec["tolerations"], f"{path}.tolerations"))
    errs.extend(_name(spec.get("priorityClassName"), f"{path}.priorityClassName"))
    if spec.get("runtimeClassName") is not None:
        runtime = str(spec["runtimeClassName"])
        errs.extend(
            invalid(f"{path}.runtimeClassName", runtime, p) for p in is_dns1123_subdomain(runtime)
        )
    preemption = spec.get("preemptionPolicy")
    if preemption is not None and preemption not in _PREEMPTION_POLICIES:
        errs.append(not_supported(f"{path}.preemptionPolicy", preemption, _PREEMPTION_POLICIES))
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        for name, amount in overhead.items():
            errs.extend(_resource_name(name, f"{path}.overhead[{name}]"))
            errs.extend(resource_quantity(name, amount, f"{path}.overhead[{name}]"))
    if spec.get("os") is not None:
        errs.extend(_os(as_dict(spec["os"]), f"{path}.os"))
    return errs


def _os(os_: dict[str, Any], path: str) -> Errors:
    name = str(os_.get("name") or "")
    if not name:
        return [required(f"{path}.name", "cannot be empty")]
    if name not in ("linux", "windows"):
        return [not_supported(path, name, ("linux", "windows"))]
    return []


def _images_trimmed(spec: dict[str, Any]) -> Errors:
    # validateContainersOnlyForPod: pods (not templates) may not pad their images.
    errs: Errors = []
    for key in ("containers", "initContainers"):
        for i, ctr in enumerate(as_list(spec.get(key))):
            image = as_dict(ctr).get("image")
            if isinstance(image, str) and image.strip() != image:
                errs.append(
                    invalid(
                        f"spec.{key}[{i}].image",
                        image,
                        "must not have leading or trailing whitespace",
                    )
                )
    return errs


def pod_metadata_and_spec(pod: dict[str, Any]) -> Errors:
    """``validatePodMetadataAndSpec``'s spec part, for creates and updates alike."""
    spec = pod.get("spec")
    errs = pod_spec(spec, "spec")
    if isinstance(spec, dict):
        errs.extend(_images_trimmed(spec))
        errs.extend(final_claim_names(pod))
    return errs


def pod_create(pod: dict[str, Any]) -> Errors:
    """``ValidatePodCreate``'s spec part (metadata is checked by the caller)."""
    errs = pod_metadata_and_spec(pod)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return errs
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(
            forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")
        )
    return errs
