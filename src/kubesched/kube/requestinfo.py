"""What an API request does, in kube-apiserver's words: its verb and its resource.

kube-apiserver's ``RequestInfoFactory`` reads the verb (``get``, ``list``, ``watch``,
``create``, ``update``, ``patch``, ``delete``, ``deletecollection``) and the resource (with
its subresource: ``pods/binding``, ``pods/status``) from the method and path of a
request. :func:`request_info` does the same on the client side, so that a client can count
its requests by what they do (``Client.requests``) rather than by URL.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["request_info"]

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def request_info(
    method: str, path: str, params: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """``(verb, resource)`` of a request to ``path`` (no query; ``params`` holds it).

    The resource is the plural name, ``/subresource`` appended when there is one
    (``pods/binding``); a path that names no resource (discovery, ``/version``) gives
    ``""``. ``/api/v1/namespaces/ns`` is the namespace ``ns`` itself.
    """
    parts = [p for p in path.split("/") if p]
    if parts and parts[0] == "api":
        rest = parts[2:]
    elif parts and parts[0] == "apis":
        rest = parts[3:]
    else:
        rest = []
    if rest and rest[0] == "watch":  # the legacy /watch/ prefix
        rest = rest[1:]
        watching = True
    else:
        watching = params is not None and params.get("watch", "") in ("true", "1")
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
        rest = rest[2:]  # a namespaced collection or object
    resource = rest[0] if rest else ""
    named = len(rest) >= 2
    if len(rest) >= 3:
        resource = f"{resource}/{rest[2]}"
    if not resource:
        verb = method.lower()  # a non-resource request: the verb is the method
    elif method == "GET":
        verb = "watch" if watching else "get" if named else "list"
    elif method == "DELETE":
        verb = "delete" if named else "deletecollection"
    else:
        verb = _VERBS.get(method, method.lower())
    return verb, resource
