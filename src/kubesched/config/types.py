"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as frozen dataclasses.

Attribute names are the snake_case of the wire names; durations are float seconds. The
values here are already defaulted: ``parse_config`` never hands out a half-filled object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "EXTENSION_POINT_WIRE_NAMES",
    "KIND",
    "ClientConnection",
    "Extender",
    "ExtenderManagedResource",
    "KubeSchedulerConfiguration",
    "LeaderElection",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "TLSConfig",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"


@dataclass(frozen=True)
class PluginRef:
    """A plugin named at an extension point; ``weight`` only matters for Score plugins.

    ``None`` means no weight was given. The framework treats ``None`` and ``0`` as 1.
    """

    name: str
    weight: int | None = None

    @property
    def score_weight(self) -> int:
        """The weight a Score plugin runs with: upstream turns an unset or zero weight into 1."""
        return self.weight or 1


@dataclass(frozen=True)
class PluginSet:
    """Plugins enabled and disabled at one extension point (``"*"`` disables every default)."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[PluginRef, ...] = ()


# In the order of the v1 Go struct, which is also the order errors are reported in.
EXTENSION_POINTS: tuple[str, ...] = (
    "pre_enqueue",
    "queue_sort",
    "pre_filter",
    "filter",
    "post_filter",
    "pre_score",
    "score",
    "reserve",
    "permit",
    "pre_bind",
    "bind",
    "post_bind",
    "multi_point",
)
EXTENSION_POINT_WIRE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "pre_enqueue": "preEnqueue",
        "queue_sort": "queueSort",
        "pre_filter": "preFilter",
        "filter": "filter",
        "post_filter": "postFilter",
        "pre_score": "preScore",
        "score": "score",
        "reserve": "reserve",
        "permit": "permit",
        "pre_bind": "preBind",
        "bind": "bind",
        "post_bind": "postBind",
        "multi_point": "multiPoint",
    }
)


@dataclass(frozen=True)
class Plugins:
    """One ``PluginSet`` per extension point."""

    # Also reachable from the class, for code that only imports Plugins.
    EXTENSION_POINTS: ClassVar[tuple[str, ...]] = EXTENSION_POINTS
    WIRE_NAMES: ClassVar[Mapping[str, str]] = EXTENSION_POINT_WIRE_NAMES

    pre_enqueue: PluginSet = PluginSet()
    queue_sort: PluginSet = PluginSet()
    pre_filter: PluginSet = PluginSet()
    filter: PluginSet = PluginSet()
    post_filter: PluginSet = PluginSet()
    pre_score: PluginSet = PluginSet()
    score: PluginSet = PluginSet()
    reserve: PluginSet = PluginSet()
    permit: PluginSet = PluginSet()
    pre_bind: PluginSet = PluginSet()
    bind: PluginSet = PluginSet()
    post_bind: PluginSet = PluginSet()
    multi_point: PluginSet = PluginSet()

    def point(self, name: str) -> PluginSet:
        """The set of the extension point ``name`` (an entry of ``EXTENSION_POINTS``)."""
        if name not in EXTENSION_POINTS:
            raise KeyError(name)
        result: PluginSet = getattr(self, name)
        return result


def _no_args() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class PluginConfig:
    """Arguments for one plugin, still undecoded: each plugin decodes and validates its own.

    ``path`` is where the arguments are in the file (``profiles[1].pluginConfig[0].args``), so
    a plugin can report ``profiles[1].pluginConfig[0].args.defaultConstraints[0].maxSkew``.
    ``apiVersion`` and ``kind`` have been checked and removed from ``args``.
    """

    name: str
    # Args are a mapping, which cannot be hashed; they still take part in equality.
    args: Mapping[str, Any] = field(default_factory=_no_args, hash=False)
    path: str = ""


@dataclass(frozen=True)
class Profile:
    """A scheduling profile: the plugins used for pods naming ``scheduler_name``."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    # None: use the configuration-wide value.
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = Plugins()
    plugin_config: tuple[PluginConfig, ...] = ()
    path: str = ""

    def plugin_args(self, name: str) -> PluginConfig | None:
        """The ``pluginConfig`` entry of plugin ``name``, if the profile has one."""
        return next((pc for pc in self.plugin_config if pc.name == name), None)


@dataclass(frozen=True)
class TLSConfig:
    """TLS settings for talking to an extender; the ``*_data`` fields are PEM bytes."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = field(default=b"", repr=False)  # a private key: keep it out of logs
    ca_data: bytes = b""


@dataclass(frozen=True)
class ExtenderManagedResource:
    """An extended resource handled by an extender."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class Extender:
    """An HTTP scheduler extender. An empty verb means the extender skips that call."""

    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: TLSConfig | None = None
    http_timeout_seconds: float = 5.0
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = ()
    ignorable: bool = False


@dataclass(frozen=True)
class LeaderElection:
    """Leader election settings (component-base ``LeaderElectionConfiguration``)."""

    leader_elect: bool = True
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    resource_lock: str = "leases"
    # Deliberately not upstream's "kube-scheduler": kubesched must never contend for the
    # lock of a kube-scheduler running in the same cluster.
    resource_name: str = "kubesched"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True)
class ClientConnection:
    """API server client settings (component-base ``ClientConnectionConfiguration``)."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


@dataclass(frozen=True)
class KubeSchedulerConfiguration:
    """A whole, defaulted scheduler configuration; ``source`` is the file it came from."""

    parallelism: int = 16
    leader_election: LeaderElection = LeaderElection()
    client_connection: ClientConnection = ClientConnection()
    # None: adaptive, as upstream's 0 (5% to 50% of the nodes, depending on cluster size).
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: tuple[Profile, ...] = ()
    extenders: tuple[Extender, ...] = ()
    delay_cache_until_active: bool = False
    source: str = ""

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile for pods naming ``scheduler_name``, if there is one."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)
