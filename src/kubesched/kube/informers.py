"""Shared informers: one list+watch per collection, however many consumers read it.

client-go's ``SharedInformerFactory``: every controller asks the factory for the
informer of the collection it follows and adds its handlers to it; the factory makes
each informer once, so ten controllers that follow pods cost one watch and one cache of
pods, not ten. Informers are keyed by group, version and plural and always decode plain
dicts (``resource.raw``): controllers write back what they read, and a lossy typed view
would drop fields.

Ask for every informer (and add every handler) before :meth:`SharedInformerFactory.start`;
one asked for later is started by the next :meth:`~SharedInformerFactory.start`, as in
client-go.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubesched.kube.client import Client
from kubesched.kube.informer import Informer
from kubesched.kube.resources import RawObject, Resource

__all__ = ["SharedInformerFactory"]


class SharedInformerFactory:
    """Makes, starts and stops one :class:`Informer` per collection, over ``client``."""

    def __init__(self, client: Client, watch_timeout: int = 300) -> None:
        self.client = client
        self.watch_timeout = watch_timeout
        self._informers: dict[tuple[str, str, str], Informer[RawObject]] = {}

    def informer(self, resource: Resource[Any], optional: bool = False) -> Informer[RawObject]:
        """The shared informer of ``resource``'s collection (made on first request).
        ``optional``: made by a consumer that copes with a server not serving it (the
        store then stays empty and counts as synced; see ``Informer``)."""
        key = (resource.group, resource.version, resource.plural)
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(
                self.client, resource.raw, watch_timeout=self.watch_timeout, optional=optional
            )
            self._informers[key] = informer
        return informer

    @property
    def informers(self) -> list[Informer[RawObject]]:
        """Every informer made so far."""
        return list(self._informers.values())

    def start(self) -> None:
        """Start every informer not running yet (in the running loop)."""
        for informer in self._informers.values():
            informer.start()

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        """Wait until every informer made so far has applied its first list."""
        waits = [i.wait_for_sync() for i in self._informers.values()]
        if waits:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)

    async def stop(self) -> None:
        """Stop every informer."""
        for informer in self._informers.values():
            await informer.stop()
