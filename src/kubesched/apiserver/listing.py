"""What a LIST reads: kube-apiserver's rules for ``resourceVersion``,
``resourceVersionMatch``, ``limit`` and ``continue``.

:func:`list_options` validates the query as upstream's ``ValidateListOptions`` does (422
Invalid on ``ListOptions.meta.k8s.io``) and decides, as the cacher and etcd3 storage do,
which state the list shows (:class:`ListRead`):

- ``resourceVersion`` unset: the newest state (a consistent read);
- ``"0"``, or N with ``NotOlderThan`` (or with no match and no ``limit``): any state at
  least as new as N — this server always has the newest, so that one; an N it has not
  reached yet is waited for up to 3 seconds (the watch cache's ``blockTimeout``), then
  504 ``Too large resource version``;
- N with ``Exact`` (or with no match and a ``limit``, upstream's legacy rule): the state
  as of N exactly, and the list says N; a version older than the resource's window is
  410 Expired, as etcd answers a compacted revision;
- ``continue``: the state of the first page's version (every page of a list shows one
  state); a ``resourceVersion`` beside it is 400, a ``resourceVersionMatch`` 422.

:func:`watch_options` does the same for a WATCH, with the WatchList feature on as it is
in 1.34 (``sendInitialEvents``, KEP-3157 streaming lists): a watch from ``""`` or ``"0"``
that sets neither ``sendInitialEvents`` nor ``resourceVersionMatch`` is defaulted to
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan`` (upstream's
``SetListOptionsDefaults``), which streams the current state as ADDED events, as a
legacy watch from ``"0"`` did, and then, if bookmarks are allowed, one BOOKMARK annotated
``k8s.io/initial-events-end: "true"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.apiserver import errors
from kubesched.apiserver.store import parse_resource_version

__all__ = [
    "FRESHNESS_TIMEOUT",
    "ListRead",
    "list_options",
    "too_large_resource_version",
    "watch_options",
]

EXACT, NOT_OLDER_THAN = "Exact", "NotOlderThan"
#: How long a list waits for a resourceVersion the server has not reached (upstream's
#: watch cache ``blockTimeout``).
FRESHNESS_TIMEOUT = 3.0
#: The ``Retry-After`` of the 504 that ends the wait (``resourceVersionTooHighRetrySeconds``).
TOO_LARGE_RETRY_SECONDS = 1


@dataclass(frozen=True)
class ListRead:
    """Which state a list shows: ``exact`` (the state at ``version``), else the newest,
    after waiting for ``version`` (0: no wait)."""

    version: int = 0
    exact: bool = False


def _forbidden(field: str, message: str) -> errors.StatusCause:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {message}", "field": field}


def _invalid(causes: list[errors.StatusCause]) -> errors.ApiError:
    return errors.invalid("ListOptions", "", causes, "meta.k8s.io")


def _query_bool(text: str) -> bool:
    # metav1's Convert_Slice_string_To_bool: only "0" and "false" (any case) are false.
    return not (text == "0" or text.lower() == "false")


def watch_options(query: Mapping[str, str]) -> bool | None:
    """Validate a watch's query as upstream's ``validateWatchOptions`` (after
    ``SetListOptionsDefaults``); returns ``sendInitialEvents`` (None: not asked, a legacy
    watch from a version)."""
    rv_text = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    send: bool | None = (
        _query_bool(query["sendInitialEvents"]) if "sendInitialEvents" in query else None
    )
    if send is None and not match and rv_text in ("", "0"):
        send, match = True, NOT_OLDER_THAN
    causes: list[errors.StatusCause] = []
    if send is not None and match != NOT_OLDER_THAN:
        causes.append(
            _forbidden(
                "resourceVersionMatch",
                f"sendInitialEvents requires setting resourceVersionMatch to {NOT_OLDER_THAN}",
            )
        )
    if match:
        if send is None:
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != NOT_OLDER_THAN:
            causes.append(
                {
                    "reason": "FieldValueNotSupported",
                    "message": f'Unsupported value: "{match}": supported values: '
                    f'"{NOT_OLDER_THAN}"',
                    "field": "resourceVersionMatch",
                }
            )
        if query.get("continue"):
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
    if causes:
        raise _invalid(causes)
    return send


def list_options(query: Mapping[str, str], limit: int) -> ListRead:
    """Validate a list's query and say which state it reads (see the module docstring)."""
    rv_text = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    continue_token = query.get("continue", "")
    causes: list[errors.StatusCause] = []
    if match:
        if not rv_text:
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if continue_token:
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in (EXACT, NOT_OLDER_THAN):
            causes.append(
                {
                    "reason": "FieldValueNotSupported",
                    "message": f'Unsupported value: "{match}": supported values: '
                    f'"{EXACT}", "{NOT_OLDER_THAN}", ""',
                    "field": "resourceVersionMatch",
                }
            )
        if match == EXACT and rv_text == "0":
            causes.append(
                _forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if "sendInitialEvents" in query:
        causes.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    if causes:
        raise _invalid(causes)
    if continue_token:
        if rv_text not in ("", "0"):
            raise errors.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        return ListRead()  # the token's own version decides
    version = parse_resource_version(rv_text)
    if version == 0:
        return ListRead()
    exact = match == EXACT or (not match and limit > 0)
    return ListRead(version, exact)


def too_large_resource_version(requested: int, current: int) -> errors.ApiError:
    """504 Timeout as the watch cache words it after waiting for a version in vain."""
    return errors.failure(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": TOO_LARGE_RETRY_SECONDS,
        },
    )
