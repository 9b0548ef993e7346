"""SQLite persistence for the store (``kubesched apiserver --data FILE``).

The store writes every committed change through to one SQLite file, in the critical
section that gives the change its resourceVersion, before the change becomes visible in
memory: a write the file refused is not applied at all. The file holds

* ``objects``: every stored object, keyed by resource (``group/version/plural``),
  namespace and name, with its JSON and resourceVersion;
* ``meta``: the current global resourceVersion (plus the format's name);
* ``events``: the recent changes of each resource (the watch window, object and previous
  object), so that after a restart a watch from a version inside the window resumes
  without loss, as it would have before; an older version gets 410 Expired as usual.
  Each resource keeps at most its window plus a quarter (trimmed in batches), and
  ``floors`` records, per resource, the newest version that was trimmed.

On open, every object and the resourceVersion counter are loaded, so new writes continue
the sequence. The file is in WAL mode with ``synchronous=NORMAL``: a committed write
survives the process being killed; a power loss may lose the last transactions, never
corrupt the file. One server uses a file at a time (an exclusive lock); a file that is not
a kubesched data file is refused with :class:`StorageError` naming it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kubesched.apiserver.watch import Change, Object

ResourceKey = tuple[str, str, str]

#: ``PRAGMA application_id`` of a kubesched data file ("ksch").
APPLICATION_ID = 0x6B736368
#: ``PRAGMA user_version``: the layout of the tables below.
FORMAT_VERSION = 1
FORMAT_NAME = "kubesched-apiserver"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE objects (
    resource TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    rv INTEGER NOT NULL,
    json TEXT NOT NULL,
    PRIMARY KEY (resource, namespace, name)
);
CREATE TABLE events (
    rv INTEGER PRIMARY KEY,
    resource TEXT NOT NULL,
    type TEXT NOT NULL,
    namespace TEXT NOT NULL,
    json TEXT NOT NULL,
    old_rv INTEGER,
    old TEXT
);
CREATE INDEX events_by_resource ON events (resource, rv);
CREATE TABLE floors (resource TEXT PRIMARY KEY, rv INTEGER NOT NULL);
"""
_TABLES = {"meta", "objects", "events", "floors"}


class StorageError(Exception):
    """The data file cannot be used (not a kubesched data file, damaged, in use, ...)."""


def resource_name(key: ResourceKey) -> str:
    """How a resource is named in the file: ``group/version/plural`` (core: ``/v1/pods``)."""
    return "/".join(key)


def _dumps(obj: Object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Snapshot:
    """What a data file holds, as the store keeps it in memory."""

    resource_version: int = 0
    objects: dict[ResourceKey, dict[tuple[str, str], Object]] = field(default_factory=dict)
    #: Per resource: the newest trimmed version, then the changes still in the file.
    floors: dict[ResourceKey, int] = field(default_factory=dict)
    changes: dict[ResourceKey, list[Change]] = field(default_factory=dict)


class SqliteStorage:
    """One kubesched data file, open for one store.

    Not thread-safe by itself: the store calls :meth:`write` under its lock.
    """

    def __init__(self, path: str | os.PathLike[str], window: int) -> None:
        self.path = Path(path)
        self._window = max(window, 1)
        self._slack = max(self._window // 4, 1)
        self._counts: dict[str, int] = {}
        try:
            self._db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=0
            )
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: cannot open the data file: {exc}") from None
        try:
            self._open()
        except sqlite3.Error as exc:
            self._db.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise StorageError(
                    f"{self.path}: the data file is in use by another kubesched apiserver"
                ) from None
            if "unable to open" in str(exc):
                raise StorageError(f"{self.path}: cannot open the data file: {exc}") from None
            raise StorageError(f"{self.path}: not a kubesched data file ({exc})") from None
        except StorageError:
            self._db.close()
            raise

    def _open(self) -> None:
        db = self._db
        db.execute("PRAGMA locking_mode=EXCLUSIVE")
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        new_file = app_id != APPLICATION_ID
        if new_file and tables:
            raise StorageError(
                f"{self.path}: an SQLite database but not a kubesched data file "
                f"(it has the tables {', '.join(sorted(tables))})"
            )
        if not new_file:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != FORMAT_VERSION:
                raise StorageError(
                    f"{self.path}: kubesched data format {version}; this version reads "
                    f"format {FORMAT_VERSION}"
                )
            if missing := _TABLES - tables:
                raise StorageError(
                    f"{self.path}: damaged kubesched data file (missing tables "
                    f"{', '.join(sorted(missing))})"
                )
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(f"{self.path}: cannot use WAL mode (journal mode {mode})")
        if new_file:
            db.executescript(
                f"BEGIN IMMEDIATE; {_SCHEMA}"
                f"PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={FORMAT_VERSION};"
                f"INSERT INTO meta (key, value) VALUES ('format', '{FORMAT_NAME}'), "
                "('resourceVersion', '0'); COMMIT;"
            )
        db.execute("PRAGMA synchronous=NORMAL")
        # Take the exclusive lock now: a second server on the same file fails at once.
        db.execute("BEGIN IMMEDIATE")
        db.execute("COMMIT")

    # -- load ---------------------------------------------------------------------------

    def load(self, resources: Iterable[ResourceKey]) -> Snapshot:
        """Every object, the resourceVersion counter and the persisted watch windows."""
        try:
            return self._load({resource_name(k): k for k in resources})
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: damaged kubesched data file ({exc})") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise StorageError(f"{self.path}: damaged kubesched data file ({exc})") from None

    def objects_of(self, key: ResourceKey) -> list[Object]:
        """The stored objects of one resource, read before the store loads the file: the
        CustomResourceDefinitions, whose custom resources must be served before their
        objects can be loaded."""
        try:
            rows = self._db.execute(
                "SELECT json FROM objects WHERE resource = ? ORDER BY namespace, name",
                (resource_name(key),),
            ).fetchall()
            objects = [json.loads(text) for (text,) in rows]
        except (sqlite3.Error, ValueError) as exc:
            raise StorageError(f"{self.path}: damaged kubesched data file ({exc})") from None
        if not all(isinstance(obj, dict) for obj in objects):
            raise StorageError(f"{self.path}: damaged objects of {resource_name(key)}")
        return objects

    def _load(self, keys: dict[str, ResourceKey]) -> Snapshot:
        db = self._db
        snap = Snapshot()
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("format") != FORMAT_NAME:
            raise StorageError(f"{self.path}: not a kubesched data file (no format mark)")
        snap.resource_version = int(meta["resourceVersion"])

        def key_of(name: str) -> ResourceKey:
            key = keys.get(name)
            if key is None:
                raise StorageError(
                    f"{self.path}: holds objects of resource {name!r}, which this server "
                    "does not serve"
                )
            return key

        # Objects by (resource, resourceVersion): loaded events share them.
        by_rv: dict[tuple[str, int], Object] = {}
        for resource, namespace, name, rv, text in db.execute(
            "SELECT resource, namespace, name, rv, json FROM objects"
        ):
            obj = json.loads(text)
            if not isinstance(obj, dict) or obj.get("metadata", {}).get("name") != name:
                raise StorageError(f"{self.path}: damaged object {resource} {namespace}/{name}")
            snap.objects.setdefault(key_of(resource), {})[(namespace, name)] = obj
            by_rv[(resource, int(rv))] = obj
        for resource, rv in db.execute("SELECT resource, rv FROM floors"):
            snap.floors[key_of(resource)] = int(rv)
        for rv, resource, kind, namespace, text, old_rv, old_text in db.execute(
            "SELECT rv, resource, type, namespace, json, old_rv, old FROM events ORDER BY rv"
        ):
            key = key_of(resource)
            self._counts[resource] = self._counts.get(resource, 0) + 1
            obj = by_rv.get((resource, rv)) if kind != "DELETED" else None
            if obj is None:
                obj = json.loads(text)
                if kind != "DELETED":
                    by_rv[(resource, rv)] = obj
            old: Object | None = None
            if old_text is not None and kind != "DELETED":
                old = by_rv.get((resource, int(old_rv)))
                if old is None:
                    old = json.loads(old_text)
                    by_rv[(resource, int(old_rv))] = old
            snap.changes.setdefault(key, []).append(Change(rv, kind, namespace, obj, old))
            snap.resource_version = max(snap.resource_version, rv)
        return snap

    # -- write --------------------------------------------------------------------------

    def write(self, key: ResourceKey, name: str, change: Change) -> None:
        """Commit ``change`` (of the object ``name`` of resource ``key``) to the file.

        Raises :class:`StorageError` (and leaves the file as it was) when it cannot.
        """
        resource = resource_name(key)
        ns = change.namespace
        text = _dumps(change.object)
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if change.type == "DELETED":
                    db.execute(
                        "INSERT INTO events (rv, resource, type, namespace, json) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (change.resource_version, resource, change.type, ns, text),
                    )
                    db.execute(
                        "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?",
                        (resource, ns, name),
                    )
                else:
                    # The previous object is the stored row: copy it, do not encode it again.
                    db.execute(
                        "INSERT INTO events (rv, resource, type, namespace, json, old_rv, old) "
                        "SELECT :rv, :res, :type, :ns, :json, o.rv, o.json FROM (SELECT 1) "
                        "LEFT JOIN objects o ON o.resource = :res AND o.namespace = :ns "
                        "AND o.name = :name",
                        {
                            "rv": change.resource_version,
                            "res": resource,
                            "type": change.type,
                            "ns": ns,
                            "json": text,
                            "name": name,
                        },
                    )
                    db.execute(
                        "INSERT OR REPLACE INTO objects (resource, namespace, name, rv, json) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (resource, ns, name, change.resource_version, text),
                    )
                db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'resourceVersion'",
                    (str(change.resource_version),),
                )
                count = self._counts.get(resource, 0) + 1
                if count > self._window + self._slack:
                    count = self._trim(resource, count)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: cannot write: {exc}") from None
        self._counts[resource] = count

    def _trim(self, resource: str, count: int) -> int:
        """Drop the oldest events of ``resource`` beyond its window; return the new count."""
        row = self._db.execute(
            "SELECT rv FROM events WHERE resource = ? ORDER BY rv LIMIT 1 OFFSET ?",
            (resource, count - self._window - 1),
        ).fetchone()
        floor = int(row[0])
        self._db.execute("DELETE FROM events WHERE resource = ? AND rv <= ?", (resource, floor))
        self._db.execute(
            "INSERT OR REPLACE INTO floors (resource, rv) VALUES (?, ?)", (resource, floor)
        )
        return self._window

    def drop_resource(self, key: ResourceKey) -> None:
        """Forget a resource that is no longer served (a deleted custom resource): its
        objects, its watch window and its floor."""
        resource = resource_name(key)
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for table in ("objects", "events", "floors"):
                    db.execute(f"DELETE FROM {table} WHERE resource = ?", (resource,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StorageError(f"{self.path}: cannot write: {exc}") from None
        self._counts.pop(resource, None)

    def close(self) -> None:
        """Checkpoint and close the file (further writes fail)."""
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._db.close()
