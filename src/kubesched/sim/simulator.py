"""The policy lab's engine: schedule a workload onto a cluster held in memory.

It runs the live scheduler's logic in one process and in simulated order: a queue sorted
by the profile's QueueSort, one scheduling cycle at a time, preemption that deletes its
victims, and pods rejected earlier retried when an event their rejecting plugins
registered for happens (a pod bound or deleted). There is no clock: backoff is not
simulated, and a pod is retried as soon as an event may help it. A configuration with
``extenders`` is refused (``refuse_extenders``): only the live scheduler calls them.

Permit's Wait is simulated in-process: a held pod stays assumed on its node while the
next pods are scheduled, and its binding cycle runs as soon as every waiting plugin has
allowed it (e.g. a gang plugin that allows its group when the last member arrives). When
no pod can make progress and some are still held, the clock jumps to the next Permit
timeout, which rejects its pod (``rejected due to timeout after waiting ...``).

Gangs (a profile with a PodGroupPlugin, such as Coscheduling): a member whose group has
fewer members in the files than its quorum is held from the start (no pod is added
during a run); the first member popped takes its pending siblings out of the queue and
``framework.groupcycle.schedule_group`` places a quorum in one cycle, or none, as the
live scheduler does. With no clock, a failed group's backoff is not waited out: its
members retry when an event may help one of them.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.config import ConfigError, FieldError, KubeSchedulerConfiguration
from kubesched.framework.apiclient import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    APIResource,
    MemoryAPIClient,
    NotFound,
    PatchType,
    RawObject,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.groupcycle import schedule_group, sort_members
from kubesched.framework.handle import Nominator, StaticClusterLister
from kubesched.framework.interface import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    PodGroupInfo,
    QueueingHint,
    Status,
)
from kubesched.framework.podgroups import PodGroupTracker, quorum_message
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework
from kubesched.framework.schedule import (
    FitError,
    SchedulingError,
    TieBreaker,
    build_profiles,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeToStatus, QueuedPodInfo
from kubesched.framework.waiting_pods import VirtualTimers, WaitingPodsMap
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.sim.volumes import SimulatedVolumes

#: A pod bound in the simulation — the event that may help pods rejected for affinity.
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)


@dataclass
class Placement:
    """How one pod's scheduling ended."""

    pod: Pod
    node: str | None
    message: str | None
    preempted: list[str] = field(default_factory=list)
    attempts: int = 0
    #: Every node's verdict in the last failed attempt (None once placed).
    statuses: NodeToStatus | None = field(default=None, repr=False, compare=False)
    #: The best-scored nodes that tied when the pod was placed (with per-pod tie-break).
    tied: tuple[str, ...] = ()


#: How the simulator breaks ties among the best nodes: one random source for the whole
#: run (as the live scheduler), or a source per pod seeded by the run's seed and the
#: pod's key, so that a pod facing the same tied nodes under two configurations picks the
#: same one (``compare``).
TIE_BREAKS = ("random", "per-pod")


def per_pod_tie_breaker(seed: int | None) -> TieBreaker:
    """Pick among ``tied`` (sorted names) by a draw seeded with the seed and pod key."""

    def pick(pod: Pod, tied: Sequence[str]) -> str:
        return tied[random.Random(f"{seed}/{pod.key}").randrange(len(tied))]

    return pick


def refuse_extenders(config: KubeSchedulerConfiguration) -> None:
    """Raise ConfigError if ``config`` lists extenders: the simulator is in-process and
    offline (it may not reach the extender package, nor the network), and placing pods
    without the extenders would silently answer another question."""
    if config.extenders:
        detail = (
            "the simulator does not call extenders; remove `extenders` to simulate the "
            "profiles alone, or schedule a cluster with `kubesched run`"
        )
        raise ConfigError(config.source, [FieldError.forbidden("extenders", detail)])


class _Queued:
    """Heap entry ordered by the profile's QueueSort; ``alive`` turns False when a group
    cycle took the pod out of the queue with its group (skipped when popped)."""

    __slots__ = ("alive", "info", "less")

    def __init__(self, info: QueuedPodInfo, less: Framework) -> None:
        self.info = info
        self.less = less
        self.alive = True

    def __lt__(self, other: _Queued) -> bool:
        return self.less.queue_sort_less(self.info, other.info)


class Simulator:
    """Holds the simulated cluster and schedules pods onto it."""

    def __init__(
        self,
        nodes: Sequence[Node],
        pods: Iterable[Pod],
        config: KubeSchedulerConfiguration,
        registry: Registry,
        *,
        cluster: StaticClusterLister | None = None,
        seed: int | None = None,
        columnar: bool = True,
        tie_break: str = "random",
        storage: Iterable[dict[str, Any]] = (),
    ) -> None:
        refuse_extenders(config)
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break: Unsupported value: {tie_break!r}: {TIE_BREAKS}")
        self.rng = random.Random(seed)
        # One snapshot, kept up to date pod by pod: the simulation is serial, so every
        # cycle sees the cluster as the previous one left it.
        self._snapshot = Snapshot.from_objects(nodes, pods, columnar=columnar)
        self.nominator = Nominator()
        #: The simulation's clock for Permit timeouts: it moves only when no pod can
        #: make progress, straight to the next timeout.
        self.timers = VirtualTimers()
        self.waiting_pods = WaitingPodsMap(self.timers)
        self.cluster = cluster or StaticClusterLister()
        self.frameworks, self.algorithms = build_profiles(
            config,
            registry,
            cluster=self.cluster,
            client=self,
            nominator=self.nominator,
            rng=self.rng,
            columnar=columnar,
            waiting_pods=self.waiting_pods,
        )
        if tie_break == "per-pod":
            for algo in self.algorithms.values():
                algo.tie_breaker = per_pod_tie_breaker(seed)
        #: Called with each pod before each of its attempts (the lab's ``--explain``).
        self.before_attempt: Callable[[Pod], None] | None = None
        self._events: list[tuple[ClusterEvent, object, object]] = []
        #: The simulated API objects PreBind plugins read and write (no API server here).
        self.api = MemoryAPIClient()
        #: The storage objects (``storage``: the cluster file's, as written) and what the
        #: PV controller and provisioner would do with them; the lister follows them.
        self.volumes = SimulatedVolumes(self.api, self.cluster, self._node_labels)
        self.volumes.load(storage)
        self._deleted: list[Pod] = []
        #: The gangs' pending and placed members (profiles with a PodGroupPlugin).
        self.groups = PodGroupTracker(self._group_of)
        self._gangs = any(f.pod_group_plugin is not None for f in self.frameworks.values())
        if self._gangs:
            for info in self._snapshot.list():
                for pi in info.pods:
                    self.groups.placed_added(pi.pod)
        #: Pods held at Permit: their framework, cycle state, pod and assumed pod.
        self._waiting: dict[str, tuple[Framework, CycleState, Pod, Pod]] = {}

    # --- ClusterClient ---------------------------------------------------------------

    def bind(self, pod: Pod, node_name: str) -> None:
        """The binding is already reflected in the snapshot by assume; confirm it."""
        if self._snapshot.find(node_name) is None:
            raise LookupError(f'node "{node_name}" not found')

    def delete_pod(self, pod: Pod, reason: str, preemptor: Pod | None = None) -> None:
        """Remove a preemption victim from its node."""
        if self._snapshot.remove_pod(pod):
            if self._gangs:
                self.groups.placed_removed(pod)
            self._deleted.append(pod)
            self._events.append((ASSIGNED_POD_DELETE, pod, None))

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Nominations are kept in the nominator; nothing else to record."""
        return None

    def _group_of(self, pod: Pod) -> PodGroupInfo | None:
        fwk = self.frameworks.get(pod.scheduler_name)
        return fwk.pod_group(pod) if fwk is not None else None

    def _node_labels(self, name: str) -> Mapping[str, str] | None:
        info = self._snapshot.find(name)
        return info.node.labels if info is not None else None

    # The blocking API calls of PreBind plugins go to the in-memory store.

    def get(self, resource: APIResource, name: str, namespace: str = "") -> RawObject:
        try:
            return self.api.get(resource, name, namespace)
        except NotFound:
            decoded = (
                self.cluster.persistent_volume(name)
                if resource == PERSISTENT_VOLUMES
                else self.cluster.persistent_volume_claim(namespace, name)
                if resource == PERSISTENT_VOLUME_CLAIMS
                else None
            )
            if decoded is None:
                raise
            # Given decoded only (ClusterObjects.storage without storage_raw): readable
            # by the plugins, but there is nothing to write back.
            raise NotFound(
                f"{resource.kind} {name!r} was given decoded only: the simulator needs the "
                "storage objects as written too (ClusterObjects.storage_raw) to bind it"
            ) from None

    def create(self, resource: APIResource, body: RawObject) -> RawObject:
        return self.api.create(resource, body)

    def update(self, resource: APIResource, body: RawObject) -> RawObject:
        return self.api.update(resource, body)

    def update_status(self, resource: APIResource, body: RawObject) -> RawObject:
        return self.api.update_status(resource, body)

    def patch(
        self,
        resource: APIResource,
        name: str,
        patch: object,
        namespace: str = "",
        *,
        patch_type: PatchType = "merge",
        subresource: str = "",
    ) -> RawObject:
        return self.api.patch(
            resource, name, patch, namespace, patch_type=patch_type, subresource=subresource
        )

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """The store's handlers (simulated controllers) acted at write time; no time
        passes in a simulation, so the answer is now's."""
        return self.api.wait_until(condition, timeout)

    # --- scheduling ------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The cluster as the next cycle sees it."""
        return self._snapshot

    def run(
        self,
        pending: Sequence[Pod],
        observe: Callable[[Pod, float], None] | None = None,
    ) -> list[Placement]:
        """Schedule ``pending`` (in file order for pods of equal rank) until no pod can
        make progress; returns one Placement per pod, in the order their scheduling ended.

        ``observe(pod, seconds)`` is called after every attempt with its duration.
        """
        outcomes: dict[str, Placement] = {}
        ended: dict[str, int] = {}
        seq = 0
        active: list[_Queued] = []
        entries: dict[str, _Queued] = {}
        unschedulable: dict[str, tuple[QueuedPodInfo, frozenset[str]]] = {}
        current: dict[str, Pod] = {}
        first = next(iter(self.frameworks.values()), None)

        def push(info: QueuedPodInfo) -> None:
            assert first is not None
            entry = _Queued(info, first)
            entries[info.pod.key] = entry
            heapq.heappush(active, entry)

        if self._gangs:
            for pod in pending:
                if pod.scheduler_name in self.frameworks:
                    self.groups.pending_added(pod)

        for index, pod in enumerate(pending):
            current[pod.key] = pod
            outcomes[pod.key] = Placement(pod, None, None)
            fwk = self.frameworks.get(pod.scheduler_name)
            if fwk is None or first is None:
                outcomes[
                    pod.key
                ].message = (
                    f'no profile serves schedulerName "{pod.scheduler_name}"; the pod stays pending'
                )
                ended[pod.key] = seq = seq + 1
                continue
            info = QueuedPodInfo(pod, timestamp=float(index))
            status = fwk.run_pre_enqueue_plugins(pod)
            if status is None and self._gangs:
                status = self._quorum_gate(pod)
            if status is not None and status.code is not Code.SUCCESS:
                outcomes[pod.key].message = status.message
                ended[pod.key] = seq = seq + 1
                continue
            push(info)

        max_attempts = 10 * len(pending) + 100
        attempts = 0

        def end(pod: Pod, bound: Pod | None, message: str, rejectors: frozenset[str]) -> None:
            """Record how an attempt (or a wait at Permit) ended."""
            nonlocal seq
            placement = outcomes[pod.key]
            seq += 1
            ended[pod.key] = seq
            if bound is not None:
                placement.node = bound.node_name
                placement.message = None
                placement.statuses = None
                current[pod.key] = bound
                self._events.append((ASSIGNED_POD_ADD, None, bound))
                if self._gangs:
                    self.groups.pending_removed(pod)
                return
            placement.message = message
            qinfo = infos[pod.key]
            nominated = self.nominator.nominated_node(pod)
            if nominated != pod.nominated_node_name:
                current[pod.key] = pod.evolve(nominated_node_name=nominated)
                qinfo.pod = current[pod.key]
            qinfo.unschedulable_plugins = rejectors
            unschedulable[pod.key] = (qinfo, rejectors)

        def take(key: str) -> QueuedPodInfo | None:
            """Take a pending pod out of the queue (for its group's cycle)."""
            entry = entries.pop(key, None)
            if entry is not None:
                entry.alive = False
                return entry.info
            found = unschedulable.pop(key, None)
            return found[0] if found is not None else None

        infos: dict[str, QueuedPodInfo] = {}
        while attempts < max_attempts:
            if not active:
                # Nothing else can run: time passes until a Permit timeout fires.
                if not self._waiting or not self.timers.advance():
                    break
            else:
                entry = heapq.heappop(active)
                if not entry.alive:
                    continue
                del entries[entry.info.pod.key]
                attempts += 1
                qinfo = entry.info
                pod = current[qinfo.pod.key]
                qinfo.pod = pod
                group = self._group_of(pod) if self._gangs else None
                if group is not None and self.groups.placed(group.key) < group.min_member:
                    members = [qinfo]
                    for sibling in self.groups.pending(group.key):
                        if (
                            sibling.key != pod.key
                            and sibling.key not in self._waiting
                            and sibling.scheduler_name == pod.scheduler_name
                        ):
                            taken = take(sibling.key)
                            if taken is not None:
                                taken.pod = current[sibling.key]
                                members.append(taken)
                    attempts += len(members) - 1
                    for result in self._group_attempt(group, members, outcomes, infos, observe):
                        if isinstance(result, QueuedPodInfo):
                            push(result)
                        else:
                            end(*result)
                else:
                    qinfo.attempts += 1
                    infos[pod.key] = qinfo
                    placement = outcomes[pod.key]
                    placement.attempts = qinfo.attempts
                    if self.before_attempt is not None:
                        self.before_attempt(pod)
                    started = time.perf_counter()
                    outcome = self._attempt(pod, placement)
                    if observe is not None:
                        observe(pod, time.perf_counter() - started)
                    if outcome is not None:
                        end(pod, *outcome)
            # Pods held at Permit whose wait ended (allowed by this attempt, or timed
            # out) finish their binding cycle now.
            for pod, bound, message, rejectors in self._finish_waiting():
                end(pod, bound, message, rejectors)
            # Events happen after the attempt ends, as they would reach a live queue.
            for key in self._move_on_events(unschedulable, current):
                moved, _ = unschedulable.pop(key)
                push(moved)
            self._events.clear()

        for key in self._waiting:
            outcomes[key].message = "still waiting on permit when the simulation stopped"
        return sorted(outcomes.values(), key=lambda p: ended.get(p.pod.key, 0))

    def _quorum_gate(self, pod: Pod) -> Status | None:
        """Hold a gang member whose group has fewer members than its quorum: no pod is
        added during a run, so it would wait for the rest for ever."""
        group = self._group_of(pod)
        if group is None or self.groups.has_quorum(group):
            return None
        fwk = self.frameworks[pod.scheduler_name]
        plugin = fwk.pod_group_plugin.name if fwk.pod_group_plugin is not None else ""
        existing = self.groups.existing(group.key)
        return Status(Code.PENDING, (quorum_message(group, existing),), plugin)

    def _group_attempt(
        self,
        group: PodGroupInfo,
        members: list[QueuedPodInfo],
        outcomes: dict[str, Placement],
        infos: dict[str, QueuedPodInfo],
        observe: Callable[[Pod, float], None] | None,
    ) -> list[QueuedPodInfo | tuple[Pod, Pod | None, str, frozenset[str]]]:
        """One group cycle (``framework.groupcycle``) and the binding of its quorum.
        Returns, per member, its info to queue again (not needed for the quorum) or how
        its scheduling ended (``end``'s arguments)."""
        fwk = self.frameworks[members[0].pod.scheduler_name]
        algo = self.algorithms[members[0].pod.scheduler_name]
        fwk.set_snapshot(self.snapshot())
        ordered = sort_members(fwk, members)
        by_key = {info.pod.key: info for info in ordered}
        for info in ordered:
            info.attempts += 1
            infos[info.pod.key] = info
            outcomes[info.pod.key].attempts = info.attempts

        def assume(pod: Pod) -> None:
            self._snapshot.add_pod(pod)
            self.groups.placed_added(pod)
            self.nominator.delete_nominated_pod(pod)

        def forget(pod: Pod) -> None:
            self._snapshot.remove_pod(pod)
            self.groups.placed_removed(pod)

        started = time.perf_counter()
        outcome = schedule_group(
            fwk,
            algo,
            group,
            [info.pod for info in ordered],
            self.groups.placed(group.key),
            assume,
            forget,
            before_member=self.before_attempt,
        )
        if observe is not None:
            share = (time.perf_counter() - started) / len(ordered)
            for info in ordered:
                observe(info.pod, share)
        results: list[QueuedPodInfo | tuple[Pod, Pod | None, str, frozenset[str]]] = []
        for failure in outcome.failed:
            if failure.fit is not None:
                outcomes[failure.pod.key].statuses = failure.fit.diagnosis.node_to_status
        if outcome.status is not None:
            for key, node in outcome.nominations.items():
                # The victims are gone (deleted by the plugin): the members retry on the
                # nodes the dry run gave them, as a preemptor on its nominated node.
                self.nominator.add_nominated_pod(by_key[key].pod, node)
            for key, victims in outcome.preempted.items():
                outcomes[key].preempted.extend(victim.key for victim in victims)
            message = outcome.status.message
            rejectors = outcome.unschedulable_plugins() | outcome.pending_plugins()
            if not rejectors and outcome.status.plugin:
                rejectors = frozenset({outcome.status.plugin})
            return [(info.pod, None, message, rejectors) for info in ordered]
        for member in outcome.placed:
            outcomes[member.pod.key].tied = member.result.tied
            if fwk.waiting_pod_for(member.assumed) is not None:
                self._waiting[member.pod.key] = (fwk, member.state, member.pod, member.assumed)
                continue
            results.append((member.pod, *self._bind(fwk, member.state, member.pod, member.assumed)))
        for failure in outcome.failed:
            # Passed over while the quorum was placed without it: it fails on its own.
            rejectors = failure.unschedulable_plugins | failure.pending_plugins
            results.append((failure.pod, None, failure.status.message, rejectors))
        results.extend(by_key[pod.key] for pod in outcome.untried)
        return results

    def _attempt(
        self, pod: Pod, placement: Placement
    ) -> tuple[Pod | None, str, frozenset[str]] | None:
        """One scheduling cycle (and the binding cycle, run inline); None when a Permit
        plugin holds the pod (its binding cycle runs once the wait ends)."""
        fwk = self.frameworks[pod.scheduler_name]
        algo = self.algorithms[pod.scheduler_name]
        fwk.set_snapshot(self.snapshot())
        state = CycleState()
        try:
            result = algo.schedule_pod(state, pod)
        except FitError as fit:
            rejectors = frozenset(fit.diagnosis.unschedulable_plugins)
            placement.statuses = fit.diagnosis.node_to_status
            if fwk.has_post_filter_plugins():
                deleted_before = len(self._deleted)
                r, status = fwk.run_post_filter_plugins(state, pod, fit.diagnosis.node_to_status)
                fit.diagnosis.post_filter_msg = status.message if status is not None else ""
                if r is not None:
                    if r.nominated_node_name:
                        self.nominator.add_nominated_pod(pod, r.nominated_node_name)
                    else:
                        self.nominator.delete_nominated_pod(pod)
                placement.preempted.extend(p.key for p in self._deleted[deleted_before:])
            return None, str(fit), rejectors
        except SchedulingError as err:
            return None, err.status.message, frozenset({err.status.plugin} - {""})

        host = result.suggested_host
        placement.tied = result.tied
        assumed = pod.evolve(node_name=host, nominated_node_name="")
        self._snapshot.add_pod(assumed)
        if self._gangs:
            self.groups.placed_added(assumed)
        self.nominator.delete_nominated_pod(pod)
        failure = fwk.run_reserve_plugins_reserve(state, pod, host)
        if failure is None:
            failure = fwk.run_permit_plugins(state, pod, host)
            if failure is not None and failure.code is Code.WAIT:
                self._waiting[pod.key] = (fwk, state, pod, assumed)
                return None
        if failure is not None:
            return self._unreserve(fwk, state, pod, assumed, failure)
        return self._bind(fwk, state, pod, assumed)

    def _bind(
        self, fwk: Framework, state: CycleState, pod: Pod, assumed: Pod
    ) -> tuple[Pod | None, str, frozenset[str]]:
        """The binding cycle after Permit: PreBind, Bind, PostBind."""
        host = assumed.node_name
        failure = fwk.run_pre_bind_pre_flights(state, pod, host)
        if failure is None:
            failure = fwk.run_pre_bind_plugins(state, pod, host)
        elif failure.code is Code.SKIP:
            failure = None
        if failure is None:
            failure = fwk.run_bind_plugins(state, pod, host)
        if failure is not None:
            return self._unreserve(fwk, state, pod, assumed, failure)
        fwk.run_post_bind_plugins(state, pod, host)
        return assumed, "", frozenset()

    def _unreserve(
        self, fwk: Framework, state: CycleState, pod: Pod, assumed: Pod, failure: Status
    ) -> tuple[Pod | None, str, frozenset[str]]:
        """Undo the assumption after a failure after Reserve; a rejection is reported
        as upstream's one-node FitError."""
        fwk.run_reserve_plugins_unreserve(state, pod, assumed.node_name)
        self._snapshot.remove_pod(assumed)
        if self._gangs:
            self.groups.placed_removed(assumed)
        message = failure.message
        if failure.is_rejected():
            message = str(FitError.on_node(pod, assumed.node_name, failure))
        return None, message, frozenset({failure.plugin} - {""})

    def _finish_waiting(self) -> list[tuple[Pod, Pod | None, str, frozenset[str]]]:
        """Run the binding cycle of every pod whose wait at Permit has ended."""
        done = []
        progress = True
        while progress:  # an Unreserve may reject other held pods: finish them too
            progress = False
            for key, (fwk, state, pod, assumed) in list(self._waiting.items()):
                waiting = fwk.waiting_pod_for(pod)
                if waiting is not None and not waiting.decided:
                    continue
                progress = True
                del self._waiting[key]
                status = fwk.wait_on_permit(waiting) if waiting is not None else None
                if status is None:
                    done.append((pod, *self._bind(fwk, state, pod, assumed)))
                    continue
                done.append((pod, *self._unreserve(fwk, state, pod, assumed, status)))
                # The place it held is free again, as if an assigned pod were deleted.
                self._events.append((ASSIGNED_POD_DELETE, assumed, None))
        return done

    def _move_on_events(
        self,
        unschedulable: dict[str, tuple[QueuedPodInfo, frozenset[str]]],
        current: dict[str, Pod],
    ) -> list[str]:
        if not self._events or not unschedulable:
            return []
        moved = []
        for key, (qinfo, rejectors) in unschedulable.items():
            fwk = self.frameworks[qinfo.pod.scheduler_name]
            registered = fwk.events_to_register()
            if any(
                self._helps(qinfo.pod, registered.get(plugin, ()), event, old, new)
                for plugin in (rejectors or registered.keys())
                for event, old, new in self._events
            ):
                moved.append(key)
        return moved

    @staticmethod
    def _helps(
        pod: Pod,
        hints: Iterable[ClusterEventWithHint],
        event: ClusterEvent,
        old: object,
        new: object,
    ) -> bool:
        for h in hints:
            if not h.event.matches(event):
                continue
            if h.hint is None:
                return True
            try:
                if h.hint(pod, old, new) is QueueingHint.QUEUE:
                    return True
            except Exception:
                return True  # a failing hint queues the pod, as upstream
        return False
