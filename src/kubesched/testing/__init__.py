"""Helpers for testing plugins: fluent builders of pods and nodes, and a one-call
way to run a profile against a small cluster. Users test their own plugins with them too.
"""

from kubesched.testing.handle import PluginHandle, RecordingClient
from kubesched.testing.wrappers import NodeWrapper, PodWrapper, make_node, make_pod

__all__ = [
    "NodeWrapper",
    "PluginHandle",
    "PodWrapper",
    "RecordingClient",
    "make_node",
    "make_pod",
]
