"""Adoption and release of owned objects, after upstream's ``controller_ref_manager.go``.

A controller owns what its controller reference (``controller: true``) points at. On
each sync :class:`ControllerRefManager` claims objects: those it owns and its selector
still matches are kept; those it owns that no longer match are released (their reference
removed); orphans that match are adopted (a reference added), unless the owner or the
object is being deleted. Adoption first re-reads the owner from the server once
(``RecheckDeletionTimestamp``): a cached owner may already be deleted, and adopting for
it would hand the pods to the garbage collector. Both patches carry the object's UID, so
they fail rather than touch an object recreated under the same name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from kubesched.kube import Invalid, KubeError, NotFound
from kubesched.kube.resources import RawObject
from kubesched.objects.podtemplate import controller_of
from kubesched.objects.selectors import LabelSelector

__all__ = ["ControllerRefManager", "OwnerGone", "recheck_deletion"]

Patch = Callable[[str, str, object], Awaitable[Any]]


class OwnerGone(Exception):
    """The owner was deleted (or replaced) since it was cached: adopt nothing."""


class ControllerRefManager:
    """Claims objects for ``owner`` (kind ``kind`` of ``api_version``) by ``selector``.

    **patch(namespace, name, body)** sends a strategic merge patch to one object;
    **recheck()** reads the owner live and raises :class:`OwnerGone` if it is being
    deleted or was replaced. **finalizers**: added to each adopted object
    (``NewPodControllerRefManager``'s finalizers).
    """

    def __init__(
        self,
        owner: RawObject,
        api_version: str,
        kind: str,
        selector: LabelSelector,
        patch: Patch,
        recheck: Callable[[], Awaitable[None]],
        finalizers: tuple[str, ...] = (),
    ) -> None:
        self.owner = owner
        meta = owner.get("metadata") or {}
        self.uid = str(meta.get("uid") or "")
        self.namespace = str(meta.get("namespace") or "")
        self.deleting = bool(meta.get("deletionTimestamp"))
        self.api_version = api_version
        self.kind = kind
        self.selector = selector
        self._patch = patch
        self._recheck = recheck
        #: Finalizers an adopted object gets too (the Job's pod-tracking finalizer).
        self.finalizers = finalizers
        self._can_adopt: bool | None = None

    async def _can_adopt_once(self) -> None:
        if self._can_adopt is None:
            try:
                await self._recheck()
                self._can_adopt = True
            except OwnerGone:
                self._can_adopt = False
                raise
        elif not self._can_adopt:
            raise OwnerGone(f"{self.kind} {self.namespace}/{self.owner['metadata']['name']}")

    async def claim(
        self,
        objects: Iterable[RawObject],
        match: Callable[[RawObject], bool] | None = None,
    ) -> list[RawObject]:
        """``ClaimObject`` for each object: the ones the owner keeps or adopts. Errors
        other than NotFound/Invalid on the way are raised after all were tried (the
        sync is retried)."""
        claimed: list[RawObject] = []
        errors: list[BaseException] = []
        for obj in objects:
            ref = controller_of(obj)
            if ref is not None and ref.get("uid") == self.uid and self._matches(obj, match):
                claimed.append(obj)  # ours and still matching: the common case, no await
                continue
            try:
                if await self._claim_one(obj, match):
                    claimed.append(obj)
            except OwnerGone as exc:
                errors.append(exc)
            except KubeError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]
        return claimed

    def _matches(self, obj: RawObject, match: Callable[[RawObject], bool] | None) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return self.selector.matches(labels) and (match is None or match(obj))

    async def _claim_one(self, obj: RawObject, match: Callable[[RawObject], bool] | None) -> bool:
        meta = obj.get("metadata") or {}
        ref = controller_of(obj)
        if ref is not None:
            if ref.get("uid") != self.uid:
                return False  # someone else's
            if self._matches(obj, match):
                return True
            if self.deleting:
                return False  # the garbage collector releases, not us
            await self._release(obj)
            return False
        # An orphan.
        if self.deleting or not self._matches(obj, match):
            return False
        if meta.get("deletionTimestamp"):
            return False
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        await self._can_adopt_once()
        try:
            await self._adopt(obj)
        except (NotFound, Invalid):
            return False  # gone, or replaced under the same name
        return True

    async def _adopt(self, obj: RawObject) -> None:
        """``AdoptPod``: add our controller reference (merged by UID)."""
        meta = obj["metadata"]
        body = {
            "metadata": {
                "ownerReferences": [
                    {
                        "apiVersion": self.api_version,
                        "kind": self.kind,
                        "name": self.owner["metadata"]["name"],
                        "uid": self.uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
                "uid": meta.get("uid"),
            }
        }
        if self.finalizers:
            body["metadata"]["finalizers"] = list(self.finalizers)
        await self._patch(str(meta.get("namespace") or ""), str(meta.get("name")), body)

    async def _release(self, obj: RawObject) -> None:
        """``ReleasePod``: remove our reference; a pod gone or replaced is released."""
        meta = obj["metadata"]
        body = {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": self.uid}],
                "uid": meta.get("uid"),
            }
        }
        with contextlib.suppress(NotFound, Invalid):
            await self._patch(str(meta.get("namespace") or ""), str(meta.get("name")), body)


def recheck_deletion(
    fetch: Callable[[], Awaitable[Mapping[str, Any]]], uid: str, what: str
) -> Callable[[], Awaitable[None]]:
    """``RecheckDeletionTimestamp``: a ``recheck`` for :class:`ControllerRefManager` that
    GETs the owner and refuses if it was replaced (another UID) or is being deleted."""

    async def recheck() -> None:
        try:
            fresh = await fetch()
        except NotFound:
            raise OwnerGone(f"{what} is gone") from None
        meta = fresh.get("metadata") or {}
        if meta.get("uid") != uid:
            raise OwnerGone(f"original {what} is gone: got uid {meta.get('uid')}, wanted {uid}")
        if meta.get("deletionTimestamp"):
            raise OwnerGone(f"{what} has just been deleted at {meta['deletionTimestamp']}")

    return recheck
