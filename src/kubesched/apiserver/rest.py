"""The REST verbs on the store, without HTTP: what each request does and returns.

Each function takes parsed inputs (a Resource, a namespace, a name, a decoded body) and
returns ``(http_status, body)`` or raises :class:`~kubesched.apiserver.errors.ApiError`.
The HTTP layer only routes, decodes and encodes; everything kube-apiserver decides about a
request (namespace lifecycle, defaulting, binding rules, what a delete returns) is here.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from typing import Any

from kubesched.apiserver import (
    crd,
    draadmission,
    errors,
    fieldvalidation,
    priority,
    storage,
    strategy,
)
from kubesched.apiserver.admission import check_body, default_on_create, default_on_write
from kubesched.apiserver.patch import JSON_PATCH, MERGE, STRATEGIC, apply_patch
from kubesched.apiserver.resources import (
    CUSTOMRESOURCEDEFINITIONS,
    NAMESPACES,
    PODS,
    PRIORITYCLASSES,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    Resource,
)
from kubesched.apiserver.store import Store, now_rfc3339
from kubesched.apiserver.validation import validate_create, validate_update
from kubesched.apiserver.watch import Object
from kubesched.objects import typecheck

Reply = tuple[int, Any]

#: Namespaces that cannot be deleted (upstream's NamespaceLifecycle ``immortalNamespaces``).
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def _require_namespace(store: Store, res: Resource, namespace: str | None) -> None:
    # The NamespaceLifecycle admission plugin: no objects in a namespace that is not there.
    if res.namespaced and namespace:
        try:
            store.get(NAMESPACES, None, namespace)
        except errors.ApiError:
            raise errors.not_found("namespaces", namespace) from None


def _check_patched_types(res: Resource, patched: Any) -> None:
    # patch.go decodes the patched JSON into the Go type; what cannot be decoded is a 422
    # on the field "patch" whose value is the patched object.
    if not isinstance(patched, dict):
        return
    try:
        typecheck.check(res.group, res.version, res.kind, patched)
    except typecheck.TypeMismatch as err:
        shown = json.dumps(json.dumps(patched, separators=(",", ":")))
        cause: errors.StatusCause = {
            "reason": "FieldValueInvalid",
            "message": f"Invalid value: {shown}: {err}",
            "field": "patch",
        }
        raise errors.invalid("", "", [cause]) from None


def _check_url_identity(res: Resource, obj: Object, namespace: str | None, name: str) -> None:
    meta = obj.setdefault("metadata", {})
    if name and meta.get("name") not in (None, "", name):
        raise errors.bad_request(
            f"the name of the object ({meta.get('name')}) does not match the name on the URL "
            f"({name})"
        )
    if name:
        meta["name"] = name
    if res.namespaced and meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


def create(
    store: Store, res: Resource, namespace: str | None, body: Any, view: Resource | None = None
) -> Reply:
    """POST on a collection: 201 with the stored object (``view``: the API the request
    came through, when it is another view of ``res``)."""
    obj = check_body(res, body)
    _check_url_identity(res, obj, namespace, "")
    _require_namespace(store, res, namespace)
    if res.namespaced and namespace:
        obj["metadata"]["namespace"] = namespace
    default_on_create(res, obj)
    # The uid is the server's (an uid in the body is ignored), known before the strategy
    # runs for the kinds whose PrepareForCreate names it.
    uid = str(uuid.uuid4()) if strategy.needs_uid(res) else ""
    if uid:
        obj["metadata"]["uid"] = uid
    strategy.prepare_for_create(res, obj)
    storage.prepare_for_create(res, obj)
    _admit(store, res, obj, creating=True)
    validate_create(res, obj, view)
    return 201, _written(store, res, store.create(res, obj, namespace, uid))


def _admit(store: Store, res: Resource, obj: Object, creating: bool) -> None:
    # Mutating and validating admission that needs the store (the Priority plugin), and
    # the strategies of CRDs and custom resources (defaulting, pruning, validation).
    if res.plural == "pods" and creating:
        priority.admit_pod(store, obj)
    elif creating and storage.admits(res):
        storage.admit_create(store, res, obj)
    elif res is PRIORITYCLASSES:
        priority.admit_priority_class(store, obj)
    elif res is CUSTOMRESOURCEDEFINITIONS:
        crd.admit_definition(store, obj, creating)
    elif res.custom is not None:
        crd.admit_custom(res, obj, creating)
    elif creating and (res is RESOURCECLAIMS or res is RESOURCECLAIMTEMPLATES):
        draadmission.admit_create(store, res, obj)


def _written(store: Store, res: Resource, stored: Object) -> Object:
    # A CRD written: its names accepted, established and served before the reply.
    if res is CUSTOMRESOURCEDEFINITIONS:
        crd.sync(store, stored)
    return stored


def update(
    store: Store,
    res: Resource,
    namespace: str | None,
    name: str,
    body: Any,
    sub: str = "",
    view: Resource | None = None,
) -> Reply:
    """PUT on an object or its status: 200 with the stored object."""
    obj = check_body(res, body)
    _check_url_identity(res, obj, namespace, name)
    default_on_write(res, obj)
    _admit(store, res, obj, creating=False)
    if res is PODS and sub == "":
        with contextlib.suppress(errors.ApiError):  # gone: the update answers 404
            priority.keep_on_update(store.get(res, namespace, name), obj)
    stored = store.update(res, obj, namespace, sub, check=_validator(res, sub, view, store))
    return 200, _written(store, res, stored)


def _validator(
    res: Resource, sub: str, view: Resource | None = None, store: Store | None = None
) -> Callable[[Object, Object], None]:
    # Run by the store on the object as it would be stored (status kept or replaced);
    # validating admission (PersistentVolumeClaimResize) runs after validation, as upstream.
    def check(new: Object, old: Object) -> None:
        strategy.prepare_for_update(res, new, old, sub)
        storage.prepare_for_update(res, new, old, sub)
        validate_update(res, new, old, sub, view)
        if res is RESOURCECLAIMS and sub == "status" and store is not None:
            draadmission.check_status(store, new, old)
        if store is not None:
            storage.validate_update(store, res, new, old, sub)

    return check


def patch(
    store: Store,
    res: Resource,
    namespace: str | None,
    name: str,
    body: Any,
    content_type: str,
    sub: str = "",
    fields: fieldvalidation.FieldCheck | None = None,
    view: Resource | None = None,
) -> Reply:
    """PATCH on an object or its status: 200 with the stored object. ``fields``: the
    request's fieldValidation (default Warn), applied to the patched object."""
    decoding = fields if fields is not None else fieldvalidation.FieldCheck()
    if res.custom is not None and content_type == STRATEGIC:
        # As apiextensions-apiserver: custom resources have no patch strategies.
        raise errors.unsupported_media_type((JSON_PATCH, MERGE))

    def mutate(current: Object) -> Object:
        patched = apply_patch(current, body, content_type, res.kind)
        _check_patched_types(res, patched)
        fieldvalidation.check_patched(decoding, res, patched, body, content_type)
        obj = check_body(res, patched)
        _check_url_identity(res, obj, namespace, name)
        default_on_write(res, obj)
        _admit(store, res, obj, creating=False)
        return obj

    check = _validator(res, sub, view, store)
    return 200, _written(
        store, res, store.guaranteed_update(res, namespace, name, mutate, sub, check)
    )


def delete(store: Store, res: Resource, namespace: str | None, name: str, options: Any) -> Reply:
    """DELETE on an object.

    Returns the object (pods, namespaces, and anything that stays because of a grace
    period or finalizers) or a Success Status; 202 Accepted instead of 200 when the
    object stays and the options said ``orphanDependents: false``, as upstream's handler
    answers. The options' ``propagationPolicy`` (or ``orphanDependents``) sets the
    garbage collector's finalizers (:func:`strategy.finalizers_after_delete`). A pod
    bound to a node and not finished is deleted gracefully: it gets ``deletionTimestamp``
    and ``deletionGracePeriodSeconds``
    (``gracePeriodSeconds`` of the options, else its ``terminationGracePeriodSeconds``)
    and stays until the grace is over — no kubelet confirms earlier, so the server's
    reaper removes it then — or until a delete with ``gracePeriodSeconds=0``.
    """
    if res.plural == "namespaces" and name in IMMORTAL_NAMESPACES:
        # The NamespaceLifecycle admission plugin's refusal, word for word.
        raise errors.forbidden("namespaces", name, "this namespace may not be deleted")
    if res is PRIORITYCLASSES:
        priority.check_delete(name)
    opts = options if isinstance(options, dict) else {}
    preconditions = opts.get("preconditions")
    uid = rv = None
    if isinstance(preconditions, dict):
        uid, rv = preconditions.get("uid"), preconditions.get("resourceVersion")
    requested = opts.get("gracePeriodSeconds")
    if requested is not None and not isinstance(requested, int):
        raise errors.bad_request(f"invalid gracePeriodSeconds: {requested!r}")
    strategy.check_delete_options(opts)

    def grace(obj: Object) -> int:
        return _grace_period(res, obj, requested)

    if res is CUSTOMRESOURCEDEFINITIONS:
        return 200, crd.delete_definition(store, name, uid, rv)

    gone, removed = store.delete_gracefully(
        res, namespace, name, grace, uid, rv, _gc_finalizers(res, opts)
    )
    if removed and res.plural == "namespaces":
        _delete_namespace_contents(store, name)
    if not removed and opts.get("orphanDependents") is False:
        return 202, gone
    if res.delete_returns_object or not removed:
        return 200, gone
    details: errors.StatusDetails = {"name": name, "kind": res.plural}
    if res.group:
        details["group"] = res.group
    details["uid"] = gone["metadata"].get("uid", "")
    return 200, errors.success(200, details)


def _gc_finalizers(res: Resource, options: dict[str, Any]) -> Callable[[Object], list[str]] | None:
    # Namespaces keep their own deletion (the namespace controller's "kubernetes"
    # finalizer in spec, emptied at once here).
    if res is NAMESPACES:
        return None
    return lambda obj: strategy.finalizers_after_delete(res, obj, options)


def _grace_period(res: Resource, obj: Object, requested: Any) -> int:
    # podStrategy.CheckGracefulDelete: other kinds have no grace period.
    if res.plural != "pods":
        return 0
    spec = obj.get("spec") or {}
    if requested is not None:
        period = int(requested)
    else:
        period = int(spec.get("terminationGracePeriodSeconds") or 0)
    phase = (obj.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0  # never started, or already finished: nothing to wait for
    return max(period, 0)


def _delete_namespace_contents(store: Store, namespace: str) -> None:
    # Upstream's namespace controller empties a deleted namespace; this slice does it now.
    for res in store.resources:
        if res.namespaced:
            for obj in store.list(res, namespace).items:
                store.delete(res, namespace, obj["metadata"]["name"])


def delete_collection(
    store: Store,
    res: Resource,
    namespace: str | None,
    label_selector: str,
    field_selector: str,
    options: Any = None,
) -> Reply:
    """DELETE on a collection: the list of deleted objects (each deleted with
    ``options``' propagation policy, as a delete of one would)."""
    opts = options if isinstance(options, dict) else {}
    strategy.check_delete_options(opts)
    page = store.list(res, namespace, label_selector, field_selector)
    deleted = []
    for obj in page.items:
        meta = obj["metadata"]
        try:
            if res is CUSTOMRESOURCEDEFINITIONS:
                deleted.append(crd.delete_definition(store, meta["name"], None, None))
                continue
            gone, _ = store.delete_gracefully(
                res,
                meta.get("namespace"),
                meta["name"],
                lambda o: _grace_period(res, o, None),
                finalizers=_gc_finalizers(res, opts),
            )
            deleted.append(gone)
        except errors.ApiError as err:
            if err.code != 404:  # deleted meanwhile: that is what was asked
                raise
    return 200, list_body(res, deleted, store.resource_version)


def list_body(
    res: Resource,
    items: list[Object],
    resource_version: int,
    continue_token: str = "",
    remaining: int | None = None,
) -> dict[str, Any]:
    """A ``<Kind>List`` body."""
    meta: dict[str, Any] = {"resourceVersion": str(resource_version)}
    if continue_token:
        meta["continue"] = continue_token
    if remaining is not None:
        meta["remainingItemCount"] = remaining
    return {
        "kind": f"{res.kind}List",
        "apiVersion": res.group_version,
        "metadata": meta,
        "items": items,
    }


def bind(store: Store, namespace: str, name: str, body: Any) -> Reply:
    """POST pods/<name>/binding or bindings: set ``spec.nodeName`` once.

    409 Conflict if the pod is already assigned or being deleted, 404 if it is gone; on
    success 201 with a Success Status, and the pod gets a PodScheduled=True condition.
    """
    if not isinstance(body, dict) or body.get("kind") not in (None, "Binding"):
        raise errors.bad_request("the body of the request must be a Binding")
    meta = body.get("metadata") or {}
    if name and meta.get("name") not in (None, "", name):
        raise errors.bad_request("name in URL does not match name in Binding object")
    pod_name = name or meta.get("name") or ""
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("namespace in URL does not match namespace in Binding object")
    target = body.get("target") or {}
    node = target.get("name") if isinstance(target, dict) else None
    if not pod_name or not node:
        field = "metadata.name" if not pod_name else "target.name"
        raise errors.invalid(
            "Binding",
            pod_name,
            [{"reason": "FieldValueRequired", "message": "Required value", "field": field}],
        )
    uid = meta.get("uid")

    def assign(pod: Object) -> Object:
        pod_meta = pod["metadata"]
        if uid and uid != pod_meta.get("uid"):
            raise errors.conflict(
                "pods/binding",
                pod_name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                f"{pod_meta.get('uid')}",
            )
        if pod_meta.get("deletionTimestamp"):
            raise errors.conflict(
                "pods/binding",
                pod_name,
                f"pod {pod_name} is being deleted, cannot be assigned to a host",
            )
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise errors.conflict(
                "pods/binding",
                pod_name,
                f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"',
            )
        spec["nodeName"] = node
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and annotations:
            pod_meta.setdefault("annotations", {}).update(annotations)
        _set_scheduled(pod)
        return pod

    store.guaranteed_update(PODS, namespace, pod_name, assign, "binding")
    return 201, errors.success(201)


def _set_scheduled(pod: Object) -> None:
    status = pod.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                condition["status"] = "True"
                condition["lastTransitionTime"] = now_rfc3339()
            for stale in ("reason", "message"):
                condition.pop(stale, None)
            return
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
        }
    )
