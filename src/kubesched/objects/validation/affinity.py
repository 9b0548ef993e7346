"""The scheduling constraints of a pod spec as ``ValidatePodSpec`` checks them: node
affinity (``ValidateNodeSelector``, preferred terms), pod affinity and anti-affinity terms,
topology spread constraints; and the pod-level security context and DNS settings."""

from __future__ import annotations

import re
from typing import Any

from kubesched.objects.validation.container import app_armor_profile, ids, seccomp_profile
from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    as_dict,
    as_list,
    duplicate,
    forbidden,
    invalid,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_int,
    is_label_value,
    label_selector,
    not_supported,
    qualified_name,
    regex_error,
    required,
)

_WEIGHT_RANGE = "must be in the range 1-100"
_NOT_POSITIVE = "must be greater than zero"
_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
_INCLUSION_POLICIES = ("Honor", "Ignore")
_FS_GROUP_POLICIES = ("Always", "OnRootMismatch")
_GROUPS_POLICIES = ("Merge", "Strict")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_SYSCTL_FMT = "([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_RE = re.compile(_SYSCTL_FMT)
_UNDERSCORE_LABEL = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_UNDERSCORE_SUBDOMAIN = _UNDERSCORE_LABEL + "(\\." + _UNDERSCORE_LABEL + ")*"
_UNDERSCORE_RE = re.compile(_UNDERSCORE_SUBDOMAIN)
_UNDERSCORE_MESSAGE = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', "
    "'-' or '.', and must start and end with an alphanumeric character",
    _UNDERSCORE_SUBDOMAIN,
    "example.com",
)


def _subdomain_with_underscore(value: str) -> tuple[str, ...]:
    # IsDNS1123SubdomainWithUnderscore.
    problems: tuple[str, ...] = ("must be no more than 253 characters",) if len(value) > 253 else ()
    if _UNDERSCORE_RE.fullmatch(value) is None:
        problems += (_UNDERSCORE_MESSAGE,)
    return problems


_IPC_SYSCTLS = ("kernel.shm", "kernel.msg", "kernel.sem", "fs.mqueue.")


def _go_list(values: list[Any]) -> GoValue:
    # %#v of a []string.
    return GoValue("[]string{" + ", ".join(f'"{v}"' for v in values) + "}")


# -- node affinity --------------------------------------------------------------------------


def _requirement(req: dict[str, Any], path: str, check_values: bool) -> Errors:
    # ValidateNodeSelectorRequirement.
    operator = req.get("operator") or ""
    values = as_list(req.get("values"))
    errs: Errors = []
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(
                required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errs.extend(qualified_name(str(req.get("key") or ""), f"{path}.key"))
    if check_values:
        for i, value in enumerate(values):
            text = str(value)
            errs.extend(invalid(f"{path}.values[{i}]", text, p) for p in is_label_value(text))
    return errs


def _field_requirement(req: dict[str, Any], path: str) -> Errors:
    # ValidateNodeFieldSelectorRequirement: only metadata.name In/NotIn one node name.
    operator = req.get("operator") or ""
    values = as_list(req.get("values"))
    errs: Errors = []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = str(req.get("key") or "")
    if key != "metadata.name":
        errs.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            text = str(value)
            errs.extend(invalid(f"{path}.values[{i}]", text, p) for p in is_dns1123_subdomain(text))
    return errs


def node_selector_term(term: dict[str, Any], path: str, check_values: bool) -> Errors:
    """``ValidateNodeSelectorTerm``."""
    errs: Errors = []
    for j, req in enumerate(as_list(term.get("matchExpressions"))):
        errs.extend(_requirement(as_dict(req), f"{path}.matchExpressions[{j}]", check_values))
    for j, req in enumerate(as_list(term.get("matchFields"))):
        errs.extend(_field_requirement(as_dict(req), f"{path}.matchFields[{j}]"))
    return errs


def _node_affinity(na: dict[str, Any], path: str) -> Errors:
    errs: Errors = []
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(as_dict(req).get("nodeSelectorTerms"))
        if not terms:
            errs.append(required(at, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            errs.extend(node_selector_term(as_dict(term), f"{at}[{i}]", True))
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, pref in enumerate(as_list(na.get(at.rpartition(".")[2]))):
        entry = as_dict(pref)
        weight = entry.get("weight", 0)
        if not is_int(weight) or not 1 <= weight <= 100:
            errs.append(invalid(f"{at}[{i}].weight", weight, _WEIGHT_RANGE))
        # Preferred terms may carry any label value (they can still match one node).
        errs.extend(
            node_selector_term(as_dict(entry.get("preference")), f"{at}[{i}].preference", False)
        )
    return errs


# -- pod affinity ---------------------------------------------------------------------------


def _label_keys(keys: list[Any], selector: Any, path: str) -> Errors:
    # validateLabelKeys.
    if not keys:
        return []
    if selector is None:
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    errs: Errors = []
    for i, key in enumerate(keys):
        errs.extend(qualified_name(str(key), f"{path}[{i}]"))
    return errs


def _affinity_term(term: dict[str, Any], path: str) -> Errors:
    # validatePodAffinityTerm.
    selector = term.get("labelSelector")
    errs = label_selector(selector, f"{path}.labelSelector")
    errs.extend(label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector"))
    for name in as_list(term.get("namespaces")):
        text = str(name)
        errs.extend(invalid(f"{path}.namespace", text, p) for p in is_dns1123_label(text))
    match_keys = as_list(term.get("matchLabelKeys"))
    mismatch_keys = as_list(term.get("mismatchLabelKeys"))
    errs.extend(_label_keys(match_keys, selector, f"{path}.matchLabelKeys"))
    errs.extend(_label_keys(mismatch_keys, selector, f"{path}.mismatchLabelKeys"))
    if isinstance(selector, dict):
        index = {str(k): i for i, k in enumerate(match_keys)}
        seen = set(as_dict(selector.get("matchLabels")))
        for expr in as_list(selector.get("matchExpressions")):
            key = str(as_dict(expr).get("key") or "")
            if key in index and key in seen:
                # Upstream's index here is the path's own, as it writes it.
                errs.append(
                    invalid(
                        f"{path}[{index[key]}]",
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
                )
            seen.add(key)
    mismatched = {str(k) for k in mismatch_keys}
    for i, key in enumerate(match_keys):
        if str(key) in mismatched:
            errs.append(
                invalid(
                    f"{path}.matchLabelKeys[{i}]",
                    str(key),
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    topology = str(term.get("topologyKey") or "")
    if not topology:
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    errs.extend(qualified_name(topology, f"{path}.topologyKey"))
    return errs


def _pod_affinity(pa: dict[str, Any], path: str) -> Errors:
    errs: Errors = []
    at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(as_list(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        errs.extend(_affinity_term(as_dict(term), f"{at}[{i}]"))
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, weighted in enumerate(
        as_list(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        entry = as_dict(weighted)
        weight = entry.get("weight", 0)
        if not is_int(weight) or not 1 <= weight <= 100:
            errs.append(invalid(f"{at}[{i}].weight", weight, _WEIGHT_RANGE))
        errs.extend(
            _affinity_term(as_dict(entry.get("podAffinityTerm")), f"{at}[{i}].podAffinityTerm")
        )
    return errs


def affinity(value: Any, path: str) -> Errors:
    """``validateAffinity``."""
    aff = as_dict(value)
    errs: Errors = []
    if aff.get("nodeAffinity") is not None:
        errs.extend(_node_affinity(as_dict(aff["nodeAffinity"]), f"{path}.nodeAffinity"))
    for key in ("podAffinity", "podAntiAffinity"):
        if aff.get(key) is not None:
            errs.extend(_pod_affinity(as_dict(aff[key]), f"{path}.{key}"))
    return errs


# -- topology spread constraints ------------------------------------------------------------


def topology_spread(value: Any, path: str) -> Errors:
    """``validateTopologySpreadConstraints``."""
    constraints = [as_dict(c) for c in as_list(value)]
    errs: Errors = []
    for i, tsc in enumerate(constraints):
        at = f"{path}[{i}]"
        skew = tsc.get("maxSkew", 0)
        if not is_int(skew) or skew <= 0:
            errs.append(invalid(f"{at}.maxSkew", skew, _NOT_POSITIVE))
        key = str(tsc.get("topologyKey") or "")
        if not key:
            errs.append(required(f"{at}.topologyKey", "can not be empty"))
        action = tsc.get("whenUnsatisfiable") or ""
        if action not in _ACTIONS:
            errs.append(not_supported(f"{at}.whenUnsatisfiable", action, _ACTIONS))
        for later in constraints[i + 1 :]:
            if (
                str(later.get("topologyKey") or "") == key
                and (later.get("whenUnsatisfiable") or "") == action
            ):
                errs.append(
                    duplicate(f"{at}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {action}}}")
                )
                break
        domains = tsc.get("minDomains")
        if domains is not None:
            if not is_int(domains) or domains <= 0:
                errs.append(invalid(f"{at}.minDomains", domains, _NOT_POSITIVE))
            if action != "DoNotSchedule":
                errs.append(
                    invalid(
                        f"{at}.minDomains",
                        domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            chosen = tsc.get(policy)
            if chosen is not None and chosen not in _INCLUSION_POLICIES:
                errs.append(not_supported(f"{at}.{policy}", chosen, _INCLUSION_POLICIES))
        errs.extend(_spread_label_keys(tsc, f"{at}.matchLabelKeys"))
        errs.extend(label_selector(tsc.get("labelSelector"), f"{at}.labelSelector"))
    return errs


def _spread_label_keys(tsc: dict[str, Any], path: str) -> Errors:
    # validateMatchLabelKeysInTopologySpread.
    keys = as_list(tsc.get("matchLabelKeys"))
    if not keys:
        return []
    selector = tsc.get("labelSelector")
    errs: Errors = []
    used: set[str] = set()
    if isinstance(selector, dict):
        used.update(str(k) for k in as_dict(selector.get("matchLabels")))
        used.update(
            str(as_dict(e).get("key") or "") for e in as_list(selector.get("matchExpressions"))
        )
    else:
        errs.append(forbidden(path, "must not be specified when labelSelector is not set"))
    for i, key in enumerate(keys):
        errs.extend(qualified_name(str(key), f"{path}[{i}]"))
        if str(key) in used:
            errs.append(
                invalid(f"{path}[{i}]", str(key), "exists in both matchLabelKeys and labelSelector")
            )
    return errs


# -- pod security context and DNS -----------------------------------------------------------


def _sysctls(sc: dict[str, Any], spec: dict[str, Any], path: str) -> Errors:
    errs: Errors = []
    names: set[str] = set()
    for i, sysctl in enumerate(as_list(sc.get("sysctls"))):
        name = str(as_dict(sysctl).get("name") or "")
        at = f"{path}[{i}].name"
        if not name:
            errs.append(required(at))
        elif len(name) > 253 or not _SYSCTL_RE.fullmatch(name):
            errs.append(
                invalid(
                    at, name, f"must have at most 253 characters and match regex ^{_SYSCTL_FMT}$"
                )
            )
        elif name in names:
            errs.append(duplicate(at, name))
        dotted = name.replace("/", ".")
        if spec.get("hostNetwork") is True and dotted.startswith("net."):
            errs.append(invalid(at, name, "may not be specified when 'hostNetwork' is true"))
        elif spec.get("hostIPC") is True and dotted.startswith(_IPC_SYSCTLS):
            errs.append(invalid(at, name, "may not be specified when 'hostIPC' is true"))
        names.add(name)
    return errs


def pod_security_context(spec: dict[str, Any], path: str) -> Errors:
    """``validatePodSpecSecurityContext`` (hostPID and hostIPC live on the v1 spec)."""
    sc = as_dict(spec.get("securityContext"))
    errs = ids(sc, ("fsGroup", "runAsUser", "runAsGroup"), path)
    for g, gid in enumerate(as_list(sc.get("supplementalGroups"))):
        if is_int(gid):
            errs.extend(ids({"g": gid}, ("g",), f"{path}.supplementalGroups[{g}]"))
    share = spec.get("shareProcessNamespace")
    if share is True and spec.get("hostPID") is True:
        errs.append(
            invalid(
                f"{path}.shareProcessNamespace",
                share,
                "ShareProcessNamespace and HostPID cannot both be enabled",
            )
        )
    if sc.get("sysctls"):
        errs.extend(_sysctls(sc, spec, f"{path}.sysctls"))
    policy = sc.get("fsGroupChangePolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        errs.append(not_supported(f"{path}.fsGroupChangePolicy", policy, _FS_GROUP_POLICIES))
    errs.extend(seccomp_profile(sc.get("seccompProfile"), f"{path}.seccompProfile"))
    errs.extend(app_armor_profile(sc.get("appArmorProfile"), f"{path}.appArmorProfile"))
    groups = sc.get("supplementalGroupsPolicy")
    if groups is not None and groups not in _GROUPS_POLICIES:
        errs.append(not_supported(f"{path}.supplementalGroupsPolicy", groups, _GROUPS_POLICIES))
    return errs


def dns(spec: dict[str, Any], path: str) -> Errors:
    """``validateDNSPolicy`` and the parts of ``validatePodDNSConfig`` that need no IP
    parsing: dnsConfig required for policy None, at most 3 nameservers, option names."""
    policy = spec.get("dnsPolicy") or "ClusterFirst"  # defaulted
    errs: Errors = []
    if policy not in _DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", policy, _DNS_POLICIES))
    config = spec.get("dnsConfig")
    at = f"{path}.dnsConfig"
    if policy == "None":
        if config is None:
            errs.append(required(at, "must provide `dnsConfig` when `dnsPolicy` is None"))
            return errs
        if not as_list(as_dict(config).get("nameservers")):
            errs.append(
                required(
                    f"{at}.nameservers",
                    "must provide at least one DNS nameserver when `dnsPolicy` is None",
                )
            )
            return errs
    if config is None:
        return errs
    servers = as_list(as_dict(config).get("nameservers"))
    if len(servers) > 3:
        errs.append(
            invalid(f"{at}.nameservers", _go_list(servers), "must not have more than 3 nameservers")
        )
    searches = [str(s) for s in as_list(as_dict(config).get("searches"))]
    if len(searches) > 32:
        errs.append(
            invalid(f"{at}.searches", _go_list(searches), "must not have more than 32 search paths")
        )
    if len(" ".join(searches)) > 2048:
        errs.append(
            invalid(
                f"{at}.searches",
                _go_list(searches),
                "must not have more than 2048 characters (including spaces) in the search list",
            )
        )
    for i, search in enumerate(searches):
        # RelaxedDNSSearchValidation (GA in 1.34): "." and underscores are allowed.
        if search != ".":
            name = search.removesuffix(".")
            errs.extend(
                invalid(f"{at}.searches[{i}]", name, p) for p in _subdomain_with_underscore(name)
            )
    for i, option in enumerate(as_list(as_dict(config).get("options"))):
        if not as_dict(option).get("name"):
            errs.append(required(f"{at}.options[{i}]", "must not be empty"))
    return errs
