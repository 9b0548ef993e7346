"""Containers as ``validateContainers`` / ``validateInitContainers`` check them: the common
part (name, image, terminationMessagePolicy, ports, env, envFrom, volumeMounts,
imagePullPolicy, resources, securityContext), probes and lifecycle handlers, and host port
conflicts.

Fields kube-apiserver defaults before validating (a port's protocol, the pull and
termination message policies, probe periods and thresholds, an HTTP probe's path and
scheme) are read with their defaults when absent, so a body that leaves them out is valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.objects.validation.core import (
    Errors,
    GoValue,
    as_dict,
    as_list,
    dns1123_label,
    duplicate,
    forbidden,
    invalid,
    is_dns1123_subdomain,
    is_int,
    name_is_dns_subdomain,
    nonnegative_int,
    not_found,
    not_supported,
    required,
    too_long,
)
from kubesched.objects.validation.formats import (
    is_config_map_key,
    is_http_header_name,
    is_relaxed_env_var_name,
    is_valid_id,
    is_valid_port_name,
    is_valid_port_num,
)
from kubesched.objects.validation.volumes import (
    ENV_FIELD_PATHS,
    field_selector,
    local_descending,
    resource_field_selector,
)

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")
_SCHEMES = ("HTTP", "HTTPS")
_PROC_MOUNTS = ("Default", "Unmasked")
_SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_APPARMOR_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_INIT_ONLY = "may not be set for init containers without restartPolicy=Always"
#: Probe fields defaulted when 0 or absent (``SetDefaults_Probe``).
_PROBE_DEFAULTS = {
    "timeoutSeconds": 1,
    "periodSeconds": 10,
    "successThreshold": 1,
    "failureThreshold": 3,
}


def _probe_number(probe: dict[str, Any], key: str) -> Any:
    value = probe.get(key)
    if key in _PROBE_DEFAULTS and (value is None or value == 0):
        return _PROBE_DEFAULTS[key]
    return 0 if value is None else value


# -- the common part ------------------------------------------------------------------------


def container_common(
    ctr: dict[str, Any],
    path: str,
    volumes: dict[str, Any],
    resources: Callable[[Any, str], Errors],
    host_users: bool,
) -> Errors:
    """``validateContainerCommon``; ``resources`` is the resource requirements check."""
    errs: Errors = []
    name = str(ctr.get("name") or "")
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs.extend(dns1123_label(name, f"{path}.name"))
    if not ctr.get("image"):
        errs.append(required(f"{path}.image"))
    policy = ctr.get("terminationMessagePolicy") or "File"
    if policy not in _MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", policy, _MESSAGE_POLICIES))
    if ctr.get("ports"):
        errs.extend(ports(ctr["ports"], f"{path}.ports"))
    if ctr.get("env"):
        errs.extend(env(ctr["env"], f"{path}.env"))
    if ctr.get("envFrom"):
        errs.extend(env_from(ctr["envFrom"], f"{path}.envFrom"))
    if ctr.get("volumeMounts"):
        errs.extend(volume_mounts(ctr, volumes, f"{path}.volumeMounts"))
    pull = ctr.get("imagePullPolicy") or "IfNotPresent"
    if pull not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES))
    errs.extend(resources(ctr.get("resources"), f"{path}.resources"))
    if ctr.get("securityContext") is not None:
        errs.extend(
            security_context(as_dict(ctr["securityContext"]), f"{path}.securityContext", host_users)
        )
    return errs


def ports(value: Any, path: str) -> Errors:
    """``validateContainerPorts``."""
    errs: Errors = []
    names: set[str] = set()
    for i, port in enumerate(as_list(value)):
        at = f"{path}[{i}]"
        entry = as_dict(port)
        name = str(entry.get("name") or "")
        if name:
            problems = is_valid_port_name(name)
            if problems:
                errs.extend(invalid(f"{at}.name", name, p) for p in problems)
            elif name in names:
                errs.append(duplicate(f"{at}.name", name))
            else:
                names.add(name)
        number = entry.get("containerPort") or 0
        if not number:
            errs.append(required(f"{at}.containerPort"))
        elif is_int(number):
            errs.extend(
                invalid(f"{at}.containerPort", number, p) for p in is_valid_port_num(number)
            )
        host = entry.get("hostPort") or 0
        if host and is_int(host):
            errs.extend(invalid(f"{at}.hostPort", host, p) for p in is_valid_port_num(host))
        protocol = entry.get("protocol") or "TCP"
        if protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return errs


def host_port_conflicts(containers: list[Any], path: str) -> Errors:
    """``AccumulateUniqueHostPorts``: one protocol/hostIP/hostPort per pod."""
    seen: set[str] = set()
    errs: Errors = []
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(as_list(as_dict(ctr).get("ports"))):
            entry = as_dict(port)
            host = entry.get("hostPort") or 0
            if not host:
                continue
            key = f"{entry.get('protocol') or 'TCP'}/{entry.get('hostIP') or ''}/{host}"
            if key in seen:
                errs.append(duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return errs


# -- environment ----------------------------------------------------------------------------


def env(value: Any, path: str) -> Errors:
    """``ValidateEnv``: names (relaxed rules, GA in 1.34) and ``valueFrom``."""
    errs: Errors = []
    for i, var in enumerate(as_list(value)):
        at = f"{path}[{i}]"
        entry = as_dict(var)
        name = str(entry.get("name") or "")
        if not name:
            errs.append(required(f"{at}.name"))
        else:
            errs.extend(invalid(f"{at}.name", name, p) for p in is_relaxed_env_var_name(name))
        if entry.get("valueFrom") is not None:
            errs.extend(_value_from(as_dict(entry["valueFrom"]), entry, f"{at}.valueFrom"))
    return errs


def _value_from(source: dict[str, Any], var: dict[str, Any], path: str) -> Errors:
    # validateEnvVarValueFrom: exactly one source, and no value beside it.
    errs: Errors = []
    count = 0
    if source.get("fieldRef") is not None:
        count += 1
        errs.extend(
            field_selector(as_dict(source["fieldRef"]), ENV_FIELD_PATHS, f"{path}.fieldRef")
        )
    if source.get("resourceFieldRef") is not None:
        count += 1
        errs.extend(
            resource_field_selector(
                as_dict(source["resourceFieldRef"]), f"{path}.resourceFieldRef", False
            )
        )
    for key in ("configMapKeyRef", "secretKeyRef"):
        if source.get(key) is not None:
            count += 1
            errs.extend(_key_selector(as_dict(source[key]), f"{path}.{key}"))
    if count == 0:
        errs.append(
            invalid(
                path,
                "",
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                "`secretKeyRef`",
            )
        )
    elif var.get("value"):
        errs.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _key_selector(ref: dict[str, Any], path: str) -> Errors:
    # validateConfigMapKeySelector / validateSecretKeySelector.
    name = str(ref.get("name") or "")
    errs = [invalid(f"{path}.name", name, p) for p in is_dns1123_subdomain(name)]
    key = str(ref.get("key") or "")
    if not key:
        errs.append(required(f"{path}.key"))
    else:
        errs.extend(invalid(f"{path}.key", key, p) for p in is_config_map_key(key))
    return errs


def env_from(value: Any, path: str) -> Errors:
    """``ValidateEnvFrom``: a prefix that is a valid name, exactly one source."""
    errs: Errors = []
    for i, source in enumerate(as_list(value)):
        at = f"{path}[{i}]"
        entry = as_dict(source)
        prefix = str(entry.get("prefix") or "")
        if prefix:
            errs.extend(invalid(f"{at}.prefix", prefix, p) for p in is_relaxed_env_var_name(prefix))
        count = 0
        for key in ("configMapRef", "secretRef"):
            if entry.get(key) is None:
                continue
            count += 1
            name = str(as_dict(entry[key]).get("name") or "")
            if not name:
                errs.append(required(f"{at}.{key}.name"))
            else:
                errs.extend(
                    invalid(f"{at}.{key}.name", name, p) for p in name_is_dns_subdomain(name, True)
                )
        if count == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


# -- volume mounts --------------------------------------------------------------------------


def volume_mounts(ctr: dict[str, Any], volumes: dict[str, Any], path: str) -> Errors:
    """``ValidateVolumeMounts``: a declared volume, a unique mount path, sub-paths."""
    errs: Errors = []
    mount_points: set[str] = set()
    privileged = as_dict(ctr.get("securityContext")).get("privileged") is True
    for i, mount in enumerate(as_list(ctr.get("volumeMounts"))):
        at = f"{path}[{i}]"
        entry = as_dict(mount)
        name = str(entry.get("name") or "")
        if not name:
            errs.append(required(f"{at}.name"))
        if name not in volumes:
            errs.append(not_found(f"{at}.name", name))
        mount_path = str(entry.get("mountPath") or "")
        if not mount_path:
            errs.append(required(f"{at}.mountPath"))
        if mount_path in mount_points:
            errs.append(invalid(f"{at}.mountPath", mount_path, "must be unique"))
        mount_points.add(mount_path)
        sub_path, sub_expr = str(entry.get("subPath") or ""), str(entry.get("subPathExpr") or "")
        if as_dict(volumes.get(name)).get("image") is not None:
            if sub_path:
                errs.append(
                    invalid(f"{at}.subPath", sub_path, "not allowed in image volume sources")
                )
            if sub_expr:
                errs.append(
                    invalid(f"{at}.subPathExpr", sub_expr, "not allowed in image volume sources")
                )
        if sub_path:
            # Upstream names the list, not the item, for sub-path errors.
            errs.extend(local_descending(sub_path, f"{path}.subPath"))
        if sub_expr:
            if sub_path:
                errs.append(
                    invalid(
                        f"{at}.subPathExpr",
                        sub_expr,
                        "subPathExpr and subPath are mutually exclusive",
                    )
                )
            errs.extend(local_descending(sub_expr, f"{path}.subPathExpr"))
        propagation = entry.get("mountPropagation")
        if propagation is not None:
            if propagation not in _PROPAGATIONS:
                errs.append(not_supported(f"{path}.mountPropagation", propagation, _PROPAGATIONS))
            if propagation == "Bidirectional" and not privileged:
                errs.append(
                    forbidden(
                        f"{path}.mountPropagation",
                        "Bidirectional mount propagation is available only to privileged "
                        "containers",
                    )
                )
        errs.extend(_recursive_read_only(entry, f"{path}.recursiveReadOnly"))
    return errs


def _recursive_read_only(mount: dict[str, Any], path: str) -> Errors:
    mode = mount.get("recursiveReadOnly")
    if mode is None or mode == "Disabled":
        return []
    if mode not in _RECURSIVE_READ_ONLY:
        return [not_supported(path, mode, _RECURSIVE_READ_ONLY)]
    errs: Errors = []
    if not mount.get("readOnly"):
        errs.append(forbidden(path, "may only be specified when readOnly is true"))
    if mount.get("mountPropagation") not in (None, "None"):
        errs.append(
            forbidden(path, "may only be specified when mountPropagation is None or not specified")
        )
    return errs


# -- probes and lifecycle handlers ----------------------------------------------------------


def port_num_or_name(port: Any, path: str) -> Errors:
    """``ValidatePortNumOrName`` for an IntOrString (absent reads as 0)."""
    if isinstance(port, str):
        return [invalid(path, port, p) for p in is_valid_port_name(port)]
    number = port if is_int(port) else 0
    return [invalid(path, number, p) for p in is_valid_port_num(number)]


def _handler(handler: dict[str, Any], grace: Any, path: str, kinds: tuple[str, ...]) -> Errors:
    # validateHandler: exactly one action; the first counts, each further one is forbidden.
    errs: Errors = []
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if count:
            errs.append(forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        errs.extend(_action(kind, as_dict(action), grace, f"{path}.{kind}"))
    if not count:
        errs.append(required(path, "must specify a handler type"))
    return errs


def _action(kind: str, action: dict[str, Any], grace: Any, path: str) -> Errors:
    if kind == "exec":
        return [] if as_list(action.get("command")) else [required(f"{path}.command")]
    if kind == "httpGet":
        errs = port_num_or_name(action.get("port"), f"{path}.port")
        scheme = action.get("scheme") or "HTTP"
        if scheme not in _SCHEMES:
            errs.append(not_supported(f"{path}.scheme", scheme, _SCHEMES))
        for header in as_list(action.get("httpHeaders")):
            name = str(as_dict(header).get("name") or "")
            errs.extend(invalid(f"{path}.httpHeaders", name, p) for p in is_http_header_name(name))
        return errs
    if kind in ("tcpSocket", "grpc"):
        port = action.get("port")
        return port_num_or_name(port if kind == "tcpSocket" or is_int(port) else 0, f"{path}.port")
    seconds = action.get("seconds", 0)
    if is_int(grace) and is_int(seconds) and not 0 <= seconds <= grace:
        # PodLifecycleSleepActionAllowZero is on by default since 1.33.
        detail = f"must be non-negative and less than terminationGracePeriodSeconds ({grace})"
        return [invalid(path, seconds, detail)]
    return []


def _probe(probe: dict[str, Any], grace: Any, path: str, kind: str) -> Errors:
    # validateProbe plus the liveness/readiness/startup specifics.
    errs = _handler(probe, grace, path, ("exec", "httpGet", "tcpSocket", "grpc"))
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        errs.extend(nonnegative_int(_probe_number(probe, key), f"{path}.{key}"))
    own_grace = probe.get("terminationGracePeriodSeconds")
    if is_int(own_grace) and own_grace <= 0:
        errs.append(
            invalid(f"{path}.terminationGracePeriodSeconds", own_grace, "must be greater than 0")
        )
    success = _probe_number(probe, "successThreshold")
    if kind in ("livenessProbe", "startupProbe") and success != 1:
        errs.append(invalid(f"{path}.successThreshold", success, "must be 1"))
    if kind == "readinessProbe" and own_grace is not None:
        errs.append(
            invalid(
                f"{path}.terminationGracePeriodSeconds",
                own_grace,
                "must not be set for readinessProbes",
            )
        )
    return errs


def probes_and_lifecycle(ctr: dict[str, Any], grace: Any, path: str) -> Errors:
    """Lifecycle handlers and the three probes of a regular or restartable init container."""
    errs: Errors = []
    lifecycle = ctr.get("lifecycle")
    if lifecycle is not None:
        for hook in ("postStart", "preStop"):
            handler = as_dict(lifecycle).get(hook) if isinstance(lifecycle, dict) else None
            if handler is not None:
                errs.extend(
                    _handler(
                        as_dict(handler),
                        grace,
                        f"{path}.lifecycle.{hook}",
                        ("exec", "httpGet", "tcpSocket", "sleep"),
                    )
                )
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        if ctr.get(kind) is not None:
            errs.extend(_probe(as_dict(ctr[kind]), grace, f"{path}.{kind}", kind))
    return errs


def init_only_forbidden(ctr: dict[str, Any], path: str) -> Errors:
    """What an init container without ``restartPolicy: Always`` may not have."""
    return [
        forbidden(f"{path}.{key}", _INIT_ONLY)
        for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
        if ctr.get(key) is not None
    ]


# -- security contexts ----------------------------------------------------------------------


def ids(sc: dict[str, Any], keys: tuple[str, ...], path: str) -> Errors:
    """User and group IDs: 0 to MaxInt32."""
    errs: Errors = []
    for key in keys:
        value = sc.get(key)
        if is_int(value):
            errs.extend(invalid(f"{path}.{key}", value, p) for p in is_valid_id(value))
    return errs


def seccomp_profile(profile: Any, path: str) -> Errors:
    """``validateSeccompProfileField``."""
    if profile is None:
        return []
    sp = as_dict(profile)
    kind = str(sp.get("type") or "")
    errs: Errors = []
    if not kind:
        errs.append(required(f"{path}.type", "type is required when seccompProfile is set"))
    elif kind not in _SECCOMP_TYPES:
        errs.append(not_supported(f"{path}.type", kind, _SECCOMP_TYPES))
    local = sp.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            errs.append(
                required(f"{path}.localhostProfile", "must be set when seccomp type is Localhost")
            )
        else:
            errs.extend(local_descending(str(local), f"{path}.localhostProfile"))
    elif local is not None:
        errs.append(
            invalid(
                f"{path}.localhostProfile",
                GoValue(f"core.SeccompProfile{{Type:{kind!r}, LocalhostProfile:{local!r}}}"),
                "can only be set when seccomp type is Localhost",
            )
        )
    return errs


def app_armor_profile(profile: Any, path: str) -> Errors:
    """``ValidateAppArmorProfileField``."""
    if profile is None:
        return []
    ap = as_dict(profile)
    kind = str(ap.get("type") or "")
    local = ap.get("localhostProfile")
    at = f"{path}.localhostProfile"
    if kind == "Localhost":
        if local is None:
            return [required(at, "must be set when AppArmor type is Localhost")]
        text = str(local)
        errs: Errors = []
        if text.strip() != text:
            errs.append(invalid(at, text, "must not be padded with whitespace"))
        elif not text:
            errs.append(required(at, "must be set when AppArmor type is Localhost"))
        if len(text) > 4095:  # PATH_MAX - 1
            errs.append(too_long(at, 4095))
        return errs
    if kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            return [invalid(at, local, "can only be set when AppArmor type is Localhost")]
        return []
    if not kind:
        return [required(f"{path}.type", "type is required when appArmorProfile is set")]
    return [not_supported(f"{path}.type", kind, _APPARMOR_TYPES)]


def security_context(sc: dict[str, Any], path: str, host_users: bool) -> Errors:
    """``ValidateSecurityContext`` of a container (privileged containers are allowed, as
    in a cluster started with ``--allow-privileged``)."""
    errs = ids(sc, ("runAsUser", "runAsGroup"), path)
    proc = sc.get("procMount")
    if proc is not None:
        if proc not in _PROC_MOUNTS:
            errs.append(not_supported(f"{path}.procMount", proc, _PROC_MOUNTS))
        if host_users and proc == "Unmasked":
            errs.append(
                invalid(f"{path}.procMount", proc, "`hostUsers` must be false to use `Unmasked`")
            )
    errs.extend(seccomp_profile(sc.get("seccompProfile"), f"{path}.seccompProfile"))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged") is True:
            errs.append(
                invalid(
                    path,
                    GoValue("&core.SecurityContext{...}"),
                    "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                )
            )
        for cap in as_list(as_dict(sc.get("capabilities")).get("add")):
            if cap == "CAP_SYS_ADMIN":
                errs.append(
                    invalid(
                        path,
                        GoValue("&core.SecurityContext{...}"),
                        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                        "CAP_SYS_ADMIN",
                    )
                )
    errs.extend(app_armor_profile(sc.get("appArmorProfile"), f"{path}.appArmorProfile"))
    return errs
