"""Which collections the garbage collector watches, and the collection of a kind.

Discovery as ``discovery.ServerPreferredResources`` reads it: ``/api/v1`` and each group's
preferred version under ``/apis``. The collector watches every collection that can be
listed, watched and deleted, except events (upstream's ``ignoredResources``); owner
references are resolved by group and kind (any version of a group names the same objects).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.kube import Client, Resource

RawObject = dict[str, Any]

#: Collections the collector never watches: events churn and own nothing
#: (``garbagecollector.DefaultIgnoredResources``).
IGNORED = frozenset({("", "events"), ("events.k8s.io", "events")})
_VERBS = frozenset({"list", "watch", "delete"})


def _as_is(raw: RawObject) -> RawObject:
    return raw


class RestMapper:
    """Kinds to collections, from one discovery of the server (:meth:`refresh`)."""

    def __init__(self) -> None:
        self._by_kind: dict[tuple[str, str], Resource[RawObject]] = {}
        self.watchable: list[Resource[RawObject]] = []

    def resource_for(self, group: str, kind: str) -> Resource[RawObject] | None:
        """The collection holding objects of ``kind`` in ``group``, if served."""
        return self._by_kind.get((group, kind))

    async def refresh(self, client: Client) -> None:
        """Discover the served collections again (new custom resources appear)."""
        lists: list[tuple[str, str, RawObject]] = []
        core = await client.request("GET", "/api/v1")
        lists.append(("", "v1", core))
        groups = await client.request("GET", "/apis")
        for group in groups.get("groups") or []:
            preferred = (group.get("preferredVersion") or {}).get("groupVersion", "")
            if not preferred:
                continue
            name, _, version = preferred.rpartition("/")
            lists.append((name, version, await client.request("GET", f"/apis/{preferred}")))
        by_kind: dict[tuple[str, str], Resource[RawObject]] = {}
        watchable: list[Resource[RawObject]] = []
        for group, version, answer in lists:
            for res in _resources(group, version, answer.get("resources") or []):
                by_kind.setdefault((group, res.kind), res)
                if (group, res.plural) not in IGNORED:
                    watchable.append(res)
        self._by_kind = by_kind
        self.watchable = watchable


def _resources(group: str, version: str, entries: Iterable[Any]) -> list[Resource[RawObject]]:
    found = []
    for entry in entries:
        if not isinstance(entry, dict) or "/" in str(entry.get("name", "")):
            continue  # subresources own nothing
        if not set(entry.get("verbs") or ()) >= _VERBS:
            continue
        found.append(
            Resource(
                group,
                version,
                str(entry["name"]),
                str(entry.get("kind", "")),
                bool(entry.get("namespaced")),
                _as_is,
            )
        )
    return found
