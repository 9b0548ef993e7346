"""The ServiceAccounts controller: a ``default`` ServiceAccount in every active namespace,
as ``pkg/controller/serviceaccount/serviceaccounts_controller.go`` keeps one.

A namespace added or changed queues it, and so does the deletion of one of the
ServiceAccounts to ensure (so a deleted ``default`` comes back). Syncing a namespace reads
it and its ServiceAccounts from the caches: nothing is done for a namespace that is gone
or not Active (being deleted); each ServiceAccount to ensure that the cache lacks is
created, an AlreadyExists (the cache was behind) being success. A failure goes back to the
queue with per-key backoff. Upstream's default: ``concurrent-serviceaccount-syncs`` 5
workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from kubesched.kube import AlreadyExists, Client, KubeError
from kubesched.kube.informer import Informer
from kubesched.kube.resources import NAMESPACES, SERVICE_ACCOUNTS, RawObject
from kubesched.kube.workqueue import WorkQueue

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = ["DEFAULT_SERVICE_ACCOUNT", "NAME", "ServiceAccountsController", "start"]

log = logging.getLogger(__name__)

NAME = "serviceaccount-controller"
DEFAULT_SERVICE_ACCOUNT = "default"
WORKERS = 5


class ServiceAccountsController:
    """Ensures ``names`` (default: ``default``) exist in every active namespace."""

    def __init__(
        self,
        client: Client,
        namespaces: Informer[RawObject],
        service_accounts: Informer[RawObject],
        names: tuple[str, ...] = (DEFAULT_SERVICE_ACCOUNT,),
        workers: int = WORKERS,
    ) -> None:
        self.client = client
        self.namespace_informer = namespaces
        self.service_account_informer = service_accounts
        self.names = names
        self.workers = max(workers, 1)
        self._queue: WorkQueue[str] = WorkQueue("serviceaccount")
        namespaces.add_handler(self._on_namespace, lambda _, new: self._on_namespace(new))
        service_accounts.add_handler(on_delete=self._on_service_account_delete)

    def _on_namespace(self, namespace: RawObject) -> None:
        self._queue.add(str(namespace["metadata"]["name"]))

    def _on_service_account_delete(self, service_account: RawObject) -> None:
        meta = service_account["metadata"]
        if meta.get("name") in self.names:
            self._queue.add(str(meta.get("namespace") or ""))

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            if key is None:
                return  # shut down
            try:
                await self.sync_namespace(key)
                self._queue.forget(key)
            except asyncio.CancelledError:
                raise
            except KubeError as exc:
                log.warning("serviceaccount: namespace %r: %s", key, exc)
                self._queue.add_rate_limited(key)
            except Exception:  # a bug: log it, keep running
                log.exception("serviceaccount: syncing namespace %r failed", key)
                self._queue.add_rate_limited(key)
            finally:
                self._queue.done(key)

    async def sync_namespace(self, name: str) -> None:
        """Create the missing ServiceAccounts of namespace ``name`` (if it is active)."""
        namespace = self.namespace_informer.get(name)
        if namespace is None:
            return
        if (namespace.get("status") or {}).get("phase", "Active") != "Active":
            return  # being deleted: creating would be refused, and pointless
        for account in self.names:
            if self.service_account_informer.get(f"{name}/{account}") is not None:
                continue
            body = {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": account, "namespace": name},
            }
            with contextlib.suppress(AlreadyExists):
                await self.client.create(SERVICE_ACCOUNTS, body, name)


def start(ctx: ControllerContext) -> ServiceAccountsController:
    """The ServiceAccounts controller's init function for the controller manager."""
    return ServiceAccountsController(
        ctx.client(NAME),
        ctx.informers.informer(NAMESPACES),
        ctx.informers.informer(SERVICE_ACCOUNTS),
    )
