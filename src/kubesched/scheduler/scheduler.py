"""The live scheduler: informers feed the cache and the queue; one loop pops pods and
runs scheduling cycles; binding tasks run beside it.

Data flow (ARCHITECTURE.md, "Data flow in the live scheduler")::

    API server ─watch─► informers ─► EventHandlers ─► Cache / SchedulingQueue
    loop: pop ─► schedule_one (serial) ─► binding task (concurrent)

Metrics are recorded in :attr:`Scheduler.metrics` (``scheduler/metrics.py``): the
frameworks, the queue and the cache report to it. Assumed pods expire only with a TTL
(upstream's is 0: never); the cleanup loop checks every second. The health and metrics
endpoints (``scheduler/endpoints.py``) read :attr:`Scheduler.alive` and
:attr:`Scheduler.synced`. The configuration's ``extenders`` are called over HTTP
(``extender.client_schedule.ExtenderSet``) by every profile.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from kubesched.config import KubeSchedulerConfiguration
from kubesched.extender.client import RawStore
from kubesched.extender.client_schedule import ExtenderSet, with_ignored_extended_resources
from kubesched.framework.nominator import Nominator
from kubesched.framework.registry import Registry
from kubesched.framework.schedule import build_profiles
from kubesched.framework.waiting_pods import WaitingPodsMap
from kubesched.kube import Client, Informer
from kubesched.kube.resources import NODES, PODS, Resource
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import Cache
from kubesched.scheduler.backend.queue import SchedulingQueue
from kubesched.scheduler.clusterclient import LiveClusterClient
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.events import EventBroadcaster
from kubesched.scheduler.leaderelection import LeaderElector
from kubesched.scheduler.listers import InformerClusterLister
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.schedule_one import schedule_one

__all__ = [
    "CLEANUP_PERIOD",
    "DURATION_TO_EXPIRE_ASSUMED_POD",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "LoopTimers",
    "Scheduler",
]

#: Upstream's ``durationToExpireAssumedPod``: 0, assumed pods never expire
#: (kubernetes#106361); tests and operators may set a TTL.
DURATION_TO_EXPIRE_ASSUMED_POD = 0.0
#: How often the cache's assumed pods are checked for expiry (upstream: 1 s).
CLEANUP_PERIOD = 1.0
#: Upstream's ``pluginMetricsSamplePercent``: the cycles whose plugins are timed.
PLUGIN_METRICS_SAMPLE_PERCENT = 10

log = logging.getLogger(__name__)

T = TypeVar("T")


class LoopTimers:
    """Permit timeouts on the running event loop."""

    def call_later(self, delay: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(delay, callback)


class Scheduler:
    """Schedules the pods of ``config``'s profiles on the cluster behind ``client``.

    **columnar**: evaluate in-tree plugins over all nodes at once (numpy).
    **rng**: the random source for ties (seed it for reproducible runs).
    **sync_timeout**: seconds to wait for the informers' first lists.
    """

    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        registry: Registry,
        client: Client,
        *,
        columnar: bool = True,
        rng: random.Random | None = None,
        sync_timeout: float = 60.0,
        assumed_pod_ttl: float = DURATION_TO_EXPIRE_ASSUMED_POD,
    ) -> None:
        # Extenders' ignoredByScheduler resources are NodeResourcesFit's ignoredResources.
        config = with_ignored_extended_resources(config)
        self.config = config
        self.client = client
        self.sync_timeout = sync_timeout
        self.cluster_client = LiveClusterClient(client)
        #: Scheduled / FailedScheduling / Preempted events, written in the background.
        self.events = EventBroadcaster(client)
        self.cluster_client.events = self.events
        self.lister = InformerClusterLister(client)
        self.nominator = Nominator()
        #: Pods held at Permit, shared by the profiles; timeouts run on the event loop.
        self.waiting_pods = WaitingPodsMap(LoopTimers())
        self.frameworks, self.algorithms = build_profiles(
            config,
            registry,
            cluster=self.lister,
            client=self.cluster_client,
            nominator=self.nominator,
            rng=rng or random.Random(),
            columnar=columnar,
            waiting_pods=self.waiting_pods,
        )
        #: The configured extenders (None without any); they read the API objects
        #: that the informers keep in ``raw`` for them.
        self.raw = RawStore()
        self.extenders: ExtenderSet | None = None
        if config.extenders:
            self.extenders = ExtenderSet.from_config(config.extenders, self.raw)
            for fwk in self.frameworks.values():
                fwk.extenders = self.extenders
        self.cache = Cache(ttl=assumed_pod_ttl, columnar=columnar)
        # One nominator for the queue and the frameworks' handles.
        self.queue = SchedulingQueue.from_config(config, self.frameworks, nominator=self.nominator)
        self.pod_informer: Informer[Pod] = Informer(client, PODS)
        self.node_informer: Informer[Node] = Informer(client, NODES)
        if self.extenders is not None:
            self.pod_informer.resource = self._keeping_raw(PODS, self.raw.add_pod)
            self.node_informer.resource = self._keeping_raw(NODES, self.raw.add_node)
        #: Upstream's scheduler metrics; pending pods are read from the queue when scraped.
        self.metrics = SchedulerMetrics(self.queue.counts)
        self.metrics.cache_size.source = self._cache_size
        self.metrics.unschedulable_pods.source = self._unschedulable_by_plugin
        self.queue.on_incoming = self.metrics.incoming
        for fwk in self.frameworks.values():
            fwk.recorder = self.metrics
        self._sampler = random.Random()
        #: True while :meth:`run` runs (``/healthz``); ``synced`` once informers have
        #: listed (``/readyz``).
        self.alive = False
        self.synced = False
        self.handlers = EventHandlers(self.cache, self.queue, self.waiting_pods)
        self.handlers.register(self.pod_informer, self.node_informer)
        if self.extenders is not None:
            self.pod_informer.add_handler(on_delete=self.raw.remove_pod)
            self.node_informer.add_handler(on_delete=lambda node: self.raw.remove_node(node.name))
        #: Pods bound by this scheduler since it started.
        self.bound = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Loops that run until shutdown (not waited for like binding tasks).
        self._background: list[asyncio.Task[Any]] = []
        self._stopping = False
        self._stop_event = asyncio.Event()
        # Two replicas must never both bind: only the holder of the Lease schedules.
        election = config.leader_election
        self.elector: LeaderElector | None = (
            LeaderElector(client, election, on_stopped_leading=self._leadership_ended)
            if election.leader_elect
            else None
        )
        #: Set when leadership was lost while running (the process should exit non-zero).
        self.leadership_lost = False

    @staticmethod
    def _keeping_raw(resource: Resource[T], keep: Callable[[dict[str, Any]], None]) -> Resource[T]:
        """``resource`` decoding as before and handing each object's JSON to ``keep``:
        extenders are sent the full v1 objects, which the compact ones do not hold."""
        decode = resource.decode

        def decode_and_keep(raw: dict[str, Any]) -> T:
            obj = decode(raw)
            keep(raw)
            return obj

        return resource.with_decoder(decode_and_keep)

    @property
    def informers(self) -> list[Informer[Any]]:
        """Every informer; nodes first, so that the first pods find their nodes."""
        return [self.node_informer, self.pod_informer, *self.lister.informers]

    # --- running ----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the informers and wait until each has applied its first list, or until
        :meth:`stop` (a SIGTERM while the API server is unreachable must not wait for
        the sync timeout); TimeoutError if the sync takes longer than ``sync_timeout``."""
        for informer in self.informers:
            informer.start()
        synced = asyncio.ensure_future(
            asyncio.gather(*(i.has_synced.wait() for i in self.informers))
        )
        stopping = asyncio.ensure_future(self._stop_event.wait())
        try:
            await asyncio.wait(
                (synced, stopping), timeout=self.sync_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            stopping.cancel()
        if not synced.done():
            synced.cancel()
            if self._stopping:
                return
            raise TimeoutError("the informers did not sync in time")
        synced.result()
        self.synced = True

    async def run(self) -> None:
        """Start, then schedule until :meth:`stop` (or cancellation); then clean up."""
        elector_task: asyncio.Task[None] | None = None
        self.alive = True
        try:
            await self.start()
            if not self.synced:  # stopped before the first sync
                return
            self._background.append(asyncio.create_task(self.events.run(), name="events"))
            if self.elector is not None:
                elector_task = asyncio.create_task(self.elector.run(), name="leader-election")
                if not await self._wait_for_leadership():
                    return
            cleanup = asyncio.create_task(self.cleanup_assumed_pods(), name="cache-cleanup")
            self._background.append(cleanup)
            log.info(
                "scheduling for %s on %d node(s)",
                ", ".join(self.frameworks),
                self.cache.node_count(),
            )
            while not self._stopping:
                info = await self.queue.pop()
                if info is None:
                    break
                await schedule_one(self, info)
                # pop() does not yield when a pod is ready: let informers and binding
                # tasks run between cycles.
                await asyncio.sleep(0)
        finally:
            self.alive = False
            await self.shutdown()
            # The lease is released only after in-flight bindings have finished.
            if self.elector is not None and elector_task is not None:
                self.elector.stop()
                await asyncio.gather(elector_task, return_exceptions=True)

    async def cleanup_assumed_pods(self, period: float = CLEANUP_PERIOD) -> None:
        """Upstream's cache cleanup loop: every ``period`` seconds, expire the assumed
        pods whose binding finished more than the TTL ago and were never confirmed."""
        while True:
            await asyncio.sleep(period)
            for pod in self.cache.cleanup_assumed_pods():
                log.warning(
                    "assumed pod %s expired: bound to %s but never confirmed",
                    pod.key,
                    pod.node_name,
                )

    def sample_plugin_metrics(self) -> bool:
        """Whether this cycle times each plugin (upstream: 10% of the cycles)."""
        return self._sampler.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT

    def _cache_size(self) -> dict[tuple[str, ...], float]:
        return {
            ("assumed_pods",): self.cache.assumed_count(),
            ("nodes",): self.cache.node_count(),
            ("pods",): self.cache.pod_count(),
        }

    def _unschedulable_by_plugin(self) -> dict[tuple[str, ...], float]:
        counts: dict[tuple[str, ...], float] = {}
        for info in self.queue.unschedulable:
            for plugin in info.unschedulable_plugins | info.pending_plugins:
                key = (plugin, info.pod.scheduler_name)
                counts[key] = counts.get(key, 0) + 1
        return counts

    async def _wait_for_leadership(self) -> bool:
        """Wait until this replica leads (True) or is asked to stop (False)."""
        assert self.elector is not None
        leading = asyncio.ensure_future(self.elector.leading.wait())
        stopping = asyncio.ensure_future(self._stop_event.wait())
        await asyncio.wait({leading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (leading, stopping):
            waiter.cancel()
        return self.elector.leading.is_set() and not self._stopping

    def _leadership_ended(self) -> None:
        if self.elector is not None and self.elector.lost:
            # Upstream exits at once when it loses the lease: bindings in flight may now
            # race the new leader's, so they are cancelled rather than finished.
            self.leadership_lost = True
            for task in tuple(self._tasks):
                task.cancel()
        self.stop()

    def stop(self) -> None:
        """Ask :meth:`run` to end after the current cycle (safe from signal handlers)."""
        self._stopping = True
        self._stop_event.set()
        self.queue.close()

    async def shutdown(self) -> None:
        """Let in-flight bindings and writes finish, then stop the informers."""
        self.queue.close()
        # Pods held at Permit would keep their binding tasks up to their timeouts.
        for waiting in self.waiting_pods:
            waiting.reject("", "scheduler stopped")
        while self._tasks:
            await asyncio.gather(*tuple(self._tasks), return_exceptions=True)
        await self.cluster_client.drain()
        await self.events.drain()
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
        for informer in self.informers:
            await informer.stop()
        if self.extenders is not None:
            await self.extenders.close()

    # --- helpers for the cycles -------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run ``coro`` as a tracked background task (its failure is logged)."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("%s failed: %s", task.get_name(), task.exception())

    def record_event(
        self, pod: Pod, event_type: str, reason: str, action: str, message: str
    ) -> None:
        """Record an events.k8s.io/v1 Event about ``pod``, reported by its profile
        (upstream's per-profile recorder); never blocks (see ``scheduler/events.py``)."""
        self.events.eventf(pod, event_type, reason, action, message, pod.scheduler_name)
