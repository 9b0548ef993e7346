"""Validation of a defaulted configuration, after kube-scheduler's ``validation.go``.

Paths and messages are upstream's (``ValidateKubeSchedulerConfiguration`` and component-base's
leader election and client connection checks) so that errors read the same. Plugin
arguments are not looked at here: each plugin validates its own later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.config.decode import child, index
from kubesched.config.errors import FieldError
from kubesched.config.gofmt import format_duration, go_quote
from kubesched.config.names import is_extended_resource_name, qualified_name_errors
from kubesched.config.types import (
    API_VERSION,
    EXTENSION_POINT_WIRE_NAMES,
    EXTENSION_POINTS,
    ClientConnection,
    Extender,
    KubeSchedulerConfiguration,
    LeaderElection,
    Plugins,
    PluginSet,
    Profile,
)

__all__ = ["validate", "validate_config"]

# Plugins upstream removed from v1 (the in-tree volume limit plugins).
_REMOVED_PLUGINS = frozenset({"AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"})
_REMOVED_DETAIL = (
    f"was invalid in version {go_quote(API_VERSION)} "
    f"(KubeSchedulerConfiguration is version {go_quote(API_VERSION)})"
)
_MAX_NODE_SCORE = 100
_MAX_TOTAL_SCORE = 2**63 - 1
_JITTER_FACTOR = 1.2  # client-go leaderelection.JitterFactor


def validate_config(config: KubeSchedulerConfiguration) -> list[FieldError]:
    """Every problem of ``config`` (already defaulted), in upstream's order."""
    return validate(config, [profile.plugins for profile in config.profiles])


def validate(
    config: KubeSchedulerConfiguration, written_plugins: Sequence[Plugins]
) -> list[FieldError]:
    """Like ``validate_config``, checking plugin entries in ``written_plugins``.

    ``written_plugins[i]`` holds profile ``i``'s plugins as the file wrote them, before
    the defaults were merged in, so that reported indexes point into the file.
    """
    errors = _client_connection(config.client_connection)
    errors += _leader_election(config.leader_election)
    if config.parallelism <= 0:
        detail = "should be an integer value greater than zero"
        errors.append(FieldError.invalid("parallelism", config.parallelism, detail))
    if not config.profiles:
        errors.append(FieldError.required("profiles"))
    else:
        first_seen: dict[str, int] = {}
        for i, profile in enumerate(config.profiles):
            path = index("profiles", i)
            written = written_plugins[i] if i < len(written_plugins) else profile.plugins
            errors += _profile(path, profile, written)
            if profile.scheduler_name in first_seen:
                # Upstream's bad value is the path of the first such profile; the repeated
                # name is what a reader looks for.
                name_path = child(path, "schedulerName")
                errors.append(FieldError.duplicate(name_path, profile.scheduler_name))
            first_seen.setdefault(profile.scheduler_name, i)
        errors += _common_queue_sort(config.profiles)
    errors += _percentage("percentageOfNodesToScore", config.percentage_of_nodes_to_score)
    initial, maximum = config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds
    if initial <= 0:
        errors.append(
            FieldError.invalid("podInitialBackoffSeconds", initial, "must be greater than 0")
        )
    if maximum < initial:
        detail = "must be greater than or equal to PodInitialBackoffSeconds"
        errors.append(FieldError.invalid("podMaxBackoffSeconds", maximum, detail))
    errors += _extenders(config.extenders)
    return errors


def _client_connection(connection: ClientConnection) -> list[FieldError]:
    if connection.burst < 0:
        return [
            FieldError.invalid("clientConnection.burst", connection.burst, "must be non-negative")
        ]
    return []


def _leader_election(election: LeaderElection) -> list[FieldError]:
    if not election.leader_elect:
        return []
    errors = []
    lease, renew, retry = (
        election.lease_duration_seconds,
        election.renew_deadline_seconds,
        election.retry_period_seconds,
    )
    for key, seconds in (
        ("leaseDuration", lease),
        ("renewDeadline", renew),
        ("retryPeriod", retry),
    ):
        if seconds <= 0:
            path = child("leaderElection", key)
            errors.append(
                FieldError.invalid(path, format_duration(seconds), "must be greater than zero")
            )
    if lease <= renew:
        # Upstream shows renewDeadline's value here; the field's own value is less puzzling.
        errors.append(
            FieldError.invalid(
                "leaderElection.leaseDuration",
                format_duration(lease),
                "must be greater than `RenewDeadline`",
            )
        )
    # client-go refuses to start an elector unless renewDeadline > JitterFactor*retryPeriod;
    # reporting it here turns a start-up failure into a configuration error.
    jittered_nanos = int(_JITTER_FACTOR * round(retry * 1e9))
    if renew > 0 and retry > 0 and round(renew * 1e9) <= jittered_nanos:
        detail = (
            "must be greater than retryPeriod*JitterFactor "
            f"({format_duration(jittered_nanos / 1e9)})"
        )
        errors.append(
            FieldError.invalid("leaderElection.renewDeadline", format_duration(renew), detail)
        )
    required = (
        ("resourceLock", election.resource_lock),
        ("resourceNamespace", election.resource_namespace),
        ("resourceName", election.resource_name),
    )
    errors += [FieldError.required(child("leaderElection", k)) for k, v in required if not v]
    if election.resource_lock != "leases":
        detail = 'resourceLock value must be "leases"'
        path = "leaderElection.resourceLock"
        errors.append(FieldError.invalid(path, election.resource_lock, detail))
    return errors


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [FieldError.invalid(path, value, "not in valid range [0-100]")]
    return []


def _profile(path: str, profile: Profile, written: Plugins) -> list[FieldError]:
    errors = []
    if not profile.scheduler_name:
        errors.append(FieldError.required(child(path, "schedulerName")))
    percentage_path = child(path, "percentageOfNodesToScore")
    errors += _percentage(percentage_path, profile.percentage_of_nodes_to_score)
    for point in EXTENSION_POINTS:
        point_path = child(child(path, "plugins"), EXTENSION_POINT_WIRE_NAMES[point])
        errors += _plugin_set(point_path, written.point(point))
    errors += _score_overflow(child(path, "plugins"), profile.plugins)
    seen: set[str] = set()
    for j, plugin_config in enumerate(profile.plugin_config):
        config_path = index(child(path, "pluginConfig"), j)
        name = plugin_config.name
        if not name:
            errors.append(FieldError.required(child(config_path, "name")))
        if name in seen:
            errors.append(FieldError.duplicate(config_path, name))
        seen.add(name)
        if name in _REMOVED_PLUGINS:
            errors.append(FieldError.invalid(config_path, name, _REMOVED_DETAIL))
    return errors


def _plugin_set(path: str, plugin_set: PluginSet) -> list[FieldError]:
    errors = []
    for j, plugin in enumerate(plugin_set.enabled):
        plugin_path = index(child(path, "enabled"), j)
        if not plugin.name:
            errors.append(FieldError.required(child(plugin_path, "name")))
        elif plugin.name in _REMOVED_PLUGINS:
            errors.append(FieldError.invalid(plugin_path, plugin.name, _REMOVED_DETAIL))
        if plugin.weight is not None and plugin.weight < 0:
            # Upstream lets a negative weight through and so inverts the plugin's scores.
            detail = "must be greater than or equal to 0"
            errors.append(FieldError.invalid(child(plugin_path, "weight"), plugin.weight, detail))
    for j, plugin in enumerate(plugin_set.disabled):
        if not plugin.name:
            errors.append(FieldError.required(child(index(child(path, "disabled"), j), "name")))
    return errors


def _score_overflow(path: str, plugins: Plugins) -> list[FieldError]:
    # Upstream's framework refuses weights whose total could overflow an int64 score. An
    # explicit score entry takes precedence over the multiPoint one of the same name. With
    # int32 weights from a file this cannot happen; a configuration built in code can.
    weights: dict[str, int] = {}
    for plugin in (*plugins.score.enabled, *plugins.multi_point.enabled):
        weights.setdefault(plugin.name, plugin.score_weight)
    total = sum(weights.values()) * _MAX_NODE_SCORE
    if total > _MAX_TOTAL_SCORE:
        detail = "total score of Score plugins could overflow"
        return [FieldError.invalid(child(path, "score"), sum(weights.values()), detail)]
    return []


def _wire_plugin_set(plugin_set: PluginSet) -> dict[str, Any]:
    """The set as the file would write it, to show in a message."""
    wire: dict[str, Any] = {}
    for key, plugins in (("enabled", plugin_set.enabled), ("disabled", plugin_set.disabled)):
        if plugins:
            wire[key] = [
                {"name": p.name} | ({"weight": p.weight} if p.weight is not None else {})
                for p in plugins
            ]
    return wire


def _common_queue_sort(profiles: Sequence[Profile]) -> list[FieldError]:
    errors = []
    canon = profiles[0].plugins.queue_sort
    if len(canon.enabled) > 1:
        # Upstream's path says "Enabled"; the file's field is "enabled".
        path = "profiles[0].plugins.queueSort.enabled"
        detail = "only one queue sort plugin can be enabled"
        errors.append(FieldError.invalid(path, len(canon.enabled), detail))
    name = canon.enabled[0].name if canon.enabled else ""
    first_config = profiles[0].plugin_args(name) if name else None
    canon_args: Mapping[str, Any] = first_config.args if first_config else {}
    for i, profile in enumerate(profiles[1:], start=1):
        path = index("profiles", i)
        current = profile.plugins.queue_sort
        if current != canon:
            detail = "queueSort must be the same for all profiles"
            value = _wire_plugin_set(current)
            errors.append(FieldError.invalid(child(path, "plugins.queueSort"), value, detail))
        for j, plugin_config in enumerate(profile.plugin_config):
            if name and plugin_config.name == name and dict(plugin_config.args) != dict(canon_args):
                # Upstream's path lacks the index ("pluginConfig.args"); it helps to have it.
                args_path = child(index(child(path, "pluginConfig"), j), "args")
                detail = "queueSort must be the same for all profiles"
                errors.append(FieldError.invalid(args_path, dict(plugin_config.args), detail))
    return errors


def _extenders(extenders: Sequence[Extender]) -> list[FieldError]:
    errors = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = index("extenders", i)
        if extender.prioritize_verb and extender.weight <= 0:
            detail = "must have a positive weight applied to it"
            errors.append(FieldError.invalid(child(path, "weight"), extender.weight, detail))
        if extender.bind_verb:
            binders += 1
        if extender.http_timeout_seconds < 0:
            timeout = format_duration(extender.http_timeout_seconds)
            detail = "must be greater than or equal to 0"
            errors.append(FieldError.invalid(child(path, "httpTimeout"), timeout, detail))
        for j, resource in enumerate(extender.managed_resources):
            name_path = child(index(child(path, "managedResources"), j), "name")
            messages = qualified_name_errors(resource.name)
            errors += [FieldError.invalid(name_path, resource.name, m) for m in messages]
            if not messages and not is_extended_resource_name(resource.name):
                detail = "is an invalid extended resource name"
                errors.append(FieldError.invalid(name_path, resource.name, detail))
            if resource.name in managed:
                detail = "duplicate extender managed resource name"
                errors.append(FieldError.invalid(name_path, resource.name, detail))
            managed.add(resource.name)
    if binders > 1:
        value = f"found {binders} extenders implementing bind"
        errors.append(
            FieldError.invalid("extenders", value, "only one extender can implement bind")
        )
    return errors
