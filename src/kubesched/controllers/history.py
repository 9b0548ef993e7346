"""ControllerRevision history, after upstream's ``pkg/controller/history``.

A StatefulSet or DaemonSet keeps each template it ever had as a ControllerRevision it
owns: ``data`` holds the patch that restores the template, ``revision`` orders them, and
the name is ``<owner>-<hash>``. ``kubectl rollout history | undo`` reads these.

:class:`RevisionHistory` lists, creates, renumbers and deletes an owner's revisions
through the API server. Deviation: when the server does not serve
``controllerrevisions`` (the kind arrives with issue 14's served kinds), the history is
kept in this process (:class:`LocalRevisions`) so the controllers still roll pods by
revision; it is lost on restart and kubectl cannot see it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from kubesched.kube import AlreadyExists, Client, Informer, KubeError, NotFound
from kubesched.kube.resources import RawObject, Resource

__all__ = [
    "CONTROLLER_REVISIONS",
    "LocalRevisions",
    "RevisionHistory",
    "RevisionStore",
    "ServedRevisions",
    "equal_revision",
    "new_revision",
    "next_revision",
    "revision_number",
    "served",
    "served_history",
    "sort_revisions",
]

log = logging.getLogger(__name__)

#: apps/v1 ControllerRevisions, as plain dicts.
CONTROLLER_REVISIONS: Resource[RawObject] = Resource(
    "apps", "v1", "controllerrevisions", "ControllerRevision", True, lambda raw: raw
)
#: ``ControllerRevisionName`` keeps the prefix at most this long.
_MAX_PREFIX = 223


def revision_number(revision: Mapping[str, Any]) -> int:
    """The revision's ``revision`` (0 if unset)."""
    value = revision.get("revision")
    return value if isinstance(value, int) else 0


def sort_revisions(revisions: list[RawObject]) -> list[RawObject]:
    """``SortControllerRevisions``: by revision number, then creation time, then name."""
    return sorted(
        revisions,
        key=lambda r: (
            revision_number(r),
            str((r.get("metadata") or {}).get("creationTimestamp") or ""),
            str((r.get("metadata") or {}).get("name") or ""),
        ),
    )


def next_revision(revisions: list[RawObject]) -> int:
    """``nextRevision``: one more than the highest revision number (1 for none)."""
    return max((revision_number(r) for r in revisions), default=0) + 1


def equal_revision(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``EqualRevision``: the same ``data`` (the patch, compared as JSON values)."""
    return a.get("data") == b.get("data")


def revision_name(prefix: str, hash_: str) -> str:
    """``ControllerRevisionName``: ``<prefix>-<hash>``, the prefix cut to 223 chars."""
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def new_revision(
    owner: Mapping[str, Any],
    owner_ref: Mapping[str, Any],
    labels: Mapping[str, str],
    data: Mapping[str, Any],
    revision: int,
    hash_: str,
    annotations: Mapping[str, str] | None = None,
) -> RawObject:
    """``NewControllerRevision``: the revision ``revision`` of ``owner`` holding
    ``data``, named ``<owner>-<hash_>``, labelled as the owner's template (so the
    owner's selector finds it, as kubectl's ``controlledHistory`` lists it)."""
    meta = owner.get("metadata") or {}
    rev_meta: RawObject = {
        "name": revision_name(str(meta.get("name") or ""), hash_),
        "namespace": meta.get("namespace") or "default",
        "labels": dict(labels),
        "ownerReferences": [dict(owner_ref)],
    }
    if annotations:
        rev_meta["annotations"] = dict(annotations)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": rev_meta,
        "data": copy.deepcopy(dict(data)),
        "revision": revision,
    }


class RevisionStore(Protocol):
    """Where an owner's revisions live."""

    def list(self, namespace: str) -> list[RawObject]:
        """Every revision in ``namespace``."""

    async def create(self, revision: RawObject) -> RawObject:
        """Create ``revision``; raises AlreadyExists (with the stored one readable by
        :meth:`get`) if the name is taken."""

    async def get(self, namespace: str, name: str) -> RawObject | None:
        """The stored revision ``name``, read live."""

    async def update_revision(self, revision: RawObject, number: int) -> RawObject:
        """``UpdateControllerRevision``: the same revision renumbered ``number``."""

    async def delete(self, revision: RawObject) -> None:
        """Delete ``revision`` (gone already is fine)."""

    async def patch(self, namespace: str, name: str, patch: object) -> RawObject:
        """A strategic merge patch (adoption and release of owner references)."""


class ServedRevisions:
    """Revisions on the API server, read from an informer."""

    def __init__(self, client: Client, informer: Informer[RawObject]) -> None:
        self.client = client
        self.informer = informer

    def list(self, namespace: str) -> list[RawObject]:
        return [
            r
            for r in self.informer.list()
            if (r.get("metadata") or {}).get("namespace") == namespace
        ]

    async def create(self, revision: RawObject) -> RawObject:
        namespace = revision["metadata"]["namespace"]
        created: RawObject = await self.client.create(CONTROLLER_REVISIONS, revision, namespace)
        return created

    async def get(self, namespace: str, name: str) -> RawObject | None:
        try:
            found: RawObject = await self.client.get(CONTROLLER_REVISIONS, name, namespace)
        except NotFound:
            return None
        return found

    async def update_revision(self, revision: RawObject, number: int) -> RawObject:
        meta = revision["metadata"]
        patched: RawObject = await self.client.patch(
            CONTROLLER_REVISIONS, meta["name"], {"revision": number}, meta["namespace"]
        )
        return patched

    async def delete(self, revision: RawObject) -> None:
        meta = revision["metadata"]
        with contextlib.suppress(NotFound):
            await self.client.delete(
                CONTROLLER_REVISIONS, meta["name"], meta["namespace"], uid=meta.get("uid") or ""
            )

    async def patch(self, namespace: str, name: str, patch: object) -> RawObject:
        patched: RawObject = await self.client.patch(
            CONTROLLER_REVISIONS, name, patch, namespace, patch_type="strategic"
        )
        return patched


class LocalRevisions:
    """Revisions kept in this process, for a server without ControllerRevisions."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str], RawObject] = {}
        self._uid = 0

    def list(self, namespace: str) -> list[RawObject]:
        return [r for (ns, _), r in self._store.items() if ns == namespace]

    async def create(self, revision: RawObject) -> RawObject:
        meta = revision["metadata"]
        key = (meta["namespace"], meta["name"])
        if key in self._store:
            message = f'controllerrevisions.apps "{meta["name"]}" already exists'
            raise AlreadyExists(409, {"reason": "AlreadyExists", "message": message})
        self._uid += 1
        stored = copy.deepcopy(revision)
        stored["metadata"]["uid"] = f"local-revision-{self._uid}"
        self._store[key] = stored
        return stored

    async def get(self, namespace: str, name: str) -> RawObject | None:
        return self._store.get((namespace, name))

    async def update_revision(self, revision: RawObject, number: int) -> RawObject:
        meta = revision["metadata"]
        stored = self._store[(meta["namespace"], meta["name"])]
        stored = {**stored, "revision": number}
        self._store[(meta["namespace"], meta["name"])] = stored
        return stored

    async def delete(self, revision: RawObject) -> None:
        meta = revision["metadata"]
        self._store.pop((meta["namespace"], meta["name"]), None)

    async def patch(self, namespace: str, name: str, patch: object) -> RawObject:
        # Only the controllers write these, so there is nothing to adopt or release.
        return self._store[(namespace, name)]


class RevisionHistory:
    """An owner kind's revisions in a :class:`RevisionStore`."""

    def __init__(self, store: RevisionStore) -> None:
        self.store = store

    def owned_by(self, namespace: str, uid: str) -> list[RawObject]:
        """The revisions in ``namespace`` whose controller is ``uid``, sorted."""
        owned = []
        for revision in self.store.list(namespace):
            for ref in (revision.get("metadata") or {}).get("ownerReferences") or ():
                if ref.get("controller") is True and ref.get("uid") == uid:
                    owned.append(revision)
        return sort_revisions(owned)

    async def create(self, revision: RawObject, collisions: int) -> tuple[RawObject, bool]:
        """``CreateControllerRevision`` for one name: the created (or an equal stored)
        revision, and whether the name collided with different data (the caller bumps
        ``collisionCount``, renames and tries again)."""
        try:
            return await self.store.create(revision), False
        except AlreadyExists:
            meta = revision["metadata"]
            existing = await self.store.get(meta["namespace"], meta["name"])
            if existing is not None and equal_revision(existing, revision):
                return existing, False
            log.info("revision %s collides (collisionCount %d)", meta["name"], collisions)
            return revision, True


async def served(client: Client, group_version: str, plural: str, controller: str) -> bool:
    """Whether the server's discovery lists ``plural`` in ``group_version`` (asked again
    every second while the server fails to answer). **controller**: who asks, for the
    log."""
    path = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    while True:
        try:
            found = await client.request("GET", path)
        except NotFound:
            return False
        except KubeError as exc:
            log.info("%s: discovery of %s failed, asking again: %s", controller, path, exc)
            await asyncio.sleep(1.0)
            continue
        return any(r.get("name") == plural for r in found.get("resources") or ())


async def served_history(
    client: Client, controller: str
) -> tuple[RevisionHistory, Informer[RawObject]] | None:
    """The revision history kept on the server, with the ControllerRevision informer it
    reads (started and synced here; the caller stops it), when the server serves
    controllerrevisions; None, with a warning, when it does not (revisions then stay in
    memory)."""
    if not await served(client, "apps/v1", "controllerrevisions", controller):
        log.warning(
            "%s: the API server does not serve controllerrevisions: revisions are kept in memory",
            controller,
        )
        return None
    informer: Informer[RawObject] = Informer(client, CONTROLLER_REVISIONS)
    informer.start()
    await informer.has_synced.wait()
    return RevisionHistory(ServedRevisions(client, informer)), informer
