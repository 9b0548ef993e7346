"""Decoding, defaulting and validation of a KubeSchedulerConfiguration document.

Defaulting follows ``SetDefaults_KubeSchedulerConfiguration`` of kube-scheduler's
``pkg/scheduler/apis/config/v1/defaults.go``: Go's zero values (``0``, ``""``, a missing
field) mean "use the default", except where the v1 field is a pointer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kubesched.config.decode import INT64, Fields, child, type_error
from kubesched.config.defaults import default_plugins, merge_plugins
from kubesched.config.errors import FieldError
from kubesched.config.gofmt import go_quote
from kubesched.config.policy import removed_policy_errors
from kubesched.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINT_WIRE_NAMES,
    EXTENSION_POINTS,
    KIND,
    ClientConnection,
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    LeaderElection,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
    TLSConfig,
)
from kubesched.config.validation import validate

__all__ = ["parse_config"]


@dataclass(frozen=True)
class _DecodedProfile:
    """A profile as written, before defaulting: ``None`` marks what the file left out."""

    scheduler_name: str | None
    percentage_of_nodes_to_score: int | None
    plugins: Plugins | None
    plugin_config: tuple[PluginConfig, ...]
    path: str


def parse_config(
    data: object, source: str = ""
) -> tuple[KubeSchedulerConfiguration, list[FieldError]]:
    """Decode, default and validate ``data`` (a document loaded from YAML or JSON).

    Returns the best-effort configuration together with every problem found; the
    configuration is only fit for use when the list is empty.
    """
    removed = removed_policy_errors(data)
    if removed:
        # A removed form: the one error saying how to migrate beats a list of fields
        # (apiVersion, algorithmSource, ...) this version does not know.
        config, _ = parse_config({"apiVersion": API_VERSION, "kind": KIND}, source)
        return config, removed
    errors: list[FieldError] = []
    top = Fields(data, "", errors)
    for key, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        value = top.raw(key)
        if value is None or value == "":
            errors.append(FieldError.required(key))
        elif value != expected:
            errors.append(FieldError.not_supported(key, value, [expected]))
    parallelism = top.integer("parallelism")
    leader_election = _leader_election(top.nested("leaderElection"))
    client_connection = _client_connection(top.nested("clientConnection"))
    # Part of the v1 schema (DebuggingConfiguration). kubesched serves no profiling
    # endpoint, so these are accepted, so that kube-scheduler files load, and ignored.
    top.optional_boolean("enableProfiling")
    top.optional_boolean("enableContentionProfiling")
    percentage = top.integer("percentageOfNodesToScore")
    initial_backoff = top.integer("podInitialBackoffSeconds", INT64)
    max_backoff = top.integer("podMaxBackoffSeconds", INT64)
    decoded = [_profile(Fields(item, path, errors)) for path, item in top.items("profiles")]
    extenders = tuple(_extender(Fields(item, p, errors)) for p, item in top.items("extenders"))
    delay_cache = top.boolean("delayCacheUntilActive")
    top.finish()

    if not decoded:
        decoded = [_DecodedProfile(None, None, None, (), "profiles[0]")]
    config = KubeSchedulerConfiguration(
        parallelism=16 if parallelism is None else parallelism,
        leader_election=leader_election,
        client_connection=client_connection,
        percentage_of_nodes_to_score=percentage,
        pod_initial_backoff_seconds=1 if initial_backoff is None else initial_backoff,
        pod_max_backoff_seconds=10 if max_backoff is None else max_backoff,
        profiles=tuple(_default_profile(d, single=len(decoded) == 1) for d in decoded),
        extenders=extenders,
        delay_cache_until_active=delay_cache,
        source=source,
    )
    # Plugin entries are checked as written, so that their indexes match the file rather
    # than the merged lists (where defaults come first).
    errors.extend(validate(config, [d.plugins or Plugins() for d in decoded]))
    return config, errors


def _default_profile(decoded: _DecodedProfile, *, single: bool) -> Profile:
    name = decoded.scheduler_name
    if name is None:
        # Upstream names only a lone profile; several unnamed ones fail validation.
        name = DEFAULT_SCHEDULER_NAME if single else ""
    return Profile(
        scheduler_name=name,
        percentage_of_nodes_to_score=decoded.percentage_of_nodes_to_score,
        plugins=merge_plugins(default_plugins(), decoded.plugins),
        plugin_config=decoded.plugin_config,
        path=decoded.path,
    )


def _profile(fields: Fields) -> _DecodedProfile:
    name = fields.optional_string("schedulerName")
    percentage = fields.integer("percentageOfNodesToScore")
    plugins_fields = fields.nested("plugins")
    plugins = _plugins(plugins_fields) if plugins_fields is not None else None
    configs = tuple(
        _plugin_config(Fields(item, path, fields.errors))
        for path, item in fields.items("pluginConfig")
    )
    fields.finish()
    return _DecodedProfile(name, percentage, plugins, configs, fields.path)


def _plugins(fields: Fields) -> Plugins:
    sets = {
        point: _plugin_set(fields.nested(EXTENSION_POINT_WIRE_NAMES[point]))
        for point in EXTENSION_POINTS
    }
    fields.finish()
    return Plugins(**sets)


def _plugin_set(fields: Fields | None) -> PluginSet:
    if fields is None:
        return PluginSet()
    enabled, disabled = (
        tuple(_plugin_ref(Fields(item, path, fields.errors)) for path, item in fields.items(key))
        for key in ("enabled", "disabled")
    )
    fields.finish()
    return PluginSet(enabled=enabled, disabled=disabled)


def _plugin_ref(fields: Fields) -> PluginRef:
    ref = PluginRef(fields.string("name"), fields.integer("weight"))
    fields.finish()
    return ref


def _plugin_config(fields: Fields) -> PluginConfig:
    name = fields.string("name")
    args_path = fields.at("args")
    raw = fields.raw("args")
    fields.finish()
    if raw is None:
        return PluginConfig(name, MappingProxyType({}), args_path)
    if not isinstance(raw, Mapping):
        fields.errors.append(type_error(args_path, raw, "object"))
        return PluginConfig(name, MappingProxyType({}), args_path)
    args = dict(raw)
    # The type meta only says what the args are; plugins get the fields alone.
    kind, api_version = args.pop("kind", None), args.pop("apiVersion", None)
    if kind is not None and kind != f"{name}Args":
        detail = f"must be {go_quote(name + 'Args')}, the kind of the arguments of {name}"
        fields.errors.append(FieldError.invalid(child(args_path, "kind"), kind, detail))
    if api_version is not None and api_version != API_VERSION:
        path = child(args_path, "apiVersion")
        fields.errors.append(FieldError.not_supported(path, api_version, [API_VERSION]))
    return PluginConfig(name, MappingProxyType(args), args_path)


def _leader_election(fields: Fields | None) -> LeaderElection:
    default = LeaderElection()
    if fields is None:
        return default
    # Zero durations and empty strings mean "default" here (Go zero values).
    result = LeaderElection(
        leader_elect=_or(fields.optional_boolean("leaderElect"), default.leader_elect),
        lease_duration_seconds=fields.duration("leaseDuration") or default.lease_duration_seconds,
        renew_deadline_seconds=fields.duration("renewDeadline") or default.renew_deadline_seconds,
        retry_period_seconds=fields.duration("retryPeriod") or default.retry_period_seconds,
        resource_lock=fields.string("resourceLock") or default.resource_lock,
        resource_name=fields.string("resourceName") or default.resource_name,
        resource_namespace=fields.string("resourceNamespace") or default.resource_namespace,
    )
    fields.finish()
    return result


def _client_connection(fields: Fields | None) -> ClientConnection:
    default = ClientConnection()
    if fields is None:
        return default
    result = ClientConnection(
        kubeconfig=fields.string("kubeconfig"),
        accept_content_types=fields.string("acceptContentTypes"),
        content_type=fields.string("contentType") or default.content_type,
        qps=fields.number("qps") or default.qps,
        burst=fields.integer("burst") or default.burst,
    )
    fields.finish()
    return result


def _extender(fields: Fields) -> Extender:
    tls_fields = fields.nested("tlsConfig")
    result = Extender(
        url_prefix=fields.string("urlPrefix"),
        filter_verb=fields.string("filterVerb"),
        preempt_verb=fields.string("preemptVerb"),
        prioritize_verb=fields.string("prioritizeVerb"),
        weight=fields.integer("weight", INT64) or 0,
        bind_verb=fields.string("bindVerb"),
        enable_https=fields.boolean("enableHTTPS"),
        tls_config=_tls_config(tls_fields) if tls_fields is not None else None,
        # Upstream's extender client turns a zero timeout into its 5s default.
        http_timeout_seconds=fields.duration("httpTimeout") or Extender().http_timeout_seconds,
        node_cache_capable=fields.boolean("nodeCacheCapable"),
        managed_resources=tuple(
            _managed_resource(Fields(item, path, fields.errors))
            for path, item in fields.items("managedResources")
        ),
        ignorable=fields.boolean("ignorable"),
    )
    fields.finish()
    return result


def _tls_config(fields: Fields) -> TLSConfig:
    result = TLSConfig(
        insecure=fields.boolean("insecure"),
        server_name=fields.string("serverName"),
        cert_file=fields.string("certFile"),
        key_file=fields.string("keyFile"),
        ca_file=fields.string("caFile"),
        cert_data=fields.data("certData"),
        key_data=fields.data("keyData"),
        ca_data=fields.data("caData"),
    )
    fields.finish()
    return result


def _managed_resource(fields: Fields) -> ExtenderManagedResource:
    result = ExtenderManagedResource(fields.string("name"), fields.boolean("ignoredByScheduler"))
    fields.finish()
    return result


def _or(value: bool | None, default: bool) -> bool:
    return default if value is None else value
