"""The assume cache: PersistentVolumes and claims as the informers see them, overlaid
with the changes VolumeBinding has assumed but not yet written (upstream's
``assume_cache.go`` and ``scheduler/util/assumecache``).

Reserve assumes a volume bound to a claim, or a claim's ``selected-node``, so that the
next pods' scheduling cycles see them taken before PreBind has written anything; a
failure later restores the informer's object. An assumed object keeps the
resourceVersion of the object it was made from: once the informer holds a newer version
(the write landed, or someone else changed the object), that version wins and the
assumption is dropped, as upstream's informer handler replaces it.

Instead of a store of its own fed by informer handlers, the cache reads the informer
stores through the framework's ``ClusterLister`` and keeps only the assumptions, so it
costs nothing until a pod with unbound claims is scheduled. Scheduling cycles and PreBind
threads use it concurrently: a lock guards the assumptions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from kubesched.framework.handle import ClusterLister
from kubesched.objects.storage import PersistentVolume, PersistentVolumeClaim

__all__ = ["AssumeCache", "AssumeError", "PVAssumeCache", "PVCAssumeCache"]


class _Versioned(Protocol):
    @property
    def resource_version(self) -> str: ...


T = TypeVar("T", bound=_Versioned)


class AssumeError(Exception):
    """An object cannot be assumed: it is gone, or the copy is older than the cache's."""


def _version(obj: _Versioned) -> int:
    # The API server's resourceVersions are integers here, as etcd's revisions are
    # upstream (its versioner parses them the same way); an unset one sorts first.
    try:
        return int(obj.resource_version or 0)
    except ValueError:
        return 0


class AssumeCache(Generic[T]):
    """Objects by key: the informer's (``get_api``) and, while an assumption stands,
    the assumed one (``get``).

    **lookup**: the informer's object for a key, or None; **listing**: all of them;
    **key**: an object's key; **kind**: for messages.
    """

    def __init__(
        self,
        kind: str,
        lookup: Callable[[str], T | None],
        listing: Callable[[], Sequence[T]],
        key: Callable[[T], str],
    ) -> None:
        self.kind = kind
        self._lookup = lookup
        self._listing = listing
        self._key = key
        self._assumed: dict[str, T] = {}
        self._lock = threading.Lock()

    def _current(self, key: str, api: T | None) -> T | None:
        """The assumed object while it is not older than ``api``; else ``api`` (and the
        stale assumption is forgotten). Call with the lock held."""
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or _version(api) > _version(assumed):
            del self._assumed[key]
            return api
        return assumed

    def get(self, key: str) -> T | None:
        """The latest object: the assumed one, or the informer's."""
        api = self._lookup(key)
        with self._lock:
            return self._current(key, api)

    def get_api(self, key: str) -> T | None:
        """The informer's object, ignoring assumptions."""
        return self._lookup(key)

    def list(self, keep: Callable[[T], bool] | None = None) -> list[T]:
        """Every latest object (those ``keep`` accepts)."""
        objects = self._listing()
        with self._lock:
            if not self._assumed:
                latest = list(objects)
            else:
                latest = []
                for obj in objects:
                    current = self._current(self._key(obj), obj)
                    if current is not None:
                        latest.append(current)
        return latest if keep is None else [o for o in latest if keep(o)]

    def assume(self, obj: T) -> None:
        """Take ``obj`` as the object of its key until the informer has a newer one.
        AssumeError if the object is unknown or ``obj`` is older than the latest."""
        key = self._key(obj)
        api = self._lookup(key)
        with self._lock:
            current = self._current(key, api)
            if current is None:
                raise AssumeError(f'{self.kind} "{key}" not found')
            if _version(obj) < _version(current):
                raise AssumeError(
                    f'{self.kind} "{key}" is out of sync (stored: {_version(current)}, '
                    f"assume: {_version(obj)})"
                )
            self._assumed[key] = obj

    def restore(self, key: str) -> None:
        """Drop the assumption for ``key`` (nothing if there is none)."""
        with self._lock:
            self._assumed.pop(key, None)

    def assumed_count(self) -> int:
        with self._lock:
            return len(self._assumed)


class PVAssumeCache(AssumeCache[PersistentVolume]):
    """PersistentVolumes by name."""

    def __init__(self, cluster: ClusterLister) -> None:
        super().__init__(
            "PersistentVolume",
            cluster.persistent_volume,
            cluster.persistent_volumes,
            lambda pv: pv.name,
        )

    def list_pvs(self, storage_class_name: str) -> list[PersistentVolume]:
        """The latest PVs of ``storage_class_name``."""
        return self.list(lambda pv: pv.storage_class_name == storage_class_name)


class PVCAssumeCache(AssumeCache[PersistentVolumeClaim]):
    """PersistentVolumeClaims by ``namespace/name``."""

    def __init__(self, cluster: ClusterLister) -> None:
        super().__init__(
            "PersistentVolumeClaim",
            lambda key: cluster.persistent_volume_claim(*key.split("/", 1)),
            cluster.persistent_volume_claims,
            lambda pvc: pvc.key,
        )
