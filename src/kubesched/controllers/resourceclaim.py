"""The resource-claim controller: claims for pods from ResourceClaimTemplates, and claims
given back when their pods are done, as ``pkg/controller/resourceclaim/controller.go``.

**Pods** (key ``pod:<namespace>/<name>``). For each ``spec.resourceClaims`` entry naming
a template, a pod that is not done and not being deleted gets its claim: the one already
made for it (owned by the pod, with the ``resource.kubernetes.io/pod-claim-name``
annotation; found through an index of claims by owner), else a new one from
:func:`~kubesched.objects.dra.podclaims.claim_from_template` (``generateName``
``<pod>-<entry>-``, the pod as controller owner). The names go into the pod's
``status.resourceClaimStatuses``. A missing template is an error, retried with backoff
(``FailedResourceClaimCreation`` event) until it exists.

**Claims** (key ``claim:<namespace>/<name>``). Consumers in ``status.reservedFor`` that
are gone are removed: a pod no longer in the cache (checked with a live GET, since
removing a pod the scheduler is about to bind would be wrong), another pod of that name,
or a pod that is done. When the last consumer goes, a claim the scheduler allocated
(it has the ``resource.kubernetes.io/delete-protection`` finalizer) is deallocated and
the finalizer removed, so its devices are free for others and a claim being deleted
can go. A claim generated for a pod that is done (or replaced by another pod of its
name) and not reserved is deleted; the garbage collector deletes the claims of deleted
pods through their owner reference.

Upstream's default: ``concurrent-resource-claim-syncs`` 10 workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from kubesched.controllers.ownerindex import shared_index
from kubesched.kube import Client, Conflict, KubeError, NotFound
from kubesched.kube.informer import Informer
from kubesched.kube.record import EventRecorder
from kubesched.kube.resources import (
    PODS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RawObject,
)
from kubesched.kube.workqueue import WorkQueue
from kubesched.objects.dra.podclaims import (
    POD_CLAIM_NAME_ANNOTATION,
    claim_from_template,
    decode_pod_resource_claims,
    decode_resource_claim_statuses,
)

if TYPE_CHECKING:
    from kubesched.controllers.manager import ControllerContext

__all__ = [
    "FINALIZER",
    "NAME",
    "ResourceClaimController",
    "claims_ready",
    "may_start",
    "start",
]

log = logging.getLogger(__name__)

NAME = "resourceclaim-controller"
WORKERS = 10
#: ``resourceapi.Finalizer``: set by the scheduler on the claims it allocates.
FINALIZER = "resource.kubernetes.io/delete-protection"
FAILED_CREATION = "FailedResourceClaimCreation"

_POD = "pod:"
_CLAIM = "claim:"


def _meta(obj: RawObject) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _key(obj: RawObject) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def is_pod_done(pod: RawObject) -> bool:
    """``isPodDone``: finished, or deleted before it was ever scheduled."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        return True
    return bool(_meta(pod).get("deletionTimestamp")) and not (pod.get("spec") or {}).get("nodeName")


def _owning_pod(claim: RawObject) -> tuple[str, str]:
    for ref in _meta(claim).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
            return str(ref.get("name") or ""), str(ref.get("uid") or "")
    return "", ""


class ResourceClaimController:
    """Makes pods' claims from templates and releases claims their pods no longer use."""

    def __init__(
        self,
        client: Client,
        pods: Informer[RawObject],
        claims: Informer[RawObject],
        templates: Informer[RawObject],
        workers: int = WORKERS,
    ) -> None:
        self.client = client
        self.pod_informer = pods
        self.claim_informer = claims
        self.template_informer = templates
        self.workers = max(workers, 1)
        self.recorder = EventRecorder(client, NAME)
        self._claims_by_owner = shared_index(claims)
        self._queue: WorkQueue[str] = WorkQueue("resource_claim")
        #: Claim keys by the pod (namespace/name) in their reservedFor, so a pod that
        #: ends wakes the claims it held.
        pods.add_handler(self._on_pod, lambda _, new: self._on_pod(new), self._on_pod_delete)
        claims.add_handler(self._on_claim, lambda _, new: self._on_claim(new), self._on_claim)
        templates.add_handler(self._on_template, lambda _, new: self._on_template(new))

    # --- handlers -------------------------------------------------------------------

    def _on_pod(self, pod: RawObject) -> None:
        spec = pod.get("spec") or {}
        if not spec.get("resourceClaims"):
            return
        self._queue.add(_POD + _key(pod))
        if is_pod_done(pod) or _meta(pod).get("deletionTimestamp"):
            self._enqueue_claims_of(pod)

    def _on_pod_delete(self, pod: RawObject) -> None:
        if (pod.get("spec") or {}).get("resourceClaims"):
            self._enqueue_claims_of(pod)

    def _enqueue_claims_of(self, pod: RawObject) -> None:
        namespace = _meta(pod).get("namespace") or ""
        statuses = decode_resource_claim_statuses(pod.get("status") or {})
        for entry in decode_pod_resource_claims(pod.get("spec") or {}):
            name = entry.resource_claim_name or statuses.get(entry.name)
            if name:
                self._queue.add(f"{_CLAIM}{namespace}/{name}")

    def _on_claim(self, claim: RawObject) -> None:
        self._queue.add(_CLAIM + _key(claim))
        # A claim of a pod waiting for it: the pod's status may need its name.
        pod_name, _ = _owning_pod(claim)
        if pod_name:
            self._queue.add(f"{_POD}{_meta(claim).get('namespace') or ''}/{pod_name}")

    def _on_template(self, template: RawObject) -> None:
        # Pods waiting for this template are retried with backoff anyway; wake them now.
        namespace = _meta(template).get("namespace") or ""
        name = _meta(template).get("name")
        for pod in self.pod_informer.list():
            if _meta(pod).get("namespace") != namespace:
                continue
            for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
                if entry.get("resourceClaimTemplateName") == name:
                    self._queue.add(_POD + _key(pod))

    # --- workers --------------------------------------------------------------------

    async def run(self) -> None:
        """Work until cancelled (after the informers synced)."""
        for pod in self.pod_informer.list():
            self._on_pod(pod)
        for claim in self.claim_informer.list():
            self._queue.add(_CLAIM + _key(claim))
        tasks = [asyncio.create_task(self._work()) for _ in range(self.workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await self.recorder.flush()

    async def _work(self) -> None:
        while True:
            key = await self._queue.get()
            if key is None:
                return
            try:
                if key.startswith(_POD):
                    await self.sync_pod(key[len(_POD) :])
                else:
                    await self.sync_claim(key[len(_CLAIM) :])
                self._queue.forget(key)
            except asyncio.CancelledError:
                raise
            except (KubeError, _Retry) as exc:
                log.info("resourceclaim: %s: %s", key, exc)
                self._queue.add_rate_limited(key)
            except Exception:  # a bug: log it, keep running
                log.exception("resourceclaim: syncing %s failed", key)
                self._queue.add_rate_limited(key)
            finally:
                self._queue.done(key)

    # --- pods -----------------------------------------------------------------------

    async def sync_pod(self, key: str) -> None:
        """Make the pod's missing claims and record their names in its status."""
        pod = self.pod_informer.get(key)
        if pod is None or is_pod_done(pod) or _meta(pod).get("deletionTimestamp"):
            return
        meta = _meta(pod)
        namespace, pod_name, uid = meta.get("namespace") or "", meta["name"], meta.get("uid", "")
        statuses = decode_resource_claim_statuses(pod.get("status") or {})
        wanted = dict(statuses)
        for entry in decode_pod_resource_claims(pod.get("spec") or {}):
            template_name = entry.resource_claim_template_name
            if template_name is None:
                continue
            if entry.name in statuses:
                continue  # recorded already (None: no claim needed)
            existing = self._find_claim(uid, pod_name, entry.name)
            if existing is None:
                template = self.template_informer.get(f"{namespace}/{template_name}")
                if template is None:
                    message = (
                        f'PodResourceClaim {entry.name}: ResourceClaimTemplate "{template_name}" '
                        "not found"
                    )
                    self.recorder.event(pod, "Warning", FAILED_CREATION, message)
                    raise _Retry(message)
                body = claim_from_template(pod, entry.name, template)
                try:
                    existing = await self.client.create(RESOURCE_CLAIMS.raw, body, namespace)
                except KubeError as err:
                    self.recorder.event(
                        pod, "Warning", FAILED_CREATION, f"PodResourceClaim {entry.name}: {err}"
                    )
                    raise
                self._claims_by_owner.upsert(existing)
            wanted[entry.name] = _meta(existing)["name"]
        if wanted != statuses:
            entries = []
            for name, claim_name in wanted.items():
                item: dict[str, Any] = {"name": name}
                if claim_name is not None:
                    item["resourceClaimName"] = claim_name
                entries.append(item)
            patch = {"metadata": {"uid": uid}, "status": {"resourceClaimStatuses": entries}}
            with contextlib.suppress(NotFound):
                await self.client.patch(
                    PODS.raw, pod_name, patch, namespace, "merge", subresource="status"
                )

    def _find_claim(self, pod_uid: str, pod_name: str, entry: str) -> RawObject | None:
        """``findPodResourceClaim``: the pod's claim for ``entry`` (annotated, or named
        ``<pod>-<entry>`` as before 1.28)."""
        legacy = f"{pod_name}-{entry}"
        for claim in self._claims_by_owner.owned_by(pod_uid):
            annotated = (_meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)
            if annotated == entry or (annotated is None and _meta(claim).get("name") == legacy):
                return claim
        return None

    # --- claims ---------------------------------------------------------------------

    async def sync_claim(self, key: str) -> None:
        """Drop consumers that are gone; deallocate when none is left; delete a generated
        claim whose pod is done."""
        claim = self.claim_informer.get(key)
        if claim is None:
            return
        meta = _meta(claim)
        namespace = meta.get("namespace") or ""
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        valid = []
        for consumer in reserved:
            if consumer.get("apiGroup", "") == "" and consumer.get("resource") == "pods":
                if await self._pod_uses(namespace, consumer):
                    valid.append(consumer)
            else:
                valid.append(consumer)  # not ours to judge
        if len(valid) < len(reserved):
            updated = {**claim, "status": {**status, "reservedFor": valid}}
            if not valid:
                updated["status"].pop("reservedFor")
                if FINALIZER in (meta.get("finalizers") or ()):
                    # Allocated by the scheduler: deallocate by clearing it.
                    updated["status"].pop("allocation", None)
            try:
                claim = await self.client.update(RESOURCE_CLAIMS.raw, updated, "status")
            except (Conflict, NotFound):
                raise _Retry(f"claim {key} changed while its consumers were removed") from None
            meta = _meta(claim)
            status = claim.get("status") or {}
        if (
            FINALIZER in (meta.get("finalizers") or ())
            and status.get("allocation") is None
            and (len(valid) < len(reserved) or meta.get("deletionTimestamp"))
        ):
            finalizers = [f for f in meta["finalizers"] if f != FINALIZER]
            body = {**claim, "metadata": {**meta, "finalizers": finalizers}}
            try:
                claim = await self.client.update(RESOURCE_CLAIMS.raw, body)
            except (Conflict, NotFound):
                raise _Retry(f"claim {key} changed while its finalizer was removed") from None
        if not valid:
            await self._delete_if_unused(claim)

    async def _pod_uses(self, namespace: str, consumer: RawObject) -> bool:
        name, uid = str(consumer.get("name") or ""), str(consumer.get("uid") or "")
        pod = self.pod_informer.get(f"{namespace}/{name}")
        if pod is None:
            # Not in the cache (yet?): the scheduler may be binding it; ask the server.
            try:
                pod = await self.client.get(PODS.raw, name, namespace)
            except NotFound:
                return False
        if _meta(pod).get("uid") != uid:
            return False
        return not is_pod_done(pod)

    async def _delete_if_unused(self, claim: RawObject) -> None:
        pod_name, pod_uid = _owning_pod(claim)
        meta = _meta(claim)
        if not pod_name or meta.get("deletionTimestamp"):
            return
        pod = self.pod_informer.get(f"{meta.get('namespace') or ''}/{pod_name}")
        if pod is None:
            return  # the garbage collector deletes the claims of deleted pods
        if _meta(pod).get("uid") == pod_uid and not is_pod_done(pod):
            return
        with contextlib.suppress(NotFound, Conflict):
            await self.client.delete(
                RESOURCE_CLAIMS, meta["name"], meta.get("namespace"), uid=str(meta.get("uid", ""))
            )


class _Retry(Exception):
    """Try the key again later."""


# --- the kubelet's "may start" hook -------------------------------------------------


def claims_ready(pod: RawObject, claim_of: Any) -> str | None:
    """None when every claim of ``pod`` is allocated and reserved for it (the kubelet
    may prepare the devices and start it), else why it waits. ``claim_of(ns, name)``
    returns a claim (raw) or None."""
    meta = _meta(pod)
    namespace = meta.get("namespace") or ""
    statuses = decode_resource_claim_statuses(pod.get("status") or {})
    for entry in decode_pod_resource_claims(pod.get("spec") or {}):
        if entry.resource_claim_name is not None:
            name: str | None = entry.resource_claim_name
        elif entry.name in statuses:
            name = statuses[entry.name]
            if name is None:
                continue
        else:
            return f"resource claim for {entry.name} not created yet"
        claim = claim_of(namespace, name)
        if claim is None:
            return f'resourceclaim "{name}" not found'
        status = claim.get("status") or {}
        if status.get("allocation") is None:
            return f'resourceclaim "{name}" is not allocated'
        if not any(c.get("uid") == meta.get("uid") for c in status.get("reservedFor") or ()):
            return f'resourceclaim "{name}" is not reserved for the pod'
    return None


def may_start(ctx: ControllerContext) -> Any:
    """The kubelet's hook (a factory for ``ControllerOptions.may_start``): a pod with
    claims starts once all are allocated and reserved for it, as the kubelet's DRA
    manager prepares the devices before the containers start."""
    # Optional: against a server without resource.k8s.io the kubelet still runs pods
    # (those with claims wait, as they cannot be allocated there).
    claims = ctx.informers.informer(RESOURCE_CLAIMS, optional=True)

    def hook(pod: RawObject) -> str | None:
        if not (pod.get("spec") or {}).get("resourceClaims"):
            return None
        return claims_ready(pod, lambda ns, name: claims.get(f"{ns}/{name}"))

    return hook


def start(ctx: ControllerContext) -> ResourceClaimController:
    """The resource-claim controller's init function for the controller manager."""
    return ResourceClaimController(
        ctx.client(NAME),
        ctx.informers.informer(PODS),
        ctx.informers.informer(RESOURCE_CLAIMS),
        ctx.informers.informer(RESOURCE_CLAIM_TEMPLATES),
    )
