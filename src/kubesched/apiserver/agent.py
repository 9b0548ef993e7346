"""The node agent: a kubelet (and pod GC) for simulated nodes, in the manner of KWOK.

It runs as a task in the API server's event loop and works on the store directly (no
HTTP). It acts only for nodes annotated :data:`~kubesched.apiserver.nodes.SIMULATED_ANNOTATION`
(``"true"``) — the ones ``--nodes``/``--node-template`` create, or any a user creates with
that annotation; pods on other nodes are left exactly as without an agent. For its nodes:

* **Running pods.** A pod bound to one of its nodes that is still Pending becomes Running
  ``run_delay`` seconds later: ``status.phase: Running``, the conditions
  PodReadyToStartContainers, Initialized, Ready, ContainersReady and PodScheduled (True),
  ``hostIP``/``hostIPs``, ``podIP``/``podIPs`` (from the node's ``spec.podCIDR``; the
  node's address for ``hostNetwork`` pods), ``startTime`` and running container statuses
  (init containers: terminated, Completed). Simulated containers never exit.
* **Graceful deletion.** A pod on one of its nodes that gets a ``deletionTimestamp`` is
  removed ``stop_delay`` seconds later (default 0.1 s) with a delete of grace period 0 and
  a UID precondition — what the kubelet's status manager sends once the containers have
  stopped — instead of waiting for the whole grace period. Finalizers still hold the pod
  (it then stays, with grace 0, until they are gone). The server's reaper is unchanged and
  still removes, at the end of their grace period, pods on nodes the agent does not run
  (and any pod whose grace ends before the agent gets to it).
* **Node leases.** Every ``lease_interval`` seconds (kubelet: 10 s) it creates or renews
  the Lease ``kube-node-lease/<node>`` (holderIdentity the node, leaseDurationSeconds 40,
  an ownerReference to the Node). When a node goes, its lease is deleted (the garbage
  collector's job upstream).
* **Deleted nodes.** As the pod GC controller's ``gcOrphaned`` does when a node no longer
  exists (after ``gc_delay`` seconds instead of upstream's 40 s quarantine, and only if
  the node has not come back): each pod bound to it that is not Succeeded/Failed is first
  marked ``phase: Failed`` with the condition DisruptionTarget (reason
  ``DeletionByPodGC``, message ``PodGC: node no longer exists``), then deleted with grace
  period 0.

The agent follows pods and nodes with store watches from resourceVersion 0, so it picks up
what exists at start (a restart with ``--data``) and resynchronises from scratch should it
ever fall behind a watch's window.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ipaddress
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.nodes import SIMULATED_ANNOTATION
from kubesched.apiserver.resources import LEASES, NODES, PODS
from kubesched.apiserver.store import Store, now_rfc3339
from kubesched.apiserver.watch import Object, Watcher, WatchEvent

log = logging.getLogger(__name__)

DEFAULT_RUN_DELAY = 0.5
DEFAULT_STOP_DELAY = 0.1
DEFAULT_GC_DELAY = 0.1
DEFAULT_LEASE_INTERVAL = 10.0
LEASE_DURATION_SECONDS = 40
LEASE_NAMESPACE = "kube-node-lease"
_TERMINAL = ("Succeeded", "Failed")


class _Skip(Exception):
    """The pod is no longer in the state the action was planned for."""


def micro_time(moment: datetime | None = None) -> str:
    """A MicroTime as Kubernetes writes it (``2024-01-02T03:04:05.000000Z``)."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def is_simulated(node: Object) -> bool:
    """Whether the agent runs ``node``."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return bool(annotations.get(SIMULATED_ANNOTATION) == "true")


class _Node:
    """What the agent keeps of one node it runs."""

    def __init__(self, node: Object) -> None:
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


class NodeAgent:
    """A kubelet for every simulated node of ``store``; :meth:`start` it in a running loop."""

    def __init__(
        self,
        store: Store,
        run_delay: float = DEFAULT_RUN_DELAY,
        stop_delay: float = DEFAULT_STOP_DELAY,
        gc_delay: float = DEFAULT_GC_DELAY,
        lease_interval: float = DEFAULT_LEASE_INTERVAL,
    ) -> None:
        self.store = store
        self.run_delay = run_delay
        self.stop_delay = stop_delay
        self.gc_delay = gc_delay
        self.lease_interval = lease_interval
        self._nodes: dict[str, _Node] = {}
        # Pods with an action planned: (namespace, name) -> (uid, action, timer).
        self._planned: dict[tuple[str, str], tuple[str, str, asyncio.TimerHandle]] = {}
        # Pod IPs handed out: (namespace, name) -> (node, ip).
        self._ips: dict[tuple[str, str], tuple[str, str]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Start following the store (call from the server's running event loop)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._follow(), name="kubesched-node-agent"),
            asyncio.create_task(self._renew_leases(), name="kubesched-node-leases"),
        ]

    async def stop(self) -> None:
        """Stop the agent's tasks and timers."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        for _, _, timer in self._planned.values():
            timer.cancel()
        self._planned.clear()

    @property
    def nodes(self) -> list[str]:
        """The names of the nodes the agent runs now."""
        return sorted(self._nodes)

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake.set)

    def _watch(self, res: Any) -> Watcher:
        return self.store.watch(res, resource_version="0", notify=self._notify)

    async def _follow(self) -> None:
        nodes, pods = self._watch(NODES), self._watch(PODS)
        try:
            while True:
                self._wake.clear()
                if nodes.overflowed or pods.overflowed:  # fell behind: start over
                    nodes.close()
                    pods.close()
                    nodes, pods = self._watch(NODES), self._watch(PODS)
                for event in nodes.take():
                    self._guard(self._on_node, event)
                for event in pods.take():
                    self._guard(self._on_pod, event)
                if nodes.idle and pods.idle:
                    await self._wake.wait()
                else:
                    await asyncio.sleep(0)
        finally:
            nodes.close()
            pods.close()

    def _guard(self, handler: Callable[[WatchEvent], None], event: WatchEvent) -> None:
        try:
            handler(event)
        except Exception:  # a bug: log it, keep running
            log.exception("node agent: handling %s failed", event.type)

    # -- nodes --------------------------------------------------------------------------

    def _on_node(self, event: WatchEvent) -> None:
        node = event.object
        name = node["metadata"]["name"]
        if event.type != "DELETED" and is_simulated(node):
            known = self._nodes.get(name)
            if known is not None and known.uid == node["metadata"].get("uid"):
                return
            self._nodes[name] = _Node(node)
            self._renew_lease(self._nodes[name])
            for pod in self.store.list(PODS, field_selector=f"spec.nodeName={name}").items:
                self._on_pod(WatchEvent("MODIFIED", pod, 0))
            return
        gone = self._nodes.pop(name, None)
        if gone is None:
            return
        self._delete_lease(gone)
        if event.type == "DELETED":
            assert self._loop is not None
            self._loop.call_later(self.gc_delay, self._guarded_gc, gone.name)

    def _guarded_gc(self, node: str) -> None:
        try:
            self._gc_orphans(node)
        except Exception:
            log.exception("node agent: collecting the pods of node %s failed", node)

    def _gc_orphans(self, node: str) -> None:
        try:
            self.store.get(NODES, None, node)
            return  # it came back
        except errors.ApiError:
            pass
        for pod in self.store.list(PODS, field_selector=f"spec.nodeName={node}").items:
            meta = pod["metadata"]
            ns, name, uid = meta["namespace"], meta["name"], meta.get("uid")
            if (pod.get("status") or {}).get("phase") not in _TERMINAL:
                with contextlib.suppress(errors.ApiError, _Skip):
                    self.store.guaranteed_update(
                        PODS, ns, name, _mark_failed(uid), subresource="status"
                    )
            with contextlib.suppress(errors.ApiError):
                self.store.delete_gracefully(PODS, ns, name, 0, uid=uid)

    # -- leases -------------------------------------------------------------------------

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(self.lease_interval)
            for node in list(self._nodes.values()):
                try:
                    self._renew_lease(node)
                except Exception:
                    log.exception("node agent: renewing the lease of %s failed", node.name)

    def _renew_lease(self, node: _Node) -> None:
        now = micro_time()

        def renew(lease: Object) -> Object:
            spec = lease.setdefault("spec", {})
            spec["holderIdentity"] = node.name
            spec["leaseDurationSeconds"] = LEASE_DURATION_SECONDS
            spec["renewTime"] = now
            return lease

        try:
            self.store.guaranteed_update(LEASES, LEASE_NAMESPACE, node.name, renew)
            return
        except errors.ApiError as exc:
            if exc.code != 404:
                raise
        lease: Object = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": node.name,
                "namespace": LEASE_NAMESPACE,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node.uid}
                ],
            },
            "spec": {
                "holderIdentity": node.name,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                "renewTime": now,
            },
        }
        with contextlib.suppress(errors.ApiError):  # created meanwhile: renewed next time
            self.store.create(LEASES, lease, LEASE_NAMESPACE)

    def _delete_lease(self, node: _Node) -> None:
        try:
            lease = self.store.get(LEASES, LEASE_NAMESPACE, node.name)
        except errors.ApiError:
            return
        owners = lease["metadata"].get("ownerReferences") or []
        if any(o.get("kind") == "Node" and o.get("uid") == node.uid for o in owners):
            with contextlib.suppress(errors.ApiError):
                self.store.delete(LEASES, LEASE_NAMESPACE, node.name)

    # -- pods ---------------------------------------------------------------------------

    def _on_pod(self, event: WatchEvent) -> None:
        pod = event.object
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        uid = meta.get("uid", "")
        if event.type == "DELETED":
            self._cancel(key)
            self._release(key)
            return
        node = self._nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        if node is None:
            return
        status = pod.get("status") or {}
        if status.get("podIP") and key not in self._ips and node.network is not None:
            ip = str(status["podIP"])
            with contextlib.suppress(ValueError):
                if ipaddress.IPv4Address(ip) in node.network:
                    node.used.add(ip)
                    self._ips[key] = (node.name, ip)
        if meta.get("deletionTimestamp"):
            self._plan(key, uid, "stop", self.stop_delay, self._finish_deletion)
        elif status.get("phase", "Pending") == "Pending":
            self._plan(key, uid, "run", self.run_delay, self._run)

    def _plan(
        self,
        key: tuple[str, str],
        uid: str,
        action: str,
        delay: float,
        do: Callable[[tuple[str, str], str], None],
    ) -> None:
        planned = self._planned.get(key)
        if planned is not None:
            if planned[0] == uid and planned[1] == action:
                return
            planned[2].cancel()
        assert self._loop is not None
        timer = self._loop.call_later(delay, self._fire, key, uid, do)
        self._planned[key] = (uid, action, timer)

    def _fire(
        self, key: tuple[str, str], uid: str, do: Callable[[tuple[str, str], str], None]
    ) -> None:
        self._planned.pop(key, None)
        try:
            do(key, uid)
        except (errors.ApiError, _Skip):
            pass  # gone or changed meanwhile: the watch tells what is next
        except Exception:
            log.exception("node agent: acting on pod %s/%s failed", *key)

    def _cancel(self, key: tuple[str, str]) -> None:
        planned = self._planned.pop(key, None)
        if planned is not None:
            planned[2].cancel()

    def _release(self, key: tuple[str, str]) -> None:
        held = self._ips.pop(key, None)
        if held is not None and held[0] in self._nodes:
            self._nodes[held[0]].used.discard(held[1])

    def _finish_deletion(self, key: tuple[str, str], uid: str) -> None:
        self.store.delete_gracefully(PODS, key[0], key[1], 0, uid=uid)

    def _run(self, key: tuple[str, str], uid: str) -> None:
        def mutate(pod: Object) -> Object:
            meta, spec = pod["metadata"], pod.get("spec") or {}
            status = pod.setdefault("status", {})
            node = self._nodes.get(spec.get("nodeName") or "")
            if (
                meta.get("uid") != uid
                or node is None
                or meta.get("deletionTimestamp")
                or status.get("phase", "Pending") != "Pending"
            ):
                raise _Skip
            if spec.get("hostNetwork"):
                ip = node.host_ip
            else:
                held = self._ips.get(key)
                ip = held[1] if held is not None and held[0] == node.name else node.allocate()
                if ip:
                    self._ips[key] = (node.name, ip)
            _set_running(pod, node.host_ip, ip, uid)
            return pod

        self.store.guaranteed_update(PODS, key[0], key[1], mutate, subresource="status")


def _set_running(pod: Object, host_ip: str, pod_ip: str, uid: str) -> None:
    now = now_rfc3339()
    spec, status = pod.get("spec") or {}, pod["status"]
    status["phase"] = "Running"
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    kinds = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
    scheduled = [c for c in conditions if c.get("type") == "PodScheduled"]
    others = [c for c in conditions if c.get("type") not in (*kinds, "PodScheduled")]
    ready = [
        {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        for kind in kinds
    ]
    if not scheduled:
        scheduled = [
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now,
            }
        ]
    status["conditions"] = [*ready, *scheduled, *others]
    if host_ip:
        status["hostIP"] = host_ip
        status["hostIPs"] = [{"ip": host_ip}]
    if pod_ip:
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    status.setdefault("startTime", now)

    def container_id(name: str) -> str:
        return "kubesched://" + hashlib.sha256(f"{uid}/{name}".encode()).hexdigest()

    def statuses(key: str, state: Object, ready: bool) -> list[Object]:
        out = []
        for c in spec.get(key) or ():
            if not isinstance(c, dict):
                continue
            name = str(c.get("name", ""))
            out.append(
                {
                    "name": name,
                    "image": c.get("image", ""),
                    "imageID": "",
                    "containerID": container_id(name),
                    "ready": ready,
                    "started": ready,
                    "restartCount": 0,
                    "state": state,
                    "lastState": {},
                }
            )
        return out

    init = statuses(
        "initContainers",
        {
            "terminated": {
                "exitCode": 0,
                "reason": "Completed",
                "startedAt": now,
                "finishedAt": now,
            }
        },
        False,
    )
    if init:
        status["initContainerStatuses"] = init
    status["containerStatuses"] = statuses("containers", {"running": {"startedAt": now}}, True)


def _mark_failed(uid: Any) -> Callable[[Object], Object]:
    def mutate(pod: Object) -> Object:
        if pod["metadata"].get("uid") != uid:
            raise _Skip
        status = pod.setdefault("status", {})
        if status.get("phase") in _TERMINAL:
            raise _Skip
        status["phase"] = "Failed"
        conditions = [
            c
            for c in status.get("conditions") or ()
            if isinstance(c, dict) and c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByPodGC",
                "message": "PodGC: node no longer exists",
                "lastProbeTime": None,
                "lastTransitionTime": now_rfc3339(),
            }
        )
        status["conditions"] = conditions
        return pod

    return mutate
