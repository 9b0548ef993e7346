"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): parse, default, validate.

``load_config(path)`` is the usual entry point: it returns a defaulted, validated
configuration or raises ``ConfigError`` listing every problem of the file, each with its
field path and a message worded as kube-scheduler words it.
"""

from kubesched.config.defaults import default_config, default_plugins, merge_plugins
from kubesched.config.errors import ConfigError, ErrorType, FieldError
from kubesched.config.load import load_config, loads_config
from kubesched.config.parse import parse_config
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
from kubesched.config.validation import validate_config

__all__ = [
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "EXTENSION_POINT_WIRE_NAMES",
    "KIND",
    "ClientConnection",
    "ConfigError",
    "ErrorType",
    "Extender",
    "ExtenderManagedResource",
    "FieldError",
    "KubeSchedulerConfiguration",
    "LeaderElection",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "Profile",
    "TLSConfig",
    "default_config",
    "default_plugins",
    "load_config",
    "loads_config",
    "merge_plugins",
    "parse_config",
    "validate_config",
]
