"""A DELETE's options, decoded as kube-apiserver's delete handlers decode them.

``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go`` (``DeleteResource`` and
``DeleteCollection``): a body is decoded into ``meta.k8s.io/v1`` DeleteOptions, and what
cannot be — not JSON, not an object, a field of the wrong type, another kind — is a 400
BadRequest; a body in a format with no decoder is a 415. Query parameters are decoded by the
parameter codec (``gracePeriodSeconds=abc`` is a 400). ``ValidateDeleteOptions`` then
refuses unknown propagation policies and contradictions (422). Every check runs before
anything is deleted, for one object and for a collection alike.

Deviation: upstream reads the query parameters only when there is no body; here they are
read in both cases and override the body's (clients that send both mean the query's).
"""

from __future__ import annotations

from typing import Any

from kubesched.apiserver import errors
from kubesched.objects import typecheck

#: The body formats a DeleteOptions can be decoded from (an empty Content-Type is taken
#: as JSON, a leniency: Go's negotiation refuses it).
MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
_SCHEMA = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
#: strconv.ParseBool's words.
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def check_media_type(media_type: str) -> None:
    """415 for a body whose format DeleteOptions cannot be decoded from."""
    if media_type and media_type not in MEDIA_TYPES:
        raise errors.unsupported_media_type(MEDIA_TYPES)


def from_body(body: Any) -> dict[str, Any]:
    """The DeleteOptions of a decoded body (None: no body); 400 for one Go cannot decode."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {typecheck.json_kind(body)} into Go value of type "
            "v1.DeleteOptions"
        )
    kind = body.get("kind")
    if kind is not None and kind != "DeleteOptions":
        raise errors.bad_request("decoded object cannot be converted to DeleteOptions")
    try:
        typecheck.check_schema(_SCHEMA, body)
    except typecheck.TypeMismatch as err:
        raise errors.bad_request(str(err)) from None
    return dict(body)


def _bool(text: str, name: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise errors.bad_request(f'strconv.ParseBool: parsing "{text}": invalid syntax for {name}')


def _int(text: str, name: str) -> int:
    try:
        return int(text.strip(), 10)
    except ValueError:
        raise errors.bad_request(
            f'strconv.ParseInt: parsing "{text}": invalid syntax for {name}'
        ) from None


def with_query(options: dict[str, Any], query: Any) -> dict[str, Any]:
    """``options`` with the query's parameters over them; 400 for one that does not
    parse (the options are validated where they are used, before anything is deleted:
    ``strategy.check_delete_options``)."""
    if "gracePeriodSeconds" in query:
        options["gracePeriodSeconds"] = _int(query["gracePeriodSeconds"], "gracePeriodSeconds")
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if "orphanDependents" in query:
        options["orphanDependents"] = _bool(query["orphanDependents"], "orphanDependents")
    return options
