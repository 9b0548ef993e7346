"""controllers: the rest of a small cluster, as clients of an API server (ARCHITECTURE.md,
part ``controllers``), the way kube-controller-manager and KWOK are.

:class:`ControllerManager` runs named controllers (:data:`registry.CONTROLLERS
<kubesched.controllers.registry.CONTROLLERS>`) against any API server, sharing one
informer per resource; ``kubelet`` is the simulated kubelet of simulated nodes,
``disruption`` the PodDisruptionBudget status controller, ``garbagecollector`` the
garbage collector. They reach the server only
through :mod:`kubesched.kube` and import nothing of ours but ``kube`` and ``objects``.
"""

from kubesched.controllers.manager import (
    DEFAULT_BURST,
    DEFAULT_QPS,
    Controller,
    ControllerContext,
    ControllerDescriptor,
    ControllerManager,
)
from kubesched.controllers.options import ControllerOptions
from kubesched.controllers.registry import CONTROLLERS

__all__ = [
    "CONTROLLERS",
    "DEFAULT_BURST",
    "DEFAULT_QPS",
    "Controller",
    "ControllerContext",
    "ControllerDescriptor",
    "ControllerManager",
    "ControllerOptions",
]
