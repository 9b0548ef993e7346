"""The live scheduler: informers feed the cache and the queue; one loop pops pods and
runs scheduling cycles; binding tasks run beside it.

Data flow (ARCHITECTURE.md, "Data flow in the live scheduler")::

    API server ─watch─► informers ─► EventHandlers ─► Cache / SchedulingQueue
    loop: pop ─► schedule_one or a gang's group cycle (serial) ─► binding task (concurrent)

Metrics are recorded in :attr:`Scheduler.metrics` (``scheduler/metrics.py``): the
frameworks, the queue and the cache report to it. Assumed pods expire only with a TTL
(upstream's is 0: never); the cleanup loop checks every second. The health and metrics
endpoints (``scheduler/endpoints.py``) read :attr:`Scheduler.alive`,
:attr:`Scheduler.synced` and :meth:`Scheduler.health_problems`. The configuration's
``extenders`` are called over HTTP (``extender.client_schedule.ExtenderSet``) by every
profile.

Three clients, as kube-scheduler has: the one given (informers, bindings, status
patches), one derived for events (its own token bucket: a burst of FailedScheduling
events cannot delay a binding), and the leader elector's, on a thread of its own
(``scheduler/electionthread.py``). Shutdown is bounded: in-flight bindings get
:data:`SHUTDOWN_GRACE` seconds, then are cancelled, and only then is the Lease released.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import urlsplit

from kubesched.config import KubeSchedulerConfiguration
from kubesched.extender.client import RawStore
from kubesched.extender.client_schedule import ExtenderSet, with_ignored_extended_resources
from kubesched.framework.interface import Status
from kubesched.framework.nominator import Nominator
from kubesched.framework.registry import Registry
from kubesched.framework.schedule import build_profiles
from kubesched.framework.types import QueuedPodInfo
from kubesched.framework.waiting_pods import WaitingPodsMap
from kubesched.kube import Client, Informer
from kubesched.kube.resources import NODES, PODS, Resource
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.scheduler.backend.cache import Cache
from kubesched.scheduler.backend.queue import SchedulingQueue
from kubesched.scheduler.clusterclient import LiveClusterClient, finish_tasks
from kubesched.scheduler.electionthread import ElectionThread
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.events import EventBroadcaster
from kubesched.scheduler.leaderelection import LeaderElector
from kubesched.scheduler.listers import InformerClusterLister
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.schedule_group import schedule_next
from kubesched.scheduler.schedule_one import REASON_UNSCHEDULABLE, update_condition
from kubesched.scheduler.statuswriter import PodStatusWriter

__all__ = [
    "CLEANUP_PERIOD",
    "DURATION_TO_EXPIRE_ASSUMED_POD",
    "LEADER_ELECTION_NAME",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "PRE_BIND_WORKERS",
    "SHUTDOWN_GRACE",
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
#: Seconds that in-flight bindings and writes get to finish on shutdown before they are
#: cancelled (kube-scheduler exits at once; finishing what was started spares the next
#: leader a round of conflicts, waiting longer would only delay the hand-over).
SHUTDOWN_GRACE = 3.0
#: Worker threads for PreBind plugins: as many pods may be in PreBind at once (waiting for
#: their volumes, say); more wait for a free thread.
PRE_BIND_WORKERS = 64
#: The ``name`` label of ``leader_election_master_status``: the component, as
#: kube-scheduler's ``LeaderElectionConfig.Name``, whatever the Lease is called.
LEADER_ELECTION_NAME = "kube-scheduler"

log = logging.getLogger(__name__)

#: The HTTP method of each verb (``rest_client_requests_total`` counts by method).
_HTTP_METHODS = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}

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
        #: PodScheduled conditions and nominations, one patch per pod at a time.
        self.status_writer = PodStatusWriter(client)
        #: The events' own client (kube-scheduler's separate event client).
        self.event_client = client.derive("events") if isinstance(client, Client) else client
        #: Scheduled / FailedScheduling / Preempted events, written in the background.
        self.events = EventBroadcaster(self.event_client)
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
        if self.queue.gangs:
            # The gangs' placed members are the pods the cache counts on nodes.
            self.cache.on_pod = self._pod_counted
            self.queue.on_quorum_gated = self._quorum_gated
        for fwk in self.frameworks.values():
            fwk.recorder = self.metrics
        self._sampler = random.Random()
        #: True while :meth:`run` runs (``/healthz``); ``synced`` once informers have
        #: listed (``/readyz``).
        self.alive = False
        self.synced = False
        self.handlers = EventHandlers(self.cache, self.queue, self.waiting_pods)
        self.handlers.register(self.pod_informer, self.node_informer)
        self.handlers.register_storage(self.lister)
        self.handlers.register_dra(self.lister)
        self.handlers.register_scheduling(self.lister)
        if self.extenders is not None:
            self.pod_informer.add_handler(on_delete=self.raw.remove_pod)
            self.node_informer.add_handler(on_delete=lambda node: self.raw.remove_node(node.name))
        #: Pods bound by this scheduler since it started.
        self.bound = 0
        #: Worker threads for PreBind plugins that do I/O (made on first use).
        self._pre_bind_executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Loops that run until shutdown (not waited for like binding tasks).
        self._background: list[asyncio.Task[Any]] = []
        self._stopping = False
        self._stop_event = asyncio.Event()
        # Two replicas must never both bind: only the holder of the Lease schedules.
        election = config.leader_election
        self.election: ElectionThread | None = None
        self.elector: LeaderElector | None = None
        self._leading = asyncio.Event()
        if election.leader_elect:
            self.election = ElectionThread(
                client,
                election,
                on_started_leading=self._leadership_started,
                on_stopped_leading=self._leadership_ended,
            )
            self.elector = self.election.elector
            self.metrics.leader_status.set(0, LEADER_ELECTION_NAME)
        #: The clients whose requests ``/metrics`` counts, by role.
        self.clients: dict[str, Client] = {}
        if isinstance(client, Client) and isinstance(self.event_client, Client):
            self.clients = {"scheduler": client, "events": self.event_client}
            if self.election is not None:
                self.clients["leader-election"] = self.election.client
        self.metrics.api_requests.source = self._api_requests
        self.metrics.rest_client_requests.source = self._rest_client_requests
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
        self.cluster_client.attach()
        for informer in self.informers:
            # PreBind plugins waiting on informer-fed state re-check it on every change.
            changed = self.cluster_client.changed
            informer.add_handler(changed, changed, changed)
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
        self.alive = True
        try:
            await self.start()
            if not self.synced:  # stopped before the first sync
                return
            self._background.append(asyncio.create_task(self.events.run(), name="events"))
            if self.election is not None:
                self.election.start()
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
                await schedule_next(self, info)
                # pop() does not yield when a pod is ready: let informers and binding
                # tasks run between cycles.
                await asyncio.sleep(0)
        finally:
            self.alive = False
            await self.shutdown()
            # The lease is released only after in-flight bindings have ended.
            if self.election is not None:
                self.election.stop()
                await self.election.wait()
                if self.election.crashed:
                    self.leadership_lost = True  # exit non-zero: the log says why

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

    def _pod_counted(self, pod: Pod, counted: bool) -> None:
        if counted:
            self.queue.groups.placed_added(pod)
        else:
            self.queue.groups.placed_removed(pod)

    def _quorum_gated(self, info: QueuedPodInfo, status: Status) -> None:
        """A gang member waits for its quorum to exist: say so on the pod (once per
        change of the message, as the condition is only written when it changes)."""
        pod = info.pod
        message = status.message
        if pod.scheduled_condition != ("False", REASON_UNSCHEDULABLE, message):
            self.record_event(pod, "Warning", "FailedScheduling", "Scheduling", message)
            update_condition(self, pod, REASON_UNSCHEDULABLE, message)

    def sample_plugin_metrics(self) -> bool:
        """Whether this cycle times each plugin (upstream: 10% of the cycles)."""
        return self._sampler.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT

    def _cache_size(self) -> dict[tuple[str, ...], float]:
        return {
            ("assumed_pods",): self.cache.assumed_count(),
            ("nodes",): self.cache.node_count(),
            ("pods",): self.cache.pod_count(),
        }

    def _api_requests(self) -> dict[tuple[str, ...], float]:
        counts: dict[tuple[str, ...], float] = {}
        for role, client in self.clients.items():
            for (verb, resource, code), n in dict(client.requests).items():
                counts[role, verb, resource, code] = n
        return counts

    def _rest_client_requests(self) -> dict[tuple[str, ...], float]:
        counts: dict[tuple[str, ...], float] = {}
        for client in self.clients.values():
            host = urlsplit(client.config.server).netloc.rpartition("@")[2]
            for (verb, _, code), n in dict(client.requests).items():
                key = (code, _HTTP_METHODS.get(verb, verb.upper()), host)
                counts[key] = counts.get(key, 0) + n
        return counts

    def _unschedulable_by_plugin(self) -> dict[tuple[str, ...], float]:
        counts: dict[tuple[str, ...], float] = {}
        for info in self.queue.unschedulable:
            for plugin in info.unschedulable_plugins | info.pending_plugins:
                key = (plugin, info.pod.scheduler_name)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def health_problems(self) -> list[str]:
        """What fails the ``/healthz`` and ``/readyz`` checks besides the loop and the
        sync: the leader election check (``leaderElection``: a leader that has not
        renewed for leaseDuration + 20 s)."""
        problem = self.election.check() if self.election is not None else None
        return [f"leaderElection: {problem}"] if problem else []

    async def _wait_for_leadership(self) -> bool:
        """Wait until this replica leads (True), is asked to stop, or its elector ended
        without leading (False)."""
        assert self.election is not None
        leading = asyncio.ensure_future(self._leading.wait())
        stopping = asyncio.ensure_future(self._stop_event.wait())
        ended = asyncio.ensure_future(self.election.wait())
        waiters = {leading, stopping, ended}
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waiters:
            waiter.cancel()
        return self._leading.is_set() and not self._stopping

    def _leadership_started(self) -> None:
        self.metrics.leader_status.set(1, LEADER_ELECTION_NAME)
        self._leading.set()

    def _leadership_ended(self) -> None:
        self.metrics.leader_status.set(0, LEADER_ELECTION_NAME)
        self._leading.clear()
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

    async def shutdown(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Let in-flight bindings and writes finish for at most ``grace`` seconds (then
        cancel them), write queued events for at most a second, stop the informers."""
        self.queue.close()
        # Pods held at Permit would keep their binding tasks up to their timeouts.
        for waiting in self.waiting_pods:
            waiting.reject("", "scheduler stopped")
        deadline = asyncio.get_running_loop().time() + grace
        await finish_tasks(self._tasks, deadline)
        # PreBind threads still blocked in an API call or a wait get Unavailable now.
        self.cluster_client.close()
        if self._pre_bind_executor is not None:
            self._pre_bind_executor.shutdown(wait=False, cancel_futures=True)
            self._pre_bind_executor = None
        await self.cluster_client.drain(deadline)
        await self.status_writer.drain(deadline)
        await self.events.drain()
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
        # Only now: the events' task (one of the background loops) used it until here.
        if self.event_client is not self.client and isinstance(self.event_client, Client):
            await self.event_client.close()
        for informer in self.informers:
            await informer.stop()
        if self.extenders is not None:
            await self.extenders.close()

    # --- helpers for the cycles -------------------------------------------------------

    @property
    def pre_bind_executor(self) -> concurrent.futures.ThreadPoolExecutor:
        """The worker threads PreBind plugins run in (upstream runs each binding cycle in
        a goroutine; a PreBind may wait minutes for a volume, so the pool is wide)."""
        if self._pre_bind_executor is None:
            self._pre_bind_executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=PRE_BIND_WORKERS, thread_name_prefix="prebind"
            )
        return self._pre_bind_executor

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
