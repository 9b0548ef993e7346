"""Server-side validation of every built-in resource, as kube-apiserver's registry strategies
run it: ``Validate`` on create and ``ValidateUpdate`` on update, patch and status writes.

The field checks are :mod:`kubesched.objects.validation` (shared with the simulator's file
loaders); this module turns their errors into responses. :func:`validate_create` and
:func:`validate_update` raise 422 Invalid with one cause per field error (``Pod "x" is
invalid: [spec.containers[0].image: Required value, ...]``) and nothing is stored; a value
the decoder could not read (a quantity that is not one) is 400 BadRequest, as
kube-apiserver's decoder answers before validation runs.
"""

from __future__ import annotations

from kubesched.apiserver import errors
from kubesched.apiserver.resources import Resource
from kubesched.apiserver.watch import Object
from kubesched.objects import validation
from kubesched.objects.validation import Errors, Undecodable


def _raise(res: Resource, obj: Object, errs: Errors) -> None:
    # NewInvalid: causes in order; the summary drops repeated messages (ToAggregate).
    seen: set[str] = set()
    unique = []
    for err in errs:
        text = str(err)
        if text not in seen:
            seen.add(text)
            unique.append(err)
    causes: list[errors.StatusCause] = []
    for e in errs:
        cause: errors.StatusCause = {"reason": e.type, "message": e.body()}
        if e.field:  # omitempty: an error about the whole object names no field
            cause["field"] = e.field
        causes.append(cause)
    name = (obj.get("metadata") or {}).get("name") or ""
    error = errors.invalid(res.kind, name, causes, res.group)
    summary = [str(e) for e in unique]
    text = summary[0] if len(summary) == 1 else "[" + ", ".join(summary) + "]"
    quoted = errors.qualified(res.kind, res.group)
    error.status["message"] = f'{quoted} "{_escape(name)}" is invalid: {text}'
    raise error


def raise_invalid(res: Resource, obj: Object, errs: Errors) -> None:
    """Raise 422 Invalid for ``errs`` found in ``obj`` by a check beyond validation (an
    admission rule that reads other objects)."""
    _raise(res, obj, errs)


def _escape(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _builtin(res: Resource) -> str:
    # The validators are for the built-in kinds; a custom resource (whatever its kind)
    # gets the metadata checks only, its schema being the CRD's business.
    return res.kind if res.custom is None else ""


def _undecodable(res: Resource, message: str) -> errors.ApiError:
    return errors.bad_request(
        f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: {message}'
    )


def _strict_events(view: Resource | None) -> bool:
    # Events written through events.k8s.io/v1 get ValidateEventCreate's strict rules.
    return view is not None and view.group == "events.k8s.io"


def validate_create(res: Resource, obj: Object, view: Resource | None = None) -> None:
    """``Validate`` of ``res``'s strategy: 422 Invalid with every field error found.
    ``view`` is the API the request came through when it is a view of ``res``."""
    try:
        errs = validation.validate_create(
            _builtin(res),
            obj,
            namespaced=res.namespaced,
            core_group=not res.group,
            strict_events=_strict_events(view),
        )
    except Undecodable as err:
        raise _undecodable(res, str(err)) from None
    if errs:
        _raise(res, obj, errs)


def validate_update(
    res: Resource, new: Object, old: Object, subresource: str = "", view: Resource | None = None
) -> None:
    """``ValidateUpdate`` (or the status strategy's) for a write of ``new`` over ``old``."""
    try:
        errs = validation.validate_update(
            _builtin(res),
            new,
            old,
            namespaced=res.namespaced,
            core_group=not res.group,
            subresource=subresource,
            strict_events=_strict_events(view),
        )
    except Undecodable as err:
        raise _undecodable(res, str(err)) from None
    if errs:
        _raise(res, new, errs)
