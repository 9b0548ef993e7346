"""Table printers of the resource.k8s.io/v1 kinds: the columns and cells of
kube-apiserver's ``printDeviceClass``, ``printResourceClaim``,
``printResourceClaimTemplate`` and ``printResourceSlice``, so that ``kubectl get
deviceclasses,resourceclaims,resourceclaimtemplates,resourceslices`` prints what it prints
against a real cluster (a claim's State: ``pending``, ``allocated``,
``allocated,reserved``, with ``deleted`` first while it is being deleted)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from kubesched.apiserver.table_cells import AGE_DOC, NAME_DOC, Cells, Column, age, col
from kubesched.apiserver.watch import Object

__all__ = ["RESOURCE_PRINTERS"]

_NAME = col("Name", NAME_DOC, fmt="name")
_AGE = col("Age", AGE_DOC)


def _meta(obj: Object) -> dict[str, object]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _name_age(obj: Object, now: datetime) -> Cells:
    meta = _meta(obj)
    return [str(meta.get("name", "")), age(meta.get("creationTimestamp"), now)]


def claim_state(obj: Object) -> str:
    """``resourceClaimState``: deleted, then pending or allocated(,reserved)."""
    states = []
    deleting = _meta(obj).get("deletionTimestamp") is not None
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(status, dict)
    if deleting:
        states.append("deleted")
    if status.get("allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _claim_cells(obj: Object, now: datetime) -> Cells:
    name, created = _name_age(obj, now)
    return [name, claim_state(obj), created]


def _slice_cells(obj: Object, now: datetime) -> Cells:
    name, created = _name_age(obj, now)
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    pool = spec.get("pool") if isinstance(spec.get("pool"), dict) else {}
    assert isinstance(pool, dict)
    return [
        name,
        str(spec.get("nodeName") or ""),
        str(spec.get("driver") or ""),
        str(pool.get("name") or ""),
        created,
    ]


_CLAIM_COLUMNS = [
    _NAME,
    col("State", "A summary of the current state (allocated, pending, reserved, etc.)."),
    _AGE,
]
_SLICE_COLUMNS = [
    _NAME,
    col("Node", "NodeName identifies the node which provides the resources in this pool."),
    col("Driver", "Driver identifies the DRA driver providing the capacity information."),
    col("Pool", "Name is used to identify the pool."),
    _AGE,
]

#: Plural → (columns, cells).
RESOURCE_PRINTERS: dict[str, tuple[list[Column], Callable[[Object, datetime], Cells]]] = {
    "deviceclasses": ([_NAME, _AGE], _name_age),
    "resourceclaims": (_CLAIM_COLUMNS, _claim_cells),
    "resourceclaimtemplates": ([_NAME, _AGE], _name_age),
    "resourceslices": (_SLICE_COLUMNS, _slice_cells),
}
