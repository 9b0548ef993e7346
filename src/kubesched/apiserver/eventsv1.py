"""events.k8s.io/v1 events: a second view of the core/v1 events in the store.

kube-apiserver stores one Event type and converts on the way in and out
(``pkg/apis/events/v1/conversion.go``); so does this server. An event written through
either API reads through both. The field mapping (events.k8s.io ↔ core/v1):

=========================  ======================
``note``                   ``message``
``regarding``              ``involvedObject``
``reportingController``    ``reportingComponent``
``deprecatedSource``       ``source``
``deprecatedFirstTimestamp`` ``firstTimestamp``
``deprecatedLastTimestamp``  ``lastTimestamp``
``deprecatedCount``        ``count``
=========================  ======================

``reason``, ``type``, ``action``, ``related``, ``eventTime``, ``series``,
``reportingInstance`` and ``metadata`` carry the same name in both.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import EVENTS, EVENTS_V1
from kubesched.apiserver.watch import Object

#: events.k8s.io/v1 name → core/v1 name, for fields whose names differ.
RENAMED: dict[str, str] = {
    "note": "message",
    "regarding": "involvedObject",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {core: v1 for v1, core in RENAMED.items()}
#: Field selector labels: events.k8s.io/v1 prefix → core/v1 prefix.
_FIELD_LABELS = (
    ("regarding.", "involvedObject."),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
)


def to_core(event: Any) -> Any:
    """An events.k8s.io/v1 Event body as the core/v1 Event stored for it."""
    if not isinstance(event, dict):
        return event
    if event.get("apiVersion") not in (None, EVENTS_V1.group_version):
        return event  # check_body reports the wrong apiVersion
    out: Object = {RENAMED.get(str(k), str(k)): v for k, v in event.items()}
    out["apiVersion"] = EVENTS.group_version
    out["kind"] = "Event"
    return out


def to_v1(event: Object) -> Object:
    """A stored core/v1 Event as events.k8s.io/v1 shows it."""
    out: Object = {_TO_V1.get(k, k): v for k, v in event.items()}
    out["apiVersion"] = EVENTS_V1.group_version
    out["kind"] = "Event"
    return out


def convert_reply(body: Any) -> Any:
    """A reply body (an Event, an EventList, a Status) as events.k8s.io/v1 shows it."""
    if not isinstance(body, dict):
        return body
    if body.get("kind") == "EventList":
        return dict(
            body,
            apiVersion=EVENTS_V1.group_version,
            items=[to_v1(item) for item in body.get("items", [])],
        )
    if body.get("kind") == "Event":
        return to_v1(body)
    details = body.get("details")
    if body.get("kind") != "Status" or not isinstance(details, dict):
        return body
    if details.get("kind") == "events" and not details.get("group"):
        return dict(body, details=dict(details, group=EVENTS_V1.group))
    return body


def convert_patch(body: Any, json_patch: bool) -> Any:
    """A patch written against events.k8s.io/v1 field names, in core/v1 names."""
    if json_patch and isinstance(body, list):
        converted = []
        for op in body:
            if isinstance(op, dict):
                op = dict(op)
                for key in ("path", "from"):
                    if isinstance(op.get(key), str):
                        op[key] = _convert_pointer(op[key])
            converted.append(op)
        return converted
    if not json_patch and isinstance(body, dict):
        return {RENAMED.get(str(k), str(k)): v for k, v in body.items()}
    return body


def _convert_pointer(pointer: str) -> str:
    head, sep, tail = pointer[1:].partition("/")
    return "/" + RENAMED.get(head, head) + sep + tail


def field_selector(text: str) -> str:
    """An events.k8s.io/v1 field selector in core/v1 field labels."""
    terms = []
    for term in text.split(","):
        for v1, core in _FIELD_LABELS:
            if term.startswith(v1):
                term = core + term[len(v1) :]
                break
        terms.append(term)
    return ",".join(terms)


def convert_error(err: errors.ApiError) -> errors.ApiError:
    """An error about core ``events`` reworded for ``events.events.k8s.io``."""
    status = err.status
    details = status.get("details")
    if not details or details.get("kind") != "events" or details.get("group"):
        return err
    qualified = errors.qualified("events", EVENTS_V1.group)
    new_status = copy.copy(status)
    message = status.get("message", "")
    if message.startswith("events "):
        message = qualified + message[len("events") :]
    new_status["message"] = message.replace("on events ", f"on {qualified} ", 1)
    new_details = copy.copy(details)
    new_details["group"] = EVENTS_V1.group
    new_status["details"] = new_details
    return errors.ApiError(new_status)
