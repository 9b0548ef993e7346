"""The garbage collector: background, foreground and orphan deletion by
``ownerReferences`` (``pkg/controller/garbagecollector`` upstream)."""

from kubesched.controllers.garbagecollector.garbagecollector import GarbageCollector

__all__ = ["GarbageCollector"]
