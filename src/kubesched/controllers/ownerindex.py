"""An index of one informer's objects by their controller, as controllers look them up.

Upstream lists a namespace's pods and filters them on every sync ("TODO: Do the List and
Filter in a single pass, or use an index", ``replica_set.go``); the Job controller uses a
controller-UID indexer. :class:`OwnerIndex` keeps, from the informer's events, each
object under its controller's UID, and the objects without a controller under their
namespace (the orphans a controller may adopt), so that a sync reads only the objects
it could claim.
"""

from __future__ import annotations

import weakref
from typing import Any

from kubesched.kube import Informer
from kubesched.kube.resources import RawObject
from kubesched.objects.podtemplate import controller_of

__all__ = ["OwnerIndex", "object_key", "shared_index"]


def object_key(obj: RawObject) -> str:
    """``namespace/name`` (``cache.MetaNamespaceKeyFunc``)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


def _owner_uid(obj: RawObject) -> str:
    ref = controller_of(obj)
    return str(ref.get("uid") or "") if ref is not None else ""


_SHARED: weakref.WeakKeyDictionary[Informer[Any], OwnerIndex] = weakref.WeakKeyDictionary()


def shared_index(informer: Informer[Any]) -> OwnerIndex:
    """The one :class:`OwnerIndex` of a shared ``informer`` (made and attached on first
    request): controllers that follow the same pods share one index, as they share the
    informer."""
    index = _SHARED.get(informer)
    if index is None:
        index = _SHARED[informer] = OwnerIndex()
        index.attach(informer)
    return index


class OwnerIndex:
    """Objects of an informer of plain dicts, by controller UID and orphans by namespace.

    Attach it before the informer starts (:meth:`attach`); its handlers run before the
    controller's, so that a controller's handler already sees the change.
    """

    def __init__(self) -> None:
        self._owned: dict[str, dict[str, RawObject]] = {}
        self._orphans: dict[str, dict[str, RawObject]] = {}
        self._where: dict[str, tuple[str, str]] = {}

    def attach(self, informer: Informer[Any]) -> None:
        """Follow ``informer`` (whose objects are plain dicts)."""
        informer.add_handler(self.upsert, lambda _old, new: self.upsert(new), self.remove)

    def _bucket(self, owner: str, namespace: str) -> dict[str, RawObject]:
        if owner:
            return self._owned.setdefault(owner, {})
        return self._orphans.setdefault(namespace, {})

    def upsert(self, obj: RawObject) -> None:
        """Index ``obj`` (or move it, if its controller changed)."""
        key = object_key(obj)
        owner = _owner_uid(obj)
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        where = self._where.get(key)
        if where is not None and where != (owner, namespace):
            self._drop(key, where)
        self._where[key] = (owner, namespace)
        self._bucket(owner, namespace)[key] = obj

    def remove(self, obj: RawObject) -> None:
        """Forget ``obj``."""
        key = object_key(obj)
        where = self._where.pop(key, None)
        if where is not None:
            self._drop(key, where)

    def _drop(self, key: str, where: tuple[str, str]) -> None:
        owner, namespace = where
        table = self._owned if owner else self._orphans
        bucket = table.get(owner or namespace)
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del table[owner or namespace]

    def owned_by(self, uid: str) -> list[RawObject]:
        """The objects whose controller reference has ``uid``."""
        return list(self._owned.get(uid, {}).values()) if uid else []

    def orphans(self, namespace: str) -> list[RawObject]:
        """The objects of ``namespace`` without a controller."""
        return list(self._orphans.get(namespace, {}).values())
