"""The in-memory object store behind the embedded API server.

It plays etcd plus kube-apiserver's generic registry: objects are kept per resource
(group, version, plural), keyed by namespace and name; every write takes the next value of
one global resourceVersion sequence; updates are optimistic (a stale
``metadata.resourceVersion`` is refused with 409 Conflict); status is a subresource kept
apart from the rest; and every change goes to the resource's bounded :class:`EventLog`,
from which watches resume. Deletion is immediate, or graceful (:meth:`Store.delete_gracefully`:
``deletionTimestamp`` set, the object kept until its grace is over and its finalizers are
gone, then removed by :meth:`Store.reap` or by the update that drops the last finalizer).
Errors are :class:`~kubesched.apiserver.errors.ApiError` with
kube-apiserver's Status bodies. With a :class:`~kubesched.apiserver.persist.SqliteStorage`
every change is committed to its file under the lock, before memory changes, and the store
starts from what the file holds (objects, resourceVersion, watch windows).

The store is thread-safe (one lock). It takes ownership of the dicts it is given, and the
objects it returns are shared with it: copy one (:func:`copy_object`) before changing it.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.persist import SqliteStorage, StorageError
from kubesched.apiserver.resources import BUILTIN, Resource
from kubesched.apiserver.selectors import (
    matcher,
    parse_field_selector,
    parse_label_selector,
)
from kubesched.apiserver.watch import Change, EventLog, Object, Watcher, WatchEvent

#: Past events kept per resource for watches to resume from (upstream's watch cache
#: starts at 100 and grows to thousands under load).
DEFAULT_WINDOW = 4096

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # upstream's utilrand alphabet
_EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)
#: A continue token's version meaning "the latest" (upstream uses -1, not 0, so that a
#: token with no version stays an error).
_LATEST = -1
#: etcd3 storage's answer for a list at a revision it has compacted.
_EXPIRED_LIST = "The resourceVersion for the provided list is too old."


def copy_object(obj: Any) -> Any:
    """A deep copy of a JSON value (faster than :func:`copy.deepcopy` for JSON)."""
    if isinstance(obj, dict):
        return {k: copy_object(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [copy_object(v) for v in obj]
    return obj


def now_rfc3339() -> str:
    """The current time as Kubernetes writes timestamps (``2024-01-02T03:04:05Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp as written by :func:`now_rfc3339` (or with fractions)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def format_time(moment: datetime) -> str:
    """A datetime as Kubernetes writes timestamps (seconds, ``Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _deletion_due(meta: dict[str, Any], now: datetime) -> bool:
    stamp = meta.get("deletionTimestamp")
    if not stamp or meta.get("finalizers"):
        return False
    try:
        return parse_time(str(stamp)) <= now
    except ValueError:
        return True


@dataclass(frozen=True)
class ListResult:
    """One page of a list: items, the list's resourceVersion and the continue token."""

    items: list[Object]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


def _metadata(obj: Object) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


#: Metadata the server owns: an update may not change it (see ``Store._replace``).
_SYSTEM_FIELDS = (
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def _keep(meta: dict[str, Any], old_meta: dict[str, Any], keys: tuple[str, ...]) -> None:
    # The stored value of each key, or none if the stored object has none.
    for key in keys:
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)


class Store:
    """Objects of every served resource, with one resourceVersion sequence and watches."""

    def __init__(
        self,
        resources: tuple[Resource, ...] = BUILTIN,
        window: int = DEFAULT_WINDOW,
        clock: Callable[[], str] = now_rfc3339,
        storage: SqliteStorage | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self._resources = {r.key: r for r in resources}
        self._objects: dict[tuple[str, str, str], dict[tuple[str, str], Object]] = {
            r.key: {} for r in resources
        }
        self._logs = {r.key: EventLog(window) for r in resources}
        self._watchers: dict[tuple[str, str, str], list[Watcher]] = {r.key: [] for r in resources}
        self._logs_capacity = window
        self._rv = 0
        self._clock = clock
        # Objects with a deletionTimestamp: all that reap() has to look at.
        self._deleting: set[tuple[tuple[str, str, str], str, str]] = set()
        # A watcher further behind than the window could not resume anyway.
        self._max_pending = max(window, 1024)
        self._storage = storage
        if storage is not None:
            self._load(storage)

    def _load(self, storage: SqliteStorage) -> None:
        snap = storage.load(self._resources)
        self._rv = snap.resource_version
        for key, objects in snap.objects.items():
            self._objects[key] = objects
            for ns, name in objects:
                if objects[(ns, name)]["metadata"].get("deletionTimestamp"):
                    self._deleting.add((key, ns, name))
        for key, log in self._logs.items():
            log.floor = snap.floors.get(key, 0)
            for change in snap.changes.get(key, ()):
                log.append(change)

    @property
    def storage(self) -> SqliteStorage | None:
        """The data file this store writes through to, if any."""
        return self._storage

    def close(self) -> None:
        """Close the data file, if any (the store must not be written afterwards)."""
        if self._storage is not None:
            with self._lock:
                self._storage.close()

    # -- lookup -------------------------------------------------------------------------

    @property
    def resources(self) -> tuple[Resource, ...]:
        """The resources this store holds."""
        return tuple(self._resources.values())

    @property
    def resource_version(self) -> int:
        """The newest resourceVersion handed out."""
        return self._rv

    def resource(self, group: str, version: str, plural: str) -> Resource | None:
        """The resource served at group/version/plural, or None."""
        return self._resources.get((group, version, plural))

    def _collection(self, res: Resource) -> dict[tuple[str, str], Object]:
        # A custom resource whose CRD went after the request was routed: 404, as upstream.
        objects = self._objects.get(res.key)
        if objects is None:
            raise errors.not_found_path()
        return objects

    def register(self, res: Resource) -> None:
        """Serve ``res`` from now on (a custom resource); a resource already served under
        its key is replaced (its schema or columns changed) and keeps its objects."""
        with self._lock:
            key = res.key
            self._resources[key] = res
            if key not in self._objects:
                self._objects[key] = {}
                self._logs[key] = EventLog(self._logs_capacity)
                self._watchers[key] = []

    def unregister(self, key: tuple[str, str, str]) -> None:
        """Stop serving the resource ``key``: its objects (delete them first to tell
        watchers and the data file), its event window and its watches, which end."""
        with self._lock:
            if self._resources.pop(key, None) is None:
                return
            self._objects.pop(key, None)
            self._logs.pop(key, None)
            for watcher in self._watchers.pop(key, []):
                watcher.end()
            self._deleting = {d for d in self._deleting if d[0] != key}
            if self._storage is not None:
                try:
                    self._storage.drop_resource(key)
                except StorageError as exc:
                    raise errors.internal_error(str(exc)) from None

    def _check_scope(self, res: Resource, namespace: str | None) -> str:
        if res.namespaced:
            if not namespace:
                raise errors.bad_request("the namespace of the object must be set")
            return namespace
        return ""

    # -- reads --------------------------------------------------------------------------

    def get(self, res: Resource, namespace: str | None, name: str) -> Object:
        """The stored object (shared: do not change it), or 404 NotFound."""
        ns = namespace or "" if res.namespaced else ""
        with self._lock:
            obj = self._collection(res).get((ns, name))
        if obj is None:
            raise errors.not_found(res.plural, name, res.group)
        return obj

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        at: int = 0,
    ) -> ListResult:
        """Objects in key order (namespace, name), filtered, paged by limit/continue.

        **at**: show the objects as they were at that resourceVersion (0: as they are now),
        and say so in the result. Pages after the first show the state of the first page's
        version, as etcd serves every page of a list at one revision. A version (of ``at``
        or of a continue token) older than the resource's event window is refused with
        410 Expired, as kube-apiserver does once etcd has compacted past it.
        """
        match = matcher(
            parse_label_selector(label_selector),
            parse_field_selector(field_selector, res.selectable_fields),
        )
        start: tuple[str, str] | None = None
        with self._lock:
            objects = self._collection(res)
            if continue_token:
                at, start = _decode_continue(continue_token)
                if at == _LATEST:
                    at = 0
                elif at < self._logs[res.key].floor:
                    # As etcd3 storage does on a compacted revision: the rest of the list
                    # can still be had at the latest version, inconsistently.
                    raise errors.expired(_EXPIRED_CONTINUE, _encode_continue(_LATEST, start))
            elif at and at < self._logs[res.key].floor:
                raise errors.expired(_EXPIRED_LIST)
            rv = at if 0 < at < self._rv else self._rv
            objects = self._objects_at(res, objects, rv)
            keys = sorted(objects)
            items: list[Object] = []
            token = ""
            remaining: int | None = None
            for i, key in enumerate(keys):
                if start is not None and key <= start:
                    continue
                if namespace and res.namespaced and key[0] != namespace:
                    continue
                obj = objects[key]
                if match is not None and not match(obj):
                    continue
                if limit and len(items) == limit:
                    token = _encode_continue(rv, _key_of(items[-1]))
                    if match is None and not namespace:
                        remaining = len(keys) - i
                    break
                items.append(obj)
        return ListResult(items, rv, token, remaining)

    def _objects_at(
        self, res: Resource, objects: dict[tuple[str, str], Object], version: int
    ) -> dict[tuple[str, str], Object]:
        """The ``objects`` of ``res`` as they were at ``version`` (>= the window's floor):
        the changes after it undone, newest first. Called under the lock."""
        if version >= self._rv:
            return objects
        changes = builtins.list(self._logs[res.key].since(-1))
        first_newer = next(
            (i for i, c in enumerate(changes) if c.resource_version > version), len(changes)
        )
        if first_newer == len(changes):
            return objects
        past = dict(objects)
        for i in range(len(changes) - 1, first_newer - 1, -1):
            change = changes[i]
            key = (change.namespace, change.object["metadata"]["name"])
            if change.type == "ADDED":
                past.pop(key, None)
            elif change.old is not None:
                past[key] = change.old
            else:
                past[key] = _before_deletion(changes, i, key)
        return past

    # -- writes -------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _commit(self, res: Resource, name: str, change: Change) -> None:
        """Apply ``change`` (its version just taken by :meth:`_next_rv`): to the data file
        first, then in memory, then to the event log and watchers. Called under the lock."""
        if self._storage is not None:
            try:
                self._storage.write(res.key, name, change)
            except StorageError as exc:
                self._rv -= 1  # nobody saw it: the next write takes it again
                raise errors.internal_error(str(exc)) from None
        objects = self._objects[res.key]
        if change.type == "DELETED":
            objects.pop((change.namespace, name), None)
        else:
            objects[(change.namespace, name)] = change.object
        self._record(res, change)

    def _record(self, res: Resource, change: Change) -> None:
        self._logs[res.key].append(change)
        for watcher in self._watchers[res.key]:
            watcher.offer(change)

    def create(
        self, res: Resource, obj: Object, namespace: str | None = None, uid: str = ""
    ) -> Object:
        """Store a new object and return it with uid, resourceVersion and timestamps set.

        ``uid``: the uid the object gets, when the caller needed it before storing (a
        Job's generated selector names it); otherwise a new one.

        ``metadata.generateName`` makes a unique name when ``metadata.name`` is empty.
        409 AlreadyExists if the name is taken; 422 Invalid if there is no name at all.
        """
        meta = _metadata(obj)
        with self._lock:
            ns = self._check_scope(res, namespace or meta.get("namespace"))
            if res.namespaced:
                if meta.get("namespace") not in (None, "", ns):
                    raise errors.bad_request(
                        "the namespace of the provided object does not match the namespace "
                        "sent on the request"
                    )
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            objects = self._collection(res)
            name = meta.get("name") or ""
            if not name:
                prefix = meta.get("generateName") or ""
                if not prefix:
                    raise errors.invalid(
                        res.kind,
                        "",
                        [
                            {
                                "reason": "FieldValueRequired",
                                "message": "Required value: name or generateName is required",
                                "field": "metadata.name",
                            }
                        ],
                        res.group,
                    )
                name = prefix + "".join(random.choices(_GENERATE_ALPHABET, k=5))
                meta["name"] = name
            if (ns, name) in objects:
                raise errors.already_exists(res.plural, name, res.group)
            rv = self._next_rv()
            meta["uid"] = uid or str(uuid.uuid4())
            meta["resourceVersion"] = str(rv)
            meta["creationTimestamp"] = self._clock()
            meta["generation"] = 1
            for system in ("deletionTimestamp", "deletionGracePeriodSeconds"):
                meta.pop(system, None)
            self._commit(res, name, Change(rv, "ADDED", ns, obj, None))
        return obj

    def update(
        self,
        res: Resource,
        obj: Object,
        namespace: str | None = None,
        subresource: str = "",
        check: Callable[[Object, Object], None] | None = None,
    ) -> Object:
        """Replace an object (PUT); ``subresource="status"`` replaces only its status.

        ``subresource="binding"`` (internal: pods/binding) may change spec and status.

        A non-empty ``metadata.resourceVersion`` must equal the stored one (else 409
        Conflict); an empty one updates unconditionally. For resources with a status
        subresource, a main-resource update keeps the stored status and a status update
        keeps everything but status and metadata labels/annotations. An update that
        changes nothing is not written and keeps the resourceVersion. ``check(new, old)``
        (validation) sees the object as it would be stored and may raise to refuse it.
        """
        meta = _metadata(obj)
        name = meta.get("name") or ""
        with self._lock:
            ns = self._check_scope(res, namespace or meta.get("namespace"))
            old = self._collection(res).get((ns, name))
            if old is None:
                raise errors.not_found(res.plural, name, res.group)
            # A uid in a PUT body is a precondition (409), as rest's UpdatedObjectInfo makes it.
            self._check_preconditions(res, old, meta.get("uid") or None, None)
            return self._replace(res, ns, old, obj, subresource, check)

    def _replace(
        self,
        res: Resource,
        ns: str,
        old: Object,
        obj: Object,
        subresource: str,
        check: Callable[[Object, Object], None] | None = None,
    ) -> Object:
        meta = _metadata(obj)
        old_meta = old["metadata"]
        name = old_meta["name"]
        wanted = meta.get("resourceVersion")
        if wanted and wanted != old_meta["resourceVersion"]:
            raise errors.stale_conflict(res.plural, name, res.group)
        if subresource == "status":
            new = {k: v for k, v in old.items() if k not in ("status", "metadata")}
            new_meta = dict(old_meta)
            for mutable in ("labels", "annotations"):
                if mutable in meta:
                    new_meta[mutable] = meta[mutable]
            new["metadata"] = new_meta
            if "status" in obj:
                new["status"] = obj["status"]
            obj, meta = new, new_meta
        elif res.has_status and subresource == "":
            obj.pop("status", None)
            if "status" in old:
                obj["status"] = old["status"]
        # rest.BeforeUpdate: generation and creationTimestamp are the server's, an empty uid
        # takes the stored one, a deletionTimestamp stays once set and so does the grace
        # period unless the update names one. What still differs, validation refuses
        # (metadata.uid: field is immutable, ...).
        _keep(meta, old_meta, ("creationTimestamp", "generation"))
        if not meta.get("uid"):
            _keep(meta, old_meta, ("uid",))
        if old_meta.get("deletionTimestamp"):
            _keep(meta, old_meta, ("deletionTimestamp",))
        if meta.get("deletionGracePeriodSeconds") is None:
            _keep(meta, old_meta, ("deletionGracePeriodSeconds",))
        meta["name"] = name
        if res.namespaced:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if check is not None:
            check(obj, old)
        # Unvalidated (internal) writes never change the object's identity either.
        _keep(meta, old_meta, _SYSTEM_FIELDS)
        if obj == old:
            return old
        if meta.get("deletionTimestamp") and _deletion_due(meta, parse_time(self._clock())):
            # The last finalizer went away after the grace period: the object goes.
            return self._remove(res, ns, dict(obj, metadata=dict(meta)))
        if subresource == "" and res.spec_changed(old, obj):
            meta["generation"] = int(old_meta.get("generation", 1)) + 1
        rv = self._next_rv()
        meta["resourceVersion"] = str(rv)
        self._commit(res, name, Change(rv, "MODIFIED", ns, obj, old))
        return obj

    def guaranteed_update(
        self,
        res: Resource,
        namespace: str | None,
        name: str,
        mutate: Callable[[Object], Object],
        subresource: str = "",
        check: Callable[[Object, Object], None] | None = None,
    ) -> Object:
        """Apply ``mutate`` to a private copy of the stored object and write the result,
        atomically (patches and bindings). ``mutate`` may raise an ApiError to refuse;
        ``check`` is as for :meth:`update`."""
        with self._lock:
            ns = self._check_scope(res, namespace) if res.namespaced else ""
            old = self._collection(res).get((ns, name))
            if old is None:
                raise errors.not_found(res.plural, name, res.group)
            new = mutate(copy_object(old))
            return self._replace(res, ns, old, new, subresource, check)

    def _check_preconditions(
        self, res: Resource, old: Object, uid: str | None, resource_version: str | None
    ) -> None:
        old_meta = old["metadata"]
        name = old_meta["name"]
        if uid and uid != old_meta.get("uid"):
            raise errors.conflict(
                res.plural,
                name,
                f"Precondition failed: UID in precondition: {uid}, "
                f"UID in object meta: {old_meta.get('uid')}",
                res.group,
            )
        if resource_version and resource_version != old_meta.get("resourceVersion"):
            raise errors.conflict(
                res.plural,
                name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{resource_version}, ResourceVersion in object meta: "
                f"{old_meta.get('resourceVersion')}",
                res.group,
            )

    def _remove(self, res: Resource, ns: str, old: Object) -> Object:
        name = old["metadata"]["name"]
        rv = self._next_rv()
        gone = dict(old)
        gone["metadata"] = dict(old["metadata"], resourceVersion=str(rv))
        self._commit(res, name, Change(rv, "DELETED", ns, gone, old))
        self._deleting.discard((res.key, ns, name))
        return gone

    def delete(
        self,
        res: Resource,
        namespace: str | None,
        name: str,
        uid: str | None = None,
        resource_version: str | None = None,
    ) -> Object:
        """Remove an object at once and return it as deleted (with the deletion's version).

        ``uid`` and ``resource_version`` are DeleteOptions preconditions (409 Conflict when
        they do not hold). Finalizers are not looked at: see :meth:`delete_gracefully`.
        """
        ns = namespace or "" if res.namespaced else ""
        with self._lock:
            old = self._collection(res).get((ns, name))
            if old is None:
                raise errors.not_found(res.plural, name, res.group)
            self._check_preconditions(res, old, uid, resource_version)
            return self._remove(res, ns, old)

    def delete_gracefully(
        self,
        res: Resource,
        namespace: str | None,
        name: str,
        grace_seconds: int | Callable[[Object], int] = 0,
        uid: str | None = None,
        resource_version: str | None = None,
        finalizers: Callable[[Object], builtins.list[str]] | None = None,
    ) -> tuple[Object, bool]:
        """Delete as kube-apiserver's generic registry does; returns (object, removed).

        ``finalizers`` gives the object's finalizers as the delete leaves them (the
        garbage collector's ``orphan`` and ``foregroundDeletion``, which the request's
        propagation policy adds or removes); by default they stay as they are. With no
        finalizers and no grace period the object is removed at once. Otherwise it stays,
        with ``deletionTimestamp`` (now + grace), ``deletionGracePeriodSeconds`` and the
        new finalizers set, until :meth:`reap` finds the grace over and the finalizers
        gone (or an update removes the last finalizer after the deadline). A second delete
        may shorten the grace period, never lengthen it, and may change the finalizers.
        ``grace_seconds`` and ``finalizers`` are called under the store's lock.
        """
        ns = namespace or "" if res.namespaced else ""
        with self._lock:
            old = self._collection(res).get((ns, name))
            if old is None:
                raise errors.not_found(res.plural, name, res.group)
            self._check_preconditions(res, old, uid, resource_version)
            grace = max(grace_seconds(old) if callable(grace_seconds) else grace_seconds, 0)
            old_meta = old["metadata"]
            current_finalizers = old_meta.get("finalizers") or []
            wanted = finalizers(old) if finalizers is not None else current_finalizers
            if not wanted and grace == 0:
                return self._remove(res, ns, old), True
            now = parse_time(self._clock())
            deadline = now + timedelta(seconds=grace)
            current = old_meta.get("deletionTimestamp")
            sooner = not current or parse_time(current) > deadline
            changed = set(wanted) != set(current_finalizers)
            if not sooner and not changed:
                return old, False  # already going, no later than asked
            new = copy_object(old)
            meta = new["metadata"]
            if changed:
                if wanted:
                    meta["finalizers"] = list(wanted)
                else:
                    meta.pop("finalizers", None)
            if sooner:
                meta["deletionTimestamp"] = format_time(deadline)
                meta["deletionGracePeriodSeconds"] = grace
            if _deletion_due(meta, now):
                # The delete took away the last finalizer of an object already going.
                return self._remove(res, ns, new), True
            rv = self._next_rv()
            meta["resourceVersion"] = str(rv)
            self._commit(res, name, Change(rv, "MODIFIED", ns, new, old))
            self._deleting.add((res.key, ns, name))
            return new, False

    def reap(self, now: datetime | None = None) -> builtins.list[Object]:
        """Remove every object whose deletion is due: ``deletionTimestamp`` reached and no
        finalizers left. Returns the removed objects (as deleted). The server calls this
        periodically; it plays the kubelet confirming that a pod's containers stopped."""
        moment = now or parse_time(self._clock())
        removed: builtins.list[Object] = []
        with self._lock:
            for key, ns, name in sorted(self._deleting):
                obj = self._objects[key].get((ns, name))
                if obj is None:
                    self._deleting.discard((key, ns, name))
                elif _deletion_due(obj["metadata"], moment):
                    removed.append(self._remove(self._resources[key], ns, obj))
        return removed

    # -- watch --------------------------------------------------------------------------

    def watch(
        self,
        res: Resource,
        namespace: str | None = None,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        notify: Callable[[], None] | None = None,
        initial_events: bool | None = None,
    ) -> Watcher:
        """Start a watch; its first events are already queued when this returns.

        ``resource_version`` unset or ``"0"``: a synthetic ADDED for each matching object
        that exists now, then the changes. A version N: every change after N, then the
        new ones; N older than the resource's event window raises 410 Expired.

        **initial_events** (``sendInitialEvents``): True, the synthetic ADDED events of
        the current state whatever the version (the caller has waited for it); False, no
        state, only changes (after N, or from now). The watcher's ``initial_count`` and
        ``initial_version`` say how many events the state was and at which version.
        """
        match = matcher(
            parse_label_selector(label_selector),
            parse_field_selector(field_selector, res.selectable_fields),
        )
        ns = namespace if res.namespaced and namespace else None
        version = parse_resource_version(resource_version)
        with self._lock:
            self._collection(res)
            watcher = Watcher(res.key, ns, match, notify, self._unwatch, self._max_pending)
            initial = version == 0 if initial_events is None else initial_events
            if initial:
                for (obj_ns, _), obj in sorted(self._objects[res.key].items()):
                    if ns is not None and obj_ns != ns:
                        continue
                    if match is None or match(obj):
                        rv = int(obj["metadata"]["resourceVersion"])
                        watcher.push(WatchEvent("ADDED", obj, rv))
                watcher.initial_count = len(watcher)
                watcher.initial_version = self._rv
            elif version != 0:
                log = self._logs[res.key]
                if version < log.floor:
                    raise errors.too_old_resource_version(version, log.floor)
                for change in log.since(version):
                    watcher.offer(change)
            self._watchers[res.key].append(watcher)
        return watcher

    def _unwatch(self, watcher: Watcher) -> None:
        with self._lock:
            watchers = self._watchers.get(watcher.key, [])
            if watcher in watchers:
                watchers.remove(watcher)

    def bookmark(self, watcher: Watcher) -> int | None:
        """The version a BOOKMARK may carry now: the store's newest if the watcher has
        been given every event up to it (its queue is empty), else None."""
        with self._lock:
            return self._rv if watcher.idle else None

    def watcher_count(self, res: Resource) -> int:
        """How many watches are open on ``res``."""
        with self._lock:
            return len(self._watchers[res.key])


def _before_deletion(changes: builtins.list[Change], index: int, key: tuple[str, str]) -> Object:
    # A deletion loaded from a data file keeps no copy of the object it removed: that is
    # the newest earlier change of the same object in the window, if the window has one.
    for change in reversed(changes[:index]):
        if (change.namespace, change.object["metadata"]["name"]) == key:
            if change.type != "DELETED":
                return change.object
            break
    raise errors.expired(_EXPIRED_LIST)


_MAX_VERSION = 1 << 64


def parse_resource_version(text: str | None) -> int:
    """``""``/None/``"0"`` → 0; a decimal → its value; anything else → 400 BadRequest."""
    if not text:
        return 0
    # strconv.ParseUint(text, 10, 64), as etcd3 storage parses it: ASCII digits only (no
    # sign, space or "_", which int() takes) and below 2**64, else 400 at once rather
    # than a wait for a version that will never come.
    if not (text.isascii() and text.isdigit()) or int(text) >= _MAX_VERSION:
        raise errors.bad_request(f"invalid resource version: {text!r}")
    return int(text)


def _key_of(obj: Object) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


def _encode_continue(rv: int, key: tuple[str, str]) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(key)})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        rv, start = int(data["rv"]), data["start"]
        return rv, (str(start[0]), str(start[1]))
    except (binascii.Error, ValueError, KeyError, TypeError, IndexError):
        raise errors.bad_request("continue key is not valid: incorrect encoded start") from None
