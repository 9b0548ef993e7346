"""kubesched: Kubernetes pod scheduling in Python.

The names below are the public surface for plugin authors and for scripts; each part
(``kubesched.framework``, ``kubesched.sim``, ...) documents the rest. They are loaded on
first use, so that ``import kubesched.objects`` (the API server does) stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Code": "kubesched.framework.interface",
    "CycleState": "kubesched.framework.cycle_state",
    "Framework": "kubesched.framework.runtime",
    "KubeSchedulerConfiguration": "kubesched.config",
    "Node": "kubesched.objects.node",
    "NodeInfo": "kubesched.framework.types",
    "NodeScore": "kubesched.framework.types",
    "Pod": "kubesched.objects.pod",
    "PreFilterResult": "kubesched.framework.interface",
    "Registry": "kubesched.framework.registry",
    "Snapshot": "kubesched.framework.snapshot",
    "Status": "kubesched.framework.interface",
    "default_config": "kubesched.config",
    "explain": "kubesched.sim.lab",
    "in_tree_registry": "kubesched.plugins.registry",
    "load_config": "kubesched.config",
    "simulate": "kubesched.sim.lab",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
