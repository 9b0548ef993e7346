"""Admin access to devices: only in namespaces that allow it.

A ResourceClaim (or ResourceClaimTemplate) whose ``exactly`` request sets
``adminAccess: true``, and a claim status whose new allocation grants admin access, are
refused unless the namespace carries the label ``resource.kubernetes.io/admin-access:
"true"`` — what kube-apiserver's resourceclaim and resourceclaimtemplate strategies check
with ``AuthorizedForAdmin`` / ``AuthorizedForAdminStatus``
(``pkg/registry/resource/utils.go``), answered as 422 Invalid with upstream's Forbidden
cause. The spec is immutable, so only creates are checked; a status write only when the
allocation it writes is new.
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import NAMESPACES, RESOURCECLAIMS, Resource
from kubesched.apiserver.store import Store
from kubesched.apiserver.validation import raise_invalid
from kubesched.apiserver.watch import Object
from kubesched.objects.validation.core import FieldError, forbidden

#: ``resource.DRAAdminNamespaceLabelKey``.
ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
_MESSAGE = (
    f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` label on the "
    "containing namespace"
)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _requested(claim_spec: dict[str, Any]) -> int | None:
    for i, req in enumerate(_list(_dict(claim_spec.get("devices")).get("requests"))):
        if _dict(_dict(req).get("exactly")).get("adminAccess") is True:
            return i
    return None


def _allowed(store: Store, namespace: str) -> bool:
    try:
        ns = store.get(NAMESPACES, None, namespace)
    except errors.ApiError:
        return False
    labels = _dict(_dict(ns.get("metadata")).get("labels"))
    return labels.get(ADMIN_NAMESPACE_LABEL) == "true"


def admit_create(store: Store, res: Resource, obj: Object) -> None:
    """Refuse a new claim or template asking for admin access outside an admin namespace."""
    spec = _dict(obj.get("spec"))
    claim_spec = spec if res is RESOURCECLAIMS else _dict(spec.get("spec"))
    index = _requested(claim_spec)
    if index is None:
        return
    namespace = str(_dict(obj.get("metadata")).get("namespace") or "")
    if not _allowed(store, namespace):
        path = f"spec.devices.requests[{index}].adminAccess"
        raise_invalid(res, obj, [forbidden(path, _MESSAGE)])


def _granted(status: dict[str, Any]) -> int | None:
    results = _dict(_dict(status.get("allocation")).get("devices")).get("results")
    for i, result in enumerate(_list(results)):
        if _dict(result).get("adminAccess") is True:
            return i
    return None


def check_status(store: Store, new: Object, old: Object) -> None:
    """Refuse a status write whose new allocation grants admin access outside an admin
    namespace (an allocation already granted is immutable and not checked again)."""
    if _granted(_dict(old.get("status"))) is not None:
        return
    index = _granted(_dict(new.get("status")))
    if index is None:
        return
    namespace = str(_dict(new.get("metadata")).get("namespace") or "")
    if not _allowed(store, namespace):
        path = f"status.allocation.devices.results[{index}].adminAccess"
        errs: list[FieldError] = [forbidden(path, _MESSAGE)]
        raise_invalid(RESOURCECLAIMS, new, errs)
