"""The garbage collector's dependency graph: one node per object, keyed by uid.

A node knows its owners (the object's ``ownerReferences``) and its dependents (the nodes
whose references name it). An owner that is referenced but not observed (yet, or ever) is a
*virtual* node, built from the reference; the collector checks it against the API server
and drops it when no such object exists (``graph.go`` upstream).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Finalizers the API server sets for ``propagationPolicy`` Orphan and Foreground.
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"

RawObject = dict[str, Any]


@dataclass(frozen=True)
class OwnerReference:
    """One entry of ``metadata.ownerReferences``."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False

    @classmethod
    def from_dict(cls, raw: Any) -> OwnerReference | None:
        """The reference, or None for one without a uid (the server refuses those)."""
        if not isinstance(raw, dict) or not raw.get("uid"):
            return None
        return cls(
            str(raw.get("apiVersion") or ""),
            str(raw.get("kind") or ""),
            str(raw.get("name") or ""),
            str(raw["uid"]),
            bool(raw.get("controller")),
            bool(raw.get("blockOwnerDeletion")),
        )

    @property
    def group(self) -> str:
        """The API group of ``apiVersion`` ("" for the core group)."""
        return self.api_version.rpartition("/")[0]


@dataclass(frozen=True)
class ObjectIdentity:
    """What names one object: kind and group, namespace, name and uid."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str

    @property
    def group(self) -> str:
        """The API group of ``apiVersion`` ("" for the core group)."""
        return self.api_version.rpartition("/")[0]

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind}.{self.api_version} {where} (uid {self.uid})"


def owner_references(obj: RawObject) -> tuple[OwnerReference, ...]:
    """The object's owner references (malformed entries left out)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    if not isinstance(refs, list):
        return ()
    found = (OwnerReference.from_dict(ref) for ref in refs)
    return tuple(ref for ref in found if ref is not None)


def finalizers(obj: RawObject) -> list[str]:
    """``metadata.finalizers``."""
    value = (obj.get("metadata") or {}).get("finalizers") or []
    return [str(f) for f in value] if isinstance(value, list) else []


def being_deleted(obj: RawObject) -> bool:
    """Whether the object has a ``deletionTimestamp``."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def identity_of(obj: RawObject, api_version: str, kind: str) -> ObjectIdentity:
    """The identity of an observed object (list items carry no kind: the caller knows)."""
    meta = obj.get("metadata") or {}
    return ObjectIdentity(
        api_version,
        kind,
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
        str(meta.get("uid") or ""),
    )


@dataclass(eq=False)
class Node:
    """One object in the graph. ``virtual``: known only from a reference to it."""

    identity: ObjectIdentity
    owners: tuple[OwnerReference, ...] = ()
    dependents: set[Node] = field(default_factory=set)
    virtual: bool = False
    #: The object has a deletionTimestamp.
    being_deleted: bool = False
    #: The object is being deleted in the foreground (deletionTimestamp and the
    #: ``foregroundDeletion`` finalizer): its blocking dependents go first.
    deleting_dependents: bool = False

    def __hash__(self) -> int:
        return id(self)

    def blocking_dependents(self) -> list[Node]:
        """Dependents whose reference to this node has ``blockOwnerDeletion``."""
        uid = self.identity.uid
        return [
            dep
            for dep in self.dependents
            if any(ref.uid == uid and ref.block_owner_deletion for ref in dep.owners)
        ]


class Graph:
    """The nodes by uid, with the owner/dependent links kept both ways."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, uid: str) -> Node | None:
        """The node of ``uid``, if any."""
        return self.nodes.get(uid)

    def add_dependent_to_owners(
        self, node: Node, refs: tuple[OwnerReference, ...] | list[OwnerReference]
    ) -> list[Node]:
        """Link ``node`` under each owner of ``refs``; returns the virtual owner nodes
        this created (the caller has them verified)."""
        created = []
        for ref in refs:
            owner = self.nodes.get(ref.uid)
            if owner is None:
                # Owner references are namespace-local; a cluster-scoped owner's identity
                # drops the namespace when it is resolved.
                identity = ObjectIdentity(
                    ref.api_version, ref.kind, node.identity.namespace, ref.name, ref.uid
                )
                owner = Node(identity, virtual=True)
                self.nodes[ref.uid] = owner
                created.append(owner)
            owner.dependents.add(node)
        return created

    def remove_dependent_from_owners(
        self, node: Node, refs: tuple[OwnerReference, ...] | list[OwnerReference]
    ) -> None:
        """Unlink ``node`` from each owner of ``refs``."""
        for ref in refs:
            owner = self.nodes.get(ref.uid)
            if owner is not None:
                owner.dependents.discard(node)

    def insert(self, node: Node) -> list[Node]:
        """Add an observed node; returns the virtual owners created for it."""
        self.nodes[node.identity.uid] = node
        return self.add_dependent_to_owners(node, node.owners)

    def remove(self, node: Node) -> None:
        """Drop ``node`` and its links to its owners (its dependents keep their refs)."""
        if self.nodes.get(node.identity.uid) is node:
            del self.nodes[node.identity.uid]
        self.remove_dependent_from_owners(node, node.owners)
