"""kube: the single door to a Kubernetes API server.

Connection settings (:func:`load_config`), an asyncio REST client (:class:`Client`),
list+watch :class:`Informer` s, and one error hierarchy (:mod:`kubesched.kube.errors`).
It imports nothing of ours but :mod:`kubesched.objects`.
"""

from kubesched.kube import errors
from kubesched.kube.client import Client, ObjectList, PatchType
from kubesched.kube.config import (
    ConnectionConfig,
    ExecConfig,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from kubesched.kube.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    ConfigError,
    Conflict,
    ConnectionFailed,
    CredentialError,
    Forbidden,
    Gone,
    Invalid,
    KubeError,
    NotFound,
    ProtocolError,
    ServerError,
    Timeout,
    TooManyRequests,
    TransportError,
    Unauthorized,
)
from kubesched.kube.informer import Handler, Informer
from kubesched.kube.resources import Resource

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "ConfigError",
    "Conflict",
    "ConnectionConfig",
    "ConnectionFailed",
    "CredentialError",
    "ExecConfig",
    "Forbidden",
    "Gone",
    "Handler",
    "Informer",
    "Invalid",
    "KubeError",
    "NotFound",
    "ObjectList",
    "PatchType",
    "ProtocolError",
    "Resource",
    "ServerError",
    "Timeout",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "errors",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
]
