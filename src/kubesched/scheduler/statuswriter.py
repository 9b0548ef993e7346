"""Pod status patches written in the background, at most one per pod at a time.

Every failed scheduling attempt may patch its pod's status (the PodScheduled condition,
``nominatedNodeName``). Writing them as independent tasks lets a burst of attempts (a
thousand pods that fit nowhere, retried on every cluster event) pile up writes faster
than the client's token bucket lets them out: an unbounded queue of stale patches.
kube-scheduler's API dispatcher (``pkg/scheduler/backend/api_dispatcher``, the
``SchedulerAsyncAPICalls`` feature) keeps one call per object instead, and so does
:class:`PodStatusWriter`:

- a patch for a pod with a patch still waiting is merged into the waiting one (conditions
  by type, the newer winning; other status fields the newer), so the queue holds at most
  one patch per pod, however often the pod is retried;
- a patch for a pod whose patch is in flight waits until that one is done, then goes;
- at most ``concurrency`` patches are in flight; the rest wait in arrival order.

A patch that fails is logged and dropped (the next attempt writes the condition again), as
upstream's dispatcher reports the error and moves on. A pod that is gone (404) costs
nothing more.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

from kubesched.kube import Client, KubeError, NotFound
from kubesched.scheduler.clusterclient import finish_tasks

__all__ = ["DEFAULT_CONCURRENCY", "PodStatusWriter", "merge_status_patches"]

log = logging.getLogger(__name__)

#: Patches in flight at once (the client's token bucket paces them further).
DEFAULT_CONCURRENCY = 16

_Key = tuple[str, str]  # namespace, name


def merge_status_patches(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The status of strategic patch ``old`` then ``new`` as one patch: conditions merged
    by type (``new``'s replacing ``old``'s of the same type, keeping ``old``'s
    ``lastTransitionTime`` when ``new`` leaves it out), other fields ``new``'s."""
    merged = {**old, **new}
    if "conditions" in old and "conditions" in new:
        by_type = {c["type"]: dict(c) for c in old["conditions"]}
        for condition in new["conditions"]:
            previous = by_type.get(condition["type"], {})
            combined = dict(condition)
            if "lastTransitionTime" not in combined and "lastTransitionTime" in previous:
                combined["lastTransitionTime"] = previous["lastTransitionTime"]
            by_type[condition["type"]] = combined
        merged["conditions"] = list(by_type.values())
    return merged


class PodStatusWriter:
    """Writes pod status patches through ``client``, coalesced per pod (see the module
    docstring). Call :meth:`patch` from the event loop; :meth:`drain` on shutdown."""

    def __init__(self, client: Client, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        self.client = client
        self.concurrency = max(1, concurrency)
        #: The waiting patch's status of each pod with one waiting.
        self._waiting: dict[_Key, dict[str, Any]] = {}
        self._order: collections.deque[_Key] = collections.deque()
        self._in_flight: set[_Key] = set()
        self._workers: set[asyncio.Task[None]] = set()
        #: Patches merged into a waiting one instead of being queued.
        self.merged = 0
        #: Patches that failed (logged).
        self.failed = 0

    def __len__(self) -> int:
        """Patches waiting (not in flight)."""
        return len(self._waiting)

    def patch(self, namespace: str, name: str, status: dict[str, Any]) -> None:
        """Queue a strategic merge patch of the pod's ``status``; never blocks."""
        key = (namespace, name)
        waiting = self._waiting.get(key)
        if waiting is not None:
            self._waiting[key] = merge_status_patches(waiting, status)
            self.merged += 1
            return
        self._waiting[key] = status
        if key not in self._in_flight:
            self._order.append(key)
            self._wake()

    async def drain(self, deadline: float) -> None:
        """Write what waits until ``deadline`` (the loop's clock); cancel the rest."""
        await finish_tasks(self._workers, deadline)
        self._waiting.clear()
        self._order.clear()

    def _wake(self) -> None:
        if len(self._workers) < self.concurrency:
            worker = asyncio.get_running_loop().create_task(self._work(), name="pod-status")
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)

    async def _work(self) -> None:
        while self._order:
            key = self._order.popleft()
            status = self._waiting.pop(key)
            self._in_flight.add(key)
            try:
                await self.client.patch_pod_status(key[0], key[1], {"status": status})
            except NotFound:
                pass  # the pod is gone: nothing to tell it
            except KubeError as err:
                self.failed += 1
                log.warning("patching the status of pod %s/%s failed: %s", *key, err)
            finally:
                self._in_flight.discard(key)
                if key in self._waiting:
                    # A newer patch arrived while this one was in flight: its turn now.
                    self._order.append(key)
