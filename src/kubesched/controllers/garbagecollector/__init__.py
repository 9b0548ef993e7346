"""The garbage collector: background, foreground and orphan deletion by
``ownerReferences`` (``pkg/controller/garbagecollector`` upstream)."""

from kubesched.controllers.garbagecollector.garbagecollector import (
    NAME,
    GarbageCollector,
    start_garbage_collector,
)

__all__ = ["NAME", "GarbageCollector", "start_garbage_collector"]
