"""Plugin registry: plugin names → factories, in-tree and by import path.

A profile names plugins; the registry makes them. In-tree plugins are registered by
``kubesched.plugins.registry``. A user plugin is named in the configuration by its
import path, ``package.module:factory`` (a function or a class taking ``(args, handle)``),
and is loaded the first time a profile uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubesched.framework.handle import Handle
from kubesched.framework.interface import Plugin

PluginFactory = Callable[[Mapping[str, Any], Handle], Plugin]


class RegistryError(LookupError):
    """A plugin name that is neither registered nor importable."""


class Registry(Mapping[str, PluginFactory]):
    """Name → factory. Names with a colon are import paths, loaded on demand."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})

    def register(self, name: str, factory: PluginFactory) -> None:
        """Add a plugin; registering a name twice is a programming error."""
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} already exists")
        self._factories[name] = factory

    def merged(self, other: Mapping[str, PluginFactory]) -> Registry:
        """A new registry with ``other``'s plugins added (out-of-tree registries)."""
        out = Registry(self._factories)
        for name, factory in other.items():
            out.register(name, factory)
        return out

    def __getitem__(self, name: str) -> PluginFactory:
        factory = self._factories.get(name)
        if factory is not None:
            return factory
        if ":" in name:
            factory = _import_factory(name)
            self._factories[name] = factory
            return factory
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._factories:
            return True
        if ":" not in name:
            return False
        try:
            self[name]
        except RegistryError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)


def _import_factory(path: str) -> PluginFactory:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise RegistryError(f"cannot import plugin module {module_name!r}: {err}") from err
    try:
        factory = getattr(module, attr)
    except AttributeError:
        raise RegistryError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(factory):
        raise RegistryError(f"{path} is not a plugin factory (a callable)")
    return factory  # type: ignore[no-any-return]
