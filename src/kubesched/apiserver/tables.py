"""Server-side printing: ``Table`` responses, as ``kubectl get`` asks for them.

kubectl sends ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` and prints the
columns the server returns. The columns and cells follow kube-apiserver's printers
(``pkg/printers/internalversion/printers.go``: ``printPod``, ``printNode``,
``printEvent`` for both event APIs); the server
fills the wide columns too (priority 1), and kubectl shows them with ``-o wide``. Other
resources get their printers from :mod:`.printers` and :mod:`.printers_storage`, the
rest upstream's default table (Name, Created At); custom resources get Name and
their CRD's ``additionalPrinterColumns`` (simple ``.a.b`` JSON paths). Ages are
``duration.HumanDuration`` of the time since ``creationTimestamp``. Each row carries the
object as ``includeObject`` asks: ``Metadata`` (the default, a PartialObjectMetadata),
``Object`` or ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.printers import PRINTERS
from kubesched.apiserver.printers_resource import RESOURCE_PRINTERS
from kubesched.apiserver.printers_storage import STORAGE_PRINTERS
from kubesched.apiserver.table_cells import (
    AGE_DOC,
    NAME_DOC,
    TABLE_API_VERSION,
    Cells,
    Column,
    age,
    col,
    human_duration,
)
from kubesched.apiserver.watch import Object

__all__ = ["TABLE_API_VERSION", "human_duration", "table", "wants_table"]

POD_COLUMNS: list[Column] = [
    col("Name", NAME_DOC, fmt="name"),
    col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "The aggregate status of the containers in this pod."),
    col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the "
        "last container in this pod has restarted.",
    ),
    col("Age", AGE_DOC),
    col("IP", "IP address allocated to the pod.", 1),
    col("Node", "NodeName indicates in which node this pod is scheduled.", 1),
    col("Nominated Node", "nominatedNodeName is set when this pod preempts other pods.", 1),
    col("Readiness Gates", "If specified, all readiness gates will be evaluated.", 1),
]
NODE_COLUMNS: list[Column] = [
    col("Name", NAME_DOC, fmt="name"),
    col("Status", "The status of the node"),
    col("Roles", "The roles of the node"),
    col("Age", AGE_DOC),
    col("Version", "Kubelet Version reported by the node."),
    col("Internal-IP", "List of addresses reachable to the node.", 1),
    col("External-IP", "List of addresses reachable to the node.", 1),
    col("OS-Image", "OS Image reported by the node from /etc/os-release.", 1),
    col("Kernel-Version", "Kernel Version reported by the node.", 1),
    col("Container-Runtime", "ContainerRuntime Version reported by the node.", 1),
]
EVENT_COLUMNS: list[Column] = [
    col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
    col(
        "Reason",
        "This should be a short, machine understandable string that gives the reason "
        "for the transition into the object's current status.",
    ),
    col("Object", "The object that this event is about."),
    col("Subobject", "The field of the object that this event is about.", 1),
    col("Source", "The component reporting this event.", 1),
    col("Message", "A human-readable description of the status of this operation."),
    col("First Seen", "The time at which the event was first recorded.", 1),
    col("Count", "The number of times this event has occurred.", 1),
    col("Name", NAME_DOC, 1, "name"),
]
DEFAULT_COLUMNS: list[Column] = [
    col("Name", NAME_DOC, fmt="name"),
    {"name": "Created At", "type": "date", "format": "", "description": AGE_DOC, "priority": 0},
]


def wants_table(accept: str) -> bool:
    """Whether an ``Accept`` header asks for a meta.k8s.io/v1 Table before plain JSON."""
    for media in accept.split(","):
        parts = [p.strip() for p in media.split(";")]
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if parts[0] in ("application/json", "*/*") and params.get("as") == "Table":
            if params.get("g") == "meta.k8s.io" and params.get("v") == "v1":
                return True
            continue
        if parts[0] in ("application/json", "*/*") and "as" not in params:
            return False
    return False


def pod_cells(pod: Object, now: datetime) -> Cells:
    """``printPod``'s cells, wide columns included."""
    meta, spec, status = pod.get("metadata", {}), pod.get("spec", {}), pod.get("status", {})
    total = len(spec.get("containers") or [])
    ready = 0
    restarts = 0
    reason = status.get("reason") or status.get("phase") or ""
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == (
            "SchedulingGated"
        ):
            reason = "SchedulingGated"
    has_running = False
    for container in reversed(status.get("containerStatuses") or []):
        restarts += int(container.get("restartCount") or 0)
        state = container.get("state") or {}
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated and terminated.get("reason"):
            reason = terminated["reason"]
        elif terminated:
            signal = terminated.get("signal") or 0
            reason = f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode', 0)}"
        elif container.get("ready") and state.get("running") is not None:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        ready_condition = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        reason = "Running" if ready_condition else "NotReady"
    if meta.get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    ips = status.get("podIPs") or []
    pod_ip = (ips[0].get("ip") if ips else status.get("podIP")) or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        true_types = {
            c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"
        }
        passed = sum(1 for g in gates if g.get("conditionType") in true_types)
        gates_text = f"{passed}/{len(gates)}"
    return [
        meta.get("name", ""),
        f"{ready}/{total}",
        reason,
        str(restarts),
        age(meta.get("creationTimestamp"), now),
        pod_ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


def _node_roles(labels: dict[str, str]) -> list[str]:
    roles = set()
    for key, value in labels.items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def _address(status: dict[str, Any], kind: str) -> str:
    for address in status.get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def node_cells(node: Object, now: datetime) -> Cells:
    """``printNode``'s cells, wide columns included."""
    meta, spec, status = node.get("metadata", {}), node.get("spec", {}), node.get("status", {})
    shown = []
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            shown = ["Ready" if condition.get("status") == "True" else "NotReady"]
    if not shown:
        shown = ["Unknown"]
    if spec.get("unschedulable"):
        shown.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [
        meta.get("name", ""),
        ",".join(shown),
        ",".join(_node_roles(meta.get("labels") or {})) or "<none>",
        age(meta.get("creationTimestamp"), now),
        info.get("kubeletVersion", ""),
        _address(status, "InternalIP"),
        _address(status, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _first_non_empty(*values: Any) -> str:
    return next((str(v) for v in values if v), "")


def event_cells(event: Object, now: datetime) -> Cells:
    """``printEvent``'s cells (of a core/v1 Event), wide columns included."""
    first = age(event.get("firstTimestamp"), now)
    if not event.get("firstTimestamp"):
        first = age(event.get("eventTime"), now)
    last = age(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = int(event.get("count") or 0)
    series = event.get("series")
    if isinstance(series, dict):
        last = age(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events have no count in the events.k8s.io API
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = event.get("source") or {}
    component = _first_non_empty(source.get("component"), event.get("reportingComponent"))
    instance = _first_non_empty(source.get("host"), event.get("reportingInstance"))
    shown_source = ", ".join(p for p in (component, instance) if p) if component else ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        shown_source,
        str(event.get("message", "")).strip(),
        first,
        count,
        (event.get("metadata") or {}).get("name", ""),
    ]


def _default_cells(obj: Object, now: datetime) -> Cells:
    meta = obj.get("metadata", {})
    return [meta.get("name", ""), meta.get("creationTimestamp", "")]


def column_value(obj: Object, json_path: str) -> Any:
    """The value at a simple JSON path (``.spec.replicas``, ``.metadata.labels.app``),
    or None where ``obj`` has none."""
    node: Any = obj
    for part in json_path.strip().strip("{}").lstrip(".").split("."):
        if not part:
            continue
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _custom_cell(kind: str, value: Any, now: datetime) -> Any:
    # apiextensions' tableconvertor: strings print as jsonpath prints them; other types
    # are the JSON value when it has that type (cellForJSONValue), else empty.
    if value is None:
        return None
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        return json.dumps(value, separators=(",", ":"))
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        try:
            then = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return "<invalid>"
        return human_duration((now - then).total_seconds())
    return None


def custom_printer(
    columns: Sequence[dict[str, Any]],
) -> tuple[list[Column], Callable[[Object, datetime], Cells]]:
    """The columns and cells of a custom resource's Table: Name, then the CRD's
    ``additionalPrinterColumns`` (upstream's tableconvertor)."""
    definitions = [col("Name", NAME_DOC, fmt="name")]
    for column in columns:
        definitions.append(
            {
                "name": column.get("name", ""),
                "type": column.get("type", "string"),
                "format": column.get("format", ""),
                "description": column.get("description", ""),
                "priority": int(column.get("priority", 0) or 0),
            }
        )

    def cells(obj: Object, now: datetime) -> Cells:
        row: Cells = [obj.get("metadata", {}).get("name", "")]
        for column in columns:
            value = column_value(obj, str(column.get("jsonPath", "")))
            row.append(_custom_cell(str(column.get("type", "string")), value, now))
        return row

    return definitions, cells


_PRINTERS: dict[str, tuple[list[Column], Callable[[Object, datetime], Cells]]] = {
    "pods": (POD_COLUMNS, pod_cells),
    "nodes": (NODE_COLUMNS, node_cells),
    "events": (EVENT_COLUMNS, event_cells),
    **PRINTERS,
    **RESOURCE_PRINTERS,
    **STORAGE_PRINTERS,
}


def _row_object(obj: Object, include: str) -> Any:
    if include == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": TABLE_API_VERSION,
        "metadata": obj.get("metadata", {}),
    }


def table(
    plural: str,
    items: list[Object],
    list_meta: dict[str, Any],
    include_object: str = "",
    now: datetime | None = None,
    shown: Callable[[Object], Object] | None = None,
    columns: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of ``items`` (from the resource named ``plural``);
    ``shown`` turns a stored object into the one a row carries (for views);
    ``columns``: a custom resource's printer columns (:func:`custom_printer`)."""
    include = include_object or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{include_object}": supported values: '
            '"Metadata", "None", "Object"'
        )
    if columns is not None:
        definitions, cells = custom_printer(columns)
    else:
        definitions, cells = _PRINTERS.get(plural, (DEFAULT_COLUMNS, _default_cells))
    moment = now or datetime.now(UTC)
    rows = []
    for obj in items:
        row: dict[str, Any] = {"cells": cells(obj, moment)}
        if include != "None":
            row["object"] = _row_object(shown(obj) if shown else obj, include)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": rows,
    }
