"""API errors as kube-apiserver returns them: ``kind: Status`` bodies.

Every failure the embedded API server reports is an :class:`ApiError` carrying the exact
``Status`` body that kube-apiserver would send, built by the constructors below, which
mirror ``staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go`` message for message
(``pods "x" not found``, ``Operation cannot be fulfilled on pods "x": ...``). The HTTP layer
turns an ``ApiError`` into a response with ``code`` as the HTTP status; the store raises
them directly, so Python callers see the same reasons and messages as HTTP clients.

Hierarchy::

    ApiError (Exception)          .status: the Status body, .code: its HTTP status
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast

#: Message of a Conflict raised for a stale ``metadata.resourceVersion`` (upstream's
#: ``storage.OptimisticLockErrorMsg``).
OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

#: Patch media types the server accepts, in kube-apiserver's order.
PATCH_MEDIA_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


class StatusCause(TypedDict, total=False):
    """One cause of an Invalid error: its reason (``FieldValueInvalid``...), message, field."""

    reason: str
    message: str
    field: str


class StatusDetails(TypedDict, total=False):
    """``Status.details``: what the error is about."""

    name: str
    group: str
    kind: str
    uid: str
    causes: list[StatusCause]
    retryAfterSeconds: int


class Status(TypedDict):
    """A ``meta/v1 Status`` body."""

    kind: str
    apiVersion: str
    metadata: dict[str, Any]
    status: str
    message: NotRequired[str]
    reason: NotRequired[str]
    details: NotRequired[StatusDetails]
    code: int


class ApiError(Exception):
    """A request the API server refuses; ``status`` is the body sent to the client."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.get("message", status.get("reason", "")))
        self.status = status

    @property
    def code(self) -> int:
        """The HTTP status code (404, 409, ...)."""
        return self.status["code"]

    @property
    def reason(self) -> str:
        """The machine-readable reason (``NotFound``, ``Conflict``, ...)."""
        return self.status.get("reason", "")


def qualified(resource: str, group: str) -> str:
    """``GroupResource.String()``: ``pods`` for the core group, ``leases.coordination.k8s.io``."""
    return f"{resource}.{group}" if group else resource


def _details(group: str = "", kind: str = "", name: str = "") -> StatusDetails:
    # Go's omitempty: empty fields are left out of the JSON.
    details: StatusDetails = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    return details


def failure(
    code: int,
    reason: str,
    message: str,
    details: StatusDetails | None = None,
    *,
    empty_details: bool = False,
) -> ApiError:
    """A ``status: Failure`` Status with its fields in metav1.Status's order (details,
    when there are any, before code); every refusal of this server is built here.
    **empty_details**: write ``details`` even when empty, as errors that always set the
    pointer do (``NewForbidden``)."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:  # StatusReasonUnknown (""): left out of the body, as Go's omitempty does
        status["reason"] = reason
    if details or (empty_details and details is not None):
        status["details"] = details
    status["code"] = code
    return ApiError(cast(Status, status))


def _quote(name: str) -> str:
    # Go's %q for the names Kubernetes allows (no control characters).
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def success(code: int = 200, details: StatusDetails | None = None) -> Status:
    """A ``status: Success`` body (what a binding or a delete of most resources returns)."""
    status: Status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": code,
    }
    if details:
        status["details"] = details
    return status


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    """404 NotFound: ``pods "x" not found``."""
    return failure(
        404,
        "NotFound",
        f"{qualified(resource, group)} {_quote(name)} not found",
        _details(group, resource, name),
    )


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    """409 AlreadyExists: ``pods "x" already exists``."""
    return failure(
        409,
        "AlreadyExists",
        f"{qualified(resource, group)} {_quote(name)} already exists",
        _details(group, resource, name),
    )


def conflict(resource: str, name: str, cause: str, group: str = "") -> ApiError:
    """409 Conflict: ``Operation cannot be fulfilled on pods "x": <cause>``."""
    return failure(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {qualified(resource, group)} {_quote(name)}: {cause}",
        _details(group, resource, name),
    )


def stale_conflict(resource: str, name: str, group: str = "") -> ApiError:
    """409 Conflict for an update carrying a stale ``metadata.resourceVersion``."""
    return conflict(resource, name, OPTIMISTIC_LOCK_MESSAGE, group)


def invalid(kind: str, name: str, causes: list[StatusCause], group: str = "") -> ApiError:
    """422 Invalid: ``Pod "x" is invalid: <field>: <message>`` with one cause per field error.

    Each cause's ``message`` is the full ``field.Error`` text (``Invalid value: "X": ...``);
    the summary joins them as ``errs.ToAggregate()`` does (``[a, b]`` when more than one).
    """
    texts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    details = _details(group, kind, name)
    details["causes"] = causes
    return failure(
        422, "Invalid", f"{qualified(kind, group)} {_quote(name)} is invalid: {summary}", details
    )


def bad_request(message: str) -> ApiError:
    """400 BadRequest with ``message`` as given."""
    return failure(400, "BadRequest", message)


def forbidden(resource: str, name: str, cause: str, group: str = "") -> ApiError:
    """403 Forbidden: ``pods "x" is forbidden: <cause>`` (``pods is forbidden: ...`` unnamed)."""
    if not resource:
        message = f"forbidden: {cause}"
    elif not name:
        message = f"{qualified(resource, group)} is forbidden: {cause}"
    else:
        message = f"{qualified(resource, group)} {_quote(name)} is forbidden: {cause}"
    # NewForbidden always sets Details: an empty one is still written ({}).
    return failure(403, "Forbidden", message, _details(group, resource, name), empty_details=True)


def gone(message: str) -> ApiError:
    """410 Gone with ``message`` as given."""
    return failure(410, "Gone", message)


def expired(message: str, continue_token: str = "") -> ApiError:
    """410 Expired: a resourceVersion or continue token older than what the server keeps.

    **continue_token**: a token for the rest of the list at the latest version, which
    kube-apiserver puts in the Status's ``metadata.continue`` when a paged list's
    version has been compacted."""
    err = failure(410, "Expired", message)
    if continue_token:
        err.status["metadata"] = {"continue": continue_token}
    return err


def too_old_resource_version(requested: int, oldest: int) -> ApiError:
    """410 Expired as the watch cache words it: ``too old resource version: 5 (9)``."""
    return expired(f"too old resource version: {requested} ({oldest})")


def method_not_supported(resource: str, action: str, group: str = "") -> ApiError:
    """405 MethodNotAllowed: ``update is not supported on resources of kind "bindings"``."""
    return failure(
        405,
        "MethodNotAllowed",
        f"{action} is not supported on resources of kind {_quote(qualified(resource, group))}",
        _details(group, resource),
    )


def unsupported_media_type(accepted: tuple[str, ...] = PATCH_MEDIA_TYPES) -> ApiError:
    """415 UnsupportedMediaType, naming the media types the server accepts."""
    return failure(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


def too_many_requests(message: str, retry_after_seconds: int) -> ApiError:
    """429 TooManyRequests, with ``details.retryAfterSeconds``."""
    return failure(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after_seconds})


def internal_error(cause: str) -> ApiError:
    """500 InternalError (``NewInternalError``): a write the storage refused, a failure
    the server did not expect."""
    return failure(
        500, "InternalError", f"Internal error occurred: {cause}", {"causes": [{"message": cause}]}
    )


def unknown_error(message: str) -> ApiError:
    """500 with no reason: a plain Go error that ``ErrorToAPIStatus`` turns into a Status."""
    return failure(500, "", message)


def rejected_request(cause: str) -> ApiError:
    """422 Invalid as ``NewGenericServerResponse`` builds it for content the server refuses
    (a strategic merge patch it cannot apply)."""
    return failure(
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
        {"causes": [{"reason": "UnexpectedServerResponse", "message": cause}]},
    )


def not_found_path() -> ApiError:
    """404 for a path that names no resource (kube-apiserver's bare ``404 page not found``
    is plain text; a Status says the same thing in a form every client decodes)."""
    return failure(404, "NotFound", "the server could not find the requested resource")


def invalid_patch(message: str) -> ApiError:
    """422 Invalid for a JSON patch that cannot be applied (upstream wraps the jsonpatch
    library's error the same way)."""
    return failure(422, "Invalid", message)
