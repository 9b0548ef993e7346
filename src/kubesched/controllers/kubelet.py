"""The simulated kubelet: runs pods on simulated nodes, a client of the API server, as
KWOK's controllers are (``pkg/kwok/controllers``).

It acts only for nodes annotated :data:`~kubesched.objects.nodes.SIMULATED_ANNOTATION`
(``"true"``) — the ones ``--nodes``/``--node-template`` create, or any a user creates with
that annotation; pods on other nodes are left exactly as without it. It follows nodes and
pods through the shared informers and, for each pod, works out from the pod's state alone
what is due and when (KWOK's stages), then does it from a worker:

* **pod-ready.** A pod bound to one of its nodes that is still Pending becomes Running
  ``run_delay`` seconds after the kubelet first saw it bound, once every "may start" hook
  agrees (:data:`MayStart`; a refusal is asked again every second): the status of
  :func:`~kubesched.controllers.podstatus.running`, with a pod IP from the node's
  ``spec.podCIDR`` (the node's address for ``hostNetwork`` pods).
  A pod with readiness gates is Ready once their conditions are True (ReadinessGatesNotReady
  until then), and follows them while it runs.
* **pod-complete.** Containers run ``run-seconds`` (the annotation
  :data:`RUN_SECONDS_ANNOTATION`; else ``pod_run_seconds`` for restartPolicy Never and
  OnFailure pods, and forever for Always pods) from their start, then exit with the code
  of :data:`EXIT_CODE_ANNOTATION` (default 0), or, for the containers named in
  :data:`CONTAINER_EXIT_CODES_ANNOTATION` (``"main=42,sidecar=0"``), with theirs.
  restartPolicy Never: the pod ends Succeeded (every code 0) or Failed. OnFailure: all
  0 ends it Succeeded; else the containers restart in place (``restartCount`` grows, the
  pod stays Running). Always: the containers restart whatever the code.
* **pod-delete.** A pod that gets a ``deletionTimestamp`` is removed ``stop_delay``
  seconds later with a delete of grace period 0 and a UID precondition — what the
  kubelet's status manager sends once the containers have stopped — instead of waiting
  for the whole grace period. Finalizers still hold it; so a pod with finalizers that
  had not finished is first reported Failed, its containers killed (exit code 137), as
  the kubelet reports a deleted pod's terminal phase: a Job with a pod failure policy
  replaces a pod only once it has failed, and reads that exit code. The server's reaper still
  removes, at the end of their grace, pods on nodes the kubelet does not run.
* **Node leases.** Every ``node_lease_interval`` seconds (kubelet: 10 s; 0: none; the
  nodes spread evenly over the interval) it creates or renews the Lease
  ``kube-node-lease/<node>`` (holderIdentity the node, leaseDurationSeconds 40, an
  ownerReference to the Node), keeping the last lease it wrote
  and reading it again only after a conflict, as the kubelet's lease controller does. When
  a node goes, its lease is deleted (the garbage collector's job upstream).

The pods of a deleted node are the pod garbage collector's
(:mod:`kubesched.controllers.podgc`), as upstream.

Status is written with a merge patch of ``/status`` that carries the resourceVersion read
(optimistic concurrency); on a conflict the pod is read again and the step re-decided, up
to :data:`CONFLICT_RETRIES` times (``RetryOnConflict``). The informer's cache, never a GET
per pod, drives everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import math
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.controllers import podstatus, resourceclaim
from kubesched.controllers.volume.podvolumes import volumes_may_start
from kubesched.kube import Client, Conflict, KubeError, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.resources import LEASES, NODES, PODS, RawObject
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.nodes import is_simulated

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = [
    "CONFLICT_RETRIES",
    "CONTAINER_EXIT_CODES_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "LEASE_DURATION_SECONDS",
    "LEASE_NAMESPACE",
    "NAME",
    "RUN_SECONDS_ANNOTATION",
    "Kubelet",
    "MayStart",
    "start_kubelet",
]

log = logging.getLogger(__name__)

NAME = "kubelet"
#: Seconds the pod's containers run before they exit (a decimal number, >= 0).
RUN_SECONDS_ANNOTATION = "kubesched.io/run-seconds"
#: The exit code of the pod's containers when they exit (an integer, 0..255).
EXIT_CODE_ANNOTATION = "kubesched.io/exit-code"
#: Exit codes of named containers, ``name=code`` pairs separated by commas
#: (``"main=42,sidecar=0"``); the others exit with :data:`EXIT_CODE_ANNOTATION`'s.
CONTAINER_EXIT_CODES_ANNOTATION = "kubesched.io/container-exit-codes"
LEASE_DURATION_SECONDS = 40
LEASE_NAMESPACE = "kube-node-lease"
CONFLICT_RETRIES = 5
#: Seconds between two questions to "may start" hooks that said no.
MAY_START_RETRY = 1.0

#: The steps, by KWOK's stage names (``kustomize/stage/pod/general``): a bound Pending pod
#: starts, a running one's containers exit, a deleting one goes; and the readiness gates'
#: Ready condition, and a start the "may start" hooks hold back.
POD_READY = "pod-ready"
POD_COMPLETE = "pod-complete"
POD_DELETE = "pod-delete"
POD_READINESS = "pod-readiness-gates"
MAY_START_WAIT = "may-start-wait"

#: A "may start" hook: given a pod about to start, None to let it start, or the reason
#: it must wait (volumes not bound, device claims not reserved...).
MayStart = Callable[[RawObject], "str | None"]


class _Node:
    """What the kubelet keeps of one node it runs."""

    def __init__(self, node: RawObject) -> None:
        meta = node["metadata"]
        self.name: str = meta["name"]
        self.uid: str = meta.get("uid", "")
        self.host_ip = ""
        for addr in (node.get("status") or {}).get("addresses") or ():
            if isinstance(addr, dict) and addr.get("type") == "InternalIP":
                self.host_ip = str(addr.get("address", ""))
                break
        self.network: ipaddress.IPv4Network | None = None
        cidr = (node.get("spec") or {}).get("podCIDR")
        if cidr:
            with contextlib.suppress(ValueError):
                self.network = ipaddress.IPv4Network(str(cidr), strict=False)
        self.used: set[str] = set()
        self.next = 0
        #: The lease as last written (None: read it before writing).
        self.lease: RawObject | None = None

    def allocate(self) -> str:
        """A pod IP of this node not in use ("" when the node has no usable pod CIDR)."""
        net = self.network
        if net is None or net.num_addresses < 4:
            return ""
        size = net.num_addresses - 3  # no network, gateway (.1), broadcast
        for _ in range(size):
            ip = str(net.network_address + 2 + self.next % size)
            self.next += 1
            if ip not in self.used:
                self.used.add(ip)
                return ip
        return ""


def _seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Kubelet:
    """A kubelet for every simulated node; built by :func:`start_kubelet`."""

    def __init__(
        self,
        client: Client,
        nodes: Informer[RawObject],
        pods: Informer[RawObject],
        run_delay: float = 0.5,
        stop_delay: float = 0.1,
        lease_interval: float = 10.0,
        pod_run_seconds: float = 5.0,
        workers: int = 32,
        may_start: tuple[MayStart, ...] = (),
    ) -> None:
        self.client = client
        self.node_informer = nodes
        self.pod_informer = pods
        self.run_delay = run_delay
        self.stop_delay = stop_delay
        self.lease_interval = lease_interval
        self.pod_run_seconds = pod_run_seconds
        self.workers = max(workers, 1)
        #: Asked, in order, before a pod starts (see :data:`MayStart`).
        self.may_start: list[MayStart] = list(may_start)
        self._nodes: dict[str, _Node] = {}
        self._pods_on: dict[str, set[str]] = {}
        self._pod_node: dict[str, str] = {}
        self._ips: dict[str, tuple[str, str]] = {}
        # key -> (uid, action, due wall time, timer)
        self._timers: dict[str, tuple[str, str, float, asyncio.TimerHandle]] = {}
        # key -> (uid, action, wall time first seen due for it)
        self._since: dict[str, tuple[str, str, float]] = {}
        self._queue: WorkQueue[str] = WorkQueue("kubelet")
        self._side: set[asyncio.Task[None]] = set()
        self._writes = asyncio.Semaphore(self.workers)
        self._warned: set[tuple[str, str]] = set()
        nodes.add_handler(self._on_node, lambda _, new: self._on_node(new), self._on_node_delete)
        pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_pod_delete)

    @property
    def nodes(self) -> list[str]:
        """The names of the nodes the kubelet runs now."""
        return sorted(self._nodes)

    # -- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]
        if self.lease_interval > 0:
            tasks.append(asyncio.create_task(self._renew_leases()))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in (*tasks, *self._side):
                task.cancel()
            for task in (*tasks, *self._side):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            for *_, timer in self._timers.values():
                timer.cancel()
            self._timers.clear()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._side.add(task)
        task.add_done_callback(self._side.discard)

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            if key is None:
                return  # shut down
            try:
                await self._sync(key)
            except asyncio.CancelledError:
                raise
            except KubeError as exc:  # the server refused or went away: the next event decides
                log.warning("kubelet: pod %s: %s", key, exc)
            except Exception:  # a bug: log it, keep running
                log.exception("kubelet: syncing pod %s failed", key)
            finally:
                self._queue.done(key)

    # -- nodes --------------------------------------------------------------------------

    def _on_node(self, node: RawObject) -> None:
        name = node["metadata"]["name"]
        known = self._nodes.get(name)
        if not is_simulated(node):
            if known is not None:
                del self._nodes[name]
                self._spawn(self._delete_lease(known))
            return
        if known is not None and known.uid == node["metadata"].get("uid"):
            return
        fresh = _Node(node)
        self._nodes[name] = fresh
        for key in self._pods_on.get(name, ()):
            held = self._ips.get(key)
            if held is not None and held[0] == name:
                fresh.used.add(held[1])
            pod = self.pod_informer.get(key)
            if pod is not None:
                self._plan(key, pod)
        if self.lease_interval > 0:
            self._spawn(self._renew_lease(fresh))

    def _on_node_delete(self, node: RawObject) -> None:
        gone = self._nodes.pop(node["metadata"]["name"], None)
        if gone is None:
            return
        self._spawn(self._delete_lease(gone))

    # -- leases -------------------------------------------------------------------------

    async def _renew_leases(self) -> None:
        # Each node renews once per interval, the nodes spread evenly over it: 5,000 nodes
        # are a steady 500 writes/s, not a burst of 5,000 every 10 s.
        while True:
            nodes = list(self._nodes.values())
            if not nodes:
                await asyncio.sleep(self.lease_interval)
                continue
            step = self.lease_interval / len(nodes)
            for node in nodes:
                await asyncio.sleep(step)
                if self._nodes.get(node.name) is node:
                    self._spawn(self._renew_lease(node))

    async def _renew_lease(self, node: _Node) -> None:
        async with self._writes:
            try:
                await self._write_lease(node)
            except KubeError as exc:
                log.warning("kubelet: renewing the lease of %s: %s", node.name, exc)

    async def _write_lease(self, node: _Node) -> None:
        for _ in range(CONFLICT_RETRIES):
            if self._nodes.get(node.name) is not node:
                return  # gone meanwhile
            spec = {
                "holderIdentity": node.name,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                "renewTime": _micro(),
            }
            try:
                lease = node.lease
                if lease is None:
                    lease = await self.client.get(LEASES, node.name, LEASE_NAMESPACE)
                new = dict(lease, spec=dict(lease.get("spec") or {}, **spec))
                node.lease = await self.client.update(LEASES, new)
                return
            except NotFound:
                node.lease = None
                body = {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "name": node.name,
                        "namespace": LEASE_NAMESPACE,
                        "ownerReferences": [
                            {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid}
                        ],
                    },
                    "spec": spec,
                }
                try:
                    node.lease = await self.client.create(LEASES, body, LEASE_NAMESPACE)
                    return
                except KubeError:
                    continue  # created meanwhile (or the namespace is missing): read again
            except Conflict:
                node.lease = None  # someone else wrote it: read it again

    async def _delete_lease(self, node: _Node) -> None:
        if self.lease_interval <= 0:
            return
        with contextlib.suppress(KubeError):
            lease = node.lease
            if lease is None:
                lease = await self.client.get(LEASES, node.name, LEASE_NAMESPACE)
            owners = lease["metadata"].get("ownerReferences") or []
            if any(o.get("kind") == "Node" and o.get("uid") == node.uid for o in owners):
                uid = str(lease["metadata"].get("uid", ""))
                await self.client.delete(LEASES, node.name, LEASE_NAMESPACE, uid=uid)

    # -- pods ---------------------------------------------------------------------------

    def _on_pod(self, pod: RawObject) -> None:
        meta = pod["metadata"]
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        old_node = self._pod_node.get(key)
        if old_node != node_name:
            if old_node is not None:
                self._pods_on.get(old_node, set()).discard(key)
            if node_name:
                self._pods_on.setdefault(node_name, set()).add(key)
                self._pod_node[key] = node_name
            else:
                self._pod_node.pop(key, None)
        node = self._nodes.get(node_name)
        if node is None:
            self._cancel(key)
            return
        pod_ip = (pod.get("status") or {}).get("podIP")
        if pod_ip and key not in self._ips and node.network is not None:
            with contextlib.suppress(ValueError):
                if ipaddress.IPv4Address(str(pod_ip)) in node.network:
                    node.used.add(str(pod_ip))
                    self._ips[key] = (node.name, str(pod_ip))
        self._plan(key, pod)

    def _on_pod_delete(self, pod: RawObject) -> None:
        meta = pod["metadata"]
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        self._cancel(key)
        self._since.pop(key, None)
        node_name = self._pod_node.pop(key, None)
        if node_name is not None:
            on = self._pods_on.get(node_name)
            if on is not None:
                on.discard(key)
                if not on:
                    del self._pods_on[node_name]
        held = self._ips.pop(key, None)
        if held is not None and held[0] in self._nodes:
            self._nodes[held[0]].used.discard(held[1])

    def _decide(self, key: str, pod: RawObject) -> tuple[str, float] | None:
        """The step due for ``pod`` and when (wall time), or None."""
        meta = pod["metadata"]
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if spec.get("nodeName") not in self._nodes:
            return None
        uid = str(meta.get("uid", ""))
        if meta.get("deletionTimestamp"):
            return POD_DELETE, self._first_seen(key, uid, POD_DELETE) + self.stop_delay
        phase = status.get("phase") or "Pending"
        if phase == "Pending":
            return POD_READY, self._first_seen(key, uid, POD_READY) + self.run_delay
        self._since.pop(key, None)
        if phase != "Running":
            return None
        if spec.get("readinessGates") and podstatus.ready_changed(pod) is not None:
            return POD_READINESS, time.time()
        seconds = self._run_seconds(key, pod)
        started = podstatus.container_started_at(pod)
        if seconds is None or started is None:
            return None
        try:
            return POD_COMPLETE, _seconds(started) + seconds
        except ValueError:
            return None

    def _first_seen(self, key: str, uid: str, action: str) -> float:
        since = self._since.get(key)
        if since is None or since[:2] != (uid, action):
            since = (uid, action, time.time())
            self._since[key] = since
        return since[2]

    def _run_seconds(self, key: str, pod: RawObject) -> float | None:
        annotations = pod["metadata"].get("annotations") or {}
        text = annotations.get(RUN_SECONDS_ANNOTATION)
        if text is not None:
            try:
                value = float(text)
            except (TypeError, ValueError):
                value = -1.0
            if value >= 0 and math.isfinite(value):
                return value
            self._warn(key, f"{RUN_SECONDS_ANNOTATION}: {text!r} is not a number of seconds >= 0")
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        return None if policy == "Always" else self.pod_run_seconds

    def _exit_code(self, key: str, pod: RawObject) -> int:
        text = (pod["metadata"].get("annotations") or {}).get(EXIT_CODE_ANNOTATION)
        if text is None:
            return 0
        try:
            code = int(str(text))
        except ValueError:
            code = -1
        if 0 <= code <= 255:
            return code
        self._warn(key, f"{EXIT_CODE_ANNOTATION}: {text!r} is not an exit code (0..255)")
        return 1

    def _exit_codes(self, key: str, pod: RawObject) -> int | dict[str, int]:
        """One exit code for every container, or one per container name."""
        default = self._exit_code(key, pod)
        text = (pod["metadata"].get("annotations") or {}).get(CONTAINER_EXIT_CODES_ANNOTATION)
        if text is None:
            return default
        names = {str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()}
        codes = dict.fromkeys(names, default)
        for part in str(text).split(","):
            name, sep, value = part.strip().partition("=")
            try:
                code = int(value) if sep else -1
            except ValueError:
                code = -1
            if name not in names or not 0 <= code <= 255:
                self._warn(
                    key,
                    f"{CONTAINER_EXIT_CODES_ANNOTATION}: {part.strip()!r} is not "
                    "<container>=<exit code 0..255> naming a container of the pod",
                )
                if name in names:
                    codes[name] = 1
                continue
            codes[name] = code
        return codes

    def _warn(self, key: str, problem: str) -> None:
        if (key, problem) not in self._warned:
            self._warned.add((key, problem))
            log.warning("kubelet: pod %s: annotation %s", key, problem)

    def _plan(self, key: str, pod: RawObject) -> None:
        decided = self._decide(key, pod)
        if decided is None:
            self._cancel(key)
            return
        action, due = decided
        uid = str(pod["metadata"].get("uid", ""))
        planned = self._timers.get(key)
        if planned is not None:
            if planned[:3] == (uid, action, due):
                return
            planned[3].cancel()
        delay = max(due - time.time(), 0.0)
        timer = asyncio.get_running_loop().call_later(delay, self._fire, key)
        self._timers[key] = (uid, action, due, timer)

    def _fire(self, key: str) -> None:
        self._timers.pop(key, None)
        self._queue.add(key)

    def _cancel(self, key: str) -> None:
        planned = self._timers.pop(key, None)
        if planned is not None:
            planned[3].cancel()

    async def _sync(self, key: str) -> None:
        pod = self.pod_informer.get(key)
        if pod is None:
            return
        decided = self._decide(key, pod)
        if decided is None:
            return
        action, due = decided
        if due > time.time() + 0.001:
            self._plan(key, pod)
            return
        meta = pod["metadata"]
        if action == POD_DELETE:
            if meta.get("finalizers") and status_phase(pod) not in ("Succeeded", "Failed"):
                # The finalizer keeps the pod: report how it ended before it goes.
                await self._write_status(key, pod, self._killed_status)
            async with self._writes:
                with contextlib.suppress(NotFound, Conflict):  # gone, or another pod now
                    await self.client.delete(
                        PODS, meta["name"], meta.get("namespace"), 0, uid=str(meta.get("uid", ""))
                    )
            return
        if action == POD_READY:
            for hook in self.may_start:
                reason = hook(pod)
                if reason is not None:
                    log.debug("kubelet: pod %s may not start yet: %s", key, reason)
                    self._retry_later(key, pod)
                    return
        await self._write_status(key, pod, self._status_for)

    def _killed_status(self, pod: RawObject) -> RawObject | None:
        """The Failed status of a deleted pod that had not finished, or None if it has."""
        if not pod["metadata"].get("deletionTimestamp"):
            return None
        if status_phase(pod) in ("Succeeded", "Failed"):
            return None
        return podstatus.killed(pod)

    def _retry_later(self, key: str, pod: RawObject) -> None:
        uid = str(pod["metadata"].get("uid", ""))
        self._cancel(key)
        timer = asyncio.get_running_loop().call_later(MAY_START_RETRY, self._fire, key)
        self._timers[key] = (uid, MAY_START_WAIT, time.time() + MAY_START_RETRY, timer)

    def _status_for(self, pod: RawObject) -> RawObject | None:
        """The new status of ``pod`` for the step due now, or None if none is."""
        meta = pod["metadata"]
        key = f"{meta.get('namespace', '')}/{meta['name']}"
        decided = self._decide(key, pod)
        if decided is None or decided[1] > time.time() + 0.001:
            return None
        action = decided[0]
        if action == POD_READY:
            node = self._nodes[str(pod["spec"]["nodeName"])]
            if (pod.get("spec") or {}).get("hostNetwork"):
                ip = node.host_ip
            else:
                held = self._ips.get(key)
                ip = held[1] if held is not None and held[0] == node.name else node.allocate()
                if ip:
                    self._ips[key] = (node.name, ip)
            return podstatus.running(pod, node.host_ip, ip)
        if action == POD_READINESS:
            return podstatus.ready_changed(pod)
        if action == POD_COMPLETE:
            codes = self._exit_codes(key, pod)
            policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
            all_zero = codes == 0 if isinstance(codes, int) else not any(codes.values())
            if policy == "Never" or (policy == "OnFailure" and all_zero):
                return podstatus.terminated(pod, codes)
            return podstatus.restarted(pod, codes)
        return None

    async def _write_status(
        self, key: str, pod: RawObject, status_of: Callable[[RawObject], RawObject | None]
    ) -> None:
        """Write ``status_of(pod)`` with ``pod``'s resourceVersion; on a conflict, read
        the pod again and recompute (``RetryOnConflict``)."""
        meta = pod["metadata"]
        name, namespace = meta["name"], meta.get("namespace")
        for _ in range(CONFLICT_RETRIES):
            status = status_of(pod)
            if status is None:
                return
            patch = {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]}}
            patch["status"] = status
            async with self._writes:
                try:
                    await self.client.patch(PODS.raw, name, patch, namespace, "merge", "status")
                    return
                except NotFound:
                    return
                except Conflict:
                    pass
                try:
                    pod = await self.client.get(PODS.raw, name, namespace)
                except NotFound:
                    return
            if pod["metadata"].get("uid") != meta.get("uid"):
                return  # another pod of that name now
        log.warning("kubelet: pod %s: gave up after %d conflicts", key, CONFLICT_RETRIES)


def status_phase(pod: RawObject) -> str:
    """``status.phase`` (Pending if unset)."""
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _micro() -> str:
    """A MicroTime as Kubernetes writes it (``2024-01-02T03:04:05.000000Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def start_kubelet(ctx: ControllerContext) -> Kubelet:
    """The kubelet's init function for the controller manager: the "may start" hooks are
    the wait for the pod's volumes (where claims are served), for its ResourceClaims,
    then the options' own."""
    opts = ctx.options
    hooks = [hook for hook in (volumes_may_start(ctx),) if hook is not None]
    # A pod with ResourceClaims starts once they are allocated and reserved for it.
    hooks.append(resourceclaim.may_start(ctx))
    hooks.extend(make(ctx) for make in opts.may_start)
    return Kubelet(
        ctx.client(NAME),
        ctx.informers.informer(NODES),
        ctx.informers.informer(PODS),
        run_delay=opts.run_delay,
        stop_delay=opts.stop_delay,
        lease_interval=opts.node_lease_interval,
        pod_run_seconds=opts.pod_run_seconds,
        workers=opts.kubelet_workers,
        may_start=tuple(hooks),
    )
