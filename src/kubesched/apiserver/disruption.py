"""The disruption controller: PodDisruptionBudget status, as kube-controller-manager keeps it.

A task in the API server's event loop follows pods and PDBs with store watches and, for
every namespace where something changed (and every few seconds, so that stale
``disruptedPods`` entries expire), recomputes the status of each PDB there, as upstream's
``pkg/controller/disruption`` does:

* the pods a PDB covers are the pods of its namespace its ``spec.selector`` matches (an
  empty selector matches every pod, a missing one none — policy/v1);
* ``currentHealthy``: those not being deleted, not in ``disruptedPods``, Running and Ready;
* ``minAvailable`` (int or percentage, rounded up) gives ``desiredHealthy``;
  ``maxUnavailable`` (int or percentage, rounded up) gives ``expectedPods - maxUnavailable``;
* ``disruptionsAllowed = max(currentHealthy - desiredHealthy, 0)``, the condition
  ``DisruptionAllowed`` (SufficientPods / InsufficientPods), ``observedGeneration``;
* ``disruptedPods`` entries are dropped once the pod is being deleted or gone, or after
  :data:`DELETION_TIMEOUT` seconds.

Difference from upstream: ``expectedPods`` is always the number of matched pods. Upstream
takes it from the scale of the pods' controllers (Deployment, ReplicaSet, StatefulSet, ...)
for percentages and ``maxUnavailable``, and refuses (condition False, SyncFailed) when pods
have no controller; there are no controllers here, so the matched pods are the scale.

Status is written through the status subresource with the resourceVersion read
(optimistic concurrency); a conflict is retried on the next pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import PODDISRUPTIONBUDGETS, PODS
from kubesched.apiserver.selectors import Requirement
from kubesched.apiserver.store import Store, copy_object, format_time, parse_time
from kubesched.apiserver.watch import Object, Watcher

log = logging.getLogger(__name__)

#: How long an eviction's ``disruptedPods`` entry waits for the pod's deletion (upstream 2 min).
DELETION_TIMEOUT = 120.0
#: Seconds between full passes over every PDB.
RESYNC_INTERVAL = 5.0

_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def selector_requirements(selector: Any) -> tuple[Requirement, ...] | None:
    """A metav1.LabelSelector as requirements; ``None`` when it selects nothing (missing)."""
    if not isinstance(selector, dict):
        return None
    reqs = [
        Requirement(str(k), "=", (str(v),)) for k, v in (selector.get("matchLabels") or {}).items()
    ]
    for expr in selector.get("matchExpressions") or ():
        op = _OPS.get(str(expr.get("operator")))
        if op is None:
            return None
        values = tuple(str(v) for v in expr.get("values") or ())
        reqs.append(Requirement(str(expr.get("key", "")), op, values))
    return tuple(reqs)


def matches(pdb: Object, pod: Object) -> bool:
    """Whether ``pdb`` covers ``pod`` (same namespace, selector matches)."""
    if (pdb["metadata"].get("namespace") or "") != (pod["metadata"].get("namespace") or ""):
        return False
    reqs = selector_requirements((pdb.get("spec") or {}).get("selector"))
    if reqs is None:
        return False
    labels = pod["metadata"].get("labels") or {}
    return all(r.matches(labels) for r in reqs)


def pdbs_for_pod(store: Store, pod: Object) -> list[Object]:
    """The PDBs that cover ``pod``."""
    ns = pod["metadata"].get("namespace") or ""
    return [p for p in store.list(PODDISRUPTIONBUDGETS, ns).items if matches(p, pod)]


def is_ready(pod: Object) -> bool:
    """Running with the Ready condition True."""
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or ()
        if isinstance(c, dict)
    )


def _scaled(value: Any, total: int) -> int:
    # intstr.GetScaledValueFromIntOrPercent with roundUp=true.
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        try:
            percent = int(text[:-1])
        except ValueError:
            raise ValueError(f"invalid value for IntOrString: {text!r}") from None
        return math.ceil(percent * total / 100)
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"invalid value for IntOrString: {text!r}") from None


def compute_status(pdb: Object, pods: list[Object], now: datetime) -> dict[str, Any]:
    """The status the disruption controller would write for ``pdb`` given the namespace's
    ``pods``."""
    spec = pdb.get("spec") or {}
    covered = [p for p in pods if matches(pdb, p)]
    by_name = {p["metadata"]["name"]: p for p in covered}
    old = pdb.get("status") or {}
    disrupted: dict[str, str] = {}
    for name, when in (old.get("disruptedPods") or {}).items():
        pod = by_name.get(name)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            continue
        try:
            if parse_time(str(when)) + timedelta(seconds=DELETION_TIMEOUT) < now:
                continue
        except ValueError:
            continue
        disrupted[name] = str(when)
    healthy = sum(
        1
        for p in covered
        if not p["metadata"].get("deletionTimestamp")
        and p["metadata"]["name"] not in disrupted
        and is_ready(p)
    )
    expected = len(covered)
    if spec.get("maxUnavailable") is not None:
        desired = max(expected - _scaled(spec["maxUnavailable"], expected), 0)
    elif spec.get("minAvailable") is not None:
        desired = _scaled(spec["minAvailable"], expected)
    else:
        desired = 0
    allowed = max(healthy - desired, 0)
    status: dict[str, Any] = {
        "observedGeneration": int(pdb["metadata"].get("generation", 1)),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    status["conditions"] = [
        _condition(old, allowed > 0, "SufficientPods" if allowed > 0 else "InsufficientPods")
    ]
    return status


def _condition(old_status: dict[str, Any], allowed: bool, reason: str) -> dict[str, Any]:
    value = "True" if allowed else "False"
    for c in old_status.get("conditions") or ():
        if (
            isinstance(c, dict)
            and c.get("type") == "DisruptionAllowed"
            and (c.get("status"), c.get("reason")) == (value, reason)
        ):
            return dict(c)
    return {
        "type": "DisruptionAllowed",
        "status": value,
        "reason": reason,
        "message": "",
        "observedGeneration": 0,
        "lastTransitionTime": format_time(datetime.now(UTC)),
    }


def sync_pdb(store: Store, pdb: Object, pods: list[Object], now: datetime) -> bool:
    """Write ``pdb``'s status if it changed; False on a conflict (try again later)."""
    status = compute_status(pdb, pods, now)
    for c in status["conditions"]:
        c["observedGeneration"] = status["observedGeneration"]
    if status == pdb.get("status"):
        return True
    new = copy_object(pdb)
    new["status"] = status
    try:
        store.update(PODDISRUPTIONBUDGETS, new, pdb["metadata"].get("namespace"), "status")
    except errors.ApiError as err:
        if err.code in (404, 409):
            return err.code == 404
        raise
    return True


def sync_namespace(store: Store, namespace: str) -> bool:
    """Bring every PDB of ``namespace`` up to date; False if one needs another pass."""
    pdbs = store.list(PODDISRUPTIONBUDGETS, namespace).items
    if not pdbs:
        return True
    pods = store.list(PODS, namespace).items
    now = datetime.now(UTC)
    done = True
    for pdb in pdbs:
        try:
            done = sync_pdb(store, pdb, pods, now) and done
        except ValueError as exc:
            log.warning("disruption: PDB %s/%s: %s", namespace, pdb["metadata"]["name"], exc)
    return done


class DisruptionController:
    """Keeps PDB status current; :meth:`start` it in the server's running loop."""

    def __init__(self, store: Store, resync_interval: float = RESYNC_INTERVAL) -> None:
        self.store = store
        self.resync_interval = resync_interval
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()

    def start(self) -> None:
        """Start following the store (from the running event loop)."""
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="kubesched-disruption")

    async def stop(self) -> None:
        """Stop the controller's task."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._wake.set)

    def _watch(self) -> tuple[Watcher, Watcher]:
        return (
            self.store.watch(PODS, resource_version="0", notify=self._notify),
            self.store.watch(PODDISRUPTIONBUDGETS, resource_version="0", notify=self._notify),
        )

    async def _run(self) -> None:
        pods, pdbs = self._watch()
        loop = asyncio.get_running_loop()
        next_resync = loop.time() + self.resync_interval
        pending: set[str] = set()
        try:
            while True:
                self._wake.clear()
                if pods.overflowed or pdbs.overflowed:
                    pods.close()
                    pdbs.close()
                    pods, pdbs = self._watch()
                for event in pods.take() + pdbs.take():
                    pending.add(event.object["metadata"].get("namespace") or "")
                if loop.time() >= next_resync:
                    pending.update(
                        p["metadata"].get("namespace") or ""
                        for p in self.store.list(PODDISRUPTIONBUDGETS).items
                    )
                    next_resync = loop.time() + self.resync_interval
                retry: set[str] = set()
                for ns in pending:
                    try:
                        if not sync_namespace(self.store, ns):
                            retry.add(ns)
                    except Exception:  # a bug: log it, keep running
                        log.exception("disruption: syncing namespace %r failed", ns)
                pending = retry
                if retry:
                    await asyncio.sleep(0.01)
                    continue
                wait = max(next_resync - loop.time(), 0.0)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=wait)
        finally:
            pods.close()
            pdbs.close()
