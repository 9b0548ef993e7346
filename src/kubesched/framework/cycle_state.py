"""Per-attempt scratch space shared by a profile's plugins.

PreFilter writes what Filter reads, PreScore what Score reads. Preemption clones it to
try removing pods without touching the real attempt's state, so values stored here must
offer ``clone()`` when plugins mutate them in AddPod/RemovePod.
"""

from __future__ import annotations

from typing import Any, Protocol


class StateData(Protocol):
    """A value kept in CycleState."""

    def clone(self) -> StateData: ...


class CycleState:
    """Key → data for one scheduling attempt, with the set of plugins that skipped."""

    __slots__ = (
        "_data",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        #: PreBind plugins whose PreBindPreFlight said Skip for this pod.
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        """The data under ``key``; raises KeyError when a plugin's PreFilter did not run."""
        return self._data[key]

    def get(self, key: str) -> Any | None:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy whose values are cloned when they can be (see module docstring)."""
        out = CycleState()
        out._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        out.skip_filter_plugins = self.skip_filter_plugins
        out.skip_score_plugins = self.skip_score_plugins
        out.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        out.record_plugin_metrics = self.record_plugin_metrics
        return out
