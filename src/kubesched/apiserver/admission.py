"""What happens to a body before it is stored: type checks, defaulting, name validation.

This slice does what a scheduler depends on: the body must be an object of the kind the
URL names (400 BadRequest otherwise, as kube-apiserver's decoder answers), then it is
defaulted by :mod:`kubesched.objects.defaults` (shared with the simulator's file loaders).
Validation is :mod:`kubesched.apiserver.validation`; pod priority is
:mod:`kubesched.apiserver.priority`.
"""

from __future__ import annotations

import json
from typing import Any

from kubesched.apiserver import errors
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.watch import Object
from kubesched.objects import defaults, typecheck
from kubesched.objects.validation import Undecodable
from kubesched.objects.validation import types as validation_types


def check_body(res: Resource, body: Any) -> Object:
    """Refuse a body that is not a JSON object of ``res``'s kind and apiVersion (400)."""
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"the body of the request was not a JSON object: expected a {res.kind}"
        )
    kind = body.get("kind")
    api_version = body.get("apiVersion")
    if kind is not None and kind != res.kind:
        raise errors.bad_request(
            f"{kind} in version {api_version or res.group_version!r} cannot be handled as a "
            f"{res.kind}: the kind in the body ({kind}) does not match the expected kind "
            f"({res.kind}) of {res.plural}"
        )
    if api_version is not None and api_version != res.group_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({res.group_version})"
        )
    metadata = body.get("metadata", {})
    if not isinstance(metadata, dict):
        raise errors.bad_request("metadata must be a JSON object")
    check_types(res, body)
    body["kind"] = res.kind
    body["apiVersion"] = res.group_version
    return body


def check_types(res: Resource, body: dict[str, Any]) -> None:
    """Refuse (400) a body holding a value of a JSON type the kind's Go type cannot
    decode, with the decoder's words: the fields validation reads by the table that names
    their Go types (:mod:`kubesched.objects.validation.types`), then every field by the
    kind's schema (:mod:`kubesched.objects.typecheck`)."""
    try:
        if res.custom is None:
            validation_types.check_types(res.kind, body)
        typecheck.check(res.group, res.version, res.kind, body)
    except (typecheck.TypeMismatch, Undecodable) as err:
        raise errors.bad_request(
            f"{res.kind} in version {json.dumps(res.version)} cannot be handled as a "
            f"{res.kind}: {err}"
        ) from None


def _kind(res: Resource) -> str:
    # Defaulting is for the built-in kinds; a custom resource's is its CRD's business.
    return res.kind if res.custom is None else ""


def default_on_create(res: Resource, obj: Object) -> None:
    """Upstream defaulting and admission that a scheduler depends on, for a new object."""
    defaults.on_create(_kind(res), obj)


def default_on_write(res: Resource, obj: Object) -> None:
    """Defaulting that every decode of a body applies, updates and patches included (so a
    PUT that leaves a defaulted field out does not read as a change of it)."""
    defaults.on_write(_kind(res), obj)
