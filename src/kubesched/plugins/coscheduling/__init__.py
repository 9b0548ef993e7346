"""Coscheduling: gangs of pods named by scheduler-plugins' PodGroups (``plugin.py``)."""

from kubesched.plugins.coscheduling.plugin import NAME, Coscheduling, CoschedulingArgs, new

__all__ = ["NAME", "Coscheduling", "CoschedulingArgs", "new"]
