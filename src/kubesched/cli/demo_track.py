"""What ``kubesched demo`` sees of the cluster's work: it watches pods, events, the
workloads and the ResourceClaims through the API, as ``kubectl get
pods,events,deploy,sts,ds,jobs,resourceclaims -w`` would, prints a line per scheduler
event (and when a controller makes a preempted pod again, or a Job completes), notes the
devices each pod's claims were given, and tells when the pods have settled.

The devices are noted as they are seen: a claim made from a template for a pod is
deleted once the pod is done (the resource-claim controller), so a finished Job's
claims are no longer there to read back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from kubesched.cli.demo_owners import OwnerIndex, desired_pods, owner_key, workload_condition
from kubesched.cli.demo_workloads import KINDS, WORKLOAD_KINDS, runs_past_the_demo
from kubesched.kube import Client, Informer
from kubesched.kube.resources import EVENTS, PODS, REPLICA_SETS, RESOURCE_CLAIMS, RawObject
from kubesched.objects.node import Node
from kubesched.objects.podtemplate import controller_of

__all__ = ["SCHEDULER_REASONS", "PodTracker", "pod_scheduled_condition"]

#: The event reasons the scheduler writes (upstream's ``Scheduled``, ``FailedScheduling``
#: and the preemption victim's ``Preempted``).
SCHEDULER_REASONS = ("Scheduled", "FailedScheduling", "Preempted")
#: Controller events the progress shows: a pod made (shown for the pod made again in a
#: preempted pod's place) and a Job done (``job-controller``'s reasons).
CREATED_REASON = "SuccessfulCreate"
JOB_DONE_REASONS = ("Completed", "BackoffLimitExceeded", "DeadlineExceeded")
_CREATED_PREFIX = "Created pod: "


def pod_scheduled_condition(raw: RawObject) -> RawObject | None:
    """The pod's PodScheduled condition, if it has one."""
    for condition in (raw.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


def _name(raw: RawObject) -> str:
    return str((raw.get("metadata") or {}).get("name", ""))


def _controller_uid(raw: RawObject) -> str:
    ref = controller_of(raw)
    return str(ref.get("uid", "")) if ref else ""


class PodTracker:
    """Follows the pods, events and workloads of one namespace (None: of every
    namespace; pod and workload names are then told apart by name alone); prints progress
    to ``out`` (None: silent). ``zone_of(node_name)`` labels placements in the progress
    lines."""

    def __init__(
        self,
        client: Client,
        namespace: str | None,
        out: TextIO | None,
        zone_of: Callable[[str], str],
        started: float,
    ) -> None:
        self.namespace = namespace
        self.out = out
        self.zone_of = zone_of
        self.started = started
        self.pods: Informer[RawObject] = Informer(client, PODS.raw, namespace)
        self.events: Informer[RawObject] = Informer(client, EVENTS, namespace)
        self.replica_sets: Informer[RawObject] = Informer(client, REPLICA_SETS.raw, namespace)
        self.claims: Informer[RawObject] = Informer(client, RESOURCE_CLAIMS.raw, namespace)
        #: The devices allocated to each pod's claims, as first seen reserved for it:
        #: pod name → ``[{"claim", "request", "driver", "pool", "device"}]``.
        self.devices: dict[str, list[dict[str, str]]] = {}
        #: The workloads by kind (Deployment, StatefulSet, DaemonSet, Job).
        self.workloads: dict[str, Informer[RawObject]] = {
            kind: Informer(client, resource, namespace)
            for (_, kind), resource in KINDS.items()
            if kind in WORKLOAD_KINDS
        }
        #: When the tracker first saw each pod, and first saw it bound (monotonic).
        self.seen_at: dict[str, float] = {}
        self.bound_at: dict[str, float] = {}
        #: Pod events in arrival order: the step at which each pod was first seen, and
        #: at which it began to go (deletionTimestamp) or went.
        self.first_seen: dict[str, int] = {}
        self.ended: dict[str, int] = {}
        self._step = 0
        #: Each pod's namespace, by name.
        self._namespace_of: dict[str, str] = {}
        #: Pods deleted, as last seen.
        self.gone: dict[str, RawObject] = {}
        #: Pods made in the place of a pod that went while it ran: new name → old name.
        self.replaces: dict[str, str] = {}
        self._created_events: dict[str, RawObject] = {}
        #: Scheduler event reasons per pod name, in the order they arrived.
        self.reasons: dict[str, list[str]] = {}
        self._changed = asyncio.Event()
        self.pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_gone)
        self.events.add_handler(self._on_event, lambda _, new: self._on_event(new, seen=True))
        self.claims.add_handler(self._on_claim, lambda _, new: self._on_claim(new))
        for informer in self._informers()[2:]:
            informer.add_handler(
                self._on_change, lambda _, new: self._on_change(new), self._on_change
            )

    def _informers(self) -> list[Informer[RawObject]]:
        return [self.pods, self.events, self.replica_sets, *self.workloads.values(), self.claims]

    async def start(self, timeout: float) -> None:
        """Start the informers and wait for their first lists."""
        informers = self._informers()
        for informer in informers:
            informer.start()
        await asyncio.wait_for(asyncio.gather(*(i.wait_for_sync() for i in informers)), timeout)

    async def stop(self) -> None:
        """Stop the informers."""
        for informer in self._informers():
            await informer.stop()

    def pod(self, name: str) -> RawObject | None:
        """The pod as last seen (None once deleted)."""
        namespace = self.namespace or self._namespace_of.get(name, "")
        return self.pods.get(f"{namespace}/{name}")

    def workload(self, kind: str, name: str, namespace: str | None = None) -> RawObject | None:
        """The workload as last seen (None if not seen)."""
        informer = self.workloads.get(kind)
        namespace = namespace or self.namespace
        if informer is None or namespace is None:
            return None
        return informer.get(f"{namespace}/{name}")

    def owners(self) -> OwnerIndex:
        """Resolves pods to workloads, with the ReplicaSets as last seen."""
        return OwnerIndex(self.replica_sets.list())

    # --- handlers -------------------------------------------------------------------

    def _on_change(self, raw: RawObject) -> None:
        self._changed.set()

    def _on_claim(self, claim: RawObject) -> None:
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        if not results:
            return
        name = _name(claim)
        for consumer in status.get("reservedFor") or []:
            if consumer.get("resource") != "pods":
                continue
            pod = str(consumer.get("name", ""))
            noted = self.devices.setdefault(pod, [])
            if any(d["claim"] == name for d in noted):
                continue
            noted.extend(
                {
                    "claim": name,
                    "request": str(r.get("request", "")),
                    "driver": str(r.get("driver", "")),
                    "pool": str(r.get("pool", "")),
                    "device": str(r.get("device", "")),
                }
                for r in results
            )

    def _on_pod(self, raw: RawObject) -> None:
        name = _name(raw)
        self._namespace_of[name] = str((raw.get("metadata") or {}).get("namespace", ""))
        self._step += 1
        if name not in self.first_seen:
            self.first_seen[name] = self._step
            self.seen_at[name] = time.monotonic()
            self._note_replacement(raw)
        if (raw.get("metadata") or {}).get("deletionTimestamp"):
            self.ended.setdefault(name, self._step)
        if (raw.get("spec") or {}).get("nodeName") and name not in self.bound_at:
            self.bound_at[name] = time.monotonic()
        self._changed.set()

    def _on_gone(self, raw: RawObject) -> None:
        name = _name(raw)
        self._step += 1
        self.ended.setdefault(name, self._step)
        self.gone[name] = raw
        self._changed.set()

    def _note_replacement(self, raw: RawObject) -> None:
        """A new pod of a controller one of whose pods went while it was still running
        (before it succeeded or failed) replaces that pod."""
        uid = _controller_uid(raw)
        if not uid:
            return
        taken = set(self.replaces.values())
        for old in sorted(self.ended, key=self.ended.__getitem__):
            before = self.gone.get(old) or self.pod(old) or {}
            phase = (before.get("status") or {}).get("phase")
            if old in taken or _controller_uid(before) != uid or phase in ("Succeeded", "Failed"):
                continue
            self.replaces[_name(raw)] = old
            self._show_replacement(_name(raw))
            return

    def _on_event(self, event: RawObject, seen: bool = False) -> None:
        reason = str(event.get("reason", ""))
        involved = event.get("involvedObject") or {}
        if reason == CREATED_REASON and not seen:
            message = str(event.get("message", ""))
            if message.startswith(_CREATED_PREFIX):
                created = message[len(_CREATED_PREFIX) :]
                self._created_events[created] = event
                self._show_replacement(created)
            return
        if reason in JOB_DONE_REASONS and involved.get("kind") == "Job" and not seen:
            self._changed.set()
            self._say(reason, f"Job {involved.get('name')}: {event.get('message', '')}")
            return
        if reason not in SCHEDULER_REASONS:
            return
        name = str(involved.get("name", ""))
        # An update is a repeat of an event already counted (its count went up).
        if not seen:
            self.reasons.setdefault(name, []).append(reason)
        self._changed.set()
        if seen:
            return
        message = str(event.get("message", ""))
        if reason == "Scheduled":
            node = message.rsplit(" to ", 1)[-1]
            self._say(reason, f"{name} → {node} ({self.zone_of(node)})")
        else:
            self._say(reason, f"{name}: {message}")

    def _show_replacement(self, name: str) -> None:
        """Say that a controller made ``name`` in a preempted pod's place, once both its
        SuccessfulCreate event and the pod have been seen."""
        event = self._created_events.get(name)
        if name not in self.replaces or event is None:
            return
        involved = event.get("involvedObject") or {}
        self._say(
            CREATED_REASON,
            f"{involved.get('kind')} {involved.get('name')} made {name} "
            f"in the place of {self.replaces[name]}",
        )

    def _say(self, reason: str, detail: str) -> None:
        if self.out is None:
            return
        elapsed = time.monotonic() - self.started
        try:
            self.out.write(f"  {elapsed:6.2f}s  {reason:<16}  {detail}\n")
            self.out.flush()
        except BrokenPipeError:
            # The reader went (``| head``): nobody reads progress any more.
            self.out = None

    # --- waiting --------------------------------------------------------------------

    def unsettled(self) -> list[str]:
        """The pods whose scheduling has not come to rest: a settled pod is bound with
        its Scheduled event written, or unschedulable with no node nominated and its
        FailedScheduling event written; a pod being deleted is not settled until it is
        gone."""
        waiting = []
        for raw in self.pods.list():
            name = _name(raw)
            reasons = self.reasons.get(name, [])
            if (raw.get("metadata") or {}).get("deletionTimestamp"):
                waiting.append(name)
            elif (raw.get("spec") or {}).get("nodeName"):
                if "Scheduled" not in reasons:
                    waiting.append(name)
            else:
                condition = pod_scheduled_condition(raw) or {}
                nominated = (raw.get("status") or {}).get("nominatedNodeName")
                unschedulable = condition.get("status") == "False" and not nominated
                if not unschedulable or "FailedScheduling" not in reasons:
                    waiting.append(name)
        return waiting

    def owned_pods(self, owner: str) -> list[RawObject]:
        """The pods (not being deleted) of workload ``owner`` (``Kind/name``), in the
        order they were first seen."""
        index = self.owners()
        pods = [
            p
            for p in self.pods.list()
            if index.owner(p) == owner and not (p.get("metadata") or {}).get("deletionTimestamp")
        ]
        return sorted(pods, key=lambda p: self.first_seen.get(_name(p), 0))

    def short_of_pods(self, workloads: Iterable[RawObject], nodes: Sequence[Node]) -> list[str]:
        """The workloads of ``workloads`` whose controllers have not yet made the pods
        they should (``Kind/name (have/want)``)."""
        short = []
        for manifest in workloads:
            kind, name = str(manifest["kind"]), _name(manifest)
            namespace = (manifest.get("metadata") or {}).get("namespace")
            live = self.workload(kind, name, namespace) or manifest
            want = desired_pods(live, nodes)
            have = len(self.owned_pods(owner_key(kind, name)))
            if have < want:
                short.append(f"{owner_key(kind, name)} ({have}/{want} pods)")
        return short

    def settling(self, workloads: Iterable[RawObject], nodes: Sequence[Node]) -> list[str]:
        """What keeps a wave from having settled: workloads short of pods, pods not
        settled (empty: settled)."""
        return [*self.short_of_pods(workloads, nodes), *self.unsettled()]

    async def wait(self, check: Callable[[], list[str]], timeout: float) -> list[str]:
        """Wait until ``check()`` returns nothing, or ``timeout`` seconds pass; returns
        what ``check()`` last returned (empty: done)."""
        deadline = time.monotonic() + timeout
        while True:
            self._changed.clear()
            left = check()
            remaining = deadline - time.monotonic()
            if not left or remaining <= 0:
                return left
            # Every pod, event or workload change the informers apply wakes us.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    def not_started(self) -> list[str]:
        """The bound pods whose containers have not started (phase still Pending)."""
        return [
            _name(raw)
            for raw in self.pods.list()
            if (raw.get("spec") or {}).get("nodeName")
            and (raw.get("status") or {}).get("phase", "Pending") == "Pending"
        ]

    def unfinished_jobs(self) -> list[str]:
        """The Jobs every pod of which was placed but that have no Complete or Failed
        condition yet (a Job with a pod no node could take cannot finish), leaving out
        those whose pods run past the demo."""
        left = []
        for job in self.workloads["Job"].list():
            if runs_past_the_demo((job.get("spec") or {}).get("template") or {}):
                continue
            pods = self.owned_pods(owner_key("Job", _name(job)))
            placed = all((p.get("spec") or {}).get("nodeName") for p in pods)
            if pods and placed and not workload_condition(job):
                left.append(owner_key("Job", _name(job)))
        return left

    def bind_latencies(self) -> list[float]:
        """Seconds from the tracker first seeing each pod to seeing it bound."""
        return sorted(
            self.bound_at[name] - seen
            for name, seen in self.seen_at.items()
            if name in self.bound_at
        )

    def order(self, names: Iterable[str]) -> list[str]:
        """``names`` in the order their pods were first seen."""
        return sorted(names, key=lambda n: self.first_seen.get(n, 0))

    def as_seen(self) -> dict[str, Any]:
        """What the report needs from the watch: first-seen order, replaced pods."""
        return {
            "firstSeen": dict(self.first_seen),
            "replaces": dict(self.replaces),
            "devices": {pod: list(devices) for pod, devices in self.devices.items()},
        }
