"""The garbage collector's writes: delete with a uid precondition and a propagation
policy, and read-modify-patch of owner references and finalizers under the object's
resourceVersion, retried on a conflict from a fresh GET (``operations.go`` and
``patch.go`` upstream).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.controllers.garbagecollector.graph import ObjectIdentity, RawObject
from kubesched.kube import Client, Conflict, NotFound, Resource

#: Attempts of one read-modify-patch before the work item goes back to its queue.
RETRIES = 5


def namespace_for(res: Resource[Any], identity: ObjectIdentity) -> str | None:
    """The namespace to address ``identity`` in (None for a cluster-scoped kind)."""
    return identity.namespace if res.namespaced else None


async def get_object(
    client: Client, res: Resource[RawObject], identity: ObjectIdentity
) -> RawObject | None:
    """The live object of ``identity``, or None if no object of that uid exists."""
    if res.namespaced and not identity.namespace:
        return None  # a namespaced kind named from a cluster-scoped object: no such owner
    try:
        obj = await client.get(res, identity.name, namespace_for(res, identity))
    except NotFound:
        return None
    if (obj.get("metadata") or {}).get("uid") != identity.uid:
        return None
    return obj


async def delete_object(
    client: Client, res: Resource[RawObject], identity: ObjectIdentity, policy: str
) -> None:
    """DELETE the object if it still has ``identity``'s uid, with ``propagationPolicy``."""
    options = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": identity.uid},
        "propagationPolicy": policy,
    }
    path = res.path(namespace_for(res, identity), identity.name)
    try:
        await client.request("DELETE", path, body=options)
    except NotFound:
        pass  # gone already
    except Conflict:
        pass  # the name belongs to another object now: ours is gone


async def patch_metadata(
    client: Client,
    res: Resource[RawObject],
    identity: ObjectIdentity,
    edit: Callable[[RawObject], RawObject | None],
) -> None:
    """Apply ``edit`` to the live object's metadata and merge-patch the fields it
    returns (None: nothing to change), under the object's resourceVersion."""
    last: Conflict | None = None
    for _ in range(RETRIES):
        obj = await get_object(client, res, identity)
        if obj is None:
            return
        meta = obj.get("metadata") or {}
        fields = edit(meta)
        if fields is None:
            return
        patch = {"metadata": {**fields, "resourceVersion": meta.get("resourceVersion")}}
        try:
            await client.patch(res, identity.name, patch, namespace_for(res, identity))
            return
        except NotFound:
            return
        except Conflict as exc:
            last = exc
    assert last is not None
    raise last


def without_owners(uids: set[str]) -> Callable[[RawObject], RawObject | None]:
    """An edit that drops the owner references to ``uids``."""

    def edit(meta: RawObject) -> RawObject | None:
        refs = meta.get("ownerReferences") or []
        kept = [ref for ref in refs if ref.get("uid") not in uids]
        if len(kept) == len(refs):
            return None
        return {"ownerReferences": kept or None}

    return edit


def unblocking(uids: set[str]) -> Callable[[RawObject], RawObject | None]:
    """An edit that sets ``blockOwnerDeletion: false`` on the references to ``uids``."""

    def edit(meta: RawObject) -> RawObject | None:
        refs = meta.get("ownerReferences") or []
        if not any(ref.get("uid") in uids and ref.get("blockOwnerDeletion") for ref in refs):
            return None
        changed = [
            {**ref, "blockOwnerDeletion": False} if ref.get("uid") in uids else ref for ref in refs
        ]
        return {"ownerReferences": changed}

    return edit


def without_finalizer(name: str) -> Callable[[RawObject], RawObject | None]:
    """An edit that drops the finalizer ``name``."""

    def edit(meta: RawObject) -> RawObject | None:
        current = meta.get("finalizers") or []
        if name not in current:
            return None
        kept = [f for f in current if f != name]
        return {"finalizers": kept or None}

    return edit
