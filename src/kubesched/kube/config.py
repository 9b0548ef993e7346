"""Where the API server is and how to prove who we are: kubeconfig and in-cluster config.

:func:`load_config` follows kubectl/client-go: an explicit kubeconfig file, else the files
of ``$KUBECONFIG`` merged (the first file to define a name wins, the first non-empty
``current-context`` wins), else the pod's service account when ``KUBERNETES_SERVICE_HOST``
is set, else ``~/.kube/config``. The result is a :class:`ConnectionConfig` holding
everything resolved (relative paths against the file that named them, ``*-data`` decoded);
only tokens read from files and exec plugins are consulted again at request time
(:mod:`kubesched.kube.auth`). Mistakes raise :class:`ConfigError` naming file and field.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kubesched.kube.errors import ConfigError

__all__ = [
    "ConnectionConfig",
    "ExecConfig",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclass(frozen=True)
class ExecConfig:
    """A ``users[].user.exec`` credential plugin (client.authentication.k8s.io)."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    api_version: str = "client.authentication.k8s.io/v1"
    #: Directory a relative ``command`` is resolved against (the kubeconfig's).
    base_dir: str = ""
    install_hint: str = ""
    #: ``provideClusterInfo``: the plugin gets the cluster in KUBERNETES_EXEC_INFO.
    provide_cluster_info: bool = False
    source: str = ""


@dataclass(frozen=True)
class ConnectionConfig:
    """Everything needed to reach and authenticate to one API server."""

    server: str
    ca_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str = ""
    client_cert_data: bytes | None = None
    # Secrets stay out of repr(), and so out of logs and tracebacks.
    client_key_data: bytes | None = field(default=None, repr=False)
    token: str = field(default="", repr=False)
    #: A file to (re)read the bearer token from; service-account tokens rotate.
    token_file: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    exec: ExecConfig | None = None
    namespace: str = "default"
    #: Where this came from, for messages: ``kubeconfig /path (context ctx)``.
    source: str = ""


def load_config(
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    master: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ConnectionConfig:
    """Find the connection settings as kubectl would (see the module docstring).

    **master** overrides the server URL (``--master``); given alone, with no kubeconfig
    anywhere, it is a plain-HTTP address such as ``kubectl proxy``'s.
    """
    env = os.environ if env is None else env
    config: ConnectionConfig | None = None
    if kubeconfig is not None:
        config = load_kubeconfig([kubeconfig], context)
    elif env.get("KUBECONFIG"):
        paths = [p for p in env["KUBECONFIG"].split(os.pathsep) if p]
        config = load_kubeconfig(paths, context)
    elif env.get("KUBERNETES_SERVICE_HOST") and context is None:
        config = load_incluster_config(env=env)
    else:
        default = Path(env.get("HOME", str(Path.home()))) / ".kube" / "config"
        if default.exists():
            config = load_kubeconfig([default], context)
        elif master is None:
            raise ConfigError(
                str(default),
                "",
                "no kubeconfig found; pass --kubeconfig or --master, set KUBECONFIG, "
                "or run in a pod with a service account",
            )
    if master is not None:
        if config is None:
            return ConnectionConfig(server=master.rstrip("/"), source=f"--master {master}")
        return replace(config, server=master.rstrip("/"))
    assert config is not None
    return config


# --- kubeconfig -----------------------------------------------------------------------


@dataclass
class _Named:
    """One named cluster/user/context entry and the file that defined it."""

    body: Mapping[str, Any]
    file: str
    index: int


@dataclass
class _Merged:
    clusters: dict[str, _Named] = field(default_factory=dict)
    users: dict[str, _Named] = field(default_factory=dict)
    contexts: dict[str, _Named] = field(default_factory=dict)
    current_context: str = ""
    current_file: str = ""


def load_kubeconfig(
    paths: Sequence[str | os.PathLike[str]], context: str | None = None
) -> ConnectionConfig:
    """Merge the kubeconfig ``paths`` (first wins) and resolve ``context`` (or the current).

    A path in ``$KUBECONFIG`` that does not exist is skipped, as kubectl does; if none
    exists, or the context, its cluster or its user is missing, :class:`ConfigError` says
    which file and field.
    """
    merged = _Merged()
    read: list[str] = []
    for raw_path in paths:
        path = str(raw_path)
        if not Path(path).exists():
            if len(paths) == 1:
                raise ConfigError(path, "", "the kubeconfig file does not exist")
            continue
        read.append(path)
        _merge_file(merged, path)
    where = ", ".join(read) or os.pathsep.join(str(p) for p in paths)
    if not read:
        raise ConfigError(where, "", "none of these kubeconfig files exists")
    name = context or merged.current_context
    if not name:
        raise ConfigError(where, "current-context", "not set; pass a context name")
    ctx = merged.contexts.get(name)
    if ctx is None:
        known = ", ".join(sorted(merged.contexts)) or "none"
        field_name = "current-context" if context is None else "contexts"
        src = merged.current_file if context is None else where
        raise ConfigError(src, field_name, f"context {name!r} not found (known: {known})")
    ctx_path = f"contexts[{ctx.index}].context"
    cluster_name = _str(ctx.body, "cluster", ctx.file, ctx_path)
    user_name = _str(ctx.body, "user", ctx.file, ctx_path)
    cluster = merged.clusters.get(cluster_name)
    if cluster is None:
        raise ConfigError(ctx.file, f"{ctx_path}.cluster", f"cluster {cluster_name!r} not found")
    user = merged.users.get(user_name) if user_name else None
    if user_name and user is None:
        raise ConfigError(ctx.file, f"{ctx_path}.user", f"user {user_name!r} not found")
    source = f"kubeconfig {where} (context {name})"
    settings: dict[str, Any] = {"source": source}
    settings["namespace"] = _str(ctx.body, "namespace", ctx.file, ctx_path) or "default"
    settings.update(_cluster_settings(cluster))
    if user is not None:
        settings.update(_user_settings(user))
    return ConnectionConfig(**settings)


def _merge_file(merged: _Merged, path: str) -> None:
    try:
        text = Path(path).read_text(encoding="utf-8")
        doc = yaml.safe_load(text) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "", f"cannot read the kubeconfig: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(path, "", f"not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(path, "", "a kubeconfig must be a mapping (kind: Config)")
    for section, inner in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
        entries = doc.get(section) or []
        if not isinstance(entries, list):
            raise ConfigError(path, section, "must be a list")
        target: dict[str, _Named] = getattr(merged, section)
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ConfigError(path, f"{section}[{index}].name", "required, a string")
            body = entry.get(inner) or {}
            if not isinstance(body, dict):
                raise ConfigError(path, f"{section}[{index}].{inner}", "must be a mapping")
            target.setdefault(entry["name"], _Named(body, path, index))
    current = doc.get("current-context") or ""
    if not isinstance(current, str):
        raise ConfigError(path, "current-context", "must be a string")
    if current and not merged.current_context:
        merged.current_context, merged.current_file = current, path


def _str(body: Mapping[str, Any], key: str, file: str, path: str) -> str:
    value = body.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(file, f"{path}.{key}", f"must be a string, not {value!r}")
    return value


def _data(body: Mapping[str, Any], key: str, named: _Named, path: str) -> bytes | None:
    """``key-data`` (base64) or ``key`` (a file, relative to the kubeconfig's directory)."""
    data = _str(body, f"{key}-data", named.file, path)
    if data:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ConfigError(named.file, f"{path}.{key}-data", "not valid base64") from exc
    file = _str(body, key, named.file, path)
    if not file:
        return None
    resolved = _resolve(file, named.file)
    try:
        return Path(resolved).read_bytes()
    except OSError as exc:
        raise ConfigError(named.file, f"{path}.{key}", f"cannot read {resolved}: {exc}") from exc


def _resolve(file: str, kubeconfig: str) -> str:
    expanded = os.path.expanduser(file)
    if os.path.isabs(expanded):
        return expanded
    return str(Path(kubeconfig).resolve().parent / expanded)


def _cluster_settings(named: _Named) -> dict[str, Any]:
    path = f"clusters[{named.index}].cluster"
    body = named.body
    server = _str(body, "server", named.file, path)
    if not server:
        raise ConfigError(named.file, f"{path}.server", "required: the API server's URL")
    if not server.startswith(("http://", "https://")):
        raise ConfigError(named.file, f"{path}.server", f"not an http(s) URL: {server!r}")
    insecure = body.get("insecure-skip-tls-verify", False)
    if not isinstance(insecure, bool):
        raise ConfigError(named.file, f"{path}.insecure-skip-tls-verify", "must be true/false")
    return {
        "server": server.rstrip("/"),
        "ca_data": _data(body, "certificate-authority", named, path),
        "insecure_skip_tls_verify": insecure,
        "tls_server_name": _str(body, "tls-server-name", named.file, path),
    }


def _user_settings(named: _Named) -> dict[str, Any]:
    path = f"users[{named.index}].user"
    body = named.body
    cert = _data(body, "client-certificate", named, path)
    key = _data(body, "client-key", named, path)
    if (cert is None) != (key is None):
        missing = "client-key" if key is None else "client-certificate"
        raise ConfigError(named.file, f"{path}.{missing}", "required with the other half")
    token_file = _str(body, "tokenFile", named.file, path)
    settings: dict[str, Any] = {
        "client_cert_data": cert,
        "client_key_data": key,
        "token": _str(body, "token", named.file, path),
        "token_file": _resolve(token_file, named.file) if token_file else "",
        "username": _str(body, "username", named.file, path),
        "password": _str(body, "password", named.file, path),
    }
    if body.get("exec") is not None:
        settings["exec"] = _exec_settings(body["exec"], named, f"{path}.exec")
    if body.get("auth-provider") is not None:
        raise ConfigError(
            named.file,
            f"{path}.auth-provider",
            "auth-provider plugins are not supported; use an exec credential plugin",
        )
    return settings


def _exec_settings(raw: object, named: _Named, path: str) -> ExecConfig:
    if not isinstance(raw, dict):
        raise ConfigError(named.file, path, "must be a mapping")
    command = _str(raw, "command", named.file, path)
    if not command:
        raise ConfigError(named.file, f"{path}.command", "required")
    api_version = _str(raw, "apiVersion", named.file, path)
    allowed = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
    if api_version not in allowed:
        raise ConfigError(
            named.file, f"{path}.apiVersion", f"{api_version!r} is not one of {', '.join(allowed)}"
        )
    args = raw.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(named.file, f"{path}.args", "must be a list of strings")
    env: dict[str, str] = {}
    for index, item in enumerate(raw.get("env") or []):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigError(named.file, f"{path}.env[{index}]", "needs a name and a value")
        env[item["name"]] = str(item.get("value", ""))
    return ExecConfig(
        command=command,
        args=tuple(args),
        env=env,
        api_version=api_version,
        base_dir=str(Path(named.file).resolve().parent),
        install_hint=_str(raw, "installHint", named.file, path),
        provide_cluster_info=bool(raw.get("provideClusterInfo", False)),
        source=f"{named.file}: {path}",
    )


# --- in-cluster -----------------------------------------------------------------------


def load_incluster_config(
    directory: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR,
    env: Mapping[str, str] | None = None,
) -> ConnectionConfig:
    """The pod's service account: ``KUBERNETES_SERVICE_HOST``/``_PORT`` and the token,
    CA and namespace files in ``directory``. The token is re-read as it rotates."""
    env = os.environ if env is None else env
    host = env.get("KUBERNETES_SERVICE_HOST", "")
    port = env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        missing = "KUBERNETES_SERVICE_HOST" if not host else "KUBERNETES_SERVICE_PORT"
        raise ConfigError("environment", missing, "not set: not running in a pod")
    base = Path(directory)
    token_path = base / "token"
    if not token_path.is_file():
        raise ConfigError(str(token_path), "", "the service account token is missing")
    ca_path = base / "ca.crt"
    try:
        ca = ca_path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(ca_path), "", f"cannot read the cluster CA: {exc}") from exc
    namespace_path = base / "namespace"
    namespace = "default"
    if namespace_path.is_file():
        namespace = namespace_path.read_text(encoding="utf-8").strip() or "default"
    bracketed = f"[{host}]" if ":" in host else host
    return ConnectionConfig(
        server=f"https://{bracketed}:{port}",
        ca_data=ca,
        token_file=str(token_path),
        namespace=namespace,
        source=f"in-cluster service account ({base})",
    )
